// DescribeQuorum on the controller side: the 'describeQuorum' controller call
// (a broker forwards the client's DescribeQuorum request to the active
// controller) answered from this node's Raft state — only by the leader,
// which alone tracks every member's progress. Elsewhere it is NOT_CONTROLLER
// naming the leader, which the broker's QuorumClient follows. Reads only.

import type { ControllerCallHandler } from './client-service.js';
import type { RaftNode } from './node.js';
import { describeQuorumResponse } from '../protocol/apis/quorum.js';

export const DESCRIBE_QUORUM_CALL = 'describeQuorum';

/** `inner` with the describeQuorum call answered by `node`. */
export function withDescribeQuorum(inner: ControllerCallHandler, node: RaftNode): ControllerCallHandler {
  return (api, body) => {
    if (api !== DESCRIBE_QUORUM_CALL) return inner(api, body);
    const s = node.status();
    const progress = node.raftStatus().progress;
    if (s.role !== 'leader' || !progress) return Promise.reject(node.notController());
    return Promise.resolve(describeQuorumResponse({
      nodeId: s.nodeId, term: s.term, commit: s.commit, lastIndex: s.lastIndex, voters: s.voters, observers: s.observers, progress,
    }));
  };
}
