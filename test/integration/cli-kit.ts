// Running the `sluice` binary from integration tests: a child process per
// command, without blocking the event loop (the test cluster's output pipes
// must keep draining meanwhile), killed by PID if it outlives its bound.

import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { MAIN_JS } from './harness.js';

export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const RUN_TIMEOUT_MS = 60_000;

/** Runs `sluice ...args` with `input` on stdin; resolves with its exit status and output. */
export function runSluice(args: readonly string[], input = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN_JS, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

/** `sluice` and `ok` for one cluster: every command gets `--bootstrap <bootstrap()>` (read when it runs, so it may be set in before()). */
export function sluiceAgainst(bootstrap: () => string): {
  sluice: (...args: string[]) => Promise<Run>;
  ok: (...args: string[]) => Promise<string>;
} {
  const sluice = (...args: string[]): Promise<Run> => runSluice([...args, '--bootstrap', bootstrap()]);
  /** Runs the command, expects exit 0, returns its stdout. */
  const ok = async (...args: string[]): Promise<string> => {
    const r = await sluice(...args);
    expect(r.status, `sluice ${args.join(' ')}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  return { sluice, ok };
}
