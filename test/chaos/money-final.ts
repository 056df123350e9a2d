// The end of a tx_money chaos round: heal, settle, and take the
// MoneyFinalState the money checker compares the history with.
//
//   1. heal the proxy, resume paused nodes, start stopped ones, every broker
//      registered and unfenced;
//   2. settle (bounded): every money and audit partition led, with a full ISR,
//      a high watermark that stopped moving, and a last stable offset equal to
//      it (no transaction left open: the coordinators finished or timed out
//      every one — one that never closes is a hanging transaction, reported
//      by name when the bound runs out);
//   3. read each partition's raw log (read_uncommitted, control batches
//      included) from its leader, decoded by money-raw.ts;
//   4. read every partition again from offset 0 to its LSO through a real
//      read_committed Consumer (what the client delivers);
//   5. the audit group's committed offsets (OffsetFetch);
//   6. stop every node and digest each replica's log bytes below the HW.

import path from 'node:path';
import { BrokerConnection, nodeWebSocketFactory, type Admin } from '../../src/index.js';
import { READ_UNCOMMITTED } from '../../src/protocol/apis/fetch.js';
import { waitFor } from '../integration/harness.js';
import type { ChaosCluster } from './cluster.js';
import { replicaDigest } from './final.js';
import type { MoneyFinalPartition, MoneyFinalState, RawMarker, RawRecord } from './money-history.js';
import { collectRaw } from './money-raw.js';

interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

interface Settled extends TopicPartition {
  readonly leader: number;
  readonly leaderUrl: string;
  readonly replicas: readonly number[];
}

const READ_BYTES_MAX = 1024 * 1024;
const READ_ROUNDS_MAX = 100_000;
const POLL_MS = 250;
/** Bound on the read_committed Consumer's read of the settled partitions. */
const COMMITTED_READ_MS = 60_000;

export async function collectMoneyFinal(
  cluster: ChaosCluster, partitions: readonly TopicPartition[], opts: { timeoutMs: number; auditGroup: string; inputTopic: string },
): Promise<MoneyFinalState> {
  cluster.proxy.heal();
  cluster.reviveAll();
  const deadline = performance.now() + opts.timeoutMs;
  await cluster.waitReady(opts.timeoutMs);
  const client = cluster.client('money-final', { requestTimeoutMs: 5_000 });
  const admin = client.admin();
  const settled = await settle(admin, partitions, Math.max(1_000, deadline - performance.now()));
  const reads: Array<{ p: Settled; hw: number; lso: number; logStart: number; raw: RawRecord[]; markers: RawMarker[] }> = [];
  for (const p of settled) reads.push({ p, ...(await readRaw(p)) });
  const committed = await readCommitted(cluster, reads.map((r) => ({ topic: r.p.topic, partition: r.p.partition, lso: r.lso })));
  const fetched = await admin.fetchOffsets({ groupId: opts.auditGroup, topics: [opts.inputTopic] });
  const auditOffsets = fetched.flatMap((t) => t.partitions.filter((p) => p.offset >= 0).map((p) => ({ topic: t.topic, partition: p.partition, offset: p.offset })));
  await cluster.shutdown();
  const out: MoneyFinalPartition[] = reads.map(({ p, hw, lso, logStart, raw, markers }) => ({
    topic: p.topic, partition: p.partition, highWatermark: hw, logStartOffset: logStart, lastStableOffset: lso, raw, markers,
    committedRead: committed.get(`${p.topic}-${p.partition}`) ?? [],
    replicaDigests: p.replicas.flatMap((nodeId) => {
      const digest = replicaDigest(path.join(cluster.node(nodeId).dataDir, `${p.topic}-${p.partition}`), logStart, hw);
      return digest === null ? [] : [{ nodeId, digest }];
    }),
  }));
  return { partitions: out, auditOffsets };
}

async function connect(url: string): Promise<BrokerConnection> {
  return BrokerConnection.connect(url, { factory: nodeWebSocketFactory, connectTimeoutMs: 3_000, requestTimeoutMs: 10_000, clientId: 'money-final' });
}

/** Every partition led, fully replicated, its HW still and its LSO at the HW. */
async function settle(admin: Admin, partitions: readonly TopicPartition[], timeoutMs: number): Promise<Settled[]> {
  const topics = [...new Set(partitions.map((p) => p.topic))];
  const lastHw = new Map<string, number>();
  let problem = '';
  try {
    return await waitFor('the money partitions to settle', async () => {
      const described = new Map((await admin.describeTopics({ topics })).map((t) => [t.name, t]));
      const brokers = new Map((await admin.describeCluster()).brokers.map((b) => [b.nodeId, b]));
      const out: Settled[] = [];
      let moved = false;
      for (const tp of partitions) {
        const name = `${tp.topic}-${tp.partition}`;
        const p = described.get(tp.topic)?.partitions[tp.partition];
        if (!p || p.leader < 0) return void (problem = `${name} has no leader`);
        if (p.isr.length !== p.replicas.length) return void (problem = `${name}: ISR ${p.isr} of ${p.replicas}`);
        const b = brokers.get(p.leader);
        if (!b?.url || b.fenced) return void (problem = `${name}: leader ${p.leader} fenced or without a URL`);
        const ends = await partitionEnds(b.url, tp);
        if (typeof ends === 'string') return void (problem = `${name}: leader ${p.leader} answers ${ends}`);
        if (ends.lso !== ends.hw) return void (problem = `${name}: LSO ${ends.lso} below HW ${ends.hw} (a transaction still open)`);
        if (lastHw.get(name) !== ends.hw) moved = true;
        lastHw.set(name, ends.hw);
        out.push({ ...tp, leader: p.leader, leaderUrl: b.url, replicas: p.replicas });
      }
      if (moved) return void (problem = 'high watermarks still moving');
      return out;
    }, { timeoutMs, intervalMs: POLL_MS });
  } catch (err) {
    throw new Error(`${(err as Error).message}: ${problem}`);
  }
}

/** HW and LSO as the leader's fetch answer states them. */
async function partitionEnds(url: string, tp: TopicPartition): Promise<{ hw: number; lso: number } | string> {
  const conn = await connect(url);
  try {
    const res = await conn.fetch({ maxWaitMs: 0, maxBytes: 1, isolationLevel: READ_UNCOMMITTED, topics: [{ name: tp.topic, partitions: [{ partition: tp.partition, fetchOffset: 0, partitionMaxBytes: 1 }] }] });
    const part = res.topics[0]?.partitions[0];
    if (!part) return 'nothing';
    if (part.errorCode !== 0) return `error ${part.errorCode} ${part.errorMessage ?? ''}`;
    return { hw: part.highWatermark, lso: part.lastStableOffset };
  } finally {
    conn.close();
  }
}

async function readRaw(p: Settled): Promise<{ hw: number; lso: number; logStart: number; raw: RawRecord[]; markers: RawMarker[] }> {
  const conn = await connect(p.leaderUrl);
  try {
    const raw: RawRecord[] = [];
    const markers: RawMarker[] = [];
    let offset = 0;
    let logStart = -1;
    for (let round = 0; round < READ_ROUNDS_MAX; round++) {
      const res = await conn.fetch({ maxWaitMs: 0, maxBytes: READ_BYTES_MAX, topics: [{ name: p.topic, partitions: [{ partition: p.partition, fetchOffset: offset }] }] });
      const part = res.topics[0]?.partitions[0];
      if (!part || part.errorCode !== 0) throw new Error(`raw read of ${p.topic}-${p.partition}@${offset} from broker ${p.leader}: error ${part?.errorCode} ${part?.errorMessage ?? ''}`);
      if (logStart < 0) {
        logStart = part.logStartOffset;
        if (logStart > offset) {
          offset = logStart;
          continue;
        }
      }
      if (offset >= part.highWatermark) return { hw: part.highWatermark, lso: part.lastStableOffset, logStart, raw, markers };
      if (part.records.byteLength === 0) throw new Error(`raw read of ${p.topic}-${p.partition}@${offset} below HW ${part.highWatermark} returned nothing`);
      const next = collectRaw(part.records, offset, part.highWatermark, raw, markers);
      if (next <= offset) throw new Error(`raw read of ${p.topic}-${p.partition}@${offset}: no whole batch`);
      offset = next;
    }
    throw new Error(`raw read of ${p.topic}-${p.partition} did not end`);
  } finally {
    conn.close();
  }
}

/** What a real read_committed Consumer delivers from offset 0 until its position reaches each partition's LSO. */
async function readCommitted(
  cluster: ChaosCluster, parts: ReadonlyArray<TopicPartition & { lso: number }>,
): Promise<Map<string, Array<{ offset: number; value: string }>>> {
  const out = new Map<string, Array<{ offset: number; value: string }>>(parts.map((p) => [`${p.topic}-${p.partition}`, []]));
  const consumer = cluster.client('money-final-reader', { requestTimeoutMs: 5_000 }).consumer({ isolationLevel: 'read_committed', maxWaitMs: 100 });
  let crash: Error | null = null;
  consumer.on('crash', (e) => { crash = (e as { error?: Error }).error ?? new Error('consumer crashed'); });
  try {
    consumer.assign(parts.map((p) => ({ topic: p.topic, partition: p.partition, offset: 0 })));
    await consumer.run({
      eachBatch: async ({ batch }) => {
        const list = out.get(`${batch.topic}-${batch.partition}`);
        for (const m of batch.messages) list?.push({ offset: m.offset, value: m.value?.toString('utf8') ?? '' });
      },
    });
    await waitFor('the read_committed read to reach every LSO', async () => {
      if (crash) throw crash;
      return parts.every((p) => p.lso === 0 || (consumer.position(p) ?? 0) >= p.lso);
    }, { timeoutMs: COMMITTED_READ_MS, intervalMs: 100 });
  } finally {
    await consumer.close().catch(() => undefined);
  }
  return out;
}
