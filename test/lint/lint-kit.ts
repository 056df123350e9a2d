// Lints a sample text as if it were a file of the project, for the fence tests.
import { ESLint, type Linter } from 'eslint';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fs from 'node:fs';
import path from 'node:path';

/** The project root: the nearest ancestor holding eslint.config.js. */
function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'eslint.config.js'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('eslint.config.js not found above the test');
    dir = up;
  }
  return dir;
}
export const root = projectRoot();

let eslint: ESLint | undefined;

export interface Finding { readonly ruleId: string; readonly message: string; readonly line: number }

/** The problems ESLint finds in `text` linted as the project file `file` (relative to the root). */
export async function findings(file: string, text: string): Promise<Finding[]> {
  eslint ??= new ESLint({ cwd: root });
  const [result] = await eslint.lintText(text, { filePath: path.join(root, file) });
  return (result?.messages ?? []).map((m) => ({ ruleId: m.ruleId ?? 'fatal', message: m.message, line: m.line }));
}

export async function ruleIds(file: string, text: string): Promise<string[]> {
  return (await findings(file, text)).map((f) => f.ruleId);
}

/** The exported data of eslint.config.js (lists and the module lookup). */
export async function config(): Promise<{
  TIME_SOURCES: string[];
  PENDING_INJECTION: string[];
  TIME_FENCE_RULES: Linter.RulesRecord;
  LAYERS: Array<Array<{ name: string; paths: string[] }>>;
  moduleOf: (relPath: string) => { name: string; rank: number } | undefined;
}> {
  return import(pathToFileURL(path.join(root, 'eslint.config.js')).href) as Promise<never>;
}

/** Every .ts file under src/, as a project-relative posix path. */
export function sourceFiles(dir = 'src'): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...sourceFiles(rel));
    else if (rel.endsWith('.ts')) out.push(rel);
  }
  return out;
}
