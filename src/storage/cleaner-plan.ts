// The log cleaner's decisions, as pure functions of segment summaries, the
// clock reading and the log's settings (Kafka's LogCleanerManager and
// Cleaner.groupSegmentsBySize). The shell (log-cleaner.ts) reads the logs and
// does the I/O; nothing here touches a file, a timer or the clock.
//
// A compacted log is, oldest first:
//   [log start ... firstDirtyOffset)             clean: compacted before
//   [firstDirtyOffset ... firstUncleanableOffset) dirty and cleanable
//   [firstUncleanableOffset ... LEO)              not to be touched yet
// firstUncleanableOffset is the base of the first segment that is active, or
// not wholly below the high watermark (replication may still truncate it), or
// holds a batch younger than min.compaction.lag.ms. Cleaning never passes it,
// so the active segment is never cleaned.
//
// Dirty ratio = dirty bytes / (clean + dirty bytes), counted by whole segments
// as Kafka does. A log is due when it has dirty bytes and either its ratio
// reached min.cleanable.dirty.ratio or its first dirty segment is older than
// max.compaction.lag.ms.

import type { CleanupPolicy } from './log-config.js';

const INT32_MAX = 2 ** 31 - 1;

export interface CleanerSegment {
  baseOffset: number;
  /** Offset after the last batch (baseOffset when empty). */
  nextOffset: number;
  sizeBytes: number;
  /** Largest batch timestamp, -1 without one. */
  maxTimestamp: number;
  /** When the segment's first batch was written (null if empty). */
  firstBatchTimestampMs: number | null;
  /** Entries in its offset and time indexes (a cleaned segment must fit one index). */
  offsetIndexEntries: number;
  timeIndexEntries: number;
}

export interface CleanerLogView {
  /** Oldest first; the last is the active segment. */
  segments: readonly CleanerSegment[];
  logStartOffset: number;
  highWatermark: number;
  logEndOffset: number;
  /** From cleaner-offset-checkpoint; null if the log was never cleaned. */
  checkpointedFirstDirty: number | null;
}

export interface CleanerLogSettings {
  cleanupPolicy: CleanupPolicy;
  minCleanableDirtyRatio: number;
  minCompactionLagMs: number;
  maxCompactionLagMs: number;
}

export interface CleanableRange {
  firstDirtyOffset: number;
  firstUncleanableOffset: number;
  cleanBytes: number;
  cleanableBytes: number;
  /** cleanableBytes / (cleanBytes + cleanableBytes); 0 when nothing is cleanable. */
  dirtyRatio: number;
  /** max.compaction.lag.ms has passed for the first dirty segment. */
  pastMaxLag: boolean;
  /** Clean now (policy compact, dirty bytes, and the ratio or the max lag says so). */
  due: boolean;
}

/** Where the clean and dirty parts of a log are, and whether it should be cleaned now. */
export function cleanableRange(log: CleanerLogView, settings: CleanerLogSettings, nowMs: number): CleanableRange {
  const segs = log.segments;
  // A checkpoint outside the log (retention or a truncation moved past it) starts over at the log start, as Kafka does.
  const cp = log.checkpointedFirstDirty;
  const firstDirtyOffset = cp === null || cp < log.logStartOffset || cp > log.logEndOffset ? log.logStartOffset : cp;
  let firstUncleanableOffset = segs[segs.length - 1]!.baseOffset;
  for (let i = 0; i < segs.length - 1; i++) {
    const s = segs[i]!;
    const end = segs[i + 1]!.baseOffset;
    const tooYoung = settings.minCompactionLagMs > 0 && s.maxTimestamp >= 0 && nowMs - s.maxTimestamp < settings.minCompactionLagMs;
    if (end > log.highWatermark || tooYoung) {
      firstUncleanableOffset = s.baseOffset;
      break;
    }
  }
  let cleanBytes = 0;
  let cleanableBytes = 0;
  let firstDirtySegment: CleanerSegment | undefined;
  for (let i = 0; i < segs.length - 1; i++) {
    const s = segs[i]!;
    const end = segs[i + 1]!.baseOffset;
    if (s.baseOffset >= firstUncleanableOffset) break;
    if (end <= firstDirtyOffset) cleanBytes += s.sizeBytes;
    else {
      cleanableBytes += s.sizeBytes;
      firstDirtySegment ??= s;
    }
  }
  const total = cleanBytes + cleanableBytes;
  const dirtyRatio = total === 0 ? 0 : cleanableBytes / total;
  const firstTs = firstDirtySegment?.firstBatchTimestampMs ?? null;
  const pastMaxLag = firstTs !== null && nowMs - firstTs > settings.maxCompactionLagMs;
  const due = settings.cleanupPolicy !== 'delete' && cleanableBytes > 0 && (dirtyRatio >= settings.minCleanableDirtyRatio || pastMaxLag);
  return { firstDirtyOffset, firstUncleanableOffset, cleanBytes, cleanableBytes, dirtyRatio, pastMaxLag, due };
}

export interface CleanerCandidate<T> {
  id: T;
  range: CleanableRange;
}

/**
 * The log to clean next: among the due ones, those past their max compaction
 * lag first (a promise to keep), then the highest dirty ratio (Kafka's
 * "filthiest log"); ties go to the earlier candidate. Null when none is due.
 */
export function chooseLogToClean<T>(candidates: readonly CleanerCandidate<T>[]): CleanerCandidate<T> | null {
  let best: CleanerCandidate<T> | null = null;
  for (const c of candidates) {
    if (!c.range.due) continue;
    if (best === null || rank(c.range) > rank(best.range)) best = c;
  }
  return best;
}

function rank(r: CleanableRange): number {
  return (r.pastMaxLag ? 2 : 0) + r.dirtyRatio;
}

export interface GroupLimits {
  /** segment.bytes: a cleaned segment may not grow past it. */
  segmentBytes: number;
  /** Entries an offset / time index can hold (segment.index.bytes / entry size). */
  offsetIndexEntriesMax: number;
  timeIndexEntriesMax: number;
}

/**
 * Consecutive segments cleaned into one (Kafka's groupSegmentsBySize): as
 * many as fit together in segment.bytes and in one index, and whose offsets
 * stay within int32 of the first one's base. `segments` are the closed
 * segments to clean (below firstUncleanableOffset) followed by the one after
 * them (its base bounds the last group's offsets). Returns index ranges [from, to).
 */
export function groupSegments(segments: readonly CleanerSegment[], count: number, limits: GroupLimits): Array<[number, number]> {
  const groups: Array<[number, number]> = [];
  let i = 0;
  while (i < count) {
    const first = segments[i]!;
    let bytes = first.sizeBytes;
    let offsetEntries = first.offsetIndexEntries;
    let timeEntries = first.timeIndexEntries;
    let j = i + 1;
    while (j < count) {
      const next = segments[j]!;
      const end = segments[j + 1]?.baseOffset ?? next.nextOffset;
      if (bytes + next.sizeBytes > limits.segmentBytes ||
        offsetEntries + next.offsetIndexEntries > limits.offsetIndexEntriesMax ||
        timeEntries + next.timeIndexEntries > limits.timeIndexEntriesMax ||
        end - 1 - first.baseOffset > INT32_MAX) break;
      bytes += next.sizeBytes;
      offsetEntries += next.offsetIndexEntries;
      timeEntries += next.timeIndexEntries;
      j++;
    }
    groups.push([i, j]);
    i = j;
  }
  return groups;
}
