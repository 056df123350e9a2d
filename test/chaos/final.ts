// The end of a chaos run: heal everything, let the cluster settle, and take
// the FinalState the checker compares the history with.
//
//   1. heal the proxy, resume paused nodes, start stopped ones;
//   2. settle (bounded): every broker registered and unfenced; every workload
//      partition with a leader, a full ISR of RF replicas, no reassignment in
//      flight, a leader that serves it, and a high watermark that stopped
//      moving;
//   3. read every workload partition from its log start to the high
//      watermark from its leader, as a consumer would (values, offsets, and
//      the leader epoch stamped in each record's batch);
//   4. stop every node (SIGTERM) and digest each replica's log bytes below
//      that high watermark from its data dir, with the storage code
//      (PartitionLog) — byte-identical logs have equal digests;
//   5. the Raft leadership per term from the nodes' logs.
//
// A partition that does not settle in time is a liveness failure, reported
// as an error naming it (the caller keeps the run dir for the logs).

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { BrokerConnection, nodeWebSocketFactory, type Admin } from '../../src/index.js';
import { decodeFetchedRecords } from '../../src/client/records.js';
import { decodeRecordBatches } from '../../src/record/record-batch.js';
import { LATEST_TIMESTAMP } from '../../src/protocol/apis/offsets.js';
import { batchSizeAt, lastOffsetOf, leaderEpochOf } from '../../src/record/batch-header.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { waitFor } from '../integration/harness.js';
import type { ChaosCluster } from './cluster.js';
import type { FinalPartition, FinalState, StoredRecord } from './history.js';
import { REPLICATION_FACTOR, type TopicPartition } from './workload.js';
import { utf8Decode } from '../../src/util/bytes.js';

export interface SettleOptions {
  /** Bound on steps 1–2. */
  readonly timeoutMs: number;
}

/** What settling learned about a partition. */
interface SettledPartition extends TopicPartition {
  readonly leader: number;
  readonly leaderUrl: string;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
}

const READ_BYTES_MAX = 1024 * 1024;
const READ_ROUNDS_MAX = 1_000_000;
const POLL_MS = 250;

/** Steps 1–5: heals, settles, reads, stops the nodes, digests. */
export async function collectFinal(cluster: ChaosCluster, partitions: readonly TopicPartition[], opts: SettleOptions): Promise<FinalState> {
  cluster.proxy.heal();
  cluster.reviveAll();
  const deadline = performance.now() + opts.timeoutMs;
  await cluster.waitReady(opts.timeoutMs);
  const settled = await settle(cluster, partitions, Math.max(1_000, deadline - performance.now()));
  const reads: Array<{ p: SettledPartition; hw: number; logStart: number; records: StoredRecord[] }> = [];
  for (const p of settled) reads.push({ p, ...(await readFromLeader(p)) });
  await cluster.shutdown();
  const compacted = new Set(partitions.filter((tp) => tp.compacted === true).map((tp) => `${tp.topic}-${tp.partition}`));
  const out: FinalPartition[] = reads.map(({ p, hw, logStart, records }) => ({
    topic: p.topic, partition: p.partition, leader: p.leader, isr: p.isr, highWatermark: hw, logStartOffset: logStart, records,
    ...(compacted.has(`${p.topic}-${p.partition}`) ? { compacted: true } : {}),
    replicaDigests: p.replicas.flatMap((nodeId) => {
      const dir = path.join(cluster.node(nodeId).dataDir, `${p.topic}-${p.partition}`);
      const digest = compacted.has(`${p.topic}-${p.partition}`) ? compactedReplicaDigest(dir, hw) : replicaDigest(dir, logStart, hw);
      return digest === null ? [] : [{ nodeId, digest }];
    }),
  }));
  return { partitions: out, controllerTerms: cluster.controllerTerms() };
}

/** Waits until every partition is fully replicated, led, served, and its high watermark has stopped moving. */
async function settle(cluster: ChaosCluster, partitions: readonly TopicPartition[], timeoutMs: number): Promise<SettledPartition[]> {
  const client = cluster.client('chaos-final', { requestTimeoutMs: 5_000 });
  const admin = client.admin();
  const topics = [...new Set(partitions.map((p) => p.topic))];
  const lastHw = new Map<string, number>();
  let lastProblem = '';
  try {
    return await waitFor('the cluster to settle', async () => {
      const problem = await settleProblem(admin, topics, partitions, lastHw);
      if (typeof problem === 'string') {
        lastProblem = problem;
        return undefined;
      }
      return problem;
    }, { timeoutMs, intervalMs: POLL_MS });
  } catch (err) {
    throw new Error(`${(err as Error).message}: ${lastProblem}`);
  }
}

/** The settled partitions, or what is not settled yet. */
async function settleProblem(
  admin: Admin, topics: readonly string[], partitions: readonly TopicPartition[], lastHw: Map<string, number>,
): Promise<SettledPartition[] | string> {
  const described = new Map((await admin.describeTopics({ topics })).map((t) => [t.name, t]));
  const brokers = new Map((await admin.describeCluster()).brokers.map((b) => [b.nodeId, b]));
  const moving = new Set((await admin.listPartitionReassignments()).map((r) => `${r.topic}-${r.partition}`));
  const out: SettledPartition[] = [];
  let hwMoved = false;
  for (const tp of partitions) {
    const name = `${tp.topic}-${tp.partition}`;
    const p = described.get(tp.topic)?.partitions[tp.partition];
    if (!p || p.leader < 0) return `${name} has no leader`;
    if (moving.has(name)) return `${name} is being reassigned`;
    if (p.replicas.length !== REPLICATION_FACTOR || p.isr.length !== p.replicas.length) return `${name}: isr ${p.isr} of replicas ${p.replicas}`;
    const url = brokers.get(p.leader)?.url;
    if (!url || brokers.get(p.leader)?.fenced) return `${name}: leader ${p.leader} is fenced or has no URL`;
    const hw = await latestOffset(url, tp);
    if (typeof hw === 'string') return `${name}: leader ${p.leader} answers ${hw}`;
    if (lastHw.get(name) !== hw) hwMoved = true;
    lastHw.set(name, hw);
    out.push({ ...tp, leader: p.leader, leaderUrl: url, replicas: p.replicas, isr: p.isr });
  }
  return hwMoved ? 'high watermarks still moving' : out;
}

async function connect(url: string): Promise<BrokerConnection> {
  return BrokerConnection.connect(url, { factory: nodeWebSocketFactory, connectTimeoutMs: 3_000, requestTimeoutMs: 10_000, clientId: 'chaos-final' });
}

/** The high watermark the leader serves (ListOffsets latest), or the error it answered. */
async function latestOffset(url: string, tp: TopicPartition): Promise<number | string> {
  const conn = await connect(url);
  try {
    const res = await conn.listOffsets({ topics: [{ name: tp.topic, partitions: [{ partition: tp.partition, timestamp: LATEST_TIMESTAMP }] }] });
    const p = res.topics[0]?.partitions[0];
    if (!p) return 'nothing';
    return p.errorCode === 0 ? p.offset : `error ${p.errorCode} ${p.errorMessage ?? ''}`;
  } finally {
    conn.close();
  }
}

/** Every record from the log start to the high watermark, read from the leader as a consumer, with its batch's leader epoch. */
async function readFromLeader(p: SettledPartition): Promise<{ hw: number; logStart: number; records: StoredRecord[] }> {
  const conn = await connect(p.leaderUrl);
  try {
    const records: StoredRecord[] = [];
    let offset = 0;
    let logStart = -1;
    for (let round = 0; round < READ_ROUNDS_MAX; round++) {
      const res = await conn.fetch({ maxWaitMs: 0, maxBytes: READ_BYTES_MAX, topics: [{ name: p.topic, partitions: [{ partition: p.partition, fetchOffset: offset }] }] });
      const part = res.topics[0]?.partitions[0];
      if (!part || part.errorCode !== 0) throw new Error(`final read of ${p.topic}-${p.partition}@${offset} from broker ${p.leader}: error ${part?.errorCode} ${part?.errorMessage ?? ''}`);
      if (logStart < 0) {
        logStart = part.logStartOffset;
        offset = Math.max(offset, logStart);
        if (offset > 0) continue;
      }
      if (offset >= part.highWatermark) return { hw: part.highWatermark, logStart, records };
      const buf = Buffer.from(part.records.buffer, part.records.byteOffset, part.records.byteLength);
      if (buf.length === 0) throw new Error(`final read of ${p.topic}-${p.partition}@${offset} below HW ${part.highWatermark} returned nothing`);
      offset = collectBatches(buf, offset, records);
    }
    throw new Error(`final read of ${p.topic}-${p.partition} did not end`);
  } finally {
    conn.close();
  }
}

/** Appends the records at or after `offset` in the whole batches of `buf`; returns the next offset. */
function collectBatches(buf: Buffer, offset: number, out: StoredRecord[]): number {
  let next = offset;
  for (let pos = 0; pos + 12 <= buf.length;) {
    const size = batchSizeAt(buf, pos);
    if (pos + size > buf.length) break; // a partial batch at the end of a size-limited answer
    const batch = buf.subarray(pos, pos + size);
    if (lastOffsetOf(batch) >= next) {
      const epoch = leaderEpochOf(batch);
      for (const r of decodeFetchedRecords(batch, next)) {
        out.push({ offset: r.offset, value: r.value?.toString('utf8') ?? '', ...(r.key === null ? {} : { key: r.key.toString('utf8') }), leaderEpoch: epoch });
      }
      next = lastOffsetOf(batch) + 1;
    }
    pos += size;
  }
  if (next === offset) throw new Error(`no whole batch at offset ${offset}`);
  return next;
}

/**
 * sha256 of the replica's log bytes from `fromOffset` below `hw` (whole
 * batches, exactly as stored), read with the storage code from a stopped
 * node's partition directory; null if the replica has no such directory.
 */
export function replicaDigest(dir: string, fromOffset: number, hw: number): string | null {
  if (!fs.existsSync(dir)) return null;
  const log = PartitionLog.open({ dir });
  try {
    const hash = createHash('sha256');
    let offset = Math.max(fromOffset, log.logStartOffset);
    hash.update(`from ${offset}\n`);
    const end = Math.min(hw, log.logEndOffset);
    while (offset < end) {
      const r = log.read(offset, READ_BYTES_MAX, { maxOffset: end });
      if (r.records.length === 0) break;
      hash.update(r.records);
      offset = r.nextOffset;
    }
    hash.update(`to ${offset}\n`);
    return hash.digest('hex');
  } finally {
    log.close();
  }
}

/**
 * For a compacted partition: sha256 of the replica's last value of every key
 * below `hw` (sorted by key). Each replica compacts its own log, so their
 * bytes differ while what a consumer reads from the beginning must not.
 */
export function compactedReplicaDigest(dir: string, hw: number): string | null {
  if (!fs.existsSync(dir)) return null;
  const log = PartitionLog.open({ dir });
  try {
    const last = new Map<string, string>();
    let offset = log.logStartOffset;
    const end = Math.min(hw, log.logEndOffset);
    while (offset < end) {
      const r = log.read(offset, READ_BYTES_MAX, { maxOffset: end });
      if (r.records.length === 0) break;
      for (const b of decodeRecordBatches(r.records)) {
        for (const rec of b.records) if (rec.key !== null) last.set(utf8Decode(rec.key), rec.value === null ? '' : utf8Decode(rec.value));
      }
      offset = r.nextOffset;
    }
    const hash = createHash('sha256');
    for (const k of [...last.keys()].sort()) hash.update(`${k}=${last.get(k)!}\n`);
    return hash.digest('hex');
  } finally {
    log.close();
  }
}
