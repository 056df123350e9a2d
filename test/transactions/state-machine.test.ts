// The transaction coordinator's pure decisions: every request in every state
// (a table per request), the epoch rules (fencing, KIP-890 bumps and retries,
// producer id rotation near the epoch limit), timeouts and id expiration —
// then a seeded random walk of producers, zombies and the coordinator that
// checks the state machine's invariants and the record codec after every step.

import { expect } from 'chai';
import {
  completeTransition, decideAddPartitions, decideEnd, decideInit, expireTransition, isIdExpired, isRefusal, verifyPartition,
  PRODUCER_EPOCH_MAX, type Decision, type TxnMetadata, type TxnState,
} from '../../src/transactions/state-machine.js';
import { decodeTxnValue, txnValue } from '../../src/transactions/records.js';
import { Errors, type ErrorInfo } from '../../src/util/errors.js';
import { SeededRng } from '../../src/util/rng.js';

const ID = 'payments';
const NOW = 1_000_000;
const LIMITS = { maxTimeoutMs: 900_000 };
const P0 = { topic: 'orders', partition: 0 };
const P1 = { topic: 'orders', partition: 1 };
const Q0 = { topic: 'audit', partition: 0 };

function meta(state: TxnState, over: Partial<TxnMetadata> = {}): TxnMetadata {
  const open = state === 'Ongoing' || state === 'PrepareCommit' || state === 'PrepareAbort';
  const ended = state !== 'Empty' && state !== 'Ongoing' && state !== 'Dead';
  return {
    transactionalId: ID, producerId: 7, producerEpoch: 3, lastProducer: { producerId: 7, producerEpoch: 2 }, timeoutMs: 60_000, state,
    partitions: open ? [P0, P1] : [], markers: ended ? { producerId: 7, producerEpoch: 3 } : null,
    startTimeMs: open ? NOW - 1_000 : -1, updateTimeMs: NOW - 500, coordinatorAborted: false, ...over,
  };
}

const ALL_STATES: TxnState[] = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead'];

function refusedWith<R>(d: Decision<R>, error: ErrorInfo): void {
  expect(d.kind, JSON.stringify(d)).to.equal('refuse');
  if (d.kind === 'refuse') expect(d.refusal.error.name).to.equal(error.name);
}

function persisted<R>(d: Decision<R>): { next: TxnMetadata; response: unknown } {
  expect(d.kind, JSON.stringify(d)).to.equal('persist');
  if (d.kind !== 'persist') throw new Error('unreachable');
  return d;
}

/** The state machine's invariants (state-machine.ts header), and that the record codec carries the state exactly. */
function checkInvariants(m: TxnMetadata): void {
  const open = m.state === 'Ongoing' || m.state === 'PrepareCommit' || m.state === 'PrepareAbort';
  const ended = m.state === 'PrepareCommit' || m.state === 'PrepareAbort' || m.state === 'CompleteCommit' || m.state === 'CompleteAbort';
  expect(m.producerEpoch).to.be.within(0, PRODUCER_EPOCH_MAX);
  if (!open) expect(m.partitions, m.state).to.deep.equal([]);
  expect(m.markers !== null, `${m.state} markers`).to.equal(ended);
  expect(m.startTimeMs >= 0, `${m.state} start`).to.equal(open);
  const keys = m.partitions.map((p) => `${p.topic}/${String(p.partition).padStart(5, '0')}`);
  expect(keys).to.deep.equal([...new Set(keys)].sort());
  expect(decodeTxnValue(m.transactionalId, txnValue(m))).to.deep.equal(m);
}

describe('transaction state machine', () => {
  describe('InitProducerId', () => {
    const init = { transactionalId: ID, timeoutMs: 60_000, producerId: -1, producerEpoch: -1 };

    it('a new id needs a fresh producer id, then starts Empty at epoch 0', () => {
      expect(decideInit(undefined, init, NOW, LIMITS).kind).to.equal('needProducerId');
      const { next, response } = persisted(decideInit(undefined, init, NOW, LIMITS, 42));
      expect(response).to.deep.equal({ producerId: 42, producerEpoch: 0 });
      expect(next).to.include({ state: 'Empty', producerId: 42, producerEpoch: 0, timeoutMs: 60_000, startTimeMs: -1 });
      checkInvariants(next);
      // A Dead (expired) id starts over the same way.
      expect(decideInit(meta('Dead'), init, NOW, LIMITS).kind).to.equal('needProducerId');
    });

    it('refuses timeouts outside [1, transaction.max.timeout.ms] and a producer id without an epoch', () => {
      for (const timeoutMs of [0, -1, 900_001, 1.5]) refusedWith(decideInit(meta('Empty'), { ...init, timeoutMs }, NOW, LIMITS), Errors.INVALID_TRANSACTION_TIMEOUT);
      expect(decideInit(meta('Empty'), { ...init, timeoutMs: 900_000 }, NOW, LIMITS).kind).to.equal('persist');
      refusedWith(decideInit(meta('Empty'), { ...init, producerId: 7 }, NOW, LIMITS), Errors.INVALID_REQUEST);
    });

    for (const state of ['Empty', 'CompleteCommit', 'CompleteAbort'] as const) {
      it(`from ${state}: bumps the epoch (fencing older instances) and takes the new timeout`, () => {
        const { next, response } = persisted(decideInit(meta(state), { ...init, timeoutMs: 5_000 }, NOW, LIMITS));
        expect(response).to.deep.equal({ producerId: 7, producerEpoch: 4 });
        expect(next).to.include({ state: 'Empty', producerEpoch: 4, timeoutMs: 5_000, updateTimeMs: NOW });
        expect(next.lastProducer).to.deep.equal({ producerId: 7, producerEpoch: 3 });
        checkInvariants(next);
      });
    }

    it('from Ongoing: aborts the open transaction at epoch + 1 and answers CONCURRENT_TRANSACTIONS', () => {
      const { next, response } = persisted(decideInit(meta('Ongoing'), init, NOW, LIMITS));
      expect(isRefusal(response) && response.error.name).to.equal('CONCURRENT_TRANSACTIONS');
      expect(next).to.include({ state: 'PrepareAbort', producerEpoch: 4, coordinatorAborted: true });
      expect(next.partitions).to.deep.equal([P0, P1]);
      expect(next.markers, 'the ABORT markers carry the bumped epoch: they fence the old producer').to.deep.equal({ producerId: 7, producerEpoch: 4 });
      checkInvariants(next);
      // The retry after completion bumps once more: the new instance owns epoch 5.
      const retried = persisted(decideInit(completeTransition(next, NOW + 1), init, NOW + 2, LIMITS));
      expect(retried.response).to.deep.equal({ producerId: 7, producerEpoch: 5 });
    });

    for (const state of ['PrepareCommit', 'PrepareAbort'] as const) {
      it(`from ${state}: CONCURRENT_TRANSACTIONS while the markers are written`, () => {
        refusedWith(decideInit(meta(state), init, NOW, LIMITS), Errors.CONCURRENT_TRANSACTIONS);
      });
    }

    it('KIP-360: a named producer must be the current one or the one before the last bump', () => {
      expect(decideInit(meta('Empty'), { ...init, producerId: 7, producerEpoch: 3 }, NOW, LIMITS).kind).to.equal('persist');
      expect(decideInit(meta('Empty'), { ...init, producerId: 7, producerEpoch: 2 }, NOW, LIMITS).kind).to.equal('persist');
      refusedWith(decideInit(meta('Empty'), { ...init, producerId: 7, producerEpoch: 1 }, NOW, LIMITS), Errors.PRODUCER_FENCED);
      refusedWith(decideInit(meta('Empty'), { ...init, producerId: 8, producerEpoch: 3 }, NOW, LIMITS), Errors.PRODUCER_FENCED);
    });

    it('rotates to a fresh producer id instead of handing out the last epochs', () => {
      const old = meta('CompleteCommit', { producerEpoch: PRODUCER_EPOCH_MAX - 1 });
      expect(decideInit(old, init, NOW, LIMITS).kind).to.equal('needProducerId');
      const { next, response } = persisted(decideInit(old, init, NOW, LIMITS, 99));
      expect(response).to.deep.equal({ producerId: 99, producerEpoch: 0 });
      expect(next.lastProducer).to.deep.equal({ producerId: 7, producerEpoch: PRODUCER_EPOCH_MAX - 1 });
      const below = persisted(decideInit(meta('Empty', { producerEpoch: PRODUCER_EPOCH_MAX - 2 }), init, NOW, LIMITS));
      expect(below.response).to.deep.equal({ producerId: 7, producerEpoch: PRODUCER_EPOCH_MAX - 1 });
    });
  });

  describe('AddPartitionsToTxn', () => {
    const add = { transactionalId: ID, producerId: 7, producerEpoch: 3, partitions: [P1, Q0, P1] };

    it('refuses an unknown id, another producer id and another epoch, in every state', () => {
      refusedWith(decideAddPartitions(undefined, add, NOW), Errors.INVALID_PRODUCER_ID_MAPPING);
      for (const state of ALL_STATES) {
        refusedWith(decideAddPartitions(meta(state), { ...add, producerId: 8 }, NOW), Errors.INVALID_PRODUCER_ID_MAPPING);
        if (state === 'Dead') continue;
        refusedWith(decideAddPartitions(meta(state), { ...add, producerEpoch: 2 }, NOW), Errors.PRODUCER_FENCED);
        refusedWith(decideAddPartitions(meta(state), { ...add, producerEpoch: 4 }, NOW), Errors.PRODUCER_FENCED);
      }
      refusedWith(decideAddPartitions(meta('Dead'), add, NOW), Errors.INVALID_PRODUCER_ID_MAPPING);
    });

    for (const state of ['Empty', 'CompleteCommit', 'CompleteAbort'] as const) {
      it(`from ${state}: opens a transaction with the partitions, sorted and once each`, () => {
        const { next } = persisted(decideAddPartitions(meta(state), add, NOW));
        expect(next).to.include({ state: 'Ongoing', startTimeMs: NOW, producerEpoch: 3, markers: null });
        expect(next.partitions).to.deep.equal([Q0, P1]);
        checkInvariants(next);
      });
    }

    it('in Ongoing: adds new partitions keeping the start time; nothing new is answered without a write', () => {
      const { next } = persisted(decideAddPartitions(meta('Ongoing'), add, NOW));
      expect(next.partitions).to.deep.equal([Q0, P0, P1]);
      expect(next.startTimeMs).to.equal(NOW - 1_000);
      expect(decideAddPartitions(meta('Ongoing'), { ...add, partitions: [P0] }, NOW)).to.deep.equal({ kind: 'answer', response: null });
      expect(decideAddPartitions(meta('Empty'), { ...add, partitions: [] }, NOW)).to.deep.equal({ kind: 'answer', response: null });
    });

    for (const state of ['PrepareCommit', 'PrepareAbort'] as const) {
      it(`in ${state}: CONCURRENT_TRANSACTIONS`, () => refusedWith(decideAddPartitions(meta(state), add, NOW), Errors.CONCURRENT_TRANSACTIONS));
    }
  });

  describe('verifyOnly (KIP-890 part 1)', () => {
    const req = { transactionalId: ID, producerId: 7, producerEpoch: 3 };
    it('says yes only for a partition of the Ongoing transaction at the current epoch', () => {
      expect(verifyPartition(meta('Ongoing'), req, P0)).to.equal(null);
      expect(verifyPartition(meta('Ongoing'), req, Q0)!.error.name).to.equal('INVALID_TXN_STATE');
      for (const state of ALL_STATES.filter((s) => s !== 'Ongoing' && s !== 'Dead')) expect(verifyPartition(meta(state), req, P0)!.error.name, state).to.equal('INVALID_TXN_STATE');
      expect(verifyPartition(meta('Ongoing'), { ...req, producerEpoch: 2 }, P0)!.error.name).to.equal('PRODUCER_FENCED');
      expect(verifyPartition(meta('Ongoing'), { ...req, producerId: 1 }, P0)!.error.name).to.equal('INVALID_PRODUCER_ID_MAPPING');
      expect(verifyPartition(undefined, req, P0)!.error.name).to.equal('INVALID_PRODUCER_ID_MAPPING');
    });
  });

  describe('EndTxn', () => {
    const end = { transactionalId: ID, producerId: 7, producerEpoch: 3, committed: true, bumpEpoch: true };

    for (const committed of [true, false]) {
      const what = committed ? 'commit' : 'abort';
      it(`${what} with bumpEpoch from Ongoing: Prepare* whose markers carry epoch + 1, answered with it`, () => {
        const { next, response } = persisted(decideEnd(meta('Ongoing'), { ...end, committed }, NOW));
        expect(response).to.deep.equal({ producerId: 7, producerEpoch: 4 });
        expect(next).to.include({ state: committed ? 'PrepareCommit' : 'PrepareAbort', producerEpoch: 4, coordinatorAborted: false });
        expect(next.markers).to.deep.equal({ producerId: 7, producerEpoch: 4 });
        expect(next.lastProducer).to.deep.equal({ producerId: 7, producerEpoch: 3 });
        checkInvariants(next);
        const done = completeTransition(next, NOW + 1);
        expect(done).to.include({ state: committed ? 'CompleteCommit' : 'CompleteAbort', startTimeMs: -1 });
        expect(done.partitions).to.deep.equal([]);
        checkInvariants(done);
      });

      it(`${what} without bumpEpoch (transaction version 1): markers at the same epoch`, () => {
        const { next, response } = persisted(decideEnd(meta('Ongoing'), { ...end, committed, bumpEpoch: false }, NOW));
        expect(response).to.deep.equal({ producerId: 7, producerEpoch: 3 });
        expect(next.markers).to.deep.equal({ producerId: 7, producerEpoch: 3 });
        expect(next.producerEpoch).to.equal(3);
        checkInvariants(next);
        // Retried while the markers are written, then after: CONCURRENT_TRANSACTIONS, then the same answer.
        refusedWith(decideEnd(next, { ...end, committed, bumpEpoch: false }, NOW), Errors.CONCURRENT_TRANSACTIONS);
        expect(decideEnd(completeTransition(next, NOW), { ...end, committed, bumpEpoch: false }, NOW)).to.deep.equal({ kind: 'answer', response: { producerId: 7, producerEpoch: 3 } });
        refusedWith(decideEnd(next, { ...end, committed: !committed, bumpEpoch: false }, NOW), Errors.INVALID_TXN_STATE);
        refusedWith(decideEnd(completeTransition(next, NOW), { ...end, committed: !committed, bumpEpoch: false }, NOW), Errors.INVALID_TXN_STATE);
      });
    }

    it('a retry at the old epoch (the answer was lost) gets the same answer, in Prepare* and Complete*', () => {
      const { next } = persisted(decideEnd(meta('Ongoing'), end, NOW));
      expect(decideEnd(next, end, NOW)).to.deep.equal({ kind: 'answer', response: { producerId: 7, producerEpoch: 4 } });
      expect(decideEnd(completeTransition(next, NOW), end, NOW)).to.deep.equal({ kind: 'answer', response: { producerId: 7, producerEpoch: 4 } });
      // The other outcome at the old epoch is not a retry: the producer is fenced.
      refusedWith(decideEnd(completeTransition(next, NOW), { ...end, committed: false }, NOW), Errors.PRODUCER_FENCED);
    });

    it('a transaction the coordinator aborted (timeout) fences its producer: commit and abort at the old epoch both refused', () => {
      const aborted = expireTransition(meta('Ongoing', { startTimeMs: NOW - 60_000 }), NOW)!;
      for (const m of [aborted, completeTransition(aborted, NOW)]) {
        refusedWith(decideEnd(m, end, NOW), Errors.PRODUCER_FENCED);
        refusedWith(decideEnd(m, { ...end, committed: false }, NOW), Errors.PRODUCER_FENCED);
        refusedWith(decideEnd(m, { ...end, bumpEpoch: false }, NOW), Errors.PRODUCER_FENCED);
        refusedWith(decideAddPartitions(m, { transactionalId: ID, producerId: 7, producerEpoch: 3, partitions: [P0] }, NOW), Errors.PRODUCER_FENCED);
      }
    });

    for (const state of ['Empty', 'CompleteCommit', 'CompleteAbort'] as const) {
      it(`from ${state} with bumpEpoch: an empty transaction ends at epoch + 1 with no markers to write`, () => {
        for (const committed of [true, false]) {
          const { next, response } = persisted(decideEnd(meta(state), { ...end, committed }, NOW));
          expect(response).to.deep.equal({ producerId: 7, producerEpoch: 4 });
          expect(next).to.include({ state: committed ? 'CompleteCommit' : 'CompleteAbort', producerEpoch: 4 });
          expect(next.partitions).to.deep.equal([]);
          checkInvariants(next);
        }
      });

      it(`from ${state} without bumpEpoch: INVALID_TXN_STATE unless it retries the completed end`, () => {
        const d = decideEnd(meta(state), { ...end, bumpEpoch: false }, NOW);
        if (state === 'CompleteCommit') expect(d.kind).to.equal('answer');
        else refusedWith(d, Errors.INVALID_TXN_STATE);
      });
    }

    it('refuses an unknown id, another producer, a stale or future epoch; rotates the id at the epoch limit', () => {
      refusedWith(decideEnd(undefined, end, NOW), Errors.INVALID_PRODUCER_ID_MAPPING);
      refusedWith(decideEnd(meta('Dead'), end, NOW), Errors.INVALID_PRODUCER_ID_MAPPING);
      refusedWith(decideEnd(meta('Ongoing'), { ...end, producerId: 8 }, NOW), Errors.INVALID_PRODUCER_ID_MAPPING);
      refusedWith(decideEnd(meta('Ongoing'), { ...end, producerEpoch: 1 }, NOW), Errors.PRODUCER_FENCED);
      refusedWith(decideEnd(meta('Ongoing'), { ...end, producerEpoch: 4 }, NOW), Errors.PRODUCER_FENCED);
      const late = meta('Ongoing', { producerEpoch: PRODUCER_EPOCH_MAX - 1 });
      const req = { ...end, producerEpoch: PRODUCER_EPOCH_MAX - 1 };
      expect(decideEnd(late, req, NOW).kind).to.equal('needProducerId');
      const { next, response } = persisted(decideEnd(late, req, NOW, 99));
      expect(response).to.deep.equal({ producerId: 99, producerEpoch: 0 });
      expect(next.markers, 'the markers close the old id at the last epoch').to.deep.equal({ producerId: 7, producerEpoch: PRODUCER_EPOCH_MAX });
      checkInvariants(next);
      expect(decideEnd(next, req, NOW), 'a retry is still recognised').to.deep.equal({ kind: 'answer', response: { producerId: 99, producerEpoch: 0 } });
    });
  });

  describe('timeouts and expiration', () => {
    it('an Ongoing transaction is aborted with an epoch bump once its timeout has passed, not before', () => {
      const m = meta('Ongoing', { startTimeMs: NOW, timeoutMs: 10_000 });
      expect(expireTransition(m, NOW + 9_999)).to.equal(null);
      const aborted = expireTransition(m, NOW + 10_000)!;
      expect(aborted).to.include({ state: 'PrepareAbort', producerEpoch: 4, coordinatorAborted: true });
      expect(aborted.markers).to.deep.equal({ producerId: 7, producerEpoch: 4 });
      checkInvariants(aborted);
      for (const state of ALL_STATES.filter((s) => s !== 'Ongoing')) expect(expireTransition(meta(state, { startTimeMs: state.startsWith('Prepare') ? 0 : -1 }), NOW * 10), state).to.equal(null);
    });

    it('an id expires only when settled and idle for transactional.id.expiration.ms', () => {
      for (const state of ALL_STATES) {
        const settled = state === 'Empty' || state === 'CompleteCommit' || state === 'CompleteAbort';
        expect(isIdExpired(meta(state), NOW - 500 + 1_000, 1_000), state).to.equal(settled);
        expect(isIdExpired(meta(state), NOW - 500 + 999, 1_000), state).to.equal(false);
      }
    });

    it('only Prepare* completes', () => {
      for (const state of ALL_STATES.filter((s) => !s.startsWith('Prepare'))) expect(() => completeTransition(meta(state), NOW), state).to.throw(/cannot complete/);
    });
  });

  describe('random walk (seeded): producers, zombies, timeouts, completions', () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      it(`seed ${seed}: invariants hold after every step, epochs never go back, a fenced producer never gets a yes`, () => {
        const rng = new SeededRng(seed);
        let m: TxnMetadata | undefined;
        let now = NOW;
        let nextPid = 100;
        // Producers that have been handed (producerId, epoch); the last one is the live instance.
        const handed: Array<{ producerId: number; producerEpoch: number }> = [];
        const trace: string[] = [];
        const apply = <R>(what: string, d: Decision<R>, fresh?: () => Decision<R>): Decision<R> => {
          const decided = d.kind === 'needProducerId' && fresh ? fresh() : d;
          trace.push(`${what} → ${decided.kind}${decided.kind === 'persist' ? ` ${decided.next.state}@${decided.next.producerId}/${decided.next.producerEpoch}` : decided.kind === 'refuse' ? ` ${decided.refusal.error.name}` : ''}`);
          if (decided.kind === 'persist') {
            const before = m;
            m = decided.next;
            checkInvariants(m);
            if (before && before.producerId === m.producerId) expect(m.producerEpoch, trace.join('\n')).to.be.at.least(before.producerEpoch);
          }
          return decided;
        };
        for (let step = 0; step < 400; step++) {
          now += rng.int(5_000);
          const who = handed.length === 0 ? { producerId: -1, producerEpoch: -1 } : handed[rng.int(handed.length)]!;
          const live = handed.length > 0 && who === handed[handed.length - 1];
          const ps = [{ topic: 't', partition: rng.int(3) }];
          switch (rng.int(7)) {
            case 0: {
              const d = apply('init', decideInit(m, { transactionalId: ID, timeoutMs: 20_000, producerId: -1, producerEpoch: -1 }, now, LIMITS),
                () => decideInit(m, { transactionalId: ID, timeoutMs: 20_000, producerId: -1, producerEpoch: -1 }, now, LIMITS, nextPid++));
              if (d.kind === 'persist' && !isRefusal(d.response)) handed.push(d.response as { producerId: number; producerEpoch: number });
              break;
            }
            case 1:
            case 2: {
              const d = apply(`add ${JSON.stringify(who)}${live ? '' : ' (zombie)'}`, decideAddPartitions(m, { transactionalId: ID, ...who, partitions: ps }, now));
              if (!live && d.kind !== 'refuse') expect(m!.producerEpoch, `a zombie added partitions\n${trace.join('\n')}`).to.equal(who.producerEpoch);
              break;
            }
            case 3: {
              const req = { transactionalId: ID, ...who, committed: rng.int(2) === 0, bumpEpoch: true };
              const d = apply(`end ${JSON.stringify(req)}`, decideEnd(m, req, now), () => decideEnd(m, req, now, nextPid++));
              if (d.kind === 'persist' && !isRefusal(d.response)) handed.push(d.response as { producerId: number; producerEpoch: number });
              if (d.kind !== 'refuse' && req.committed) expect(m!.coordinatorAborted, 'a commit succeeded on an aborted transaction').to.equal(false);
              break;
            }
            case 4: {
              const aborted = m ? expireTransition(m, now) : null;
              if (aborted) apply('expire', { kind: 'persist', next: aborted, response: null });
              break;
            }
            default:
              if (m && (m.state === 'PrepareCommit' || m.state === 'PrepareAbort')) apply('complete', { kind: 'persist', next: completeTransition(m, now), response: null });
          }
          if (m) expect(verifyPartition(m, { transactionalId: ID, ...who }, ps[0]!) === null, 'verify says yes only at the current epoch').to.equal(
            m.state === 'Ongoing' && m.producerId === who.producerId && m.producerEpoch === who.producerEpoch && m.partitions.some((p) => p.partition === ps[0]!.partition));
        }
        expect(trace.filter((t) => t.includes('persist')).length, 'the walk made progress').to.be.above(50);
      });
    }
  });
});
