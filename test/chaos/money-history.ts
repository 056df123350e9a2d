// The history of a tx_money run (issue 18), after Redpanda's tx_money
// workload: N accounts, each with an initial balance that is never written
// (the checker knows it from the setup entry), spread over the partitions of
// one topic (account a lives in partition a % P). A transfer is ONE
// transaction that writes a debit record to the source account's partition
// and a credit record to the destination's, then commits — or, on purpose,
// aborts. A read-process-write stage consumes the money topic read_committed
// in a consumer group and copies every record into an audit topic, one
// transaction per batch with the consumed offsets sent into the transaction
// (sendOffsets): exactly once, every committed input appears once in the
// output.
//
// Record values are JSON (encodeLeg / decodeLeg): a leg names its
// transaction, its account, its signed amount, and its index among the
// transaction's legs, so a reader can tell a whole transaction from a torn
// one without the history. An audit record names the input it copies
// (topic, partition, offset) and carries the input's value.

/** Where a transaction's record went and what it said. */
export interface SentRecord {
  readonly topic: string;
  readonly partition: number;
  readonly value: string;
}

/** The run's shape: what every balance starts at. */
export interface MoneySetupOp {
  readonly kind: 'money-setup';
  readonly invokeMs: number;
  readonly completeMs: number;
  readonly topic: string;
  readonly partitions: number;
  readonly accounts: number;
  readonly initialBalance: number;
  /** The read-process-write stage's output topic and consumer group. */
  readonly auditTopic: string;
  readonly auditGroup: string;
}

/**
 * A producer instance initialised its transactional id (InitProducerId):
 * from `completeMs` on, every older instance of the same id is a zombie
 * whose commits the coordinator must refuse.
 */
export interface TxnInitOp {
  readonly kind: 'txn-init';
  readonly invokeMs: number;
  readonly completeMs: number;
  readonly transactionalId: string;
  /** Instance number of the id: a later instance has a larger one. */
  readonly instance: number;
  readonly producer: string;
  readonly outcome: 'ok' | 'fail';
  readonly error?: string;
}

/**
 * How a transaction ended, as its producer saw it:
 *   committed  commit() resolved: every record must be visible, once;
 *   aborted    abort() resolved (on purpose, or after an error): no record may be visible;
 *   unknown    commit() threw, or abort() did not resolve: all or nothing, never torn.
 * A transaction with intent 'abort' may never be visible, whatever its outcome.
 */
export type TxnOutcome = 'committed' | 'aborted' | 'unknown';

/** One transfer transaction (or one read-process-write transaction, `stage` 'process'). */
export interface TxnOp {
  readonly kind: 'txn';
  /** When the transaction began (its first send). */
  readonly invokeMs: number;
  readonly completeMs: number;
  readonly stage: 'transfer' | 'process';
  readonly transactionalId: string;
  readonly instance: number;
  readonly producer: string;
  /** Unique over the run. */
  readonly txn: string;
  readonly intent: 'commit' | 'abort';
  /** When commit() (or abort()) was called; absent when the transaction ended before it (a send failed). */
  readonly endInvokeMs?: number;
  readonly records: readonly SentRecord[];
  readonly outcome: TxnOutcome;
  readonly error?: string;
  /** Set on a transaction run by an instance after its successor's init, on purpose (the zombie check). */
  readonly zombie?: boolean;
  /** stage 'process': the input offsets sent into the transaction (next offset to read, per input partition). */
  readonly offsets?: ReadonlyArray<{ readonly topic: string; readonly partition: number; readonly offset: number }>;
}

/** Records one read_committed reader session received in one poll, in delivery order. */
export interface MoneyReadOp {
  readonly kind: 'money-read';
  readonly invokeMs: number;
  readonly completeMs: number;
  readonly session: string;
  readonly topic: string;
  readonly partition: number;
  readonly records: ReadonlyArray<{ readonly offset: number; readonly value: string }>;
}

/** A fault injected or healed (for the report; the checker ignores it). */
export interface MoneyFaultOp {
  readonly kind: 'fault';
  readonly invokeMs: number;
  readonly completeMs: number;
  readonly fault: string;
  readonly detail: string;
}

export type MoneyEntry = MoneySetupOp | TxnInitOp | TxnOp | MoneyReadOp | MoneyFaultOp;

/** One data record of a partition's raw log (read_uncommitted), with its batch's producer. */
export interface RawRecord {
  readonly offset: number;
  readonly value: string;
  /** As a decimal string: producer ids are int64. */
  readonly producerId: string;
  readonly producerEpoch: number;
  readonly transactional: boolean;
}

/** A control batch's marker. */
export interface RawMarker {
  readonly offset: number;
  readonly producerId: string;
  readonly producerEpoch: number;
  readonly type: 'commit' | 'abort';
}

/** The settled cluster's view of one money or audit partition. */
export interface MoneyFinalPartition {
  readonly topic: string;
  readonly partition: number;
  readonly highWatermark: number;
  readonly logStartOffset: number;
  /** The leader's last stable offset when read (equal to the HW once no transaction is open). */
  readonly lastStableOffset: number;
  /** Every data record from the log start to the HW, as stored. */
  readonly raw: readonly RawRecord[];
  /** Every control marker below the HW. */
  readonly markers: readonly RawMarker[];
  /** What a real read_committed Consumer delivered reading the partition from the beginning to the LSO. */
  readonly committedRead: ReadonlyArray<{ readonly offset: number; readonly value: string }>;
  /** Per replica, a digest of its records below the HW (equal digests: identical logs). */
  readonly replicaDigests: ReadonlyArray<{ readonly nodeId: number; readonly digest: string }>;
}

export interface MoneyFinalState {
  readonly partitions: readonly MoneyFinalPartition[];
  /** The audit group's committed offsets on the money topic (OffsetFetch, stable). */
  readonly auditOffsets: ReadonlyArray<{ readonly topic: string; readonly partition: number; readonly offset: number }>;
}

/** One leg of a transfer: `amount` is signed (debit < 0 < credit). */
export interface Leg {
  readonly txn: string;
  readonly account: number;
  readonly amount: number;
  /** Index among the transaction's `legs` records. */
  readonly index: number;
  readonly legs: number;
}

export function encodeLeg(l: Leg): string {
  return JSON.stringify({ t: l.txn, a: l.account, d: l.amount, i: l.index, n: l.legs });
}

/** The leg a value encodes, or null when it is not one. */
export function decodeLeg(value: string): Leg | null {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return null;
  }
  const o = v as { t?: unknown; a?: unknown; d?: unknown; i?: unknown; n?: unknown };
  if (typeof o !== 'object' || o === null || typeof o.t !== 'string' || typeof o.a !== 'number' || typeof o.d !== 'number'
    || typeof o.i !== 'number' || typeof o.n !== 'number') return null;
  return { txn: o.t, account: o.a, amount: o.d, index: o.i, legs: o.n };
}

/** An audit record: the input it copies and that input's value. */
export interface AuditCopy {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly value: string;
  /** The read-process-write transaction that wrote it. */
  readonly txn: string;
}

export function encodeAudit(a: AuditCopy): string {
  return JSON.stringify({ st: a.topic, sp: a.partition, so: a.offset, v: a.value, t: a.txn });
}

export function decodeAudit(value: string): AuditCopy | null {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return null;
  }
  const o = v as { st?: unknown; sp?: unknown; so?: unknown; v?: unknown; t?: unknown };
  if (typeof o !== 'object' || o === null || typeof o.st !== 'string' || typeof o.sp !== 'number' || typeof o.so !== 'number'
    || typeof o.v !== 'string' || typeof o.t !== 'string') return null;
  return { topic: o.st, partition: o.sp, offset: o.so, value: o.v, txn: o.t };
}
