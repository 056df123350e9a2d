// The durable state of one Raft node: log segments, `quorum-state` and
// snapshot checkpoints in `<data-dir>/__cluster_metadata-0/`. The node driver
// calls appendEntries / setHardState / saveSnapshot for each Ready and then
// one sync() per batch of Readys (group commit); nothing it promises to peers
// may leave the node before that sync() returns.
//
// Recovery (open) is the one loader of this state, in this order:
//   1. delete `*.tmp` leftovers of interrupted atomic writes;
//   2. read quorum-state (absent: term 0, no vote, commit 0);
//   3. pick the newest checkpoint whose CRC verifies;
//   4. load and verify every segment (raft-log.ts): a torn tail is cut, any
//      other damage throws naming file and byte offset; a log that does not
//      continue the snapshot (an interrupted install) is discarded;
//   5. repair the hard state so it is consistent with what is on disk: the
//      term is at least the last entry's (a crash between the log fsync and
//      the quorum-state write can leave it behind; no vote was sent in the
//      newer term, since votes are sent only after sync), and the commit
//      index is clamped to [snapshot index, last index].
//
// Invariants: lastIndex() ≥ snapshot index; entries ≤ the snapshot index are
// never handed out again; after an I/O error the disk is failed and every
// later call throws (after a failed fsync the page cache cannot be trusted).

import path from 'node:path';
import { assert, AssertionError } from '../util/assert.js';
import { Errors, SluiceError } from '../util/errors.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { NO_NODE, type Entry, type HardState, type Snapshot } from '../raft/types.js';
import { NodeFileSystem, type FileSystem } from '../util/file-system.js';
import { fsyncDir, removeTempFiles } from '../util/fs-util.js';
import { readQuorumState, writeQuorumState } from './quorum-state.js';
import { RaftLog, type SnapshotPoint } from './raft-log.js';
import { SnapshotStore } from './snapshot-store.js';

/** Segment size at which the log rolls (Kafka's minimum metadata.log.segment.bytes). */
export const RAFT_SEGMENT_BYTES_MAX_DEFAULT = 8 * 1024 * 1024;

export interface RaftDurableState {
  hardState: HardState;
  snapshot?: Snapshot;
  /** Contiguous, in index order, starting right after the snapshot (or at 1). */
  entries: Entry[];
}

export interface RaftDiskOptions {
  segmentBytesMax?: number;
  logger?: Logger;
  /** The disk (default the real one, NodeFileSystem; the simulation passes its own). */
  fs?: FileSystem;
}

const ZERO_HARD_STATE: HardState = { term: 0, vote: NO_NODE, commit: 0 };

export class RaftDisk {
  /** What recovery found on open. */
  readonly loaded: RaftDurableState;
  /** The hard state to write at the next sync(). */
  private pendingHardState: HardState;
  /** What the quorum-state file holds (undefined: no file yet). */
  private writtenHardState: HardState | undefined;
  private snapshotPoint: SnapshotPoint;
  private failure: SluiceError | undefined;
  private closed = false;

  private constructor(
    private readonly fs: FileSystem,
    readonly dir: string,
    private readonly log: RaftLog,
    private readonly snapshots: SnapshotStore,
    loaded: RaftDurableState,
    written: HardState | undefined,
  ) {
    this.loaded = loaded;
    this.pendingHardState = loaded.hardState;
    this.writtenHardState = written;
    this.snapshotPoint = loaded.snapshot ? pointOf(loaded.snapshot) : { index: 0, term: 0 };
  }

  /** Opens (creating if absent) the metadata directory and runs recovery. */
  static open(dir: string, opts: RaftDiskOptions = {}): RaftDisk {
    const logger = opts.logger ?? silentLogger;
    const segmentBytesMax = opts.segmentBytesMax ?? RAFT_SEGMENT_BYTES_MAX_DEFAULT;
    const fs = opts.fs ?? NodeFileSystem;
    assert(Number.isSafeInteger(segmentBytesMax) && segmentBytesMax > 0, `bad segmentBytesMax ${segmentBytesMax}`);
    try {
      ensureDir(fs, dir);
      removeTempFiles(fs, dir, logger);
      const written = readQuorumState(dir, fs);
      const snapshots = new SnapshotStore(dir, logger, fs);
      const snapshot = snapshots.loadNewest();
      const point = snapshot ? pointOf(snapshot) : { index: 0, term: 0 };
      const { log, entries } = RaftLog.open(dir, point, { fs, segmentBytesMax, logger });
      const hardState = repairHardState(written ?? ZERO_HARD_STATE, point, log, logger);
      const loaded: RaftDurableState = snapshot ? { hardState, snapshot, entries } : { hardState, entries };
      logger.info({ dir, ...hardState, snapshotIndex: point.index, entries: entries.length, lastIndex: log.lastIndex() },
        'raft durable state recovered');
      return new RaftDisk(fs, dir, log, snapshots, loaded, written);
    } catch (err) {
      throw err instanceof AssertionError ? err : asSluiceError(err, `open ${dir}`);
    }
  }

  /** Index of the last entry, or the snapshot index when no entry follows it. */
  lastIndex(): number {
    const last = this.log.lastIndex();
    assert(last >= this.snapshotPoint.index, 'the log never ends before the snapshot');
    return last;
  }

  /**
   * Buffered append (one write, no fsync). An entry whose index is already in
   * the log replaces it and everything after it (suffix truncation).
   */
  appendEntries(entries: readonly Entry[]): void {
    this.checkUsable();
    if (entries.length === 0) return;
    this.checkAppend(entries);
    const first = entries[0]?.index ?? 0;
    this.guard('append to the raft log', () => {
      if (first <= this.log.lastIndex()) this.log.truncateFrom(first);
      this.log.append(entries);
    });
  }

  /** Remembered; written atomically at the next sync(). */
  setHardState(hs: HardState): void {
    this.checkUsable();
    assert(isCount(hs.term) && isCount(hs.vote) && isCount(hs.commit), `bad hard state ${JSON.stringify(hs)}`);
    this.pendingHardState = { term: hs.term, vote: hs.vote, commit: hs.commit };
  }

  /** Writes the checkpoint durably now, then drops the log it covers. */
  saveSnapshot(snap: Snapshot): void {
    this.checkUsable();
    assert(snap.meta.index >= this.snapshotPoint.index, `snapshot ${snap.meta.index} is older than ${this.snapshotPoint.index}`);
    this.guard('save a raft snapshot', () => {
      this.snapshots.save(snap);
      this.log.compactTo(snap.meta.index, snap.meta.term);
      this.snapshotPoint = pointOf(snap);
    });
  }

  /** Group commit: fsync log writes since the last sync, then quorum-state if it changed. */
  sync(): void {
    this.checkUsable();
    this.guard('sync the raft log', () => {
      this.log.sync();
      const pending = this.pendingHardState;
      if (this.writtenHardState && sameHardState(pending, this.writtenHardState)) return;
      writeQuorumState(this.dir, pending, this.fs);
      this.writtenHardState = pending;
    });
  }

  /** Syncs what is outstanding (unless the disk has failed) and closes every file. */
  close(): void {
    if (this.closed) return;
    try {
      if (!this.failure) this.sync();
    } finally {
      this.closed = true;
      this.log.close();
    }
  }

  private checkAppend(entries: readonly Entry[]): void {
    const first = entries[0];
    assert(first !== undefined, 'non-empty batch');
    for (let i = 1; i < entries.length; i++) {
      const prev = entries[i - 1];
      const cur = entries[i];
      assert(prev && cur && cur.index === prev.index + 1, 'appended entries are contiguous');
      assert(cur.term >= prev.term, 'terms never decrease in an appended batch');
    }
    const snap = this.snapshotPoint;
    assert(first.index > snap.index, `entry ${first.index} is covered by the snapshot at ${snap.index}`);
    assert(first.index <= this.log.lastIndex() + 1, `entry ${first.index} leaves a gap after ${this.log.lastIndex()}`);
    const prevTerm = first.index - 1 === snap.index ? snap.term : (this.log.termAt(first.index - 1) ?? 0);
    assert(first.term >= prevTerm, `entry ${first.index} has term ${first.term}, below its predecessor's ${prevTerm}`);
  }

  private checkUsable(): void {
    assert(!this.closed, 'raft disk used after close()');
    if (this.failure) {
      throw new SluiceError(Errors.KAFKA_STORAGE_ERROR, `raft disk in ${this.dir} failed earlier: ${this.failure.message}`, { dir: this.dir });
    }
  }

  /** Runs an I/O step; any failure leaves the disk failed (its state on disk is no longer known). */
  private guard(what: string, step: () => void): void {
    try {
      step();
    } catch (err) {
      this.failure = asSluiceError(err, `${what} in ${this.dir}`);
      throw err instanceof AssertionError ? err : this.failure;
    }
  }
}

function repairHardState(hs: HardState, point: SnapshotPoint, log: RaftLog, logger: Logger): HardState {
  const lastIndex = log.lastIndex();
  const lastTerm = log.termAt(lastIndex) ?? point.term;
  let { term, vote } = hs;
  if (term < lastTerm) {
    logger.warn({ term, lastTerm }, 'quorum-state term is behind the log (crash before it was written): raising it');
    term = lastTerm;
    vote = NO_NODE;
  }
  const commit = Math.min(Math.max(hs.commit, point.index), lastIndex);
  if (commit !== hs.commit) logger.warn({ commit: hs.commit, clampedTo: commit }, 'commit index clamped to what the disk holds');
  return { term, vote, commit };
}

function ensureDir(fs: FileSystem, dir: string): void {
  if (fs.existsSync(dir)) return;
  fs.mkdirSync(dir, { recursive: true });
  fsyncDir(fs, path.dirname(path.resolve(dir)));
}

function pointOf(snap: Snapshot): SnapshotPoint {
  return { index: snap.meta.index, term: snap.meta.term };
}

function sameHardState(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}

function isCount(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

/** Operating errors pass through; bugs stay bugs; anything else (I/O) becomes KAFKA_STORAGE_ERROR. */
function asSluiceError(err: unknown, what: string): SluiceError {
  if (err instanceof SluiceError) return err;
  if (err instanceof AssertionError) return new SluiceError(Errors.UNKNOWN_SERVER_ERROR, `${what}: ${err.message}`, { cause: err });
  const message = err instanceof Error ? err.message : String(err);
  return new SluiceError(Errors.KAFKA_STORAGE_ERROR, `${what}: ${message}`, { cause: err });
}
