// One segment of a partition log: `<base>.log` holding whole record batches
// back to back, plus its sparse `<base>.index` and `<base>.timeindex`, and
// `<base>.txnindex` (the aborted transactions whose ABORT marker it holds,
// txn-index.ts; only once it has one), all named by the 20-digit zero-padded
// base offset (Kafka's LogSegment).
//
// The log file descriptor stays open for the segment's life; appends are one
// positioned write (pwrite) of bytes already validated by the caller. Indexes
// live in memory and are persisted on roll, flush and close (index-file.ts).
//
// Invariants:
// - bytes [0, sizeBytes) of the file are whole, valid batches with increasing
//   offsets at or after baseOffset (each batch begins at or after where the
//   previous one ended: compaction drops whole batches and leaves gaps, see
//   docs/compaction.md) and non-decreasing leader epochs; nothing past
//   sizeBytes is ever read (a failed write may leave bytes there; the next
//   write overwrites them and recovery truncates them). Increasing offsets are
//   what let recovery catch a damaged base offset that goes backwards, which
//   the CRC does not cover.
// - nextOffset = lastOffset + 1 of the last batch, or baseOffset when empty.
// - every offset in the segment is < baseOffset + 2^31 (relative offsets are int32).
// - maxTimestamp / offsetOfMaxTimestamp: the largest batch max timestamp and
//   the base offset of the first batch that reached it (NO_TIMESTAMP if none).

import * as path from 'node:path';
import { AssertionError, assert } from '../util/assert.js';
import { BATCH_LENGTH_OFFSET, LOG_OVERHEAD_BYTES, RECORD_BATCH_HEADER_BYTES } from '../record/batch-header.js';
import { FileBatchScanner, type ScannedBatch } from './batch-scanner.js';
import type { FileSystem } from '../util/file-system.js';
import { readFully, removeIfExists, writeFully } from '../util/fs-util.js';
import type { LogConfig } from './log-config.js';
import { OffsetIndex } from './offset-index.js';
import type { LogTail } from './tail-cache.js';
import { NO_TIMESTAMP, TimeIndex } from './time-index.js';
import { TXN_INDEX_FILE_SUFFIX, TransactionIndex } from './txn-index.js';

export const LOG_FILE_SUFFIX = '.log';
export const INDEX_FILE_SUFFIX = '.index';
export const TIME_INDEX_FILE_SUFFIX = '.timeindex';
export const SEGMENT_FILE_SUFFIXES = [LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX] as const;
const OFFSET_DIGITS = 20;
const RELATIVE_OFFSET_MAX = 2 ** 31 - 1;
/**
 * Scratch buffer for the short header scans after an index lookup (about one
 * index interval). Shared: every scan runs to completion synchronously and
 * returns plain numbers, so no two scans ever use it at once.
 */
const LOOKUP_SCRATCH = Buffer.allocUnsafe(16 * 1024);
/** Buffer for recovery's validating scan: one pread per MiB. */
const RECOVERY_SCAN_BUFFER_BYTES = 1024 * 1024;
const EMPTY = Buffer.alloc(0);

export function segmentFileName(baseOffset: number, suffix: string): string {
  return String(baseOffset).padStart(OFFSET_DIGITS, '0') + suffix;
}

/** The base offset and suffix of a segment file name, or null for any other file. */
export function parseSegmentFileName(name: string): { baseOffset: number; suffix: string } | null {
  const m = /^(\d{20})(\.log|\.index|\.timeindex|\.txnindex)$/.exec(name);
  if (m === null) return null;
  const baseOffset = Number(m[1]);
  return Number.isSafeInteger(baseOffset) ? { baseOffset, suffix: m[2] as string } : null;
}

/** A batch handed to append(): where it lies in the caller's buffer, and its header facts. */
export interface AppendBatch {
  offsetInBuffer: number;
  sizeBytes: number;
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
}

/** Where a batch lies in a segment file. */
export interface BatchLocation {
  readonly position: number;
  readonly sizeBytes: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
}

/**
 * Batches appended by this process are remembered (the newest ones, up to
 * this many), so that fetches near the log end — every follower fetch and
 * every caught-up consumer — find their batch without reading headers from
 * the file: a 10-record batch cost a leader four read(2) calls per fetch.
 * Few are enough (fetches ask for the last few batches) and they cost memory
 * per busy partition: about 2 KB at this size.
 */
const RECENT_BATCHES_MAX = 32;

/** Bytes of whole batches read from a segment, and where the last of them starts (-1 if none). */
export interface SegmentRead {
  records: Buffer;
  lastBatchStart: number;
}

type IndexedBatch = Pick<ScannedBatch, 'sizeBytes' | 'baseOffset' | 'maxTimestamp'>;

export class LogSegment {
  /** `<base>.log`, or `<base>.log.cleaned` / `.swap` while the cleaner builds and swaps it in (segment-swap.ts). */
  private _logFile: string;
  readonly offsetIndex: OffsetIndex;
  readonly timeIndex: TimeIndex;
  /** The aborted transactions whose marker lies in this segment. */
  readonly txnIndex: TransactionIndex;
  private fd: number;
  private _sizeBytes: number;
  private _nextOffset: number;
  private _maxTimestamp = NO_TIMESTAMP;
  private _offsetOfMaxTimestamp: number;
  private bytesSinceLastIndexEntry = 0;
  /** Time segment.ms counts from: clock time of the first append, or the first batch's timestamp after a reopen. */
  private rollBaseMs: number | null = null;
  /**
   * The log file may differ from what is on disk (appended, truncated, or
   * opened after a crash): flush() fsyncs it only then. A created file is
   * empty, so it starts synced; an opened one is synced only once the loader
   * knows the last run closed it cleanly (markSynced).
   */
  private unsynced: boolean;
  /** Bumped whenever the file changes (unsynced set), so a background fsync knows whether it covered everything. */
  private changes = 0;
  /** The last batches appended, in offset order and contiguous up to nextOffset; empty after a truncation or reopen. */
  private recent: BatchLocation[] = [];
  private pendingIo = 0;
  private newTxnIndexFile = false;
  private closeRequested = false;
  private fdClosed = false;

  private constructor(
    private readonly fs: FileSystem,
    readonly dir: string,
    readonly baseOffset: number,
    private readonly indexIntervalBytes: number,
    segmentIndexBytes: number,
    fd: number,
    sizeBytes: number,
  ) {
    this._logFile = path.join(dir, segmentFileName(baseOffset, LOG_FILE_SUFFIX));
    this.offsetIndex = new OffsetIndex(fs, path.join(dir, segmentFileName(baseOffset, INDEX_FILE_SUFFIX)), baseOffset, segmentIndexBytes);
    this.timeIndex = new TimeIndex(fs, path.join(dir, segmentFileName(baseOffset, TIME_INDEX_FILE_SUFFIX)), baseOffset, segmentIndexBytes);
    this.txnIndex = new TransactionIndex(fs, path.join(dir, segmentFileName(baseOffset, TXN_INDEX_FILE_SUFFIX)), baseOffset);
    this.fd = fd;
    this._sizeBytes = sizeBytes;
    this._nextOffset = baseOffset;
    this._offsetOfMaxTimestamp = baseOffset;
    this.unsynced = true;
  }

  get logFile(): string {
    return this._logFile;
  }

  /**
   * A new, empty segment the log cleaner fills: its log file is
   * `<base>.log<suffix>` until renamed (renameLogFile), and its indexes stay
   * in memory until it is swapped in, because the index files of that name
   * still belong to the segment it replaces.
   */
  static createCleaned(fs: FileSystem, dir: string, baseOffset: number, config: Readonly<LogConfig>, suffix: string): LogSegment {
    const file = path.join(dir, segmentFileName(baseOffset, LOG_FILE_SUFFIX) + suffix);
    const fd = fs.openSync(file, 'w+');
    const seg = new LogSegment(fs, dir, baseOffset, config.indexIntervalBytes, config.segmentIndexBytes, fd, 0);
    seg._logFile = file;
    return seg;
  }

  /** Renames the log file to `<base>.log<suffix>` ('' for the live name); the descriptor stays valid. */
  renameLogFile(suffix: string): void {
    const to = path.join(this.dir, segmentFileName(this.baseOffset, LOG_FILE_SUFFIX) + suffix);
    this.fs.renameSync(this._logFile, to);
    this._logFile = to;
  }

  /**
   * Lets go of the segment without writing anything: its files were renamed
   * away by a swap (or it was a cleaned segment given up). The descriptor
   * closes once pending background I/O ends, so a flush in flight still works.
   */
  release(): void {
    this.closeRequested = true;
    this.maybeCloseFd();
  }

  /** Timestamp segment.ms and max.compaction.lag.ms count from (first append's clock time, or the first batch's timestamp after a reopen); null when empty. */
  get firstBatchTimestampMs(): number | null {
    return this.rollBaseMs;
  }

  /**
   * Whole batches from `position` (a batch boundary): as many as fit in
   * `maxBytes`, at least one; empty at the end. The cleaner's read path.
   */
  readBatchesFrom(position: number, maxBytes: number): Buffer {
    if (position >= this._sizeBytes) return EMPTY;
    const header = this.readFile(position, Math.min(LOG_OVERHEAD_BYTES, this._sizeBytes - position));
    const first = LOG_OVERHEAD_BYTES + header.readInt32BE(BATCH_LENGTH_OFFSET);
    return this.read(position, first, maxBytes, this._sizeBytes).records;
  }

  private markChanged(): void {
    this.unsynced = true;
    this.changes++;
  }

  /** The file is known to be on disk as it is (the last run fsynced it and closed cleanly). */
  markSynced(): void {
    this.unsynced = false;
  }

  /** A new, empty segment; existing files of the same name are replaced. */
  static create(fs: FileSystem, dir: string, baseOffset: number, config: Readonly<LogConfig>): LogSegment {
    const fd = fs.openSync(path.join(dir, segmentFileName(baseOffset, LOG_FILE_SUFFIX)), 'w+');
    // The index files appear with their first persist (a roll, a flush, a
    // close): an empty segment needs none, and a missing index is rebuilt
    // from the log on recovery. Creating thousands of replicas is then one
    // file each, not three.
    const seg = new LogSegment(fs, dir, baseOffset, config.indexIntervalBytes, config.segmentIndexBytes, fd, 0);
    seg.unsynced = false;
    return seg;
  }

  /**
   * Opens an existing segment and loads its index files. The caller (the log
   * loader) must then either loadTail() or recover() before using it.
   * `indexProblem` is non-null when an index file is missing or malformed.
   */
  static open(fs: FileSystem, dir: string, baseOffset: number, config: Readonly<LogConfig>): { segment: LogSegment; indexProblem: string | null; txnIndexProblem: string | null } {
    const fd = fs.openSync(path.join(dir, segmentFileName(baseOffset, LOG_FILE_SUFFIX)), 'r+');
    const size = fs.fstatSync(fd).size;
    const seg = new LogSegment(fs, dir, baseOffset, config.indexIntervalBytes, config.segmentIndexBytes, fd, size);
    const loaded = [seg.offsetIndex.loadFromFile(), seg.timeIndex.loadFromFile()];
    // An empty segment's index files are written only once they hold entries
    // (IndexFile.persist): for one, a missing index is what is expected.
    const problem = loaded.find((p) => p !== null && !(size === 0 && p === 'missing')) ?? seg.offsetIndex.sanityProblem(size);
    // A segment without aborts has no .txnindex; a malformed one is dropped (the caller says so: it is rebuilt with producer state).
    const txnLoaded = seg.txnIndex.loadFromFile();
    const txnProblem = txnLoaded === 'missing' ? null : txnLoaded ?? seg.txnIndex.sanityProblem(Number.MAX_SAFE_INTEGER);
    if (txnProblem !== null) seg.txnIndex.clear();
    return {
      segment: seg,
      indexProblem: problem === null ? null : `index of segment ${baseOffset}: ${problem}`,
      txnIndexProblem: txnProblem === null ? null : `transaction index of segment ${baseOffset}: ${txnProblem}`,
    };
  }

  get sizeBytes(): number {
    return this._sizeBytes;
  }
  get nextOffset(): number {
    return this._nextOffset;
  }
  get maxTimestamp(): number {
    return this._maxTimestamp;
  }
  get offsetOfMaxTimestamp(): number {
    return this._offsetOfMaxTimestamp;
  }
  get isEmpty(): boolean {
    return this._sizeBytes === 0;
  }

  /** Whether appending `setBytes` ending at `setLastOffset` needs a new segment first. */
  shouldRoll(setBytes: number, setLastOffset: number, nowMs: number, config: Readonly<LogConfig>): boolean {
    if (this._sizeBytes === 0) return false;
    return this._sizeBytes + setBytes > config.segmentBytes ||
      (this.rollBaseMs !== null && nowMs - this.rollBaseMs > config.segmentMs) ||
      this.offsetIndex.isFull() ||
      this.timeIndex.isFull() ||
      setLastOffset - this.baseOffset > RELATIVE_OFFSET_MAX;
  }

  /**
   * Appends `buf[start, end)`, which holds exactly `batches` (validated and
   * stamped by the caller), with one positioned write, then indexes them.
   */
  append(buf: Buffer, start: number, end: number, batches: readonly AppendBatch[], nowMs: number): void {
    const last = batches[batches.length - 1];
    assert(last !== undefined && batches[0]!.baseOffset >= this._nextOffset && last.lastOffset - this.baseOffset <= RELATIVE_OFFSET_MAX,
      'append: batches must start at or after the segment end and fit int32 relative offsets');
    const position = this._sizeBytes;
    this.markChanged();
    writeFully(this.fs, this.fd, buf, start, end - start, position);
    for (const b of batches) {
      const at = position + b.offsetInBuffer - start;
      this.indexBatch(at, b);
      this.remember({ position: at, sizeBytes: b.sizeBytes, baseOffset: b.baseOffset, lastOffset: b.lastOffset });
    }
    this._sizeBytes = position + (end - start);
    this._nextOffset = last.lastOffset + 1;
    this.rollBaseMs ??= nowMs;
  }

  private indexBatch(position: number, b: IndexedBatch): void {
    if (b.maxTimestamp > this._maxTimestamp) {
      this._maxTimestamp = b.maxTimestamp;
      this._offsetOfMaxTimestamp = b.baseOffset;
    }
    if (this.bytesSinceLastIndexEntry > this.indexIntervalBytes) {
      this.offsetIndex.append(b.baseOffset, position);
      this.timeIndex.maybeAppend(this._maxTimestamp, this._offsetOfMaxTimestamp);
      this.bytesSinceLastIndexEntry = 0;
    }
    this.bytesSinceLastIndexEntry += b.sizeBytes;
  }

  /** The first batch whose last offset is >= `offset`, or null if the segment has none. */
  translateOffset(offset: number): BatchLocation | null {
    if (offset >= this._nextOffset) return null;
    const cached = this.recentBatchFor(offset);
    if (cached !== null) return cached;
    const from = this.offsetIndex.lookup(offset);
    const scanner = new FileBatchScanner(this.fs, this.fd, from.position, this._sizeBytes, false, LOOKUP_SCRATCH);
    for (let b = scanner.next(); b !== null; b = scanner.next()) {
      if (b.lastOffset >= offset) return b;
    }
    if (scanner.problem !== null) throw new AssertionError(`segment ${this.baseOffset}: bad batch in served range: ${scanner.problem}`);
    return null;
  }

  /**
   * Whole batches starting at `position` (a batch boundary): as many as fit in
   * `maxBytes`, but always the first one, and nothing at or past `maxPosition`
   * (also a batch boundary). Never re-encoded: from `memory` (the log's tail
   * cache, when this is the segment it covers) if it holds the range, else
   * straight from the file.
   */
  read(position: number, firstBatchBytes: number, maxBytes: number, maxPosition: number, memory: LogTail | null = null): SegmentRead {
    const available = Math.min(maxPosition, this._sizeBytes) - position;
    if (available <= 0) return { records: EMPTY, lastBatchStart: -1 };
    assert(firstBatchBytes <= available, 'read: first batch past the read limit');
    const len = firstBatchBytes >= maxBytes ? firstBatchBytes : Math.min(maxBytes, available);
    const buf = memory?.read(position, len) ?? this.readFile(position, len);
    let end = 0;
    let lastBatchStart = -1;
    while (end + LOG_OVERHEAD_BYTES <= len) {
      const size = LOG_OVERHEAD_BYTES + buf.readInt32BE(end + BATCH_LENGTH_OFFSET);
      if (size < RECORD_BATCH_HEADER_BYTES) throw new AssertionError(`segment ${this.baseOffset}: garbage at ${position + end}`);
      if (end + size > len) break;
      lastBatchStart = end;
      end += size;
    }
    assert(end >= firstBatchBytes, 'read: first batch not whole');
    return { records: end === buf.length ? buf : buf.subarray(0, end), lastBatchStart };
  }

  private readFile(position: number, len: number): Buffer {
    const buf = Buffer.allocUnsafe(len);
    const n = readFully(this.fs, this.fd, buf, 0, len, position);
    if (n !== len) throw new AssertionError(`segment ${this.baseOffset}: short read ${n} of ${len} at ${position}`);
    return buf;
  }

  /** The first batch at or after `startingOffset` whose max timestamp is >= `timestamp`, or null. */
  findByTimestamp(timestamp: number, startingOffset: number): ScannedBatch | null {
    if (this._maxTimestamp < timestamp) return null;
    const fromTime = this.timeIndex.lookup(timestamp);
    const from = this.offsetIndex.lookup(Math.max(fromTime.offset, startingOffset));
    const scanner = new FileBatchScanner(this.fs, this.fd, from.position, this._sizeBytes, false, LOOKUP_SCRATCH);
    for (let b = scanner.next(); b !== null; b = scanner.next()) {
      if (b.maxTimestamp >= timestamp && b.lastOffset >= startingOffset) return b;
    }
    return null;
  }

  /** Every batch's header facts, in order (a trusted segment: header-only scan). */
  forEachBatch(onBatch: (b: ScannedBatch) => void): void {
    const scanner = new FileBatchScanner(this.fs, this.fd, 0, this._sizeBytes, false);
    for (let b = scanner.next(); b !== null; b = scanner.next()) onBatch(b);
    assert(scanner.problem === null, `segment ${this.baseOffset}: ${scanner.problem}`);
  }

  private remember(b: BatchLocation): void {
    if (this.recent.length >= RECENT_BATCHES_MAX) this.recent = this.recent.slice(RECENT_BATCHES_MAX / 2);
    this.recent.push(b);
  }

  /** The remembered batch holding `offset` (< nextOffset), or null when it is older than the ones remembered. */
  private recentBatchFor(offset: number): BatchLocation | null {
    const r = this.recent;
    if (r.length === 0 || offset < r[0]!.baseOffset) return null;
    let lo = 0;
    let hi = r.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (r[mid]!.lastOffset >= offset) hi = mid;
      else lo = mid + 1;
    }
    return r[lo]!;
  }

  /** Drops every batch whose last offset is >= `offset`; returns the bytes removed. */
  truncateTo(offset: number): number {
    const hit = this.translateOffset(offset);
    if (hit === null) return 0;
    this.recent = [];
    const removed = this._sizeBytes - hit.position;
    this.markChanged();
    this.fs.ftruncateSync(this.fd, hit.position);
    this._sizeBytes = hit.position;
    this.offsetIndex.truncateTo(hit.baseOffset);
    this.timeIndex.truncateTo(hit.baseOffset);
    const problem = this.loadTail();
    assert(problem === null, `segment ${this.baseOffset} after truncation: ${problem}`);
    this.txnIndex.truncateTo(this._nextOffset);
    if (this._sizeBytes === 0) this.rollBaseMs = null;
    return removed;
  }

  /**
   * Derives nextOffset, the max timestamp and the index interval counter from
   * the indexes plus a header scan from the last offset-index entry to the end
   * (the cheap path for trusted segments). Returns a problem if the bytes do
   * not agree with the index or end in a bad batch — the caller then recovers.
   */
  loadTail(): string | null {
    const last = this.offsetIndex.lastEntry() ?? { offset: this.baseOffset, position: 0 };
    const lastTime = this.timeIndex.lastEntry();
    this._maxTimestamp = lastTime?.timestamp ?? NO_TIMESTAMP;
    this._offsetOfMaxTimestamp = lastTime?.offset ?? this.baseOffset;
    this._nextOffset = last.offset;
    const scanner = new FileBatchScanner(this.fs, this.fd, last.position, this._sizeBytes, false);
    for (let b = scanner.next(); b !== null; b = scanner.next()) {
      if (b.baseOffset < this._nextOffset) {
        return `segment ${this.baseOffset}: batch at ${b.position} has base offset ${b.baseOffset}, expected at least ${this._nextOffset}`;
      }
      if (b.maxTimestamp > this._maxTimestamp) {
        this._maxTimestamp = b.maxTimestamp;
        this._offsetOfMaxTimestamp = b.baseOffset;
      }
      this._nextOffset = b.lastOffset + 1;
    }
    if (scanner.problem !== null) return `segment ${this.baseOffset} at ${scanner.position}: ${scanner.problem}`;
    if (this._sizeBytes === 0) this._nextOffset = this.baseOffset;
    this.bytesSinceLastIndexEntry = this._sizeBytes - last.position;
    return this.timeIndex.sanityProblem(this._nextOffset);
  }

  /** After a reopen, segment.ms counts from the first batch's timestamp (Kafka's rule), else from now. */
  initRollBase(nowMs: number): void {
    const first = new FileBatchScanner(this.fs, this.fd, 0, this._sizeBytes, false, RECORD_BATCH_HEADER_BYTES).next();
    this.rollBaseMs = first === null ? null : first.maxTimestamp >= 0 ? first.maxTimestamp : nowMs;
  }

  /**
   * Recovery: re-reads the whole segment, checking every batch (CRC, structure,
   * contiguous offsets, non-decreasing epochs), rebuilds both indexes, and truncates the file at the first
   * bad batch. `onBatch` sees each valid batch in order. Returns the bytes cut.
   */
  recover(onBatch?: (b: ScannedBatch) => void): { truncatedBytes: number; problem: string | null } {
    this.recent = [];
    this.offsetIndex.clear();
    this.timeIndex.clear();
    this._maxTimestamp = NO_TIMESTAMP;
    this._offsetOfMaxTimestamp = this.baseOffset;
    this._nextOffset = this.baseOffset;
    this.bytesSinceLastIndexEntry = 0;
    const scanner = new FileBatchScanner(this.fs, this.fd, 0, this._sizeBytes, true, RECOVERY_SCAN_BUFFER_BYTES);
    let validEnd = 0;
    let maxEpoch = -1;
    let problem: string | null = null;
    for (let b = scanner.next(); b !== null; b = scanner.next()) {
      if (b.baseOffset < this._nextOffset || b.lastOffset - this.baseOffset > RELATIVE_OFFSET_MAX) {
        problem = `batch at ${b.position} has offsets [${b.baseOffset}, ${b.lastOffset}], expected to start at or after ${this._nextOffset}`;
        break;
      }
      if (b.leaderEpoch >= 0 && b.leaderEpoch < maxEpoch) {
        problem = `batch at ${b.position} has leader epoch ${b.leaderEpoch} below ${maxEpoch}`;
        break;
      }
      maxEpoch = Math.max(maxEpoch, b.leaderEpoch);
      this.indexBatch(b.position, b);
      this._nextOffset = b.lastOffset + 1;
      validEnd = b.position + b.sizeBytes;
      onBatch?.(b);
    }
    problem ??= scanner.problem;
    // Aborts are not derivable from one segment (they need producer state): keep those the bytes still hold.
    this.txnIndex.truncateTo(this._nextOffset);
    const truncatedBytes = this._sizeBytes - validEnd;
    if (truncatedBytes > 0) {
      this.markChanged();
      this.fs.ftruncateSync(this.fd, validEnd);
      this._sizeBytes = validEnd;
    }
    return { truncatedBytes, problem: problem === null ? null : `segment ${this.baseOffset} at ${validEnd}: ${problem}` };
  }

  /** Adds the final time-index entry (the segment's max timestamp) before it stops being active. */
  sealTimeIndex(): void {
    this.timeIndex.maybeAppend(this._maxTimestamp, this._offsetOfMaxTimestamp);
  }

  /** Writes the index files (no fsync). */
  persistIndexes(): void {
    this.persistTxnIndex(false);
    if (!this.needsIndexFiles()) return;
    this.offsetIndex.persist(false);
    this.timeIndex.persist(false);
  }

  /** The .txnindex exists only while there is, or was, an abort in the segment. */
  private persistTxnIndex(fsync: boolean): void {
    if (this.txnIndex.entries === 0 && !this.txnIndex.hasFile) return;
    if (!this.txnIndex.hasFile) this.newTxnIndexFile = true;
    this.txnIndex.persist(fsync);
  }

  /** Whether a .txnindex file was created since the last call (its directory entry is not durable yet). */
  takeNewTxnIndexFile(): boolean {
    const created = this.newTxnIndexFile;
    this.newTxnIndexFile = false;
    return created;
  }

  /**
   * An empty segment needs no index files (open() accepts them missing):
   * closing 10,000 new replicas created and fsynced two empty files each.
   * Stale files left by a truncation to empty fail open()'s sanity check and
   * are rebuilt.
   */
  private needsIndexFiles(): boolean {
    return !(this._sizeBytes === 0 && this.offsetIndex.entries === 0 && this.timeIndex.entries === 0);
  }

  /** fsyncs the log and the index files. */
  flush(): void {
    if (this.fdClosed || this.closeRequested) return;
    this.flushData();
    this.persistTxnIndex(true);
    if (!this.needsIndexFiles()) return;
    this.offsetIndex.persist(true);
    this.timeIndex.persist(true);
  }

  /**
   * fsyncs the log file only (flush() without the indexes). For the active segment of a log whose recovery
   * point moves with each flush (fsync durability): after a crash the segment
   * holding the recovery point is re-validated and its indexes rebuilt
   * (log-loader.ts), so its index files need not be on disk — that saved two
   * file writes and two fsyncs per group commit.
   */
  flushData(): void {
    if (this.fdClosed || this.closeRequested || !this.unsynced) return;
    this.fs.fsyncSync(this.fd);
    this.unsynced = false;
  }

  /** The same as flush() for an already-persisted segment, off the event loop (used after a roll). */
  flushAsync(): Promise<void> {
    if (this.fdClosed || this.closeRequested) return Promise.resolve();
    this.pendingIo++;
    const changes = this.changes;
    return this.fs.fsync(this.fd)
      .then(() => {
        if (this.changes === changes) this.unsynced = false;
      })
      .finally(() => {
        this.pendingIo--;
        this.maybeCloseFd();
      })
      .then(() => this.offsetIndex.fsyncAsync())
      .then(() => this.timeIndex.fsyncAsync())
      .then(() => (this.txnIndex.hasFile ? this.txnIndex.fsyncAsync() : undefined));
  }

  /** Newest timestamp in the segment for retention: the max batch timestamp, else the file's mtime. */
  largestTimestampMs(): number {
    if (this._maxTimestamp >= 0) return this._maxTimestamp;
    return Math.floor(this.fs.statSync(this.logFile).mtimeMs);
  }

  /** Persists the indexes and releases the file descriptor (after pending background fsyncs). */
  close(): void {
    if (this.closeRequested) return;
    // Durable before the clean-shutdown marker: a restart trusts the aborts it indexes (a rebuild may have rewritten them).
    this.persistTxnIndex(true);
    this.persistIndexes();
    this.closeRequested = true;
    this.maybeCloseFd();
  }

  /** Removes the segment's files; the descriptor is released once background I/O finishes. */
  deleteFiles(): void {
    this.closeRequested = true;
    this.maybeCloseFd();
    removeIfExists(this.fs, this.logFile);
    this.offsetIndex.deleteFile();
    this.timeIndex.deleteFile();
    this.txnIndex.deleteFile();
  }

  private maybeCloseFd(): void {
    if (this.closeRequested && this.pendingIo === 0 && !this.fdClosed) {
      this.fdClosed = true;
      this.fs.closeSync(this.fd);
    }
  }
}
