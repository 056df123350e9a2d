// Leader side of log replication (Raft §5.3, §5.4.2) with per-peer flow
// control (progress.ts): batching, pipelining, fast backtracking, commit.
//
// Appends are not sent the moment something changes; the leader sets
// `needsFlush` and ready() calls flushAppends(), so proposals made between two
// Ready cycles travel in one batched message per peer (bounded by
// maxEntriesPerAppend / maxBytesPerAppend, up to maxInflightAppends of them
// in flight per peer in replicate state).
//
// Invariants:
// - Commit advances only to an index replicated on a quorum of the voters in
//   effect AND of the current term (§5.4.2, Figure 8); earlier entries commit
//   with it. The leader counts itself (if a voter) only up to its durable
//   (stable) index, never for entries the shell has not yet persisted.
// - A rejection only moves `next` backwards, never to or below `match`.
// - A leader whose own removal has committed steps down (thesis §4.2.2).

import { assert } from '../util/assert.js';
import { mutant } from '../util/mutants.js';
import type { LeaderRole, RaftCore } from './core.js';
import { Progress, quorumIndex } from './progress.js';
import { startSnapshot } from './snapshot-transfer.js';
import { becomeFollower } from './transitions.js';
import { NO_NODE, type AppendResponse, type NodeId } from './types.js';

export function flushAppends(c: RaftCore, ld: LeaderRole): void {
  ld.needsFlush = false;
  for (const [to, pr] of ld.progress) sendAppends(c, to, pr);
}

/** Sends what `to` needs, as far as its flow control allows. */
export function sendAppends(c: RaftCore, to: NodeId, pr: Progress): void {
  // Bounded: in replicate state each iteration fills one inflight slot.
  for (let n = 0; n <= c.cfg.maxInflightAppends && !pr.isPaused(); n++) {
    if (!sendOneAppend(c, to, pr)) return;
  }
}

/** Sends one append (or starts a snapshot); true if another may follow at once. */
function sendOneAppend(c: RaftCore, to: NodeId, pr: Progress): boolean {
  const log = c.log;
  const prevLogIndex = pr.next - 1;
  const prevLogTerm = log.termAt(prevLogIndex);
  if (prevLogTerm === undefined) {
    startSnapshot(c, to, pr);
    return false;
  }
  const hasEntries = pr.next <= log.lastIndex();
  // With nothing new, replicate state still tells an idle peer about a newer commit.
  const commitNews = pr.sentCommit < log.commit && pr.inflights.count === 0;
  if (pr.state === 'replicate' && !hasEntries && !commitNews) return false;
  const c0 = c.cfg;
  const entries = hasEntries ? log.slice(pr.next, log.lastIndex() + 1, c0.maxEntriesPerAppend, c0.maxBytesPerAppend) : [];
  c.send({ type: 'append', to, prevLogIndex, prevLogTerm, entries, commit: log.commit });
  pr.sentCommit = Math.max(pr.sentCommit, log.commit);
  const last = entries.at(-1);
  if (last) pr.sentEntries(last.index);
  else if (pr.state === 'probe') pr.probeSent = true;
  return pr.state === 'replicate' && last !== undefined;
}

/**
 * For a replicate-state peer whose acknowledgements lag: the entries we sent
 * are in flight, or lost (or their acks were). An empty append at `next - 1`
 * finds out — its ack moves `match`, its rejection sends the peer back to
 * probe. Freeing the oldest slot of a full window lets replication resume if
 * that append was lost.
 */
export function nudge(c: RaftCore, to: NodeId, pr: Progress): void {
  if (pr.inflights.full()) pr.inflights.freeFirst();
  const prevLogTerm = c.log.termAt(pr.next - 1);
  if (prevLogTerm === undefined) return;
  c.send({ type: 'append', to, prevLogIndex: pr.next - 1, prevLogTerm, entries: [], commit: c.log.commit });
}

export function handleAppendResponse(c: RaftCore, ld: LeaderRole, m: AppendResponse): void {
  const pr = ld.progress.get(m.from);
  if (!pr) return;
  pr.recentActive = true;
  if (m.success) onAppendAccepted(c, ld, m, pr);
  else onAppendRejected(c, ld, m, pr);
}

function onAppendAccepted(c: RaftCore, ld: LeaderRole, m: AppendResponse, pr: Progress): void {
  if (m.matchIndex > c.log.lastIndex()) {
    c.logger.warn({ from: m.from, matchIndex: m.matchIndex }, 'raft: ack beyond our log; ignored');
    return;
  }
  const updated = pr.maybeUpdate(m.matchIndex);
  if (pr.state === 'replicate') pr.inflights.freeTo(m.matchIndex);
  if (!updated) return;
  // Leave snapshot state only once appends can serve the peer again.
  if (pr.state === 'probe' || (pr.state === 'snapshot' && pr.match + 1 >= c.log.firstIndex())) pr.becomeReplicate();
  ld.needsFlush = true;
  maybeCommit(c, ld);
  if (c.role === ld) maybeSendTimeoutNow(c, ld, m.from);
}

function onAppendRejected(c: RaftCore, ld: LeaderRole, m: AppendResponse, pr: Progress): void {
  // A rejection of an append we have since superseded says nothing new.
  const stale = pr.state === 'snapshot'
    || (pr.state === 'replicate' ? m.matchIndex <= pr.match : m.matchIndex !== pr.next - 1);
  if (stale) return;
  const next = Math.min(backtrack(c, m), m.matchIndex);
  if (pr.state === 'replicate') pr.becomeProbe();
  pr.next = Math.max(next, pr.match + 1);
  pr.probeSent = false;
  ld.needsFlush = true;
}

/** Where to retry after a rejection, from the follower's conflict hint. */
function backtrack(c: RaftCore, m: AppendResponse): number {
  if (m.conflictTerm === 0) return m.conflictIndex;
  // If we hold entries of the conflicting term, the follower's entries of
  // that term match ours up to our last one (Log Matching): resume after it.
  const idx = c.log.lastIndexWithTermAtMost(m.matchIndex, m.conflictTerm);
  if (c.log.termAt(idx) === m.conflictTerm) return idx + 1;
  return m.conflictIndex;
}

/** Advances the commit index if a quorum holds an entry of this term beyond it. */
export function maybeCommit(c: RaftCore, ld: LeaderRole): boolean {
  const log = c.log;
  const idx = quorumIndex(c.membership().voters, (id) => (id === c.id ? log.stable : ld.progress.get(id)?.match ?? 0));
  // The mutant counts replicas for an entry of an earlier term (Figure 8's bug).
  if (idx <= log.commit || (log.termAt(idx) !== c.term && !mutant('raft-commit-earlier-term'))) return false;
  log.commitTo(idx);
  ld.needsFlush = true;
  ld.reads.releaseWaiting(log.commit);
  if (!c.isVoter() && log.commit >= log.lastConfigIndex()) stepDownRemoved(c, ld);
  return true;
}

/** Our removal committed: hand over to the most caught-up voter (if any) and follow. */
function stepDownRemoved(c: RaftCore, ld: LeaderRole): void {
  let best: NodeId = NO_NODE;
  let bestMatch = -1;
  for (const id of c.membership().voters) {
    const match = ld.progress.get(id)?.match ?? 0;
    if (match > bestMatch) [best, bestMatch] = [id, match];
  }
  if (best !== NO_NODE && bestMatch === c.log.lastIndex()) c.send({ type: 'timeoutNow', to: best });
  c.logger.info({ term: c.term }, 'raft: removed from the voters; stepping down');
  becomeFollower(c, c.term, NO_NODE);
}

/** A transfer target that has caught up gets TimeoutNow (once). */
export function maybeSendTimeoutNow(c: RaftCore, ld: LeaderRole, peer: NodeId): void {
  const t = ld.transfer;
  if (!t || t.target !== peer || t.timeoutNowSent) return;
  if (ld.progress.get(peer)?.match !== c.log.lastIndex()) return;
  t.timeoutNowSent = true;
  c.send({ type: 'timeoutNow', to: peer });
}

/** The leader's membership changed (its own config entry): track exactly the new members. */
export function syncProgress(c: RaftCore, ld: LeaderRole): void {
  const peers = new Set(c.peers());
  for (const id of [...ld.progress.keys()]) if (!peers.has(id)) ld.progress.delete(id);
  for (const id of peers) {
    if (!ld.progress.has(id)) ld.progress.set(id, new Progress(c.log.lastIndex() + 1, c.cfg.maxInflightAppends));
  }
  if (ld.transfer && !c.isVoter(ld.transfer.target)) ld.transfer = undefined;
  assert(!ld.progress.has(c.id), 'the leader does not track itself');
}
