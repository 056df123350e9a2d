// Which records of a batch survive a clean, and the bytes of what is left
// (Kafka's Cleaner.shouldRetainRecord and MemoryRecords.filterTo). Pure: the
// offset map, the clock reading and the batch come in; bytes come out.
//
// A record survives unless
//   - it has no key (a compacted topic's records are keyed; Kafka refuses
//     keyless ones at produce time, the cleaner drops them), or
//   - the offset map holds a later offset for its key (a newer value exists,
//     below the cleaning end), or
//   - it is a tombstone (null value) in a batch whose delete horizon has
//     passed: KIP-534 — the first clean that keeps a tombstone stamps its
//     batch with horizon = now + delete.retention.ms, and a clean after that
//     time drops it.
//   - it belongs to an aborted transaction (KIP-98: the clean job found its
//     ABORT marker, cleaner-job.ts): every record of such a batch goes.
// Control batches (transaction markers) are kept whole: a read_committed
// consumer needs the marker to end the transaction, and the aborted
// transaction index entry (txn-index.ts) stays true of what remains.
//
// A batch keeps its base offset, last offset delta, leader epoch, producer
// id/epoch, base sequence, attributes, codec and max timestamp; survivors
// keep their offsets and timestamps. A batch left with no record is dropped,
// unless it is its producer's last batch: then it stays, empty, so the
// producer's sequence state survives (Kafka's rule). A batch whose records
// all survive and which needs no new horizon is copied byte for byte.

import {
  COMPRESSION_CODEC_MASK,
  CONTROL_FLAG_MASK,
  DELETE_HORIZON_FLAG_MASK,
  TIMESTAMP_TYPE_MASK,
  TRANSACTIONAL_FLAG_MASK,
  type CompressionType,
} from '../record/batch-header.js';
import { encodeRecordBatch, type DecodedBatch, type RecordInput } from '../record/record-batch.js';
import { hashKey } from './offset-map.js';
import { asBuffer } from '../util/node-bytes.js';

export interface OffsetLookup {
  /** The last offset below the cleaning end for this key hash, or -1. */
  get(hash: Buffer): number;
}

export interface FilterContext {
  map: OffsetLookup;
  nowMs: number;
  deleteRetentionMs: number;
  /** Whether this batch is its producer's last one in the log (only asked for batches with a producer id). */
  isLastBatchOfProducer: (producerId: bigint, baseOffset: number) => boolean;
  /** Whether this transactional batch belongs to an aborted transaction (absent: none is). */
  isAborted?: (producerId: bigint, baseOffset: number) => boolean;
}

export type FilterOutcome =
  | { kind: 'keep'; bytes: Buffer; records: number; tombstones: number }
  | { kind: 'rewrite'; bytes: Buffer; records: number; tombstones: number; removed: number }
  | { kind: 'drop'; removed: number };

export function deleteHorizonOf(batch: DecodedBatch): number | null {
  return (batch.header.attributes & DELETE_HORIZON_FLAG_MASK) !== 0 ? batch.header.baseTimestamp : null;
}

/** What becomes of `batch` (decoded from `original`, its exact bytes). */
export function filterBatch(batch: DecodedBatch, original: Buffer, ctx: FilterContext): FilterOutcome {
  const h = batch.header;
  if ((h.attributes & CONTROL_FLAG_MASK) !== 0) return { kind: 'keep', bytes: original, records: h.recordCount, tombstones: 0 };
  const horizon = deleteHorizonOf(batch);
  const tombstonesExpire = horizon !== null && ctx.nowMs >= horizon;
  const kept: RecordInput[] = [];
  let tombstones = 0;
  const aborted = (h.attributes & TRANSACTIONAL_FLAG_MASK) !== 0 && h.producerId >= 0n && ctx.isAborted?.(h.producerId, h.baseOffset) === true;
  for (const r of aborted ? [] : batch.records) {
    if (r.key === null) continue;
    const latest = ctx.map.get(hashKey(r.key));
    if (latest > r.offset) continue;
    if (r.value === null) {
      if (tombstonesExpire) continue;
      tombstones++;
    }
    kept.push({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp, offsetDelta: r.offset - h.baseOffset });
  }
  const removed = batch.records.length - kept.length;
  const needsHorizon = tombstones > 0 && horizon === null;
  if (removed === 0 && !needsHorizon) return { kind: 'keep', bytes: original, records: kept.length, tombstones };
  if (kept.length === 0 && !(h.producerId >= 0n && ctx.isLastBatchOfProducer(h.producerId, h.baseOffset))) return { kind: 'drop', removed };
  const newHorizon = horizon ?? (tombstones > 0 ? ctx.nowMs + ctx.deleteRetentionMs : undefined);
  const bytes = encodeRecordBatch({
    records: kept,
    baseOffset: h.baseOffset,
    partitionLeaderEpoch: h.partitionLeaderEpoch,
    lastOffsetDelta: h.lastOffsetDelta,
    maxTimestamp: h.maxTimestamp,
    baseTimestamp: h.baseTimestamp,
    ...(newHorizon !== undefined ? { deleteHorizonMs: newHorizon } : {}),
    producerId: h.producerId,
    producerEpoch: h.producerEpoch,
    baseSequence: h.baseSequence,
    compression: (h.attributes & COMPRESSION_CODEC_MASK) as CompressionType,
    isTransactional: (h.attributes & TRANSACTIONAL_FLAG_MASK) !== 0,
    timestampType: (h.attributes & TIMESTAMP_TYPE_MASK) !== 0 ? 'logAppend' : 'create',
  });
  return { kind: 'rewrite', bytes: asBuffer(bytes), records: kept.length, tombstones, removed };
}
