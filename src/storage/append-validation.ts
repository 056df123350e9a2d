// What an append must satisfy before a single byte of it is written: every
// batch in the buffer is checked for size, structure, CRC and timestamps, and
// a leader append also for a record count that matches the offsets it will
// occupy and a codec the cluster has.
// Validation reads headers only and never changes the buffer, so a rejected
// append leaves both the log and the caller's bytes untouched.

import '../node.js'; // Node runtime: native CRC32C, every codec, Buffer bytes
import { Errors, SluiceError } from '../util/errors.js';
import {
  BASE_OFFSET_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  compressionOf,
  LOG_OVERHEAD_BYTES,
  MAX_TIMESTAMP_OFFSET,
  batchProblem,
  batchSizeAt,
  lastOffsetDeltaOf,
  leaderEpochOf,
  recordCountOf,
} from '../record/batch-header.js';
import { int64At } from './batch-scanner.js';
import { compressionName, defaultCompressionRegistry } from '../record/compression.js';
import type { LogConfig } from './log-config.js';
import type { AppendBatch } from './segment.js';

/** A batch of an append: where it lies in the buffer and its header facts (as sent, before stamping). */
export interface IncomingBatch extends AppendBatch {
  leaderEpoch: number;
  recordCount: number;
}

/**
 * The batches in `buf`, or a SluiceError: MESSAGE_TOO_LARGE for a batch over
 * `max.message.bytes` or a buffer over `segment.bytes`; CORRUPT_MESSAGE for an
 * empty buffer, a torn or malformed batch, a CRC mismatch, or (leader appends,
 * whose offsets the log assigns) a record count that disagrees with
 * lastOffsetDelta; INVALID_TIMESTAMP for a timestamp a number cannot hold
 * exactly (outside [-1, 2^53)). `crcChecked` says the caller verified every
 * batch's CRC on these very bytes (the produce path's checkRecordBatches), so
 * a leader append computes it once, not twice.
 */
export function validateAppend(buf: Buffer, asLeader: boolean, config: Readonly<LogConfig>, crcChecked = false): IncomingBatch[] {
  if (buf.length === 0) throw new SluiceError(Errors.CORRUPT_MESSAGE, 'no record batch in the append');
  const out: IncomingBatch[] = [];
  for (let pos = 0; pos < buf.length;) {
    const batch = validateOne(buf, pos, asLeader, config, crcChecked);
    out.push(batch);
    pos += batch.sizeBytes;
  }
  if (buf.length > config.segmentBytes) {
    throw new SluiceError(Errors.MESSAGE_TOO_LARGE, `append of ${buf.length} bytes exceeds segment.bytes ${config.segmentBytes}`,
      { sizeBytes: buf.length, segmentBytes: config.segmentBytes });
  }
  return out;
}

function validateOne(buf: Buffer, pos: number, asLeader: boolean, config: Readonly<LogConfig>, crcChecked: boolean): IncomingBatch {
  if (buf.length - pos < LOG_OVERHEAD_BYTES) throw new SluiceError(Errors.CORRUPT_MESSAGE, 'truncated batch header', { position: pos });
  // Size before CRC, as Kafka: an oversized batch is refused without reading it all.
  const size = batchSizeAt(buf, pos);
  if (size > config.maxMessageBytes) {
    throw new SluiceError(Errors.MESSAGE_TOO_LARGE, `batch of ${size} bytes exceeds max.message.bytes ${config.maxMessageBytes}`,
      { sizeBytes: size, maxMessageBytes: config.maxMessageBytes });
  }
  const problem = batchProblem(buf, pos, buf.length, !crcChecked);
  if (problem !== null) throw new SluiceError(Errors.CORRUPT_MESSAGE, problem, { position: pos });
  const recordCount = recordCountOf(buf, pos);
  const lastOffsetDelta = lastOffsetDeltaOf(buf, pos);
  if (asLeader && (recordCount < 1 || lastOffsetDelta !== recordCount - 1)) {
    throw new SluiceError(Errors.CORRUPT_MESSAGE, `batch of ${recordCount} records has last offset delta ${lastOffsetDelta}`, { position: pos });
  }
  // Timestamps must be exact as JavaScript numbers: the time index stores
  // them, and one past 2^53 once broke a partition for good (found by the
  // fuzz test). -1 is "no timestamp".
  const maxTimestamp = int64At(buf, pos + MAX_TIMESTAMP_OFFSET);
  const baseTimestamp = int64At(buf, pos + BASE_TIMESTAMP_OFFSET);
  for (const [what, ts] of [['max', maxTimestamp], ['first', baseTimestamp]] as const) {
    if (!(Number.isSafeInteger(ts) && ts >= -1)) {
      throw new SluiceError(Errors.INVALID_TIMESTAMP, `batch ${what} timestamp is outside [-1, 2^53)`, { position: pos });
    }
  }
  if (asLeader) checkCodec(buf, pos);
  const baseOffset = int64At(buf, pos + BASE_OFFSET_OFFSET);
  return {
    offsetInBuffer: pos,
    sizeBytes: size,
    baseOffset,
    lastOffset: baseOffset + lastOffsetDelta,
    maxTimestamp,
    leaderEpoch: leaderEpochOf(buf, pos),
    recordCount,
  };
}

/**
 * A leader refuses a codec this cluster lacks (cheap: the attributes). The
 * records themselves are checked by the broker's produce path
 * (record-batch.ts checkRecordBatches), not here, so the log's append stays
 * a header-only operation.
 */
function checkCodec(buf: Buffer, pos: number): void {
  const codec = compressionOf(buf, pos);
  if (!defaultCompressionRegistry.has(codec)) {
    throw new SluiceError(Errors.UNSUPPORTED_COMPRESSION_TYPE, `compression ${compressionName(codec)} is not supported by this cluster`, { position: pos });
  }
}
