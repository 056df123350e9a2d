// Harness for tests (and benchmarks) that run real `sluice server` processes
// on 127.0.0.1: free ports, temp data dirs, spawn/kill by PID, status polling
// through the quorum client, and waits on conditions with timeouts (never
// fixed sleeps). Every process it starts is tracked and killed by cleanup(),
// which the caller runs in an `after` hook; a process-exit hook is the last
// line of defence if the test runner dies first.
//
// main.js is located relative to this file's compiled location
// (<outDir>/test/integration/harness.js → <outDir>/src/cli/main.js), so the
// harness works from dist/ and from any private build directory.

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { QuorumClient } from '../../src/raft-node/quorum-client.js';
import type { StatusResult } from '../../src/raft-node/client-service.js';
import { serverNodeFlags } from '../../src/server/runtime-flags.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const MAIN_JS = path.resolve(here, '../../src/cli/main.js');

/** Extra node flags for every server process, e.g. SLUICE_IT_NODE_ARGS='--cpu-prof' to profile. */
const NODE_ARGS = (process.env.SLUICE_IT_NODE_ARGS ?? '').split(' ').filter((a) => a.length > 0);
const PROFILING = NODE_ARGS.some((a) => a.startsWith('--cpu-prof') || a.startsWith('--heap-prof'));
const OUTPUT_LINES_KEPT = 300;
const STOP_GRACE_MS = 10_000;

/** Ports the OS says are free right now (held together so they are distinct). */
export async function freePorts(n: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const s = net.createServer();
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(0, '127.0.0.1', () => resolve());
      });
      servers.push(s);
    }
    return servers.map((s) => (s.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

export interface WaitOptions {
  readonly timeoutMs: number;
  readonly intervalMs?: number;
}

/** Polls `probe` until it returns a value other than undefined/false; throws naming `what` on timeout. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, opts: WaitOptions): Promise<T> {
  const deadline = performance.now() + opts.timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (performance.now() > deadline) {
      const why = lastError ? ` (last error: ${(lastError as Error).message})` : '';
      throw new Error(`timed out after ${opts.timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, opts.intervalMs ?? 50));
  }
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) if (child.pid !== undefined) {
    try { process.kill(child.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
});

/** One `sluice server` process (which may be started, killed and restarted). */
export class NodeProcess {
  child: ChildProcess | undefined;
  private exitPromise: Promise<number | null> | undefined;
  readonly output: string[] = [];

  constructor(
    readonly id: number,
    readonly port: number,
    readonly dataDir: string,
    private readonly argsFor: () => string[],
    /** The broker listener's port, for nodes with the broker role. */
    readonly brokerPort?: number,
    /** The Kafka listener's port, for broker nodes of a cluster made with `kafka: true`. */
    readonly kafkaPort?: number,
    /** 'wss' for the nodes of a cluster made with `tls`. */
    readonly scheme: 'ws' | 'wss' = 'ws',
  ) {}

  /** HOST:PORT of the Kafka listener; throws for a node without one. */
  get kafkaAddress(): string {
    if (this.kafkaPort === undefined) throw new Error(`node ${this.id} has no Kafka listener`);
    return `127.0.0.1:${this.kafkaPort}`;
  }

  get url(): string {
    return `${this.scheme}://127.0.0.1:${this.port}`;
  }

  /** The broker listener (client protocol); throws for a controller-only node. */
  get brokerUrl(): string {
    if (this.brokerPort === undefined) throw new Error(`node ${this.id} has no broker role`);
    return `${this.scheme}://127.0.0.1:${this.brokerPort}`;
  }

  /** The HTTP listener's bound URL (--http-listen, old name --metrics-listen), read from its "http listener up" log line; undefined until then. */
  get httpUrl(): string | undefined {
    for (const line of this.output) {
      if (!line.includes('"msg":"http listener up"')) continue;
      const m = /"url":"(https?:\/\/[^"]+)"/.exec(line);
      if (m) return m[1];
    }
    return undefined;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    if (this.running) throw new Error(`node ${this.id} is already running`);
    const child = spawn(process.execPath, [...serverNodeFlags(), ...NODE_ARGS, MAIN_JS, 'server', ...this.argsFor()], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    live.add(child);
    const keep = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) if (line) this.output.push(`[${this.id}] ${line}`);
      if (this.output.length > OUTPUT_LINES_KEPT) this.output.splice(0, this.output.length - OUTPUT_LINES_KEPT);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exitPromise = new Promise((resolve) => child.once('exit', (code) => {
      live.delete(child);
      resolve(code);
    }));
  }

  /** Sends `signal` to the process by PID and waits for it to exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL', timeoutMs = STOP_GRACE_MS): Promise<number | null> {
    const child = this.child;
    if (!child || !this.running || child.pid === undefined) return child?.exitCode ?? null;
    process.kill(child.pid, signal);
    const timer = setTimeout(() => { if (this.running && child.pid !== undefined) process.kill(child.pid, 'SIGKILL'); }, timeoutMs);
    try {
      return await (this.exitPromise ?? Promise.resolve(null));
    } finally {
      clearTimeout(timer);
    }
  }

  exited(): Promise<number | null> {
    return this.exitPromise ?? Promise.resolve(null);
  }
}

export interface ClusterOptions {
  readonly size: number;
  /** Extra flags for every node (e.g. --snapshot-interval-entries 100). */
  readonly extraArgs?: readonly string[];
  readonly logLevel?: string;
  /** Combined nodes (--roles broker,controller, each with a broker listener); default controller only. */
  readonly brokers?: boolean;
  /** Broker-only nodes (metadata observers) after the voters, with ids size+1, size+2, ... */
  readonly brokerOnly?: number;
  /** Broker nodes also open a Kafka-protocol listener (--kafka-listen) on a free port. */
  readonly kafka?: boolean;
  /** Extra flags for one node, by id, after extraArgs (e.g. its own credentials). */
  readonly nodeArgs?: (id: number) => readonly string[];
  /** The Kafka listener's security protocol (PROTOCOL://127.0.0.1:port); SSL with `tls`, plain host:port otherwise. */
  readonly kafkaProtocol?: string;
  /** Every listener on TLS (wss://, Kafka SSL://); the node's ssl.* flags by node id. */
  readonly tls?: (id: number) => readonly string[];
}

/** N controller (or combined) processes on loopback, each with its own temp data dir. */
export class ProcessCluster {
  readonly nodes: NodeProcess[] = [];
  private clients: QuorumClient[] = [];

  private constructor(readonly root: string, readonly quorum: string) {}

  static async create(opts: ClusterOptions): Promise<ProcessCluster> {
    const extra = opts.brokerOnly ?? 0;
    const kafkaCount = opts.kafka ? (opts.brokers ? opts.size : 0) + extra : 0;
    const allWithKafka = await freePorts((opts.brokers ? 2 * opts.size : opts.size) + 2 * extra + kafkaCount);
    const kafkaPorts = allWithKafka.slice(allWithKafka.length - kafkaCount);
    const all = allWithKafka.slice(0, allWithKafka.length - kafkaCount);
    const ports = all.slice(0, opts.size);
    const brokerPorts = opts.brokers ? all.slice(opts.size, 2 * opts.size) : [];
    const observerPorts = all.slice(all.length - 2 * extra);
    const ws = opts.tls ? 'wss' : 'ws';
    const kafkaScheme = opts.kafkaProtocol ? `${opts.kafkaProtocol}://` : opts.tls ? 'SSL://' : '';
    const kafkaArgs = (i: number): string[] => (kafkaPorts[i] === undefined ? [] : ['--kafka-listen', `${kafkaScheme}127.0.0.1:${kafkaPorts[i]}`]);
    const tlsArgs = (id: number): readonly string[] => opts.tls?.(id) ?? [];
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-it-'));
    const quorum = ports.map((p, i) => `${i + 1}@127.0.0.1:${p}`).join(',');
    const cluster = new ProcessCluster(root, quorum);
    ports.forEach((port, i) => {
      const id = i + 1;
      const dataDir = path.join(root, `node-${id}`);
      const brokerPort = brokerPorts[i];
      const roleArgs = brokerPort === undefined ? ['--roles', 'controller'] : ['--roles', 'broker,controller', '--listen', `${ws}://127.0.0.1:${brokerPort}`];
      cluster.nodes.push(new NodeProcess(id, port, dataDir, () => [
        '--node-id', String(id), ...roleArgs, '--controller-listen', `${ws}://127.0.0.1:${port}`,
        '--controller-quorum', quorum, '--data-dir', dataDir, '--log-level', opts.logLevel ?? 'info', ...(brokerPort === undefined ? [] : kafkaArgs(i)), ...tlsArgs(id), ...(opts.extraArgs ?? []),
        ...(opts.nodeArgs?.(id) ?? []),
      ], brokerPort, brokerPort === undefined ? undefined : kafkaPorts[i], ws));
    });
    for (let i = 0; i < extra; i++) {
      const id = opts.size + i + 1;
      const [port, brokerPort] = [observerPorts[2 * i]!, observerPorts[2 * i + 1]!];
      const dataDir = path.join(root, `node-${id}`);
      cluster.nodes.push(new NodeProcess(id, port, dataDir, () => [
        '--node-id', String(id), '--roles', 'broker', '--listen', `${ws}://127.0.0.1:${brokerPort}`, '--controller-listen', `${ws}://127.0.0.1:${port}`,
        '--controller-quorum', quorum, '--data-dir', dataDir, '--log-level', opts.logLevel ?? 'info', ...kafkaArgs(opts.size + i), ...tlsArgs(id), ...(opts.extraArgs ?? []),
        ...(opts.nodeArgs?.(id) ?? []),
      ], brokerPort, kafkaPorts[opts.size + i], ws));
    }
    return cluster;
  }

  node(id: number): NodeProcess {
    const n = this.nodes[id - 1];
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  get endpoints(): string[] {
    return this.nodes.map((n) => n.url);
  }

  /** Broker listeners of the nodes with the broker role. */
  get brokerUrls(): string[] {
    return this.nodes.filter((n) => n.brokerPort !== undefined).map((n) => n.brokerUrl);
  }

  /** bootstrap.servers for Kafka clients: every Kafka listener. */
  get kafkaBootstrap(): string {
    return this.nodes.filter((n) => n.kafkaPort !== undefined).map((n) => n.kafkaAddress).join(',');
  }

  startAll(): void {
    for (const n of this.nodes) n.start();
  }

  client(): QuorumClient {
    const c = new QuorumClient({ endpoints: this.endpoints, limits: { connectTimeoutMs: 1_000, requestTimeoutMs: 10_000 } });
    this.clients.push(c);
    return c;
  }

  /** Status of every running node that answers (others are missing from the map). */
  async statuses(client: QuorumClient): Promise<Map<number, StatusResult>> {
    const out = new Map<number, StatusResult>();
    await Promise.all(this.nodes.filter((n) => n.running).map(async (n) => {
      try {
        out.set(n.id, await client.status(n.url));
      } catch { /* not up yet, or just killed */ }
    }));
    return out;
  }

  /** Waits until a running node leads and every other running node follows it in the same term. */
  async waitForLeader(client: QuorumClient, opts: WaitOptions & { notId?: number; minTerm?: number }): Promise<{ id: number; term: number }> {
    return waitFor('a leader all running nodes agree on', async () => {
      const all = await this.statuses(client);
      const running = this.nodes.filter((n) => n.running);
      if (all.size !== running.length) return undefined;
      const leaders = [...all.values()].filter((s) => s.role === 'leader');
      const l = leaders[0];
      if (leaders.length !== 1 || !l || l.nodeId === opts.notId || l.term < (opts.minTerm ?? 0)) return undefined;
      const agree = [...all.values()].every((s) => s.leader === l.nodeId && s.term === l.term);
      return agree ? { id: l.nodeId, term: l.term } : undefined;
    }, { intervalMs: 25, ...opts });
  }

  /** The last lines each node printed, for a failing test's report. */
  dumpLogs(): string {
    return this.nodes.map((n) => n.output.slice(-60).join('\n')).join('\n');
  }

  /** Kills every process (SIGKILL by PID), closes clients, removes the data dirs. */
  async cleanup(): Promise<void> {
    for (const c of this.clients) c.close();
    this.clients = [];
    // A profiled node writes its profile only when it exits by itself.
    await Promise.all(this.nodes.map((n) => n.kill(PROFILING ? 'SIGTERM' : 'SIGKILL')));
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}
