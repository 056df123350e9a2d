// One partition replica hosted by this broker: its log, what the latest
// metadata image says about it (leader, epochs, replicas, ISR), and — while
// this broker leads it — the leader-side rules (LeaderState). Kafka's
// `Partition`: it owns the ISR, the acks decision and the high watermark.
//
// One owner per fact:
// - the high watermark is stored once, in the log (`log.highWatermark`):
//   the leader rules move it there (LeaderFacts.advanceHighWatermark), a
//   follower's fetcher sets it from the leader's answers, and every reader
//   (fetch, list offsets, delete records, the fetch sessions) asks the log;
// - the committed ISR is stored once, in `registration` (the image's); the
//   ISR change pending at the controller once, in LeaderState.
//
// Invariants: `leader` is non-null exactly while the image names this broker
// leader at `leaderEpoch`; a request that names another leader epoch is
// refused (FENCED_LEADER_EPOCH when older, UNKNOWN_LEADER_EPOCH when newer),
// which is what keeps a deposed leader from serving or acknowledging.

import type { Clock } from '../util/clock.js';
import { Errors, type ErrorInfo } from '../util/errors.js';
import { mutant } from '../util/mutants.js';
import type { PartitionLog } from '../storage/partition-log.js';
import type { PartitionRegistration } from '../metadata/image.js';
import { LeaderState, type LeaderFacts } from './rules/leader-state.js';

export function partitionKey(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

export interface EpochProblem {
  readonly error: ErrorInfo;
  readonly message: string;
}

/** Where an acks=all produce stands (LeaderState.ackState). */
export type AckState = 'wait' | 'ok' | 'notEnoughReplicasAfterAppend';

/** The registration of a partition the image has not shown this broker yet. */
const UNREGISTERED: Pick<PartitionRegistration, 'leader' | 'leaderEpoch' | 'partitionEpoch' | 'replicas' | 'isr' | 'addingReplicas'> = {
  leader: -1, leaderEpoch: -1, partitionEpoch: -1, replicas: [], isr: [], addingReplicas: [],
};

export class Partition implements LeaderFacts {
  readonly key: string;
  /** The latest image's registration of this partition (the only copy of leader, epochs, replicas and committed ISR here). */
  private registration: Pick<PartitionRegistration, 'leader' | 'leaderEpoch' | 'partitionEpoch' | 'replicas' | 'isr' | 'addingReplicas'> = UNREGISTERED;
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

  get leaderId(): number {
    return this.registration.leader;
  }

  get leaderEpoch(): number {
    return this.registration.leaderEpoch;
  }

  get partitionEpoch(): number {
    return this.registration.partitionEpoch;
  }

  get replicas(): readonly number[] {
    return this.registration.replicas;
  }

  /** The committed ISR (the image's). */
  get isr(): readonly number[] {
    return this.registration.isr;
  }

  /** Replicas a reassignment is adding (their replication traffic may be throttled). */
  get addingReplicas(): readonly number[] {
    return this.registration.addingReplicas;
  }

  get isLeader(): boolean {
    return this.leader !== null;
  }

  /** The high watermark: the log's (stored there only). */
  get highWatermark(): number {
    return this.log.highWatermark;
  }

  /** LeaderFacts: the leader rules move the HW, in the log. */
  advanceHighWatermark(offset: number): void {
    this.log.updateHighWatermark(offset);
  }

  /**
   * Becomes leader at the image's epoch. `durableEnd` is the log end that
   * counts toward the high watermark (the LEO, or the flushed end in fsync
   * mode). The HW starts at the old one (capped at that end), not at the
   * log end: what lies above it may not be on the ISR and must not become
   * visible yet.
   */
  makeLeader(reg: PartitionRegistration, durableEnd: number, clock: Clock, replicaLagTimeMaxMs: number): void {
    this.log.assignLeaderEpoch(reg.leaderEpoch);
    this.setRegistration(reg);
    const initialHw = mutant('new-leader-hw-at-leo') ? durableEnd : Math.min(this.log.highWatermark, durableEnd);
    this.log.updateHighWatermark(initialHw);
    this.leader = new LeaderState(this.localId, reg.leaderEpoch, this.log.logEndOffset, reg.replicas, this, durableEnd, clock, replicaLagTimeMaxMs);
  }

  makeFollower(reg: PartitionRegistration): void {
    this.leader = null;
    this.setRegistration(reg);
  }

  /** Takes the image's registration (same leader epoch: a new ISR, replicas or partition epoch). */
  setRegistration(reg: PartitionRegistration): void {
    this.registration = reg;
  }

  /** The image committed a new ISR (or replicas) for this leader's epoch. Returns true if the HW moved. */
  onRegistrationChanged(reg: PartitionRegistration): boolean {
    this.setRegistration(reg);
    return this.leader !== null && this.leader.onIsrCommitted(reg.replicas);
  }

  /** The leader's durable end moved to `end`. Returns true if the HW moved. */
  onLocalAppend(end: number): boolean {
    return this.leader !== null && this.leader.onLocalAppend(end);
  }

  /** Follower `replicaId` fetched from `fetchOffset` at this leader's epoch. Returns true if the HW moved. */
  onFollowerFetch(replicaId: number, fetchOffset: number): boolean {
    return this.leader !== null && this.leader.onFollowerFetch(replicaId, fetchOffset);
  }

  /** Whether acks=all may append now: the committed ISR meets min.insync.replicas. */
  hasEnoughReplicas(minInsyncReplicas: number): boolean {
    return this.leader !== null && this.leader.hasEnoughReplicas(minInsyncReplicas);
  }

  /** Where an acks=all produce of `lastOffset` stands under `leader` (the LeaderState it appended under). */
  ackState(leader: LeaderState, lastOffset: number, minInsyncReplicas: number): AckState | 'leaderChanged' {
    if (this.leader !== leader) return 'leaderChanged';
    return leader.ackState(lastOffset, minInsyncReplicas);
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
