// ReadIndex (Raft thesis §6.4): a leader serves a linearizable read once it
// has (1) committed an entry of its own term, so its commit index is at least
// that of any previous leader, (2) recorded its commit index as the read
// index, and (3) confirmed with a quorum of voters, by a heartbeat round sent
// *after* the read arrived, that it was still leader. The state machine may
// then answer the read after applying the read index.
//
// Rounds: heartbeats carry the latest round number; every read is tagged
// with the round that will confirm it (the next one when it arrived). A
// voter's answer for round r confirms every read tagged ≤ r, so the reads
// confirmed are those tagged ≤ the quorum-th highest acknowledged round —
// one comparison per voter per response, whatever the number of reads.
//
// Invariants: pending reads are in arrival order, so their rounds never
// decrease; `waiting + pending` never exceeds `capacity`; one tracker lives
// exactly as long as one leadership term (a new leader starts clean, and
// reads pending at step-down are dropped — the client retries elsewhere).

import { quorumIndex } from './progress.js';
import type { NodeId, ReadState } from './types.js';

interface PendingRead {
  readonly requestId: number;
  readonly index: number;
  readonly round: number;
}

export class ReadIndexTracker {
  private round = 0;
  private readonly acked = new Map<NodeId, number>();
  /** Reads that arrived before the leader committed an entry of its term. */
  private waiting: number[] = [];
  private pending: PendingRead[] = [];

  constructor(private readonly capacity: number) {}

  /** Latest round sent (heartbeats carry it). */
  currentRound(): number {
    return this.round;
  }

  /** Records a read; false when the tracker is full. */
  request(requestId: number, committedInTerm: boolean, commit: number): boolean {
    if (this.waiting.length + this.pending.length >= this.capacity) return false;
    if (committedInTerm) this.pending.push({ requestId, index: commit, round: this.round + 1 });
    else this.waiting.push(requestId);
    return true;
  }

  /** The leader just committed in its term: reads waiting for that get their read index now. */
  releaseWaiting(commit: number): void {
    for (const requestId of this.waiting) this.pending.push({ requestId, index: commit, round: this.round + 1 });
    this.waiting = [];
  }

  /** Whether some read needs a heartbeat round that has not been sent yet. */
  needsRound(): boolean {
    return (this.pending.at(-1)?.round ?? 0) > this.round;
  }

  /** Starts a new round; the caller broadcasts heartbeats carrying it. */
  startRound(): number {
    this.round++;
    return this.round;
  }

  ack(from: NodeId, round: number): void {
    if (round > this.round) return; // not a round we sent: ignore
    if (round > (this.acked.get(from) ?? 0)) this.acked.set(from, round);
  }

  /** Reads confirmed by a quorum of `voters` (`self` counts with the current round). */
  confirmed(voters: readonly NodeId[], self: NodeId): ReadState[] {
    if (this.pending.length === 0) return [];
    const round = quorumIndex(voters, (id) => (id === self ? this.round : this.acked.get(id) ?? 0));
    let n = 0;
    while (n < this.pending.length && this.pending[n]!.round <= round) n++;
    if (n === 0) return [];
    return this.pending.splice(0, n).map((r) => ({ requestId: r.requestId, index: r.index }));
  }
}
