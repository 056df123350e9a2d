// Leader election (Raft §5.2, thesis §9.6 pre-vote, §3.10 TimeoutNow).
//
// A voter whose randomized election timeout expires without hearing from a
// leader first runs a pre-vote: it asks the voters whether they *would* vote
// for it in term+1, without changing any term. Only with a pre-vote quorum
// does it become a candidate, bump its term and ask for real votes. A node
// cut off from the cluster therefore keeps its term, and cannot force a
// healthy leader to step down when it comes back.
//
// A voter grants a (pre)vote only if the candidate's log is at least as up to
// date as its own (§5.4.1), it has not voted for someone else in that term,
// and — leader stickiness, see RaftCore.inLease — it has not heard from a
// live leader within an election timeout (checked in step.ts, bypassed by a
// transfer). Observers and non-members never campaign, and their votes are
// never counted (tally() counts only the voters of the candidate's config).
//
// Term handling (stepping down on higher terms, answering stale requests) is
// done by step.ts before these handlers run: here, m.term is the node's term,
// except for pre-vote messages, which carry the proposed term+1.

import type { RaftCore } from './core.js';
import { quorumSize } from './membership.js';
import { becomeCandidate, becomeFollower, becomeLeader, becomePreCandidate } from './transitions.js';
import { NO_NODE, type VoteRequest, type VoteResponse } from './types.js';

/** A non-leader's tick: count towards the election timeout; voters campaign when it expires. */
export function tickElection(c: RaftCore): void {
  c.electionElapsed++;
  if (!c.isVoter()) return;
  if (c.electionElapsed >= c.randomizedElectionTimeout) startElection(c, false);
}

/** Starts an election now: a pre-vote first unless disabled or this is a leadership transfer. */
export function startElection(c: RaftCore, transfer: boolean): void {
  if (c.role.role === 'leader') return;
  if (!c.isVoter()) {
    c.logger.debug({ id: c.id }, 'raft: not a voter, not campaigning');
    return;
  }
  if (c.cfg.preVote && !transfer) preCampaign(c);
  else campaign(c, transfer);
}

function preCampaign(c: RaftCore): void {
  becomePreCandidate(c);
  if (tally(c) === 'won') {
    campaign(c, false);
    return;
  }
  requestVotes(c, 'preVote', c.term + 1, false);
}

function campaign(c: RaftCore, transfer: boolean): void {
  becomeCandidate(c);
  if (tally(c) === 'won') {
    becomeLeader(c);
    return;
  }
  requestVotes(c, 'vote', c.term, transfer);
}

function requestVotes(c: RaftCore, type: 'vote' | 'preVote', term: number, transfer: boolean): void {
  for (const voter of c.membership().voters) {
    if (voter === c.id) continue;
    c.send({ type, to: voter, term, lastLogIndex: c.log.lastIndex(), lastLogTerm: c.log.lastTerm(), transfer });
  }
}

function tally(c: RaftCore): 'won' | 'lost' | 'pending' {
  if (c.role.role !== 'preCandidate' && c.role.role !== 'candidate') return 'pending';
  const voters = c.membership().voters;
  let granted = 0;
  let rejected = 0;
  for (const id of voters) {
    const v = c.role.votes.get(id);
    if (v === true) granted++;
    else if (v === false) rejected++;
  }
  const q = quorumSize(voters.length);
  if (granted >= q) return 'won';
  if (rejected > voters.length - q) return 'lost';
  return 'pending';
}

export function handleVoteRequest(c: RaftCore, m: VoteRequest): void {
  const pre = m.type === 'preVote';
  const free = c.vote === m.from || (c.vote === NO_NODE && c.leader() === NO_NODE) || (pre && m.term > c.term);
  // Whether *this* node is a voter is not consulted: its configuration may be
  // stale (an observer promoted by an entry it has not received yet must be
  // able to vote, or the new configuration may never elect anyone). Safety
  // does not depend on it: a candidate counts only the voters of its own
  // configuration, so an observer's grant never makes a quorum.
  const granted = free && c.log.isUpToDate(m.lastLogIndex, m.lastLogTerm);
  // A grant echoes the request's term (for a pre-vote that is term+1, which the
  // pre-candidate expects); a rejection carries ours, so a stale sender learns.
  c.send({ type: pre ? 'preVoteResp' : 'voteResp', to: m.from, term: granted ? m.term : c.term, granted });
  if (granted && !pre) {
    c.vote = m.from;
    c.resetElectionTimer();
  }
}

export function handleVoteResponse(c: RaftCore, m: VoteResponse): void {
  const r = c.role;
  const expected = m.type === 'preVoteResp' ? 'preCandidate' : 'candidate';
  if (r.role !== expected || !c.isVoter(m.from) || r.votes.has(m.from)) return;
  r.votes.set(m.from, m.granted);
  const outcome = tally(c);
  if (outcome === 'won') {
    if (r.role === 'preCandidate') campaign(c, false);
    else becomeLeader(c);
  } else if (outcome === 'lost') {
    becomeFollower(c, c.term, NO_NODE);
  }
}

/** The leader asks this node to take over (leadership transfer): campaign at once, skipping pre-vote. */
export function handleTimeoutNow(c: RaftCore): void {
  if (c.role.role === 'leader' || !c.isVoter()) return;
  c.logger.info({ term: c.term }, 'raft: TimeoutNow received, campaigning');
  campaign(c, true);
}
