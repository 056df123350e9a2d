// Reading the producer facts of record batches from their HEADERS only (the
// broker never decodes records): from a buffer (a produce request, a fetched
// answer) and from a partition log's segment files, to rebuild producer state
// (rules/producer-state.ts) when a broker starts without a snapshot or after a
// truncation took away history the state did not retain.
//
// The file scan reads through a buffer and, past a batch larger than it,
// reads just the next header's neighbourhood: its cost is about one read per
// buffer-full of small batches or one small read per large batch, never the
// records of large batches. It trusts the segment bytes up to each segment's
// size (the log validated them when it loaded or appended them).
//
// Control batches (transaction markers) are the exception to "headers only":
// their one small record says COMMIT or ABORT and the coordinator epoch
// (record/control-batch.ts), so the scan reads them whole.
//
// Producer ids are int64 on the wire; ids beyond 2^53 cannot be told apart as
// numbers, so they read as UNSAFE_PRODUCER_ID: a leader refuses them and the
// rebuild ignores them (no leader ever accepted one).

import * as path from 'node:path';
import { AssertionError } from '../util/assert.js';
import { Errors, SluiceError, isSluiceError } from '../util/errors.js';
import {
  ATTRIBUTES_OFFSET, BASE_OFFSET_OFFSET, BATCH_LENGTH_OFFSET, BASE_SEQUENCE_OFFSET, CONTROL_FLAG_MASK, LAST_OFFSET_DELTA_OFFSET, LOG_OVERHEAD_BYTES,
  MAX_TIMESTAMP_OFFSET, PRODUCER_EPOCH_OFFSET, PRODUCER_ID_OFFSET, RECORD_BATCH_HEADER_BYTES, TRANSACTIONAL_FLAG_MASK, batchSizeAt,
} from '../record/batch-header.js';
import { parseControlBatch } from '../record/control-batch.js';
import { int64At } from '../storage/batch-scanner.js';
import { LOG_FILE_SUFFIX, segmentFileName } from '../storage/segment.js';
import type { PartitionLog } from '../storage/partition-log.js';
import type { FileSystem } from '../util/file-system.js';
import { readFully } from '../util/fs-util.js';
import type { AppendedBatch, ControlFacts } from './rules/producer-state.js';

/** A producer id not representable as a JS number. */
export const UNSAFE_PRODUCER_ID = -2;

const SCAN_BUFFER_BYTES = 64 * 1024;
/** What is read for the next header after a batch larger than the buffer: the header and a little more. */
const HEADER_READ_BYTES = 4 * 1024;

/**
 * The producer facts of the batch whose header starts at `pos` (which must
 * hold a whole header, and the whole batch if it is a control batch).
 * A control batch that does not parse reads as a control batch that is not
 * a marker (the leader never appends one: produce refuses client control
 * batches and the coordinator's are built by record/control-batch.ts).
 */
export function producerFactsAt(buf: Buffer, pos: number): AppendedBatch {
  const pid = int64At(buf, pos + PRODUCER_ID_OFFSET);
  const attributes = buf.readInt16BE(pos + ATTRIBUTES_OFFSET);
  const facts: AppendedBatch = {
    baseOffset: int64At(buf, pos + BASE_OFFSET_OFFSET),
    producerId: Number.isSafeInteger(pid) ? pid : UNSAFE_PRODUCER_ID,
    producerEpoch: buf.readInt16BE(pos + PRODUCER_EPOCH_OFFSET),
    baseSequence: buf.readInt32BE(pos + BASE_SEQUENCE_OFFSET),
    lastOffsetDelta: buf.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET),
    maxTimestamp: int64At(buf, pos + MAX_TIMESTAMP_OFFSET),
    isTransactional: (attributes & TRANSACTIONAL_FLAG_MASK) !== 0,
  };
  if ((attributes & CONTROL_FLAG_MASK) === 0) return facts;
  return { ...facts, control: controlFactsAt(buf, pos) };
}

function controlFactsAt(buf: Buffer, pos: number): ControlFacts {
  try {
    const c = parseControlBatch(buf, pos);
    return c.kind === 'marker' ? { kind: 'marker', committed: c.committed, coordinatorEpoch: c.coordinatorEpoch } : { kind: 'other' };
  } catch (err) {
    if (!isSluiceError(err)) throw err;
    return { kind: 'other' };
  }
}

/** Whether the batch header at `pos` is a control batch's (its facts need the whole batch). */
function isControlAt(buf: Buffer, pos: number): boolean {
  return (buf.readInt16BE(pos + ATTRIBUTES_OFFSET) & CONTROL_FLAG_MASK) !== 0;
}

/**
 * The producer facts of every batch in `buf`, or null if its batches do not
 * tile it (a malformed append: the log's own validation will say why).
 * CRCs are not checked here.
 */
export function producerFactsIn(buf: Buffer): AppendedBatch[] | null {
  const out: AppendedBatch[] = [];
  for (let pos = 0; pos < buf.length;) {
    if (buf.length - pos < RECORD_BATCH_HEADER_BYTES) return null;
    const size = batchSizeAt(buf, pos);
    if (size < RECORD_BATCH_HEADER_BYTES || size > buf.length - pos) return null;
    out.push(producerFactsAt(buf, pos));
    pos += size;
  }
  return out;
}

/**
 * Calls `onBatch` with the facts of every batch of `log` that ends at or
 * after the log start offset, in offset order. Synchronous: nothing can
 * change the log meanwhile. A file that cannot be read, or is shorter than
 * the log says, is a KAFKA_STORAGE_ERROR.
 */
export function scanLogProducerFacts(log: PartitionLog, onBatch: (b: AppendedBatch) => void): void {
  const logStart = log.logStartOffset;
  const buf = Buffer.allocUnsafe(SCAN_BUFFER_BYTES);
  for (const seg of log.segmentInfos()) {
    if (seg.nextOffset <= logStart || seg.sizeBytes === 0) continue;
    const file = path.join(log.dir, segmentFileName(seg.baseOffset, LOG_FILE_SUFFIX));
    const fs = log.fs;
    try {
      const fd = fs.openSync(file, 'r');
      try {
        scanSegment(fs, fd, seg.sizeBytes, buf, (b) => {
          if (b.baseOffset + b.lastOffsetDelta >= logStart) onBatch(b);
        });
      } finally {
        fs.closeSync(fd);
      }
    } catch (err) {
      if (isSluiceError(err) || err instanceof AssertionError) throw err;
      throw new SluiceError(Errors.KAFKA_STORAGE_ERROR, `producer state scan of ${file} failed: ${(err as Error).message}`);
    }
  }
}

function shortFile(pos: number, sizeBytes: number, what: string): SluiceError {
  return new SluiceError(Errors.KAFKA_STORAGE_ERROR, `segment bytes at ${pos} of ${sizeBytes} do not hold a batch (${what})`);
}

function scanSegment(fs: FileSystem, fd: number, sizeBytes: number, buf: Buffer, onBatch: (b: AppendedBatch) => void): void {
  let bufStart = 0;
  let bufLen = 0;
  let lastBatchBytes = 0;
  for (let pos = 0; pos < sizeBytes;) {
    if (pos < bufStart || pos + RECORD_BATCH_HEADER_BYTES > bufStart + bufLen) {
      const want = Math.min(lastBatchBytes > buf.length ? HEADER_READ_BYTES : buf.length, sizeBytes - pos);
      bufStart = pos;
      bufLen = readFully(fs, fd, buf, 0, want, pos);
      if (bufLen < RECORD_BATCH_HEADER_BYTES) throw shortFile(pos, sizeBytes, 'file too short');
    }
    const at = pos - bufStart;
    const size = LOG_OVERHEAD_BYTES + buf.readInt32BE(at + BATCH_LENGTH_OFFSET);
    if (size < RECORD_BATCH_HEADER_BYTES || pos + size > sizeBytes) throw shortFile(pos, sizeBytes, `batch size ${size}`);
    if (isControlAt(buf, at) && pos + size > bufStart + bufLen) {
      // A marker is read whole (they are tiny: one short record).
      const whole = size <= buf.length ? buf : Buffer.allocUnsafe(size);
      if (readFully(fs, fd, whole, 0, size, pos) < size) throw shortFile(pos, sizeBytes, 'control batch cut short');
      onBatch(producerFactsAt(whole, 0));
      bufStart = pos;
      bufLen = whole === buf ? size : 0;
      lastBatchBytes = size;
      pos += size;
      continue;
    }
    onBatch(producerFactsAt(buf, at));
    lastBatchBytes = size;
    pos += size;
  }
}
