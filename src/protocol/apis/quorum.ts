// DescribeQuorum (api key 55; Kafka's name and key, Sluice's shape): the
// metadata quorum as its leader sees it — what `sluice cluster status` and
// the web console show. A broker forwards it to the active controller (the
// Raft leader), the one node that knows every member's progress; any other
// controller answers NOT_CONTROLLER with the leader's id and the request goes
// on there.
//
// request  {}
// response { errorCode, errorMessage, leaderId, leaderEpoch, highWatermark,
//            voters: [{ nodeId, logEndOffset, lag, recentContact }], observers: [same] }
//   leaderEpoch: the Raft term; highWatermark: the leader's commit index;
//   logEndOffset: the last metadata log index the leader knows the member holds
//     (Raft progress: its match index; the leader's own last index for itself);
//   lag: the leader's last index − logEndOffset;
//   recentContact: the leader heard from the member within its check-quorum window
//     (about an election timeout).

export interface QuorumMember {
  nodeId: number;
  logEndOffset: number;
  lag: number;
  recentContact: boolean;
}

export interface DescribeQuorumResponse {
  errorCode: number;
  errorMessage: string | null;
  leaderId: number;
  leaderEpoch: number;
  highWatermark: number;
  voters: QuorumMember[];
  observers: QuorumMember[];
}

/** The leader's own Raft view, as the node reports it (RaftNode.status() and its progress). */
export interface LeaderQuorumView {
  readonly nodeId: number;
  readonly term: number;
  readonly commit: number;
  readonly lastIndex: number;
  readonly voters: readonly number[];
  readonly observers: readonly number[];
  readonly progress: ReadonlyMap<number, { readonly match: number; readonly recentActive: boolean }>;
}

/** The answer of a quorum leader, from its own view (pure). */
export function describeQuorumResponse(v: LeaderQuorumView): DescribeQuorumResponse {
  const member = (nodeId: number): QuorumMember => {
    if (nodeId === v.nodeId) return { nodeId, logEndOffset: v.lastIndex, lag: 0, recentContact: true };
    const p = v.progress.get(nodeId);
    const logEndOffset = p?.match ?? 0;
    return { nodeId, logEndOffset, lag: Math.max(0, v.lastIndex - logEndOffset), recentContact: p?.recentActive ?? false };
  };
  const sorted = (ids: readonly number[]) => [...ids].sort((a, b) => a - b).map(member);
  return {
    errorCode: 0, errorMessage: null, leaderId: v.nodeId, leaderEpoch: v.term, highWatermark: v.commit,
    voters: sorted(v.voters), observers: sorted(v.observers),
  };
}
