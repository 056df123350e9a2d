// The processes of a `sluice local` cluster: one `sluice server` child per
// node of a LocalPlan, their logs, their readiness and their stop.
//
// Children run the same main.js with the same Node binary as this process.
// Each child's stdout (pino JSON) is appended to <node dir>/server.log; its
// stderr (one-line failure reasons) goes to the same file and the last lines
// are kept for the "node N died" message. Children are started `detached`
// (their own process group): a Ctrl-C in the terminal then reaches only this
// process, which sends each child exactly one SIGTERM — a second signal would
// make a server skip its controlled shutdown.
//
// Invariants: every child is signalled by its PID only; once stop() or
// killNow() began, exits are expected and not reported as failures; every
// wait is bounded (readiness by readyTimeoutMs, stop by graceMs, then
// SIGKILL); an exit hook SIGKILLs whatever still runs if this process leaves
// without stopping them (a crash), so no node outlives `sluice local`
// unless this process itself is SIGKILLed.

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BrokerConnection } from '../client/broker-connection.js';
import { nodeWebSocketFactory, nodeWebSocketFactoryWith } from '../client/node-websocket.js';
import type { WebSocketFactory } from '../net/client-link.js';
import { fixedDialer, type TlsDialer } from '../net/tls.js';
import { QuorumClient } from '../raft-node/quorum-client.js';
import type { StatusResult } from '../raft-node/client-service.js';
import type { ClusterDescription } from '../controller/service/describe.js';
import { META_PROPERTIES, liveLockHolder, parseMetaProperties } from '../server/data-dir.js';
import { NODE_DIR_PREFIX, serverArgs, type LocalNodePlan, type LocalPlan, type RunningNode } from './local-plan.js';
import { serverNodeFlags } from '../server/runtime-flags.js';
import { SystemClock, SystemScheduler, type Clock, type Scheduler } from '../util/clock.js';

/** Lines of a child's stderr kept for the message when it dies. */
const STDERR_LINES_KEPT = 5;
const POLL_INTERVAL_MS = 200;
/** Per-request bounds of the readiness probes: a node still starting must not hold up the poll. */
const PROBE_CONNECT_TIMEOUT_MS = 1_000;
const PROBE_REQUEST_TIMEOUT_MS = 2_000;

/** How a child ended. */
export interface NodeExit {
  readonly node: LocalNodePlan;
  readonly pid: number;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** True when this process had to SIGKILL it. */
  readonly killed: boolean;
  /** The last lines the child wrote on stderr. */
  readonly stderrTail: readonly string[];
}

interface Child {
  readonly node: LocalNodePlan;
  readonly process: ChildProcess;
  readonly pid: number;
  readonly stderrTail: string[];
  readonly exited: Promise<NodeExit>;
  done: boolean;
  killed: boolean;
}

/** What an existing --data-dir already holds. */
export interface DataDirState {
  /** Node ids with a node-<id>/meta.properties. */
  readonly formatted: number[];
  /** A node dir of the plan locked by a live process (another sluice on the same data). */
  readonly lockedBy: { readonly dataDir: string; readonly pid: number } | undefined;
}

/** Reads the data dir without changing it (a missing dir is a fresh one). */
export function inspectDataDir(plan: LocalPlan): DataDirState {
  const root = path.resolve(plan.dataDir);
  let names: string[] = [];
  try {
    names = fs.readdirSync(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const formatted = names
    .map((name) => new RegExp(`^${NODE_DIR_PREFIX}(\\d+)$`).exec(name))
    .filter((m): m is RegExpExecArray => m !== null && fs.existsSync(path.join(root, m[0], META_PROPERTIES)))
    .map((m) => Number(m[1]));
  let lockedBy: DataDirState['lockedBy'];
  for (const node of plan.nodes) {
    const pid = liveLockHolder(node.dataDirAbs);
    if (pid !== undefined) {
      lockedBy = { dataDir: node.dataDir, pid };
      break;
    }
  }
  return { formatted, lockedBy };
}

/** Thrown by waitReady when the wait ends without a ready cluster. */
export class NotReadyError extends Error {}

export class LocalCluster {
  private readonly children: Child[] = [];
  /** With --tls, the probes dial as the CLI does: the local CA, the client certificate. */
  private dialer: TlsDialer | undefined = undefined;
  private factory: WebSocketFactory = nodeWebSocketFactory;
  private stopping = false;
  private failure: NodeExit | undefined;
  private readonly killAllOnExit = () => this.signalAll('SIGKILL');

  /**
   * @param mainJs the `sluice` entry point the children run
   * @param onUnexpectedExit called once, for the first child that exits before stop()
   * @param time the readiness deadline, its polls and the SIGKILL grace (the CLI runs on the system's)
   */
  constructor(
    private readonly plan: LocalPlan,
    private readonly mainJs: string,
    private readonly onUnexpectedExit: (exit: NodeExit) => void,
    private readonly time: { readonly clock: Clock; readonly scheduler: Scheduler } = { clock: SystemClock, scheduler: SystemScheduler },
  ) {}

  /** Reads the TLS files the probes need (once they exist: after ensureTlsFiles). */
  private tlsFiles(): void {
    const t = this.plan.tls;
    if (!t || this.dialer) return;
    const pem = { ca: fs.readFileSync(t.caFile, 'utf8'), cert: fs.readFileSync(t.clientCert, 'utf8'), key: fs.readFileSync(t.clientKey, 'utf8') };
    this.dialer = fixedDialer(pem);
    this.factory = nodeWebSocketFactoryWith(pem);
  }

  /** Spawns every node; throws (after killing what started) if a node dir or log cannot be created. */
  start(): RunningNode[] {
    process.once('exit', this.killAllOnExit);
    try {
      for (const node of this.plan.nodes) this.children.push(this.spawnNode(node));
    } catch (err) {
      void this.killNow();
      throw err;
    }
    return this.children.map((c) => ({ plan: c.node, pid: c.pid }));
  }

  private spawnNode(node: LocalNodePlan): Child {
    fs.mkdirSync(node.dataDirAbs, { recursive: true });
    const logFd = fs.openSync(node.logFile, 'a');
    let proc: ChildProcess;
    try {
      proc = spawn(process.execPath, [...serverNodeFlags(), this.mainJs, 'server', ...serverArgs(this.plan, node)], { detached: true, stdio: ['ignore', logFd, 'pipe'] });
    } catch (err) {
      fs.closeSync(logFd);
      throw err;
    }
    if (proc.pid === undefined) {
      fs.closeSync(logFd);
      throw new Error(`could not start node ${node.id}`);
    }
    const stderrTail: string[] = [];
    proc.stderr?.on('data', (chunk: Buffer) => {
      fs.writeSync(logFd, chunk);
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) stderrTail.push(line.trim());
      stderrTail.splice(0, Math.max(0, stderrTail.length - STDERR_LINES_KEPT));
    });
    const pid = proc.pid;
    const exited = new Promise<NodeExit>((resolve) => {
      proc.once('close', (code, signal) => {
        fs.closeSync(logFd);
        child.done = true;
        const exit: NodeExit = { node, pid, code, signal, killed: child.killed, stderrTail };
        if (!this.stopping && !this.failure) {
          this.failure = exit;
          this.onUnexpectedExit(exit);
        }
        resolve(exit);
      });
    });
    const child: Child = { node, process: proc, pid, stderrTail, exited, done: false, killed: false };
    return child;
  }

  /** Nodes whose process has not exited yet. */
  get liveCount(): number {
    return this.children.filter((c) => !c.done).length;
  }

  private signalAll(signal: NodeJS.Signals): void {
    for (const c of this.children) {
      if (c.done) continue;
      if (signal === 'SIGKILL') c.killed = true;
      try {
        process.kill(c.pid, signal);
      } catch {
        // already gone; its close event is on its way
      }
    }
  }

  /**
   * Controlled stop: SIGTERM to every node, SIGKILL by PID to those still
   * running after graceMs. Resolves with every node's exit.
   */
  async stop(graceMs: number): Promise<NodeExit[]> {
    this.stopping = true;
    this.signalAll('SIGTERM');
    const cancelKill = this.time.scheduler.schedule(graceMs, () => this.signalAll('SIGKILL'));
    try {
      return await Promise.all(this.children.map((c) => c.exited));
    } finally {
      cancelKill();
      process.removeListener('exit', this.killAllOnExit);
    }
  }

  /** SIGKILL every node now (a second Ctrl-C); resolves once they are gone. */
  async killNow(): Promise<NodeExit[]> {
    this.stopping = true;
    this.signalAll('SIGKILL');
    return Promise.all(this.children.map((c) => c.exited));
  }

  /**
   * Waits until the metadata quorum has a leader, every node is a registered,
   * unfenced broker, and every broker's own metadata lists them all (so a
   * client bootstrapping from any of them sees the whole cluster). Reports
   * each stage through `progress`. Resolves with the cluster id; throws
   * NotReadyError on timeout, when a node died, or when stop() began.
   */
  async waitReady(progress: (line: string) => void, readyTimeoutMs: number): Promise<string> {
    const deadline = this.time.clock.monotonicMs() + readyTimeoutMs;
    this.tlsFiles();
    const client = new QuorumClient({
      ...(this.dialer ? { tls: this.dialer } : {}),
      endpoints: this.plan.nodes.map((n) => n.controllerUrl),
      limits: { connectTimeoutMs: PROBE_CONNECT_TIMEOUT_MS, requestTimeoutMs: PROBE_REQUEST_TIMEOUT_MS, leaderSearchTimeoutMs: PROBE_REQUEST_TIMEOUT_MS },
    });
    try {
      progress('waiting for a metadata leader');
      const leader = await this.poll('a metadata leader', deadline, () => this.quorumLeader(client));
      progress(`metadata leader: node ${leader}`);
      let shown = -1;
      const description = await this.poll('every broker to be unfenced', deadline, async () => {
        const d = await client.controller<ClusterDescription>('describeCluster', {});
        const unfenced = this.unfencedBrokers(d);
        if (unfenced !== shown) progress(`waiting for brokers: ${unfenced}/${this.plan.nodes.length} unfenced`);
        shown = unfenced;
        return unfenced === this.plan.nodes.length ? d : undefined;
      });
      progress('waiting for every broker\'s metadata to list all brokers');
      await this.poll('every broker\'s metadata to list all brokers', deadline, () => this.brokersSeeAll());
      return description.clusterId ?? this.clusterIdOnDisk();
    } finally {
      client.close();
    }
  }

  /** Polls `probe` until it returns a value; probe errors count as "not yet". */
  private async poll<T>(what: string, deadline: number, probe: () => Promise<T | undefined>): Promise<T> {
    for (;;) {
      if (this.failure) throw new NotReadyError(`node ${this.failure.node.id} exited while waiting for ${what}`);
      if (this.stopping) throw new NotReadyError(`stopped while waiting for ${what}`);
      const value = await probe().catch(() => undefined);
      if (value !== undefined) return value;
      if (this.time.clock.monotonicMs() > deadline) throw new NotReadyError(`timed out waiting for ${what}`);
      await new Promise((resolve) => this.time.scheduler.schedule(POLL_INTERVAL_MS, () => resolve(undefined)));
    }
  }

  /** The leader's id once a majority of the nodes name the same leader. */
  private async quorumLeader(client: QuorumClient): Promise<number | undefined> {
    const statuses = await Promise.all(this.plan.nodes.map((n) => client.status(n.controllerUrl).catch(() => undefined)));
    const leader = statuses.find((s): s is StatusResult => s?.role === 'leader');
    if (!leader) return undefined;
    const agree = statuses.filter((s) => s?.leader === leader.nodeId && s.term === leader.term).length;
    return 2 * agree > this.plan.nodes.length ? leader.nodeId : undefined;
  }

  private unfencedBrokers(d: ClusterDescription): number {
    const ids = new Set(this.plan.nodes.map((n) => n.id));
    return d.brokers.filter((b) => ids.has(b.id) && !b.fenced).length;
  }

  private async brokersSeeAll(): Promise<true | undefined> {
    for (const node of this.plan.nodes) {
      const conn = await BrokerConnection.connect(node.brokerUrl, {
        factory: this.factory, connectTimeoutMs: PROBE_CONNECT_TIMEOUT_MS, requestTimeoutMs: PROBE_REQUEST_TIMEOUT_MS,
      });
      try {
        if ((await conn.metadata([])).brokers.length < this.plan.nodes.length) return undefined;
      } finally {
        conn.close();
      }
    }
    return true;
  }

  /** Fallback when the metadata image carries no cluster id yet: node 1's meta.properties. */
  private clusterIdOnDisk(): string {
    const first = this.plan.nodes[0];
    if (!first) return 'unknown';
    try {
      const file = path.join(first.dataDirAbs, META_PROPERTIES);
      return parseMetaProperties(fs.readFileSync(file, 'utf8'), file).clusterId;
    } catch {
      return 'unknown';
    }
  }
}
