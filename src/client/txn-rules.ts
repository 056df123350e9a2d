// The transactional producer's rules, pure (no I/O, no time): its states and
// their transitions, and how each error of each API is handled — Kafka's
// Java client's TransactionManager, which Kafka's own clients and tools
// expect a producer to follow.
//
// States and transitions (one owner: TxnStateMachine.to(); the trigger):
//   uninitialized  → initializing       initTransactions()
//   initializing   → ready              InitProducerId answered
//   ready          → in-transaction     transaction()
//   in-transaction → committing         commit()
//   in-transaction → aborting           abort()
//   in-transaction → abortable-error    a batch, AddPartitionsToTxn or sendOffsets failed (abortable)
//   committing     → ready              EndTxn(commit) answered (or nothing to commit)
//   committing     → abortable-error    a batch failed while flushing, EndTxn said TRANSACTION_ABORTABLE
//   abortable-error→ aborting           abort()
//   aborting       → ready              EndTxn(abort) answered (or nothing to abort)
//   any            → fatal-error        a fatal error (terminal: the producer must be closed)
// committing and aborting stay put when their EndTxn times out: calling
// commit() (abort()) again resumes it, as the Java client allows.
//
// Error classes:
// - 'fatal': the producer cannot go on (fenced by a newer instance, not
//   authorized for its transactional id, a coordinator state it cannot have).
// - 'abortable': this transaction cannot commit; abort() and start another.
// - 'retry': the same request again after a backoff (the coordinator is
//   loading, busy finishing the previous transaction, or the partition is
//   not known yet).
// - 'refind': the coordinator moved or is unreachable: look it up again, retry.

import { assert } from '../util/assert.js';
import { Errors, type SluiceError } from '../util/errors.js';
import type { TransactionState } from './transaction.js';

export type TxnApi = 'FindCoordinator' | 'InitProducerId' | 'AddPartitionsToTxn' | 'AddOffsetsToTxn' | 'TxnOffsetCommit' | 'EndTxn' | 'Produce';
export type TxnErrorClass = 'fatal' | 'abortable' | 'retry' | 'refind';

/** Kafka's OPERATION_NOT_ATTEMPTED (55): AddPartitionsToTxn did not try this partition because another one failed. */
export const OPERATION_NOT_ATTEMPTED_CODE = Errors.OPERATION_NOT_ATTEMPTED.code;

const E = Errors;
const codes = (...xs: Array<{ code: number }>): ReadonlySet<number> => new Set(xs.map((x) => x.code));

/** The coordinator is elsewhere, or the way to it is broken. */
const REFIND = codes(E.NOT_COORDINATOR, E.COORDINATOR_NOT_AVAILABLE, E.NETWORK_EXCEPTION, E.REQUEST_TIMED_OUT);
/** Wait and ask the same coordinator again. */
const RETRY = codes(E.COORDINATOR_LOAD_IN_PROGRESS, E.CONCURRENT_TRANSACTIONS);
/** This producer is done, whatever it was doing. */
const ALWAYS_FATAL = codes(
  E.PRODUCER_FENCED, E.INVALID_PRODUCER_EPOCH, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, E.TRANSACTION_COORDINATOR_FENCED,
  E.CLUSTER_AUTHORIZATION_FAILED, E.UNSUPPORTED_VERSION,
);

/** How a transaction API's error is handled. */
export function classifyTxnError(api: TxnApi, err: SluiceError): TxnErrorClass {
  const c = err.code;
  if (ALWAYS_FATAL.has(c)) return 'fatal';
  if (api === 'Produce') return 'abortable'; // the Sender retried what was retriable: the record is not in the transaction
  if (REFIND.has(c)) return 'refind';
  if (RETRY.has(c)) return 'retry';
  switch (api) {
    case 'FindCoordinator':
      return c === E.GROUP_AUTHORIZATION_FAILED.code ? 'abortable' : err.retriable ? 'retry' : 'fatal';
    case 'InitProducerId':
      return err.retriable ? 'retry' : 'fatal';
    case 'AddPartitionsToTxn':
      if (c === E.UNKNOWN_TOPIC_OR_PARTITION.code || c === OPERATION_NOT_ATTEMPTED_CODE) return 'retry';
      if (c === E.TOPIC_AUTHORIZATION_FAILED.code || c === E.TRANSACTION_ABORTABLE.code || c === E.INVALID_PRODUCER_ID_MAPPING.code) return 'abortable';
      return err.retriable ? 'retry' : 'fatal';
    case 'AddOffsetsToTxn':
      if (c === E.GROUP_AUTHORIZATION_FAILED.code || c === E.TRANSACTION_ABORTABLE.code || c === E.INVALID_PRODUCER_ID_MAPPING.code) return 'abortable';
      return err.retriable ? 'retry' : 'fatal';
    case 'TxnOffsetCommit':
      if (c === E.UNKNOWN_TOPIC_OR_PARTITION.code || c === E.UNSTABLE_OFFSET_COMMIT.code) return 'retry';
      if (c === E.UNKNOWN_MEMBER_ID.code || c === E.ILLEGAL_GENERATION.code || c === E.FENCED_INSTANCE_ID.code
        || c === E.REBALANCE_IN_PROGRESS.code || c === E.GROUP_AUTHORIZATION_FAILED.code || c === E.TRANSACTION_ABORTABLE.code) return 'abortable';
      return err.retriable ? 'retry' : 'fatal';
    case 'EndTxn':
      if (c === E.TRANSACTION_ABORTABLE.code) return 'abortable';
      return err.retriable ? 'retry' : 'fatal';
  }
}

/**
 * First backoff of a retry of the first AddPartitionsToTxn of a transaction
 * refused CONCURRENT_TRANSACTIONS (Kafka's ADD_PARTITIONS_RETRY_BACKOFF_MS,
 * KAFKA-5477). EndTxn answers before the previous transaction's markers are
 * written, so a producer that begins the next transaction at once (a full
 * batch goes out immediately) nearly always meets this; the markers take a
 * few milliseconds, and retryBackoffMs (100 ms, full jitter: 50 ms on
 * average) made that a tenfold slowdown per transaction (bench/txn).
 */
export const ADD_PARTITIONS_CONCURRENT_BACKOFF_MS = 20;

/** The backoff a retried coordinator request starts from (it then doubles, with jitter). */
export function retryInitialBackoffMs(api: TxnApi, err: SluiceError, firstAddOfTransaction: boolean, retryBackoffMs: number): number {
  const base = Math.max(1, retryBackoffMs);
  if (api === 'AddPartitionsToTxn' && firstAddOfTransaction && err.code === E.CONCURRENT_TRANSACTIONS.code) {
    return Math.min(base, ADD_PARTITIONS_CONCURRENT_BACKOFF_MS);
  }
  return base;
}

const TRANSITIONS: Readonly<Record<TransactionState, readonly TransactionState[]>> = {
  'uninitialized': ['initializing'],
  'initializing': ['ready'],
  'ready': ['in-transaction'],
  'in-transaction': ['committing', 'aborting', 'abortable-error'],
  'committing': ['ready', 'abortable-error'],
  'abortable-error': ['aborting'],
  'aborting': ['ready'],
  'fatal-error': [],
};

/** The state and the error behind it; every change goes through to() or fail(). */
export class TxnStateMachine {
  private current: TransactionState = 'uninitialized';
  private err: SluiceError | null = null;
  /** Counts transactions begun: a Transaction handle is current while its number is. */
  private txnNumber = 0;

  get state(): TransactionState {
    return this.current;
  }

  get error(): SluiceError | null {
    return this.err;
  }

  get transactionNumber(): number {
    return this.txnNumber;
  }

  /** initializing → uninitialized when InitProducerId failed for a reason that is not fatal (the caller may try again). */
  initFailed(): void {
    assert(this.current === 'initializing', `initFailed in ${this.current}`);
    this.current = 'uninitialized';
  }

  to(next: TransactionState): void {
    assert(next !== 'fatal-error' && next !== 'abortable-error', 'errors go through fail()');
    assert(TRANSITIONS[this.current].includes(next), `transaction state ${this.current} cannot go to ${next}`);
    if (next === 'in-transaction') this.txnNumber++;
    if (next === 'ready' || next === 'in-transaction') this.err = null;
    this.current = next;
  }

  /**
   * Records an error: fatal always wins; an abortable one moves an open or
   * committing transaction to abortable-error (an aborting one ignores it: it
   * is being aborted anyway). Returns whether the state changed.
   */
  fail(kind: 'fatal' | 'abortable', error: SluiceError): boolean {
    if (this.current === 'fatal-error') return false;
    if (kind === 'fatal') {
      this.current = 'fatal-error';
      this.err = error;
      return true;
    }
    if (this.current !== 'in-transaction' && this.current !== 'committing') return false;
    this.current = 'abortable-error';
    this.err = error;
    return true;
  }

  /** Whether records may be appended now (to the open transaction). */
  get acceptsSends(): boolean {
    return this.current === 'in-transaction';
  }

  /** Whether batches of the transaction may still be sent (partitions added) now. */
  get sending(): boolean {
    return this.current === 'in-transaction' || this.current === 'committing';
  }
}
