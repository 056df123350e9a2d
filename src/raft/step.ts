// Entry point for every incoming message: drop what must be dropped, apply
// Raft's term rules, then dispatch to the role's handler.
//
// Order of checks:
//   1. malformed (validate.ts), misaddressed or from ourselves → drop;
//   2. from a node outside the membership in effect → drop, except requests
//      that carry a leader's or a candidate's claim (append, heartbeat,
//      installSnapshot, timeoutNow, vote, preVote). Those are checked by term
//      and log, not by configuration, because ours may be stale (thesis §4.1):
//      a node being added knows nobody yet and must learn from the leader; a
//      lagging voter must be able to vote for a voter added by an entry it
//      has not received, or {1,2} + 4 = {1,2,4} with 1 down and 2 lagging
//      could never elect anyone. Removed servers are kept from disrupting the
//      cluster by pre-vote and leader stickiness, not by this check.
//      Responses from non-members are dropped: a leader tracks its members;
//   3. higher term → step down and follow (§5.1), except: (pre)votes from a
//      node while we are in a leader lease are ignored (stickiness, unless
//      `transfer`); a pre-vote never changes our term, nor does a granted
//      pre-vote response (it echoes the proposed term);
//   4. lower term → answer requests with our term so the stale sender steps
//      down (a rejection for votes/appends, a heartbeat/snapshot answer),
//      drop responses;
//   5. same term → the role's handler.

import type { RaftCore } from './core.js';
import { handleTimeoutNow, handleVoteRequest, handleVoteResponse } from './election.js';
import { handleAppend, handleHeartbeat } from './follower.js';
import { handleHeartbeatResponse } from './leader.js';
import { handleAppendResponse } from './replication.js';
import { handleInstallSnapshot, handleInstallSnapshotResponse } from './snapshot-transfer.js';
import { becomeFollower } from './transitions.js';
import { NO_NODE, type Message } from './types.js';
import { isWellFormed } from './validate.js';

/** Requests accepted from any node id; see (2) above. */
const CLAIMS: ReadonlySet<Message['type']> = new Set(['append', 'heartbeat', 'installSnapshot', 'timeoutNow', 'vote', 'preVote']);

export function step(c: RaftCore, m: Message): void {
  if (!isWellFormed(m)) {
    c.logger.debug({ type: describe(m) }, 'raft: dropping malformed message');
    return;
  }
  if (m.to !== c.id || m.from === c.id) {
    c.logger.debug({ type: m.type, from: m.from, to: m.to }, 'raft: dropping misaddressed message');
    return;
  }
  if (!CLAIMS.has(m.type) && !c.isMember(m.from)) {
    c.logger.debug({ type: m.type, from: m.from }, 'raft: dropping message from a non-member');
    return;
  }
  if (m.term > c.term && !onHigherTerm(c, m)) return;
  if (m.term < c.term) {
    onStaleTerm(c, m);
    return;
  }
  dispatch(c, m);
}

/** Applies §5.1 to a message of a higher term; false when the message is done with. */
function onHigherTerm(c: RaftCore, m: Message): boolean {
  switch (m.type) {
    case 'vote':
    case 'preVote':
      if (!m.transfer && c.inLease()) {
        c.logger.debug({ type: m.type, from: m.from, term: m.term }, 'raft: ignoring (pre)vote while a leader is live');
        return false;
      }
      if (m.type === 'vote') becomeFollower(c, m.term, NO_NODE);
      return true;
    case 'preVoteResp':
      if (m.granted) return true;
      becomeFollower(c, m.term, NO_NODE);
      return false;
    case 'append':
    case 'heartbeat':
    case 'installSnapshot':
    case 'timeoutNow':
      becomeFollower(c, m.term, m.from);
      return true;
    default:
      // A response carrying a higher term: we are stale; the exchange is over.
      becomeFollower(c, m.term, NO_NODE);
      return false;
  }
}

function onStaleTerm(c: RaftCore, m: Message): void {
  switch (m.type) {
    case 'append':
      c.send({ type: 'appendResp', to: m.from, success: false, matchIndex: m.prevLogIndex, conflictTerm: 0, conflictIndex: 0 });
      return;
    case 'heartbeat':
      c.send({ type: 'heartbeatResp', to: m.from, readRound: 0, lastIndex: c.log.lastIndex() });
      return;
    case 'installSnapshot':
      c.send({ type: 'installSnapshotResp', to: m.from, snapshotIndex: m.meta.index, nextOffset: -1, done: false });
      return;
    case 'vote':
    case 'preVote':
      c.send({ type: m.type === 'vote' ? 'voteResp' : 'preVoteResp', to: m.from, granted: false });
      return;
    default:
      c.logger.debug({ type: m.type, from: m.from, term: m.term }, 'raft: dropping stale-term message');
  }
}

function dispatch(c: RaftCore, m: Message): void {
  const role = c.role.role;
  switch (m.type) {
    case 'vote':
    case 'preVote':
      return handleVoteRequest(c, m);
    case 'voteResp':
      return handleVoteResponse(c, m);
    case 'preVoteResp':
      // Granted answers echo our term + 1; rejections carry the voter's term (ours).
      if (m.term === (m.granted ? c.term + 1 : c.term)) handleVoteResponse(c, m);
      return;
    case 'append':
    case 'heartbeat':
    case 'installSnapshot':
      if (role === 'leader') {
        c.logger.warn({ type: m.type, from: m.from, term: m.term }, 'raft: another leader in our term? dropped');
        return;
      }
      if (role === 'candidate' || role === 'preCandidate') becomeFollower(c, m.term, m.from);
      if (m.type === 'append') return handleAppend(c, m);
      if (m.type === 'heartbeat') return handleHeartbeat(c, m);
      return handleInstallSnapshot(c, m);
    case 'timeoutNow':
      return handleTimeoutNow(c);
    case 'appendResp':
    case 'heartbeatResp':
    case 'installSnapshotResp':
      return leaderResponse(c, m);
  }
}

function leaderResponse(c: RaftCore, m: Message): void {
  const ld = c.leaderRole();
  if (!ld) return;
  if (m.type === 'appendResp') handleAppendResponse(c, ld, m);
  else if (m.type === 'heartbeatResp') handleHeartbeatResponse(c, ld, m);
  else if (m.type === 'installSnapshotResp') handleInstallSnapshotResponse(c, ld, m);
}

/** A cheap label for a dropped value (never throws, never serializes the whole thing). */
function describe(m: unknown): string {
  if (typeof m !== 'object' || m === null) return typeof m;
  try {
    return String((m as { type?: unknown }).type).slice(0, 32);
  } catch {
    return '(unreadable)';
  }
}
