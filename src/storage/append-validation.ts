// What an append must satisfy before a single byte of it is written: every
// batch in the buffer is checked for size, structure and CRC, and a leader
// append also for a record count that matches the offsets it will occupy.
// Validation reads headers only and never changes the buffer, so a rejected
// append leaves both the log and the caller's bytes untouched.

import { Errors, SluiceError } from '../util/errors.js';
import {
  BASE_OFFSET_OFFSET,
  LOG_OVERHEAD_BYTES,
  MAX_TIMESTAMP_OFFSET,
  batchProblem,
  batchSizeAt,
  lastOffsetDeltaOf,
  leaderEpochOf,
  recordCountOf,
} from './batch-header.js';
import { int64At } from './batch-scanner.js';
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
 * lastOffsetDelta.
 */
export function validateAppend(buf: Buffer, asLeader: boolean, config: Readonly<LogConfig>): IncomingBatch[] {
  if (buf.length === 0) throw new SluiceError(Errors.CORRUPT_MESSAGE, 'no record batch in the append');
  const out: IncomingBatch[] = [];
  for (let pos = 0; pos < buf.length;) {
    const batch = validateOne(buf, pos, asLeader, config);
    out.push(batch);
    pos += batch.sizeBytes;
  }
  if (buf.length > config.segmentBytes) {
    throw new SluiceError(Errors.MESSAGE_TOO_LARGE, `append of ${buf.length} bytes exceeds segment.bytes ${config.segmentBytes}`,
      { sizeBytes: buf.length, segmentBytes: config.segmentBytes });
  }
  return out;
}

function validateOne(buf: Buffer, pos: number, asLeader: boolean, config: Readonly<LogConfig>): IncomingBatch {
  if (buf.length - pos < LOG_OVERHEAD_BYTES) throw new SluiceError(Errors.CORRUPT_MESSAGE, 'truncated batch header', { position: pos });
  // Size before CRC, as Kafka: an oversized batch is refused without reading it all.
  const size = batchSizeAt(buf, pos);
  if (size > config.maxMessageBytes) {
    throw new SluiceError(Errors.MESSAGE_TOO_LARGE, `batch of ${size} bytes exceeds max.message.bytes ${config.maxMessageBytes}`,
      { sizeBytes: size, maxMessageBytes: config.maxMessageBytes });
  }
  const problem = batchProblem(buf, pos, buf.length);
  if (problem !== null) throw new SluiceError(Errors.CORRUPT_MESSAGE, problem, { position: pos });
  const recordCount = recordCountOf(buf, pos);
  const lastOffsetDelta = lastOffsetDeltaOf(buf, pos);
  if (asLeader && (recordCount < 1 || lastOffsetDelta !== recordCount - 1)) {
    throw new SluiceError(Errors.CORRUPT_MESSAGE, `batch of ${recordCount} records has last offset delta ${lastOffsetDelta}`, { position: pos });
  }
  const baseOffset = int64At(buf, pos + BASE_OFFSET_OFFSET);
  return {
    offsetInBuffer: pos,
    sizeBytes: size,
    baseOffset,
    lastOffset: baseOffset + lastOffsetDelta,
    maxTimestamp: int64At(buf, pos + MAX_TIMESTAMP_OFFSET),
    leaderEpoch: leaderEpochOf(buf, pos),
    recordCount,
  };
}
