// The retention decision: which of a log's oldest segments to delete. A pure
// function of the segments' summaries, the clock reading and the limits — the
// partition log does the deleting, the log manager's timer decides when.
//
// Rules (Kafka's, except that the active segment is never deleted):
// - retention.ms: a segment whose newest timestamp is more than retentionMs
//   old is deletable, as is every segment before it;
// - retention.bytes: the oldest segments go while the log stays at or above
//   retentionBytes without them;
// - log start offset: segments wholly below the log start offset go (after
//   advanceLogStartOffset / DeleteRecords).
// A segment is only deleted once the high watermark has passed its end, so
// retention never removes records that replication could still truncate, and
// the log start offset never passes the high watermark.

export interface SegmentSummary {
  baseOffset: number;
  sizeBytes: number;
  /** The segment's newest timestamp (max batch timestamp, or file mtime without one). */
  largestTimestampMs: number;
}

export interface RetentionInput {
  /** Oldest first; the last one is the active segment. */
  segments: readonly SegmentSummary[];
  nowMs: number;
  retentionMs: number;
  retentionBytes: number;
  logStartOffset: number;
  highWatermark: number;
}

export type RetentionReason = 'retention.ms' | 'retention.bytes' | 'log-start-offset';

export interface RetentionDecision {
  /** How many of the oldest segments to delete. */
  deleteCount: number;
  reason: RetentionReason | null;
  /** The log start offset once they are gone. */
  logStartOffset: number;
}

export function decideRetention(input: RetentionInput): RetentionDecision {
  const { segments } = input;
  // A closed segment ends where the next begins; it may go once the HW is there.
  let deletable = 0;
  while (deletable < segments.length - 1 && segments[deletable + 1]!.baseOffset <= input.highWatermark) deletable++;

  const byTime = input.retentionMs < 0 ? 0 : prefixWhile(segments, deletable, (s) => input.nowMs - s.largestTimestampMs > input.retentionMs);
  const bySize = input.retentionBytes < 0 ? 0 : sizePrefix(segments, deletable, input.retentionBytes);
  const byStart = prefixWhile(segments, deletable, (_s, i) => segments[i + 1]!.baseOffset <= input.logStartOffset);

  const deleteCount = Math.max(byTime, bySize, byStart);
  const reason: RetentionReason | null =
    deleteCount === 0 ? null : deleteCount === byTime ? 'retention.ms' : deleteCount === bySize ? 'retention.bytes' : 'log-start-offset';
  const firstKept = segments[deleteCount];
  const logStartOffset = firstKept === undefined ? input.logStartOffset : Math.max(input.logStartOffset, firstKept.baseOffset);
  return { deleteCount, reason, logStartOffset };
}

function prefixWhile(segments: readonly SegmentSummary[], limit: number, pred: (s: SegmentSummary, i: number) => boolean): number {
  let n = 0;
  while (n < limit && pred(segments[n]!, n)) n++;
  return n;
}

function sizePrefix(segments: readonly SegmentSummary[], limit: number, retentionBytes: number): number {
  let excess = segments.reduce((sum, s) => sum + s.sizeBytes, 0) - retentionBytes;
  let n = 0;
  while (n < limit && excess - segments[n]!.sizeBytes >= 0) {
    excess -= segments[n]!.sizeBytes;
    n++;
  }
  return n;
}
