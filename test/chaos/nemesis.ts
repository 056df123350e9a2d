// The nemesis of a chaos run: a fault schedule planned from a seed, then
// carried out against the cluster while the workload runs.
//
// The plan (planSchedule) is a pure function of (seed, seconds, profile) and
// printable (formatSchedule), so a failing run names its faults. Each step
// carries a random `pick`; which node or partition it hits ("the active
// controller", "a leader of some partition") is resolved when the step runs,
// from the cluster's state then, with `pick` choosing among candidates —
// what was actually done goes into the history as FaultOps.
//
// Two lanes:
//   main     process and network faults, one at a time: inject, hold for the
//            step's duration, heal, pause for the gap. Never more than a
//            minority of voters is down, paused or cut off at once.
//   overlay  admin changes during faults (a reassignment, a partition-count
//            increase), fired at their time whatever the main lane is doing.
//
// A torn tail (SIGKILL, cut bytes off the newest segment of a workload
// partition, restart) is done only once every workload partition has a full
// ISR: a replica that lost acknowledged bytes is then never the only one
// holding them (the other ISR members do, and its restart fences it out of
// the ISR until it has caught up). Without that precondition the node is
// restarted without the cut, and the history says so.

import { Client, type Admin } from '../../src/index.js';
import { SeededRng, type Rng } from '../../src/util/rng.js';
import { waitFor } from '../integration/harness.js';
import type { ChaosCluster, Profile } from './cluster.js';
import type { FaultOp, HistoryEntry, Outcome } from './history.js';
import { outcomeOf } from './workload-producer.js';
import type { CutMode } from './proxy.js';
import { REPLICATION_FACTOR, type TopicPartition, type Workload } from './workload.js';

export type FaultKind = 'kill' | 'pause' | 'partition' | 'slow-network' | 'torn-tail' | 'rolling-restart' | 'reassign' | 'add-partitions';
export type NodeTarget = 'controller' | 'leader' | 'follower' | 'any' | 'minority';
export type PartitionShape = 'majority-minority' | 'isolate-controller' | 'isolate-leader' | 'one-way' | 'deaf-node' | 'bridge';

export interface PlannedFault {
  /** Planned start, ms after the nemesis started (the main lane may run late). */
  readonly atMs: number;
  readonly kind: FaultKind;
  readonly lane: 'main' | 'overlay';
  /** How long the fault is held before it is healed (kill: how long the nodes stay down). */
  readonly durationMs: number;
  readonly target?: NodeTarget;
  readonly shape?: PartitionShape;
  readonly mode?: CutMode;
  /** Chooses among the candidates found when the step runs. */
  readonly pick: number;
}

const WEIGHTS: ReadonlyArray<readonly [FaultKind, number]> = [
  ['kill', 3], ['pause', 2], ['partition', 5], ['slow-network', 1], ['torn-tail', 1], ['rolling-restart', 1],
];
const TARGETS: readonly NodeTarget[] = ['controller', 'leader', 'follower', 'any', 'minority'];
const SHAPES: readonly PartitionShape[] = ['majority-minority', 'isolate-controller', 'isolate-leader', 'one-way', 'deaf-node', 'bridge'];
/** Chance that a main-lane step carries an admin change during it. */
const OVERLAY_CHANCE = 0.35;
const FIRST_FAULT_MS = 2_000;
const GAP_MS = { min: 2_000, max: 6_000 };
const DURATION_MS: Record<FaultKind, { min: number; max: number }> = {
  'kill': { min: 2_000, max: 10_000 },
  // Longer than the broker session (6 s): the paused node is fenced while it sleeps.
  'pause': { min: 8_000, max: 14_000 },
  'partition': { min: 5_000, max: 18_000 },
  'slow-network': { min: 5_000, max: 12_000 },
  'torn-tail': { min: 1_000, max: 5_000 },
  'rolling-restart': { min: 0, max: 0 },
  'reassign': { min: 0, max: 0 },
  'add-partitions': { min: 0, max: 0 },
};
/** A rolling restart waits this long per node for it to be back (unfenced, full ISRs). */
const ROLLING_WAIT_MS = 30_000;
/** How long a torn tail waits for full ISRs before giving up the cut. */
const TORN_PRECONDITION_MS = 20_000;
const LOOKUP_TIMEOUT_MS = 3_000;
const ADMIN_TIMEOUT_MS = 10_000;
const PARTITIONS_MAX = 6;

/** The fault schedule of a seed: pure and deterministic. */
export function planSchedule(seed: number, seconds: number, profile: Profile): PlannedFault[] {
  const rng = new SeededRng(seed ^ 0x5eed);
  const plan: PlannedFault[] = [];
  const endMs = seconds * 1000;
  for (let t = FIRST_FAULT_MS; t < endMs;) {
    let kind = weighted(rng, WEIGHTS);
    // A rolling restart takes minutes with 5 nodes: only in runs long enough to hold it.
    if (kind === 'rolling-restart' && seconds < (profile === 'with-brokers' ? 240 : 150)) kind = 'kill';
    const d = DURATION_MS[kind];
    const durationMs = rng.range(d.min, d.max);
    const step: PlannedFault = {
      atMs: t, kind, lane: 'main', durationMs, pick: rng.int(2 ** 32),
      ...(kind === 'kill' || kind === 'pause' ? { target: TARGETS[rng.int(TARGETS.length)]! } : {}),
      ...(kind === 'partition' ? { shape: SHAPES[rng.int(SHAPES.length)]!, mode: rng.chance(0.25) ? 'reset' as const : 'blackhole' as const } : {}),
    };
    plan.push(step);
    if (rng.chance(OVERLAY_CHANCE)) {
      plan.push({ atMs: t + rng.range(0, Math.max(0, durationMs - 1)), kind: rng.chance(0.5) ? 'reassign' : 'add-partitions', lane: 'overlay', durationMs: 0, pick: rng.int(2 ** 32) });
    }
    t += durationMs + rng.range(GAP_MS.min, GAP_MS.max);
  }
  return plan.sort((a, b) => a.atMs - b.atMs);
}

export function formatSchedule(plan: readonly PlannedFault[]): string {
  return plan.map((f) => {
    const what = [f.kind, f.target, f.shape, f.mode].filter((x) => x !== undefined).join(' ');
    return `  +${(f.atMs / 1000).toFixed(1).padStart(6)}s  ${f.lane === 'overlay' ? '(during) ' : ''}${what}${f.durationMs > 0 ? ` for ${(f.durationMs / 1000).toFixed(1)}s` : ''}  pick ${f.pick}`;
  }).join('\n');
}

function weighted<T>(rng: Rng, items: ReadonlyArray<readonly [T, number]>): T {
  const total = items.reduce((n, [, w]) => n + w, 0);
  let x = rng.next() * total;
  for (const [item, w] of items) {
    x -= w;
    if (x < 0) return item;
  }
  return items[items.length - 1]![0];
}

export interface NemesisDeps {
  readonly cluster: ChaosCluster;
  readonly workload: Workload;
  readonly record: (e: HistoryEntry) => void;
  readonly clock: () => number;
  /** Diagnostics, one line per step. */
  readonly log?: (line: string) => void;
}

/** A cluster view for choosing targets. */
interface View {
  readonly controller: number;
  readonly partitions: ReadonlyArray<TopicPartition & { readonly leader: number; readonly replicas: readonly number[]; readonly isr: readonly number[] }>;
}

export class Nemesis {
  /** FaultOps that injected something (heals and restarts not counted). */
  faultsInjected = 0;
  private readonly client: Client;
  /** For looking at the cluster: quick to give up, so that a fault is not held up by a slow answer. */
  private readonly admin: Admin;
  /** For the admin changes during faults: patient, so that they happen while the fault lasts. */
  private readonly changes: Admin;
  private readonly changesClient: Client;
  private readonly overlays = new Set<Promise<void>>();

  constructor(private readonly deps: NemesisDeps) {
    this.client = new Client({
      bootstrap: deps.cluster.bootstrap, clientId: 'chaos-nemesis', requestTimeoutMs: LOOKUP_TIMEOUT_MS, connectTimeoutMs: 2_000,
      metadataMaxAgeMs: 2_000, retry: { retries: 1, initialRetryTimeMs: 100, maxRetryTimeMs: 500 },
    });
    this.admin = this.client.admin();
    this.changesClient = new Client({
      bootstrap: deps.cluster.bootstrap, clientId: 'chaos-nemesis-admin', requestTimeoutMs: ADMIN_TIMEOUT_MS, connectTimeoutMs: 2_000,
      retry: { retries: 3, initialRetryTimeMs: 200, maxRetryTimeMs: 2_000 },
    });
    this.changes = this.changesClient.admin();
  }

  /** Runs the plan's steps that start within `seconds`; returns once the last one healed. */
  async run(plan: readonly PlannedFault[], seconds: number): Promise<void> {
    const start = performance.now();
    const endMs = seconds * 1000;
    const timers: NodeJS.Timeout[] = [];
    for (const step of plan.filter((s) => s.lane === 'overlay')) {
      timers.push(setTimeout(() => this.track(this.overlay(step)), step.atMs));
    }
    try {
      for (const step of plan.filter((s) => s.lane === 'main')) {
        const now = performance.now() - start;
        if (now >= endMs) break;
        if (step.atMs > now) await sleep(step.atMs - now);
        if (performance.now() - start >= endMs) break;
        this.deps.log?.(`nemesis +${((performance.now() - start) / 1000).toFixed(1)}s: ${step.kind} ${step.target ?? step.shape ?? ''}`);
        await this.main(step);
      }
    } finally {
      for (const t of timers) clearTimeout(t);
      await Promise.all(this.overlays);
      this.client.close();
      this.changesClient.close();
    }
  }

  private track(p: Promise<void>): void {
    const tracked = p.catch((err: unknown) => this.deps.log?.(`nemesis overlay failed: ${(err as Error).message}`)).finally(() => this.overlays.delete(tracked));
    this.overlays.add(tracked);
  }

  private async main(step: PlannedFault): Promise<void> {
    switch (step.kind) {
      case 'kill': return this.kill(step);
      case 'pause': return this.pause(step);
      case 'partition': return this.partition(step);
      case 'slow-network': return this.slowNetwork(step);
      case 'torn-tail': return this.tornTail(step);
      case 'rolling-restart': return this.rollingRestart(step);
      case 'reassign':
      case 'add-partitions': return this.overlay(step);
    }
  }

  private async overlay(step: PlannedFault): Promise<void> {
    if (step.kind === 'reassign') await this.reassign(step);
    else if (step.kind === 'add-partitions') await this.addPartitions(step);
  }

  // ---- recording ---------------------------------------------------------------------

  private async fault(fault: string, detail: string, act: () => Promise<void> | void, injects = true): Promise<void> {
    const invokeMs = this.deps.clock();
    await act();
    const op: FaultOp = { kind: 'fault', invokeMs, completeMs: this.deps.clock(), fault, detail };
    this.deps.record(op);
    if (injects) this.faultsInjected++;
    this.deps.log?.(`  ${fault}: ${detail}`);
  }

  // ---- targets -----------------------------------------------------------------------

  /** The cluster as the controller sees it now, or null when it does not answer in time. */
  private async view(): Promise<View | null> {
    try {
      const [cluster, topics] = await Promise.all([
        this.admin.describeCluster(),
        this.admin.describeTopics({ topics: this.deps.workload.topicNames }),
      ]);
      const partitions = topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partition, leader: p.leader, replicas: p.replicas, isr: p.isr })));
      return { controller: cluster.controllerId, partitions };
    } catch {
      return null;
    }
  }

  /** The nodes a kill or pause hits (never more than one voter). */
  private async targets(target: NodeTarget, pick: number): Promise<{ ids: number[]; why: string }> {
    const all = this.deps.cluster.nodes.map((n) => n.id);
    const view = await this.view();
    const tp = view && view.partitions.length > 0 ? view.partitions[pick % view.partitions.length]! : null;
    if (target === 'controller' && view && view.controller > 0) return { ids: [view.controller], why: 'active controller' };
    if (target === 'leader' && tp && tp.leader >= 0) return { ids: [tp.leader], why: `leader of ${tp.topic}-${tp.partition}` };
    if (target === 'follower' && tp) {
      const followers = tp.replicas.filter((r) => r !== tp.leader);
      if (followers.length > 0) return { ids: [followers[pick % followers.length]!], why: `follower of ${tp.topic}-${tp.partition}` };
    }
    if (target === 'minority') return { ids: this.minority(pick), why: 'a minority' };
    return { ids: [all[pick % all.length]!], why: view ? 'any node' : 'any node (cluster view unavailable)' };
  }

  /** A minority of the nodes holding at most one voter: 1 of 3, or 2 of 5 (a voter and a broker-only node, or both broker-only). */
  private minority(pick: number): number[] {
    const voters = this.deps.cluster.voters.map((n) => n.id);
    const brokers = this.deps.cluster.nodes.filter((n) => !n.voter).map((n) => n.id);
    if (brokers.length === 0) return [voters[pick % voters.length]!];
    const first = pick % 2 === 0 ? voters[(pick >>> 1) % voters.length]! : brokers[0]!;
    return [first, brokers[brokers.length - 1]!];
  }

  // ---- process faults ----------------------------------------------------------------

  private async kill(step: PlannedFault): Promise<void> {
    const { ids, why } = await this.targets(step.target ?? 'any', step.pick);
    await this.fault('kill', `SIGKILL nodes ${ids.join(', ')} (${why})`, () => Promise.all(ids.map((id) => this.deps.cluster.kill(id))).then(() => undefined));
    await sleep(step.durationMs);
    await this.fault('start', `nodes ${ids.join(', ')}`, () => ids.forEach((id) => this.deps.cluster.start(id)), false);
  }

  private async pause(step: PlannedFault): Promise<void> {
    const { ids, why } = await this.targets(step.target ?? 'any', step.pick);
    await this.fault('pause', `SIGSTOP nodes ${ids.join(', ')} (${why}) for ${step.durationMs} ms`, () => ids.forEach((id) => this.deps.cluster.pause(id)));
    await sleep(step.durationMs);
    await this.fault('resume', `SIGCONT nodes ${ids.join(', ')}`, () => ids.forEach((id) => this.deps.cluster.resume(id)), false);
  }

  private async tornTail(step: PlannedFault): Promise<void> {
    const c = this.deps.cluster;
    const id = c.nodes[step.pick % c.nodes.length]!.id;
    const ready = await this.waitFullIsr(TORN_PRECONDITION_MS);
    await this.fault('kill', `SIGKILL node ${id} (for a torn tail)`, () => c.kill(id));
    if (ready) {
      const torn = c.truncateTail(id, new SeededRng(step.pick), (dir) => this.deps.workload.hasTopic(dir.replace(/-\d+$/, '')));
      await this.fault('torn-tail', torn ? `node ${id}: cut ${torn.bytesCut} of ${torn.sizeBefore} bytes off ${torn.file}` : `node ${id}: no segment with data`, () => undefined);
    } else {
      await this.fault('torn-tail', `node ${id}: skipped (ISRs not full within ${TORN_PRECONDITION_MS} ms)`, () => undefined, false);
    }
    await sleep(step.durationMs);
    await this.fault('start', `node ${id}`, () => c.start(id), false);
  }

  private async rollingRestart(step: PlannedFault): Promise<void> {
    const c = this.deps.cluster;
    const ids = c.nodes.map((n) => n.id);
    const order = ids.map((_, i) => ids[(i + step.pick) % ids.length]!);
    for (const id of order) {
      await this.fault('stop', `SIGTERM node ${id} (rolling restart)`, () => c.stop(id));
      await this.fault('start', `node ${id} (rolling restart)`, () => c.start(id), false);
      await this.waitFullIsr(ROLLING_WAIT_MS);
    }
  }

  /** True once every workload partition has a leader and a full ISR (false after `timeoutMs`). */
  private async waitFullIsr(timeoutMs: number): Promise<boolean> {
    try {
      await waitFor('full ISRs', async () => {
        const v = await this.view();
        return v !== null && v.partitions.every((p) => p.leader >= 0 && p.isr.length === p.replicas.length);
      }, { timeoutMs, intervalMs: 500 });
      return true;
    } catch {
      return false;
    }
  }

  // ---- network faults ----------------------------------------------------------------

  private async partition(step: PlannedFault): Promise<void> {
    const proxy = this.deps.cluster.proxy;
    const mode = step.mode ?? 'blackhole';
    const why = await this.cut(step.shape ?? 'majority-minority', step.pick, mode);
    await this.fault('partition', `${why}: ${proxy.describe().join(', ')}`, () => undefined);
    await sleep(step.durationMs);
    await this.fault('heal', 'every link', () => proxy.heal(), false);
  }

  /** Sets the cuts of a partition shape; returns what it cut. */
  private async cut(shape: PartitionShape, pick: number, mode: CutMode): Promise<string> {
    const proxy = this.deps.cluster.proxy;
    const all = this.deps.cluster.nodes.map((n) => n.id);
    const voters = this.deps.cluster.voters.map((n) => n.id);
    const at = (xs: readonly number[], k = 0) => xs[(pick + k) % xs.length]!;
    switch (shape) {
      case 'majority-minority': {
        const minority = this.minority(pick);
        proxy.split(minority, all.filter((id) => !minority.includes(id)), mode);
        return `minority ${minority.join(', ')} split from the majority`;
      }
      case 'isolate-controller': {
        const v = await this.view();
        const id = v && v.controller > 0 ? v.controller : at(voters);
        proxy.isolate(id, { mode });
        return `active controller ${id} isolated from every node`;
      }
      case 'isolate-leader': {
        const v = await this.view();
        const tp = v && v.partitions.length > 0 ? v.partitions[pick % v.partitions.length]! : null;
        if (!tp || tp.leader < 0) {
          proxy.isolate(at(all), { mode });
          return 'no leader known: a node isolated';
        }
        for (const f of tp.replicas) if (f !== tp.leader) proxy.cutBoth(tp.leader, f, mode);
        return `leader ${tp.leader} of ${tp.topic}-${tp.partition} cut from its followers (not from clients)`;
      }
      case 'one-way': {
        const a = at(all);
        const b = at(all.filter((id) => id !== a), 1);
        proxy.oneWay(a, b, mode);
        return `one way ${a} -> ${b}`;
      }
      case 'deaf-node': {
        const id = at(all);
        for (const other of all) if (other !== id) proxy.oneWay(other, id, mode);
        return `node ${id} hears no node (its own messages get out)`;
      }
      case 'bridge': {
        const bridge = at(voters);
        const others = all.filter((id) => id !== bridge);
        const half = others.filter((_, i) => i % 2 === 0);
        proxy.split(half, others.filter((id) => !half.includes(id)), mode);
        return `bridge: ${half.join(', ')} | ${bridge} | ${others.filter((id) => !half.includes(id)).join(', ')}`;
      }
    }
  }

  private async slowNetwork(step: PlannedFault): Promise<void> {
    const proxy = this.deps.cluster.proxy;
    const rng = new SeededRng(step.pick);
    const all = this.deps.cluster.nodes.map((n) => n.id);
    const links: string[] = [];
    for (const a of all) {
      for (const b of all) {
        if (a === b || !rng.chance(0.5)) continue;
        const ms = rng.range(20, 400);
        proxy.delay(a, b, ms);
        links.push(`${a}->${b} ${ms}ms`);
      }
    }
    await this.fault('slow-network', links.join(', ') || 'no link', () => undefined);
    await sleep(step.durationMs);
    await this.fault('heal', 'every link', () => proxy.heal(), false);
  }

  // ---- admin changes during faults ---------------------------------------------------

  private async reassign(step: PlannedFault): Promise<void> {
    const v = await this.view();
    if (!v || v.partitions.length === 0) {
      await this.fault('reassign', 'skipped: no cluster view', () => undefined, false);
      return;
    }
    const tp = v.partitions[step.pick % v.partitions.length]!;
    const all = this.deps.cluster.nodes.map((n) => n.id);
    const rng = new SeededRng(step.pick);
    const target = all.length > REPLICATION_FACTOR
      ? shuffle(rng, all).slice(0, REPLICATION_FACTOR)
      : tp.replicas.map((_, i) => tp.replicas[(i + 1) % tp.replicas.length]!); // same brokers, another preferred leader
    await this.adminChange('reassign', tp.topic, `${tp.topic}-${tp.partition}: ${tp.replicas.join(',')} -> ${target.join(',')}`,
      () => this.changes.alterPartitionReassignments({ partitions: [{ topic: tp.topic, partition: tp.partition, replicas: target }] }));
  }

  private async addPartitions(step: PlannedFault): Promise<void> {
    // Not the compacted topic: the fault plans of the fixed seeds stay what they were before it existed.
    const topics = this.deps.workload.topicNames.filter((t) => t !== this.deps.workload.compactedTopic);
    const topic = topics[step.pick % topics.length]!;
    let current: number;
    try {
      current = (await this.admin.describeTopics({ topics: [topic] }))[0]!.partitions.length;
    } catch {
      current = this.deps.workload.partitionCount(topic);
    }
    if (current >= PARTITIONS_MAX) {
      await this.fault('add-partitions', `skipped: ${topic} has ${current} partitions`, () => undefined, false);
      return;
    }
    const ok = await this.adminChange('create-partitions', topic, `${topic}: ${current} -> ${current + 1} partitions`,
      () => this.changes.createPartitions({ topicPartitions: [{ topic, count: current + 1 }] }));
    if (ok) this.deps.workload.addPartitions(topic, current + 1);
  }

  /** An admin change recorded both as an AdminOp (the checker's) and a FaultOp (the report's). */
  private async adminChange(op: string, topic: string, detail: string, run: () => Promise<unknown>): Promise<boolean> {
    const invokeMs = this.deps.clock();
    let outcome: Outcome;
    try {
      await run();
      outcome = { type: 'ok' };
    } catch (err) {
      outcome = outcomeOf(err);
    }
    this.deps.record({ kind: 'admin', invokeMs, completeMs: this.deps.clock(), op, topic, outcome });
    await this.fault(op, `${detail}: ${outcome.type === 'ok' ? 'ok' : outcome.error}`, () => undefined, outcome.type === 'ok');
    return outcome.type === 'ok';
  }
}

function shuffle<T>(rng: Rng, xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
