// Controller benchmark: three `sluice server --roles controller` processes on
// loopback (real fsync), with three brokers played through the controller API
// (registration plus a heartbeat loop) for measures 1-3, so they time the
// controller alone; measure 4 uses real broker processes.
//
//   1. failover   — SIGKILL the active controller; time until a new controller
//                   has committed a CreateTopics (median/p99 over `kills`
//                   rounds; the victim restarts and catches up between rounds);
//   2. partitions — create `partitions` partitions (RF 3) in topics of
//                   `partitionsPerTopic`, `topicsPerRequest` topics per call;
//   3. fencing    — stop one broker's heartbeats; time until every partition
//                   it led has another leader (session timeout included, and
//                   reported apart);
//   4. broker kill — a second cluster of three combined nodes (real brokers
//                   hosting the logs): create `brokerKillPartitions` (RF 3),
//                   SIGKILL a broker that is not the active controller, time
//                   until every partition it led has a new leader.
// Measures and reports; asserts nothing. Bounded in count and time; every
// process is killed at the end.
//
// Run: node dist/bench/controller.bench.js [--kills N] [--partitions N] [--broker-kill-partitions N] [--json]

import { argValue, isMain } from './cli-args.js';
import { ProcessCluster, waitFor } from '../test/integration/harness.js';
import type { QuorumClient } from '../src/raft-node/quorum-client.js';
import type { ClusterDescription } from '../src/controller/service/describe.js';

export interface ControllerBenchOptions {
  readonly kills: number;
  readonly partitions: number;
  readonly partitionsPerTopic: number;
  readonly topicsPerRequest: number;
  readonly sessionTimeoutMs: number;
  readonly brokerKillPartitions: number;
  readonly waitTimeoutMs: number;
  readonly log: (line: string) => void;
}

export const DEFAULT_CONTROLLER_BENCH: ControllerBenchOptions = {
  kills: 20,
  partitions: 10_000,
  partitionsPerTopic: 100,
  topicsPerRequest: 10,
  sessionTimeoutMs: 9_000,
  brokerKillPartitions: 10_000,
  waitTimeoutMs: 120_000,
  log: (line) => process.stderr.write(`${line}\n`),
};

export interface ControllerBenchResult {
  readonly failover: { kills: number; medianMs: number; p99Ms: number; maxMs: number; samplesMs: number[] };
  readonly partitions: { count: number; seconds: number; perSecond: number };
  readonly fencing: { partitionsMoved: number; sessionTimeoutMs: number; fromLastHeartbeatMs: number; afterSessionExpiryMs: number };
  readonly brokerKill: { partitions: number; createSeconds: number; partitionsMoved: number; sessionTimeoutMs: number; fromKillMs: number; afterSessionExpiryMs: number };
  readonly targets: { failoverP99Ms: number; failoverOk: boolean };
}

export interface Broker { brokerId: number; brokerEpoch: number; beating: boolean }

function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0);
}

export async function registerBrokers(client: QuorumClient, sessionTimeoutMs: number): Promise<Broker[]> {
  await client.controller('alterConfigs', { resources: [{ resourceType: 'cluster', resourceName: '', set: { 'broker.session.timeout.ms': String(sessionTimeoutMs) } }] });
  const { clusterId } = await client.controller<ClusterDescription>('describeCluster', {});
  const brokers: Broker[] = [];
  for (const brokerId of [1, 2, 3]) {
    const r = await client.controller<{ brokerEpoch: number }>('registerBroker', { brokerId, incarnationId: `bench-${brokerId}`, clusterId, endpoints: [] });
    brokers.push({ brokerId, brokerEpoch: r.brokerEpoch, beating: true });
  }
  return brokers;
}

/** Heartbeats every beating broker every 500 ms until `stop()`; tolerant of failover. */
export function heartbeatLoop(client: QuorumClient, brokers: Broker[]): { stop: () => Promise<void>; lastBeat: Map<number, number> } {
  let stopped = false;
  const lastBeat = new Map<number, number>();
  const loop = (async () => {
    while (!stopped) {
      for (const b of brokers) {
        if (!b.beating) continue;
        try {
          const d = await client.controller<ClusterDescription>('describeCluster', {});
          await client.controller('brokerHeartbeat', { brokerId: b.brokerId, brokerEpoch: b.brokerEpoch, currentMetadataOffset: d.metadataOffset });
          lastBeat.set(b.brokerId, performance.now());
        } catch { /* controller failing over: try again next round */ }
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return { stop: async () => { stopped = true; await loop; }, lastBeat };
}

export async function measureFailover(cluster: ProcessCluster, client: QuorumClient, o: ControllerBenchOptions): Promise<ControllerBenchResult['failover']> {
  const samplesMs: number[] = [];
  for (let round = 0; round < o.kills; round++) {
    const old = await cluster.waitForLeader(client, { timeoutMs: o.waitTimeoutMs });
    const victim = cluster.node(old.id);
    const killedAt = performance.now();
    await victim.kill('SIGKILL');
    await waitFor('a new controller to commit CreateTopics', async () => {
      try {
        const r = await client.controller<{ topics: Array<{ errorCode: number }> }>('createTopics', { topics: [{ name: `failover-${round}`, numPartitions: 1, replicationFactor: 1 }] });
        return r.topics[0]?.errorCode === 0;
      } catch {
        return false;
      }
    }, { timeoutMs: o.waitTimeoutMs, intervalMs: 5 });
    samplesMs.push(performance.now() - killedAt);
    o.log(`  kill ${round + 1}/${o.kills}: controller ${old.id} → CreateTopics committed after ${Math.round(samplesMs.at(-1)!)} ms`);
    victim.start();
    await cluster.waitForLeader(client, { timeoutMs: o.waitTimeoutMs });
  }
  return { kills: samplesMs.length, medianMs: quantile(samplesMs, 0.5), p99Ms: quantile(samplesMs, 0.99), maxMs: Math.round(Math.max(...samplesMs)), samplesMs: samplesMs.map(Math.round) };
}

export async function measurePartitions(client: QuorumClient, o: ControllerBenchOptions): Promise<ControllerBenchResult['partitions']> {
  const topics = Math.ceil(o.partitions / o.partitionsPerTopic);
  const started = performance.now();
  for (let t = 0; t < topics; t += o.topicsPerRequest) {
    const batch = Array.from({ length: Math.min(o.topicsPerRequest, topics - t) }, (_, i) => ({ name: `scale-${t + i}`, numPartitions: o.partitionsPerTopic, replicationFactor: 3 }));
    const r = await client.controller<{ topics: Array<{ errorCode: number; errorMessage: string | null }> }>('createTopics', { topics: batch });
    const failed = r.topics.find((x) => x.errorCode !== 0);
    if (failed) throw new Error(`createTopics failed: ${failed.errorMessage}`);
  }
  const seconds = (performance.now() - started) / 1000;
  return { count: topics * o.partitionsPerTopic, seconds: Math.round(seconds * 100) / 100, perSecond: Math.round((topics * o.partitionsPerTopic) / seconds) };
}

async function measureFencing(client: QuorumClient, brokers: Broker[], lastBeat: Map<number, number>, o: ControllerBenchOptions): Promise<ControllerBenchResult['fencing']> {
  const victim = brokers[2]!;
  const before = await client.controller<ClusterDescription>('describeCluster', {});
  // Partitions with another replica can move; single-replica ones go offline.
  const led: string[] = before.topics.flatMap((t) => t.partitions.filter((p) => p.leader === victim.brokerId && p.replicas.length > 1).map((p) => `${t.name}/${p.partition}`));
  victim.beating = false;
  await waitFor('a heartbeat round to pass', () => true, { timeoutMs: 1000 });
  const last = lastBeat.get(victim.brokerId) ?? performance.now();
  await waitFor('every partition of the silent broker to have a new leader', async () => {
    const d = await client.controller<ClusterDescription>('describeCluster', {});
    const leaders = new Map<string, number>(d.topics.flatMap((t) => t.partitions.map((p): [string, number] => [`${t.name}/${p.partition}`, p.leader])));
    return led.every((k) => leaders.get(k) !== victim.brokerId && (leaders.get(k) ?? -1) >= 0);
  }, { timeoutMs: o.waitTimeoutMs, intervalMs: 20 });
  const fromLast = performance.now() - last;
  return { partitionsMoved: led.length, sessionTimeoutMs: o.sessionTimeoutMs, fromLastHeartbeatMs: Math.round(fromLast), afterSessionExpiryMs: Math.round(fromLast - o.sessionTimeoutMs) };
}

export async function runControllerBench(opts: Partial<ControllerBenchOptions> = {}): Promise<ControllerBenchResult> {
  const o = { ...DEFAULT_CONTROLLER_BENCH, ...opts };
  const cluster = await ProcessCluster.create({ size: 3, logLevel: 'warn' });
  try {
    cluster.startAll();
    const client = cluster.client();
    await cluster.waitForLeader(client, { timeoutMs: o.waitTimeoutMs });
    const brokers = await registerBrokers(client, o.sessionTimeoutMs);
    const beats = heartbeatLoop(client, brokers);
    try {
      await waitFor('brokers unfenced', async () => (await client.controller<ClusterDescription>('describeCluster', {})).brokers.every((b) => !b.fenced), { timeoutMs: o.waitTimeoutMs, intervalMs: 100 });
      o.log(`failover: ${o.kills} SIGKILLs of the active controller`);
      const failover = await measureFailover(cluster, client, o);
      o.log(`partitions: creating ${o.partitions} partitions, RF 3`);
      const partitions = await measurePartitions(client, o);
      o.log(`  ${partitions.count} partitions in ${partitions.seconds} s`);
      o.log('fencing: one broker stops heartbeating');
      const fencing = await measureFencing(client, brokers, beats.lastBeat, o);
      await beats.stop();
      await cluster.cleanup();
      o.log(`broker kill: ${o.brokerKillPartitions} partitions (RF 3) on three combined nodes, SIGKILL of one broker`);
      const brokerKill = await measureBrokerKill(o);
      return { failover, partitions, fencing, brokerKill, targets: { failoverP99Ms: 1500, failoverOk: failover.p99Ms <= 1500 } };
    } finally {
      await beats.stop();
    }
  } finally {
    await cluster.cleanup();
  }
}

async function measureBrokerKill(o: ControllerBenchOptions): Promise<ControllerBenchResult['brokerKill']> {
  const cluster = await ProcessCluster.create({ size: 3, brokers: true, logLevel: 'warn' });
  try {
    cluster.startAll();
    const client = cluster.client();
    await cluster.waitForLeader(client, { timeoutMs: o.waitTimeoutMs });
    await waitFor('three unfenced brokers', async () => {
      const d = await client.controller<ClusterDescription>('describeCluster', {});
      return d.brokers.length === 3 && d.brokers.every((b) => !b.fenced);
    }, { timeoutMs: o.waitTimeoutMs, intervalMs: 100 });
    await client.controller('alterConfigs', { resources: [{ resourceType: 'cluster', resourceName: '', set: { 'broker.session.timeout.ms': String(o.sessionTimeoutMs) } }] });
    const created = await measurePartitions(client, { ...o, partitions: o.brokerKillPartitions });
    o.log(`  ${created.count} partitions in ${created.seconds} s`);
    const controllerId = (await cluster.waitForLeader(client, { timeoutMs: o.waitTimeoutMs })).id;
    const victim = cluster.nodes.find((n) => n.id !== controllerId)!;
    const before = await client.controller<ClusterDescription>('describeCluster', {});
    const led = before.topics.flatMap((t) => t.partitions.filter((p) => p.leader === victim.id).map((p) => `${t.name}/${p.partition}`));
    const killedAt = performance.now();
    await victim.kill('SIGKILL');
    await waitFor('every partition of the killed broker to have a new leader', async () => {
      const d = await client.controller<ClusterDescription>('describeCluster', {});
      const leaders = new Map<string, number>(d.topics.flatMap((t) => t.partitions.map((p): [string, number] => [`${t.name}/${p.partition}`, p.leader])));
      return led.every((k) => leaders.get(k) !== victim.id && (leaders.get(k) ?? -1) >= 0);
    }, { timeoutMs: o.waitTimeoutMs, intervalMs: 20 });
    const fromKill = performance.now() - killedAt;
    return {
      partitions: created.count, createSeconds: created.seconds, partitionsMoved: led.length, sessionTimeoutMs: o.sessionTimeoutMs,
      fromKillMs: Math.round(fromKill), afterSessionExpiryMs: Math.round(fromKill - o.sessionTimeoutMs),
    };
  } catch (err) {
    o.log(cluster.dumpLogs());
    throw err;
  } finally {
    await cluster.cleanup();
  }
}


function report(r: ControllerBenchResult): string {
  return [
    'Controller (3 voters, loopback, fsync on; brokers played through the controller API)',
    `  failover (${r.failover.kills} kills)   median ${r.failover.medianMs} ms, p99 ${r.failover.p99Ms} ms, max ${r.failover.maxMs} ms`
      + ` (SIGKILL → CreateTopics committed; target p99 ≤ ${r.targets.failoverP99Ms} ms: ${r.targets.failoverOk ? 'met' : 'MISSED'})`,
    `  create partitions      ${r.partitions.count} (RF 3) in ${r.partitions.seconds} s = ${r.partitions.perSecond}/s`,
    `  fencing                ${r.fencing.partitionsMoved} leaderships moved ${r.fencing.fromLastHeartbeatMs} ms after the last heartbeat`
      + ` (session timeout ${r.fencing.sessionTimeoutMs} ms; ${r.fencing.afterSessionExpiryMs} ms after expiry)`,
    `  SIGKILLed broker        ${r.brokerKill.partitionsMoved} of its leaderships (of ${r.brokerKill.partitions} partitions, created in ${r.brokerKill.createSeconds} s on real brokers)`
      + ` moved ${r.brokerKill.fromKillMs} ms after the kill (session timeout ${r.brokerKill.sessionTimeoutMs} ms; ${r.brokerKill.afterSessionExpiryMs} ms after expiry)`,
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const kills = argValue('--kills');
  const partitions = argValue('--partitions');
  const brokerKillPartitions = argValue('--broker-kill-partitions');
  const result = await runControllerBench({
    ...(kills !== undefined ? { kills } : {}), ...(partitions !== undefined ? { partitions } : {}),
    ...(brokerKillPartitions !== undefined ? { brokerKillPartitions } : {}),
  });
  process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(result, null, 2)}\n` : `${report(result)}\n`);
}
