// Scale benchmark (issue 8, "scale"): `partitions` partitions (RF 3) on three
// real combined nodes (`--roles broker,controller`) on loopback.
//
//   1. create   — CreateTopics through the controller (controller.bench's
//                 measurePartitions: topics of 100, 10 per call), timed until
//                 every partition has a leader and a full ISR in the metadata
//                 and every leader answers ListOffsets for all it leads (it has
//                 made the logs and serves them);
//   2. memory   — each broker's VmRSS before the topics, once they serve, and
//                 after the restart → bytes per replica it hosts;
//   3. restart  — SIGTERM to all three at once (controlled shutdown), start
//                 them again; time until every broker is unfenced and every
//                 partition is served by a leader ("loaded after restart"), and
//                 apart from that until every ISR is full again;
//   4. failover — SIGKILL a broker that is not the active controller; time
//                 until every partition it led has another leader (the broker
//                 session timeout is included and reported apart).
// Peak RSS of every broker through the run is /proc's VmHWM, sampled every
// `rssSampleMs` and just before a process is stopped (its high-water mark dies
// with it); a restarted process counts with its predecessor under one node id.
//
// The logs are empty: "loaded" is opening 3 × `partitions` logs and electing
// their leaders, not recovering data. Measures and reports; asserts nothing.
// Every wait is bounded by `waitTimeoutMs`; every process is killed at the end.
//
// Run: node dist/bench/scale.bench.js [--partitions N] [--session-timeout-ms MS] [--json]

import { argValue, isMain } from './cli-args.js';
import { memoryKbOf } from './suite/proc-stats.js';
import { DEFAULT_CONTROLLER_BENCH, measurePartitions } from './controller.bench.js';
import { ProcessCluster, waitFor, type NodeProcess } from '../test/integration/harness.js';
import type { WebSocket } from 'ws';
import { BrokerConnection } from '../src/client/broker-connection.js';
import { nodeWebSocketFactory } from '../src/client/node-websocket.js';
import type { WebSocketFactory } from '../src/net/client-link.js';
import type { QuorumClient } from '../src/raft-node/quorum-client.js';
import type { ClusterDescription } from '../src/controller/service/describe.js';
import { LATEST_TIMESTAMP } from '../src/protocol/apis/offsets.js';

export interface ScaleBenchOptions {
  readonly partitions: number;
  readonly partitionsPerTopic: number;
  readonly topicsPerRequest: number;
  readonly sessionTimeoutMs: number;
  /** How long each node may take over its controlled shutdown before it is SIGKILLed. */
  readonly stopTimeoutMs: number;
  readonly waitTimeoutMs: number;
  readonly pollIntervalMs: number;
  readonly rssSampleMs: number;
  readonly log: (line: string) => void;
}

export const DEFAULT_SCALE_BENCH: ScaleBenchOptions = {
  partitions: 10_000,
  partitionsPerTopic: 100,
  topicsPerRequest: 10,
  sessionTimeoutMs: 9_000,
  // Closing 10,000 logs takes about a minute on this class of machine (fsyncs, checkpoints).
  stopTimeoutMs: 180_000,
  waitTimeoutMs: 300_000,
  pollIntervalMs: 200,
  rssSampleMs: 250,
  log: (line) => process.stderr.write(`${line}\n`),
};

export interface BrokerMemory {
  readonly nodeId: number;
  /** Partition replicas this broker hosts. */
  readonly replicas: number;
  readonly rssBeforeMb: number;
  readonly rssAfterCreateMb: number;
  readonly rssAfterRestartMb: number;
  /** (RSS once the partitions serve − RSS before) / replicas hosted. */
  readonly bytesPerReplicaAfterCreate: number;
  /** (RSS of the restarted process once it serves − RSS before) / replicas hosted: no creation garbage. */
  readonly bytesPerReplicaAfterRestart: number;
  /** Highest VmHWM of this node's processes through the whole run. */
  readonly peakRssMb: number;
}

export interface ScaleBenchResult {
  readonly partitions: number;
  readonly replicationFactor: 3;
  /** The first start of the empty cluster, measured as the restart is, for comparison. */
  readonly coldStart: { readonly quorumMs: number; readonly unfencedMs: number };
  readonly create: { readonly committedSeconds: number; readonly servingSeconds: number; readonly partitionsPerS: number };
  readonly memory: {
    readonly brokers: readonly BrokerMemory[];
    /** Means over the brokers. */
    readonly bytesPerReplicaAfterCreate: number;
    readonly bytesPerReplicaAfterRestart: number;
    readonly peakRssMaxMb: number;
  };
  readonly restart: {
    readonly stopMs: number;
    /** Nodes that exited 0 within stopTimeoutMs (the others were SIGKILLed). */
    readonly cleanStops: number;
    /** From starting the processes until the voters agree on a Raft leader (the active controller). */
    readonly quorumMs: number;
    /** From starting the processes until every broker is registered and unfenced. */
    readonly unfencedMs: number;
    /** From starting the processes until every broker is unfenced and every partition served by a leader. */
    readonly servingMs: number;
    /** From starting the processes until every ISR is full again; null if not within waitTimeoutMs. */
    readonly fullIsrMs: number | null;
  };
  readonly failover: {
    readonly victim: number;
    readonly partitionsMoved: number;
    readonly sessionTimeoutMs: number;
    readonly fromKillMs: number;
    /** fromKillMs − sessionTimeoutMs; may be negative: the session runs from the victim's last heartbeat, before the kill. */
    readonly afterSessionExpiryMs: number;
  };
}

// ---------------------------------------------------------------- connections

const CONNECT_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The Node WebSocket with an 'error' listener of its own: ClientLink.connect's timeout path
 * clears onerror before closing a socket that is still connecting, and ws then emits an
 * 'error' nobody listens to, which would crash this process (seen while a broker loading
 * 10,000 logs was slow to accept). The link still learns of the failure through onclose.
 */
const guardedWebSocketFactory: WebSocketFactory = (url) => {
  const ws = nodeWebSocketFactory(url);
  (ws as unknown as WebSocket).on('error', () => undefined);
  return ws;
};

/** One BrokerConnection per URL, opened on demand and opened again once lost. */
export class BrokerConns {
  private readonly open = new Map<string, Promise<BrokerConnection>>();

  get(url: string): Promise<BrokerConnection> {
    let c = this.open.get(url);
    if (!c) {
      c = BrokerConnection.connect(url, { factory: guardedWebSocketFactory, connectTimeoutMs: CONNECT_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS });
      this.open.set(url, c);
      c.then((conn) => conn.onClose(() => this.forget(url, c!)), () => this.forget(url, c!));
    }
    return c;
  }

  closeAll(): void {
    const all = [...this.open.values()];
    this.open.clear();
    for (const c of all) c.then((conn) => conn.close(), () => undefined);
  }

  private forget(url: string, c: Promise<BrokerConnection>): void {
    if (this.open.get(url) === c) this.open.delete(url);
  }
}

// ---------------------------------------------------------------- memory

const KIB = 1024;
const MIB = 1024 * 1024;

/** VmRSS and VmHWM (peak) of a process in bytes, from /proc/PID/status; undefined once it is gone. */
export function procMemory(pid: number): { rssBytes: number; hwmBytes: number } | undefined {
  const m = memoryKbOf(pid);
  return m ? { rssBytes: m.rssKb * KIB, hwmBytes: m.hwmKb * KIB } : undefined;
}

/** Peak RSS per node id over every process that node has had, sampled on a timer and on demand. */
export class PeakRss {
  private readonly peaks = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly nodes: readonly NodeProcess[], sampleMs: number) {
    this.timer = setInterval(() => this.sample(), sampleMs);
    this.timer.unref();
  }

  /** Call before stopping or killing a node: its high-water mark is lost with the process. */
  sample(): void {
    for (const n of this.nodes) {
      const m = n.running && n.pid !== undefined ? procMemory(n.pid) : undefined;
      if (m) this.peaks.set(n.id, Math.max(this.peaks.get(n.id) ?? 0, m.hwmBytes));
    }
  }

  peakBytes(nodeId: number): number {
    return this.peaks.get(nodeId) ?? 0;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

function rssOf(nodes: readonly NodeProcess[]): Map<number, number> {
  return new Map(nodes.map((n) => [n.id, (n.pid !== undefined ? procMemory(n.pid)?.rssBytes : undefined) ?? 0]));
}

// ---------------------------------------------------------------- cluster probes

function describe(client: QuorumClient): Promise<ClusterDescription> {
  return client.controller<ClusterDescription>('describeCluster', {});
}

/** Topic → partitions led by `brokerId` in `d`. */
function ledBy(d: ClusterDescription, brokerId: number): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const t of d.topics) {
    const mine = t.partitions.filter((p) => p.leader === brokerId).map((p) => p.partition);
    if (mine.length > 0) out.set(t.name, mine);
  }
  return out;
}

/** True when every partition in `d` has a leader and each leader answers ListOffsets for all the partitions it leads. */
async function everyLeaderServes(d: ClusterDescription, cluster: ProcessCluster, conns: BrokerConns): Promise<boolean> {
  if (d.topics.some((t) => t.partitions.some((p) => p.leader < 0))) return false;
  const leaders = new Set(d.topics.flatMap((t) => t.partitions.map((p) => p.leader)));
  for (const id of leaders) {
    const topics = [...ledBy(d, id)].map(([name, ps]) => ({ name, partitions: ps.map((partition) => ({ partition, timestamp: LATEST_TIMESTAMP })) }));
    const res = await (await conns.get(cluster.node(id).brokerUrl)).listOffsets({ topics });
    if (res.topics.some((t) => t.partitions.some((p) => p.errorCode !== 0))) return false;
  }
  return true;
}

function fullIsr(d: ClusterDescription): boolean {
  return d.topics.every((t) => t.partitions.every((p) => p.leader >= 0 && p.isr.length === p.replicas.length));
}

/**
 * Every one of `brokers` brokers registered and unfenced; with `epochsBefore`, each under a newer
 * registration than that (the image still holds the registrations of the processes before a restart).
 */
function allUnfenced(d: ClusterDescription, brokers: number, epochsBefore?: Map<number, number>): boolean {
  return d.brokers.length === brokers && d.brokers.every((b) => !b.fenced && b.brokerEpoch > (epochsBefore?.get(b.id) ?? -1));
}

// ---------------------------------------------------------------- phases

async function createAndServe(cluster: ProcessCluster, client: QuorumClient, conns: BrokerConns, o: ScaleBenchOptions): Promise<ScaleBenchResult['create'] & { count: number }> {
  const started = performance.now();
  const created = await measurePartitions(client, { ...DEFAULT_CONTROLLER_BENCH, partitions: o.partitions, partitionsPerTopic: o.partitionsPerTopic, topicsPerRequest: o.topicsPerRequest });
  o.log(`  ${created.count} partitions committed in ${created.seconds} s; waiting for leaders, full ISRs and serving leaders`);
  await waitFor('every partition to have a serving leader and a full ISR', async () => {
    const d = await describe(client);
    return fullIsr(d) && await everyLeaderServes(d, cluster, conns);
  }, { timeoutMs: o.waitTimeoutMs, intervalMs: o.pollIntervalMs });
  const seconds = (performance.now() - started) / 1000;
  return { count: created.count, committedSeconds: created.seconds, servingSeconds: round2(seconds), partitionsPerS: Math.round(created.count / seconds) };
}

async function restart(cluster: ProcessCluster, client: QuorumClient, conns: BrokerConns, peaks: PeakRss, o: ScaleBenchOptions): Promise<ScaleBenchResult['restart']> {
  const epochsBefore = new Map((await describe(client)).brokers.map((b) => [b.id, b.brokerEpoch]));
  peaks.sample();
  conns.closeAll();
  const stopping = performance.now();
  const codes = await Promise.all(cluster.nodes.map((n) => n.kill('SIGTERM', o.stopTimeoutMs)));
  const stopMs = Math.round(performance.now() - stopping);
  o.log(`  stopped in ${stopMs} ms (exit codes ${codes.map(String).join(', ')}); starting again`);
  const starting = performance.now();
  const since = (): number => Math.round(performance.now() - starting);
  cluster.startAll();
  await cluster.waitForLeader(client, { timeoutMs: o.waitTimeoutMs });
  const quorumMs = since();
  await waitFor('every broker unfenced after the restart', async () => allUnfenced(await describe(client), cluster.nodes.length, epochsBefore), { timeoutMs: o.waitTimeoutMs, intervalMs: o.pollIntervalMs });
  const unfencedMs = since();
  await waitFor('every partition served by a leader after the restart', async () => {
    const d = await describe(client);
    return allUnfenced(d, cluster.nodes.length, epochsBefore) && await everyLeaderServes(d, cluster, conns);
  }, { timeoutMs: o.waitTimeoutMs, intervalMs: o.pollIntervalMs });
  const servingMs = since();
  o.log(`  quorum after ${quorumMs} ms, brokers unfenced after ${unfencedMs} ms, serving again after ${servingMs} ms; waiting for full ISRs`);
  let fullIsrMs: number | null = null;
  try {
    await waitFor('every ISR full after the restart', async () => fullIsr(await describe(client)), { timeoutMs: o.waitTimeoutMs, intervalMs: o.pollIntervalMs });
    fullIsrMs = since();
  } catch (err) {
    o.log(`  ${(err as Error).message}`);
  }
  return { stopMs, cleanStops: codes.filter((c) => c === 0).length, quorumMs, unfencedMs, servingMs, fullIsrMs };
}

async function killBroker(cluster: ProcessCluster, client: QuorumClient, peaks: PeakRss, o: ScaleBenchOptions): Promise<ScaleBenchResult['failover']> {
  const controllerId = (await cluster.waitForLeader(client, { timeoutMs: o.waitTimeoutMs })).id;
  // The broker (not the active controller) leading the most partitions: after the restart,
  // leadership may not have come back to every broker yet, and a victim leading nothing measures nothing.
  const image = await describe(client);
  const candidates = cluster.nodes.filter((n) => n.id !== controllerId).map((n) => ({
    node: n, led: [...ledBy(image, n.id)].flatMap(([name, ps]) => ps.map((p) => `${name}/${p}`)),
  }));
  const { node: victim, led } = candidates.reduce((a, b) => (b.led.length > a.led.length ? b : a));
  peaks.sample();
  const killedAt = performance.now();
  await victim.kill('SIGKILL');
  await waitFor('every partition of the killed broker to have a new leader', async () => {
    const d = await describe(client);
    const leaders = new Map<string, number>(d.topics.flatMap((t) => t.partitions.map((p): [string, number] => [`${t.name}/${p.partition}`, p.leader])));
    return led.every((k) => leaders.get(k) !== victim.id && (leaders.get(k) ?? -1) >= 0);
  }, { timeoutMs: o.waitTimeoutMs, intervalMs: 20 });
  const fromKillMs = Math.round(performance.now() - killedAt);
  return { victim: victim.id, partitionsMoved: led.length, sessionTimeoutMs: o.sessionTimeoutMs, fromKillMs, afterSessionExpiryMs: fromKillMs - o.sessionTimeoutMs };
}

function memoryOf(
  d: ClusterDescription, before: Map<number, number>, afterCreate: Map<number, number>, afterRestart: Map<number, number>, peaks: PeakRss,
): ScaleBenchResult['memory'] {
  const brokers = [...before.keys()].map((nodeId): BrokerMemory => {
    const replicas = d.topics.reduce((n, t) => n + t.partitions.filter((p) => p.replicas.includes(nodeId)).length, 0);
    const b = before.get(nodeId) ?? 0;
    const perReplica = (rss: number): number => (replicas > 0 ? Math.round((rss - b) / replicas) : 0);
    return {
      nodeId, replicas, rssBeforeMb: mb(b), rssAfterCreateMb: mb(afterCreate.get(nodeId) ?? 0), rssAfterRestartMb: mb(afterRestart.get(nodeId) ?? 0),
      bytesPerReplicaAfterCreate: perReplica(afterCreate.get(nodeId) ?? 0), bytesPerReplicaAfterRestart: perReplica(afterRestart.get(nodeId) ?? 0),
      peakRssMb: mb(peaks.peakBytes(nodeId)),
    };
  });
  const mean = (f: (m: BrokerMemory) => number): number => Math.round(brokers.reduce((s, m) => s + f(m), 0) / Math.max(1, brokers.length));
  return {
    brokers,
    bytesPerReplicaAfterCreate: mean((m) => m.bytesPerReplicaAfterCreate),
    bytesPerReplicaAfterRestart: mean((m) => m.bytesPerReplicaAfterRestart),
    peakRssMaxMb: Math.max(0, ...brokers.map((m) => m.peakRssMb)),
  };
}

const round2 = (x: number): number => Math.round(x * 100) / 100;
const mb = (bytes: number): number => Math.round((bytes / MIB) * 10) / 10;

export async function runScaleBench(opts: Partial<ScaleBenchOptions> = {}): Promise<ScaleBenchResult> {
  const o = { ...DEFAULT_SCALE_BENCH, ...opts };
  const cluster = await ProcessCluster.create({ size: 3, brokers: true, logLevel: 'warn' });
  const peaks = new PeakRss(cluster.nodes, o.rssSampleMs);
  const conns = new BrokerConns();
  try {
    const starting = performance.now();
    cluster.startAll();
    const client = cluster.client();
    await cluster.waitForLeader(client, { timeoutMs: o.waitTimeoutMs });
    const quorumMs = Math.round(performance.now() - starting);
    await waitFor('three unfenced brokers', async () => allUnfenced(await describe(client), 3), { timeoutMs: o.waitTimeoutMs, intervalMs: o.pollIntervalMs });
    const coldStart = { quorumMs, unfencedMs: Math.round(performance.now() - starting) };
    await client.controller('alterConfigs', { resources: [{ resourceType: 'cluster', resourceName: '', set: { 'broker.session.timeout.ms': String(o.sessionTimeoutMs) } }] });
    const before = rssOf(cluster.nodes);
    o.log(`scale: creating ${o.partitions} partitions (RF 3) on three combined nodes`);
    const create = await createAndServe(cluster, client, conns, o);
    const afterCreate = rssOf(cluster.nodes);
    o.log(`  serving after ${create.servingSeconds} s; restart: SIGTERM to all three`);
    const restarted = await restart(cluster, client, conns, peaks, o);
    const afterRestart = rssOf(cluster.nodes);
    const d = await describe(client);
    o.log('failover: SIGKILL of a broker that is not the active controller');
    const failover = await killBroker(cluster, client, peaks, o);
    const memory = memoryOf(d, before, afterCreate, afterRestart, peaks);
    return { partitions: create.count, replicationFactor: 3, coldStart, create: { committedSeconds: create.committedSeconds, servingSeconds: create.servingSeconds, partitionsPerS: create.partitionsPerS }, memory, restart: restarted, failover };
  } catch (err) {
    o.log(cluster.dumpLogs());
    throw err;
  } finally {
    peaks.stop();
    conns.closeAll();
    await cluster.cleanup();
  }
}

export function scaleReport(r: ScaleBenchResult): string {
  const m = r.memory;
  return [
    `Scale (${r.partitions} partitions, RF 3, three combined nodes on loopback; empty logs)`,
    `  cold start (empty)     quorum ${r.coldStart.quorumMs} ms, brokers unfenced ${r.coldStart.unfencedMs} ms after starting the processes`,
    `  create                 committed in ${r.create.committedSeconds} s; every leader serving with a full ISR after ${r.create.servingSeconds} s (${r.create.partitionsPerS} partitions/s)`,
    `  memory                 ${m.bytesPerReplicaAfterCreate} B per replica after creating, ${m.bytesPerReplicaAfterRestart} B after the restart; peak RSS ${m.peakRssMaxMb} MB`,
    ...m.brokers.map((b) => `    broker ${b.nodeId}: ${b.replicas} replicas, RSS ${b.rssBeforeMb} → ${b.rssAfterCreateMb} MB (after restart ${b.rssAfterRestartMb} MB), peak ${b.peakRssMb} MB`),
    `  restart                SIGTERM of all three: stopped in ${r.restart.stopMs} ms (${r.restart.cleanStops}/3 clean); after the start: quorum ${r.restart.quorumMs} ms,`
      + ` brokers unfenced ${r.restart.unfencedMs} ms, serving again ${r.restart.servingMs} ms,`
      + ` every ISR full after ${r.restart.fullIsrMs ?? 'TIMEOUT'} ms`,
    `  SIGKILLed broker       ${r.failover.partitionsMoved} leaderships of broker ${r.failover.victim} moved ${r.failover.fromKillMs} ms after the kill`
      + ` (session timeout ${r.failover.sessionTimeoutMs} ms; ${r.failover.afterSessionExpiryMs} ms after expiry)`,
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const partitions = argValue('--partitions');
  const sessionTimeoutMs = argValue('--session-timeout-ms');
  const result = await runScaleBench({ ...(partitions !== undefined ? { partitions } : {}), ...(sessionTimeoutMs !== undefined ? { sessionTimeoutMs } : {}) });
  process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(result, null, 2)}\n` : `${scaleReport(result)}\n`);
}
