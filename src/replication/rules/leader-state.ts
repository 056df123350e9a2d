// The leader side of one partition's replication, as pure rules (Kafka's
// Partition/Replica ISR logic): follower progress, the high watermark, and
// which ISR changes to ask the controller for. Time comes from the injected
// Clock; nothing here does I/O — the replica manager (shell) feeds it fetches
// and appends and acts on what it returns.
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

export class LeaderState {
  private hw: number;
  private readonly followers = new Map<BrokerId, FollowerProgress>();
  /** Committed ISR (from the latest metadata image). */
  private committedIsr: BrokerId[];
  /** ISR change sent to the controller and not yet committed or rejected. */
  private pendingIsr: BrokerId[] | null = null;

  constructor(
    readonly localId: BrokerId,
    readonly leaderEpoch: number,
    /** First offset this leader appended in its epoch (its LEO on election). */
    readonly epochStartOffset: number,
    replicas: readonly BrokerId[],
    isr: readonly BrokerId[],
    initialHw: number,
    private leo: number,
    private readonly clock: Clock,
    private readonly replicaLagTimeMaxMs: number,
  ) {
    assert(isr.includes(localId), `leader ${localId} must be in its ISR ${isr}`);
    assert(initialHw <= leo, `HW ${initialHw} beyond LEO ${leo}`);
    this.hw = initialHw;
    this.committedIsr = [...isr];
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
    return this.hw;
  }

  get logEndOffset(): number {
    return this.leo;
  }

  get isr(): readonly BrokerId[] {
    return this.committedIsr;
  }

  /** ISR used for HW: committed ISR plus pending additions (and pending removals still count). */
  get maximalIsr(): readonly BrokerId[] {
    if (!this.pendingIsr) return this.committedIsr;
    return [...new Set([...this.committedIsr, ...this.pendingIsr])];
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
    if (min > this.hw) {
      this.hw = min;
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
    const lagging = this.committedIsr.filter((id) => {
      if (id === this.localId) return false;
      const f = this.followers.get(id);
      return !f || now - f.lastCaughtUpMs > this.replicaLagTimeMaxMs;
    });
    if (lagging.length > 0) {
      return { reason: 'shrink', brokers: lagging, newIsr: this.committedIsr.filter((id) => !lagging.includes(id)) };
    }
    const joining = [...this.followers.entries()]
      .filter(([id, f]) => !this.committedIsr.includes(id) && f.leo >= this.hw && f.leo >= this.epochStartOffset && now - f.lastCaughtUpMs <= this.replicaLagTimeMaxMs)
      .map(([id]) => id);
    if (joining.length > 0) return { reason: 'expand', brokers: joining, newIsr: [...this.committedIsr, ...joining] };
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
   * The metadata image shows a committed ISR for this leader epoch (the
   * result of our request, or a controller-driven change). Returns true if HW moved.
   */
  onIsrCommitted(isr: readonly BrokerId[], replicas: readonly BrokerId[]): boolean {
    this.committedIsr = [...isr];
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
    if (this.hw <= lastOffset && !mutant('acks-all-on-leader-append')) return 'wait';
    return this.hasEnoughReplicas(minInsyncReplicas) ? 'ok' : 'notEnoughReplicasAfterAppend';
  }

  /**
   * Whether the committed ISR meets min.insync.replicas: produce with
   * acks=all is refused before appending when not, and an acks=all waiter
   * whose ISR shrank below it meanwhile is answered NOT_ENOUGH_REPLICAS_AFTER_APPEND.
   * The one place a shrunk ISR meets the minimum.
   */
  hasEnoughReplicas(minInsyncReplicas: number): boolean {
    return this.committedIsr.length >= minInsyncReplicas || mutant('isr-shrink-ignores-min-isr');
  }
}
