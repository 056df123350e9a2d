// Tiny helpers shared by the benchmark entry points: numeric flags and the
// "run when executed directly" check.
import { pathToFileURL } from 'node:url';

/** The number after `name` on the command line, if present and finite. */
export function argValue(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : undefined;
  return v !== undefined && Number.isFinite(v) ? v : undefined;
}

/** True when the module at `moduleUrl` is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && moduleUrl === pathToFileURL(process.argv[1]).href;
}
