// The transactional producer's pure rules (txn-rules.ts): every state's
// allowed and refused transitions, the error sticking to abortable/fatal
// states, and each API's error classes as Kafka's Java client has them.
import { expect } from 'chai';
import { AssertionError } from '../../src/util/assert.js';
import { Errors, SluiceError, type ErrorInfo } from '../../src/util/errors.js';
import { ADD_PARTITIONS_CONCURRENT_BACKOFF_MS, classifyTxnError, OPERATION_NOT_ATTEMPTED_CODE, retryInitialBackoffMs, TxnStateMachine, type TxnApi } from '../../src/client/txn-rules.js';
import type { TransactionState } from '../../src/client/transaction.js';

const err = (info: ErrorInfo) => new SluiceError(info);

/** A state machine driven into `state` through legal steps only. */
function at(state: TransactionState): TxnStateMachine {
  const sm = new TxnStateMachine();
  const path: Record<TransactionState, Array<TransactionState | 'abortable' | 'fatal'>> = {
    'uninitialized': [],
    'initializing': ['initializing'],
    'ready': ['initializing', 'ready'],
    'in-transaction': ['initializing', 'ready', 'in-transaction'],
    'committing': ['initializing', 'ready', 'in-transaction', 'committing'],
    'aborting': ['initializing', 'ready', 'in-transaction', 'aborting'],
    'abortable-error': ['initializing', 'ready', 'in-transaction', 'abortable'],
    'fatal-error': ['fatal'],
  };
  for (const step of path[state]) {
    if (step === 'abortable') sm.fail('abortable', err(Errors.TOPIC_AUTHORIZATION_FAILED));
    else if (step === 'fatal') sm.fail('fatal', err(Errors.PRODUCER_FENCED));
    else sm.to(step);
  }
  expect(sm.state).to.equal(state);
  return sm;
}

const ALL: TransactionState[] = ['uninitialized', 'initializing', 'ready', 'in-transaction', 'committing', 'aborting', 'abortable-error', 'fatal-error'];
const ALLOWED: Record<TransactionState, TransactionState[]> = {
  'uninitialized': ['initializing'],
  'initializing': ['ready'],
  'ready': ['in-transaction'],
  'in-transaction': ['committing', 'aborting'],
  'committing': ['ready'],
  'abortable-error': ['aborting'],
  'aborting': ['ready'],
  'fatal-error': [],
};

describe('client: transaction rules', () => {
  describe('state machine', () => {
    for (const from of ALL) {
      for (const to of ALL.filter((s) => s !== 'abortable-error' && s !== 'fatal-error')) {
        const ok = ALLOWED[from].includes(to);
        it(`${from} → ${to}: ${ok ? 'allowed' : 'refused'}`, () => {
          const sm = at(from);
          if (ok) {
            sm.to(to);
            expect(sm.state).to.equal(to);
          } else {
            expect(() => sm.to(to)).to.throw(AssertionError);
            expect(sm.state).to.equal(from);
          }
        });
      }
    }

    it('counts transactions and clears the error when a new one begins', () => {
      const sm = at('in-transaction');
      expect(sm.transactionNumber).to.equal(1);
      sm.fail('abortable', err(Errors.TRANSACTION_ABORTABLE));
      expect(sm.state).to.equal('abortable-error');
      expect(sm.error?.errorName).to.equal('TRANSACTION_ABORTABLE');
      expect(sm.acceptsSends).to.equal(false);
      sm.to('aborting');
      expect(sm.error?.errorName).to.equal('TRANSACTION_ABORTABLE');
      sm.to('ready');
      expect(sm.error).to.equal(null);
      sm.to('in-transaction');
      expect(sm.transactionNumber).to.equal(2);
      expect(sm.acceptsSends).to.equal(true);
    });

    it('an abortable error moves only an open or committing transaction', () => {
      for (const s of ALL) {
        const sm = at(s);
        const moved = sm.fail('abortable', err(Errors.TOPIC_AUTHORIZATION_FAILED));
        const expected = s === 'in-transaction' || s === 'committing';
        expect(moved, s).to.equal(expected);
        expect(sm.state).to.equal(expected ? 'abortable-error' : s);
      }
    });

    it('a fatal error wins from every state and is terminal', () => {
      for (const s of ALL) {
        const sm = at(s);
        sm.fail('fatal', err(Errors.PRODUCER_FENCED));
        expect(sm.state).to.equal('fatal-error');
        expect(sm.error?.errorName).to.equal('PRODUCER_FENCED');
        expect(sm.fail('abortable', err(Errors.TOPIC_AUTHORIZATION_FAILED))).to.equal(false);
        expect(sm.error?.errorName).to.equal('PRODUCER_FENCED');
        for (const to of ALL.filter((x) => x !== 'abortable-error' && x !== 'fatal-error')) expect(() => sm.to(to)).to.throw(AssertionError);
      }
    });

    it('a failed initialization can be tried again', () => {
      const sm = at('initializing');
      sm.initFailed();
      expect(sm.state).to.equal('uninitialized');
      sm.to('initializing');
      expect(() => at('ready').initFailed()).to.throw(AssertionError);
    });

    it('sending covers the open and the committing transaction only', () => {
      expect(ALL.filter((s) => at(s).sending)).to.deep.equal(['in-transaction', 'committing']);
      expect(ALL.filter((s) => at(s).acceptsSends)).to.deep.equal(['in-transaction']);
    });
  });

  describe('error classes', () => {
    const apis: TxnApi[] = ['FindCoordinator', 'InitProducerId', 'AddPartitionsToTxn', 'AddOffsetsToTxn', 'TxnOffsetCommit', 'EndTxn', 'Produce'];

    it('fencing and authorization of the transactional id are fatal everywhere', () => {
      for (const info of [Errors.PRODUCER_FENCED, Errors.INVALID_PRODUCER_EPOCH, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, Errors.TRANSACTION_COORDINATOR_FENCED]) {
        for (const api of apis) expect(classifyTxnError(api, err(info)), `${api} ${info.name}`).to.equal('fatal');
      }
    });

    it('a coordinator that moved or cannot be reached is looked up again', () => {
      for (const info of [Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE, Errors.NETWORK_EXCEPTION, Errors.REQUEST_TIMED_OUT]) {
        for (const api of apis.filter((a) => a !== 'Produce')) expect(classifyTxnError(api, err(info)), `${api} ${info.name}`).to.equal('refind');
      }
    });

    it('loading and a previous transaction still ending are retried', () => {
      for (const api of apis.filter((a) => a !== 'Produce')) {
        expect(classifyTxnError(api, err(Errors.COORDINATOR_LOAD_IN_PROGRESS))).to.equal('retry');
        expect(classifyTxnError(api, err(Errors.CONCURRENT_TRANSACTIONS))).to.equal('retry');
      }
    });

    it('AddPartitionsToTxn: unknown partitions retried, topic authorization abortable, invalid state fatal', () => {
      expect(classifyTxnError('AddPartitionsToTxn', err(Errors.UNKNOWN_TOPIC_OR_PARTITION))).to.equal('retry');
      const notAttempted = { code: OPERATION_NOT_ATTEMPTED_CODE, name: 'OPERATION_NOT_ATTEMPTED', retriable: false, message: '' };
      expect(classifyTxnError('AddPartitionsToTxn', err(notAttempted))).to.equal('retry');
      expect(classifyTxnError('AddPartitionsToTxn', err(Errors.TOPIC_AUTHORIZATION_FAILED))).to.equal('abortable');
      expect(classifyTxnError('AddPartitionsToTxn', err(Errors.TRANSACTION_ABORTABLE))).to.equal('abortable');
      expect(classifyTxnError('AddPartitionsToTxn', err(Errors.INVALID_TXN_STATE))).to.equal('fatal');
    });

    it('TxnOffsetCommit: a stale generation or member is abortable (the consumer was fenced), not fatal', () => {
      for (const info of [Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID, Errors.REBALANCE_IN_PROGRESS, Errors.GROUP_AUTHORIZATION_FAILED]) {
        expect(classifyTxnError('TxnOffsetCommit', err(info)), info.name).to.equal('abortable');
      }
      expect(classifyTxnError('TxnOffsetCommit', err(Errors.UNKNOWN_TOPIC_OR_PARTITION))).to.equal('retry');
    });

    it('AddOffsetsToTxn: group authorization abortable; EndTxn: TRANSACTION_ABORTABLE abortable, INVALID_TXN_STATE fatal', () => {
      expect(classifyTxnError('AddOffsetsToTxn', err(Errors.GROUP_AUTHORIZATION_FAILED))).to.equal('abortable');
      expect(classifyTxnError('EndTxn', err(Errors.TRANSACTION_ABORTABLE))).to.equal('abortable');
      expect(classifyTxnError('EndTxn', err(Errors.INVALID_TXN_STATE))).to.equal('fatal');
      expect(classifyTxnError('InitProducerId', err(Errors.INVALID_TRANSACTION_TIMEOUT))).to.equal('fatal');
    });

    it('a produce failure (after the Sender\'s own retries) is abortable unless it is fencing', () => {
      for (const info of [Errors.REQUEST_TIMED_OUT, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, Errors.INVALID_TXN_STATE, Errors.TOPIC_AUTHORIZATION_FAILED, Errors.MESSAGE_TOO_LARGE]) {
        expect(classifyTxnError('Produce', err(info)), info.name).to.equal('abortable');
      }
    });
  });
  describe('retry backoff', () => {
    it('the first AddPartitionsToTxn meeting the last transaction\'s markers (CONCURRENT_TRANSACTIONS) retries after 20 ms, not retryBackoffMs', () => {
      const concurrent = err(Errors.CONCURRENT_TRANSACTIONS);
      expect(retryInitialBackoffMs('AddPartitionsToTxn', concurrent, true, 100)).to.equal(ADD_PARTITIONS_CONCURRENT_BACKOFF_MS);
      expect(retryInitialBackoffMs('AddPartitionsToTxn', concurrent, true, 5)).to.equal(5); // never longer than asked for
    });

    it('every other retry starts from retryBackoffMs: a later add, another error, another API', () => {
      expect(retryInitialBackoffMs('AddPartitionsToTxn', err(Errors.CONCURRENT_TRANSACTIONS), false, 100)).to.equal(100);
      expect(retryInitialBackoffMs('AddPartitionsToTxn', err(Errors.COORDINATOR_LOAD_IN_PROGRESS), true, 100)).to.equal(100);
      expect(retryInitialBackoffMs('EndTxn', err(Errors.CONCURRENT_TRANSACTIONS), true, 100)).to.equal(100);
      expect(retryInitialBackoffMs('InitProducerId', err(Errors.CONCURRENT_TRANSACTIONS), true, 0)).to.equal(1);
    });
  });
});
