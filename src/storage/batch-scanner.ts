// Walks the record batches of a segment file from a position, reading through
// a buffer so a scan costs one pread per buffer-full rather than one per batch.
// Two modes: header-only (index lookups, tail discovery — trusts the bytes'
// CRCs) and validating (recovery — every batch's CRC and structure is checked
// with batchProblem before it is reported).
//
// The scanner never throws on bad bytes: it stops, and `problem` says why and
// `position` says where the first bad or torn batch starts. A clean end of the
// range leaves `problem` null.

import {
  BASE_OFFSET_OFFSET,
  BATCH_LENGTH_OFFSET,
  LOG_OVERHEAD_BYTES,
  MAGIC_OFFSET,
  MAGIC_V2,
  MAX_TIMESTAMP_OFFSET,
  RECORD_BATCH_HEADER_BYTES,
  batchProblem,
  lastOffsetDeltaOf,
  leaderEpochOf,
  recordCountOf,
} from '../record/batch-header.js';
import type { FileSystem } from '../util/file-system.js';
import { readFully } from '../util/fs-util.js';

export const SCAN_BUFFER_BYTES_DEFAULT = 64 * 1024;
const TWO_POW_32 = 2 ** 32;

/**
 * A big-endian int64 as a number without going through BigInt (this runs per
 * batch on the append and scan paths); exact for |value| < 2^53, which holds
 * for offsets and millisecond timestamps.
 */
export function int64At(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * TWO_POW_32 + buf.readUInt32BE(pos + 4);
}

/** What the log needs to know about a batch, from its header alone. */
export interface ScannedBatch {
  position: number;
  sizeBytes: number;
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
  leaderEpoch: number;
  recordCount: number;
}

export class FileBatchScanner {
  private buf: Buffer;
  /** File position of buf[0]. */
  private bufStart = 0;
  private bufLen = 0;
  /** Position of the next batch to report (or of the bad batch once `problem` is set). */
  position: number;
  problem: string | null = null;

  constructor(
    private readonly fs: FileSystem,
    private readonly fd: number,
    start: number,
    /** Exclusive end of the range to scan (the segment's size). */
    private readonly end: number,
    private readonly validate: boolean,
    /** A buffer size, or a scratch buffer to read into (reused across scans; never retained by results). */
    buffer: number | Buffer = SCAN_BUFFER_BYTES_DEFAULT,
  ) {
    this.position = start;
    this.buf = typeof buffer === 'number' ? Buffer.allocUnsafe(Math.max(buffer, RECORD_BATCH_HEADER_BYTES)) : buffer;
  }

  /** The next batch, or null at the end of the range or at the first bad batch. */
  next(): ScannedBatch | null {
    if (this.problem !== null || this.position >= this.end) return null;
    const pos = this.position;
    const remaining = this.end - pos;
    if (remaining < RECORD_BATCH_HEADER_BYTES) return this.fail(`truncated header (${remaining} bytes)`);
    if (!this.ensure(pos, RECORD_BATCH_HEADER_BYTES)) return this.fail('file shorter than expected');
    let at = pos - this.bufStart;
    const size = LOG_OVERHEAD_BYTES + this.buf.readInt32BE(at + BATCH_LENGTH_OFFSET);
    if (size < RECORD_BATCH_HEADER_BYTES) return this.fail(`batch size ${size} below header size`);
    if (size > remaining) return this.fail(`truncated batch (needs ${size} bytes, has ${remaining})`);
    if (this.buf.readInt8(at + MAGIC_OFFSET) !== MAGIC_V2) return this.fail(`bad magic ${this.buf.readInt8(at + MAGIC_OFFSET)}`);
    if (this.validate) {
      if (!this.ensure(pos, size)) return this.fail('file shorter than expected');
      at = pos - this.bufStart;
      const problem = batchProblem(this.buf, at, at + size);
      if (problem !== null) return this.fail(problem);
    }
    this.position = pos + size;
    const baseOffset = int64At(this.buf, at + BASE_OFFSET_OFFSET);
    return {
      position: pos,
      sizeBytes: size,
      baseOffset,
      lastOffset: baseOffset + lastOffsetDeltaOf(this.buf, at),
      maxTimestamp: int64At(this.buf, at + MAX_TIMESTAMP_OFFSET),
      leaderEpoch: leaderEpochOf(this.buf, at),
      recordCount: recordCountOf(this.buf, at),
    };
  }

  private fail(problem: string): null {
    this.problem = problem;
    return null;
  }

  /** Makes file bytes [pos, pos+len) available in buf; false if the file ends first. */
  private ensure(pos: number, len: number): boolean {
    if (pos >= this.bufStart && pos + len <= this.bufStart + this.bufLen) return true;
    if (len > this.buf.length) this.buf = Buffer.allocUnsafe(len);
    const want = Math.min(this.buf.length, this.end - pos);
    this.bufStart = pos;
    this.bufLen = readFully(this.fs, this.fd, this.buf, 0, want, pos);
    return this.bufLen >= len;
  }
}
