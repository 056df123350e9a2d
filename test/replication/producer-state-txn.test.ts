// The transactional rules of producer state (src/replication/rules/producer-state.ts),
// pure: open transactions and the first unstable offset, markers ending them
// (and the completed transaction with the last stable offset of that
// moment), KIP-890 part 2 epoch bumps by markers, markers without a bump
// (Kafka clients' transaction version 1), coordinator-epoch fencing,
// INVALID_TXN_STATE for a non-transactional write into an open transaction,
// coordinator batches without sequence, truncation, expiry and snapshots —
// and a property: after any sequence of transactional appends, markers and
// truncations, the table (exact, or rebuilt when it says so) agrees with a
// model computed from the remaining log, open transactions and aborts included.

import { expect } from 'chai';
import fc from 'fast-check';
import {
  ProducerStateTable, type AppendedBatch, type CompletedTxn, type ProducerBatch, type Verdict,
} from '../../src/replication/rules/producer-state.js';

function txn(producerId: number, producerEpoch: number, baseSequence: number, records = 1): ProducerBatch {
  return { producerId, producerEpoch, baseSequence, lastOffsetDelta: records - 1, maxTimestamp: 1000, isTransactional: true };
}

function plain(producerId: number, producerEpoch: number, baseSequence: number, records = 1): ProducerBatch {
  return { producerId, producerEpoch, baseSequence, lastOffsetDelta: records - 1, maxTimestamp: 1000 };
}

function marker(producerId: number, producerEpoch: number, committed: boolean, coordinatorEpoch = 0): ProducerBatch {
  return { producerId, producerEpoch, baseSequence: -1, lastOffsetDelta: 0, maxTimestamp: 1000, isTransactional: true, control: { kind: 'marker', committed, coordinatorEpoch } };
}

/** Checks `b` (as a client, or as the coordinator for markers) and appends it at the end if allowed. */
function put(t: ProducerStateTable, b: ProducerBatch, origin: 'client' | 'coordinator' = 'client'): { v: Verdict; done: CompletedTxn | null } {
  const v = t.checkAppend([b], origin);
  const done = v.kind === 'append' ? t.apply({ ...b, baseOffset: t.endOffset }) : null;
  return { v, done };
}

function errorOf(v: Verdict): string {
  return v.kind === 'reject' ? v.error.name : v.kind;
}

describe('replication rules: producer state (transactions)', () => {
  it('tracks open transactions: the first unstable offset is the oldest first offset', () => {
    const t = new ProducerStateTable();
    put(t, plain(-1, -1, -1, 3)); // 0..2
    expect(t.firstUnstableOffset).to.equal(null);
    put(t, txn(1, 0, 0, 2)); // 3..4
    put(t, txn(2, 0, 0)); // 5
    put(t, txn(1, 0, 2)); // 6
    expect(t.firstUnstableOffset).to.equal(3);
    expect(t.entry(1)!.currentTxnFirstOffset).to.equal(3);
    const c1 = put(t, marker(1, 1, false), 'coordinator'); // 7: abort of producer 1, epoch bumped to 1
    expect(c1.done).to.deep.equal({ producerId: 1, firstOffset: 3, lastOffset: 7, aborted: true, lastStableOffset: 5 });
    expect(t.firstUnstableOffset, 'producer 2 still open').to.equal(5);
    const c2 = put(t, marker(2, 1, true), 'coordinator'); // 8
    expect(c2.done).to.deep.equal({ producerId: 2, firstOffset: 5, lastOffset: 8, aborted: false, lastStableOffset: 9 });
    expect(t.firstUnstableOffset).to.equal(null);
    expect([...t.openTransactions()]).to.deep.equal([]);
  });

  it('a marker at epoch + 1 fences the ended transaction and starts the producer over at sequence 0', () => {
    const t = new ProducerStateTable();
    put(t, txn(1, 4, 0, 3));
    put(t, marker(1, 5, true), 'coordinator');
    expect(t.entry(1)).to.deep.include({ epoch: 5, currentTxnFirstOffset: -1, lastMarkerOffset: 3, batches: [] });
    expect(errorOf(put(t, txn(1, 4, 3)).v), 'a late write of the old epoch').to.equal('INVALID_PRODUCER_EPOCH');
    expect(errorOf(put(t, txn(1, 5, 3)).v), 'the new epoch starts at 0').to.equal('OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(put(t, txn(1, 5, 0)).v.kind).to.equal('append');
    expect(t.entry(1)!.currentTxnFirstOffset).to.equal(4);
  });

  it('a marker at the same epoch (transaction version 1) ends the transaction and sequences continue', () => {
    const t = new ProducerStateTable();
    put(t, txn(1, 2, 0, 3));
    put(t, marker(1, 2, false), 'coordinator');
    expect(t.entry(1)!.batches.at(-1)!.lastSeq).to.equal(2);
    expect(errorOf(put(t, txn(1, 2, 0)).v), 'sequences do not start over').to.equal('OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(put(t, txn(1, 2, 3)).v.kind).to.equal('append');
    expect(t.firstUnstableOffset).to.equal(4);
  });

  it('fences markers of an older epoch or an older coordinator epoch', () => {
    const t = new ProducerStateTable();
    put(t, txn(1, 3, 0));
    put(t, marker(1, 3, true, 7), 'coordinator');
    expect(errorOf(t.checkAppend([marker(1, 2, true, 7)]))).to.equal('INVALID_PRODUCER_EPOCH');
    expect(errorOf(t.checkAppend([marker(1, 3, false, 6)]))).to.equal('TRANSACTION_COORDINATOR_FENCED');
    expect(t.checkAppend([marker(1, 3, false, 7)]).kind, 'a retried marker').to.equal('append');
    expect(t.checkAppend([marker(1, 4, false, 8)]).kind).to.equal('append');
    expect(t.checkAppend([marker(9, 0, true, 0)]).kind, 'a producer never seen here').to.equal('append');
    // A marker for a producer without an open transaction completes nothing.
    expect(put(t, marker(1, 3, true, 7), 'coordinator').done).to.equal(null);
  });

  it('refuses a non-transactional write into an open transaction', () => {
    const t = new ProducerStateTable();
    put(t, txn(1, 0, 0));
    expect(errorOf(put(t, plain(1, 0, 1)).v)).to.equal('INVALID_TXN_STATE');
    expect(put(t, txn(1, 0, 1)).v.kind).to.equal('append');
    put(t, marker(1, 0, true), 'coordinator');
    expect(put(t, plain(1, 0, 2)).v.kind, 'after the marker, idempotent writes again').to.equal('append');
  });

  it('takes coordinator batches without sequence (TxnOffsetCommit) and checks only their epoch', () => {
    const t = new ProducerStateTable();
    const offsets = { ...txn(8, 2, -1) };
    expect(errorOf(t.checkAppend([offsets])), 'from a client, base sequence -1 is refused').to.equal('INVALID_REQUEST');
    expect(put(t, offsets, 'coordinator').v.kind).to.equal('append');
    expect(put(t, offsets, 'coordinator').v.kind, 'again: no sequence to repeat').to.equal('append');
    expect(t.entry(8)).to.deep.include({ epoch: 2, currentTxnFirstOffset: 0, batches: [] });
    expect(errorOf(put(t, txn(8, 1, -1), 'coordinator').v)).to.equal('INVALID_PRODUCER_EPOCH');
    expect(put(t, marker(8, 3, true), 'coordinator').done).to.deep.include({ producerId: 8, firstOffset: 0, aborted: false });
  });

  it('truncation closes transactions begun past the cut, and asks for a rebuild when it cuts a marker', () => {
    const t = new ProducerStateTable();
    put(t, txn(1, 0, 0)); // 0
    put(t, txn(2, 0, 0)); // 1
    put(t, marker(1, 1, false), 'coordinator'); // 2
    put(t, txn(3, 0, 0)); // 3
    const a = ProducerStateTable.fromSnapshot(JSON.parse(JSON.stringify(t.snapshot())))!;
    expect(a.truncateTo(3), 'only producer 3 is cut: exact').to.equal(true);
    expect(a.firstUnstableOffset).to.equal(1);
    expect(a.entry(3)).to.equal(undefined);
    const b = ProducerStateTable.fromSnapshot(JSON.parse(JSON.stringify(t.snapshot())))!;
    expect(b.truncateTo(2), 'the marker of producer 1 is cut: its transaction is open again').to.equal(false);
  });

  it('never expires a producer with an open transaction', () => {
    const t = new ProducerStateTable();
    put(t, txn(1, 0, 0));
    put(t, plain(2, 0, 0));
    expect(t.expire(1_000_000, 10)).to.equal(1);
    expect(t.entry(1)).to.not.equal(undefined);
    expect(t.firstUnstableOffset).to.equal(0);
  });

  it('round-trips open transactions through a snapshot', () => {
    const t = new ProducerStateTable();
    put(t, txn(1, 0, 0, 2));
    put(t, marker(1, 1, false, 4), 'coordinator');
    put(t, txn(2, 0, 0));
    const copy = ProducerStateTable.fromSnapshot(JSON.parse(JSON.stringify(t.snapshot())))!;
    expect(copy.snapshot()).to.deep.equal(t.snapshot());
    expect(copy.firstUnstableOffset).to.equal(3);
    expect(copy.entry(1)).to.deep.include({ epoch: 1, coordinatorEpoch: 4, lastMarkerOffset: 2 });
  });

  it('property: the table (exact or rebuilt) agrees with the log after appends, markers and truncations', () => {
    type Op = { kind: 'data'; pid: number; txn: boolean; records: number } | { kind: 'marker'; pid: number; commit: boolean } | { kind: 'truncate'; back: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('data' as const), pid: fc.integer({ min: 0, max: 3 }), txn: fc.boolean(), records: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ kind: fc.constant('marker' as const), pid: fc.integer({ min: 0, max: 3 }), commit: fc.boolean() }),
      fc.record({ kind: fc.constant('truncate' as const), back: fc.integer({ min: 1, max: 6 }) }),
    );
    fc.assert(fc.property(fc.array(op, { minLength: 1, maxLength: 60 }), (ops) => {
      const log: AppendedBatch[] = [];
      let t = new ProducerStateTable();
      const end = (): number => (log.length === 0 ? 0 : log[log.length - 1]!.baseOffset + log[log.length - 1]!.lastOffsetDelta + 1);
      const rebuild = (): { table: ProducerStateTable; aborts: CompletedTxn[] } => {
        const table = new ProducerStateTable();
        const aborts: CompletedTxn[] = [];
        for (const b of log) {
          const done = table.apply(b);
          if (done?.aborted) aborts.push(done);
        }
        return { table, aborts };
      };
      for (const o of ops) {
        if (o.kind === 'truncate') {
          const keep = Math.max(0, log.length - o.back);
          log.length = keep;
          if (!t.truncateTo(end())) t = rebuild().table;
          continue;
        }
        const e = t.entry(o.pid);
        const epoch = e?.epoch ?? 0;
        const b: ProducerBatch = o.kind === 'marker' ? marker(o.pid, epoch + 1, o.commit)
          : { ...(o.txn ? txn(o.pid, epoch, 0) : plain(o.pid, epoch, 0)), lastOffsetDelta: o.records - 1, baseSequence: e?.batches.length ? (e.batches.at(-1)!.lastSeq + 1) : 0 };
        const v = t.checkAppend([b], o.kind === 'marker' ? 'coordinator' : 'client');
        if (v.kind !== 'append') continue;
        const appended = { ...b, baseOffset: end() };
        log.push(appended);
        t.apply(appended);
      }
      const model = rebuild().table;
      expect(t.endOffset).to.equal(end());
      expect(t.firstUnstableOffset).to.equal(model.firstUnstableOffset);
      expect([...t.openTransactions()].sort()).to.deep.equal([...model.openTransactions()].sort());
      for (const pid of [0, 1, 2, 3]) {
        expect(t.entry(pid)?.epoch, `epoch of ${pid}`).to.equal(model.entry(pid)?.epoch);
        expect(t.entry(pid)?.currentTxnFirstOffset, `open transaction of ${pid}`).to.equal(model.entry(pid)?.currentTxnFirstOffset);
      }
    }), { numRuns: 300 });
  });
});
