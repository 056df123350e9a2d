// Process plumbing shared by the peer deployments (NATS JetStream, Redis
// Streams): finding a server binary and its version, spawning it on loopback,
// polling for readiness with a timeout, and stopping it by PID (SIGTERM, then
// SIGKILL after a bounded wait).
//
// Invariants: every process started here is tracked until it exits, and a
// process-exit hook SIGKILLs whatever is left if the bench dies first; a
// readiness wait fails at once (with the server's last output) when the
// server has exited instead of waiting out its timeout.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const OUTPUT_LINES_KEPT = 200;
const STOP_GRACE_MS = 5_000;
const POLL_INTERVAL_MS = 50;
/** Debian installs the peers' servers in /usr/sbin, which is not on every user's PATH. */
const SBIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin'];

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) if (child.pid !== undefined) {
    try { process.kill(child.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
});

/** The absolute path of an executable named `name` on PATH (or in the sbin dirs), if any. */
export function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter((d) => d.length > 0), ...SBIN_DIRS];
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch { /* not here */ }
  }
  return undefined;
}

/** The first match of `pattern` (group 1) in `bin args...`'s output, or undefined when it cannot run. */
export function binaryVersion(bin: string, args: readonly string[], pattern: RegExp): string | undefined {
  const res = spawnSync(bin, args, { encoding: 'utf8', timeout: 5_000 });
  if (res.error || res.status !== 0) return undefined;
  return pattern.exec(`${res.stdout}${res.stderr}`)?.[1];
}

/** One server process, started once and stopped by PID. */
export class ServerProcess {
  private child: ChildProcess | undefined;
  private exitPromise: Promise<void> = Promise.resolve();
  private exited = false;
  private readonly output: string[] = [];

  constructor(readonly name: string, private readonly bin: string, private readonly args: readonly string[]) {}

  start(): void {
    if (this.child) throw new Error(`${this.name} was already started`);
    const child = spawn(this.bin, [...this.args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    live.add(child);
    const keep = (chunk: Buffer): void => {
      for (const line of chunk.toString('utf8').split('\n')) if (line) this.output.push(line);
      if (this.output.length > OUTPUT_LINES_KEPT) this.output.splice(0, this.output.length - OUTPUT_LINES_KEPT);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exitPromise = new Promise((resolve) => {
      const done = (): void => {
        this.exited = true;
        live.delete(child);
        resolve();
      };
      child.once('exit', done);
      // A spawn failure (e.g. ENOENT) emits 'error' and may never emit 'exit'.
      child.once('error', (err) => {
        this.output.push(`spawn failed: ${err.message}`);
        done();
      });
    });
  }

  get pid(): number | undefined {
    return this.exited ? undefined : this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && !this.exited;
  }

  /** The server's last lines of output, for an error message. */
  tail(lines = 20): string {
    return this.output.slice(-lines).join('\n');
  }

  /** SIGKILL by PID (a crash, for failover measurements); resolves once it has exited. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running || child.pid === undefined) return;
    signal(child.pid, 'SIGKILL');
    await this.exitPromise;
  }

  /** SIGTERM by PID, SIGKILL when it has not exited after `graceMs`; resolves once it has exited. */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    const child = this.child;
    if (!child || !this.running || child.pid === undefined) return;
    const pid = child.pid;
    signal(pid, 'SIGTERM');
    const timer = setTimeout(() => { if (this.running) signal(pid, 'SIGKILL'); }, graceMs);
    try {
      await this.exitPromise;
    } finally {
      clearTimeout(timer);
    }
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch { /* exited in between */ }
}

/**
 * Polls `probe` until it returns true; fails at once when one of `servers` has
 * exited, and after `timeoutMs` otherwise (with the probe's last error).
 */
export async function waitUntilServing(what: string, servers: readonly ServerProcess[], probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    const dead = servers.find((s) => !s.running);
    if (dead) throw new Error(`${dead.name} exited while waiting for ${what}:\n${dead.tail()}`);
    try {
      if (await probe()) return;
    } catch (err) {
      lastError = err;
    }
    if (performance.now() > deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await sleepMs(POLL_INTERVAL_MS);
  }
}

/** Polls `probe` until it resolves to a value other than undefined, failing fast when a server exits. */
export async function waitForValue<T>(what: string, servers: readonly ServerProcess[], probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  let value: T | undefined;
  await waitUntilServing(what, servers, async () => {
    value = await probe();
    return value !== undefined;
  }, timeoutMs);
  return value as T;
}

export function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Removes a deployment's temp data dir (nothing when it was never made). */
export function removeDir(dir: string | undefined): void {
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
}
