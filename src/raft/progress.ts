// The leader's view of each follower and observer, and per-follower flow
// control (etcd's tracker package, in outline).
//
// States (one Progress per peer, the leader itself excluded):
//   probe      the leader does not know where the peer's log matches; it sends
//              one append at a time (`probeSent` pauses it) and backs `next`
//              off on rejection using the conflict hint.
//   replicate  the peer is known to match up to `match`; the leader streams
//              appends optimistically (`next` runs ahead) with at most
//              `maxInflightAppends` unacknowledged messages.
//   snapshot   the peer needs entries the leader compacted away; the leader
//              sends the snapshot one chunk at a time, no appends.
//
// Invariants: match < next; next ≤ leader's last index + 1 (maintained by
// the callers); in replicate state every inflight entry index is ≥ next - the
// window and strictly increasing.

import { assert } from '../util/assert.js';
import { quorumSize } from './membership.js';
import type { NodeId, ProgressState, ProgressStatus } from './types.js';

/** A bounded FIFO of the last indexes of appends in flight to one peer. */
export class Inflights {
  private readonly lasts: number[] = [];

  constructor(readonly capacity: number) {
    assert(Number.isInteger(capacity) && capacity > 0, `inflight capacity ${capacity}`);
  }

  get count(): number {
    return this.lasts.length;
  }

  full(): boolean {
    return this.lasts.length >= this.capacity;
  }

  add(lastIndex: number): void {
    assert(!this.full(), 'inflight window overflow');
    assert(this.lasts.length === 0 || this.lasts.at(-1)! < lastIndex, 'inflight indexes must increase');
    this.lasts.push(lastIndex);
  }

  /** Frees every append whose last index is ≤ `index` (acknowledged). */
  freeTo(index: number): void {
    let n = 0;
    while (n < this.lasts.length && this.lasts[n]! <= index) n++;
    if (n > 0) this.lasts.splice(0, n);
  }

  /** Frees the oldest append (presumed lost) so a stalled window can move. */
  freeFirst(): void {
    this.lasts.shift();
  }

  reset(): void {
    this.lasts.length = 0;
  }
}

export class Progress {
  match = 0;
  next: number;
  state: ProgressState = 'probe';
  /** Probe state: an append is outstanding; wait for its answer or the next heartbeat response. */
  probeSent = false;
  /** Heard from since the last check-quorum round. */
  recentActive = true;
  /** Highest commit index sent to this peer in an append. */
  sentCommit = 0;
  readonly inflights: Inflights;
  /** Snapshot state: index of the snapshot being sent, offset of the chunk in flight, ticks without an answer. */
  snapshotIndex = 0;
  snapshotOffset = 0;
  snapshotWaitTicks = 0;

  constructor(next: number, inflightMax: number) {
    this.next = next;
    this.inflights = new Inflights(inflightMax);
  }

  becomeProbe(): void {
    // Leaving snapshot state, the peer holds at least the snapshot.
    const floor = this.state === 'snapshot' ? Math.max(this.match, this.snapshotIndex) : this.match;
    this.state = 'probe';
    this.probeSent = false;
    this.next = floor + 1;
    this.inflights.reset();
  }

  becomeReplicate(): void {
    this.state = 'replicate';
    this.probeSent = false;
    this.next = this.match + 1;
    this.inflights.reset();
  }

  becomeSnapshot(snapshotIndex: number): void {
    this.state = 'snapshot';
    this.probeSent = false;
    this.inflights.reset();
    this.snapshotIndex = snapshotIndex;
    this.snapshotOffset = 0;
    this.snapshotWaitTicks = 0;
  }

  /** The peer acknowledged entries through `index`; false if that is old news. */
  maybeUpdate(index: number): boolean {
    if (index <= this.match) return false;
    this.match = index;
    this.next = Math.max(this.next, index + 1);
    this.probeSent = false;
    return true;
  }

  /** An append carrying entries up to `lastIndex` was sent. */
  sentEntries(lastIndex: number): void {
    if (this.state === 'replicate') {
      this.next = lastIndex + 1;
      this.inflights.add(lastIndex);
    } else {
      this.probeSent = true;
    }
  }

  isPaused(): boolean {
    switch (this.state) {
      case 'probe':
        return this.probeSent;
      case 'replicate':
        return this.inflights.full();
      case 'snapshot':
        return true;
    }
  }

  status(): ProgressStatus {
    return { match: this.match, next: this.next, state: this.state, recentActive: this.recentActive };
  }
}

/**
 * The largest index acknowledged by a quorum of `voters`. `matchOf` gives each
 * voter's acknowledged index (the leader passes its own durable last index).
 */
export function quorumIndex(voters: readonly NodeId[], matchOf: (id: NodeId) => number): number {
  if (voters.length === 0) return 0;
  const matches = voters.map(matchOf).sort((a, b) => b - a);
  return matches[quorumSize(voters.length) - 1]!;
}

/** Whether a quorum of `voters` satisfies `active`. */
export function quorumHolds(voters: readonly NodeId[], active: (id: NodeId) => boolean): boolean {
  let n = 0;
  for (const id of voters) if (active(id)) n++;
  return n >= quorumSize(voters.length);
}
