// One seed of the tx_money profile of the whole-cluster simulation (issue
// 18): the tx_money workload (test/chaos/money-workload.ts: transfer
// transactions, zombie producer instances, the exactly-once audit stage, a
// read_committed reader) on the REAL client, living on client hosts of one
// seeded world of real nodes, under the cluster simulation's fault mix plus
// coordinator crashes and cut-offs (faults.ts extraFaults), the monitors
// checking on the fly; then heal, drain, settle, and the money checker
// (test/chaos/money-checker.ts) on the history and the final state:
//   - raw logs: the leader's bytes below the HW, decoded by money-raw.ts
//     (control batches included) — the checker's independent replay;
//   - LSO: the first offset of a transaction the replay finds open, else the
//     HW (an open one left after settling is the checker's hanging-transaction);
//   - committedRead: what a real read_committed Consumer in the world
//     delivers from offset 0 until its position reaches that LSO;
//   - the audit group's committed offsets through the real Admin;
//   - replica digests of every replica's records below the HW.
// Same seed, same options ⇒ same trace digest (`make sim-money SEED=x`).

import { createHash } from 'node:crypto';
import { Client } from '../../../src/client/index.js';
import { coordinatorPartition } from '../../../src/groups/placement.js';
import { TRANSACTION_STATE_TOPIC } from '../../../src/protocol/apis/transactions.js';
import type { Anomaly } from '../../chaos/history.js';
import { checkMoney, summarizeMoney, type MoneyCheckStats } from '../../chaos/money-checker.js';
import type { MoneyEntry, MoneyFinalPartition, MoneyFinalState, RawMarker, RawRecord } from '../../chaos/money-history.js';
import { collectRaw } from '../../chaos/money-raw.js';
import { MoneyWorkload, type MoneyCounts, type MoneyEnv, type MoneyOptions } from '../../chaos/money-workload.js';
import type { ClientEnv, SimCluster } from './api.js';
import { DEFAULT_BROKER_CONFIG, startCluster } from './cluster.js';
import './sim-world.js';
import { settle } from './final.js';
import { FaultRunner, formatPlan, planFaults, type ClusterShape, type FaultCounts, type FaultKind, type PlannedStep } from './faults.js';
import { Monitors } from './monitors.js';
import { replicasOf, type ReplicaView } from './probe.js';

export interface MoneySeedOptions {
  readonly seed: number;
  /** Names the profile in the replay command (MONEY_PROFILES). */
  readonly profile?: MoneyProfileName;
  readonly faultMs?: number;
  readonly workload?: MoneyOptions;
  readonly fullTrace?: boolean;
  readonly traceTail?: number;
}

/** make test's seeds are small; make sim-money's longer. A seed replays bit for bit only with the options it ran with. */
export const MONEY_PROFILES = {
  long: { faultMs: 20_000 },
  small: { faultMs: 6_000, workload: { transferers: 2, processors: 1, partitions: 2, accounts: 4 } },
} as const satisfies Record<string, Omit<MoneySeedOptions, 'seed' | 'profile'>>;
export type MoneyProfileName = keyof typeof MONEY_PROFILES;

/**
 * A small __transaction_state (the world has 4 nodes), and timed-out
 * transactions looked for every second, so an abandoned one ends within the
 * settle bound.
 */
export const MONEY_CLUSTER_CONFIGS: Readonly<Record<string, string>> = {
  'transaction.state.log.num.partitions': '4',
  'transaction.abort.timed.out.transaction.cleanup.interval.ms': '1000',
};

/** Beside the cluster simulation's own faults: the transaction coordinator crashed or cut off. */
export const MONEY_EXTRA_FAULTS: ReadonlyArray<readonly [FaultKind, number]> = [['coordinator-crash', 8], ['coordinator-isolate', 3]];

export interface MoneySeedResult {
  readonly seed: number;
  readonly profile: MoneyProfileName | undefined;
  readonly ok: boolean;
  readonly anomalies: readonly Anomaly[];
  readonly error: string | null;
  readonly stats: MoneyCheckStats | null;
  readonly workload: MoneyCounts | null;
  readonly faults: FaultCounts | null;
  readonly plan: readonly PlannedStep[];
  readonly digest: string;
  readonly trace: readonly string[];
  readonly summary: readonly string[];
  readonly simMs: number;
  readonly wallMs: number;
  /** The run's history (for a failure's post-mortem). */
  readonly history: readonly MoneyEntry[];
}

const WARMUP_MS = 1_000;
const RECOVERY_MS = 3_000;
const DRAIN_MS = 30_000;
const SETTLE_MS = 60_000;
const COMMITTED_READ_MS = 60_000;
const INTERNAL_PARTITIONS_MAX = 64;
const READ_BYTES_MAX = 256 * 1024;
const TOPIC_CONFIGS = { 'min.insync.replicas': '2' } as const;

function clientOptions(env: ClientEnv, clientId: string): ConstructorParameters<typeof Client>[0] {
  return {
    bootstrap: env.bootstrap, clientId, webSocketFactory: env.webSocketFactory, scheduler: env.scheduler, clock: env.clock, rng: env.rng.fork(),
    requestTimeoutMs: 5_000, connectTimeoutMs: 2_000, metadataMaxAgeMs: 2_000, retry: { retries: 5, initialRetryTimeMs: 50, maxRetryTimeMs: 500 },
  } as ConstructorParameters<typeof Client>[0];
}

function internalPartitions(c: SimCluster, topic: string): Array<{ topic: string; partition: number }> {
  const out: Array<{ topic: string; partition: number }> = [];
  for (let p = 0; p < INTERNAL_PARTITIONS_MAX && c.partitionState(topic, p) !== undefined; p++) out.push({ topic, partition: p });
  return out;
}

export async function runMoneySeed(o: MoneySeedOptions): Promise<MoneySeedResult> {
  const wallStart = performance.now();
  const history: MoneyEntry[] = [];
  let cluster: SimCluster | undefined;
  let workload: MoneyWorkload | undefined;
  let monitors: Monitors | undefined;
  let runner: FaultRunner | undefined;
  let plan: PlannedStep[] = [];
  let error: string | null = null;
  let result: ReturnType<typeof checkMoney> | null = null;
  try {
    cluster = await startCluster({ seed: o.seed, brokerConfig: { extraClusterConfigs: MONEY_CLUSTER_CONFIGS }, ...(o.fullTrace ? { fullTrace: true } : {}) });
    const c = cluster;
    const env: MoneyEnv = {
      now: () => c.now(),
      record: (e) => { history.push(e); },
      client: (host, clientId) => new Client(clientOptions(c.client(host), clientId)),
      sleep: (host, ms) => new Promise<void>((resolve) => { c.client(host).scheduler.schedule(Math.max(0, ms), resolve); }),
      monotonicMs: (host) => c.client(host).clock.monotonicMs(),
      note: (line) => c.note(line),
    };
    const w = (workload = new MoneyWorkload(env, c.rng.fork(), { prefix: 'sm', transactionTimeoutMs: 10_000, maxBlockMs: 8_000, deliveryTimeoutMs: 8_000, ...o.workload }));
    for (const t of w.topics()) await c.await(c.createTopic(t.topic, t.partitions, 3, { ...TOPIC_CONFIGS }), 60_000);
    const full = (): boolean => w.partitions().every((tp) => {
      const st = c.partitionState(tp.topic, tp.partition);
      return st !== undefined && st.leader >= 0 && st.isr.length === 3;
    });
    if (!(await c.runUntil(full, 60_000))) throw new Error('money topics did not get full ISRs within 60 s');
    monitors = new Monitors(c, { minInsyncReplicas: DEFAULT_BROKER_CONFIG.minInsyncReplicas });
    const m = monitors;
    m.start();
    w.start();
    await c.runFor(WARMUP_MS);
    const nodes = c.nodes();
    const shape: ClusterShape = {
      nodeIds: nodes.map((n) => n.id),
      brokerIds: nodes.filter((n) => n.roles.includes('broker')).map((n) => n.id),
      controllerIds: nodes.filter((n) => n.roles.includes('controller')).map((n) => n.id),
      clientHosts: w.clientHosts(),
      sessionTimeoutMs: DEFAULT_BROKER_CONFIG.brokerSessionTimeoutMs,
      replicaLagTimeMaxMs: DEFAULT_BROKER_CONFIG.replicaLagTimeMaxMs,
      membershipChanges: c.addController !== undefined && c.removeController !== undefined,
      extraFaults: MONEY_EXTRA_FAULTS,
    };
    plan = planFaults(c.rng.fork(), shape, o.faultMs ?? 20_000);
    const coordinators = (): number[] => {
      const n = internalPartitions(c, TRANSACTION_STATE_TOPIC).length;
      if (n === 0) return [];
      return w.transactionalIds().map((id) => c.partitionState(TRANSACTION_STATE_TOPIC, coordinatorPartition(id, n))?.leader ?? -1).filter((l) => l >= 0);
    };
    runner = new FaultRunner(c, shape, {
      partitions: () => w.partitions(), topics: () => w.topics(), addPartitions: () => undefined, coordinators,
    }, (e) => {
      if (e.kind === 'fault') history.push(e);
    }, () => [...internalPartitions(c, '__consumer_offsets'), ...internalPartitions(c, TRANSACTION_STATE_TOPIC)], (id) => m.nodeRestarted(id));
    await runner.play(plan);
    await c.runFor(RECOVERY_MS);
    await c.await(w.stopTransfers(), 60_000);
    await c.runUntil(() => w.caughtUp(), DRAIN_MS);
    await c.await(w.stop(), 60_000);
    const settled = await settle(c, () => w.partitions(), SETTLE_MS);
    if (!settled.ok) throw new Error(`the healed cluster did not settle within ${SETTLE_MS} ms: ${settled.why}`);
    // The coordinators finish (or time out) every transaction: wait for the raw logs to close them all.
    await c.runUntil(() => w.partitions().every((tp) => openAt(c, tp) === null), SETTLE_MS);
    m.finalPass();
    m.stop();
    const final = await collectMoneyFinal(c, w);
    result = checkMoney(history, final);
  } catch (err) {
    error = (err as Error).stack ?? String(err);
  }
  const anomalies = [...(monitors?.anomalies ?? []), ...(result?.anomalies ?? [])];
  const stats = result?.stats ?? null;
  if (error === null && stats !== null && stats.commitsVerified === 0) error = 'the checker verified no committed transaction';
  const digest = cluster?.digest() ?? '';
  const trace = cluster?.trace(o.traceTail ?? 60) ?? [];
  const simMs = cluster?.now() ?? 0;
  await cluster?.stop().catch(() => undefined);
  return {
    seed: o.seed, profile: o.profile, ok: anomalies.length === 0 && error === null, anomalies, error, stats, workload: workload?.counts ?? null,
    faults: runner?.counts ?? null, plan, digest, trace, summary: result ? summarizeMoney(result) : [], simMs, wallMs: Math.round(performance.now() - wallStart), history,
  };
}

/** The leader's view of `tp` (undefined while it has none that is up). */
function leaderView(c: SimCluster, tp: { topic: string; partition: number }): { leader: number; view: ReplicaView } | undefined {
  const st = c.partitionState(tp.topic, tp.partition);
  if (!st || st.leader < 0) return undefined;
  const n = c.node(st.leader);
  if (n.state !== 'up') return undefined;
  const view = replicasOf(n.server).find((r) => r.topic === tp.topic && r.partition === tp.partition);
  return view ? { leader: st.leader, view } : undefined;
}

function readRaw(view: ReplicaView): { raw: RawRecord[]; markers: RawMarker[] } {
  const raw: RawRecord[] = [];
  const markers: RawMarker[] = [];
  const hw = view.highWatermark;
  for (let offset = view.logStartOffset; offset < hw;) {
    const r = view.readBatches!(offset, READ_BYTES_MAX);
    if (r.records.byteLength === 0) break;
    const next = collectRaw(r.records, offset, hw, raw, markers);
    if (next <= offset) break;
    offset = next;
  }
  return { raw, markers };
}

/** The first offset of a transaction the raw log holds open below the HW (null: none). */
function openAt(c: SimCluster, tp: { topic: string; partition: number }): number | null {
  const lv = leaderView(c, tp);
  if (!lv) return null;
  const { raw, markers } = readRaw(lv.view);
  const open = new Map<string, number>();
  const items = [...raw.map((r) => ({ offset: r.offset, pid: r.producerId, data: r.transactional })), ...markers.map((m) => ({ offset: m.offset, pid: m.producerId, data: false }))]
    .sort((a, b) => a.offset - b.offset);
  const markerAt = new Set(markers.map((m) => m.offset));
  for (const it of items) {
    if (markerAt.has(it.offset)) open.delete(it.pid);
    else if (it.data && !open.has(it.pid)) open.set(it.pid, it.offset);
  }
  return open.size === 0 ? null : Math.min(...open.values());
}

async function collectMoneyFinal(c: SimCluster, w: MoneyWorkload): Promise<MoneyFinalState> {
  const parts: Array<MoneyFinalPartition & { readonly lso: number }> = [];
  for (const tp of w.partitions()) {
    const lv = leaderView(c, tp);
    if (!lv) throw new Error(`${tp.topic}-${tp.partition}: no leader up to read from`);
    const { raw, markers } = readRaw(lv.view);
    const hw = lv.view.highWatermark;
    const lso = openAt(c, tp) ?? hw;
    const st = c.partitionState(tp.topic, tp.partition)!;
    const replicaDigests = st.replicas.flatMap((id) => {
      const n = c.node(id);
      const v = n.state === 'up' ? replicasOf(n.server).find((r) => r.topic === tp.topic && r.partition === tp.partition) : undefined;
      return v ? [{ nodeId: id, digest: digestOf(v, lv.view.logStartOffset, hw) }] : [];
    });
    parts.push({
      topic: tp.topic, partition: tp.partition, highWatermark: hw, logStartOffset: lv.view.logStartOffset, lastStableOffset: lso, lso,
      raw, markers, committedRead: [], replicaDigests,
    });
  }
  const env = c.client('money-final');
  const client = new Client(clientOptions(env, 'money-final'));
  try {
    const committed = await readCommitted(c, client, parts);
    const fetched = await c.await(client.admin().fetchOffsets({ groupId: w.auditGroup, topics: [w.topic] }), 60_000);
    const auditOffsets = fetched.flatMap((t) => t.partitions.filter((p) => p.offset >= 0).map((p) => ({ topic: t.topic, partition: p.partition, offset: p.offset })));
    return {
      partitions: parts.map(({ lso: _lso, ...p }) => ({ ...p, committedRead: committed.get(`${p.topic}-${p.partition}`) ?? [] })),
      auditOffsets,
    };
  } finally {
    client.close();
  }
}

async function readCommitted(
  c: SimCluster, client: Client, parts: ReadonlyArray<{ topic: string; partition: number; lso: number }>,
): Promise<Map<string, Array<{ offset: number; value: string }>>> {
  const out = new Map<string, Array<{ offset: number; value: string }>>(parts.map((p) => [`${p.topic}-${p.partition}`, []]));
  const consumer = client.consumer({ isolationLevel: 'read_committed', maxWaitMs: 100 });
  let crashed: string | null = null;
  consumer.on('crash', (e) => { crashed = String((e as { error?: Error }).error?.message ?? 'crash'); });
  try {
    consumer.assign(parts.map((p) => ({ topic: p.topic, partition: p.partition, offset: 0 })));
    await c.await(consumer.run({
      eachBatch: async ({ batch }) => {
        const list = out.get(`${batch.topic}-${batch.partition}`);
        for (const m of batch.messages) list?.push({ offset: m.offset, value: m.value?.toString('utf8') ?? '' });
      },
    }), 10_000);
    const done = (): boolean => crashed !== null || parts.every((p) => p.lso === 0 || (consumer.position(p) ?? 0) >= p.lso);
    if (!(await c.runUntil(done, COMMITTED_READ_MS)) || crashed !== null) {
      const behind = parts.filter((p) => (consumer.position(p) ?? 0) < p.lso).map((p) => `${p.topic}-${p.partition} at ${consumer.position(p)} of LSO ${p.lso}`);
      throw new Error(`the final read_committed read did not reach every LSO within ${COMMITTED_READ_MS} ms (${crashed ?? behind.join(', ')})`);
    }
  } finally {
    await c.await(consumer.close().catch(() => undefined), 20_000).catch(() => undefined);
  }
  return out;
}

function digestOf(v: ReplicaView, from: number, hw: number): string {
  const h = createHash('sha256');
  h.update(`from ${from}\n`);
  for (let offset = Math.max(from, v.logStartOffset); offset < Math.min(hw, v.logEndOffset);) {
    const r = v.readBatches!(offset, READ_BYTES_MAX);
    if (r.records.byteLength === 0) break;
    // Whole batches only below the HW: the bytes of a batch straddling it are cut at the batch.
    const raw: RawRecord[] = [];
    const markers: RawMarker[] = [];
    const next = collectRaw(r.records, offset, hw, raw, markers);
    for (const x of raw) h.update(`${x.offset}/${x.producerId}/${x.producerEpoch}/${x.transactional ? 't' : '-'}=${x.value}\n`);
    for (const x of markers) h.update(`${x.offset}/${x.producerId}/${x.producerEpoch}/${x.type}\n`);
    if (next <= offset) break;
    offset = next;
  }
  h.update(`to ${hw}\n`);
  return h.digest('hex').slice(0, 16);
}

export function formatMoneyLine(r: MoneySeedResult): string {
  const w = r.workload;
  return `${r.ok ? 'ok' : 'FAILED'} money seed ${r.seed}: ${r.simMs} ms simulated in ${r.wallMs} ms, digest ${r.digest}; ` +
    `${w ? `${w.committed}/${w.transfers} transfers committed, ${w.zombieAttempts} zombie attempts, ${w.processed} records copied` : 'no workload'}; ` +
    `${r.faults ? `${r.faults.injected} faults (${r.faults.crashesSkipped} crashes skipped, ${r.faults.byKind['coordinator-crash'] ?? 0} coordinator crashes)` : 'no faults'}`;
}

export function formatMoneyFailure(r: MoneySeedResult): string {
  return [
    formatMoneyLine(r),
    `  replay: ${r.profile && r.profile !== 'long' ? `SLUICE_SIM_PROFILE=${r.profile} ` : ''}make sim-money SEED=${r.seed}   (same seed => same trace digest ${r.digest})`,
    ...r.anomalies.slice(0, 20).map((a) => `  ${a.type}: ${a.detail}`),
    ...(r.error ? [`  error: ${r.error.split('\n').slice(0, 6).join('\n    ')}`] : []),
    ...r.summary.map((l) => `  ${l}`),
    '  fault plan:',
    formatPlan(r.plan),
    `  last ${r.trace.length} trace lines:`,
    ...r.trace.map((l) => `    ${l}`),
  ].join('\n');
}
