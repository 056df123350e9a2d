// The log of one partition replica: an ordered list of segments, of which the
// last is active (Kafka's UnifiedLog/LocalLog). It appends record batches as
// opaque bytes — validating only the header and CRC, stamping offsets and the
// leader epoch in place — and serves reads as whole batches straight from the
// segment files, or for the newest bytes from the tail cache (tail-cache.ts),
// which holds the buffers they were appended from. Records are never decoded
// here.
//
// Three offsets are tracked separately (style rule: written, flushed,
// committed):
//   logEndOffset (LEO)  next offset to be written;
//   recoveryPoint       everything below is fsynced (moves on flush(), and in
//                       the background after each roll);
//   highWatermark       set by replication; retention never deletes past it.
// Invariants (checked after every mutation):
//   segments[0].baseOffset <= logStartOffset <= highWatermark <= LEO,
//   recoveryPoint <= LEO, LEO === active segment's nextOffset,
//   and the segments hold offsets in order, each batch whole and valid.
//   Offsets increase but need not be contiguous: the log cleaner drops whole
//   batches and leaves gaps (docs/compaction.md); a read at an offset in a
//   gap returns the next batch after it.
// The log cleaner (log-cleaner.ts) works on closed segments across many
// event-loop turns. Anything that removes or replaces segments (truncation,
// retention, a swap) bumps `structureVersion`; a clean that sees it move
// gives up before its swap, so it never races truncation or retention. The
// swap itself (replaceSegments, segment-swap.ts) is one synchronous step, and
// the replaced segments' descriptors outlive it until their pending I/O ends,
// so no read ever meets a half-swapped log.
// An append either completes or leaves the log as it was: validation happens
// before any byte is written, and a failed write leaves the segment's size
// unchanged (the stray bytes past it are never read).

import * as path from 'node:path';
import { AssertionError, assert } from '../util/assert.js';
import { SystemClock, type Clock } from '../util/clock.js';
import { Errors, SluiceError, isSluiceError } from '../util/errors.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { lastOffsetDeltaOf, lastOffsetOf, stampBatch } from '../record/batch-header.js';
import { validateAppend, type IncomingBatch } from './append-validation.js';
import { NodeFileSystem, type FileSystem } from '../util/file-system.js';
import { fsyncDir, fsyncDirAsync } from '../util/fs-util.js';
import type { EpochEntry } from './checkpoint.js';
import { type EpochEndOffset, type LeaderEpochCache } from './leader-epoch-cache.js';
import { DEFAULT_LOG_CONFIG, deletesByRetention, validateLogConfig, type LogConfig } from './log-config.js';
import { CLEAN_SHUTDOWN_FILE, loadLog } from './log-loader.js';
import { decideRetention, type SegmentSummary } from './retention.js';
import { LogSegment } from './segment.js';
import { swapSegments, type SwapHook } from './segment-swap.js';
import type { LogTail, TailCache } from './tail-cache.js';
import type { AbortedTxn } from './txn-index.js';

const INT32_MAX = 2 ** 31 - 1;
const EMPTY = Buffer.alloc(0);

export interface PartitionLogOptions {
  dir: string;
  /** Overrides of DEFAULT_LOG_CONFIG. */
  config?: Partial<LogConfig>;
  clock?: Clock;
  /** The disk (default the real one, NodeFileSystem; the simulation passes its own). */
  fs?: FileSystem;
  logger?: Logger;
  /** From recovery-point-offset-checkpoint; 0 (recover everything) if unknown. */
  recoveryPoint?: number;
  /** From log-start-offset-checkpoint; 0 if unknown. */
  logStartOffset?: number;
  /** From replication-offset-checkpoint; clamped into [logStartOffset, LEO]. */
  highWatermark?: number;
  /**
   * The directory was just created (a new replica): its entry in the data dir
   * reaches the disk with the first flush instead of an fsync per creation,
   * which made creating thousands of partitions take seconds.
   */
  newDirectory?: boolean;
  /** Keeps the newest appended bytes in memory for reads near the end (tail-cache.ts); none: every read is from the file. */
  tailCache?: TailCache;
}

export interface AppendInfo {
  /** Offset of the first record appended. */
  baseOffset: number;
  /** Offset of the last record appended. */
  lastOffset: number;
  maxTimestamp: number;
  batchCount: number;
  recordCount: number;
  sizeBytes: number;
  logStartOffset: number;
}

export interface ReadOptions {
  /** Exclusive upper bound (e.g. the high watermark): no batch holding this offset or later is returned. */
  maxOffset?: number;
}

export interface ReadResult {
  /** Whole batches, back to back, exactly as stored; empty at the end of the log. */
  records: Buffer;
  /** Base offset of the first batch (may be below the requested offset, which lies inside it). */
  firstOffset: number;
  /** Offset after the last record returned: where the next read continues. */
  nextOffset: number;
  logStartOffset: number;
  logEndOffset: number;
  highWatermark: number;
}

export interface SegmentInfo {
  baseOffset: number;
  nextOffset: number;
  sizeBytes: number;
  maxTimestamp: number;
}

export class PartitionLog {
  private config: LogConfig;
  private segments: LogSegment[];
  private _logStartOffset: number;
  private _logEndOffset: number;
  private _recoveryPoint: number;
  private _highWatermark: number;
  private readonly epochCache: LeaderEpochCache;
  private unflushedMessages = 0;
  private lastFlushMs: number;
  /** Bumped by every truncation, so a background flush begun before one cannot move the recovery point. */
  private truncations = 0;
  /** Bumped whenever segments are removed or replaced (truncation, retention, a cleaner swap); see the header. */
  private _structureVersion = 0;
  /** Background flushes of rolled segments, run one after another so the recovery point moves in order. */
  private flushChain: Promise<void> = Promise.resolve();
  private closed = false;
  /** Files were created in (or the log's own entry added to) a directory since its last fsync. */
  private dirEntriesDirty: boolean;
  private parentEntryDirty: boolean;
  /**
   * The clean-shutdown marker was removed at open without an fsync. Before the
   * log's bytes change, the removal must be on disk: a crash could otherwise
   * bring the marker back over a log that is no longer the clean one, and the
   * next start would trust a tail it should re-validate.
   */
  private markerRemovalUnsynced: boolean;
  /** The newest appended bytes, and the segment they belong to: only reads of that segment use them. */
  private readonly tail: LogTail | null;
  /** A .txnindex was malformed at open (log-loader.ts): the aborted-transaction indexes need a rebuild from the log. */
  readonly txnIndexDamaged: boolean;
  /**
   * The log was opened after a clean shutdown: every file it left, derived
   * ones (indexes) included, was fsynced before the marker was written. Data
   * kept beside the log (a producer-state snapshot) may be trusted only then.
   */
  readonly openedAfterCleanShutdown: boolean;
  private tailSegment: LogSegment | null = null;

  private constructor(
    /** The disk every file of this log lives on (producer-state snapshots use it too). */
    readonly fs: FileSystem,
    readonly dir: string,
    config: LogConfig,
    private readonly clock: Clock,
    private readonly logger: Logger,
    loaded: ReturnType<typeof loadLog>,
    highWatermark: number,
    newDirectory: boolean,
    tailCache: TailCache | null,
  ) {
    this.tail = tailCache?.tail() ?? null;
    this.config = config;
    this.dirEntriesDirty = newDirectory;
    this.parentEntryDirty = newDirectory;
    this.markerRemovalUnsynced = loaded.hadCleanShutdown;
    this.txnIndexDamaged = loaded.txnIndexDamaged;
    this.openedAfterCleanShutdown = loaded.hadCleanShutdown;
    this.segments = loaded.segments;
    this._logStartOffset = loaded.logStartOffset;
    this._logEndOffset = this.active.nextOffset;
    this._recoveryPoint = loaded.recoveryPoint;
    this._highWatermark = Math.min(Math.max(highWatermark, this._logStartOffset), this._logEndOffset);
    this.epochCache = loaded.epochCache;
    this.lastFlushMs = clock.nowMs();
    for (const s of loaded.unflushed) this.scheduleBackgroundFlush(s, s.nextOffset);
    this.checkInvariants();
  }

  /** Opens (creating if absent) the log in `opts.dir`, recovering it if needed (log-loader.ts). */
  static open(opts: PartitionLogOptions): PartitionLog {
    const config = validateLogConfig({ ...DEFAULT_LOG_CONFIG, ...opts.config });
    const clock = opts.clock ?? SystemClock;
    const logger = opts.logger ?? silentLogger;
    const fs = opts.fs ?? NodeFileSystem;
    const loaded = loadLog({
      fs,
      dir: opts.dir,
      config,
      clock,
      logger,
      recoveryPoint: opts.recoveryPoint ?? 0,
      logStartOffset: opts.logStartOffset ?? 0,
    });
    if (loaded.unflushed.length > 0) {
      logger.info({ dir: opts.dir, recoveredSegments: loaded.unflushed.length, truncatedBytes: loaded.truncatedBytes }, 'recovered log');
    }
    return new PartitionLog(fs, opts.dir, config, clock, logger, loaded, opts.highWatermark ?? 0, opts.newDirectory === true, opts.tailCache ?? null);
  }

  get logStartOffset(): number {
    return this._logStartOffset;
  }
  get logEndOffset(): number {
    return this._logEndOffset;
  }
  get recoveryPoint(): number {
    return this._recoveryPoint;
  }
  get highWatermark(): number {
    return this._highWatermark;
  }
  get sizeBytes(): number {
    return this.segments.reduce((sum, s) => sum + s.sizeBytes, 0);
  }
  get numberOfSegments(): number {
    return this.segments.length;
  }
  get logConfig(): Readonly<LogConfig> {
    return this.config;
  }
  get isClosed(): boolean {
    return this.closed;
  }

  private get active(): LogSegment {
    return this.segments[this.segments.length - 1]!;
  }

  get structureVersion(): number {
    return this._structureVersion;
  }

  /** The closed segments, oldest first (the cleaner's input; never the active one). Storage-internal. */
  closedSegments(): readonly LogSegment[] {
    return this.segments.slice(0, -1);
  }

  /** The active segment's base offset: nothing at or past it is ever cleaned. */
  get activeSegmentBaseOffset(): number {
    return this.active.baseOffset;
  }

  /**
   * The cleaner's swap (Kafka's replaceSegments): `old`, consecutive closed
   * segments of this log, give way to `cleaned`, which holds their surviving
   * batches under the first one's base offset. Crash-safe through the file
   * renames of segment-swap.ts; `hook` lets a test crash between its steps.
   */
  replaceSegments(old: readonly LogSegment[], cleaned: LogSegment, hook?: SwapHook): void {
    this.ensureOpen();
    const at = this.segments.indexOf(old[0]!);
    assert(at >= 0 && old.length > 0 && old.every((s, i) => this.segments[at + i] === s) && at + old.length < this.segments.length,
      'replaceSegments: not consecutive closed segments of this log');
    assert(cleaned.baseOffset === old[0]!.baseOffset && cleaned.nextOffset <= old[old.length - 1]!.nextOffset,
      'replaceSegments: cleaned segment outside the range it replaces');
    this.beforeChange();
    this._structureVersion++;
    this.syncClosedSegments();
    try {
      swapSegments(this.fs, this.dir, old, cleaned, hook);
    } catch (err) {
      throw storageError(err, `segment swap in ${this.dir}`);
    }
    this.segments.splice(at, old.length, cleaned);
    // Not close(): that would write their index files over the new segment's names.
    for (const s of old) s.release();
    // Swapped-in bytes were fsynced before the swap (segment-swap.ts).
    this.checkInvariants();
  }

  segmentInfos(): SegmentInfo[] {
    return this.segments.map((s) => ({ baseOffset: s.baseOffset, nextOffset: s.nextOffset, sizeBytes: s.sizeBytes, maxTimestamp: s.maxTimestamp }));
  }

  /** Applies new settings; index sizes and intervals take effect from the next segment. */
  updateConfig(overrides: Partial<LogConfig>): void {
    this.config = validateLogConfig({ ...this.config, ...overrides });
  }

  // ---- appends -------------------------------------------------------------

  /**
   * Leader append: validates every batch in `batches` (size, structure, CRC,
   * record count), then stamps consecutive offsets from the LEO and
   * `leaderEpoch` into the headers in place and writes them (`crcChecked`:
   * the caller already verified these bytes' CRCs). Throws
   * MESSAGE_TOO_LARGE, CORRUPT_MESSAGE or FENCED_LEADER_EPOCH without touching
   * the log.
   */
  append(batches: Buffer, opts: { leaderEpoch: number; crcChecked?: boolean }): AppendInfo {
    this.ensureOpen();
    const epoch = opts.leaderEpoch;
    assert(Number.isInteger(epoch) && epoch >= 0 && epoch <= INT32_MAX, 'append: leader epoch must be an int32 >= 0');
    if (epoch < this.epochCache.latestEpoch()) {
      throw new SluiceError(Errors.FENCED_LEADER_EPOCH, `append with leader epoch ${epoch} below the log's ${this.epochCache.latestEpoch()}`,
        { leaderEpoch: epoch, latestEpoch: this.epochCache.latestEpoch() });
    }
    const incoming = validateAppend(batches, true, this.config, opts.crcChecked === true);
    let next = this._logEndOffset;
    for (const b of incoming) {
      stampBatch(batches, b.offsetInBuffer, next, epoch);
      b.baseOffset = next;
      b.lastOffset = next + lastOffsetDeltaOf(batches, b.offsetInBuffer);
      b.leaderEpoch = epoch;
      next = b.lastOffset + 1;
    }
    return this.appendValidated(batches, incoming, true);
  }

  /**
   * Follower append: batches already stamped by the leader, which must start
   * at or after the LEO and follow each other in offset order, gaps allowed
   * (compaction), else OFFSET_OUT_OF_RANGE; with leader
   * epochs that never go below the log's latest (else FENCED_LEADER_EPOCH).
   * An empty buffer is a no-op.
   */
  appendAsFollower(batches: Buffer): AppendInfo {
    this.ensureOpen();
    if (batches.length === 0) return this.emptyAppendInfo();
    const incoming = validateAppend(batches, false, this.config);
    let expected = this._logEndOffset;
    let epoch = this.epochCache.latestEpoch();
    for (const b of incoming) {
      // At or after: a compacted leader's log has gaps where the cleaner dropped batches.
      if (b.baseOffset < expected) {
        throw new SluiceError(Errors.OFFSET_OUT_OF_RANGE, `follower batch at offset ${b.baseOffset}, expected at least ${expected}`,
          { logStartOffset: this._logStartOffset, logEndOffset: this._logEndOffset, baseOffset: b.baseOffset });
      }
      if (b.leaderEpoch >= 0 && b.leaderEpoch < epoch) {
        throw new SluiceError(Errors.FENCED_LEADER_EPOCH, `follower batch at ${b.baseOffset} has leader epoch ${b.leaderEpoch} below ${epoch}`,
          { leaderEpoch: b.leaderEpoch, latestEpoch: epoch });
      }
      epoch = Math.max(epoch, b.leaderEpoch);
      expected = b.lastOffset + 1;
    }
    // Not kept in the tail cache: only leaders serve fetches, and holding what
    // a follower appended only aged it into V8's old generation for nothing.
    return this.appendValidated(batches, incoming, false);
  }

  private appendValidated(buf: Buffer, batches: IncomingBatch[], cacheTail: boolean): AppendInfo {
    const first = batches[0]!;
    const last = batches[batches.length - 1]!;
    const nowMs = this.clock.nowMs();
    this.beforeChange();
    if (this.active.shouldRoll(buf.length, last.lastOffset, nowMs, this.config)) this.roll();
    const position = this.active.sizeBytes;
    try {
      this.active.append(buf, 0, buf.length, batches, nowMs);
    } catch (err) {
      throw storageError(err, `append to ${this.dir}`);
    }
    if (cacheTail) this.cacheTail(position, buf);
    else this.dropTail();
    this._logEndOffset = last.lastOffset + 1;
    let maxTimestamp = -1;
    let recordCount = 0;
    for (const b of batches) {
      if (b.leaderEpoch >= 0 && b.leaderEpoch > this.epochCache.latestEpoch()) {
        this.epochCache.assign(b.leaderEpoch, b.baseOffset);
        this.checkpointEpochs();
      }
      maxTimestamp = Math.max(maxTimestamp, b.maxTimestamp);
      recordCount += b.recordCount;
    }
    this.unflushedMessages += recordCount;
    this.maybeFlush(nowMs);
    this.checkInvariants();
    return {
      baseOffset: first.baseOffset,
      lastOffset: last.lastOffset,
      maxTimestamp,
      batchCount: batches.length,
      recordCount,
      sizeBytes: buf.length,
      logStartOffset: this._logStartOffset,
    };
  }

  /** The appended bytes join the tail cache; a new active segment starts a new tail. */
  private cacheTail(position: number, buf: Buffer): void {
    if (this.tail === null) return;
    if (this.tailSegment !== this.active) {
      this.tail.clear();
      this.tailSegment = this.active;
    }
    this.tail.appended(position, buf);
  }

  /** The cached tail no longer matches the files (a truncation, a close). */
  private dropTail(): void {
    this.tail?.clear();
    this.tailSegment = null;
  }

  private emptyAppendInfo(): AppendInfo {
    return {
      baseOffset: this._logEndOffset,
      lastOffset: this._logEndOffset - 1,
      maxTimestamp: -1,
      batchCount: 0,
      recordCount: 0,
      sizeBytes: 0,
      logStartOffset: this._logStartOffset,
    };
  }

  /**
   * Closes the active segment and starts a new one at the LEO (a no-op when the
   * active segment is empty). The closed segment is fsynced in the background;
   * when that finishes the recovery point moves to its end.
   */
  roll(): void {
    this.ensureOpen();
    const old = this.active;
    if (old.isEmpty) return;
    old.sealTimeIndex();
    old.persistIndexes();
    this.segments.push(LogSegment.create(this.fs, this.dir, this._logEndOffset, this.config));
    this.dirEntriesDirty = true;
    this.scheduleBackgroundFlush(old, this._logEndOffset);
  }

  private scheduleBackgroundFlush(segment: LogSegment, upTo: number): void {
    const generation = this.truncations;
    this.flushChain = this.flushChain
      .then(() => segment.flushAsync())
      // Segments rolled after this one (their own flushes come later in the chain) go first as well: the
      // directory fsync makes the newest segment's name durable (see syncClosedSegments).
      .then(() => Promise.all(this.segments.filter((s) => s !== segment && s !== this.active && s.nextOffset > this._recoveryPoint)
        .map((s) => s.flushAsync())))
      .then(() => fsyncDirAsync(this.fs, this.dir))
      .then(() => (this.parentEntryDirty ? fsyncDirAsync(this.fs, path.dirname(this.dir)) : undefined))
      .then(() => {
        // The recovery point may claim the segment only once the log's own directory entry is on disk too.
        this.parentEntryDirty = false;
        if (!this.closed && generation === this.truncations && upTo > this._recoveryPoint) {
          this._recoveryPoint = Math.min(upTo, this._logEndOffset);
        }
      })
      .catch((err: unknown) => this.logger.error({ dir: this.dir, err: String(err) }, 'background flush of a rolled segment failed'));
  }

  /** Resolves when the background flushes started so far have finished (tests, orderly shutdown). */
  whenBackgroundFlushed(): Promise<void> {
    return this.flushChain;
  }

  // ---- flushing ------------------------------------------------------------

  /** fsyncs every segment holding unflushed data, then moves the recovery point to the LEO. */
  flush(): void {
    this.flushUpToEnd(false);
  }

  /**
   * The same, except that the active segment's index files are neither
   * written nor fsynced: the durability mode's per-batch flush (fsync before
   * acknowledging). The active segment holds the recovery point, so after a
   * crash it is re-validated and its indexes rebuilt anyway (log-loader.ts);
   * every earlier segment is flushed whole, as flush() does.
   */
  flushData(): void {
    this.flushUpToEnd(true);
  }

  private flushUpToEnd(activeDataOnly: boolean): void {
    this.ensureOpen();
    try {
      for (const s of this.segments) {
        if (s === this.active) {
          if (activeDataOnly) s.flushData();
          else s.flush();
        } else if (s.nextOffset >= this._recoveryPoint) {
          // `>=`: a truncation leaves the segment it cut ending exactly at the recovery point, with its cut not yet on disk.
          s.flush();
        }
        // A .txnindex written for the first time needs its name on disk too.
        if (s.takeNewTxnIndexFile()) this.dirEntriesDirty = true;
      }
      if (this.dirEntriesDirty) {
        fsyncDir(this.fs, this.dir);
        this.dirEntriesDirty = false;
      }
      if (this.parentEntryDirty) {
        fsyncDir(this.fs, path.dirname(this.dir));
        this.parentEntryDirty = false;
      }
    } catch (err) {
      throw storageError(err, `flush of ${this.dir}`);
    }
    this._recoveryPoint = this._logEndOffset;
    this.unflushedMessages = 0;
    this.lastFlushMs = this.clock.nowMs();
  }

  /** Flushes if flush.messages or flush.ms says so; returns whether it did. */
  maybeFlush(nowMs = this.clock.nowMs()): boolean {
    const due = this.unflushedMessages >= this.config.flushMessages ||
      (this._logEndOffset > this._recoveryPoint && nowMs - this.lastFlushMs >= this.config.flushMs);
    if (due) this.flush();
    return due;
  }

  // ---- reads ---------------------------------------------------------------

  /**
   * Whole batches from the one holding `fromOffset`: up to `maxBytes`, but
   * always at least one batch when any is available, even if it is larger.
   * Empty at the LEO (or at `opts.maxOffset`). OFFSET_OUT_OF_RANGE, with the
   * log's bounds in `details`, below the log start offset or past the LEO.
   */
  read(fromOffset: number, maxBytes: number, opts: ReadOptions = {}): ReadResult {
    this.ensureOpen();
    if (!(fromOffset >= this._logStartOffset && fromOffset <= this._logEndOffset)) {
      throw new SluiceError(Errors.OFFSET_OUT_OF_RANGE,
        `offset ${fromOffset} is outside [${this._logStartOffset}, ${this._logEndOffset}]`,
        { logStartOffset: this._logStartOffset, logEndOffset: this._logEndOffset });
    }
    const limit = Math.min(opts.maxOffset ?? this._logEndOffset, this._logEndOffset);
    for (let i = this.floorSegmentIndex(fromOffset); i < this.segments.length && fromOffset < limit; i++) {
      const seg = this.segments[i]!;
      const first = seg.translateOffset(fromOffset);
      if (first === null) continue;
      if (first.lastOffset >= limit) break;
      const maxPosition = limit >= seg.nextOffset ? seg.sizeBytes : seg.translateOffset(limit)!.position;
      const { records, lastBatchStart } = seg.read(first.position, first.sizeBytes, maxBytes, maxPosition, seg === this.tailSegment ? this.tail : null);
      return this.readResult(records, first.baseOffset, lastOffsetOf(records, lastBatchStart) + 1);
    }
    return this.readResult(EMPTY, fromOffset, fromOffset);
  }

  private readResult(records: Buffer, firstOffset: number, nextOffset: number): ReadResult {
    return {
      records,
      firstOffset,
      nextOffset,
      logStartOffset: this._logStartOffset,
      logEndOffset: this._logEndOffset,
      highWatermark: this._highWatermark,
    };
  }

  /**
   * The first offset (>= the log start offset) of the first batch whose max
   * timestamp is >= `timestamp`, found through the time indexes; null if no
   * batch is that recent.
   */
  offsetForTimestamp(timestamp: number): number | null {
    this.ensureOpen();
    for (const seg of this.segments) {
      if (seg.maxTimestamp < timestamp || seg.nextOffset <= this._logStartOffset) continue;
      const hit = seg.findByTimestamp(timestamp, this._logStartOffset);
      if (hit !== null) return Math.max(hit.baseOffset, this._logStartOffset);
    }
    return null;
  }

  /**
   * The largest batch max timestamp in the log (from the log start offset)
   * and the base offset of the first batch that reached it (Kafka's
   * MAX_TIMESTAMP lookup); null for an empty log.
   */
  maxTimestampBatch(): { timestamp: number; baseOffset: number } | null {
    this.ensureOpen();
    let best: { timestamp: number; baseOffset: number } | null = null;
    for (const seg of this.segments) {
      if (seg.nextOffset <= this._logStartOffset || seg.nextOffset === seg.baseOffset) continue;
      if (best === null || seg.maxTimestamp > best.timestamp) best = { timestamp: seg.maxTimestamp, baseOffset: seg.offsetOfMaxTimestamp };
    }
    if (best === null || best.timestamp < 0) return null;
    return { timestamp: best.timestamp, baseOffset: Math.max(best.baseOffset, this._logStartOffset) };
  }

  /** Index of the last segment whose base offset is <= `offset` (0 if none). */
  private floorSegmentIndex(offset: number): number {
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.segments[mid]!.baseOffset <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  // ---- aborted transactions (txn-index.ts) --------------------------------------

  /**
   * Indexes an aborted transaction in the segment holding its ABORT marker
   * (`e.lastOffset`, a batch of this log). The index is derived data: the
   * producer state that computed the entry puts it back after a crash
   * (resetAbortedTxns). A marker already indexed is not added twice.
   */
  addAbortedTxn(e: AbortedTxn): void {
    this.ensureOpen();
    assert(e.lastOffset < this._logEndOffset && e.firstOffset <= e.lastOffset && e.producerId >= 0, `addAbortedTxn: bad entry [${e.firstOffset}, ${e.lastOffset}] at LEO ${this._logEndOffset}`);
    const seg = this.segments[this.floorSegmentIndex(e.lastOffset)]!;
    seg.txnIndex.append(e);
  }

  /**
   * Makes every segment's aborted-transaction index hold exactly `entries`
   * (in marker order: what a scan of the whole log found). Entries below the
   * first segment are dropped.
   */
  resetAbortedTxns(entries: readonly AbortedTxn[]): void {
    this.ensureOpen();
    const bySegment = new Map<LogSegment, AbortedTxn[]>();
    for (const e of entries) {
      if (e.lastOffset < this.segments[0]!.baseOffset || e.lastOffset >= this._logEndOffset) continue;
      const seg = this.segments[this.floorSegmentIndex(e.lastOffset)]!;
      let list = bySegment.get(seg);
      if (!list) bySegment.set(seg, (list = []));
      list.push(e);
    }
    for (const seg of this.segments) seg.txnIndex.replaceAll(bySegment.get(seg) ?? []);
  }

  /**
   * The aborted transactions a read_committed read of [fromOffset,
   * upToOffset) must know of: those whose ABORT marker is at or after
   * `fromOffset` and whose first offset is below `upToOffset` (Kafka's
   * collectAbortedTransactions). Looks from the segment holding
   * `fromOffset` on, and stops after a segment with an abort whose last
   * stable offset reached `upToOffset`: every transaction begun before that
   * had ended by then, so no later marker can concern the read.
   */
  abortedTransactions(fromOffset: number, upToOffset: number): AbortedTxn[] {
    this.ensureOpen();
    const out: AbortedTxn[] = [];
    for (let i = this.floorSegmentIndex(fromOffset); i < this.segments.length; i++) {
      const idx = this.segments[i]!.txnIndex;
      let complete = false;
      for (let j = 0; j < idx.entries; j++) {
        const e = idx.entryAt(j);
        if (e.lastOffset >= fromOffset && e.firstOffset < upToOffset) out.push(e);
        if (e.lastStableOffset >= upToOffset) complete = true;
      }
      if (complete) break;
    }
    return out;
  }

  // ---- leader epochs ----------------------------------------------------------

  /** KIP-101/279: the largest epoch <= `epoch` and where it ends in this log. */
  endOffsetForEpoch(epoch: number): EpochEndOffset {
    return this.epochCache.endOffsetForEpoch(epoch, this._logEndOffset);
  }

  /**
   * A new leader starts `epoch` at its LEO (Kafka's makeLeader), so that
   * OffsetForLeaderEpoch answers about older epochs end where this one began
   * even before it has appended anything. No-op unless `epoch` is newer.
   */
  assignLeaderEpoch(epoch: number): void {
    this.ensureOpen();
    if (epoch <= this.epochCache.latestEpoch()) return;
    this.epochCache.assign(epoch, this._logEndOffset);
    this.checkpointEpochs();
  }

  latestEpoch(): number {
    return this.epochCache.latestEpoch();
  }

  epochEntries(): readonly EpochEntry[] {
    return this.epochCache.all();
  }

  // ---- truncation, retention, start offset ----------------------------------

  /**
   * Drops every batch that holds an offset >= `offset` (batches are never
   * split, so the new LEO is <= `offset`: the end of the last batch kept), and
   * the leader epochs starting at or after it. Returns the new LEO.
   */
  truncateTo(offset: number): number {
    this.ensureOpen();
    assert(Number.isSafeInteger(offset) && offset >= 0, `truncateTo(${offset})`);
    if (offset >= this._logEndOffset) {
      // No batch to drop, but epochs that start at the LEO (assigned by a
      // leader that wrote nothing in them) must go: they are not in the log.
      if (offset === this._logEndOffset && this.epochCache.all().some((e) => e.startOffset >= offset)) {
        this.epochCache.truncateFromEnd(offset);
        this.checkpointEpochs();
      }
      return this._logEndOffset;
    }
    if (offset < this.segments[0]!.baseOffset) {
      this.truncateFullyAndStartAt(offset);
      return offset;
    }
    this.beforeChange();
    this.truncations++;
    this._structureVersion++;
    this.dropTail();
    const keep = this.floorSegmentIndex(offset);
    const removed = this.segments.splice(keep + 1);
    try {
      for (const s of removed) s.deleteFiles();
      this.active.truncateTo(offset);
      // A durable cut, as in the Raft log: a crash never brings back what a truncation dropped — neither the
      // batches (a follower would hold a divergent suffix again) nor later segments (the LEO would jump past a
      // gap). Truncations are rare (a follower meeting a new leader), so the two fsyncs cost little.
      this.syncClosedSegments();
      this.active.flushData();
      if (removed.length > 0 || this.dirEntriesDirty) {
        fsyncDir(this.fs, this.dir);
        this.dirEntriesDirty = false;
      }
    } catch (err) {
      throw storageError(err, `truncation of ${this.dir}`);
    }
    this._logEndOffset = this.active.nextOffset;
    this.afterEndMovedBack();
    return this._logEndOffset;
  }

  /** Deletes every segment and starts an empty log at `offset` (a follower far behind or ahead of its leader). */
  truncateFullyAndStartAt(offset: number): void {
    this.ensureOpen();
    assert(Number.isSafeInteger(offset) && offset >= 0, `truncateFullyAndStartAt(${offset})`);
    this.truncations++;
    this._structureVersion++;
    this.dropTail();
    for (const s of this.segments) s.deleteFiles();
    this.segments = [LogSegment.create(this.fs, this.dir, offset, this.config)];
    fsyncDir(this.fs, this.dir);
    this.dirEntriesDirty = false;
    this.markerRemovalUnsynced = false;
    this._logEndOffset = offset;
    this._logStartOffset = offset;
    this._highWatermark = offset;
    this._recoveryPoint = offset;
    this.unflushedMessages = 0;
    this.epochCache.clear();
    this.checkpointEpochs();
    this.checkInvariants();
  }

  private afterEndMovedBack(): void {
    const end = this._logEndOffset;
    this._logStartOffset = Math.min(this._logStartOffset, end);
    this._recoveryPoint = Math.min(this._recoveryPoint, end);
    this._highWatermark = Math.min(this._highWatermark, end);
    this.epochCache.truncateFromEnd(end);
    this.checkpointEpochs();
    this.checkInvariants();
  }

  /** Sets the high watermark (replication's job), clamped into [logStartOffset, LEO]; returns it. */
  updateHighWatermark(offset: number): number {
    this.ensureOpen();
    this._highWatermark = Math.min(Math.max(offset, this._logStartOffset), this._logEndOffset);
    return this._highWatermark;
  }

  /**
   * Moves the log start offset up to `offset` (DeleteRecords): reads below it
   * fail from now on and segments wholly below it are deleted. The offset may
   * not pass the high watermark (OFFSET_OUT_OF_RANGE).
   */
  advanceLogStartOffset(offset: number): void {
    this.ensureOpen();
    if (offset <= this._logStartOffset) return;
    if (offset > this._highWatermark) {
      throw new SluiceError(Errors.OFFSET_OUT_OF_RANGE, `cannot move the log start offset to ${offset} past the high watermark ${this._highWatermark}`,
        { logStartOffset: this._logStartOffset, logEndOffset: this._logEndOffset, highWatermark: this._highWatermark });
    }
    this.setLogStartOffset(offset);
    this.deleteOldSegments();
  }

  private setLogStartOffset(offset: number): void {
    if (offset <= this._logStartOffset) return;
    this._logStartOffset = offset;
    this.epochCache.truncateFromStart(offset);
    this.checkpointEpochs();
  }

  /**
   * Applies retention.ms, retention.bytes and the log start offset to the
   * closed segments (retention.ts decides) and deletes those that expired.
   * Returns how many were deleted.
   */
  deleteOldSegments(): number {
    this.ensureOpen();
    const decision = decideRetention({
      segments: this.segments.map((s, i): SegmentSummary => ({
        baseOffset: s.baseOffset,
        sizeBytes: s.sizeBytes,
        // Only closed segments are candidates; the active one's timestamp is never consulted.
        largestTimestampMs: i < this.segments.length - 1 ? s.largestTimestampMs() : Number.MAX_SAFE_INTEGER,
      })),
      nowMs: this.clock.nowMs(),
      // cleanup.policy=compact alone: the log cleaner decides what goes, retention only follows the log start offset.
      retentionMs: deletesByRetention(this.config) ? this.config.retentionMs : -1,
      retentionBytes: deletesByRetention(this.config) ? this.config.retentionBytes : -1,
      logStartOffset: this._logStartOffset,
      highWatermark: this._highWatermark,
    });
    if (decision.deleteCount > 0) {
      this._structureVersion++;
      const gone = this.segments.splice(0, decision.deleteCount);
      for (const s of gone) s.deleteFiles();
      this.logger.info({ dir: this.dir, segments: gone.map((s) => s.baseOffset), reason: decision.reason }, 'deleted segments');
    }
    this.setLogStartOffset(decision.logStartOffset);
    this.checkInvariants();
    return decision.deleteCount;
  }

  // ---- lifecycle -------------------------------------------------------------

  /**
   * Clean shutdown: seals the active segment's time index, flushes everything,
   * closes the files and writes the clean-shutdown marker, so the next open
   * skips recovery.
   */
  close(): void {
    if (this.closed) return;
    this.dropTail();
    this.active.sealTimeIndex();
    this.flush();
    this.checkpointEpochs();
    for (const s of this.segments) s.close();
    // No fsync: everything it vouches for was fsynced just above, and a marker
    // lost in a crash only costs a re-validation at the next start.
    this.fs.writeFileSync(path.join(this.dir, CLEAN_SHUTDOWN_FILE), '');
    this.closed = true;
  }

  /** Releases the files without flushing or marking a clean shutdown (the log is being deleted). */
  closeForDelete(): void {
    if (this.closed) return;
    this.dropTail();
    for (const s of this.segments) s.close();
    this.closed = true;
  }

  private ensureOpen(): void {
    if (this.closed) throw new SluiceError(Errors.KAFKA_STORAGE_ERROR, `log ${this.dir} is closed`, { dir: this.dir });
  }

  /**
   * Before a directory fsync that no full flush precedes (the leader-epoch
   * checkpoint's, a cleaner swap's): that fsync makes every name in the
   * directory durable, a segment just rolled included, so the closed segments'
   * bytes must be on disk first. Otherwise a crash can keep the new segment's
   * name but not its predecessor's tail, and the log comes back with a gap:
   * an LEO past offsets it does not hold. Usually there is nothing to do: a
   * rolled segment is flushed in the background soon after its roll.
   */
  private syncClosedSegments(): void {
    for (const s of this.segments) if (s !== this.active && s.nextOffset >= this._recoveryPoint) s.flushData();
  }

  /** The leader-epoch checkpoint, written (with its directory fsync) after the segments it could expose. */
  private checkpointEpochs(): void {
    if (this.epochCache.unwritten) this.syncClosedSegments();
    this.epochCache.checkpoint();
  }

  /** Makes the removal of the clean-shutdown marker durable before the first change to the log's bytes. */
  private beforeChange(): void {
    if (!this.markerRemovalUnsynced) return;
    fsyncDir(this.fs, this.dir);
    this.markerRemovalUnsynced = false;
  }

  /** Runs after every mutation (appends included), so the message is built only on failure. */
  private checkInvariants(): void {
    const first = this.segments[0];
    assert(first !== undefined, 'a log always has a segment');
    if (!(first.baseOffset <= this._logStartOffset && this._logStartOffset <= this._highWatermark &&
      this._highWatermark <= this._logEndOffset && this._recoveryPoint <= this._logEndOffset &&
      this._logEndOffset === this.active.nextOffset)) {
      throw new AssertionError(`log ${this.dir}: offsets out of order: first segment ${first.baseOffset}, start ${this._logStartOffset}, ` +
        `HW ${this._highWatermark}, LEO ${this._logEndOffset}, recovery point ${this._recoveryPoint}, active end ${this.active.nextOffset}`);
    }
  }
}

/** An I/O failure as KAFKA_STORAGE_ERROR; broken invariants (AssertionError) pass through untouched. */
function storageError(err: unknown, what: string): Error {
  if (isSluiceError(err) || err instanceof AssertionError) return err;
  const e = err as NodeJS.ErrnoException;
  return new SluiceError(Errors.KAFKA_STORAGE_ERROR, `${what} failed: ${e.message ?? String(err)}`, { errno: e.code });
}
