// A real Sluice cluster for chaos runs: `sluice server` processes on
// loopback whose every endpoint is reached through the ChaosProxy, with the
// process faults the nemesis needs (SIGKILL, SIGTERM, SIGSTOP/SIGCONT,
// restart, a torn tail on a stopped node's newest segment) and the reading of
// each node's log for Raft leadership per term.
//
// Layout per node i: a real broker listener and a real controller listener on
// ports below the ephemeral range (stablePorts: a restart binds them again);
// proxy listeners in front of both, which are what the node
// advertises (--advertised-listen, and on a broker-only node
// --advertised-controller-listen) and what every voter entry of
// --controller-quorum names; --outbound-address 127.0.0.(10+i) so the proxy
// knows which node dials. Clients of the harness dial from 127.0.0.1.
//
// Profiles: 'combined' = 3 combined nodes (broker,controller); 'with-brokers'
// = the same plus 2 broker-only nodes (ids 4 and 5, metadata observers).
//
// Invariants: every process this module starts is tracked by PID and killed
// by shutdown()/cleanup() — and by a process-exit hook if the harness dies
// first; a node's log file (JSON lines, --log-level info) is appended across
// restarts, each start marked by a line of its own.

import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { MAIN_JS, waitFor } from '../integration/harness.js';
import { Client } from '../../src/index.js';
import { CLEAN_SHUTDOWN_FILE } from '../../src/storage/log-loader.js';
import { parseSegmentFileName, LOG_FILE_SUFFIX } from '../../src/storage/segment.js';
import type { Rng } from '../../src/util/rng.js';
import type { ControllerTerm } from './history.js';
import { ChaosProxy, nodeAddress } from './proxy.js';
import { serverNodeFlags } from '../../src/server/runtime-flags.js';

export type Profile = 'combined' | 'with-brokers';
export const PROFILES: readonly Profile[] = ['combined', 'with-brokers'];

export interface ChaosClusterOptions {
  readonly profile: Profile;
  /** The run's directory: data dirs and node logs go under it. */
  readonly root: string;
  /** broker.session.timeout.ms (cluster-wide). */
  readonly sessionTimeoutMs?: number;
  /** replica.lag.time.max.ms (every broker). */
  readonly replicaLagTimeMaxMs?: number;
  readonly electionTimeoutMs?: number;
  /** __consumer_offsets partitions (fewer than Kafka's 50: this runs on 2 cores). */
  readonly offsetsTopicPartitions?: number;
  /** More keys for every node's config file (e.g. the tx_money round's transaction.state.log.* settings). */
  readonly extraConfig?: Readonly<Record<string, string>>;
}

export const CLUSTER_DEFAULTS = {
  sessionTimeoutMs: 6_000,
  replicaLagTimeMaxMs: 3_000,
  electionTimeoutMs: 1_000,
  offsetsTopicPartitions: 6,
} as const;

const VOTERS = 3;
const BROKER_ONLY = 2;
/** How long a SIGTERMed node may take over its controlled shutdown before it gets SIGKILL. */
const STOP_GRACE_MS = 20_000;
/** Real listener ports are taken from [STABLE_PORT_LOW, the start of the ephemeral range). */
const STABLE_PORT_LOW = 20_000;
/** A torn write cuts at most this many bytes off the newest segment. */
const TORN_BYTES_MAX = 8_192;

export type NodeState = 'down' | 'running' | 'paused';

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) {
    try {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
    } catch { /* already gone */ }
  }
});

/** One `sluice server` process (started, signalled and restarted by PID), logging to its file. */
export class ChaosNode {
  private child: ChildProcess | undefined;
  private exitPromise: Promise<number | null> = Promise.resolve(null);
  private paused = false;
  /** How the last process ended: 'SIGKILL', 'SIGTERM', an exit code, or null while running/never started. */
  lastExit: string | null = null;
  starts = 0;
  /** Exits nobody asked for (a crash, a failed start): what the process said last. */
  readonly crashes: string[] = [];
  private expectingExit = false;

  constructor(
    readonly id: number,
    readonly voter: boolean,
    readonly dataDir: string,
    readonly logFile: string,
    private readonly args: readonly string[],
    /** What clients and other nodes dial: the proxy's listeners. */
    readonly brokerUrl: string,
    readonly controllerUrl: string,
  ) {}

  get state(): NodeState {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return 'down';
    return this.paused ? 'paused' : 'running';
  }

  get pid(): number | undefined {
    return this.state === 'down' ? undefined : this.child?.pid;
  }

  start(): void {
    if (this.state !== 'down') throw new Error(`node ${this.id} is already ${this.state}`);
    this.starts++;
    fs.appendFileSync(this.logFile, `${JSON.stringify({ chaos: 'start', nodeId: this.id, time: Date.now(), start: this.starts })}\n`);
    const fd = fs.openSync(this.logFile, 'a');
    try {
      this.child = spawn(process.execPath, [...serverNodeFlags(), MAIN_JS, 'server', ...this.args], { stdio: ['ignore', fd, fd] });
    } finally {
      fs.closeSync(fd);
    }
    const child = this.child;
    live.add(child);
    this.paused = false;
    this.lastExit = null;
    this.expectingExit = false;
    this.exitPromise = new Promise((resolve) => child.once('exit', (code, signal) => {
      live.delete(child);
      this.lastExit = signal ?? String(code);
      if (!this.expectingExit) this.crashes.push(`node ${this.id} exited by itself (${this.lastExit}): ${lastLines(this.logFile, 3).join(' | ')}`);
      resolve(code);
    }));
  }

  /** SIGKILL, waiting for the exit. */
  async kill(): Promise<void> {
    const pid = this.pid;
    if (pid === undefined) return;
    this.expectingExit = true;
    process.kill(pid, 'SIGKILL');
    await this.exitPromise;
    this.paused = false;
  }

  /** SIGTERM (a controlled shutdown), SIGKILL after `graceMs`; waits for the exit. */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    const pid = this.pid;
    if (pid === undefined) return;
    if (this.paused) this.resume(); // a stopped process would hold SIGTERM until SIGCONT
    this.expectingExit = true;
    process.kill(pid, 'SIGTERM');
    const timer = setTimeout(() => {
      if (this.pid === pid) process.kill(pid, 'SIGKILL');
    }, graceMs);
    try {
      await this.exitPromise;
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGSTOP: the process freezes with its sockets open. */
  pause(): void {
    const pid = this.pid;
    if (pid === undefined || this.paused) return;
    process.kill(pid, 'SIGSTOP');
    this.paused = true;
  }

  /** SIGCONT. */
  resume(): void {
    const pid = this.pid;
    if (pid === undefined || !this.paused) return;
    process.kill(pid, 'SIGCONT');
    this.paused = false;
  }

  exited(): Promise<number | null> {
    return this.exitPromise;
  }
}

/** A torn write done by truncateTail(). */
export interface TornTail {
  readonly nodeId: number;
  readonly file: string;
  readonly sizeBefore: number;
  readonly bytesCut: number;
}

export class ChaosCluster {
  private readonly clients: Client[] = [];

  private constructor(
    readonly profile: Profile,
    readonly root: string,
    readonly proxy: ChaosProxy,
    readonly nodes: readonly ChaosNode[],
  ) {}

  /** Starts the proxy and every node (does not wait for them: see waitReady()). */
  static async start(opts: ChaosClusterOptions): Promise<ChaosCluster> {
    const o = { ...CLUSTER_DEFAULTS, ...definedOnly(opts) };
    const ids = Array.from({ length: VOTERS + (opts.profile === 'with-brokers' ? BROKER_ONLY : 0) }, (_, i) => i + 1);
    const ports = await stablePorts(2 * ids.length);
    const proxy = new ChaosProxy();
    const routes = [];
    for (const id of ids) {
      const broker = await proxy.addRoute(`n${id}-broker`, id, ports[2 * (id - 1)]!);
      const controller = await proxy.addRoute(`n${id}-controller`, id, ports[2 * (id - 1) + 1]!);
      routes.push({ id, broker, controller });
    }
    fs.mkdirSync(opts.root, { recursive: true });
    const configFile = path.join(opts.root, 'cluster.json');
    fs.writeFileSync(configFile, JSON.stringify({
      'broker.session.timeout.ms': String(o.sessionTimeoutMs),
      'offsets.topic.num.partitions': String(o.offsetsTopicPartitions),
      'offsets.topic.replication.factor': '3',
      // The workload's compacted topic (workload.ts) should be cleaned several times within a round.
      'log.cleaner.backoff.ms': '500',
      ...opts.extraConfig,
    }, null, 2));
    const quorum = routes.filter((r) => r.id <= VOTERS).map((r) => `${r.id}@127.0.0.1:${r.controller.port}`).join(',');
    const nodes = routes.map(({ id, broker, controller }) => {
      const voter = id <= VOTERS;
      const dataDir = path.join(opts.root, `node-${id}`);
      const args = [
        '--node-id', String(id), '--roles', voter ? 'broker,controller' : 'broker',
        '--listen', `ws://127.0.0.1:${broker.targetPort}`, '--advertised-listen', `ws://127.0.0.1:${broker.port}`,
        '--controller-listen', `ws://127.0.0.1:${controller.targetPort}`,
        ...(voter ? [] : ['--advertised-controller-listen', `ws://127.0.0.1:${controller.port}`]),
        '--controller-quorum', quorum, '--outbound-address', nodeAddress(id), '--data-dir', dataDir,
        '--log-level', 'info', '--log-format', 'json', '--config', configFile,
        '--replica-lag-time-max-ms', String(o.replicaLagTimeMaxMs), '--election-timeout-ms', String(o.electionTimeoutMs),
      ];
      return new ChaosNode(id, voter, dataDir, path.join(opts.root, `node-${id}.log`), args, `ws://127.0.0.1:${broker.port}`, `ws://127.0.0.1:${controller.port}`);
    });
    const cluster = new ChaosCluster(opts.profile, opts.root, proxy, nodes);
    for (const n of nodes) n.start();
    return cluster;
  }

  node(id: number): ChaosNode {
    const n = this.nodes[id - 1];
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  get voters(): ChaosNode[] {
    return this.nodes.filter((n) => n.voter);
  }

  /** The proxy's broker URLs: what harness clients bootstrap from. */
  get bootstrap(): string[] {
    return this.nodes.map((n) => n.brokerUrl);
  }

  /** A client of the cluster through the proxy (closed by cleanup()). */
  client(clientId: string, opts: { requestTimeoutMs?: number } = {}): Client {
    const c = new Client({
      bootstrap: this.bootstrap, clientId, requestTimeoutMs: opts.requestTimeoutMs ?? 10_000, connectTimeoutMs: 3_000,
      metadataMaxAgeMs: 5_000, retry: { retries: 5, initialRetryTimeMs: 100, maxRetryTimeMs: 1_000 },
    });
    this.clients.push(c);
    return c;
  }

  /** Waits until every broker is registered and unfenced, as the active controller sees it. */
  async waitReady(timeoutMs: number): Promise<void> {
    const admin = this.client('chaos-ready', { requestTimeoutMs: 3_000 }).admin();
    const want = this.nodes.length;
    await waitFor(`all ${want} brokers registered and unfenced`, async () => {
      const d = await admin.describeCluster();
      return d.controllerId >= 0 && d.brokers.length === want && d.brokers.every((b) => !b.fenced);
    }, { timeoutMs, intervalMs: 250 });
  }

  // ---- faults ----------------------------------------------------------------------

  kill(id: number): Promise<void> {
    return this.node(id).kill();
  }

  stop(id: number): Promise<void> {
    return this.node(id).stop();
  }

  pause(id: number): void {
    this.node(id).pause();
  }

  resume(id: number): void {
    this.node(id).resume();
  }

  start(id: number): void {
    this.node(id).start();
  }

  /** SIGKILL (or SIGTERM with `graceful`), then start again. */
  async restart(id: number, graceful = false): Promise<void> {
    await (graceful ? this.stop(id) : this.kill(id));
    this.start(id);
  }

  /**
   * A torn write on a stopped node: cuts 1..TORN_BYTES_MAX bytes (never the
   * whole file) off the newest `.log` segment of a partition chosen by `rng`
   * among the node's partition logs with data (the Raft metadata log is left
   * alone). A clean-shutdown marker is removed so that the node's loader
   * re-validates the tail, as after a crash. Null when no log has data.
   */
  truncateTail(id: number, rng: Rng, partitionFilter: (dirName: string) => boolean = () => true): TornTail | null {
    const node = this.node(id);
    if (node.state !== 'down') throw new Error(`node ${id} must be stopped to tear its tail (it is ${node.state})`);
    const candidates = newestSegments(node.dataDir).filter((s) => s.size > 0 && partitionFilter(path.basename(path.dirname(s.file))));
    if (candidates.length === 0) return null;
    const pick = candidates[rng.int(candidates.length)]!;
    const bytesCut = rng.range(1, Math.min(TORN_BYTES_MAX, Math.max(1, pick.size - 1)));
    fs.truncateSync(pick.file, pick.size - bytesCut);
    fs.rmSync(path.join(path.dirname(pick.file), CLEAN_SHUTDOWN_FILE), { force: true });
    return { nodeId: id, file: pick.file, sizeBefore: pick.size, bytesCut };
  }

  /** Resumes paused nodes and starts stopped ones (the proxy is healed separately). */
  reviveAll(): void {
    for (const n of this.nodes) {
      if (n.state === 'paused') n.resume();
      if (n.state === 'down') n.start();
    }
  }

  /** "Node N became Raft leader in term T", from every node's log ('role changed' to leader). */
  controllerTerms(): ControllerTerm[] {
    const out: ControllerTerm[] = [];
    for (const n of this.voters) out.push(...leaderTermsInLog(n.id, n.logFile));
    return out;
  }

  /** Every exit of a node that the harness did not cause. */
  crashes(): string[] {
    return this.nodes.flatMap((n) => n.crashes);
  }

  /** One line per node: its state, for a report. */
  describeNodes(): string {
    return this.nodes.map((n) => `node ${n.id} ${n.state}${n.state === 'down' && n.lastExit ? ` (exit ${n.lastExit})` : ''}`).join(', ');
  }

  /** SIGTERM to every node (in parallel; SIGKILL after the grace period), waiting for every exit. */
  async shutdown(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
  }

  /** Kills every process by PID, closes the clients and the proxy. Safe to call more than once. */
  async cleanup(): Promise<void> {
    for (const c of this.clients.splice(0)) c.close();
    await Promise.all(this.nodes.map((n) => n.kill().catch(() => undefined)));
    await this.proxy.close();
  }
}

/**
 * Ports for the nodes' real listeners, which they bind again on every restart
 * for the whole run: taken below the OS's ephemeral range, where no outgoing
 * connection (ours or another test's) and no `listen(0)` can take one in
 * between; a random start keeps concurrent runs apart; each is checked free.
 */
async function stablePorts(n: number): Promise<number[]> {
  let ephemeralLow = 32_768;
  try {
    ephemeralLow = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralLow;
  } catch { /* not Linux: Linux's default */ }
  const low = Math.min(STABLE_PORT_LOW, ephemeralLow - 1_000);
  const out: number[] = [];
  for (let tries = 0, port = low + crypto.randomInt(ephemeralLow - low); out.length < n; tries++, port = port + 1 >= ephemeralLow ? low : port + 1) {
    if (tries > ephemeralLow - low) throw new Error(`no ${n} free ports in [${low}, ${ephemeralLow})`);
    if (await portFree(port)) out.push(port);
  }
  return out;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** The newest `.log` file of every partition directory of a data dir. */
function newestSegments(dataDir: string): Array<{ file: string; size: number }> {
  const out: Array<{ file: string; size: number }> = [];
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dataDir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!e.isDirectory() || e.name.startsWith('__cluster_metadata') || !/-\d+$/.test(e.name)) continue;
    const dir = path.join(dataDir, e.name);
    const logs = fs.readdirSync(dir).map((f) => ({ f, parsed: parseSegmentFileName(f) }))
      .filter((x) => x.parsed?.suffix === LOG_FILE_SUFFIX)
      .sort((a, b) => a.parsed!.baseOffset - b.parsed!.baseOffset);
    const newest = logs[logs.length - 1];
    if (newest) out.push({ file: path.join(dir, newest.f), size: fs.statSync(path.join(dir, newest.f)).size });
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : 1));
}

/** The last `n` lines of a file (for a crash report). */
function lastLines(file: string, n: number): string[] {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.trimEnd().split('\n').slice(-n).map((l) => (l.length > 300 ? `${l.slice(0, 297)}...` : l));
  } catch {
    return [];
  }
}

/** Terms in which the node logged becoming leader. */
export function leaderTermsInLog(nodeId: number, logFile: string): ControllerTerm[] {
  let text: string;
  try {
    text = fs.readFileSync(logFile, 'utf8');
  } catch {
    return [];
  }
  const out: ControllerTerm[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('"role changed"')) continue;
    let entry: { msg?: unknown; role?: unknown; term?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue; // a line torn by a SIGKILL
    }
    if (entry.msg === 'role changed' && entry.role === 'leader' && typeof entry.term === 'number') out.push({ nodeId, term: entry.term });
  }
  return out;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
