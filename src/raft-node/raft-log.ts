// The Raft log on disk: an ordered list of segment files (raft-log-segment.ts)
// in the metadata directory. Owns segment rolling, suffix truncation on
// conflict, compaction after a snapshot, group-commit fsync, and the loading
// of all segments at recovery, including their reconciliation with the
// snapshot recovery picked.
//
// Invariants:
//   - `segments` is never empty, sorted by base, and contiguous: each base is
//     the previous segment's last index + 1. Only the last (active) segment
//     is written to, and only it may be empty.
//   - Terms never decrease along the log.
//   - lastIndex() ≥ the index of the newest saved snapshot (after a snapshot
//     past the end, the log restarts with an empty segment right after it).
//   - `unsynced` holds every segment written since the last sync(); a
//     created or deleted file sets `dirDirty` until the directory is fsynced.

import path from 'node:path';
import { assert } from '../util/assert.js';
import { Errors, SluiceError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { Entry } from '../raft/types.js';
import type { FileSystem } from '../util/file-system.js';
import { fsyncDir } from '../util/fs-util.js';
import { encodeEntries } from './entry-codec.js';
import { LogSegment, parseSegmentName, segmentName } from './raft-log-segment.js';

export interface RaftLogOptions {
  readonly fs: FileSystem;
  /** A segment rolls once the next batch would take it past this size (one batch may exceed it). */
  readonly segmentBytesMax: number;
  readonly logger: Logger;
}

/** Position of the snapshot the log continues from (index 0: no snapshot). */
export interface SnapshotPoint {
  readonly index: number;
  readonly term: number;
}

export class RaftLog {
  private readonly unsynced = new Set<LogSegment>();
  private dirDirty = false;

  private constructor(
    private readonly dir: string,
    private segments: LogSegment[],
    private readonly opts: RaftLogOptions,
  ) {}

  /** Loads every segment, verifying it, and returns the entries after `snapshot`. */
  static open(dir: string, snapshot: SnapshotPoint, opts: RaftLogOptions): { log: RaftLog; entries: Entry[] } {
    const bases = listSegmentBases(opts.fs, dir);
    const log = new RaftLog(dir, [], opts);
    // Segments wholly below the snapshot are left over from a compaction a crash interrupted. The
    // segment holding the snapshot's own index stays, so its term can be checked against the snapshot.
    while (bases.length >= 2 && (bases[1] ?? 0) <= snapshot.index) log.unlinkSegmentFile(bases.shift() ?? 0);
    let entries = log.loadSegments(bases);
    if (log.segments.length === 0) {
      log.restartAfter(snapshot.index); // a fresh log: its first segment starts after the snapshot
    } else if (!log.matchesSnapshot(snapshot)) {
      opts.logger.warn({ dir, snapshotIndex: snapshot.index, firstIndex: log.segments[0]?.base, lastIndex: log.lastIndex() },
        'raft log does not continue the snapshot (an interrupted snapshot install): discarding the log');
      log.restartAfter(snapshot.index);
      entries = [];
    }
    log.syncDirIfDirty();
    return { log, entries: entries.filter((e) => e.index > snapshot.index) };
  }

  /** Index of the last entry (or the snapshot index when the log restarted after it). */
  lastIndex(): number {
    return this.active().lastIndex();
  }

  /** Term of the entry at `index`, or undefined if the log does not hold it. */
  termAt(index: number): number | undefined {
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const segment = this.segments[i];
      if (segment && segment.base <= index) return segment.termAt(index);
    }
    return undefined;
  }

  /** Buffered append (no fsync): entries must start at lastIndex() + 1. */
  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    assert(entries[0]?.index === this.lastIndex() + 1, 'raft log appends are contiguous');
    const { buf, offsets } = encodeEntries(entries);
    let active = this.active();
    if (active.count > 0 && active.bytes + buf.length > this.opts.segmentBytesMax) active = this.roll();
    active.append(buf, offsets, entries);
    this.unsynced.add(active);
  }

  /** Removes entries ≥ index, durably (conflicts are rare; a durable cut keeps recovery simple). */
  truncateFrom(index: number): void {
    assert(index >= (this.segments[0]?.base ?? 1) && index <= this.lastIndex(), `cannot truncate the raft log from ${index}`);
    while (this.segments.length > 1 && this.active().base > index) this.removeSegment(this.segments.length - 1);
    // The cut is fsynced, which makes the active segment's earlier entries durable: entries of the segments
    // before it must be on disk first, or a crash leaves a gap (or a torn segment that is not the last).
    this.syncSegments();
    this.active().truncateFrom(index);
    this.syncDirIfDirty();
  }

  /**
   * Drops what a snapshot at (index, term) covers. If the log holds that entry
   * with that term, only whole segments at or below it go (the suffix stays
   * valid); otherwise the log conflicts with or ends before the snapshot and
   * restarts empty right after it (Raft §7).
   */
  compactTo(index: number, term: number): void {
    const first = this.segments[0]?.base ?? 1;
    if (index === first - 1) return; // already starts right after it
    if (this.termAt(index) === term) {
      while (this.segments.length > 1 && (this.segments[1]?.base ?? 0) <= index + 1) this.removeSegment(0);
    } else {
      this.restartAfter(index);
    }
    this.syncDirIfDirty();
  }

  /** Group commit: fsyncs every segment written since the last sync, then the directory if it changed. */
  sync(): void {
    this.syncSegments();
    this.syncDirIfDirty();
  }

  private syncSegments(): void {
    const active = this.active();
    for (const segment of this.unsynced) {
      segment.sync();
      if (segment !== active) segment.closeFd();
    }
    this.unsynced.clear();
  }

  close(): void {
    for (const segment of this.segments) segment.closeFd();
  }

  private loadSegments(bases: number[]): Entry[] {
    if (bases.length === 0) return [];
    const entries: Entry[] = [];
    let prevTerm = 0;
    for (let i = 0; i < bases.length; i++) {
      const base = bases[i] ?? 0;
      const prev = this.segments[this.segments.length - 1];
      if (prev && base !== prev.lastIndex() + 1) {
        throw layoutError(this.dir, `segment ${segmentName(base)} does not follow ${segmentName(prev.base)} (ends at ${prev.lastIndex()})`);
      }
      const loaded = LogSegment.recover(this.opts.fs, this.dir, base, { isLast: i === bases.length - 1, prevTerm, logger: this.opts.logger });
      this.segments.push(loaded.segment);
      for (const entry of loaded.entries) entries.push(entry);
      prevTerm = loaded.segment.lastTerm() ?? prevTerm;
    }
    return entries;
  }

  /** Whether the loaded log continues `snapshot`; throws if a gap lost entries. */
  private matchesSnapshot(snapshot: SnapshotPoint): boolean {
    const first = this.segments[0]?.base ?? 1;
    if (first > snapshot.index + 1) {
      throw layoutError(this.dir, `the log starts at index ${first} but the newest usable snapshot ends at ${snapshot.index}: entries are missing`);
    }
    if (first === snapshot.index + 1) {
      const firstTerm = this.termAt(first);
      if (firstTerm !== undefined && firstTerm < snapshot.term) {
        throw layoutError(this.dir, `entry ${first} has term ${firstTerm}, below the snapshot's term ${snapshot.term}`);
      }
      return true;
    }
    return this.termAt(snapshot.index) === snapshot.term;
  }

  private restartAfter(index: number): void {
    while (this.segments.length > 0) this.removeSegment(this.segments.length - 1);
    this.segments = [LogSegment.create(this.opts.fs, this.dir, index + 1)];
    this.dirDirty = true;
  }

  private roll(): LogSegment {
    const previous = this.active();
    if (!this.unsynced.has(previous)) previous.closeFd();
    const next = LogSegment.create(this.opts.fs, this.dir, this.lastIndex() + 1);
    this.segments.push(next);
    this.dirDirty = true;
    return next;
  }

  private removeSegment(i: number): void {
    const [segment] = this.segments.splice(i, 1);
    assert(segment !== undefined, 'segment to remove exists');
    this.unsynced.delete(segment);
    segment.remove();
    this.dirDirty = true;
  }

  private unlinkSegmentFile(base: number): void {
    this.opts.fs.unlinkSync(path.join(this.dir, segmentName(base)));
    this.dirDirty = true;
  }

  private syncDirIfDirty(): void {
    if (!this.dirDirty) return;
    // The directory fsync makes a segment created by a roll durable by name: what was written before it goes first.
    this.syncSegments();
    fsyncDir(this.opts.fs, this.dir);
    this.dirDirty = false;
  }

  private active(): LogSegment {
    const segment = this.segments[this.segments.length - 1];
    assert(segment !== undefined, 'the raft log always has an active segment');
    return segment;
  }
}

function listSegmentBases(fs: FileSystem, dir: string): number[] {
  const bases: number[] = [];
  for (const name of fs.readdirSync(dir)) {
    const base = parseSegmentName(name);
    if (base !== undefined) bases.push(base);
  }
  return bases.sort((a, b) => a - b);
}

function layoutError(dir: string, detail: string): SluiceError {
  return new SluiceError(Errors.CORRUPT_MESSAGE, `raft log in ${dir} is inconsistent: ${detail}`, { dir });
}
