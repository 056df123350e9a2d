// The log cleaner of one node (Kafka's LogCleaner + LogCleanerManager): finds
// the compacted logs that are due (cleaner-plan.ts), cleans them with
// CleanJobs (cleaner-job.ts) in slices scheduled off the request path, keeps
// `cleaner-offset-checkpoint` (first dirty offset per log) and the numbers
// that `topics describe` and the metrics show.
//
// Scheduling: up to `log.cleaner.threads` jobs run at once, each a chain of
// slices on the injected Scheduler (delay 0 = a later event-loop turn, so
// requests run between slices; longer when the I/O throttle says so). Each
// thread has its own offset map of dedupe.buffer.size / threads bytes,
// allocated once. When nothing is due the cleaner looks again after
// `log.cleaner.backoff.ms`.
//
// A clean that could not move the first dirty offset (an undecided
// transaction at it, cleaner-job.ts) leaves its log alone for
// `log.cleaner.backoff.ms`, so an open transaction never makes the cleaner spin.
//
// A log whose clean fails (the offset map cannot hold one batch, an I/O error
// in a swap) is marked uncleanable and skipped until the node restarts, as
// Kafka does; the failure is logged and shown by `status`.

import * as path from 'node:path';
import type { Clock, Scheduler } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { isSluiceError } from '../util/errors.js';
import type { FileSystem } from '../util/file-system.js';
import { readOffsetCheckpoint, writeOffsetCheckpoint, type PartitionOffset } from './checkpoint.js';
import { CleanJob, type CleanResult } from './cleaner-job.js';
import { cleanableRange, chooseLogToClean, type CleanableRange, type CleanerLogView } from './cleaner-plan.js';
import { IoThrottle } from './io-throttle.js';
import { isCompacted, type LogManagerConfig } from './log-config.js';
import { OffsetMap } from './offset-map.js';
import type { PartitionLog } from './partition-log.js';
import type { SwapHook } from './segment-swap.js';

export const CLEANER_OFFSET_CHECKPOINT_FILE = 'cleaner-offset-checkpoint';

export interface CleanerLog {
  topic: string;
  partition: number;
  log: PartitionLog;
}

export interface LogCleanerOptions {
  fs: FileSystem;
  dataDir: string;
  config: Readonly<LogManagerConfig>;
  clock: Clock;
  scheduler: Scheduler;
  logger: Logger;
  /** The logs to look at (the log manager's). */
  logs: () => Iterable<CleanerLog>;
  /** Tests: called between the steps of every swap. */
  swapHook?: SwapHook;
}

/** Totals since start, for the metrics. */
export interface CleanerStats {
  runs: number;
  aborted: number;
  failed: number;
  bytesRead: number;
  bytesWritten: number;
  recordsRemoved: number;
  lastCleanMs: number | null;
  lastDurationMs: number | null;
}

/** One log as the cleaner sees it, for `topics describe`. */
export interface LogCleanerStatus {
  compacted: boolean;
  dirtyRatio: number;
  firstDirtyOffset: number;
  cleanableBytes: number;
  lastCleanMs: number | null;
  cleaning: boolean;
  uncleanable: string | null;
}

interface Running {
  job: CleanJob;
  key: string;
  startedMs: number;
  throttle: IoThrottle;
  thread: number;
}

const keyOf = (topic: string, partition: number): string => `${topic}-${partition}`;

export class LogCleaner {
  private readonly maps: OffsetMap[] = [];
  private readonly running = new Map<number, Running>();
  private readonly firstDirty = new Map<string, number>();
  private readonly lastClean = new Map<string, number>();
  private readonly uncleanable = new Map<string, string>();
  /** Logs whose last clean made no progress, and until when they are skipped. */
  private readonly stalledUntil = new Map<string, number>();
  private readonly cancels = new Set<() => void>();
  /** The backoff timer of an idle cleaner (one at most). */
  private idleCancel: (() => void) | null = null;
  private started = false;
  readonly stats: CleanerStats = { runs: 0, aborted: 0, failed: 0, bytesRead: 0, bytesWritten: 0, recordsRemoved: 0, lastCleanMs: null, lastDurationMs: null };

  constructor(private readonly opts: LogCleanerOptions) {
    for (const e of this.readCheckpoint()) this.firstDirty.set(keyOf(e.topic, e.partition), e.offset);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.later(0, () => this.look());
  }

  /** Looks for due logs now instead of at the end of the backoff (a topic's config changed; tests). */
  wakeUp(): void {
    if (!this.started) return;
    this.idleCancel?.();
    this.idleCancel = null;
    this.later(0, () => this.look());
  }

  /** Stops scheduling and gives up running jobs (their `.cleaned` files are removed). */
  stop(): void {
    this.started = false;
    for (const cancel of [...this.cancels]) cancel();
    this.cancels.clear();
    this.idleCancel = null;
    for (const r of this.running.values()) r.job.abort('cleaner stopped');
    this.running.clear();
  }

  /** Gives up a clean of this log (it is being deleted) and forgets it. */
  forget(topic: string, partition: number): void {
    const key = keyOf(topic, partition);
    for (const [thread, r] of this.running) {
      if (r.key === key) {
        r.job.abort('log deleted');
        this.running.delete(thread);
      }
    }
    this.firstDirty.delete(key);
    this.lastClean.delete(key);
    this.uncleanable.delete(key);
    this.stalledUntil.delete(key);
  }

  status(log: CleanerLog): LogCleanerStatus {
    const key = keyOf(log.topic, log.partition);
    const range = this.rangeOf(log);
    return {
      compacted: isCompacted(log.log.logConfig),
      dirtyRatio: range.dirtyRatio,
      firstDirtyOffset: range.firstDirtyOffset,
      cleanableBytes: range.cleanableBytes,
      lastCleanMs: this.lastClean.get(key) ?? null,
      cleaning: [...this.running.values()].some((r) => r.key === key),
      uncleanable: this.uncleanable.get(key) ?? null,
    };
  }

  /** The largest dirty ratio of the compacted logs (Kafka's max-dirty-percent). */
  maxDirtyRatio(): number {
    let max = 0;
    for (const l of this.opts.logs()) if (isCompacted(l.log.logConfig) && !l.log.isClosed) max = Math.max(max, this.rangeOf(l).dirtyRatio);
    return max;
  }

  /** Whether no clean is running and none is due (tests wait for this). */
  isIdle(): boolean {
    return this.running.size === 0 && this.pickLog() === null;
  }

  private rangeOf(l: CleanerLog): CleanableRange {
    const log = l.log;
    const closed = log.closedSegments();
    const view: CleanerLogView = {
      segments: [
        ...closed.map((s) => ({
          baseOffset: s.baseOffset, nextOffset: s.nextOffset, sizeBytes: s.sizeBytes, maxTimestamp: s.maxTimestamp,
          firstBatchTimestampMs: s.firstBatchTimestampMs, offsetIndexEntries: s.offsetIndex.entries, timeIndexEntries: s.timeIndex.entries,
        })),
        { baseOffset: log.activeSegmentBaseOffset, nextOffset: log.logEndOffset, sizeBytes: 0, maxTimestamp: -1, firstBatchTimestampMs: null, offsetIndexEntries: 0, timeIndexEntries: 0 },
      ],
      logStartOffset: log.logStartOffset,
      highWatermark: log.highWatermark,
      logEndOffset: log.logEndOffset,
      checkpointedFirstDirty: this.firstDirty.get(keyOf(l.topic, l.partition)) ?? null,
    };
    return cleanableRange(view, log.logConfig, this.opts.clock.nowMs());
  }

  private later(delayMs: number, fn: () => void): () => void {
    if (!this.started) return () => {};
    const cancel = this.opts.scheduler.schedule(delayMs, () => {
      this.cancels.delete(wrapped);
      if (this.started) fn();
    });
    const wrapped = (): void => {
      this.cancels.delete(wrapped);
      cancel();
    };
    this.cancels.add(wrapped);
    return wrapped;
  }

  private pickLog(): { log: CleanerLog; range: CleanableRange } | null {
    const busy = new Set([...this.running.values()].map((r) => r.key));
    const candidates: { id: CleanerLog; range: CleanableRange }[] = [];
    const now = this.opts.clock.nowMs();
    for (const l of this.opts.logs()) {
      const key = keyOf(l.topic, l.partition);
      if (l.log.isClosed || busy.has(key) || this.uncleanable.has(key) || !isCompacted(l.log.logConfig)) continue;
      if ((this.stalledUntil.get(key) ?? -Infinity) > now) continue;
      candidates.push({ id: l, range: this.rangeOf(l) });
    }
    const best = chooseLogToClean(candidates);
    return best === null ? null : { log: best.id, range: best.range };
  }

  /** Fills the free threads with due logs; when none is due, looks again after the backoff. */
  private look(): void {
    const threads = this.opts.config.cleanerThreads;
    for (let thread = 0; thread < threads; thread++) {
      if (this.running.has(thread)) continue;
      const next = this.pickLog();
      if (next === null) break;
      this.begin(thread, next.log, next.range);
    }
    if (this.running.size === 0) {
      this.idleCancel?.();
      this.idleCancel = this.later(this.opts.config.cleanerBackoffMs, () => {
        this.idleCancel = null;
        this.look();
      });
    }
  }

  private mapFor(thread: number): OffsetMap {
    const bytes = Math.floor(this.opts.config.cleanerDedupeBufferSize / this.opts.config.cleanerThreads);
    return (this.maps[thread] ??= new OffsetMap(bytes));
  }

  private begin(thread: number, l: CleanerLog, range: CleanableRange): void {
    const key = keyOf(l.topic, l.partition);
    const job = new CleanJob(l.log, range, {
      map: this.mapFor(thread),
      nowMs: this.opts.clock.nowMs(),
      sliceBytes: this.opts.config.cleanerSliceBytes,
      logger: this.opts.logger,
      ...(this.opts.swapHook ? { swapHook: this.opts.swapHook } : {}),
    });
    const r: Running = { job, key, startedMs: this.opts.clock.monotonicMs(), throttle: new IoThrottle(this.opts.config.cleanerIoMaxBytesPerSecond, this.opts.clock), thread };
    this.running.set(thread, r);
    this.opts.logger.debug({ topic: l.topic, partition: l.partition, dirtyRatio: range.dirtyRatio, firstDirty: range.firstDirtyOffset }, 'cleaning log');
    this.later(0, () => this.slice(r, l));
  }

  private slice(r: Running, l: CleanerLog): void {
    if (this.running.get(r.thread) !== r) return;
    let bytes: number;
    try {
      bytes = r.job.step();
    } catch (err) {
      this.fail(r, l, err);
      return;
    }
    if (!r.job.isFinished) {
      this.later(r.throttle.record(bytes), () => this.slice(r, l));
      return;
    }
    this.running.delete(r.thread);
    if (r.job.aborted !== null) {
      this.stats.aborted++;
      this.opts.logger.info({ topic: l.topic, partition: l.partition, reason: r.job.aborted }, 'gave up cleaning log');
    } else {
      this.finish(r, l, r.job.result());
    }
    this.later(0, () => this.look());
  }

  private finish(r: Running, l: CleanerLog, res: CleanResult): void {
    const now = this.opts.clock.nowMs();
    this.firstDirty.set(r.key, res.endOffset);
    if (res.endOffset <= r.job.firstDirtyOffset) this.stalledUntil.set(r.key, now + this.opts.config.cleanerBackoffMs);
    else this.stalledUntil.delete(r.key);
    this.lastClean.set(r.key, now);
    const s = this.stats;
    s.runs++;
    s.bytesRead += res.bytesRead;
    s.bytesWritten += res.bytesWritten;
    s.recordsRemoved += res.recordsRemoved;
    s.lastCleanMs = now;
    s.lastDurationMs = this.opts.clock.monotonicMs() - r.startedMs;
    try {
      this.writeCheckpoint();
    } catch (err) {
      this.opts.logger.error({ err: String(err) }, 'writing the cleaner checkpoint failed');
    }
    this.opts.logger.info({ topic: l.topic, partition: l.partition, ...res }, 'cleaned log');
  }

  private fail(r: Running, l: CleanerLog, err: unknown): void {
    this.running.delete(r.thread);
    r.job.abort('failed');
    this.stats.failed++;
    const reason = err instanceof Error ? err.message : String(err);
    this.uncleanable.set(r.key, reason);
    this.opts.logger.error({ topic: l.topic, partition: l.partition, err: reason }, 'cleaning log failed; it stays uncleanable until restart');
    this.later(0, () => this.look());
  }

  private readCheckpoint(): PartitionOffset[] {
    try {
      return readOffsetCheckpoint(this.opts.fs, path.join(this.opts.dataDir, CLEANER_OFFSET_CHECKPOINT_FILE));
    } catch (err) {
      if (!isSluiceError(err)) throw err;
      // A lost checkpoint only means the next clean starts from the log start.
      this.opts.logger.warn({ err: err.message }, 'ignoring unreadable cleaner checkpoint');
      return [];
    }
  }

  private writeCheckpoint(): void {
    const live = new Set([...this.opts.logs()].map((l) => keyOf(l.topic, l.partition)));
    const entries: PartitionOffset[] = [];
    for (const l of this.opts.logs()) {
      const key = keyOf(l.topic, l.partition);
      const offset = this.firstDirty.get(key);
      if (offset !== undefined && live.has(key)) entries.push({ topic: l.topic, partition: l.partition, offset });
    }
    entries.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
    writeOffsetCheckpoint(this.opts.fs, path.join(this.opts.dataDir, CLEANER_OFFSET_CHECKPOINT_FILE), entries);
  }
}
