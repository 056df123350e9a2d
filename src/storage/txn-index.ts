// A segment's aborted-transaction index, `<base>.txnindex` (Kafka's
// TransactionIndex, same 34-byte entries): one entry per ABORT marker in the
// segment, saying which producer's records in [firstOffset, lastOffset] (the
// marker's offset) a read_committed consumer must drop, and the partition's
// last stable offset right after that abort (the first offset of another
// transaction still open then, else lastOffset + 1) — which tells a fetch it
// can stop looking at later segments (PartitionLog.abortedTransactions).
//
// Entry layout (big-endian): version int16 (0) | producerId int64 |
// firstOffset int64 | lastOffset int64 | lastStableOffset int64.
//
// Like the offset and time indexes it is derived data, written to its file
// on roll, flush and close (index-file.ts) and never on the append path. The
// loader cuts entries past what recovery kept; whatever a crash lost is put
// back when the partition's producer state is rebuilt from the log, which
// resets every segment's entries from the markers it read
// (replication/producer-state-store.ts) — and a crash always forces that
// rebuild, since only a clean shutdown leaves a producer-state snapshot.
//
// Invariants: entries are in increasing lastOffset order, each with
// firstOffset <= lastOffset and lastOffset within the segment.

import type { FileSystem } from '../util/file-system.js';
import { IndexFile } from './index-file.js';

export const TXN_INDEX_FILE_SUFFIX = '.txnindex';
export const TXN_INDEX_ENTRY_BYTES = 34;
const TXN_INDEX_VERSION = 0;

/** An aborted transaction: the producer's records in [firstOffset, lastOffset] are not to be read. */
export interface AbortedTxn {
  readonly producerId: number;
  readonly firstOffset: number;
  /** The offset of its ABORT marker. */
  readonly lastOffset: number;
  readonly lastStableOffset: number;
}

function int64(buf: Buffer, at: number): number {
  return Number(buf.readBigInt64BE(at));
}

export class TransactionIndex extends IndexFile {
  constructor(fs: FileSystem, file: string, baseOffset: number) {
    super(fs, file, baseOffset, TXN_INDEX_ENTRY_BYTES, Number.MAX_SAFE_INTEGER);
  }

  entryAt(i: number): AbortedTxn {
    const at = i * TXN_INDEX_ENTRY_BYTES;
    return {
      producerId: int64(this.buf, at + 2),
      firstOffset: int64(this.buf, at + 10),
      lastOffset: int64(this.buf, at + 18),
      lastStableOffset: int64(this.buf, at + 26),
    };
  }

  all(): AbortedTxn[] {
    const out: AbortedTxn[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.entryAt(i));
    return out;
  }

  get lastOffset(): number {
    return this.count === 0 ? -1 : int64(this.buf, (this.count - 1) * TXN_INDEX_ENTRY_BYTES + 18);
  }

  /** Adds an abort; false (and nothing added) when it is not past the last entry's marker (already indexed). */
  append(e: AbortedTxn): boolean {
    if (e.lastOffset <= this.lastOffset) return false;
    const at = this.pushEntry();
    this.buf.writeInt16BE(TXN_INDEX_VERSION, at);
    this.buf.writeBigInt64BE(BigInt(e.producerId), at + 2);
    this.buf.writeBigInt64BE(BigInt(e.firstOffset), at + 10);
    this.buf.writeBigInt64BE(BigInt(e.lastOffset), at + 18);
    this.buf.writeBigInt64BE(BigInt(e.lastStableOffset), at + 26);
    return true;
  }

  /** Drops the entries whose marker is at or past `offset`. */
  truncateTo(offset: number): void {
    let n = this.count;
    while (n > 0 && int64(this.buf, (n - 1) * TXN_INDEX_ENTRY_BYTES + 18) >= offset) n--;
    this.truncateEntries(n);
  }

  /** Replaces every entry (they must be in marker order); returns whether anything changed. */
  replaceAll(entries: readonly AbortedTxn[]): boolean {
    const now = this.all();
    if (now.length === entries.length && now.every((e, i) => sameTxn(e, entries[i]!))) return false;
    this.truncateEntries(0);
    for (const e of entries) this.append(e);
    return true;
  }

  /**
   * Why the loaded entries cannot be this segment's (which holds offsets
   * below `nextOffset`), or null: a bad version, entries out of order or
   * outside the segment.
   */
  sanityProblem(nextOffset: number): string | null {
    let prev = -1;
    for (let i = 0; i < this.count; i++) {
      const version = this.buf.readInt16BE(i * TXN_INDEX_ENTRY_BYTES);
      const e = this.entryAt(i);
      if (version !== TXN_INDEX_VERSION) return `entry ${i} has version ${version}`;
      if (e.lastOffset <= prev || e.lastOffset < this.baseOffset || e.firstOffset > e.lastOffset || e.producerId < 0) {
        return `entry ${i} [${e.firstOffset}, ${e.lastOffset}] of producer ${e.producerId} is out of order`;
      }
      if (e.lastOffset >= nextOffset) return `entry ${i} ends at ${e.lastOffset}, past the segment's end ${nextOffset}`;
      prev = e.lastOffset;
    }
    return null;
  }
}

function sameTxn(a: AbortedTxn, b: AbortedTxn): boolean {
  return a.producerId === b.producerId && a.firstOffset === b.firstOffset && a.lastOffset === b.lastOffset && a.lastStableOffset === b.lastStableOffset;
}
