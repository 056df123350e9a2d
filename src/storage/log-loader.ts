// Opening a partition log directory: the one place where recovery happens
// (Kafka's LogLoader). Given the directory, the recovery point and the log
// start offset from the log manager's checkpoints, it returns segments that
// hold only whole, valid batches with indexes that agree with them.
//
// Rules:
// - Leftover temp files (`*.tmp`, from an interrupted atomic write) and index
//   files without a `.log` are deleted.
// - If the clean-shutdown marker is present, no segment is re-validated; it is
//   removed (durably) before the log accepts writes, so a later crash is
//   never mistaken for a clean stop.
// - Otherwise every segment from the one holding the recovery point on is
//   re-read and each batch checked (structure, CRC, increasing offsets,
//   non-decreasing leader epochs). At the first
//   bad or torn batch the segment is truncated and all later segments are
//   deleted: the log ends at the last intact batch, and garbage bytes are
//   never served.
// - A segment whose index files are missing or fail their sanity check, or
//   whose tail does not agree with its index, is recovered the same way
//   (indexes are derived data and always rebuildable).
// - An interrupted cleaner swap is finished or undone first, by the suffixes
//   it left (`.cleaned`, `.swap`, `.deleted`; segment-swap.ts).
// - Segments must follow each other without overlap (gaps are allowed: the
//   cleaner leaves them); a segment that starts before its predecessor ends
//   is deleted with all later ones.
// - Each segment's aborted-transaction index (txn-index.ts) keeps only the
//   entries whose marker the segment still holds; a malformed one is dropped
//   and reported (`txnIndexDamaged`): the producer state built from the log
//   puts its entries back (replication/producer-state-store.ts).
// - The leader-epoch cache is loaded from its checkpoint, or rebuilt from the
//   batch headers if the file is missing or malformed; it is then cut to the
//   recovered log's range.
// - Recovered segments are returned as unflushed: the recovery point stays at
//   the first of them until the partition log has fsynced them in the
//   background, so opening a log never waits for the disk.

import * as path from 'node:path';
import type { Clock } from '../util/clock.js';
import type { FileSystem } from '../util/file-system.js';
import { isSluiceError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { ScannedBatch } from './batch-scanner.js';
import { LEADER_EPOCH_CHECKPOINT_FILE } from './checkpoint.js';
import { removeIfExists } from '../util/fs-util.js';
import { LeaderEpochCache } from './leader-epoch-cache.js';
import type { LogConfig } from './log-config.js';
import { LOG_FILE_SUFFIX, LogSegment, SEGMENT_FILE_SUFFIXES, parseSegmentFileName, segmentFileName } from './segment.js';
import { recoverInterruptedSwap } from './segment-swap.js';

export const CLEAN_SHUTDOWN_FILE = '.clean-shutdown';

export interface LoadParams {
  fs: FileSystem;
  dir: string;
  config: Readonly<LogConfig>;
  clock: Clock;
  logger: Logger;
  /** Offset below which the log was fsynced (from recovery-point-offset-checkpoint; 0 if unknown). */
  recoveryPoint: number;
  /** From log-start-offset-checkpoint; 0 if unknown. */
  logStartOffset: number;
}

export interface LoadedLog {
  segments: LogSegment[];
  logStartOffset: number;
  /** Everything below is known to be durable: the base of the first recovered segment, else the LEO. */
  recoveryPoint: number;
  /** Recovered segments, in order: their bytes were re-validated but may not be on disk yet. */
  unflushed: LogSegment[];
  epochCache: LeaderEpochCache;
  hadCleanShutdown: boolean;
  truncatedBytes: number;
  /** A segment's .txnindex was malformed and dropped: the indexes need rebuilding from the log. */
  txnIndexDamaged: boolean;
}

export function loadLog(p: LoadParams): LoadedLog {
  const fs = p.fs;
  fs.mkdirSync(p.dir, { recursive: true });
  const marker = path.join(p.dir, CLEAN_SHUTDOWN_FILE);
  const hadCleanShutdown = fs.existsSync(marker);
  const swap = recoverInterruptedSwap(fs, p.dir);
  if (swap !== null) p.logger.warn({ dir: p.dir, outcome: swap }, 'recovered an interrupted segment swap of the log cleaner');
  const { cache, rebuild } = loadEpochCache(p);
  const state = { recovered: [] as LogSegment[], truncatedBytes: 0, txnIndexDamaged: false };
  const bases = listSegmentBases(fs, p.dir);
  const segments = openSegments(p, bases, hadCleanShutdown, cache, rebuild, state);

  const logStartOffset = Math.max(p.logStartOffset, segments[0]?.baseOffset ?? 0);
  let logEndOffset = segments[segments.length - 1]?.nextOffset ?? logStartOffset;
  if (segments.length === 0 || logStartOffset > logEndOffset) {
    // Nothing kept, or everything kept lies below the start offset: start afresh there.
    for (const s of segments) s.deleteFiles();
    segments.length = 0;
    state.recovered.length = 0;
    segments.push(LogSegment.create(fs, p.dir, logStartOffset, p.config));
    logEndOffset = logStartOffset;
    cache.clear();
  }
  cache.truncateFromEnd(logEndOffset);
  cache.truncateFromStart(logStartOffset);
  // A log without epochs (brand-new, or never written) has nothing to record:
  // writing an empty checkpoint (two fsyncs and a rename) per replica is what
  // made creating, and restarting, many partitions slow. A rebuilt cache with
  // entries is written, and so is a file that was there but unreadable.
  cache.checkpoint(rebuild && (cache.all().length > 0 || fs.existsSync(path.join(p.dir, LEADER_EPOCH_CHECKPOINT_FILE))));
  for (const s of state.recovered) s.persistIndexes();
  // The marker's removal is made durable by the log before its first change
  // (PartitionLog.beforeChange), not here: an fsync per log made restarting
  // a node with 10,000 replicas take tens of seconds.
  if (hadCleanShutdown) {
    for (const s of segments) if (!state.recovered.includes(s)) s.markSynced();
    fs.unlinkSync(marker);
  }
  return {
    segments,
    logStartOffset,
    recoveryPoint: state.recovered[0]?.baseOffset ?? logEndOffset,
    unflushed: state.recovered,
    epochCache: cache,
    hadCleanShutdown,
    truncatedBytes: state.truncatedBytes,
    txnIndexDamaged: state.txnIndexDamaged,
  };
}

/** Sorted base offsets of the `.log` files; removes temp files and orphan index files. */
function listSegmentBases(fs: FileSystem, dir: string): number[] {
  const logs = new Set<number>();
  const indexFiles: { name: string; baseOffset: number }[] = [];
  for (const name of fs.readdirSync(dir)) {
    if (name.endsWith('.tmp')) {
      removeIfExists(fs, path.join(dir, name));
      continue;
    }
    const parsed = parseSegmentFileName(name);
    if (parsed === null) continue;
    if (parsed.suffix === LOG_FILE_SUFFIX) logs.add(parsed.baseOffset);
    else indexFiles.push({ name, baseOffset: parsed.baseOffset });
  }
  for (const f of indexFiles) if (!logs.has(f.baseOffset)) removeIfExists(fs, path.join(dir, f.name));
  return [...logs].sort((a, b) => a - b);
}

function loadEpochCache(p: LoadParams): { cache: LeaderEpochCache; rebuild: boolean } {
  const file = path.join(p.dir, LEADER_EPOCH_CHECKPOINT_FILE);
  if (!p.fs.existsSync(file)) return { cache: new LeaderEpochCache(file, [], p.fs), rebuild: true };
  try {
    return { cache: LeaderEpochCache.load(file, p.fs), rebuild: false };
  } catch (err) {
    if (!isSluiceError(err)) throw err;
    p.logger.warn({ err: err.message }, 'leader epoch checkpoint unreadable; rebuilding it from the log');
    return { cache: new LeaderEpochCache(file, [], p.fs), rebuild: true };
  }
}

function openSegments(
  p: LoadParams,
  bases: readonly number[],
  clean: boolean,
  cache: LeaderEpochCache,
  rebuildCache: boolean,
  state: { recovered: LogSegment[]; truncatedBytes: number; txnIndexDamaged: boolean },
): LogSegment[] {
  // Segments from the one holding the recovery point on may hold unflushed bytes.
  const recoverFrom = clean ? Infinity : bases.filter((b) => b <= p.recoveryPoint).pop() ?? 0;
  const assignEpoch = (b: ScannedBatch): void => {
    if (b.leaderEpoch >= 0 && b.leaderEpoch > cache.latestEpoch()) cache.assign(b.leaderEpoch, b.baseOffset);
  };
  const segments: LogSegment[] = [];
  for (let i = 0; i < bases.length; i++) {
    const base = bases[i]!;
    const prev = segments[segments.length - 1];
    if (prev !== undefined && base < prev.nextOffset) {
      p.logger.warn({ segment: base, previousEnd: prev.nextOffset }, 'segment starts before its predecessor ends; deleting it and later segments');
      deleteSegmentFiles(p.fs, p.dir, bases.slice(i));
      break;
    }
    const { segment, indexProblem, txnIndexProblem } = LogSegment.open(p.fs, p.dir, base, p.config);
    if (txnIndexProblem !== null) {
      p.logger.warn({ segment: base, problem: txnIndexProblem }, 'dropped a malformed transaction index; it is rebuilt from the log');
      state.txnIndexDamaged = true;
    }
    const why = base >= recoverFrom ? 'past the recovery point' : indexProblem ?? segment.loadTail();
    if (why === null) {
      segment.txnIndex.truncateTo(segment.nextOffset); // recover() does it for the others
      if (rebuildCache) segment.forEachBatch(assignEpoch);
    } else {
      const r = segment.recover(assignEpoch);
      state.recovered.push(segment);
      if (r.truncatedBytes > 0) {
        p.logger.warn({ segment: base, reason: why, problem: r.problem, truncatedBytes: r.truncatedBytes }, 'truncated corrupt or torn log tail');
        state.truncatedBytes += r.truncatedBytes;
        segment.initRollBase(p.clock.nowMs());
        segments.push(segment);
        deleteSegmentFiles(p.fs, p.dir, bases.slice(i + 1));
        break;
      }
    }
    segment.initRollBase(p.clock.nowMs());
    segments.push(segment);
  }
  return segments;
}

function deleteSegmentFiles(fs: FileSystem, dir: string, bases: readonly number[]): void {
  for (const base of bases) {
    for (const suffix of SEGMENT_FILE_SUFFIXES) removeIfExists(fs, path.join(dir, segmentFileName(base, suffix)));
  }
}
