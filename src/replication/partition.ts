// One partition replica hosted by this broker: its log and what the latest
// metadata image says about it (leader, epochs, replicas, ISR), plus the
// leader-side rules (LeaderState) while this broker leads it.
//
// Invariants: `leader` is non-null exactly while the image names this broker
// leader at `leaderEpoch`; a request that names another leader epoch is
// refused (FENCED_LEADER_EPOCH when older, UNKNOWN_LEADER_EPOCH when newer),
// which is what keeps a deposed leader from serving or acknowledging.

import type { Clock } from '../util/clock.js';
import { Errors, type ErrorInfo } from '../util/errors.js';
import type { PartitionLog } from '../storage/partition-log.js';
import type { PartitionRegistration } from '../metadata/image.js';
import { mutant } from '../util/mutants.js';
import { LeaderState } from './rules/leader-state.js';

export function partitionKey(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

export interface EpochProblem {
  readonly error: ErrorInfo;
  readonly message: string;
}

export class Partition {
  readonly key: string;
  leaderId = -1;
  leaderEpoch = -1;
  partitionEpoch = -1;
  replicas: readonly number[] = [];
  isr: readonly number[] = [];
  /** Replicas a reassignment is adding (their replication traffic may be throttled). */
  addingReplicas: readonly number[] = [];
  /** Leader-side state while this broker leads at `leaderEpoch`. */
  leader: LeaderState | null = null;

  constructor(
    readonly topic: string,
    readonly index: number,
    readonly topicId: string,
    readonly log: PartitionLog,
    private readonly localId: number,
  ) {
    this.key = partitionKey(topic, index);
  }

  get isLeader(): boolean {
    return this.leader !== null;
  }

  /**
   * Becomes leader at the image's epoch. `durableEnd` is the log end that
   * counts toward the high watermark (the LEO, or the flushed end in fsync mode).
   */
  makeLeader(reg: PartitionRegistration, durableEnd: number, clock: Clock, replicaLagTimeMaxMs: number): void {
    this.log.assignLeaderEpoch(reg.leaderEpoch);
    this.setRegistration(reg);
    // The old HW, not the log end: what lies above it may not be on the ISR, and must not become visible yet.
    const initialHw = mutant('new-leader-hw-at-leo') ? durableEnd : Math.min(this.log.highWatermark, durableEnd);
    this.leader = new LeaderState(
      this.localId, reg.leaderEpoch, this.log.logEndOffset, reg.replicas, reg.isr,
      initialHw, durableEnd, clock, replicaLagTimeMaxMs,
    );
  }

  makeFollower(reg: PartitionRegistration): void {
    this.leader = null;
    this.setRegistration(reg);
  }

  setRegistration(reg: PartitionRegistration): void {
    this.leaderId = reg.leader;
    this.leaderEpoch = reg.leaderEpoch;
    this.partitionEpoch = reg.partitionEpoch;
    this.replicas = reg.replicas;
    this.isr = reg.isr;
    this.addingReplicas = reg.addingReplicas;
  }

  /** Why a request naming `currentLeaderEpoch` (-1: no check) may not be served by this leader, or null. */
  leaderProblem(currentLeaderEpoch: number): EpochProblem | null {
    if (currentLeaderEpoch >= 0 && currentLeaderEpoch < this.leaderEpoch) {
      return { error: Errors.FENCED_LEADER_EPOCH, message: `leader epoch ${currentLeaderEpoch} of ${this.key} is older than ${this.leaderEpoch}` };
    }
    if (currentLeaderEpoch > this.leaderEpoch) {
      return { error: Errors.UNKNOWN_LEADER_EPOCH, message: `leader epoch ${currentLeaderEpoch} of ${this.key} is newer than this broker knows (${this.leaderEpoch})` };
    }
    if (!this.leader) {
      return { error: Errors.NOT_LEADER_OR_FOLLOWER, message: `broker ${this.localId} is not the leader of ${this.key} (leader: ${this.leaderId})` };
    }
    return null;
  }
}
