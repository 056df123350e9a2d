// The producer's pure per-partition rules (producer-batch.ts): sequence
// numbering, what may be sent when, where retries go back, how each answer is
// read — and a seeded model check that drives PartitionQueue against the
// brokers' own producer-state rules through reordered, dropped and refused
// answers, asserting every record lands exactly once and in order.
import { expect } from 'chai';
import {
  IDEMPOTENT_IN_FLIGHT_MAX, NO_SEQUENCE, PartitionQueue, SEQUENCE_MAX, incrementSequence, outcomeOf,
  type Outcome, type ProducerBatch, type ProducerIdentity,
} from '../../src/client/producer-batch.js';
import { ProducerStateTable } from '../../src/replication/rules/producer-state.js';
import { decodeRecordBatch } from '../../src/record/record-batch.js';
import { Errors, SluiceError, type ErrorInfo } from '../../src/util/errors.js';
import { SeededRng } from '../../src/util/rng.js';

const ID: ProducerIdentity = { producerId: 7n, producerEpoch: 0 };
const ready = { ready: true, renewing: false };

function batchOf(q: PartitionQueue, records: number): ProducerBatch {
  const b = q.newBatch(-1, 0, 1_000_000);
  for (let i = 0; i < records; i++) {
    b.body.append(null, Buffer.from(`r${i}`), undefined, 0);
    b.records.push({ resolve: () => undefined, reject: () => undefined });
    b.reservedBytes += 10;
  }
  b.sealed = true;
  return b;
}

const err = (info: ErrorInfo) => new SluiceError(info);
const ctx = (over: Partial<{ idempotent: boolean; earlierUnresolved: boolean; expired: boolean }> = {}) => ({ idempotent: true, earlierUnresolved: false, expired: false, ...over });

describe('client: producer batch rules', () => {
  it('wraps sequences at 2^31 - 1 to 0', () => {
    expect(incrementSequence(0, 5)).to.equal(5);
    expect(incrementSequence(SEQUENCE_MAX, 1)).to.equal(0);
    expect(incrementSequence(SEQUENCE_MAX - 2, 5)).to.equal(2);
  });

  it('gives each new batch the next sequence when first sent, advancing by its record count', () => {
    const q = new PartitionQueue('t', 0, true);
    const sizes = [3, 1, 4];
    const batches = sizes.map((n) => batchOf(q, n));
    for (const b of batches) {
      expect(b.baseSequence).to.equal(NO_SEQUENCE);
      expect(q.sendable(0, ready)).to.equal(b);
      q.markSent(b, ID);
    }
    expect(batches.map((b) => b.baseSequence)).to.deep.equal([0, 3, 4]);
    expect(q.nextSequence).to.equal(8);
    expect(batches.every((b) => b.identity === ID)).to.equal(true);
    expect(batches.map((b) => b.sentBehind)).to.deep.equal([false, true, true]);
  });

  it('wraps a partition sequence near int32 max', () => {
    const q = new PartitionQueue('t', 0, true);
    q.nextSequence = SEQUENCE_MAX - 1;
    const a = batchOf(q, 3);
    q.markSent(a, ID);
    expect(a.baseSequence).to.equal(SEQUENCE_MAX - 1);
    expect(q.nextSequence).to.equal(1);
  });

  it('sends nothing before an identity, and no new batch while the identity is renewed', () => {
    const q = new PartitionQueue('t', 0, true);
    batchOf(q, 1);
    expect(q.sendable(0, { ready: false, renewing: false })).to.equal(null);
    expect(q.sendable(0, { ready: true, renewing: true })).to.equal(null);
    expect(q.sendable(0, ready)).to.not.equal(null);
  });

  it(`keeps at most ${IDEMPOTENT_IN_FLIGHT_MAX} batches of a partition in flight`, () => {
    const q = new PartitionQueue('t', 0, true);
    for (let i = 0; i < 8; i++) batchOf(q, 1);
    let sent = 0;
    for (let b = q.sendable(0, ready); b; b = q.sendable(0, ready)) {
      q.markSent(b, ID);
      sent++;
    }
    expect(sent).to.equal(IDEMPOTENT_IN_FLIGHT_MAX);
    const without = new PartitionQueue('t', 1, false);
    for (let i = 0; i < 8; i++) batchOf(without, 1);
    for (let b = without.sendable(0, ready); b; b = without.sendable(0, ready)) without.markSent(b, null);
    expect(without.inFlight.length, 'without idempotence the connection limit applies, not this one').to.equal(8);
  });

  it('does not send an open batch before its linger, or a retry before its backoff', () => {
    const q = new PartitionQueue('t', 0, true);
    const open = q.newBatch(-1, 10, 1000);
    expect(q.sendable(9, ready), 'open, linger to come').to.equal(null);
    expect(q.sendable(10, ready), 'open, linger passed: ready').to.equal(open);
    expect(q.openBatch(), 'a ready batch still takes appends until it is sent').to.equal(open);
    open.sealed = true;
    open.retryAtMs = 50;
    expect(q.sendable(49, ready)).to.equal(null);
    expect(q.sendable(50, ready)).to.equal(open);
  });

  it('puts a retried batch back in its place, and resends it only when nothing of the partition is in flight', () => {
    const q = new PartitionQueue('t', 0, true);
    const [a, b, c] = [batchOf(q, 1), batchOf(q, 1), batchOf(q, 1)];
    q.markSent(a, ID);
    q.markSent(b, ID);
    const d = batchOf(q, 1); // new, not yet sent
    q.settle(a);
    q.requeue(a);
    expect(q.queue.map((x) => x.ordinal)).to.deep.equal([a, c, d].map((x) => x.ordinal));
    expect(q.sendable(0, ready), 'b is still in flight').to.equal(null);
    q.settle(b);
    q.requeue(b);
    expect(q.queue.map((x) => x.ordinal)).to.deep.equal([a, b, c, d].map((x) => x.ordinal));
    expect(q.sendable(0, ready)).to.equal(a);
    q.markSent(a, ID);
    expect(q.sendable(0, ready), 'b waits until a is answered').to.equal(null);
    q.settle(a);
    expect(q.sendable(0, ready)).to.equal(b);
    q.markSent(b, ID);
    expect(q.sendable(0, ready), 'c (new) may follow b').to.equal(c);
    expect(a.baseSequence).to.equal(0);
    expect(b.baseSequence, 'a retry keeps its sequence').to.equal(1);
  });

  it('reads answers by the rule table', () => {
    const q = new PartitionQueue('t', 0, true);
    const b = batchOf(q, 2);
    q.markSent(b, ID);
    const kind = (o: Outcome) => o.kind;
    expect(outcomeOf(b, null, 40, ctx())).to.deep.equal({ kind: 'done', baseOffset: 40 });
    expect(outcomeOf(b, err(Errors.DUPLICATE_SEQUENCE_NUMBER), -1, ctx())).to.deep.equal({ kind: 'done', baseOffset: -1 });
    expect(kind(outcomeOf(b, err(Errors.NOT_LEADER_OR_FOLLOWER), -1, ctx()))).to.equal('retry');
    expect(kind(outcomeOf(b, err(Errors.REQUEST_TIMED_OUT), -1, ctx()))).to.equal('retry');
    // OUT_OF_ORDER: waiting for an earlier batch → retry; nothing earlier → the broker cannot continue: re-encode.
    expect(kind(outcomeOf(b, err(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), -1, ctx({ earlierUnresolved: true })))).to.equal('retry');
    b.sentBehind = true;
    expect(kind(outcomeOf(b, err(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), -1, ctx()))).to.equal('retry');
    b.sentBehind = false;
    expect(kind(outcomeOf(b, err(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), -1, ctx()))).to.equal('reencode');
    expect(kind(outcomeOf(b, err(Errors.UNKNOWN_PRODUCER_ID), -1, ctx()))).to.equal('reencode');
    expect(kind(outcomeOf(b, err(Errors.UNKNOWN_PRODUCER_ID), -1, ctx({ earlierUnresolved: true }))), 'our first batch has not reached the leader yet').to.equal('retry');
    expect(kind(outcomeOf(b, err(Errors.INVALID_PRODUCER_EPOCH), -1, ctx()))).to.equal('reencode');
    // Too large on its first send, with several records: split. Not on a later send (an earlier one may be in the
    // log), not a batch of one record, not past its deadline.
    expect(kind(outcomeOf(b, err(Errors.MESSAGE_TOO_LARGE), -1, ctx()))).to.equal('split');
    expect(kind(outcomeOf(b, err(Errors.MESSAGE_TOO_LARGE), -1, ctx({ idempotent: false })))).to.equal('split');
    expect(outcomeOf(b, err(Errors.MESSAGE_TOO_LARGE), -1, ctx({ expired: true }))).to.include({ kind: 'fail', hole: true });
    const one = batchOf(q, 1);
    q.markSent(one, ID);
    expect(outcomeOf(one, err(Errors.MESSAGE_TOO_LARGE), -1, ctx())).to.include({ kind: 'fail', hole: true });
    // An answer that leaves open whether the leader appended the batch rules a split out from then on.
    const c = batchOf(q, 3);
    q.markSent(c, ID);
    q.settle(c, err(Errors.NOT_LEADER_OR_FOLLOWER));
    expect(kind(outcomeOf(c, err(Errors.MESSAGE_TOO_LARGE), -1, ctx())), 'refused before the append: still splittable').to.equal('split');
    q.requeue(c);
    q.markSent(c, ID);
    q.settle(c, err(Errors.REQUEST_TIMED_OUT));
    expect(c.mayBeInLog).to.equal(true);
    expect(outcomeOf(c, err(Errors.MESSAGE_TOO_LARGE), -1, ctx())).to.include({ kind: 'fail', hole: true });
    b.mayBeInLog = true;
    // Failing for good leaves a hole in an idempotent partition's sequence.
    expect(outcomeOf(b, err(Errors.MESSAGE_TOO_LARGE), -1, ctx())).to.include({ kind: 'fail', hole: true });
    expect(outcomeOf(b, err(Errors.NOT_LEADER_OR_FOLLOWER), -1, ctx({ expired: true }))).to.include({ kind: 'fail', hole: true });
    expect(outcomeOf(b, err(Errors.MESSAGE_TOO_LARGE), -1, ctx({ idempotent: false }))).to.include({ kind: 'fail', hole: false });
  });

  it('splits a refused batch into pieces in its place, with its sequences in order, its records and its memory', () => {
    const q = new PartitionQueue('t', 0, true);
    const [a, b, c] = [batchOf(q, 6), batchOf(q, 2), batchOf(q, 1)];
    for (const x of [a, b, c]) q.markSent(x, ID);
    const handlers = a.records.slice();
    q.settle(a);
    const pieces = q.splitBatch(a, Math.floor(a.recordBytes / 2));
    expect(pieces.length).to.be.within(2, 3);
    expect(pieces.every((p) => p.recordBytes <= Math.floor(a.recordBytes / 2) && p.sealed && p.isReady(0))).to.equal(true);
    expect(pieces.flatMap((p) => p.records)).to.deep.equal(handlers);
    expect(pieces.reduce((n, p) => n + p.reservedBytes, 0)).to.equal(a.reservedBytes);
    expect(pieces.map((p) => p.baseSequence)).to.deep.equal(pieces.map((_, i) => pieces.slice(0, i).reduce((n, p) => n + p.recordCount, 0)));
    expect(pieces.every((p) => p.identity === ID)).to.equal(true);
    // The bodies are the records, in order, as the pieces' own batches (offset deltas from 0 again).
    const values = pieces.flatMap((p) => decodeRecordBatch(p.body.build()).records.map((r) => Buffer.from(r.value!).toString()));
    expect(values).to.deep.equal(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    // In the queue in a's place, ordinals between a's and b's; b and c keep their sequences.
    expect(q.queue).to.deep.equal(pieces);
    expect(pieces.every((p) => p.ordinal >= a.ordinal && p.ordinal < b.ordinal)).to.equal(true);
    expect([b.baseSequence, c.baseSequence]).to.deep.equal([6, 8]);
    // A piece is a retry: it waits for b and c to be answered, and goes alone.
    expect(q.sendable(0, ready)).to.equal(null);
    q.settle(b);
    q.requeue(b);
    q.settle(c);
    q.requeue(c);
    expect(q.sendable(0, ready)).to.equal(pieces[0]);
    q.markSent(pieces[0]!, ID);
    expect(q.sendable(0, ready)).to.equal(null);
    // A piece splits again within its own ordinals.
    q.settle(pieces[0]!);
    const again = q.splitBatch(pieces[0]!, 1);
    expect(again.length).to.equal(pieces[0]!.recordCount);
    expect(again.every((p) => p.ordinal >= pieces[0]!.ordinal && p.ordinal < pieces[1]!.ordinal)).to.equal(true);
    expect(q.queue.map((p) => p.ordinal)).to.deep.equal([...q.queue.map((p) => p.ordinal)].sort((x, y) => x - y));
  });

  it('counts the pieces of a split batch as that one batch in the window of 5', () => {
    const q = new PartitionQueue('t', 0, true);
    const batches = Array.from({ length: 7 }, () => batchOf(q, 2));
    q.markSent(batches[0]!, ID);
    q.settle(batches[0]!);
    const [p0, p1] = q.splitBatch(batches[0]!, 1);
    q.markSent(p0!, ID);
    q.settle(p0!);
    q.markSent(p1!, ID); // p1 unresolved: batches 1-4 may join it, batch 5 may not
    for (const b of batches.slice(1, 5)) {
      expect(q.sendable(0, ready)).to.equal(b);
      q.markSent(b, ID);
    }
    expect(q.sendable(0, ready)).to.equal(null);
  });

  it('renews sequences only once nothing of the old identity is unresolved', () => {
    const q = new PartitionQueue('t', 0, true);
    const [a, b] = [batchOf(q, 2), batchOf(q, 3)];
    q.markSent(a, ID);
    q.markSent(b, ID);
    expect(q.holdsUnresolvedSequences).to.equal(true);
    q.settle(a); // acknowledged
    q.settle(b);
    b.reencode = true;
    q.requeue(b);
    expect(q.holdsUnresolvedSequences, 'b is known not appended').to.equal(false);
    q.resetSequences();
    expect(q.nextSequence).to.equal(0);
    expect(b.baseSequence).to.equal(NO_SEQUENCE);
    expect(b.encoded).to.equal(null);
    const next: ProducerIdentity = { producerId: 7n, producerEpoch: 1 };
    expect(q.sendable(0, ready)).to.equal(b);
    q.markSent(b, next);
    expect(b.baseSequence).to.equal(0);
    expect(b.identity).to.equal(next);
  });

  describe('delivery deadlines (takeExpired)', () => {
    /** A batch with the given deadlines; sealed unless `open`. */
    const add = (q: PartitionQueue, deliveryDeadlineMs: number, opts: { open?: boolean; lingerDeadlineMs?: number } = {}): ProducerBatch => {
      const b = q.newBatch(-1, opts.lingerDeadlineMs ?? 0, deliveryDeadlineMs);
      b.body.append(null, Buffer.from('r'), undefined, 0);
      b.records.push({ resolve: () => undefined, reject: () => undefined });
      b.reservedBytes += 10;
      b.sealed = !opts.open;
      return b;
    };

    it('takes the due batches from the head, in order, and answers the next deadline', () => {
      const q = new PartitionQueue('t', 0, true);
      const [a, b, c, d] = [100, 100, 200, 300].map((ms) => add(q, ms));
      const expired: ProducerBatch[] = [];
      expect(q.takeExpired(99, expired)).to.equal(100);
      expect(expired).to.have.length(0);
      expect(q.takeExpired(100, expired), 'the deadline itself is due').to.equal(200);
      expect(expired).to.deep.equal([a, b]);
      expect(q.queue).to.deep.equal([c, d]);
      expired.length = 0;
      expect(q.takeExpired(10_000, expired)).to.equal(Infinity);
      expect(expired).to.deep.equal([c, d]);
      expect(q.queue).to.have.length(0);
    });

    it('leaves an open batch within its linger, whatever its deadline, and counts it from its linger on', () => {
      const q = new PartitionQueue('t', 0, true);
      const sealed = add(q, 100);
      const open = add(q, 150, { open: true, lingerDeadlineMs: 500 });
      const expired: ProducerBatch[] = [];
      expect(q.takeExpired(200, expired), 'the open batch is still filling').to.equal(Infinity);
      expect(expired).to.deep.equal([sealed]);
      expect(q.queue).to.deep.equal([open]);
      expired.length = 0;
      expect(q.takeExpired(500, expired), 'its linger passed: it only waits for a slot').to.equal(Infinity);
      expect(expired).to.deep.equal([open]);
    });

    it('answers an open batch\'s deadline once it is ready, and a retry keeps its place', () => {
      const q = new PartitionQueue('t', 0, true);
      const first = add(q, 100);
      const second = add(q, 200, { open: true, lingerDeadlineMs: 10 });
      const expired: ProducerBatch[] = [];
      expect(q.takeExpired(20, expired)).to.equal(100);
      expect(q.sendable(20, ready)).to.equal(first);
      q.markSent(first, ID);
      expect(q.takeExpired(20, expired), 'a batch in flight is not the queue\'s to expire').to.equal(200);
      q.settle(first);
      q.requeue(first);
      expect(q.queue).to.deep.equal([first, second]);
      expect(q.takeExpired(150, expired)).to.equal(200);
      expect(expired).to.deep.equal([first]);
    });

    it('asserts that deadlines never decrease with ordinals (what stopping at the first batch not due relies on)', () => {
      const q = new PartitionQueue('t', 0, true);
      add(q, 200);
      expect(() => add(q, 100)).to.throw(/delivery deadlines follow ordinals/);
    });
  });

  describe('model check against the brokers\' producer-state rules', () => {
    /**
     * One partition, one producer. The "network" delivers requests in send
     * order to a leader running ProducerStateTable, but answers come back in
     * random order; some requests are refused before the append (retriable),
     * some fail after it (the answer is lost, as in a timeout). The driver
     * follows the Sender's use of PartitionQueue and outcomeOf.
     */
    function run(seed: number): { log: number[]; acked: number[]; failed: number[]; renewals: number; splits: number } {
      const rng = new SeededRng(seed);
      const q = new PartitionQueue('t', 0, true);
      const state = new ProducerStateTable(0);
      const log: number[] = [];
      const acked: number[] = [];
      const failed: number[] = [];
      const answers: Array<{ batch: ProducerBatch; error: SluiceError | null; baseOffset: number }> = [];
      let identity: ProducerIdentity = ID;
      let renewing = false;
      let renewals = 0;
      let splits = 0;
      let nextRecord = 0;
      const values = new Map<ProducerBatch, number[]>();
      const inLog = new Set<ProducerBatch>();
      for (let step = 0; step < 20_000 && (nextRecord < RECORDS || !q.isIdle); step++) {
        if (nextRecord < RECORDS && rng.chance(0.3)) {
          const n = Math.min(rng.range(1, 6), RECORDS - nextRecord);
          const b = batchOf(q, n);
          values.set(b, Array.from({ length: n }, () => nextRecord++));
        }
        const b = q.sendable(step, { ready: true, renewing });
        if (b && rng.chance(0.6)) {
          q.markSent(b, identity);
          answers.push({ batch: b, ...leaderAnswer(b) });
        }
        if (answers.length > 0 && rng.chance(0.5)) handle(answers.splice(rng.int(answers.length), 1)[0]!);
        if (renewing && answers.length === 0 && !q.holdsUnresolvedSequences) {
          identity = { producerId: identity.producerId, producerEpoch: identity.producerEpoch + 1 };
          q.resetSequences();
          renewing = false;
          renewals++;
        }
      }
      return { log, acked, failed, renewals, splits };

      /** What the leader answers: refused before the append, appended (answer maybe lost), or a duplicate. */
      function leaderAnswer(b: ProducerBatch): { error: SluiceError | null; baseOffset: number } {
        if (rng.chance(0.08)) return { error: err(Errors.NOT_ENOUGH_REPLICAS), baseOffset: -1 };
        // Refused for its size, as a real size check would (before the duplicate check, so never a batch already
        // appended): a batch of several records is split unless an earlier answer was lost (it may be in the
        // log, so the client cannot know), a batch of one fails for good.
        if (!inLog.has(b) && rng.chance(0.05)) return { error: err(Errors.MESSAGE_TOO_LARGE), baseOffset: -1 };
        const facts = { producerId: Number(b.identity!.producerId), producerEpoch: b.identity!.producerEpoch, baseSequence: b.baseSequence, lastOffsetDelta: b.recordCount - 1, maxTimestamp: 0 };
        const v = state.checkAppend([facts]);
        let answer: { error: SluiceError | null; baseOffset: number };
        if (v.kind === 'reject') answer = { error: new SluiceError(v.error), baseOffset: -1 };
        else if (v.kind === 'duplicate') answer = { error: null, baseOffset: v.firstOffset };
        else {
          const baseOffset = log.length;
          log.push(...values.get(b)!);
          inLog.add(b);
          state.apply({ ...facts, baseOffset });
          answer = { error: null, baseOffset };
        }
        return rng.chance(0.1) ? { error: err(Errors.REQUEST_TIMED_OUT), baseOffset: -1 } : answer; // a lost answer
      }

      function handle(a: { batch: ProducerBatch; error: SluiceError | null; baseOffset: number }): void {
        q.settle(a.batch, a.error);
        const o = outcomeOf(a.batch, a.error, a.baseOffset, { idempotent: true, earlierUnresolved: q.hasEarlierUnresolved(a.batch), expired: false });
        if (o.kind === 'done') {
          expect(log.slice(o.baseOffset, o.baseOffset + a.batch.recordCount), `seed ${seed}: acknowledged offsets hold the batch`).to.deep.equal(values.get(a.batch));
          acked.push(...values.get(a.batch)!);
        } else if (o.kind === 'retry') {
          q.requeue(a.batch);
        } else if (o.kind === 'reencode') {
          renewing = true;
          q.requeueForReencode(a.batch);
        } else if (o.kind === 'split') {
          const pieces = q.splitBatch(a.batch, Math.max(1, Math.floor(a.batch.recordBytes / 2)));
          const mine = values.get(a.batch)!;
          let at = 0;
          for (const p of pieces) {
            values.set(p, mine.slice(at, at + p.recordCount));
            at += p.recordCount;
          }
          expect(at, `seed ${seed}: the pieces hold every record of the batch`).to.equal(mine.length);
          splits++;
        } else {
          expect(o.error.is(Errors.MESSAGE_TOO_LARGE), `seed ${seed}: only refused batches fail (${o.error.message})`).to.equal(true);
          failed.push(...values.get(a.batch)!);
          if (o.hole) renewing = true;
        }
      }
    }

    const RECORDS = 300;
    let totalRenewals = 0;
    let totalSplits = 0;
    for (let seed = 1; seed <= 40; seed++) {
      it(`seed ${seed}: every record not refused is in the log exactly once, in order`, () => {
        const { log, acked, failed, renewals, splits } = run(seed);
        const expected = Array.from({ length: RECORDS }, (_, i) => i).filter((v) => !failed.includes(v));
        expect(log, `seed ${seed}`).to.deep.equal(expected);
        expect([...acked].sort((a, b) => a - b)).to.deep.equal(log);
        totalRenewals += renewals;
        totalSplits += splits;
      });
    }

    it('exercised epoch renewals and splits (the checks above can fail)', () => {
      expect(totalRenewals).to.be.greaterThan(5);
      expect(totalSplits).to.be.greaterThan(20);
    });
  });
});
