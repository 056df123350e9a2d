// Follower (and observer) side of log replication (Raft §5.3): accept the
// leader's appends when the log matches at prevLogIndex, reject with a
// backtracking hint when it does not, and learn the commit index.
//
// Invariants:
// - An entry is only replaced when its term differs from the leader's entry
//   at that index; matching entries are kept (an old, reordered append must
//   not truncate entries a newer one added).
// - Committed entries are never replaced; an append that would do so breaks
//   Raft's safety and is dropped with an error log.
// - The commit index learnt from a leader never exceeds the last entry known
//   to match that leader (prevLogIndex + entries, or the heartbeat's commit,
//   which the leader caps at what this node acknowledged).
// step.ts has already made this node a follower of `m.from` in `m.term`.

import type { RaftCore } from './core.js';
import { refreshRole } from './transitions.js';
import type { AppendRequest, HeartbeatRequest, NodeId } from './types.js';

/** Records `from` as this term's leader and restarts the election timer. */
export function acceptLeader(c: RaftCore, from: NodeId): void {
  const r = c.role;
  if (r.role === 'follower' || r.role === 'observer') r.leader = from;
  c.electionElapsed = 0;
}

export function handleAppend(c: RaftCore, m: AppendRequest): void {
  acceptLeader(c, m.from);
  const log = c.log;
  if (m.prevLogIndex < log.commit) {
    // Everything up to our commit index matches any current leader.
    c.send({ type: 'appendResp', to: m.from, success: true, matchIndex: log.commit, conflictTerm: 0, conflictIndex: 0 });
    return;
  }
  if (!log.matchTerm(m.prevLogIndex, m.prevLogTerm)) {
    rejectAppend(c, m);
    return;
  }
  const fresh = firstNewEntry(c, m);
  if (fresh < m.entries.length) {
    const first = m.entries[fresh]!;
    if (first.index <= log.commit) {
      c.logger.error({ index: first.index, commit: log.commit, from: m.from }, 'raft: append conflicts with a committed entry; dropped');
      return;
    }
    log.truncateAndAppend(m.entries.slice(fresh));
    refreshRole(c);
  }
  const lastNew = m.prevLogIndex + m.entries.length;
  log.commitTo(Math.min(m.commit, lastNew));
  c.send({ type: 'appendResp', to: m.from, success: true, matchIndex: lastNew, conflictTerm: 0, conflictIndex: 0 });
}

/** Index (into m.entries) of the first entry this log does not already hold with the same term. */
function firstNewEntry(c: RaftCore, m: AppendRequest): number {
  let i = 0;
  while (i < m.entries.length) {
    const e = m.entries[i]!;
    if (c.log.termAt(e.index) !== e.term) break;
    i++;
  }
  return i;
}

/**
 * The fast-backtracking hint (thesis §5.3, "accelerated log backtracking"):
 * a short log names its end; a conflicting entry names its term and the first
 * index of that term, so the leader can skip the whole term in one round trip.
 */
function rejectAppend(c: RaftCore, m: AppendRequest): void {
  const log = c.log;
  let conflictTerm = 0;
  let conflictIndex = log.lastIndex() + 1;
  if (m.prevLogIndex <= log.lastIndex()) {
    conflictTerm = log.termAt(m.prevLogIndex) ?? 0;
    conflictIndex = Math.max(log.firstIndexOfTermRun(m.prevLogIndex), log.commit + 1);
  }
  c.send({ type: 'appendResp', to: m.from, success: false, matchIndex: m.prevLogIndex, conflictTerm, conflictIndex });
}

export function handleHeartbeat(c: RaftCore, m: HeartbeatRequest): void {
  acceptLeader(c, m.from);
  c.log.commitTo(Math.min(m.commit, c.log.lastIndex()));
  c.send({ type: 'heartbeatResp', to: m.from, readRound: m.readRound, lastIndex: c.log.lastIndex() });
}
