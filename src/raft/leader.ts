// What only a leader does: tick (heartbeats, check-quorum, transfer timeout,
// snapshot retries), accept proposals and config changes, leadership
// transfer, ReadIndex, and the per-Ready flush of appends and read rounds.
//
// Invariants:
// - Proposals are refused (never queued) while a transfer is in progress,
//   beyond maxUncommittedEntries, and — for config changes — while a previous
//   config entry is uncommitted or before the leader has committed an entry
//   of its own term (thesis §4.1, §4.2.3; the election NoOp provides one).
// - Check-quorum: every election timeout, a leader that has not heard from a
//   quorum of voters in that window steps down (so a partitioned leader stops
//   serving reads and accepting writes it can never commit).
// - A transfer is abandoned after an election timeout, leader or not.

import { checkConfChange, encodeConfChange } from './membership.js';
import type { LeaderRole, RaftCore } from './core.js';
import { quorumHolds } from './progress.js';
import { flushAppends, maybeSendTimeoutNow, nudge, syncProgress } from './replication.js';
import { tickSnapshots } from './snapshot-transfer.js';
import { becomeFollower } from './transitions.js';
import {
  EntryType, NO_NODE,
  type ConfChange, type HeartbeatResponse, type NodeId, type ProposeResult,
} from './types.js';

export function tickLeader(c: RaftCore, ld: LeaderRole): void {
  const timeout = c.cfg.electionTimeoutTicks;
  c.electionElapsed++;
  ld.heartbeatElapsed++;
  if (c.electionElapsed >= timeout) {
    c.electionElapsed = 0;
    if (c.cfg.checkQuorum && !quorumActive(c, ld)) {
      c.logger.info({ term: c.term }, 'raft: check-quorum failed');
      becomeFollower(c, c.term, NO_NODE);
      return;
    }
    for (const pr of ld.progress.values()) pr.recentActive = false;
  }
  if (ld.transfer && ++ld.transfer.elapsedTicks >= timeout) {
    c.logger.info({ target: ld.transfer.target }, 'raft: leadership transfer timed out');
    ld.transfer = undefined;
  }
  tickSnapshots(c, ld);
  if (ld.heartbeatElapsed >= c.cfg.heartbeatTicks) {
    ld.heartbeatElapsed = 0;
    broadcastHeartbeat(c, ld);
  }
}

function quorumActive(c: RaftCore, ld: LeaderRole): boolean {
  return quorumHolds(c.membership().voters, (id) => id === c.id || ld.progress.get(id)?.recentActive === true);
}

function broadcastHeartbeat(c: RaftCore, ld: LeaderRole): void {
  const readRound = ld.reads.currentRound();
  for (const [to, pr] of ld.progress) {
    // Never tell a peer to commit past what it is known to hold: its entries
    // beyond `match` may still be an old leader's.
    c.send({ type: 'heartbeat', to, commit: Math.min(pr.match, c.log.commit), readRound });
  }
}

export function handleHeartbeatResponse(c: RaftCore, ld: LeaderRole, m: HeartbeatResponse): void {
  const pr = ld.progress.get(m.from);
  if (!pr) return;
  pr.recentActive = true;
  if (pr.state === 'probe') {
    pr.probeSent = false;
    if (m.lastIndex + 1 < pr.next) pr.next = Math.max(pr.match + 1, m.lastIndex + 1);
    if (pr.match < c.log.lastIndex()) ld.needsFlush = true;
  } else if (pr.state === 'replicate' && pr.match < c.log.lastIndex()) {
    nudge(c, m.from, pr);
    ld.needsFlush = true;
  }
  ld.reads.ack(m.from, m.readRound);
  collectReads(c, ld);
}

function collectReads(c: RaftCore, ld: LeaderRole): void {
  for (const rs of ld.reads.confirmed(c.membership().voters, c.id)) c.readStates.push(rs);
}

/** Work deferred to ready(): start a read round if one is due, then send appends. */
export function flushLeader(c: RaftCore, ld: LeaderRole): void {
  if (ld.reads.needsRound()) {
    ld.reads.startRound();
    broadcastHeartbeat(c, ld);
    collectReads(c, ld);
  }
  if (ld.needsFlush) flushAppends(c, ld);
}

export function leaderHasWork(ld: LeaderRole): boolean {
  return ld.needsFlush || ld.reads.needsRound();
}

// ---------------------------------------------------------------- proposals

function refuse(c: RaftCore, reason: Exclude<ProposeResult, { ok: true }>['reason']): ProposeResult {
  return { ok: false, reason, leader: c.leader() };
}

function admission(c: RaftCore): ProposeResult | LeaderRole {
  const ld = c.leaderRole();
  if (!ld) return refuse(c, 'notLeader');
  if (ld.transfer) return refuse(c, 'transferring');
  if (c.log.lastIndex() - c.log.commit >= c.cfg.maxUncommittedEntries) return refuse(c, 'tooManyUncommitted');
  return ld;
}

function appendOwn(c: RaftCore, ld: LeaderRole, type: EntryType, data: Uint8Array): ProposeResult {
  const index = c.log.lastIndex() + 1;
  c.log.append([{ term: c.term, index, type, data }]);
  ld.needsFlush = true;
  return { ok: true, index, term: c.term };
}

export function propose(c: RaftCore, data: Uint8Array): ProposeResult {
  const ld = admission(c);
  if ('ok' in ld) return ld;
  return appendOwn(c, ld, EntryType.Normal, data);
}

export function proposeConfChange(c: RaftCore, change: ConfChange): ProposeResult {
  const ld = admission(c);
  if ('ok' in ld) return ld;
  if (!checkConfChange(c.membership(), change)) return refuse(c, 'invalidConfChange');
  const log = c.log;
  if (log.lastConfigIndex() > log.commit || log.termAt(log.commit) !== c.term) return refuse(c, 'configChangePending');
  const result = appendOwn(c, ld, EntryType.Config, encodeConfChange(change));
  syncProgress(c, ld); // the change takes effect now, on append
  c.logger.info({ change, index: log.lastIndex() }, 'raft: config change appended');
  return result;
}

// ---------------------------------------------------------------- transfer and reads

export function transferLeadership(c: RaftCore, target: NodeId): boolean {
  const ld = c.leaderRole();
  if (!ld || target === c.id || !c.isVoter(target)) return false;
  if (ld.transfer?.target === target) return true;
  ld.transfer = { target, elapsedTicks: 0, timeoutNowSent: false };
  maybeSendTimeoutNow(c, ld, target);
  // Bring the target up to date if it is behind.
  const pr = ld.progress.get(target);
  if (pr && !ld.transfer.timeoutNowSent && pr.state === 'replicate') nudge(c, target, pr);
  ld.needsFlush = true;
  return true;
}

export function readIndex(c: RaftCore, requestId: number): boolean {
  const ld = c.leaderRole();
  if (!ld || !Number.isFinite(requestId)) return false;
  return ld.reads.request(requestId, c.log.termAt(c.log.commit) === c.term, c.log.commit);
}
