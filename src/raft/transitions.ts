// Every role transition of a Raft node, and the only place `core.role` is
// assigned (Kafka's QuorumState in spirit).
//
//   becomeFollower(term, leader)
//       - construction / restart (leader unknown);
//       - any message carrying a higher term (leader known if it is a
//         leader's message: append, heartbeat, installSnapshot, timeoutNow);
//       - a (pre)candidate hears from a leader of its term, or loses;
//       - a leader fails check-quorum, or its own removal commits.
//     The role is 'observer' instead of 'follower' when this node is not a
//     voter of the membership in effect.
//   becomePreCandidate()  election timeout or campaign(), pre-vote on, voter
//   becomeCandidate()     pre-vote quorum; election timeout or campaign()
//                         with pre-vote off; TimeoutNow from the leader
//   becomeLeader()        vote quorum (or a single-voter cluster)
//   refreshRole()         the membership in effect changed (a config entry
//                         appended or truncated, a snapshot restored):
//                         follower ⇄ observer; a candidate no longer a voter
//                         gives up.
//
// Invariants: only voters become (pre)candidates or leaders; a term change
// always clears the vote; a new leader appends a NoOp of its term at once
// (§5.4.2: it can only commit by counting replicas of its own term, and the
// NoOp also satisfies thesis §4.2.3 before any config change).

import { assert } from '../util/assert.js';
import type { RaftCore } from './core.js';
import { Progress } from './progress.js';
import { ReadIndexTracker } from './read-index.js';
import { EntryType, NO_NODE, type NodeId } from './types.js';

const EMPTY = new Uint8Array(0);

export function becomeFollower(c: RaftCore, term: number, leader: NodeId): void {
  assert(term >= c.term, `term going backwards: ${c.term} -> ${term}`);
  if (term > c.term) {
    c.term = term;
    c.vote = NO_NODE;
  }
  const wasLeader = c.role.role === 'leader';
  const incoming = c.role.role === 'follower' || c.role.role === 'observer' ? c.role.incoming : undefined;
  c.role = { role: c.isVoter() ? 'follower' : 'observer', leader, incoming };
  c.resetElectionTimer();
  if (wasLeader) c.logger.info({ term }, 'raft: stepped down');
}

export function becomePreCandidate(c: RaftCore): void {
  assert(c.role.role !== 'leader' && c.isVoter(), 'only a voter that is not leading may pre-campaign');
  // The term does not change: a pre-vote that fails leaves no trace, which is
  // what keeps a partitioned node from disrupting the cluster when it returns.
  c.role = { role: 'preCandidate', votes: new Map([[c.id, true]]) };
  c.resetElectionTimer();
}

export function becomeCandidate(c: RaftCore): void {
  assert(c.role.role !== 'leader' && c.isVoter(), 'only a voter that is not leading may campaign');
  c.term += 1;
  c.vote = c.id;
  c.role = { role: 'candidate', votes: new Map([[c.id, true]]) };
  c.resetElectionTimer();
  c.logger.debug({ term: c.term }, 'raft: campaigning');
}

export function becomeLeader(c: RaftCore): void {
  assert(c.role.role === 'candidate' && c.isVoter(), 'only a voting candidate may become leader');
  const next = c.log.lastIndex() + 1;
  const progress = new Map<NodeId, Progress>();
  for (const peer of c.peers()) progress.set(peer, new Progress(next, c.cfg.maxInflightAppends));
  c.role = {
    role: 'leader',
    progress,
    reads: new ReadIndexTracker(c.cfg.maxPendingReads),
    transfer: undefined,
    heartbeatElapsed: 0,
    needsFlush: true,
  };
  c.electionElapsed = 0;
  c.log.append([{ term: c.term, index: next, type: EntryType.NoOp, data: EMPTY }]);
  c.logger.info({ term: c.term }, 'raft: became leader');
}

export function refreshRole(c: RaftCore): void {
  const r = c.role;
  switch (r.role) {
    case 'follower':
    case 'observer': {
      const role = c.isVoter() ? 'follower' : 'observer';
      if (role !== r.role) c.role = { role, leader: r.leader, incoming: r.incoming };
      return;
    }
    case 'preCandidate':
    case 'candidate':
      if (!c.isVoter()) becomeFollower(c, c.term, NO_NODE);
      return;
    case 'leader':
      return; // the leader's own changes are handled when they commit (leader.ts)
  }
}
