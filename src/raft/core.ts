// The state of one Raft node, shared by the modules that step it (election,
// follower, replication, leader, snapshot transfer). It holds data and tiny
// helpers only; role transitions live in transitions.ts and nowhere else.
//
// Invariants:
// - `role` is a discriminated union: leader-only state (progress, reads,
//   transfer) exists only while leading; candidate-only state (votes) only
//   while campaigning; a follower's in-progress snapshot only while following.
// - `term` never decreases; `vote` is reset exactly when `term` grows.
// - Messages leave only through `outbox` (drained by ready()); the outbox is
//   bounded, and overflow drops messages — safe, since Raft tolerates loss.

import type { Logger } from '../util/logger.js';
import type { Rng } from '../util/rng.js';
import { isMember, isVoter, members } from './membership.js';
import type { Progress } from './progress.js';
import type { RaftLog } from './raft-log.js';
import type { ReadIndexTracker } from './read-index.js';
import {
  DEFAULT_RAFT_CONFIG, NO_NODE,
  type Membership, type Message, type NodeId, type RaftConfig, type ReadState, type SnapshotMeta,
} from './types.js';

/** A snapshot being received chunk by chunk from the leader. */
export interface IncomingSnapshot {
  readonly meta: SnapshotMeta;
  readonly chunks: Uint8Array[];
  received: number;
}

export interface FollowerRole {
  /** 'observer' when this node is not a voter of the membership in effect. */
  readonly role: 'follower' | 'observer';
  leader: NodeId;
  incoming: IncomingSnapshot | undefined;
}

export interface CandidateRole {
  readonly role: 'preCandidate' | 'candidate';
  /** Answers received from voters (this node's own vote included). */
  readonly votes: Map<NodeId, boolean>;
}

export interface TransferState {
  readonly target: NodeId;
  elapsedTicks: number;
  timeoutNowSent: boolean;
}

export interface LeaderRole {
  readonly role: 'leader';
  readonly progress: Map<NodeId, Progress>;
  readonly reads: ReadIndexTracker;
  transfer: TransferState | undefined;
  heartbeatElapsed: number;
  /** Proposals, acknowledgements or commits happened: flush appends at the next ready(). */
  needsFlush: boolean;
}

export type RoleState = FollowerRole | CandidateRole | LeaderRole;

export type FullRaftConfig = Required<RaftConfig>;

export function fullConfig(config: RaftConfig): FullRaftConfig {
  return {
    ...DEFAULT_RAFT_CONFIG,
    ...config,
    maxPendingReads: config.maxPendingReads ?? DEFAULT_RAFT_CONFIG.maxPendingReads ?? 4096,
    maxPendingMessages: config.maxPendingMessages ?? DEFAULT_RAFT_CONFIG.maxPendingMessages ?? 65536,
  };
}

type WithoutSender<M> = M extends Message ? Omit<M, 'from' | 'term'> & { readonly term?: number } : never;
/** A message without the sender fields, which `send` fills in. */
export type Outgoing = WithoutSender<Message>;

export class RaftCore {
  term = 0;
  vote: NodeId = NO_NODE;
  role: RoleState = { role: 'follower', leader: NO_NODE, incoming: undefined };
  /** Ticks since the last reset (leader contact, vote granted, election started, check-quorum round). */
  electionElapsed = 0;
  randomizedElectionTimeout: number;
  readonly outbox: Message[] = [];
  readStates: ReadState[] = [];

  constructor(
    readonly id: NodeId,
    readonly cfg: FullRaftConfig,
    readonly log: RaftLog,
    readonly rng: Rng,
    readonly logger: Logger,
  ) {
    this.randomizedElectionTimeout = cfg.electionTimeoutTicks;
  }

  membership(): Membership {
    return this.log.membership();
  }

  isVoter(id: NodeId = this.id): boolean {
    return isVoter(this.membership(), id);
  }

  isMember(id: NodeId): boolean {
    return isMember(this.membership(), id);
  }

  /** Every member but this node: the peers a leader replicates to. */
  peers(): NodeId[] {
    return members(this.membership()).filter((id) => id !== this.id);
  }

  leader(): NodeId {
    switch (this.role.role) {
      case 'leader':
        return this.id;
      case 'follower':
      case 'observer':
        return this.role.leader;
      default:
        return NO_NODE;
    }
  }

  resetElectionTimer(): void {
    this.electionElapsed = 0;
    const base = this.cfg.electionTimeoutTicks;
    this.randomizedElectionTimeout = base + this.rng.int(base);
  }

  /**
   * Leader stickiness: while this node has heard from a live leader within an
   * election timeout (or is the leader), it ignores (pre)vote requests that
   * are not part of a leadership transfer. Only with pre-vote or check-quorum
   * on: without check-quorum a leader cut off from a majority would keep its
   * followers from ever electing another.
   */
  inLease(): boolean {
    if (!this.cfg.preVote && !this.cfg.checkQuorum) return false;
    if (this.role.role === 'leader') return true;
    return this.leader() !== NO_NODE && this.electionElapsed < this.cfg.electionTimeoutTicks;
  }

  /** Queues a message; `from` and (unless given) `term` are this node's. */
  send(msg: Outgoing): void {
    if (this.outbox.length >= this.cfg.maxPendingMessages) {
      this.logger.warn({ type: msg.type, to: msg.to }, 'raft outbox full: dropping message');
      return;
    }
    this.outbox.push({ ...msg, from: this.id, term: msg.term ?? this.term } as Message);
  }

  leaderRole(): LeaderRole | undefined {
    return this.role.role === 'leader' ? this.role : undefined;
  }
}
