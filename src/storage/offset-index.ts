// Sparse offset index of one segment (`<base>.index`): entries map the base
// offset of a batch (stored relative to the segment's base offset, int32) to the
// batch's byte position in the `.log` file (int32), 8 bytes big-endian each.
// One entry is added per `index.interval.bytes` of log, so a lookup lands at
// most about that many bytes before the wanted batch and a short header scan
// finishes the job.
//
// Invariants: relative offsets and positions both strictly increase; every
// position is the start of a batch whose base offset is the entry's offset.
// (Kafka keys its entries by a batch's last offset; the base offset works the
// same for lookups and makes truncation at a batch boundary exact.)

import type { FileSystem } from '../util/file-system.js';
import { AssertionError } from '../util/assert.js';
import { IndexFile } from './index-file.js';

export const OFFSET_INDEX_ENTRY_BYTES = 8;
const INT32_MAX = 2 ** 31 - 1;

export interface OffsetPosition {
  offset: number;
  position: number;
}

export class OffsetIndex extends IndexFile {
  constructor(fs: FileSystem, file: string, baseOffset: number, maxIndexBytes: number) {
    super(fs, file, baseOffset, OFFSET_INDEX_ENTRY_BYTES, Math.floor(maxIndexBytes / OFFSET_INDEX_ENTRY_BYTES));
  }

  private relAt = (i: number): number => this.buf.readInt32BE(i * OFFSET_INDEX_ENTRY_BYTES);
  private posAt = (i: number): number => this.buf.readInt32BE(i * OFFSET_INDEX_ENTRY_BYTES + 4);

  entryAt(i: number): OffsetPosition {
    if (!(i >= 0 && i < this.count)) throw new AssertionError(`offset index entry ${i} of ${this.count}`);
    return { offset: this.baseOffset + this.relAt(i), position: this.posAt(i) };
  }

  lastEntry(): OffsetPosition | null {
    return this.count === 0 ? null : this.entryAt(this.count - 1);
  }

  append(offset: number, position: number): void {
    const rel = offset - this.baseOffset;
    // Checked on every append, so the messages are built only on failure.
    if (!(rel >= 0 && rel <= INT32_MAX && position >= 0 && position <= INT32_MAX)) {
      throw new AssertionError(`index entry (${offset}, ${position}) out of range`);
    }
    if (!(this.count === 0 || (rel > this.relAt(this.count - 1) && position > this.posAt(this.count - 1)))) {
      throw new AssertionError(`index entries must increase: (${offset}, ${position}) after ${JSON.stringify(this.lastEntry())}`);
    }
    const at = this.pushEntry();
    this.buf.writeInt32BE(rel, at);
    this.buf.writeInt32BE(position, at + 4);
  }

  /** The entry with the largest offset <= target, or (baseOffset, 0) when there is none. */
  lookup(targetOffset: number): OffsetPosition {
    const i = this.floorIndex(this.relAt, targetOffset - this.baseOffset);
    return i < 0 ? { offset: this.baseOffset, position: 0 } : this.entryAt(i);
  }

  /** Drops the entries whose offset is >= `offset`. */
  truncateTo(offset: number): void {
    this.truncateEntries(this.ceilIndex(this.relAt, offset - this.baseOffset));
  }

  /** Why these entries cannot belong to a log of `logSizeBytes` bytes, or null. */
  sanityProblem(logSizeBytes: number): string | null {
    for (let i = 0; i < this.count; i++) {
      const rel = this.relAt(i);
      const pos = this.posAt(i);
      if (rel < 0 || pos < 0 || pos >= logSizeBytes) return `entry ${i} (${rel}, ${pos}) outside the segment`;
      if (i > 0 && (rel <= this.relAt(i - 1) || pos <= this.posAt(i - 1))) return `entry ${i} does not increase`;
    }
    return null;
  }
}
