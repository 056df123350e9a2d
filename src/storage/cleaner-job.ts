// One clean of one log (Kafka's Cleaner.clean), run in slices: each step()
// reads at most about `sliceBytes` and returns, so the broker's event loop,
// which also serves requests, is never held for long. The shell
// (log-cleaner.ts) schedules the steps and throttles them.
//
// Phases:
//   map    read the closed segments below firstUncleanableOffset in order;
//          put every keyed record at or after firstDirtyOffset into the
//          offset map (key hash -> last offset), and note each producer's
//          last batch. When the map would overflow, the clean ends at the
//          batch that did not fit (Kafka's rule); if not even the first dirty
//          batch fits, the log is uncleanable with this buffer size.
//   clean  for each group of segments (cleaner-plan.ts groupSegments) below
//          the end: filter every batch (cleaner-filter.ts) into a new
//          `<base>.log.cleaned` segment, then swap it in (segment-swap.ts).
// The new firstDirtyOffset is the end of the map: everything below it has
// been deduplicated against everything below it.
//
// Transactions (KIP-98): the map phase reads every batch from the first
// closed segment on, so it also follows each producer's transactions to
// their markers. A transactional batch's keyed records enter the map only
// once its COMMIT marker is read (an aborted or still undecided value must
// never make the cleaner drop an older committed one); an ABORT marker makes
// the transaction's range an aborted one, whose batches the clean phase
// drops (markers stay, cleaner-filter.ts). A transaction still undecided
// where the map ends (its marker past the cleanable range, or not written
// yet) is left alone, and the clean ends at its first offset, so the next
// clean maps it once decided — Kafka bounds cleaning by the last stable
// offset for the same reason. The cleaned segment's aborted-transaction
// index is the union of the indexes of the segments it replaces (their
// markers are all kept).
//
// Races: before every step and right before each swap the job checks that
// the log is open and its structureVersion unchanged (no truncation,
// retention or other swap since it looked); otherwise it gives up, deleting
// its `.cleaned` file. Appends only touch the active segment, which is never
// in a job.

import { AssertionError } from '../util/assert.js';
import type { Logger } from '../util/logger.js';
import { batchSizeAt, RECORD_BATCH_HEADER_BYTES, lastOffsetOf, baseOffsetOf, maxTimestampOf, PRODUCER_ID_OFFSET, recordCountOf } from '../record/batch-header.js';
import { decodeRecordBatch } from '../record/record-batch.js';
import { isControlBatch, isTransactionalBatch, parseControlBatch } from '../record/control-batch.js';
import { filterBatch } from './cleaner-filter.js';
import { groupSegments, type CleanableRange, type CleanerSegment } from './cleaner-plan.js';
import { OFFSET_INDEX_ENTRY_BYTES } from './offset-index.js';
import { TIME_INDEX_ENTRY_BYTES } from './time-index.js';
import { hashKey, OffsetMap } from './offset-map.js';
import type { PartitionLog } from './partition-log.js';
import { CLEANED_FILE_SUFFIX, type SwapHook } from './segment-swap.js';
import { LogSegment, type AppendBatch } from './segment.js';
import { removeIfExists } from '../util/fs-util.js';

/** Producers whose last batch a job remembers; past this, every emptied producer batch is kept (safe, only less compact). */
const PRODUCERS_TRACKED_MAX = 100_000;

export interface CleanJobOptions {
  map: OffsetMap;
  nowMs: number;
  sliceBytes: number;
  logger: Logger;
  swapHook?: SwapHook;
}

export interface CleanResult {
  /** The new firstDirtyOffset for the cleaner checkpoint. */
  endOffset: number;
  bytesRead: number;
  bytesWritten: number;
  recordsRemoved: number;
  batchesDropped: number;
  segmentsBefore: number;
  segmentsAfter: number;
}

export class UncleanableLogError extends Error {}

/** A transaction the map phase has seen begin and not end: its first offset, and its keyed records waiting for a COMMIT. */
interface OpenTxn {
  readonly first: number;
  readonly pending: Array<{ hash: Buffer; offset: number }>;
}

type Phase = 'map' | 'clean' | 'done' | 'aborted';

export class CleanJob {
  private phase: Phase = 'map';
  /** The log's structureVersion as this job last left it (its own swaps move it too). */
  private version: number;
  private readonly segments: readonly LogSegment[];
  private segIndex = 0;
  private position = 0;
  private endOffset: number;
  private readonly lastBatchOfProducer = new Map<bigint, number>();
  private producersOverflow = false;
  /** Transactions open at the map's position: producer → first offset and the keyed records waiting for its COMMIT. */
  private readonly openTxns = new Map<bigint, OpenTxn>();
  private pendingRecords = 0;
  /** Aborted transactions found by the map phase: producer → [first offset, marker offset] ranges. */
  private readonly abortedTxns = new Map<bigint, Array<[number, number]>>();
  private groups: Array<[number, number]> = [];
  private groupIndex = 0;
  private cleaned: LogSegment | null = null;
  private readonly stats = { bytesRead: 0, bytesWritten: 0, recordsRemoved: 0, batchesDropped: 0 };
  private abortReason: string | null = null;

  constructor(private readonly log: PartitionLog, private readonly range: CleanableRange, private readonly opts: CleanJobOptions) {
    this.version = log.structureVersion;
    this.segments = log.closedSegments().filter((s) => s.baseOffset < range.firstUncleanableOffset);
    this.endOffset = range.firstUncleanableOffset;
    opts.map.clear();
    if (this.segments.length === 0) this.phase = 'done';
  }

  /** The first dirty offset this clean started from (a result not past it made no progress: an undecided transaction). */
  get firstDirtyOffset(): number {
    return this.range.firstDirtyOffset;
  }

  get isFinished(): boolean {
    return this.phase === 'done' || this.phase === 'aborted';
  }
  get aborted(): string | null {
    return this.abortReason;
  }

  result(): CleanResult {
    return {
      endOffset: this.endOffset,
      ...this.stats,
      segmentsBefore: this.segments.length,
      segmentsAfter: this.groups.length,
    };
  }

  /** One slice of work; returns the bytes it read and wrote (for the throttle). Throws UncleanableLogError. */
  step(): number {
    if (this.isFinished) return 0;
    if (this.log.isClosed || this.log.structureVersion !== this.version) {
      this.abort(this.log.isClosed ? 'log closed' : 'log truncated, retained or swapped meanwhile');
      return 0;
    }
    return this.phase === 'map' ? this.mapStep() : this.cleanStep();
  }

  abort(reason: string): void {
    if (this.isFinished) return;
    this.phase = 'aborted';
    this.abortReason = reason;
    if (this.cleaned !== null) {
      this.cleaned.release();
      removeIfExists(this.log.fs, this.cleaned.logFile);
      this.cleaned = null;
    }
  }

  // ---- map phase -------------------------------------------------------------

  private mapStep(): number {
    const seg = this.segments[this.segIndex]!;
    const chunk = seg.readBatchesFrom(this.position, this.opts.sliceBytes);
    this.stats.bytesRead += chunk.length;
    const firstDirty = this.range.firstDirtyOffset;
    for (let pos = 0; pos < chunk.length;) {
      const size = batchSizeAt(chunk, pos);
      this.noteProducer(chunk, pos);
      if (isControlBatch(chunk, pos)) {
        this.endTxn(chunk, pos);
        pos += size;
        continue;
      }
      // Every transactional batch opens (or continues) its transaction, also below the first dirty offset:
      // its marker may lie above it, and an abort must still drop it.
      const txn = this.txnOf(chunk, pos);
      if (lastOffsetOf(chunk, pos) >= firstDirty && !this.mapBatch(chunk, pos, firstDirty, txn)) {
        this.endOffset = baseOffsetOf(chunk, pos);
        if (this.endOffset <= firstDirty) {
          throw new UncleanableLogError(`log.cleaner.dedupe.buffer.size too small: the batch at ${this.endOffset} alone overflows the offset map of ${this.opts.map.capacity} keys`);
        }
        return this.startCleaning(chunk.length);
      }
      pos += size;
    }
    this.position += chunk.length;
    if (this.position >= seg.sizeBytes) {
      this.segIndex++;
      this.position = 0;
      if (this.segIndex >= this.segments.length) return this.startCleaning(chunk.length);
    }
    return chunk.length;
  }

  /**
   * Puts the batch's keyed records into the map (a transactional batch's
   * wait for its COMMIT marker); false (nothing put) if they might not fit.
   */
  private mapBatch(chunk: Buffer, pos: number, firstDirty: number, txn: OpenTxn | null): boolean {
    const map = this.opts.map;
    if (map.size + this.pendingRecords + recordCountOf(chunk, pos) > map.capacity) return false;
    const batch = decodeRecordBatch(chunk, pos);
    for (const r of batch.records) {
      if (r.key === null || r.offset < firstDirty) continue;
      if (txn === null) map.put(hashKey(r.key), r.offset);
      else {
        txn.pending.push({ hash: hashKey(r.key), offset: r.offset });
        this.pendingRecords++;
      }
    }
    return true;
  }

  /** The open transaction a transactional batch belongs to (opened by it if need be); null for other batches. */
  private txnOf(chunk: Buffer, pos: number): OpenTxn | null {
    const pid = chunk.readBigInt64BE(pos + PRODUCER_ID_OFFSET);
    if (pid < 0n || !isTransactionalBatch(chunk, pos)) return null;
    let txn = this.openTxns.get(pid);
    if (!txn) this.openTxns.set(pid, (txn = { first: baseOffsetOf(chunk, pos), pending: [] }));
    return txn;
  }

  /** A control batch: a marker ends its producer's open transaction (COMMIT maps its records, ABORT marks its range). */
  private endTxn(chunk: Buffer, pos: number): void {
    const pid = chunk.readBigInt64BE(pos + PRODUCER_ID_OFFSET);
    let control;
    try {
      control = parseControlBatch(chunk, pos);
    } catch {
      return; // not a marker we can read: nothing ends (the transaction stays undecided, so untouched)
    }
    if (control.kind !== 'marker') return;
    const txn = this.openTxns.get(pid);
    if (!txn) return;
    this.openTxns.delete(pid);
    this.pendingRecords -= txn.pending.length;
    if (control.committed) {
      for (const r of txn.pending) this.opts.map.put(r.hash, r.offset);
      return;
    }
    let ranges = this.abortedTxns.get(pid);
    if (!ranges) this.abortedTxns.set(pid, (ranges = []));
    ranges.push([txn.first, baseOffsetOf(chunk, pos)]);
  }

  private isAborted(pid: bigint, baseOffset: number): boolean {
    return this.abortedTxns.get(pid)?.some(([first, last]) => first <= baseOffset && baseOffset <= last) ?? false;
  }

  private noteProducer(chunk: Buffer, pos: number): void {
    const pid = chunk.readBigInt64BE(pos + PRODUCER_ID_OFFSET);
    if (pid < 0n) return;
    if (!this.lastBatchOfProducer.has(pid) && this.lastBatchOfProducer.size >= PRODUCERS_TRACKED_MAX) {
      this.producersOverflow = true;
      return;
    }
    this.lastBatchOfProducer.set(pid, baseOffsetOf(chunk, pos));
  }

  private startCleaning(bytes: number): number {
    // An undecided transaction is not cleaned past (see the header); the checkpoint never goes back, though.
    for (const txn of this.openTxns.values()) this.endOffset = Math.max(this.range.firstDirtyOffset, Math.min(this.endOffset, txn.first));
    const toClean = this.segments.filter((s) => s.baseOffset < this.endOffset);
    const config = this.log.logConfig;
    const summaries: CleanerSegment[] = toClean.map((s) => ({
      baseOffset: s.baseOffset, nextOffset: s.nextOffset, sizeBytes: s.sizeBytes, maxTimestamp: s.maxTimestamp,
      firstBatchTimestampMs: s.firstBatchTimestampMs, offsetIndexEntries: s.offsetIndex.entries, timeIndexEntries: s.timeIndex.entries,
    }));
    // What follows the last one bounds its offsets (groupSegments' int32 rule).
    const bound = this.segments[toClean.length]?.baseOffset ?? this.range.firstUncleanableOffset;
    summaries.push({ baseOffset: bound, nextOffset: bound, sizeBytes: 0, maxTimestamp: -1, firstBatchTimestampMs: null, offsetIndexEntries: 0, timeIndexEntries: 0 });
    this.groups = groupSegments(summaries, toClean.length, {
      segmentBytes: config.segmentBytes,
      offsetIndexEntriesMax: Math.floor(config.segmentIndexBytes / OFFSET_INDEX_ENTRY_BYTES),
      timeIndexEntriesMax: Math.floor(config.segmentIndexBytes / TIME_INDEX_ENTRY_BYTES),
    });
    this.phase = this.groups.length === 0 ? 'done' : 'clean';
    this.segIndex = this.groups[0]?.[0] ?? 0;
    this.position = 0;
    return bytes;
  }

  // ---- clean phase -----------------------------------------------------------

  private cleanStep(): number {
    const [from, to] = this.groups[this.groupIndex]!;
    const seg = this.segments[this.segIndex]!;
    this.cleaned ??= LogSegment.createCleaned(this.log.fs, this.log.dir, this.segments[from]!.baseOffset, this.log.logConfig, CLEANED_FILE_SUFFIX);
    const chunk = seg.readBatchesFrom(this.position, this.opts.sliceBytes);
    this.stats.bytesRead += chunk.length;
    const written = this.filterChunk(chunk);
    this.position += chunk.length;
    if (this.position >= seg.sizeBytes) {
      this.segIndex++;
      this.position = 0;
      if (this.segIndex >= to) this.swapGroup(from, to);
    }
    return chunk.length + written;
  }

  private filterChunk(chunk: Buffer): number {
    const parts: Buffer[] = [];
    const batches: AppendBatch[] = [];
    let length = 0;
    const ctx = {
      map: this.opts.map,
      nowMs: this.opts.nowMs,
      deleteRetentionMs: this.log.logConfig.deleteRetentionMs,
      isLastBatchOfProducer: (pid: bigint, base: number) => this.producersOverflow || (this.lastBatchOfProducer.get(pid) ?? base) === base,
      isAborted: (pid: bigint, base: number) => this.isAborted(pid, base),
    };
    for (let pos = 0; pos < chunk.length;) {
      const size = batchSizeAt(chunk, pos);
      const original = chunk.subarray(pos, pos + size);
      const outcome = filterBatch(decodeRecordBatch(original), original, ctx);
      pos += size;
      if (outcome.kind === 'drop') {
        this.stats.recordsRemoved += outcome.removed;
        this.stats.batchesDropped++;
        continue;
      }
      if (outcome.kind === 'rewrite') this.stats.recordsRemoved += outcome.removed;
      const b = outcome.bytes;
      if (b.length < RECORD_BATCH_HEADER_BYTES) throw new AssertionError('cleaner produced a short batch');
      batches.push({ offsetInBuffer: length, sizeBytes: b.length, baseOffset: baseOffsetOf(b), lastOffset: lastOffsetOf(b), maxTimestamp: maxTimestampOf(b) });
      parts.push(b);
      length += b.length;
    }
    if (batches.length === 0) return 0;
    const buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
    this.cleaned!.append(buf, 0, buf.length, batches, this.opts.nowMs);
    this.stats.bytesWritten += buf.length;
    return buf.length;
  }

  private swapGroup(from: number, to: number): void {
    const cleaned = this.cleaned!;
    this.cleaned = null;
    if (this.log.isClosed || this.log.structureVersion !== this.version) {
      cleaned.release();
      removeIfExists(this.log.fs, cleaned.logFile);
      this.phase = 'aborted';
      this.abortReason = 'log changed before the swap';
      return;
    }
    const old = this.segments.slice(from, to);
    // Every marker is kept, so every abort the old segments indexed still holds.
    cleaned.txnIndex.replaceAll(old.flatMap((s) => s.txnIndex.all()));
    try {
      this.log.replaceSegments(old, cleaned, this.opts.swapHook);
    } catch (err) {
      // The files are left exactly as the failed step left them: the next
      // open finishes or undoes the swap from their suffixes (removing the
      // `.cleaned` file now could turn renamed old segments into lost ones).
      // Meanwhile the log serves the old segments, whose descriptors are open.
      this.phase = 'aborted';
      this.abortReason = `swap failed: ${String(err)}`;
      throw err;
    }
    this.version = this.log.structureVersion;
    cleaned.initRollBase(this.opts.nowMs);
    this.groupIndex++;
    if (this.groupIndex >= this.groups.length) {
      this.phase = 'done';
      return;
    }
    this.segIndex = this.groups[this.groupIndex]![0];
    this.position = 0;
  }
}
