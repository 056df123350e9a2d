// Sparse time index of one segment (`<base>.timeindex`): entries map a
// timestamp (int64 ms) to the base offset of the first batch whose max
// timestamp reached it (int32, relative to the segment's base offset), 12
// bytes big-endian each. An entry is added next to each offset-index entry
// when the segment's max timestamp so far has grown, plus one final entry when
// the segment stops being active, so the last entry carries the segment's
// largest timestamp (retention reads it from there after a restart).
//
// Invariants: timestamps strictly increase and are >= 0; offsets never
// decrease. Because an entry's offset is the *first* batch reaching its
// timestamp, every batch before it has a smaller max timestamp — which is what
// makes "scan forward from the floor entry" find the first batch >= a target.

import type { FileSystem } from '../util/file-system.js';
import { AssertionError } from '../util/assert.js';
import { IndexFile } from './index-file.js';

export const TIME_INDEX_ENTRY_BYTES = 12;
export const NO_TIMESTAMP = -1;
const TWO_POW_32 = 2 ** 32;
const INT32_MAX = 2 ** 31 - 1;

export interface TimestampOffset {
  timestamp: number;
  offset: number;
}

export class TimeIndex extends IndexFile {
  constructor(fs: FileSystem, file: string, baseOffset: number, maxIndexBytes: number) {
    super(fs, file, baseOffset, TIME_INDEX_ENTRY_BYTES, Math.floor(maxIndexBytes / TIME_INDEX_ENTRY_BYTES));
  }

  // Timestamps are non-negative and below 2^53, so two uint32 halves are exact
  // and avoid a BigInt per access.
  private tsAt = (i: number): number => {
    const at = i * TIME_INDEX_ENTRY_BYTES;
    return this.buf.readInt32BE(at) * TWO_POW_32 + this.buf.readUInt32BE(at + 4);
  };
  private relAt = (i: number): number => this.buf.readInt32BE(i * TIME_INDEX_ENTRY_BYTES + 8);

  entryAt(i: number): TimestampOffset {
    if (!(i >= 0 && i < this.count)) throw new AssertionError(`time index entry ${i} of ${this.count}`);
    return { timestamp: this.tsAt(i), offset: this.baseOffset + this.relAt(i) };
  }

  lastEntry(): TimestampOffset | null {
    return this.count === 0 ? null : this.entryAt(this.count - 1);
  }

  /** Appends (timestamp, offset) if the timestamp is larger than the last entry's; returns whether it did. */
  maybeAppend(timestamp: number, offset: number): boolean {
    if (timestamp <= (this.count === 0 ? NO_TIMESTAMP : this.tsAt(this.count - 1))) return false;
    const rel = offset - this.baseOffset;
    if (!(Number.isSafeInteger(timestamp) && rel >= 0 && rel <= INT32_MAX)) {
      throw new AssertionError(`time index entry (${timestamp}, ${offset}) out of range`);
    }
    if (!(this.count === 0 || rel >= this.relAt(this.count - 1))) throw new AssertionError(`time index offsets must not decrease (${offset})`);
    const at = this.pushEntry();
    const hi = Math.floor(timestamp / TWO_POW_32);
    this.buf.writeInt32BE(hi, at);
    this.buf.writeUInt32BE(timestamp - hi * TWO_POW_32, at + 4);
    this.buf.writeInt32BE(rel, at + 8);
    return true;
  }

  /** The entry with the largest timestamp <= target, or (NO_TIMESTAMP, baseOffset) when there is none. */
  lookup(targetTimestamp: number): TimestampOffset {
    const i = this.floorIndex(this.tsAt, targetTimestamp);
    return i < 0 ? { timestamp: NO_TIMESTAMP, offset: this.baseOffset } : this.entryAt(i);
  }

  /** Drops the entries whose offset is >= `offset`. */
  truncateTo(offset: number): void {
    this.truncateEntries(this.ceilIndex(this.relAt, offset - this.baseOffset));
  }

  /** Why these entries cannot belong to a segment ending before `nextOffset`, or null. */
  sanityProblem(nextOffset: number): string | null {
    for (let i = 0; i < this.count; i++) {
      const ts = this.tsAt(i);
      const rel = this.relAt(i);
      if (ts < 0 || rel < 0 || this.baseOffset + rel >= nextOffset) {
        return `entry ${i} (${ts}, ${rel}) outside the segment`;
      }
      if (i > 0 && (ts <= this.tsAt(i - 1) || rel < this.relAt(i - 1))) return `entry ${i} is out of order`;
    }
    return null;
  }
}
