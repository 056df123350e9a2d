// Sluice's consume workloads: read back what the last produce wrote.
//
// One consumer: pipelined Fetch requests on one BrokerConnection per leader.
// Each partition's offsets [0, end) are cut into windows of about
// `WINDOW_BYTES` (whole producer batches); up to `WINDOWS_IN_FLIGHT` windows
// are fetched at once, each from its start offset with a byte limit sized to
// the window, and a window that one answer did not cover is fetched on from
// where it stopped. Only the batches that overlap a window are decoded
// (records and CRC, as a consumer must), and only records inside it are
// counted, so every record counts exactly once whatever the boundaries are.
//
// A group: N members of one consumer group (the real Consumer of src/index.ts,
// each with its own Client), subscribed from the beginning of a topic with at
// least N partitions. The clock starts at the first record delivered — after
// the first join, since the peers have no join phase — and stops when every
// partition has been delivered up to its end offset (records delivered twice
// around a rebalance count twice, as work done). Caveat: the first fetch
// answers (up to 1 MiB per partition) arrive before the clock starts: that
// flatters the quick profile's 5 MB, hardly the full profile's 100 MB.
import { Client } from '../../src/index.js';
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import { decodeFetchedRecords } from '../../src/client/records.js';
import { baseOffsetOf, batchSizeAt, lastOffsetOf } from '../../src/record/batch-header.js';
import { ThroughputMeter } from './measure.js';
import type { ConsumeSpec, Progress, ThroughputResult } from './types.js';

export const WINDOW_BYTES = 1024 * 1024;
export const WINDOWS_IN_FLIGHT = 4;
/** Bytes a record takes in a batch beyond its value (varint framing, small batches' headers), for byte limits. */
const RECORD_OVERHEAD_BYTES = 16;
const FETCH_ROUNDS_MAX = 1_000_000;

export interface PartitionSource {
  readonly partition: number;
  /** A connection to the partition's leader. */
  readonly conn: BrokerConnection;
  /** Read offsets [0, end). */
  readonly end: number;
}

interface Window { readonly src: PartitionSource; readonly start: number; readonly end: number }

/** One consumer reading every partition of `topic` from offset 0 to its end with pipelined fetches. */
export async function consumePipelined(
  topic: string, sources: readonly PartitionSource[], valueBytes: number, spec: ConsumeSpec, progress: Progress, batchRecords = 1,
): Promise<ThroughputResult> {
  const recordBytes = valueBytes + RECORD_OVERHEAD_BYTES;
  // Windows a whole number of the producer's batches long: no batch straddles two windows (and is decoded twice).
  const windowRecords = Math.max(1, Math.floor(WINDOW_BYTES / recordBytes / batchRecords)) * batchRecords;
  const queue: Window[] = [];
  for (const src of sources) for (let s = 0; s < src.end; s += windowRecords) queue.push({ src, start: s, end: Math.min(src.end, s + windowRecords) });
  // Interleave the partitions' windows so every leader is read from at once.
  queue.sort((a, b) => a.start - b.start);
  const meter = new ThroughputMeter();
  const deadline = performance.now() + spec.seconds * 1000;
  const more = (): boolean => meter.done < spec.records && performance.now() < deadline;
  const worker = async (): Promise<void> => {
    for (let w = queue.shift(); w !== undefined && more(); w = queue.shift()) await readWindow(topic, w, recordBytes, meter, progress, more);
  };
  await Promise.all(Array.from({ length: WINDOWS_IN_FLIGHT }, worker));
  return meter.result();
}

async function readWindow(topic: string, w: Window, recordBytes: number, meter: ThroughputMeter, progress: Progress, more: () => boolean): Promise<void> {
  let offset = w.start;
  for (let round = 0; offset < w.end && more(); round++) {
    if (round >= FETCH_ROUNDS_MAX) throw new Error(`reading ${topic}-${w.src.partition} [${w.start}, ${w.end}) did not end`);
    const res = await w.src.conn.fetch({
      maxWaitMs: 0,
      topics: [{ name: topic, partitions: [{ partition: w.src.partition, fetchOffset: offset, partitionMaxBytes: (w.end - offset) * recordBytes }] }],
    });
    const p = res.topics[0]?.partitions[0];
    if (!p || p.errorCode !== 0) throw new Error(`fetch ${topic}-${w.src.partition}@${offset}: ${p?.errorMessage ?? `error ${p?.errorCode}`}`);
    const next = countWindowRecords(Buffer.from(p.records.buffer, p.records.byteOffset, p.records.byteLength), offset, w.end, meter);
    if (next === offset) throw new Error(`fetch ${topic}-${w.src.partition}@${offset} below ${w.end} returned nothing (high watermark ${p.highWatermark})`);
    offset = next;
    progress(meter.done);
  }
}

/** Decodes the batches of `buf` that overlap [from, end), counts their records in it; the next offset to read. */
function countWindowRecords(buf: Buffer, from: number, end: number, meter: ThroughputMeter): number {
  let next = from;
  for (let pos = 0; pos + 12 <= buf.length;) {
    const size = batchSizeAt(buf, pos);
    if (pos + size > buf.length || baseOffsetOf(buf, pos) >= end) break;
    if (lastOffsetOf(buf, pos) >= next) {
      let records = 0;
      let bytes = 0;
      for (const r of decodeFetchedRecords(buf.subarray(pos, pos + size), next)) {
        if (r.offset >= end) break;
        records++;
        bytes += r.value?.length ?? 0;
      }
      meter.add(records, bytes);
      next = Math.min(end, lastOffsetOf(buf, pos) + 1);
    }
    pos += size;
  }
  return next;
}

export interface GroupConsumeInput {
  readonly bootstrap: readonly string[];
  readonly topic: string;
  readonly groupId: string;
  /** End offset per partition (index = partition). */
  readonly ends: readonly number[];
}

const GROUP_SESSION_TIMEOUT_MS = 10_000;
const GROUP_HEARTBEAT_INTERVAL_MS = 1_000;
const GROUP_FETCH_WAIT_MS = 100;

/** `spec.consumers` members of one group read `topic` from the beginning to its end offsets. */
export async function consumeGroup(g: GroupConsumeInput, spec: ConsumeSpec, progress: Progress): Promise<ThroughputResult> {
  const clients = Array.from({ length: spec.consumers }, (_, i) => new Client({ bootstrap: [...g.bootstrap], clientId: `bench-member-${i}` }));
  const consumers = clients.map((c) => c.consumer({
    groupId: g.groupId, autoOffsetReset: 'earliest', sessionTimeoutMs: GROUP_SESSION_TIMEOUT_MS,
    heartbeatIntervalMs: GROUP_HEARTBEAT_INTERVAL_MS, maxWaitMs: GROUP_FETCH_WAIT_MS,
  }));
  const reached = g.ends.map(() => 0);
  let meter: ThroughputMeter | null = null;
  let finish!: () => void;
  let fail!: (err: Error) => void;
  const finished = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  // A crash is reported when awaited below; until then it must not count as unhandled.
  finished.catch(() => undefined);
  const complete = (): boolean => reached.every((r, p) => r >= g.ends[p]!);
  const timer = setTimeout(finish, spec.seconds * 1000 + GROUP_SESSION_TIMEOUT_MS);
  try {
    for (const c of consumers) {
      c.on('crash', (e) => fail(e.error));
      await c.subscribe({ topics: g.topic, fromBeginning: true });
    }
    let deadline = Infinity;
    for (const c of consumers) {
      await c.run({
        eachBatch: async ({ batch }) => {
          if (meter === null) {
            meter = new ThroughputMeter();
            deadline = performance.now() + spec.seconds * 1000;
          }
          let bytes = 0;
          for (const m of batch.messages) bytes += m.value?.length ?? 0;
          meter.add(batch.messages.length, bytes);
          if (batch.messages.length > 0) reached[batch.partition] = Math.max(reached[batch.partition] ?? 0, batch.lastOffset() + 1);
          progress(meter.done);
          if (complete() || performance.now() >= deadline) finish();
        },
      });
    }
    await finished;
    if (meter === null) throw new Error(`the group delivered no record within ${spec.seconds} s`);
    return (meter as ThroughputMeter).result();
  } finally {
    clearTimeout(timer);
    await Promise.all(consumers.map((c) => c.close().catch(() => undefined)));
    for (const c of clients) c.close();
  }
}
