// The machinery shared by a segment's two sparse indexes (offset-index.ts,
// time-index.ts): fixed-size big-endian entries held in memory in a growing
// Buffer and written to their file on persist() (roll, flush, close) — never on
// the append path, which stays one write(2) per append.
//
// An index is derived data: the loader rebuilds it from the log whenever the
// file is missing or fails its sanity check, so the file only has to be right
// for segments below the recovery point, and persist(fsync) is part of every
// flush that moves the recovery point.
//
// Invariants: 0 <= persisted <= count; file bytes [0, persisted*entryBytes)
// equal the in-memory entries [0, persisted).

import type { FileSystem } from '../util/file-system.js';
import { writeFully, removeIfExists } from '../util/fs-util.js';

const INITIAL_CAPACITY_ENTRIES = 64;

export abstract class IndexFile {
  protected buf: Buffer;
  protected count = 0;
  /** Entries already in the file. */
  private persisted = 0;
  /** The file exists and holds the persisted prefix. */
  private onDisk = false;
  /** Some persisted bytes may not have been fsynced yet. */
  private unsynced = false;
  /** A truncation dropped persisted entries: the file is longer than the persisted prefix until the next persist. */
  private fileLonger = false;

  protected constructor(
    protected readonly fs: FileSystem,
    readonly file: string,
    readonly baseOffset: number,
    readonly entryBytes: number,
    /** Entries at which the index counts as full (the segment rolls); appends past it still work. */
    readonly maxEntries: number,
  ) {
    this.buf = Buffer.alloc(INITIAL_CAPACITY_ENTRIES * entryBytes);
  }

  get entries(): number {
    return this.count;
  }

  get sizeBytes(): number {
    return this.count * this.entryBytes;
  }

  isFull(): boolean {
    return this.count >= this.maxEntries;
  }

  /** True when the in-memory entries differ from the file. */
  get dirty(): boolean {
    return this.persisted !== this.count || this.fileLonger;
  }

  /** Whether the file exists (as far as this index knows: loaded or persisted). */
  get hasFile(): boolean {
    return this.onDisk;
  }

  clear(): void {
    this.truncateEntries(0);
  }

  /**
   * Replaces the in-memory entries with the file's. Returns a problem string
   * (missing file, torn entry) or null; on a problem the index is left empty.
   */
  loadFromFile(): string | null {
    let data: Buffer;
    try {
      data = this.fs.readFileSync(this.file);
    } catch (err) {
      this.truncateEntries(0);
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
      throw err;
    }
    if (data.length % this.entryBytes !== 0) {
      this.truncateEntries(0);
      return `size ${data.length} is not a multiple of ${this.entryBytes}`;
    }
    this.buf = data.length > 0 ? data : Buffer.alloc(INITIAL_CAPACITY_ENTRIES * this.entryBytes);
    this.count = data.length / this.entryBytes;
    this.persisted = this.count;
    this.onDisk = true;
    return null;
  }

  /** Writes the entries not yet in the file (after shrinking it to the persisted prefix). */
  persist(fsync: boolean): void {
    if (!this.dirty && this.onDisk && !this.fileLonger && !(fsync && this.unsynced)) return;
    const fs = this.fs;
    const fd = fs.openSync(this.file, 'c');
    try {
      fs.ftruncateSync(fd, this.persisted * this.entryBytes);
      const from = this.persisted * this.entryBytes;
      writeFully(fs, fd, this.buf, from, this.count * this.entryBytes - from, from);
      if (fsync) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    this.persisted = this.count;
    this.onDisk = true;
    this.fileLonger = false;
    this.unsynced = !fsync;
  }

  /** fsync of the file in the background; a file deleted meanwhile is not an error. */
  fsyncAsync(): Promise<void> {
    return this.fs.fsyncPath(this.file).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    });
  }

  deleteFile(): void {
    removeIfExists(this.fs, this.file);
    this.persisted = 0;
    this.onDisk = false;
    this.fileLonger = false;
  }

  /** Byte position in `buf` of a new entry at the end (grows the buffer as needed). */
  protected pushEntry(): number {
    const at = this.count * this.entryBytes;
    if (at + this.entryBytes > this.buf.length) {
      const bigger = Buffer.alloc(this.buf.length * 2);
      this.buf.copy(bigger, 0, 0, at);
      this.buf = bigger;
    }
    this.count++;
    return at;
  }

  protected truncateEntries(n: number): void {
    this.count = Math.min(this.count, n);
    if (this.count < this.persisted) this.fileLonger = this.onDisk;
    this.persisted = Math.min(this.persisted, this.count);
  }

  /** Largest i in [0, count) with keyAt(i) <= target, or -1; keyAt must be increasing. */
  protected floorIndex(keyAt: (i: number) => number, target: number): number {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (keyAt(mid) <= target) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** Smallest i in [0, count) with keyAt(i) >= target, or count; keyAt must be non-decreasing. */
  protected ceilIndex(keyAt: (i: number) => number, target: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keyAt(mid) < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
