// RaftSim: N simulated Raft nodes in one process, driven by a discrete-event
// scheduler, with every source of randomness forked from one SeededRng(seed).
// It owns the network, the nodes, the trace and the invariant checkers, and
// offers the controls that random runs and scripted scenarios are made of
// (crash, restart, partition, cut, heal, propose, membership, transfer, read).
//
// Invariants are checked after EVERY event for the node the event touched
// (sim-checks.ts). The first violation — or any exception out of the core —
// stops the run with a SimFailure carrying the seed, the invariant and the
// tail of the trace.

import { decodeConfChange } from '../../src/raft/raft.js';
import {
  type ConfChange,
  type Membership,
  type Message,
  type NodeId,
  type ProposeResult,
  type RaftConfig,
  type RaftStatus,
  type Ready,
} from '../../src/raft/types.js';
import { AssertionError } from '../../src/util/assert.js';
import { silentLogger, type Logger } from '../../src/util/logger.js';
import { SeededRng, type Rng } from '../../src/util/rng.js';
import { EventQueue, type Label } from './event-queue.js';
import {
  InvariantViolation,
  type CommitLedger,
  type ElectionSafety,
  type ReadLinearizability,
  type StateMachineSafety,
} from './invariants.js';
import { SimChecks, describeCluster } from './sim-checks.js';
import { CALM_NETWORK, SimNetwork, decodeMessage, encodeMessage } from './sim-network.js';
import { SimNode, type NodeHost } from './sim-node.js';
import { SIM_RAFT_CONFIG, SimFailure, type SimOptions, type SimStats } from './sim-types.js';
import { Trace, describeMessage } from './trace.js';

export { SIM_RAFT_CONFIG, SimFailure, type SimOptions, type SimStats } from './sim-types.js';

export const traceFromEnv = (): boolean => process.env.SLUICE_SIM_TRACE === '1';

export class RaftSim {
  readonly queue = new EventQueue();
  readonly net: SimNetwork;
  readonly nodes = new Map<NodeId, SimNode>();
  readonly ids: readonly NodeId[];
  readonly bootstrap: Membership;
  readonly trace: Trace;
  readonly tickMs: number;
  readonly checks: SimChecks;
  readonly stats: SimStats = {
    proposalsOk: 0, proposalsRefused: 0, messagesSent: 0, messagesDropped: 0, snapshotChunks: 0,
    snapshotsInstalled: 0, compactions: 0, crashes: 0, tornFlushes: 0, restarts: 0, readsIssued: 0,
    confChanges: 0, transfers: 0,
  };
  eventsRun = 0;
  /** Called when a node starts an fsync (a fault injector may crash it before it completes). */
  onFsyncStarted: ((node: SimNode, delayMs: number, rd: Ready) => void) | undefined;
  private readonly coreRng: Rng;
  private readonly fsyncRng: Rng;
  private readonly tornRng: Rng;
  private readonly opts: Required<Omit<SimOptions, 'raft' | 'network' | 'replay'>>;
  private readonly replay: string | undefined;
  private commandSeq = 0;
  private readSeq = 0;

  constructor(options: SimOptions) {
    this.opts = {
      observers: 0, spares: 0, tickMs: 10, autoTick: true, fsyncMinMs: 1, fsyncMaxMs: 4, tornFlushRate: 0,
      compactEvery: 0, traceCapacity: 50, fullTrace: false, eventsMax: 1_000_000, sendBeforeFsync: false, ...options,
    };
    this.replay = options.replay;
    const rng = new SeededRng(options.seed);
    this.net = new SimNetwork(rng.fork(), options.network ?? CALM_NETWORK);
    this.coreRng = rng.fork();
    this.fsyncRng = rng.fork();
    this.tornRng = rng.fork();
    this.tickMs = this.opts.tickMs;
    this.trace = new Trace(this.opts.traceCapacity, this.opts.fullTrace || traceFromEnv());
    this.checks = new SimChecks(this.nodes);
    const total = options.voters + this.opts.observers + this.opts.spares;
    this.ids = Array.from({ length: total }, (_, k) => k + 1);
    this.bootstrap = {
      voters: this.ids.slice(0, options.voters),
      observers: this.ids.slice(options.voters, options.voters + this.opts.observers),
    };
    for (const id of this.ids) this.addNode(id, options.raft ?? {});
    for (const id of this.ids) this.guard(() => this.startNode(id));
  }

  get seed(): number {
    return this.opts.seed;
  }

  get ledger(): CommitLedger {
    return this.checks.ledger;
  }

  get machines(): StateMachineSafety {
    return this.checks.machines;
  }

  get electionSafety(): ElectionSafety {
    return this.checks.electionSafety;
  }

  get reads(): ReadLinearizability {
    return this.checks.reads;
  }

  now(): number {
    return this.queue.now();
  }

  node(id: NodeId): SimNode {
    const n = this.nodes.get(id);
    if (n === undefined) throw new Error(`no node ${id}`);
    return n;
  }

  status(id: NodeId): RaftStatus {
    const raft = this.node(id).raft;
    if (raft === undefined) throw new Error(`node ${id} is down`);
    return raft.status();
  }

  alive(): SimNode[] {
    return [...this.nodes.values()].filter((n) => n.alive);
  }

  /** The live node that believes it leads in the highest term, if any. */
  leader(): SimNode | undefined {
    let best: SimNode | undefined;
    for (const n of this.nodes.values()) {
      if (n.alive && n.role === 'leader' && (best === undefined || n.term > best.term)) best = n;
    }
    return best;
  }

  electionTimeoutMs(): number {
    return this.node(this.ids[0] as NodeId).config.electionTimeoutTicks * this.tickMs;
  }

  note(text: Label): void {
    this.trace.add(this.now(), text);
  }

  // ------------------------------------------------------------ setup

  private addNode(id: NodeId, raft: Partial<Omit<RaftConfig, 'id'>>): void {
    const config: RaftConfig = { ...SIM_RAFT_CONFIG, ...raft, id };
    const settings = {
      config, bootstrap: this.bootstrap, compactEvery: this.opts.compactEvery, decode: decodeConfChange,
      sendBeforeFsync: this.opts.sendBeforeFsync,
    };
    const node = new SimNode(id, settings, this.host);
    this.nodes.set(id, node);
    this.checks.addNode(node);
  }

  private startNode(id: NodeId): void {
    const n = this.node(id);
    this.checks.started(n, n.start(this.coreRng.fork(), this.nodeLogger(id)));
    if (this.opts.autoTick) this.scheduleTick(n, this.coreRng.int(this.tickMs) + 1);
    this.afterNodeEvent(n);
  }

  private nodeLogger(id: NodeId): Logger {
    if (!this.trace.full) return silentLogger;
    const log = (level: string) => (obj: object | string, msg?: string): void =>
      this.note(() => `    n${id} ${level} ${msg ?? ''} ${typeof obj === 'string' ? obj : safeJson(obj)}`);
    const logger: Logger = {
      trace: () => {}, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'),
      child: () => logger,
    };
    return logger;
  }

  private scheduleTick(n: SimNode, delayMs: number): void {
    const epoch = n.epoch;
    this.queue.schedule(delayMs, `tick ${n.id}`, () => {
      if (n.epoch !== epoch || n.raft === undefined) return;
      n.raft.tick();
      this.afterNodeEvent(n);
      this.scheduleTick(n, this.tickMs);
    });
  }

  // ------------------------------------------------------------ the shell's host

  private readonly host: NodeHost = {
    scheduleFsync: (node, delayMs, rd, run) => {
      this.queue.schedule(delayMs, `fsync ${node.id}`, () => {
        run();
        if (node.alive) {
          this.checks.fsynced(node);
          this.afterNodeEvent(node);
        }
      });
      this.onFsyncStarted?.(node, delayMs, rd);
    },
    fsyncDelayMs: () => this.fsyncRng.range(this.opts.fsyncMinMs, this.opts.fsyncMaxMs),
    send: (node, rd) => this.sendAll(node, rd),
    applied: (node, rec) => this.checks.applied(node, rec),
    restoredSnapshot: (node, snap, img) => {
      this.checks.installed(node, snap, img);
      this.stats.snapshotsInstalled++;
      this.note(`n${node.id} installs snapshot ${snap.meta.index}/t${snap.meta.term}`);
    },
    readState: (node, rs) => {
      this.checks.readState(node, rs);
      this.note(`n${node.id} read ${rs.requestId} index=${rs.index}`);
    },
    compacted: (node, snap) => {
      this.stats.compactions++;
      this.note(`n${node.id} compacts to ${snap.meta.index}/t${snap.meta.term}`);
    },
  };

  private sendAll(from: SimNode, rd: Ready): void {
    for (const m of rd.messages) {
      this.stats.messagesSent++;
      if (m.type === 'installSnapshot') this.stats.snapshotChunks++;
      const to = this.nodes.get(m.to);
      const delays = to === undefined || m.from !== from.id ? [] : this.net.plan(m.from, m.to, this.now());
      if (delays.length === 0) {
        this.stats.messagesDropped++;
        this.note(() => `drop ${describeMessage(m)}`);
        continue;
      }
      const bytes = encodeMessage(m);
      for (const d of delays) this.scheduleDelivery(from, to as SimNode, m, bytes, d);
    }
  }

  private scheduleDelivery(from: SimNode, to: SimNode, m: Message, bytes: Uint8Array, delayMs: number): void {
    const fromEpoch = from.epoch;
    const toEpoch = to.epoch;
    this.queue.schedule(delayMs, () => `deliver ${describeMessage(m)}`, () => {
      if (from.epoch !== fromEpoch || to.epoch !== toEpoch || to.raft === undefined) {
        this.note('  (lost: an end crashed)');
        return;
      }
      if (this.net.isCut(m.from, m.to)) {
        this.note('  (lost: link cut)');
        return;
      }
      to.raft.step(decodeMessage(bytes));
      this.afterNodeEvent(to);
    });
  }

  // ------------------------------------------------------------ invariants after each event

  /** Takes the node's Readies and checks every invariant that concerns it. */
  private afterNodeEvent(n: SimNode): void {
    n.pump();
    if (n.raft === undefined) return;
    const st = n.raft.status();
    this.traceRole(n, st);
    this.checks.afterEvent(n, st);
  }

  private traceRole(n: SimNode, st: RaftStatus): void {
    if (st.role === n.role && st.term === n.term && st.leader === n.leader) return;
    n.role = st.role;
    n.term = st.term;
    n.leader = st.leader;
    this.note(`n${n.id} is ${st.role} t${st.term} leader=${st.leader} last=${st.lastIndex} commit=${st.commit}`);
  }

  // ------------------------------------------------------------ running

  /** Runs the next event; false when the queue is empty. */
  runEvent(): boolean {
    const ev = this.queue.pop();
    if (ev === undefined) return false;
    if (++this.eventsRun > this.opts.eventsMax) this.fail('bounds', `more than ${this.opts.eventsMax} events`);
    this.trace.add(ev.timeMs, ev.label);
    this.guard(ev.run);
    return true;
  }

  /** Runs events until `done()` holds; fails the run if `timeoutMs` of simulated time pass first. */
  runUntil(done: () => boolean, timeoutMs: number, what: string): void {
    const deadline = this.now() + timeoutMs;
    while (!done()) {
      const next = this.queue.peekTime();
      if (next === undefined) this.fail('liveness', `${what}: nothing left to run\n${describeCluster(this.nodes.values())}`);
      if (next > deadline) this.fail('liveness', `${what}: not within ${timeoutMs} ms\n${describeCluster(this.nodes.values())}`);
      this.runEvent();
    }
  }

  /** Runs every event due in the next `ms` of simulated time. */
  runFor(ms: number): void {
    const until = this.now() + ms;
    for (let t = this.queue.peekTime(); t !== undefined && t <= until; t = this.queue.peekTime()) this.runEvent();
  }

  /** Runs until no event is left (only ends when nodes do not tick on their own). */
  runUntilIdle(): void {
    while (this.runEvent());
  }

  /** Turns `err` (an invariant violation or a core exception) into a SimFailure. */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      if (err instanceof SimFailure) throw err;
      if (err instanceof InvariantViolation) this.fail(err.invariant, err.detail);
      const kind = err instanceof AssertionError ? 'core assertion' : 'exception';
      this.fail(kind, err instanceof Error ? (err.stack ?? err.message) : String(err));
    }
  }

  /** Stops the run; a run that kept its full trace prints it first (SLUICE_SIM_TRACE=1, or a replay). */
  fail(invariant: string, detail: string): never {
    if (this.trace.full) console.error(`--- full trace of seed ${this.seed} ---\n${this.trace.lines().join('\n')}`);
    throw new SimFailure(this.seed, invariant, detail, this.trace.tail(), this.replay);
  }

  // ------------------------------------------------------------ controls (scripts and random runs)

  /**
   * Crashes node `id`. `torn`: true/false forces a torn flush or a clean loss
   * of the write buffer (default: tornFlushRate decides); a number keeps
   * exactly that many of the buffered writes (snapshot, entries, hard state).
   */
  crash(id: NodeId, torn?: boolean | number): void {
    const n = this.node(id);
    if (!n.alive) return;
    const tear = typeof torn === 'number' || (torn ?? (this.opts.tornFlushRate > 0 && this.tornRng.chance(this.opts.tornFlushRate)));
    const pending = n.disk.pendingWrites;
    const kept = n.crash(typeof torn === 'number' ? { keepWrites: torn } : tear ? this.tornRng : undefined);
    this.reads.forgetNode(id);
    this.stats.crashes++;
    if (tear) this.stats.tornFlushes++;
    this.note(`CRASH n${id} (${pending} unflushed writes, ${kept} kept by a torn flush)`);
  }

  restart(id: NodeId): void {
    const n = this.node(id);
    if (n.alive) return;
    n.restarts++;
    this.stats.restarts++;
    this.note(`RESTART n${id} from disk: hs=${JSON.stringify(n.disk.hardState)} snap=${n.disk.snapshotIndex()} last=${n.disk.lastIndex()}`);
    this.guard(() => this.startNode(id));
  }

  isolate(id: NodeId): void {
    this.net.isolate(id, this.ids);
    this.note(`PARTITION n${id} isolated`);
  }

  partition(a: readonly NodeId[], b: readonly NodeId[]): void {
    this.net.partition(a, b);
    this.note(`PARTITION [${a.join(',')}] | [${b.join(',')}]`);
  }

  cut(from: NodeId, to: NodeId): void {
    this.net.cut(from, to);
    this.note(`CUT ${from}->${to}`);
  }

  heal(): void {
    this.net.heal();
    this.note('HEAL network');
  }

  /** Proposes a fresh, unique command on node `id` (refused unless it leads). */
  propose(id: NodeId): { result: ProposeResult; cmd: string } {
    const cmd = `c${++this.commandSeq}`;
    const result = this.onNode(id, (raft) => raft.propose(new TextEncoder().encode(cmd)));
    if (result.ok) this.stats.proposalsOk++;
    else this.stats.proposalsRefused++;
    this.note(() => `propose ${cmd} on n${id}: ${result.ok ? `ok ${result.index}/t${result.term}` : result.reason}`);
    return { result, cmd };
  }

  proposeConfChange(id: NodeId, change: ConfChange): ProposeResult {
    const result = this.onNode(id, (raft) => raft.proposeConfChange(change));
    if (result.ok) this.stats.confChanges++;
    this.note(`conf change ${change.type} ${change.node} on n${id}: ${result.ok ? `ok ${result.index}` : result.reason}`);
    return result;
  }

  transferLeadership(id: NodeId, target: NodeId): boolean {
    const ok = this.onNode(id, (raft) => raft.transferLeadership(target));
    if (ok) this.stats.transfers++;
    this.note(`transfer leadership n${id} -> n${target}: ${ok}`);
    return ok;
  }

  /** Issues a ReadIndex request on `id`; the checker knows what was committed at this moment. */
  readIndex(id: NodeId): number | undefined {
    const requestId = ++this.readSeq;
    const minIndex = this.ledger.maxCommitted;
    const n = this.node(id);
    if (!n.alive) return undefined;
    this.reads.issue(requestId, id, minIndex);
    const ok = this.onNode(id, (raft) => raft.readIndex(requestId));
    if (!ok) this.reads.forget(requestId);
    else this.stats.readsIssued++;
    this.note(`read ${requestId} on n${id} (committed so far: ${minIndex}): ${ok ? 'pending' : 'refused'}`);
    return ok ? requestId : undefined;
  }

  campaign(id: NodeId): void {
    this.note(`campaign n${id}`);
    this.onNode(id, (raft) => raft.campaign());
  }

  /** One tick of node `id` (for scripts that drive time by hand). */
  tick(id: NodeId): void {
    this.onNode(id, (raft) => raft.tick());
  }

  /** Runs `fn` on a live node's core, then takes its Readies and checks invariants. */
  private onNode<T>(id: NodeId, fn: (raft: NonNullable<SimNode['raft']>) => T): T {
    const n = this.node(id);
    const raft = n.raft;
    if (raft === undefined) throw new Error(`node ${id} is down`);
    let out: T | undefined;
    this.guard(() => {
      out = fn(raft);
      this.afterNodeEvent(n);
    });
    return out as T;
  }

  // ------------------------------------------------------------ heal phase

  /**
   * Heals everything (network, crashed nodes, faults) and requires progress:
   * a leader, and a fresh command committed and applied on every voter of its
   * membership, within `timeoutMs` of simulated time (default 20 election timeouts).
   */
  healAndAwaitProgress(timeoutMs = 20 * this.electionTimeoutMs()): { leader: NodeId; index: number } {
    this.heal();
    this.net.setFaults(CALM_NETWORK);
    for (const id of this.ids) this.restart(id);
    let fresh: { cmd: string; index: number; term: number; at: number } | undefined;
    let done: { leader: NodeId; index: number } | undefined;
    const check = (): boolean => {
      const l = this.leader();
      if (l === undefined) return false;
      const stale = fresh === undefined || fresh.term < l.term || this.now() - fresh.at > 3 * this.electionTimeoutMs();
      if (stale) {
        const { result, cmd } = this.propose(l.id);
        fresh = result.ok ? { cmd, index: result.index, term: result.term, at: this.now() } : undefined;
        return false;
      }
      const f = fresh as NonNullable<typeof fresh>;
      const voters = this.status(l.id).membership.voters;
      if (voters.every((v) => this.hasApplied(v, f.index, f.cmd))) done = { leader: l.id, index: f.index };
      return done !== undefined;
    };
    this.runUntil(check, timeoutMs, 'heal phase: a fresh command committed on every voter');
    this.finalChecks();
    return done as NonNullable<typeof done>;
  }

  /** Re-checks every log (core and durable) from scratch. */
  finalChecks(): void {
    this.guard(() => this.checks.finalChecks());
  }

  /** Whether node `id` has applied command `cmd` at `index` (false while it is down). */
  hasApplied(id: NodeId, index: number, cmd: string): boolean {
    const n = this.node(id);
    return n.alive && n.sm.lastIndex() >= index && this.machines.digestAt(index) === `cmd:${cmd}`;
  }

  /** Digest of the entry at `index` of node `id`'s core log (for scripts). */
  digestAt(id: NodeId, index: number): string {
    return this.checks.coreLog(id).digestAt(index);
  }
}

function safeJson(obj: object): string {
  try {
    return JSON.stringify(obj, (_k, v: unknown) => (v instanceof Uint8Array ? `<${v.length} bytes>` : v));
  } catch {
    return String(obj);
  }
}
