// The purity fence is a lint rule; this test proves the rule bites, so a
// config change that silently disables it fails the build.
import { expect } from 'chai';
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
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
const root = projectRoot();

const impure = [
  "import fs from 'node:fs';",
  "import { WebSocket } from 'ws';",
  'export const a = Date.now();',
  'export const b = Math.random();',
  'setTimeout(() => {}, 1);',
  'export const c = fs.constants.F_OK + String(WebSocket);',
].join('\n');

async function ruleIds(file: string, text: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root });
  const [result] = await eslint.lintText(text, { filePath: path.join(root, file) });
  return (result?.messages ?? []).map((m) => m.ruleId ?? 'fatal');
}

describe('lint purity fence', function () {
  this.timeout(60_000);

  it('rejects I/O, timers, Date and Math.random in src/raft', async () => {
    const ids = await ruleIds('src/raft/example.ts', impure);
    expect(ids.filter((id) => id === 'no-restricted-imports')).to.have.length(2);
    expect(ids).to.include('no-restricted-globals');
    expect(ids).to.include('no-restricted-properties');
  });

  it('allows the same code in a shell folder', async () => {
    const ids = await ruleIds('src/raft-node/example.ts', impure);
    expect(ids.filter((id) => id.startsWith('no-restricted'))).to.deep.equal([]);
  });
});
