// The fixed header of a Kafka RecordBatch v2 (magic 2), read and stamped in
// place without decoding any record. This is all the broker ever looks at on
// the produce and fetch paths; record encoding/decoding for clients and tests
// lives in record-batch.ts.
//
// Layout (big-endian), offsets from the start of the batch:
//
//   0  baseOffset            int64
//   8  batchLength           int32   bytes after this field (so batch size = 12 + batchLength)
//  12  partitionLeaderEpoch  int32
//  16  magic                 int8    = 2
//  17  crc                   uint32  CRC32C of bytes [21, end)
//  21  attributes            int16   bits 0-2 compression, 3 timestamp type,
//                                    4 transactional, 5 control, 6 delete horizon
//  23  lastOffsetDelta       int32
//  27  baseTimestamp         int64
//  35  maxTimestamp          int64
//  43  producerId            int64
//  51  producerEpoch         int16
//  53  baseSequence          int32
//  57  recordCount           int32
//  61  records...
//
// Invariant kept by the callers: a stamped batch's CRC still verifies, because
// baseOffset and partitionLeaderEpoch lie before the CRC'd range.

import { assert } from '../util/assert.js';
import { bigInt64At, int16At, int32At, int64NumberAt, int8At, uint32At, writeInt16, writeInt32, writeInt64Number } from '../util/bytes.js';
import { crc32c } from '../util/crc32c.js';
import { Errors, SluiceError } from '../util/errors.js';

export const BASE_OFFSET_OFFSET = 0;
export const BATCH_LENGTH_OFFSET = 8;
export const PARTITION_LEADER_EPOCH_OFFSET = 12;
export const MAGIC_OFFSET = 16;
export const CRC_OFFSET = 17;
export const ATTRIBUTES_OFFSET = 21;
export const LAST_OFFSET_DELTA_OFFSET = 23;
export const BASE_TIMESTAMP_OFFSET = 27;
export const MAX_TIMESTAMP_OFFSET = 35;
export const PRODUCER_ID_OFFSET = 43;
export const PRODUCER_EPOCH_OFFSET = 51;
export const BASE_SEQUENCE_OFFSET = 53;
export const RECORD_COUNT_OFFSET = 57;
/** Size of the fixed header; records start here. */
export const RECORD_BATCH_HEADER_BYTES = 61;
/** baseOffset + batchLength: the bytes not counted by batchLength. */
export const LOG_OVERHEAD_BYTES = 12;
export const MAGIC_V2 = 2;

export const COMPRESSION_CODEC_MASK = 0x07;
export const TIMESTAMP_TYPE_MASK = 0x08;
export const TRANSACTIONAL_FLAG_MASK = 0x10;
export const CONTROL_FLAG_MASK = 0x20;
export const DELETE_HORIZON_FLAG_MASK = 0x40;

export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;

export enum CompressionType {
  None = 0,
  Gzip = 1,
  Snappy = 2,
  Lz4 = 3,
  Zstd = 4,
}

/** A decoded copy of a batch header. Offsets are JS numbers (safe up to 2^53). */
export interface BatchHeader {
  baseOffset: number;
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: number;
  maxTimestamp: number;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
}

/** Total size in bytes of the batch starting at `pos` (12 + batchLength). */
export function batchSizeAt(buf: Uint8Array, pos = 0): number {
  return LOG_OVERHEAD_BYTES + int32At(buf, pos + BATCH_LENGTH_OFFSET);
}

export function readBatchHeader(buf: Uint8Array, pos = 0): BatchHeader {
  return {
    baseOffset: int64NumberAt(buf, pos + BASE_OFFSET_OFFSET),
    batchLength: int32At(buf, pos + BATCH_LENGTH_OFFSET),
    partitionLeaderEpoch: int32At(buf, pos + PARTITION_LEADER_EPOCH_OFFSET),
    magic: int8At(buf, pos + MAGIC_OFFSET),
    crc: uint32At(buf, pos + CRC_OFFSET),
    attributes: int16At(buf, pos + ATTRIBUTES_OFFSET),
    lastOffsetDelta: int32At(buf, pos + LAST_OFFSET_DELTA_OFFSET),
    baseTimestamp: int64NumberAt(buf, pos + BASE_TIMESTAMP_OFFSET),
    maxTimestamp: int64NumberAt(buf, pos + MAX_TIMESTAMP_OFFSET),
    producerId: bigInt64At(buf, pos + PRODUCER_ID_OFFSET),
    producerEpoch: int16At(buf, pos + PRODUCER_EPOCH_OFFSET),
    baseSequence: int32At(buf, pos + BASE_SEQUENCE_OFFSET),
    recordCount: int32At(buf, pos + RECORD_COUNT_OFFSET),
  };
}

export const baseOffsetOf = (buf: Uint8Array, pos = 0): number => int64NumberAt(buf, pos + BASE_OFFSET_OFFSET);
export const lastOffsetDeltaOf = (buf: Uint8Array, pos = 0): number => int32At(buf, pos + LAST_OFFSET_DELTA_OFFSET);
/** Offset of the last record of the batch at `pos`. */
export const lastOffsetOf = (buf: Uint8Array, pos = 0): number => baseOffsetOf(buf, pos) + lastOffsetDeltaOf(buf, pos);
export const leaderEpochOf = (buf: Uint8Array, pos = 0): number => int32At(buf, pos + PARTITION_LEADER_EPOCH_OFFSET);
export const maxTimestampOf = (buf: Uint8Array, pos = 0): number => int64NumberAt(buf, pos + MAX_TIMESTAMP_OFFSET);
export const recordCountOf = (buf: Uint8Array, pos = 0): number => int32At(buf, pos + RECORD_COUNT_OFFSET);
export const compressionOf = (buf: Uint8Array, pos = 0): CompressionType =>
  (int16At(buf, pos + ATTRIBUTES_OFFSET) & COMPRESSION_CODEC_MASK) as CompressionType;

/** CRC32C over [attributes, end) of the batch at `pos`, which must be whole in `buf`. */
export function computeBatchCrc(buf: Uint8Array, pos = 0): number {
  const end = pos + batchSizeAt(buf, pos);
  return crc32c(buf.subarray(pos + ATTRIBUTES_OFFSET, end));
}

/**
 * Why the batch at `pos` is not a valid v2 batch, or null if it is. Checks:
 * enough bytes for a header, a sane length that fits in `buf`, magic 2, the
 * CRC, a non-negative record count and lastOffsetDelta consistent with it.
 * `end` bounds the bytes that belong to this buffer (defaults to its length).
 * `checkCrc` false skips the CRC, for a caller that verified it in this same
 * append (the leader's produce path: checkRecordBatches, then the log).
 */
export function batchProblem(buf: Uint8Array, pos = 0, end = buf.length, checkCrc = true): string | null {
  // A caller bug, not bad bytes: reading past buf would throw a RangeError instead of a verdict.
  assert(Number.isSafeInteger(pos) && pos >= 0 && end <= buf.length, `bad bounds [${pos}, ${end}) for ${buf.length} bytes`);
  if (end - pos < RECORD_BATCH_HEADER_BYTES) return `truncated header (${end - pos} bytes)`;
  const batchLength = int32At(buf, pos + BATCH_LENGTH_OFFSET);
  if (batchLength < RECORD_BATCH_HEADER_BYTES - LOG_OVERHEAD_BYTES) return `batch length ${batchLength} below header size`;
  if (pos + LOG_OVERHEAD_BYTES + batchLength > end) return `truncated batch (needs ${LOG_OVERHEAD_BYTES + batchLength} bytes, has ${end - pos})`;
  const magic = int8At(buf, pos + MAGIC_OFFSET);
  if (magic !== MAGIC_V2) return `unsupported magic ${magic}`;
  const stored = uint32At(buf, pos + CRC_OFFSET);
  const actual = checkCrc ? computeBatchCrc(buf, pos) : stored;
  if (stored !== actual) return `CRC mismatch (stored ${stored.toString(16)}, computed ${actual.toString(16)})`;
  const count = int32At(buf, pos + RECORD_COUNT_OFFSET);
  const lastDelta = int32At(buf, pos + LAST_OFFSET_DELTA_OFFSET);
  if (count < 0 || lastDelta < 0) return `negative record count ${count} or last offset delta ${lastDelta}`;
  if (count > 0 && lastDelta < count - 1) return `last offset delta ${lastDelta} too small for ${count} records`;
  return null;
}

/** Throws CORRUPT_MESSAGE unless `buf[pos..]` starts with a valid batch; returns its size. */
export function validateBatch(buf: Uint8Array, pos = 0, end = buf.length): number {
  const problem = batchProblem(buf, pos, end);
  if (problem !== null) throw new SluiceError(Errors.CORRUPT_MESSAGE, problem, { position: pos });
  return batchSizeAt(buf, pos);
}

/** Stamps base offset and partition leader epoch in place (the CRC stays valid). */
export function stampBatch(buf: Uint8Array, pos: number, baseOffset: number, leaderEpoch: number): void {
  writeInt64Number(buf, baseOffset, pos + BASE_OFFSET_OFFSET);
  writeInt32(buf, leaderEpoch, pos + PARTITION_LEADER_EPOCH_OFFSET);
}

/** Stamps the max timestamp (LogAppendTime topics); recomputes the CRC since it is covered. */
export function stampLogAppendTime(buf: Uint8Array, pos: number, timestampMs: number): void {
  const attrs = int16At(buf, pos + ATTRIBUTES_OFFSET) | TIMESTAMP_TYPE_MASK;
  writeInt16(buf, attrs, pos + ATTRIBUTES_OFFSET);
  writeInt64Number(buf, timestampMs, pos + MAX_TIMESTAMP_OFFSET);
  writeInt32(buf, computeBatchCrc(buf, pos), pos + CRC_OFFSET);
}
