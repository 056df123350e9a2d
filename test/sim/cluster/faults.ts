// The fault mix of a simulated cluster run, drawn from the seed.
//
// planFaults() is pure: (rng, shape, duration) → a schedule of steps. Each
// step is one primary fault held for a while, then healed, sometimes with an
// operation started in the middle of it (a reassignment, a partition-count
// increase, a leadership transfer, a controller membership change), then a
// calm gap. FaultRunner plays a schedule on a SimCluster, records every fault
// and operation in the history (kind 'fault' / 'admin') and in the trace, and
// heals everything at the end.
//
// The documented ISR limit (docs/reliability.md, "the ISR limit"): with
// acks=all, min.insync.replicas=2, RF=3 and fsync by policy, an acknowledged
// write survives as long as one replica that was in the ISR when it was
// acknowledged keeps it. A crash drops a replica's unsynced suffix, so two
// crashes that overlap — a second one before the first node is back in every
// ISR — may lose acknowledged writes, as in Kafka (KIP-966). The runner
// therefore crashes (or tears the tail of) a node only while every node is
// up and every tracked partition has its full ISR; otherwise the crash is
// skipped and counted (`crashesSkipped`), and the fault recorded as skipped.
// Every other fault (pauses, partitions, delays, broken connections, clock
// jumps, slow disks, controlled shutdowns) loses no synced or replicated
// data, and any overlap of those is fair game.

import type { Rng } from '../../../src/util/rng.js';
import type { AdminOp, FaultOp, HistoryEntry, Outcome } from '../../chaos/history.js';
import type { PartitionSpec, SimCluster } from './api.js';
import type { HostId } from './kernel.js';

export type FaultKind =
  | 'crash' | 'torn-crash' | 'pause' | 'partition-minority' | 'partition-one-way' | 'partition-isolate' | 'partition-bridge'
  | 'delay' | 'break-connections' | 'clock-jump' | 'slow-disk' | 'shutdown'
  /** The active controller cut off, and a voter crashed (and restarted) while the others elect: votes must be synced before answered. */
  | 'election-crash'
  /**
   * A partition's followers cut off from the other nodes (clients still reach its leader) until its ISR shrinks
   * to the leader alone, then the leader paused at the heal, before they are back in the ISR: acks=all must
   * refuse, and the next leader must come from the ISR.
   */
  | 'followers-cut'
  /**
   * The workload's transaction coordinator (the leader of a __transaction_state partition one of its
   * transactional ids hashes to) crashed, the ISR limit permitting, and restarted at the heal; drawn only
   * when the shape lists it in extraFaults (the tx_money profile), so other profiles' plans stay the same.
   */
  | 'coordinator-crash'
  /** The same coordinator cut off from the other nodes (its clients still reach it) for the hold. */
  | 'coordinator-isolate';

export type OpKind = 'reassign' | 'add-partitions' | 'leader-transfer' | 'controller-transfer' | 'controller-remove-add';

export interface PlannedStep {
  /** Offset of the step from the start of the fault phase. */
  readonly atMs: number;
  readonly fault: FaultKind;
  /** How long the fault is held before it heals. */
  readonly holdMs: number;
  /** Nodes (by position in the shape's node list, resolved at plan time to ids). */
  readonly nodes: readonly number[];
  /** Extra numbers the fault needs (delay bounds, clock jump, disk latency). */
  readonly params: readonly number[];
  /** An operation started in the middle of the fault, if any. */
  readonly op?: { readonly kind: OpKind; readonly pick: number };
}

export interface ClusterShape {
  readonly nodeIds: readonly number[];
  readonly brokerIds: readonly number[];
  readonly controllerIds: readonly number[];
  /** Client hosts (partitions may cut clients off too). */
  readonly clientHosts: readonly HostId[];
  /** Longer than these a pause must last to bite. */
  readonly sessionTimeoutMs: number;
  readonly replicaLagTimeMaxMs: number;
  /** addController/removeController are available (lane ctrl's KIP-853). */
  readonly membershipChanges: boolean;
  /** Faults drawn beside FAULT_WEIGHTS, with their weights (absent: the plans of every seed as before). */
  readonly extraFaults?: ReadonlyArray<readonly [FaultKind, number]>;
}

const FAULT_WEIGHTS: ReadonlyArray<readonly [FaultKind, number]> = [
  ['crash', 3], ['torn-crash', 2], ['pause', 3], ['partition-minority', 3], ['partition-one-way', 2], ['partition-isolate', 2],
  ['partition-bridge', 1], ['delay', 2], ['break-connections', 2], ['clock-jump', 2], ['slow-disk', 2], ['shutdown', 2],
  ['election-crash', 3], ['followers-cut', 3],
];
const OP_WEIGHTS: ReadonlyArray<readonly [OpKind, number]> = [
  ['reassign', 3], ['add-partitions', 2], ['leader-transfer', 3], ['controller-transfer', 2], ['controller-remove-add', 1],
];
/** Chance that a step carries an operation mid-fault. */
const OP_CHANCE = 0.4;
const GAP_MS = { min: 200, max: 1_200 };

function weighted<T>(rng: Rng, table: ReadonlyArray<readonly [T, number]>): T {
  const total = table.reduce((n, [, w]) => n + w, 0);
  let x = rng.int(total);
  for (const [v, w] of table) {
    if (x < w) return v;
    x -= w;
  }
  return table[table.length - 1]![0];
}

function pickOne<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(xs.length)]!;
}

function shuffled<T>(rng: Rng, xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The schedule of one run's fault phase (pure: same rng state, same shape ⇒ same plan). */
export function planFaults(rng: Rng, shape: ClusterShape, durationMs: number): PlannedStep[] {
  const steps: PlannedStep[] = [];
  const bite = Math.max(shape.sessionTimeoutMs, shape.replicaLagTimeMaxMs);
  const ops = OP_WEIGHTS.filter(([k]) => k !== 'controller-remove-add' || shape.membershipChanges);
  const faults = shape.extraFaults ? [...FAULT_WEIGHTS, ...shape.extraFaults] : FAULT_WEIGHTS;
  for (let at = rng.range(200, 1_000); at < durationMs;) {
    const fault = weighted(rng, faults);
    // Most faults are short (a leader change takes about a session timeout); pauses outlast the timeouts.
    const holdMs = fault === 'pause' || fault === 'followers-cut' ? rng.range(Math.round(bite * 1.2), Math.round(bite * 2))
      : fault === 'break-connections' || fault === 'clock-jump' ? rng.range(100, 500)
        : rng.range(300, Math.max(500, Math.round(bite * 1.3)));
    const nodes = nodesFor(rng, fault, shape);
    const params = paramsFor(rng, fault);
    const op = rng.chance(OP_CHANCE) ? { kind: weighted(rng, ops), pick: rng.int(1 << 30) } : undefined;
    steps.push({ atMs: at, fault, holdMs, nodes, params, ...(op ? { op } : {}) });
    at += holdMs + rng.range(GAP_MS.min, GAP_MS.max);
  }
  return steps;
}

function nodesFor(rng: Rng, fault: FaultKind, shape: ClusterShape): number[] {
  const ids = shape.nodeIds;
  switch (fault) {
    case 'partition-minority': {
      const k = Math.max(1, Math.floor((ids.length - 1) / 2));
      return shuffled(rng, ids).slice(0, k);
    }
    case 'partition-one-way':
      return shuffled(rng, ids).slice(0, 2);
    case 'partition-bridge':
      return shuffled(rng, ids);
    case 'shutdown':
      return [pickOne(rng, shape.brokerIds.length > 0 ? shape.brokerIds : ids)];
    case 'election-crash':
      return shuffled(rng, shape.controllerIds);
    default:
      return [pickOne(rng, ids)];
  }
}

function paramsFor(rng: Rng, fault: FaultKind): number[] {
  switch (fault) {
    case 'delay': {
      const min = rng.range(1, 50);
      return [min, min + rng.range(10, 400)];
    }
    case 'clock-jump':
      // Wall clock either way (within minutes: retention by time stays out of it), monotonic forward.
      return [rng.range(-120_000, 120_000), rng.chance(0.5) ? rng.range(0, 30_000) : 0];
    case 'slow-disk':
      return [rng.range(5, 500)];
    case 'partition-isolate':
      return [rng.chance(0.3) ? 1 : 0]; // 1: clients are cut off from it too
    case 'election-crash':
      return [rng.range(0, 1_500)]; // crash this long after the cut
    case 'followers-cut':
      return [rng.int(1 << 30)]; // picks the workload partition
    case 'coordinator-crash':
    case 'coordinator-isolate':
      return [rng.int(1 << 30)]; // picks the coordinator among the workload's
    default:
      return [];
  }
}

export function formatStep(s: PlannedStep): string {
  const op = s.op ? ` + ${s.op.kind}` : '';
  const params = s.params.length > 0 ? ` (${s.params.join(', ')})` : '';
  return `${String(s.atMs).padStart(7)} ms ${s.fault} nodes ${s.nodes.join(',')}${params} for ${s.holdMs} ms${op}`;
}

export function formatPlan(plan: readonly PlannedStep[]): string {
  return plan.map((s) => `    ${formatStep(s)}`).join('\n');
}

// ---- playing a plan -------------------------------------------------------------

/** Partitions whose ISR must be full before a crash (the ISR limit). */
export type TrackedPartitions = () => ReadonlyArray<{ readonly topic: string; readonly partition: number }>;

/** What the runner needs from the workload: its partitions and topic growth. */
export interface FaultWorkload {
  readonly partitions: TrackedPartitions;
  /** Topics the producers write, with their partition counts (for reassignments and adds). */
  topics(): ReadonlyArray<{ readonly topic: string; readonly partitions: number }>;
  addPartitions(topic: string, count: number): void;
  /** The nodes coordinating the workload's transactions now (leaders of their __transaction_state partitions). */
  coordinators?(): readonly number[];
}

export interface FaultCounts {
  injected: number;
  crashesSkipped: number;
  ops: number;
  opsOk: number;
  byKind: Record<string, number>;
}

/** A consumer host stopped as in a long GC pause, beside the node faults (a zombie member when it wakes). */
export interface ClientPause {
  readonly atMs: number;
  readonly host: HostId;
  readonly holdMs: number;
}

/**
 * Client pauses for one run, drawn from their own generator so that the node
 * fault plan of a seed is the same with or without them: on about half of the
 * seeds, one consumer host stops early in the fault phase for longer than its
 * group session timeout, so the group moves its partitions on and the member
 * wakes up holding a batch of the old generation (what a coordinator must
 * refuse to commit: KIP-848's and Kafka's fencing of zombie members).
 */
export function planClientPauses(rng: Rng, consumerHosts: readonly HostId[], durationMs: number, sessionTimeoutMs: number): ClientPause[] {
  if (consumerHosts.length === 0 || !rng.chance(0.5)) return [];
  return [{
    atMs: rng.range(0, Math.max(1, Math.floor(durationMs / 2))),
    host: pickOne(rng, consumerHosts),
    holdMs: rng.range(Math.round(sessionTimeoutMs * 1.2), Math.round(sessionTimeoutMs * 2)),
  }];
}

export function formatClientPauses(pauses: readonly ClientPause[]): string {
  return pauses.map((p) => `    +${p.atMs} ms pause client ${p.host} for ${p.holdMs} ms`).join('\n');
}

export class FaultRunner {
  readonly counts: FaultCounts = { injected: 0, crashesSkipped: 0, ops: 0, opsOk: 0, byKind: {} };
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly cluster: SimCluster,
    private readonly shape: ClusterShape,
    private readonly workload: FaultWorkload,
    private readonly record: (e: HistoryEntry) => void,
    /** Extra tracked partitions (e.g. __consumer_offsets) for the crash guard. */
    private readonly internal: TrackedPartitions = () => [],
    private readonly onRestart: (id: number) => void = () => undefined,
  ) {}

  /** Plays `plan` (and the client pauses beside it) from now on, then heals and restarts every node; resolves when all of it is done. */
  async play(plan: readonly PlannedStep[], clientPauses: readonly ClientPause[] = []): Promise<void> {
    const start = this.cluster.now();
    for (const p of clientPauses) this.pending.add(this.pauseClient(p));
    for (const step of plan) {
      const wait = start + step.atMs - this.cluster.now();
      if (wait > 0) await this.cluster.runFor(wait);
      await this.step(step);
    }
    await this.healAll();
  }

  private async pauseClient(p: ClientPause): Promise<void> {
    const c = this.cluster;
    await new Promise<void>((resolve) => c.schedule(p.atMs, `pause ${p.host}`, resolve));
    c.pauseClient(p.host);
    this.fault('client-pause', `${p.host} for ${p.holdMs} ms`);
    await new Promise<void>((resolve) => c.schedule(p.holdMs, `resume ${p.host}`, resolve));
    c.resumeClient(p.host);
  }

  /** Heals the network, resumes and restarts every node, lets async work finish. */
  async healAll(): Promise<void> {
    const c = this.cluster;
    c.heal();
    for (const n of c.nodes()) {
      c.delay(c.hostOf(n.id), null);
      c.slowDisk(n.id, null);
      if (n.state === 'paused') c.resume(n.id);
    }
    for (const n of c.nodes()) {
      if (n.state === 'down' || n.state === 'stopped') await this.restart(n.id);
    }
    await this.settlePending();
  }

  private async settlePending(): Promise<void> {
    if (this.pending.size > 0) await this.cluster.await(Promise.all([...this.pending]).then(() => undefined), 120_000).catch(() => undefined);
  }

  private fault(fault: string, detail: string): void {
    const now = this.cluster.now();
    this.counts.byKind[fault] = (this.counts.byKind[fault] ?? 0) + 1;
    const e: FaultOp = { kind: 'fault', invokeMs: now, completeMs: now, fault, detail };
    this.record(e);
    this.cluster.note(`fault ${fault} ${detail}`);
  }

  private async step(s: PlannedStep): Promise<void> {
    const c = this.cluster;
    const heal = this.inject(s);
    if (heal === null) return;
    this.counts.injected++;
    const half = Math.round(s.holdMs / 2);
    await c.runFor(half);
    if (s.op) this.startOp(s.op.kind, s.op.pick);
    await c.runFor(s.holdMs - half);
    await heal();
    this.fault(`heal-${s.fault}`, `nodes ${s.nodes.join(',')}`);
  }

  /** Applies the fault now; returns how to heal it (null: skipped). */
  private inject(s: PlannedStep): (() => Promise<void>) | null {
    const c = this.cluster;
    const [n] = s.nodes as [number];
    const host = (id: number): HostId => c.hostOf(id);
    switch (s.fault) {
      case 'crash':
      case 'torn-crash': {
        const why = this.crashUnsafe();
        if (why !== null) {
          this.counts.crashesSkipped++;
          this.fault(`skipped-${s.fault}`, `node ${n}: ${why} (the ISR limit)`);
          return null;
        }
        c.crash(n, { tornTail: s.fault === 'torn-crash' });
        this.fault(s.fault, `node ${n}`);
        return () => this.restart(n);
      }
      case 'pause':
        if (c.node(n).state !== 'up') return null;
        c.pause(n);
        this.fault('pause', `node ${n}`);
        return async () => {
          if (c.node(n).state === 'paused') c.resume(n);
        };
      case 'partition-minority':
        return this.cut({ kind: 'full', groups: [s.nodes.map(host), this.shape.nodeIds.filter((id) => !s.nodes.includes(id)).map(host)] },
          `minority ${s.nodes.join(',')} | rest`);
      case 'partition-one-way':
        return this.cut({ kind: 'one-way', from: host(s.nodes[0]!), to: host(s.nodes[1]!) }, `${s.nodes[0]} -/-> ${s.nodes[1]}`);
      case 'partition-isolate': {
        const withClients = s.params[0] === 1;
        const spec: PartitionSpec = withClients ? { kind: 'isolate', hosts: [host(n)] }
          : { kind: 'full', groups: [[host(n)], [...this.shape.nodeIds.filter((id) => id !== n).map(host)]] };
        return this.cut(spec, `node ${n} ${withClients ? 'from everyone' : 'from the other nodes'}`);
      }
      case 'partition-bridge': {
        const [bridge, ...rest] = s.nodes;
        const half = Math.ceil(rest.length / 2);
        return this.cut({ kind: 'bridge', bridge: host(bridge!), left: rest.slice(0, half).map(host), right: rest.slice(half).map(host) },
          `bridge ${bridge} between ${rest.slice(0, half).join(',')} and ${rest.slice(half).join(',')}`);
      }
      case 'delay':
        c.delay(host(n), { min: s.params[0]!, max: s.params[1]! });
        this.fault('delay', `node ${n} ${s.params[0]}-${s.params[1]} ms`);
        return async () => c.delay(host(n), null);
      case 'break-connections':
        c.breakConnections(host(n));
        this.fault('break-connections', `node ${n}`);
        return async () => undefined;
      case 'clock-jump':
        if (c.node(n).state === 'down' || c.node(n).state === 'stopped') return null;
        c.clockJump(n, s.params[0]!, s.params[1]!);
        this.fault('clock-jump', `node ${n} wall ${s.params[0]} mono +${s.params[1]}`);
        return async () => undefined;
      case 'slow-disk':
        c.slowDisk(n, s.params[0]!);
        this.fault('slow-disk', `node ${n} fsync +${s.params[0]} ms`);
        return async () => c.slowDisk(n, null);
      case 'election-crash':
        return this.electionCrash(s);
      case 'followers-cut':
        return this.followersCut(s);
      case 'coordinator-crash':
      case 'coordinator-isolate':
        return this.coordinatorFault(s);
      case 'shutdown': {
        if (c.node(n).state !== 'up') return null;
        this.fault('shutdown', `node ${n}`);
        const done = this.track(c.shutdown(n));
        return async () => {
          await c.await(done, 60_000).catch(() => undefined);
          await this.restart(n);
        };
      }
    }
  }

  /**
   * Cuts the active controller off from the other nodes, and `params[0]` ms
   * later crashes another voter (the ISR limit permitting), restarting it at
   * the heal: a vote it gave before the crash must survive it.
   */
  private electionCrash(s: PlannedStep): (() => Promise<void>) | null {
    const c = this.cluster;
    const leader = c.controllerLeader();
    const victim = s.nodes.find((id) => id !== leader);
    if (leader === undefined || victim === undefined) return null;
    const why = this.crashUnsafe();
    if (why !== null) {
      this.counts.crashesSkipped++;
      this.fault('skipped-election-crash', `node ${victim}: ${why} (the ISR limit)`);
      return null;
    }
    const cutOff = this.cut({ kind: 'full', groups: [[c.hostOf(leader)], this.shape.nodeIds.filter((id) => id !== leader).map((id) => c.hostOf(id))] },
      `controller ${leader} from the other nodes`);
    // The crash is an event of its own; the restart waits for the heal (restart runs the world, which an event may not).
    // Cancelled at the heal: a crash drawn later than the hold would land after it, and nothing would restart the node.
    const cancelCrash = c.schedule(s.params[0]!, 'election-crash', () => {
      if (c.node(victim).state !== 'up') return;
      c.crash(victim);
      this.fault('crash', `node ${victim} (voter, during the election)`);
    });
    return async () => {
      cancelCrash();
      await cutOff();
      await this.restart(victim);
    };
  }

  /**
   * Picks a workload partition whose two followers can be cut off without
   * taking the controller quorum's majority with them, cuts each follower off
   * from every other node, and at the heal pauses the leader for a session
   * timeout and more before anyone can catch up.
   */
  private followersCut(s: PlannedStep): (() => Promise<void>) | null {
    const c = this.cluster;
    const voters = this.shape.controllerIds;
    const tps = this.workload.partitions();
    for (let k = 0; k < tps.length; k++) {
      const tp = tps[(s.params[0]! + k) % tps.length]!;
      const st = c.partitionState(tp.topic, tp.partition);
      if (!st || st.leader < 0 || c.node(st.leader).state !== 'up') continue;
      const followers = st.replicas.filter((id) => id !== st.leader);
      const votersLeft = voters.filter((v) => !followers.includes(v)).length;
      if (followers.length < 2 || votersLeft * 2 <= voters.length) continue;
      const leader = st.leader;
      const others = this.shape.nodeIds.filter((id) => !followers.includes(id));
      const cutOff = this.cut({ kind: 'full', groups: [...followers.map((f) => [c.hostOf(f)]), others.map((id) => c.hostOf(id))] },
        `followers ${followers.join(',')} of ${tp.topic}-${tp.partition} (leader ${leader})`);
      return async () => {
        await cutOff();
        if (c.node(leader).state !== 'up') return;
        c.pause(leader);
        this.fault('pause', `node ${leader} (leader of ${tp.topic}-${tp.partition}, as its followers come back)`);
        await c.runFor(Math.round(Math.max(this.shape.sessionTimeoutMs, this.shape.replicaLagTimeMaxMs) * 1.5));
        if (c.node(leader).state === 'paused') c.resume(leader);
      };
    }
    return null;
  }

  /** Crashes (the ISR limit permitting) or cuts off the coordinator `params[0]` picks among the workload's; null when none is known. */
  private coordinatorFault(s: PlannedStep): (() => Promise<void>) | null {
    const c = this.cluster;
    const coordinators = [...new Set(this.workload.coordinators?.() ?? [])].filter((id) => c.node(id).state === 'up');
    if (coordinators.length === 0) return null;
    const n = coordinators[s.params[0]! % coordinators.length]!;
    if (s.fault === 'coordinator-isolate') {
      return this.cut({ kind: 'full', groups: [[c.hostOf(n)], this.shape.nodeIds.filter((id) => id !== n).map((id) => c.hostOf(id))] },
        `transaction coordinator ${n} from the other nodes`);
    }
    const why = this.crashUnsafe();
    if (why !== null) {
      this.counts.crashesSkipped++;
      this.fault('skipped-coordinator-crash', `node ${n}: ${why} (the ISR limit)`);
      return null;
    }
    c.crash(n);
    this.fault('coordinator-crash', `node ${n}`);
    return () => this.restart(n);
  }

  private cut(spec: PartitionSpec, detail: string): () => Promise<void> {
    this.cluster.partition(spec);
    this.fault(`partition-${spec.kind}`, detail);
    return async () => this.cluster.heal();
  }

  /** Why a crash now could exceed the ISR limit (null: safe). */
  crashUnsafe(): string | null {
    const c = this.cluster;
    const down = c.nodes().filter((n) => n.state !== 'up');
    if (down.length > 0) return `node ${down.map((n) => `${n.id} ${n.state}`).join(', ')}`;
    for (const tp of [...this.workload.partitions(), ...this.internal()]) {
      const st = c.partitionState(tp.topic, tp.partition);
      if (st && st.isr.length < st.replicas.length) return `${tp.topic}-${tp.partition} ISR ${st.isr.join(',')} of ${st.replicas.join(',')}`;
    }
    return null;
  }

  private async restart(id: number): Promise<void> {
    const st = this.cluster.node(id).state;
    if (st !== 'down' && st !== 'stopped') return;
    try {
      await this.cluster.await(this.cluster.restart(id), 60_000);
      this.onRestart(id);
      this.fault('restart', `node ${id}`);
    } catch (err) {
      this.fault('restart-failed', `node ${id}: ${(err as Error).message}`);
    }
  }

  private track(p: Promise<unknown>): Promise<void> {
    const q = p.then(() => undefined, () => undefined);
    this.pending.add(q);
    void q.then(() => this.pending.delete(q));
    return q;
  }

  /** Starts an operation through the real admin path; its outcome goes to the history when it settles. */
  private startOp(kind: OpKind, pick: number): void {
    const c = this.cluster;
    const topics = this.workload.topics().filter((t) => !t.topic.endsWith('-c0'));
    if (topics.length === 0) return;
    const t = topics[pick % topics.length]!;
    const partition = (pick >>> 4) % t.partitions;
    const brokers = this.shape.brokerIds;
    let run: () => Promise<unknown>;
    let topic = t.topic;
    switch (kind) {
      case 'reassign': {
        if (brokers.length < 3) return;
        const rot = (pick >>> 8) % brokers.length;
        const replicas = [...brokers.slice(rot), ...brokers.slice(0, rot)].slice(0, 3);
        run = () => c.reassign(t.topic, partition, replicas);
        topic = `${t.topic}-${partition} -> ${replicas.join(',')}`;
        break;
      }
      case 'add-partitions': {
        const count = t.partitions + 1;
        run = async () => {
          await c.createPartitions(t.topic, count);
          this.workload.addPartitions(t.topic, count);
        };
        topic = `${t.topic} -> ${count}`;
        break;
      }
      case 'leader-transfer':
        run = () => c.transferLeadership(t.topic, partition);
        topic = `${t.topic}-${partition}`;
        break;
      case 'controller-transfer':
        run = () => c.transferControllerLeadership();
        topic = '__cluster_metadata';
        break;
      case 'controller-remove-add': {
        const ctrls = this.shape.controllerIds;
        const id = ctrls[pick % ctrls.length]!;
        if (!c.removeController || !c.addController) return;
        run = async () => {
          await c.removeController!(id);
          await c.addController!(id);
        };
        topic = `controller ${id}`;
        break;
      }
    }
    this.counts.ops++;
    const invokeMs = c.now();
    c.note(`op ${kind} ${topic}`);
    this.track(run().then(() => {
      this.counts.opsOk++;
      this.admin(kind, topic, invokeMs, { type: 'ok' });
    }, (err: unknown) => this.admin(kind, topic, invokeMs, { type: 'unknown', error: (err as Error).message ?? String(err) })));
  }

  private admin(op: string, topic: string, invokeMs: number, outcome: Outcome): void {
    const e: AdminOp = { kind: 'admin', invokeMs, completeMs: this.cluster.now(), op, topic, outcome };
    this.record(e);
    this.cluster.note(`op ${op} ${topic}: ${outcome.type}`);
  }
}
