// The history a chaos run records and the checker reads (issue 9). Every
// client operation is one entry with its invocation and completion times and
// its outcome: ok (with what the cluster answered), failed (a definite error:
// the operation did not happen), or unknown (a timeout or a lost connection:
// it may or may not have happened). Written as JSON lines, one entry per line.
//
// Values written by the producers are unique strings, so a value names one
// send; `seq` is the producer's send order within its partition.

export type Outcome =
  | { readonly type: 'ok' }
  | { readonly type: 'fail'; readonly error: string }
  | { readonly type: 'unknown'; readonly error: string };

interface Timed {
  /** ms since the run started, on the harness's clock. */
  readonly invokeMs: number;
  readonly completeMs: number;
}

/** One record sent by an idempotent producer (acks=all). */
export interface SendOp extends Timed {
  readonly kind: 'send';
  /** The producer instance (a restarted producer is a new one). */
  readonly producer: string;
  readonly topic: string;
  readonly partition: number;
  /** Send order of this producer within this partition, from 0. */
  readonly seq: number;
  readonly value: string;
  /** The record key: set for sends to a compacted topic, whose check is per key (checker.ts compacted-value). */
  readonly key?: string;
  readonly outcome: Outcome;
  /** With outcome ok: the offset the cluster acknowledged. */
  readonly offset?: number;
  /** With outcome ok: the broker that answered, and the leader epoch the client addressed, when known. */
  readonly broker?: number;
  readonly leaderEpoch?: number;
}

/** Records one consumer session received in one poll, in delivery order. */
export interface ReadOp extends Timed {
  readonly kind: 'read';
  /** A consumer session: one member instance between (re)joins; a rebalance starts a new `generation`. */
  readonly session: string;
  readonly group: string;
  readonly generation: number;
  readonly topic: string;
  readonly partition: number;
  readonly records: ReadonlyArray<{ readonly offset: number; readonly value: string }>;
}

/** An explicit seek by a consumer session: offsets may go backwards after it. */
export interface SeekOp extends Timed {
  readonly kind: 'seek';
  readonly session: string;
  readonly group: string;
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

/** A manual offset commit. */
export interface CommitOp extends Timed {
  readonly kind: 'commit';
  readonly session: string;
  readonly group: string;
  readonly generation: number;
  readonly topic: string;
  readonly partition: number;
  /** The next offset to read, as Kafka commits it. */
  readonly offset: number;
  readonly outcome: Outcome;
}

/**
 * A member's assignment in a group generation, as its join reported it (the
 * checker: one member per partition per generation). `member` is the group
 * member id: a member that rejoins under its id into the same generation
 * keeps the same assignment, so only two different ids conflict.
 */
export interface AssignOp extends Timed {
  readonly kind: 'assign';
  readonly session: string;
  readonly group: string;
  readonly generation: number;
  readonly member: string;
  readonly partitions: ReadonlyArray<{ readonly topic: string; readonly partition: number }>;
}

/** An admin operation (create/delete topic, add partitions, reassignment). */
export interface AdminOp extends Timed {
  readonly kind: 'admin';
  readonly op: string;
  readonly topic: string;
  readonly outcome: Outcome;
}

/** A fault the nemesis injected or healed, for the report (the checker ignores it). */
export interface FaultOp extends Timed {
  readonly kind: 'fault';
  readonly fault: string;
  readonly detail: string;
}

export type HistoryEntry = SendOp | ReadOp | SeekOp | CommitOp | AssignOp | AdminOp | FaultOp;

/** One record as read after the run, from the partition leader, from offset 0 up to the high watermark. */
export interface StoredRecord {
  readonly offset: number;
  readonly value: string;
  /** The record key, when it has one. */
  readonly key?: string;
  /** The partition leader epoch of the batch that holds it. */
  readonly leaderEpoch: number;
}

/** The settled cluster's view of one partition, read after every fault healed. */
export interface FinalPartition {
  readonly topic: string;
  readonly partition: number;
  readonly leader: number;
  readonly isr: readonly number[];
  readonly highWatermark: number;
  readonly logStartOffset: number;
  readonly records: readonly StoredRecord[];
  /**
   * cleanup.policy=compact: superseded values are gone from `records`, and
   * each replica compacts its own log, so the digests are of each replica's
   * last value per key rather than of its bytes.
   */
  readonly compacted?: boolean;
  /** Per replica: a digest of its log's bytes below the high watermark (read from its data dir once stopped). */
  readonly replicaDigests: ReadonlyArray<{ readonly nodeId: number; readonly digest: string }>;
}

/** "Node N became Raft leader (active controller) in term T", from the nodes' logs. */
export interface ControllerTerm {
  readonly nodeId: number;
  readonly term: number;
}

export interface FinalState {
  readonly partitions: readonly FinalPartition[];
  readonly controllerTerms: readonly ControllerTerm[];
}

export interface Anomaly {
  /** lost-write, duplicate, unknown-twice, failed-write-present, reorder, inconsistent-offset, non-monotonic-read, commit-regress, double-assignment, divergence, split-leadership, split-controller, compacted-value. */
  readonly type: string;
  readonly detail: string;
}
