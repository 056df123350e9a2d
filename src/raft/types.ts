// Types shared by the pure Raft core (src/raft/), its shell (src/raft-node/)
// and the deterministic simulation (test/sim/). The core never performs I/O:
// it returns a Ready describing what to persist, what to send and what to
// apply, and the shell calls advance() once it has done that (etcd's model).
//
// Contract of a Ready (the shell MUST follow this order):
//   1. persist `snapshot` (if any), then `entries` (appending; an entry whose
//      index already exists replaces that index and everything after it),
//      then `hardState` (if any) — and fsync all of it;
//   2. only then send `messages` (a vote or an append acknowledgement must
//      never leave the node before the state it promises is durable);
//   3. restore the state machine from `snapshot` (if any), then apply
//      `committedEntries` in order;
//   4. call advance(ready).
// A leader may send `messages` in parallel with persisting its own entries
// (Raft thesis §10.2.1) only if the shell knows what it does; the default
// shell does the simple, strictly ordered thing.

/** A node id. 0 means "none" (no vote, no known leader). */
export type NodeId = number;
export const NO_NODE: NodeId = 0;

export enum EntryType {
  /** An application command (metadata records). */
  Normal = 0,
  /** Appended by a new leader so entries of its term can commit (§5.4.2). */
  NoOp = 1,
  /** A membership change; `data` is an encoded ConfChange. Takes effect when appended. */
  Config = 2,
}

export interface Entry {
  readonly term: number;
  readonly index: number;
  readonly type: EntryType;
  readonly data: Uint8Array;
}

/** Voters vote and count toward quorums; observers (learners) only follow. */
export interface Membership {
  readonly voters: readonly NodeId[];
  readonly observers: readonly NodeId[];
}

export type ConfChange =
  | { readonly type: 'addVoter'; readonly node: NodeId }
  | { readonly type: 'removeVoter'; readonly node: NodeId }
  | { readonly type: 'addObserver'; readonly node: NodeId }
  | { readonly type: 'removeObserver'; readonly node: NodeId }
  /** Observer → voter; the observer should have caught up first. */
  | { readonly type: 'promoteObserver'; readonly node: NodeId };

/** Durable per-node state. Persisted (and fsynced) before messages that depend on it are sent. */
export interface HardState {
  readonly term: number;
  readonly vote: NodeId;
  readonly commit: number;
}

export interface SnapshotMeta {
  /** Last log index covered by the snapshot. */
  readonly index: number;
  readonly term: number;
  /** Membership as of `index`. */
  readonly membership: Membership;
}

export interface Snapshot {
  readonly meta: SnapshotMeta;
  /** Opaque state-machine image. */
  readonly data: Uint8Array;
}

export type Role = 'follower' | 'preCandidate' | 'candidate' | 'leader' | 'observer';

// ---------------------------------------------------------------- messages

interface MessageBase {
  readonly from: NodeId;
  readonly to: NodeId;
  /** Sender's term (for pre-vote requests: the term it would campaign in). */
  readonly term: number;
}

export interface VoteRequest extends MessageBase {
  readonly type: 'vote' | 'preVote';
  readonly lastLogIndex: number;
  readonly lastLogTerm: number;
  /** Set when a leadership transfer (TimeoutNow) triggered the campaign: bypasses leader stickiness. */
  readonly transfer: boolean;
}

export interface VoteResponse extends MessageBase {
  readonly type: 'voteResp' | 'preVoteResp';
  readonly granted: boolean;
}

export interface AppendRequest extends MessageBase {
  readonly type: 'append';
  readonly prevLogIndex: number;
  readonly prevLogTerm: number;
  readonly entries: readonly Entry[];
  readonly commit: number;
}

export interface AppendResponse extends MessageBase {
  readonly type: 'appendResp';
  readonly success: boolean;
  /**
   * On success: the follower's last index matching the leader (prevLogIndex + entries).
   * On rejection: the prevLogIndex that was rejected, so the leader can tell a
   * stale rejection (of an append it has since superseded) from a current one.
   */
  readonly matchIndex: number;
  /**
   * On rejection: fast-backtracking hint. `conflictTerm` is the term of the
   * follower's entry at prevLogIndex (0 if it has none there) and
   * `conflictIndex` the first index it holds with that term (or its last
   * index + 1 when the log is too short).
   */
  readonly conflictTerm: number;
  readonly conflictIndex: number;
}

/** Leader liveness + commit propagation + ReadIndex confirmation. */
export interface HeartbeatRequest extends MessageBase {
  readonly type: 'heartbeat';
  readonly commit: number;
  /** ReadIndex round this heartbeat confirms leadership for (0 = none). */
  readonly readRound: number;
}

export interface HeartbeatResponse extends MessageBase {
  readonly type: 'heartbeatResp';
  readonly readRound: number;
  /** Follower's last log index, so the leader can resume replication. */
  readonly lastIndex: number;
}

export interface InstallSnapshotRequest extends MessageBase {
  readonly type: 'installSnapshot';
  readonly meta: SnapshotMeta;
  /** Byte offset of this chunk within the snapshot data. */
  readonly offset: number;
  readonly chunk: Uint8Array;
  readonly done: boolean;
}

export interface InstallSnapshotResponse extends MessageBase {
  readonly type: 'installSnapshotResp';
  readonly snapshotIndex: number;
  /** Bytes received so far (the next offset wanted); -1 when the follower rejects and wants a restart. */
  readonly nextOffset: number;
  readonly done: boolean;
}

/** Leadership transfer: tells the target to campaign immediately. */
export interface TimeoutNowRequest extends MessageBase {
  readonly type: 'timeoutNow';
}

export type Message =
  | VoteRequest
  | VoteResponse
  | AppendRequest
  | AppendResponse
  | HeartbeatRequest
  | HeartbeatResponse
  | InstallSnapshotRequest
  | InstallSnapshotResponse
  | TimeoutNowRequest;

export type MessageType = Message['type'];

// ---------------------------------------------------------------- ready

/** A linearizable read may be served once the state machine has applied `index`. */
export interface ReadState {
  readonly requestId: number;
  readonly index: number;
}

/** Volatile, observable state (not persisted). */
export interface SoftState {
  readonly role: Role;
  readonly leader: NodeId;
  readonly term: number;
}

export interface Ready {
  /** Set when term, vote or commit changed since the last Ready. */
  readonly hardState?: HardState;
  /** Entries to append to durable storage (see the contract above). */
  readonly entries: readonly Entry[];
  /** A snapshot received from the leader: persist it, then restore the state machine from it. */
  readonly snapshot?: Snapshot;
  /** Committed entries to apply, in index order. */
  readonly committedEntries: readonly Entry[];
  /** Messages to send once the above is durable. */
  readonly messages: readonly Message[];
  readonly readStates: readonly ReadState[];
  /** Set when role, leader or term changed since the last Ready. */
  readonly softState?: SoftState;
}

// ---------------------------------------------------------------- config

export interface RaftConfig {
  readonly id: NodeId;
  /** Base election timeout; the effective one is uniform in [base, 2·base). */
  readonly electionTimeoutTicks: number;
  readonly heartbeatTicks: number;
  /** Max append messages in flight per follower in replicate state. */
  readonly maxInflightAppends: number;
  /** Max entries / bytes of entry data in one append message. */
  readonly maxEntriesPerAppend: number;
  readonly maxBytesPerAppend: number;
  /** Snapshot chunk size for InstallSnapshot. */
  readonly snapshotChunkBytes: number;
  /** Max proposals waiting in a leader's log beyond commit (back-pressure). */
  readonly maxUncommittedEntries: number;
  readonly preVote: boolean;
  readonly checkQuorum: boolean;
  /** Max ReadIndex requests waiting for confirmation; readIndex() returns false beyond it. */
  readonly maxPendingReads?: number;
  /**
   * Max messages buffered between two ready() calls. Beyond it new messages
   * are dropped (and logged): Raft tolerates message loss, memory does not
   * tolerate a shell that stops calling ready().
   */
  readonly maxPendingMessages?: number;
}

export const DEFAULT_RAFT_CONFIG: Omit<RaftConfig, 'id'> = {
  electionTimeoutTicks: 10,
  heartbeatTicks: 1,
  maxInflightAppends: 64,
  maxEntriesPerAppend: 1024,
  maxBytesPerAppend: 1024 * 1024,
  snapshotChunkBytes: 256 * 1024,
  maxUncommittedEntries: 16384,
  preVote: true,
  checkQuorum: true,
  maxPendingReads: 4096,
  maxPendingMessages: 65536,
};

/** What a node starts from: the durable state the shell loaded from disk. */
export interface RaftInitialState {
  readonly hardState: HardState;
  /** The latest snapshot's metadata, if any (the log starts after it). */
  readonly snapshotMeta?: SnapshotMeta;
  /** Durable log entries after the snapshot, contiguous, in index order. */
  readonly entries: readonly Entry[];
  /** Membership to use when neither snapshot nor log carries one (a fresh cluster). */
  readonly bootstrapMembership: Membership;
  /** Index already applied by the state machine (normally the snapshot index). */
  readonly applied: number;
  /**
   * The latest snapshot's data (matching `snapshotMeta`), so a restarted
   * leader can send it to lagging followers. Optional: the shell may instead
   * call compact() with the loaded snapshot after construction.
   */
  readonly snapshotData?: Uint8Array;
}

// ---------------------------------------------------------------- status

export type ProgressState = 'probe' | 'replicate' | 'snapshot';

/** The leader's view of one follower or observer. */
export interface ProgressStatus {
  readonly match: number;
  readonly next: number;
  readonly state: ProgressState;
  /** Heard from within the current check-quorum window. */
  readonly recentActive: boolean;
}

export interface RaftStatus {
  readonly id: NodeId;
  readonly term: number;
  readonly vote: NodeId;
  readonly role: Role;
  readonly leader: NodeId;
  readonly commit: number;
  readonly applied: number;
  readonly lastIndex: number;
  readonly snapshotIndex: number;
  /** The membership in effect (the latest config entry appended, thesis §4.1). */
  readonly membership: Membership;
  /** Leader only: per peer (voters and observers, not the leader itself). */
  readonly progress?: Map<NodeId, ProgressStatus>;
  /** Leader only: the target of a leadership transfer in progress. */
  readonly transferTarget?: NodeId;
}

export type ProposeResult =
  | { readonly ok: true; readonly index: number; readonly term: number }
  | { readonly ok: false; readonly reason: 'notLeader' | 'transferring' | 'tooManyUncommitted' | 'configChangePending' | 'invalidConfChange'; readonly leader: NodeId };
