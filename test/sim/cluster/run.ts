// One seed of the whole-cluster simulation, end to end:
//
//   world (startCluster: real nodes, simulated clock, network and disk)
//   → workload topics (real admin path) → workload running (real Producer
//   and Consumer) → faults drawn from the seed (faults.ts), the monitors
//   checking on the fly (monitors.ts) → heal → workload stopped → settle →
//   final state (final.ts) → the chaos checker (test/chaos/checker.ts) on
//   the history and the final state.
//
// A seed fails on any anomaly (the monitors' or the checker's), on a world
// that does not settle, or when the checker verified no acknowledged write
// (a run that acknowledged nothing proves nothing). formatFailure() prints
// the seed, how to replay it (`make sim SEED=<seed>` replays bit for bit:
// the same seed gives the same trace digest), the anomalies, the fault plan
// and the trace's last lines.

import { check, type CheckStats } from '../../chaos/checker.js';
import { SeededRng } from '../../../src/util/rng.js';
import type { Anomaly } from '../../chaos/history.js';
import { summarize } from '../../chaos/history-file.js';
import type { SimCluster } from './api.js';
import { DEFAULT_BROKER_CONFIG, startCluster } from './cluster.js';
import './sim-world.js';
import { collectFinal, settle } from './final.js';
import { FaultRunner, formatClientPauses, formatPlan, planClientPauses, planFaults, type ClientPause, type ClusterShape, type FaultCounts, type PlannedStep } from './faults.js';
import { Monitors, type MonitorStats } from './monitors.js';
import { CONSUMER_SESSION_TIMEOUT, SimWorkload, type SimWorkloadCounts, type SimWorkloadOptions, type TopicPartition } from './workload.js';

export interface SeedOptions {
  readonly seed: number;
  /** Names the profile in the replay command a failure prints (PROFILES). */
  readonly profile?: ProfileName;
  /** Simulated length of the fault phase (default 20 s). */
  readonly faultMs?: number;
  readonly workload?: SimWorkloadOptions;
  /** Keep every trace line (single-seed replays). */
  readonly fullTrace?: boolean;
  /** Trace lines printed on failure (default 60). */
  readonly traceTail?: number;
}

/**
 * The run shapes, by name: a seed replays bit for bit only with the options it
 * ran with, so a failure's replay command names its profile
 * (`SLUICE_SIM_PROFILE=<name> make sim SEED=<seed>`).
 */
export const PROFILES = {
  /** make sim: the default world and workload, 20 s of faults. */
  long: { faultMs: 20_000 },
  /** make test's 200 seeds: one topic of two partitions, one producer, one group of two, 4 s of faults. */
  small: { faultMs: 4_000, workload: { topics: 1, partitionsPerTopic: 2, producers: 1, groups: 1, membersPerGroup: 2 } },
  /** test/sim/mutants.test.ts: the default world and workload, 8 s of faults. */
  mutant: { faultMs: 8_000 },
} as const satisfies Record<string, Omit<SeedOptions, 'seed' | 'profile'>>;
export type ProfileName = keyof typeof PROFILES;

export interface SeedResult {
  readonly seed: number;
  readonly profile: ProfileName | undefined;
  readonly ok: boolean;
  /** Monitor anomalies first (on the fly), then the checker's. */
  readonly anomalies: readonly Anomaly[];
  /** Set when the run could not be checked (setup failed, did not settle, ...). */
  readonly error: string | null;
  readonly stats: CheckStats | null;
  readonly monitor: MonitorStats | null;
  readonly workload: SimWorkloadCounts | null;
  readonly faults: FaultCounts | null;
  readonly plan: readonly PlannedStep[];
  /** Consumer hosts paused beside the plan (faults.ts planClientPauses). */
  readonly clientPauses: readonly ClientPause[];
  readonly digest: string;
  readonly trace: readonly string[];
  readonly summary: readonly string[];
  readonly simMs: number;
  readonly wallMs: number;
  readonly events: number;
}

const WARMUP_MS = 1_000;
/** Mixed into the seed for the client-pause generator. */
const CLIENT_PAUSE_SALT = 0x5ca1ab1e;
/** The workload's consumer session timeout (workload.ts): a client pause outlasts it. */
const CONSUMER_SESSION_TIMEOUT_MS = CONSUMER_SESSION_TIMEOUT;
const RECOVERY_MS = 2_000;
const SETTLE_MS = 60_000;
const OFFSETS_TOPIC = '__consumer_offsets';
const OFFSETS_PARTITIONS_MAX = 64;

function shapeOf(cluster: SimCluster, workload: SimWorkload): ClusterShape {
  const nodes = cluster.nodes();
  return {
    nodeIds: nodes.map((n) => n.id),
    brokerIds: nodes.filter((n) => n.roles.includes('broker')).map((n) => n.id),
    controllerIds: nodes.filter((n) => n.roles.includes('controller')).map((n) => n.id),
    clientHosts: workload.clientHosts(),
    // The cluster's timeouts (cluster.ts DEFAULT_BROKER_CONFIG): pauses must outlast both.
    sessionTimeoutMs: DEFAULT_BROKER_CONFIG.brokerSessionTimeoutMs,
    replicaLagTimeMaxMs: DEFAULT_BROKER_CONFIG.replicaLagTimeMaxMs,
    membershipChanges: cluster.addController !== undefined && cluster.removeController !== undefined,
  };
}

function offsetsPartitions(cluster: SimCluster): TopicPartition[] {
  const out: TopicPartition[] = [];
  for (let p = 0; p < OFFSETS_PARTITIONS_MAX && cluster.partitionState(OFFSETS_TOPIC, p) !== undefined; p++) out.push({ topic: OFFSETS_TOPIC, partition: p });
  return out;
}

export async function runSeed(o: SeedOptions): Promise<SeedResult> {
  const wallStart = performance.now();
  let cluster: SimCluster | undefined;
  let workload: SimWorkload | undefined;
  let monitors: Monitors | undefined;
  let runner: FaultRunner | undefined;
  let plan: PlannedStep[] = [];
  let clientPauses: ClientPause[] = [];
  let error: string | null = null;
  let result: ReturnType<typeof check> | null = null;
  try {
    cluster = await startCluster({ seed: o.seed, ...(o.fullTrace ? { fullTrace: true } : {}) });
    const c = cluster;
    const rng = c.rng;
    const w = (workload = new SimWorkload(c, rng.fork(), o.workload));
    monitors = new Monitors(c, { minInsyncReplicas: DEFAULT_BROKER_CONFIG.minInsyncReplicas });
    const m = monitors;
    w.onRecord = (e) => {
      if (e.kind === 'send') m.onSend(e);
    };
    m.start();
    await w.setup();
    w.start();
    await c.runFor(WARMUP_MS);
    plan = planFaults(rng.fork(), shapeOf(c, w), o.faultMs ?? 20_000);
    runner = new FaultRunner(c, shapeOf(c, w), w, w.record, () => offsetsPartitions(c), (id) => m.nodeRestarted(id));
    // Their own generator (from the seed): a seed's node fault plan is the same with or without them.
    const consumers = w.clientHosts().filter((h) => /-c\d+$/.test(h));
    clientPauses = planClientPauses(new SeededRng((o.seed ^ CLIENT_PAUSE_SALT) >>> 0), consumers, o.faultMs ?? 20_000, CONSUMER_SESSION_TIMEOUT_MS);
    await runner.play(plan, clientPauses);
    await c.runFor(RECOVERY_MS);
    await w.stop();
    const settled = await settle(c, () => w.partitions(), SETTLE_MS);
    if (!settled.ok) throw new Error(`the healed cluster did not settle within ${SETTLE_MS} ms: ${settled.why}`);
    m.finalPass();
    m.stop();
    result = check(w.history, collectFinal(c, w.partitions(), m.controllerTerms));
  } catch (err) {
    error = (err as Error).stack ?? String(err);
  }
  const anomalies = [...(monitors?.anomalies ?? []), ...(result?.anomalies ?? [])];
  const stats = result?.stats ?? null;
  if (error === null && stats !== null && stats.acksChecked === 0) error = `the checker checked no acknowledged write (${stats.sendsOk} sends ok)`;
  const digest = cluster?.digest() ?? '';
  const trace = cluster?.trace(o.traceTail ?? 60) ?? [];
  const simMs = cluster?.now() ?? 0;
  const events = cluster?.stats().events ?? 0;
  await cluster?.stop().catch(() => undefined);
  return {
    seed: o.seed, profile: o.profile, ok: anomalies.length === 0 && error === null, anomalies, error, stats, monitor: monitors?.stats ?? null,
    workload: workload?.counts ?? null, faults: runner?.counts ?? null, plan, clientPauses, digest, trace,
    summary: result ? summarize(result) : [], simMs, wallMs: Math.round(performance.now() - wallStart), events,
  };
}

/** One line per seed. */
export function formatLine(r: SeedResult): string {
  const w = r.workload;
  return `${r.ok ? 'ok' : 'FAILED'} seed ${r.seed}: ${r.simMs} ms simulated in ${r.wallMs} ms, ${r.events} events, digest ${r.digest}; ` +
    `${w ? `${w.sendsOk}/${w.sends} sends ok, ${w.records} records read, ${w.commitsOk} commits` : 'no workload'}; ` +
    `${r.faults ? `${r.faults.injected} faults (${r.faults.crashesSkipped} crashes skipped), ${r.faults.opsOk}/${r.faults.ops} ops` : 'no faults'}; ` +
    `${r.stats?.acksChecked ?? 0} acks checked`;
}

/** The failure report: seed, replay command, anomalies, plan, the trace's tail. */
export function formatFailure(r: SeedResult): string {
  const lines = [
    formatLine(r),
    `  replay: ${r.profile && r.profile !== 'long' ? `SLUICE_SIM_PROFILE=${r.profile} ` : ''}make sim SEED=${r.seed}   (same seed => same trace digest ${r.digest})`,
    ...r.anomalies.slice(0, 20).map((a) => `  ${a.type}: ${a.detail}`),
    ...(r.error ? [`  error: ${r.error.split('\n').slice(0, 6).join('\n    ')}`] : []),
    ...r.summary.map((l) => `  ${l}`),
    '  fault plan:',
    formatPlan(r.plan),
    ...(r.clientPauses.length > 0 ? [formatClientPauses(r.clientPauses)] : []),
    `  last ${r.trace.length} trace lines:`,
    ...r.trace.map((l) => `    ${l}`),
  ];
  return lines.join('\n');
}

/** Seeds from the environment, as the Raft long run reads them: SLUICE_SIM_SEED (one), else SLUICE_SIM_SEEDS (count) from SLUICE_SIM_FIRST (default 1). */
export function seedsFromEnv(defaultCount: number, env: NodeJS.ProcessEnv = process.env): number[] {
  const one = env.SLUICE_SIM_SEED;
  if (one !== undefined && one !== '') return [Number(one) >>> 0];
  const count = env.SLUICE_SIM_SEEDS ? Number(env.SLUICE_SIM_SEEDS) : defaultCount;
  const base = env.SLUICE_SIM_FIRST ? Number(env.SLUICE_SIM_FIRST) : 1;
  return Array.from({ length: count }, (_, i) => (base + i) >>> 0);
}
