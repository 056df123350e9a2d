// Where a follower cuts its log when it starts following a (new) leader —
// the leader-epoch rule of Kafka's KIP-101/279, as a pure function.
//
// The follower asks the leader (OffsetForLeaderEpoch) about its own latest
// epoch E; the leader answers with the largest epoch E' <= E it knows and the
// offset where E' ends in its log. Then:
//   - E' = E:   the logs agree up to the leader's end of E → cut at
//               min(leader end, follower LEO); done.
//   - E' < E:   the follower's epochs above E' are not on the leader → cut at
//               min(leader end of E', follower's own end of E'); if the
//               follower never had E' exactly, ask again with its new latest
//               epoch (each round shrinks the log, so this terminates).
//   - unknown:  the leader has no epoch <= E (its log starts later) → fall
//               back to the follower's high watermark, which every ISR member
//               holds, as Kafka does; the fetch then corrects the rest.
// Never cutting at the high watermark when epochs are known is what stops a
// returning replica from losing committed records or keeping divergent ones.

export const UNDEFINED_EPOCH = -1;

export interface FollowerLogView {
  readonly logEndOffset: number;
  readonly highWatermark: number;
  /** The follower's largest epoch <= `epoch` and where it ends in its log. */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: number };
}

export interface TruncationDecision {
  /** Truncate the log to this offset (no-op when >= LEO). */
  readonly truncateTo: number;
  /** False when another OffsetForLeaderEpoch round is needed after truncating. */
  readonly done: boolean;
}

export function truncationAfterEpochQuery(
  log: FollowerLogView,
  askedEpoch: number,
  answer: { readonly leaderEpoch: number; readonly endOffset: number },
): TruncationDecision {
  if (answer.leaderEpoch === UNDEFINED_EPOCH || answer.endOffset < 0) {
    return { truncateTo: Math.min(log.highWatermark, log.logEndOffset), done: true };
  }
  if (answer.leaderEpoch === askedEpoch) {
    return { truncateTo: Math.min(answer.endOffset, log.logEndOffset), done: true };
  }
  const own = log.endOffsetForEpoch(answer.leaderEpoch);
  const truncateTo = Math.min(answer.endOffset, own.endOffset < 0 ? log.highWatermark : own.endOffset, log.logEndOffset);
  return { truncateTo, done: own.epoch === answer.leaderEpoch };
}
