// The leader-epoch cache of one partition log: for each leader epoch that
// wrote to the log, the offset of its first batch (Kafka's
// LeaderEpochFileCache). Followers use endOffsetForEpoch (KIP-101, KIP-279)
// to find where their log diverges from a new leader's and truncate there.
//
// Invariants: entries are sorted with strictly increasing epochs AND strictly
// increasing start offsets; every start offset is < the log end offset and the
// first one is >= the log start offset once the owner has applied
// truncateFromEnd/truncateFromStart.
//
// The cache is derived from the batches' partitionLeaderEpoch fields, so a
// missing or malformed checkpoint file can be rebuilt by scanning the log (the
// loader does that). Changes are persisted by checkpoint(), which the owner
// calls after each operation that may have changed the entries.

import { assert } from '../util/assert.js';
import { Errors, SluiceError } from '../util/errors.js';
import { NodeFileSystem, type FileSystem } from '../util/file-system.js';
import { readEpochCheckpoint, writeEpochCheckpoint, type EpochEntry } from './checkpoint.js';

export const UNDEFINED_EPOCH = -1;
export const UNDEFINED_EPOCH_OFFSET = -1;

export interface EpochEndOffset {
  epoch: number;
  endOffset: number;
}

export class LeaderEpochCache {
  private entries: EpochEntry[];
  private dirty = false;

  /** `file` null keeps the cache in memory only (tests, tools); a file is written through `fs`. */
  constructor(readonly file: string | null, entries: readonly EpochEntry[] = [], private readonly fs: FileSystem = NodeFileSystem) {
    this.entries = entries.map((e) => ({ ...e }));
    this.checkInvariant();
  }

  /** Loads the checkpoint file; throws KAFKA_STORAGE_ERROR if it is malformed or out of order. */
  static load(file: string, fs: FileSystem = NodeFileSystem): LeaderEpochCache {
    const entries = readEpochCheckpoint(fs, file);
    if (!isOrdered(entries)) {
      throw new SluiceError(Errors.KAFKA_STORAGE_ERROR, `leader epoch checkpoint ${file} is out of order`, { file });
    }
    return new LeaderEpochCache(file, entries, fs);
  }

  all(): readonly EpochEntry[] {
    return this.entries;
  }

  latestEpoch(): number {
    return this.entries[this.entries.length - 1]?.epoch ?? UNDEFINED_EPOCH;
  }

  latestEntry(): EpochEntry | undefined {
    return this.entries[this.entries.length - 1];
  }

  /**
   * Records that `epoch` starts at `startOffset`. A no-op if it is the latest
   * epoch already starting at or before that offset; otherwise any entries with
   * an epoch >= `epoch` or a start offset >= `startOffset` are dropped first
   * (they conflict with the new one), as in Kafka.
   */
  assign(epoch: number, startOffset: number): void {
    assert(epoch >= 0 && startOffset >= 0, `assign(${epoch}, ${startOffset})`);
    const latest = this.latestEntry();
    if (latest !== undefined && latest.epoch === epoch && latest.startOffset <= startOffset) return;
    this.entries = this.entries.filter((e) => e.epoch < epoch && e.startOffset < startOffset);
    this.entries.push({ epoch, startOffset });
    this.dirty = true;
  }

  /**
   * The largest epoch <= `requestedEpoch` and the offset where it ended: the
   * start of the next higher epoch, or `logEndOffset` for the latest epoch
   * (KIP-279). (UNDEFINED, UNDEFINED) when the requested epoch is unknown and
   * newer than every cached one, or is UNDEFINED itself.
   */
  endOffsetForEpoch(requestedEpoch: number, logEndOffset: number): EpochEndOffset {
    const undefinedResult = { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    if (requestedEpoch === UNDEFINED_EPOCH) return undefinedResult;
    const latest = this.latestEntry();
    if (latest !== undefined && latest.epoch === requestedEpoch) return { epoch: requestedEpoch, endOffset: logEndOffset };
    const higher = this.entries.find((e) => e.epoch > requestedEpoch);
    if (higher === undefined) return undefinedResult;
    const floor = this.entries.filter((e) => e.epoch <= requestedEpoch).pop();
    // Older than every cached epoch: the requester's epoch ended where our first one began.
    if (floor === undefined) return { epoch: requestedEpoch, endOffset: higher.startOffset };
    return { epoch: floor.epoch, endOffset: higher.startOffset };
  }

  /** The epoch of the leader that wrote `offset` (the floor entry by start offset), or UNDEFINED. */
  epochForOffset(offset: number): number {
    let epoch = UNDEFINED_EPOCH;
    for (const e of this.entries) {
      if (e.startOffset > offset) break;
      epoch = e.epoch;
    }
    return epoch;
  }

  /** After the log is truncated to end at `endOffset`: drop epochs starting at or after it. */
  truncateFromEnd(endOffset: number): void {
    const kept = this.entries.filter((e) => e.startOffset < endOffset);
    if (kept.length !== this.entries.length) {
      this.entries = kept;
      this.dirty = true;
    }
  }

  /**
   * After the log start moves to `startOffset`: drop epochs that started before
   * it, keeping the last of them (it still covers the new first offset) with its
   * start moved up to `startOffset`.
   */
  truncateFromStart(startOffset: number): void {
    const firstAfter = this.entries.findIndex((e) => e.startOffset > startOffset);
    const cut = firstAfter < 0 ? this.entries.length : firstAfter;
    if (cut === 0) return;
    const covering = this.entries[cut - 1]!;
    if (cut === 1 && covering.startOffset === startOffset) return;
    this.entries = [{ epoch: covering.epoch, startOffset }, ...this.entries.slice(cut)];
    this.dirty = true;
  }

  clear(): void {
    if (this.entries.length === 0) return;
    this.entries = [];
    this.dirty = true;
  }

  /** Whether checkpoint() would write the file. */
  get unwritten(): boolean {
    return this.file !== null && this.dirty;
  }

  /** Writes the checkpoint file if anything changed since the last write (or if `force`). */
  checkpoint(force = false): void {
    this.checkInvariant();
    if (this.file === null || (!this.dirty && !force)) return;
    writeEpochCheckpoint(this.fs, this.file, this.entries);
    this.dirty = false;
  }

  private checkInvariant(): void {
    assert(isOrdered(this.entries), `leader epoch entries out of order: ${JSON.stringify(this.entries)}`);
  }
}

function isOrdered(entries: readonly EpochEntry[]): boolean {
  for (let i = 1; i < entries.length; i++) {
    const a = entries[i - 1]!;
    const b = entries[i]!;
    if (!(a.epoch < b.epoch && a.startOffset < b.startOffset)) return false;
  }
  return true;
}
