// The leader side of one partition's replication, as pure rules (Kafka's
// Partition/Replica ISR logic): follower progress, the high watermark, and
// which ISR changes to ask the controller for. Time comes from the injected
// Clock; nothing here does I/O — the partition (partition.ts) feeds it
// fetches and appends and the replica manager's parts act on what it returns.
//
// One owner per fact: the high watermark is stored once, in the partition's
// log, and the committed ISR once, in the partition's registration (the
// metadata image's); these rules read and move them through LeaderFacts.
// What is stored here is only the leader's own: follower progress, its
// durable end, and the ISR change pending at the controller.
//
// Invariants:
// - the high watermark never decreases and never exceeds the leader's LEO;
// - HW = min LEO over the *maximal* ISR (the committed ISR plus members whose
//   addition is pending at the controller), so an expansion in flight can
//   only hold HW back, never move it past a replica that may join (KIP-497);
// - a shrink takes effect only once the controller commits it (the pending
//   ISR keeps the removed member counted until then);
// - a follower joins only after it reached HW *and* the start offset of the
//   current leader epoch, so it holds everything this leader has committed.

import type { Clock } from '../../util/clock.js';
import { assert } from '../../util/assert.js';
import { mutant } from '../../util/mutants.js';

export type BrokerId = number;

/**
 * A follower's LEO before its first fetch to this leader. Not 0: with an
 * empty log (HW 0) a replica that never fetched — possibly down — would look
 * caught up and be added to the ISR, holding HW back until shrunk again
 * (Kafka also starts from an unknown offset).
 */
const UNKNOWN_LEO = -1;

export interface FollowerProgress {
  /** The follower's log end offset as of its last fetch (UNKNOWN_LEO before one). */
  leo: number;
  /** Last time its fetch reached the leader's LEO (or the LEO of its previous fetch). */
  lastCaughtUpMs: number;
  lastFetchMs: number;
  /** Leader LEO at the time of the follower's previous fetch. */
  leaderLeoAtLastFetch: number;
}

export interface IsrChangeRequest {
  readonly newIsr: readonly BrokerId[];
  readonly reason: 'shrink' | 'expand';
  readonly brokers: readonly BrokerId[];
}

/** The partition's facts these rules read and move; the partition stores them (once). */
export interface LeaderFacts {
  /** The committed ISR: the latest metadata image's. */
  readonly isr: readonly BrokerId[];
  /** The high watermark, stored in the log. */
  readonly highWatermark: number;
  /** Moves the stored high watermark to `offset` (only ever up, while leading). */
  advanceHighWatermark(offset: number): void;
}

export class LeaderState {
  private readonly followers = new Map<BrokerId, FollowerProgress>();
  /** ISR change sent to the controller and not yet committed or rejected. */
  private pendingIsr: BrokerId[] | null = null;

  constructor(
    readonly localId: BrokerId,
    readonly leaderEpoch: number,
    /** First offset this leader appended in its epoch (its LEO on election). */
    readonly epochStartOffset: number,
    replicas: readonly BrokerId[],
    private readonly facts: LeaderFacts,
    /** The leader's end that counts toward the HW (its LEO, or its flushed end in fsync mode). */
    private leo: number,
    private readonly clock: Clock,
    private readonly replicaLagTimeMaxMs: number,
  ) {
    const isr = facts.isr;
    assert(isr.includes(localId), `leader ${localId} must be in its ISR ${isr}`);
    assert(facts.highWatermark <= leo, `HW ${facts.highWatermark} beyond LEO ${leo}`);
    const now = clock.monotonicMs();
    for (const r of replicas) {
      if (r === localId) continue;
      // A new leader does not know followers' LEOs; assume in sync until the
      // lag time passes (Kafka does the same), and the LEO unknown until the
      // first fetch.
      this.followers.set(r, { leo: UNKNOWN_LEO, lastCaughtUpMs: isr.includes(r) ? now : 0, lastFetchMs: 0, leaderLeoAtLastFetch: 0 });
    }
  }

  get highWatermark(): number {
    return this.facts.highWatermark;
  }

  get logEndOffset(): number {
    return this.leo;
  }

  /** The committed ISR (the partition's registration). */
  get isr(): readonly BrokerId[] {
    return this.facts.isr;
  }

  /** The ISR change pending at the controller, if any. */
  get pendingIsrChange(): readonly BrokerId[] | null {
    return this.pendingIsr;
  }

  /** ISR used for HW: committed ISR plus pending additions (and pending removals still count). */
  get maximalIsr(): readonly BrokerId[] {
    if (!this.pendingIsr) return this.facts.isr;
    return [...new Set([...this.facts.isr, ...this.pendingIsr])];
  }

  get hasPendingIsrChange(): boolean {
    return this.pendingIsr !== null;
  }

  follower(id: BrokerId): Readonly<FollowerProgress> | undefined {
    return this.followers.get(id);
  }

  /** The leader appended up to `leo` (exclusive end). Returns true if HW moved. */
  onLocalAppend(leo: number): boolean {
    assert(leo >= this.leo, `leader LEO went backwards: ${leo} < ${this.leo}`);
    this.leo = leo;
    return this.maybeAdvanceHw();
  }

  /**
   * A follower fetched from `fetchOffset`, i.e. it holds everything below it.
   * Returns true if HW moved.
   */
  onFollowerFetch(id: BrokerId, fetchOffset: number): boolean {
    const f = this.followers.get(id);
    if (!f) return false;
    const now = this.clock.monotonicMs();
    if (fetchOffset >= this.leo) f.lastCaughtUpMs = now;
    else if (fetchOffset >= f.leaderLeoAtLastFetch) f.lastCaughtUpMs = Math.max(f.lastCaughtUpMs, f.lastFetchMs);
    f.leaderLeoAtLastFetch = this.leo;
    f.lastFetchMs = now;
    f.leo = Math.min(fetchOffset, this.leo);
    return this.maybeAdvanceHw();
  }

  private maybeAdvanceHw(): boolean {
    let min = this.leo;
    for (const id of this.maximalIsr) {
      if (id === this.localId) continue;
      const f = this.followers.get(id);
      min = Math.min(min, f ? f.leo : 0);
    }
    if (mutant('hw-at-leader-end')) min = this.leo;
    if (min > this.facts.highWatermark) {
      this.facts.advanceHighWatermark(min);
      return true;
    }
    return false;
  }

  /**
   * The ISR change to request now, if any: shrink followers that have not
   * caught up within replicaLagTimeMaxMs, or expand with followers that
   * caught up. Only one change is in flight at a time.
   */
  isrChangeToRequest(): IsrChangeRequest | null {
    if (this.pendingIsr) return null;
    const now = this.clock.monotonicMs();
    const lagging = this.facts.isr.filter((id) => {
      if (id === this.localId) return false;
      const f = this.followers.get(id);
      return !f || now - f.lastCaughtUpMs > this.replicaLagTimeMaxMs;
    });
    if (lagging.length > 0) {
      return { reason: 'shrink', brokers: lagging, newIsr: this.facts.isr.filter((id) => !lagging.includes(id)) };
    }
    const joining = [...this.followers.entries()]
      .filter(([id, f]) => !this.facts.isr.includes(id) && f.leo >= this.facts.highWatermark && f.leo >= this.epochStartOffset && now - f.lastCaughtUpMs <= this.replicaLagTimeMaxMs)
      .map(([id]) => id);
    if (joining.length > 0) return { reason: 'expand', brokers: joining, newIsr: [...this.facts.isr, ...joining] };
    return null;
  }

  /** The shell sent `newIsr` to the controller. */
  markIsrChangePending(newIsr: readonly BrokerId[]): void {
    assert(!this.pendingIsr, 'an ISR change is already pending');
    this.pendingIsr = [...newIsr];
  }

  /** The controller rejected the change, or it timed out: allow a new one. */
  clearPendingIsrChange(): void {
    this.pendingIsr = null;
  }

  /**
   * The metadata image shows a new committed ISR for this leader epoch (the
   * result of our request, or a controller-driven change), already in the
   * partition's registration. Returns true if HW moved.
   */
  onIsrCommitted(replicas: readonly BrokerId[]): boolean {
    this.pendingIsr = null;
    for (const r of replicas) {
      if (r !== this.localId && !this.followers.has(r)) {
        this.followers.set(r, { leo: UNKNOWN_LEO, lastCaughtUpMs: 0, lastFetchMs: 0, leaderLeoAtLastFetch: 0 });
      }
    }
    for (const r of [...this.followers.keys()]) if (!replicas.includes(r)) this.followers.delete(r);
    return this.maybeAdvanceHw();
  }

  /**
   * Whether an acks=all produce whose last offset is `lastOffset` is done:
   * 'wait' until HW passes it; then 'ok', or 'notEnoughReplicasAfterAppend'
   * when the ISR shrank below minInsyncReplicas meanwhile.
   */
  ackState(lastOffset: number, minInsyncReplicas: number): 'wait' | 'ok' | 'notEnoughReplicasAfterAppend' {
    if (this.facts.highWatermark <= lastOffset && !mutant('acks-all-on-leader-append')) return 'wait';
    return this.hasEnoughReplicas(minInsyncReplicas) ? 'ok' : 'notEnoughReplicasAfterAppend';
  }

  /**
   * Whether the committed ISR meets min.insync.replicas: produce with
   * acks=all is refused before appending when not, and an acks=all waiter
   * whose ISR shrank below it meanwhile is answered NOT_ENOUGH_REPLICAS_AFTER_APPEND.
   * The one place a shrunk ISR meets the minimum.
   */
  hasEnoughReplicas(minInsyncReplicas: number): boolean {
    return this.facts.isr.length >= minInsyncReplicas || mutant('isr-shrink-ignores-min-isr');
  }
}
