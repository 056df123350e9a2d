// The idempotent-producer rules (src/replication/rules/producer-state.ts),
// pure: sequence checks (in order, gaps, wrap-around at int32 max),
// duplicates of the last five batches answered with their original offsets,
// epoch fencing and new epochs, unknown producers, several batches in one
// request, truncation (exact, or asking for a rebuild), expiry, snapshots —
// and properties: a producer retrying within its in-flight window gets every
// batch into the log exactly once and in order; after a truncation the state
// agrees with one rebuilt from the log's remaining batches.

import { expect } from 'chai';
import fc from 'fast-check';
import {
  BATCHES_KEPT_PER_PRODUCER, ProducerStateTable, SEQUENCE_MAX, checkBatch, lastSequenceOf, nextSequence,
  type AppendedBatch, type ProducerBatch, type Verdict,
} from '../../src/replication/rules/producer-state.js';

function batch(producerId: number, producerEpoch: number, baseSequence: number, records = 1, maxTimestamp = 1000): ProducerBatch {
  return { producerId, producerEpoch, baseSequence, lastOffsetDelta: records - 1, maxTimestamp };
}

/** Checks `b` alone and, if it is new, appends it at the table's end; returns the verdict. */
function produce(t: ProducerStateTable, b: ProducerBatch): Verdict {
  const v = t.checkAppend([b]);
  if (v.kind === 'append') t.apply({ ...b, baseOffset: t.endOffset });
  return v;
}

function errorOf(v: Verdict): string {
  return v.kind === 'reject' ? v.error.name : v.kind;
}

describe('replication rules: producer state (idempotence)', () => {
  it('appends in-sequence batches and takes an unknown producer only from sequence 0', () => {
    const t = new ProducerStateTable();
    expect(errorOf(produce(t, batch(7, 0, 3)))).to.equal('UNKNOWN_PRODUCER_ID');
    expect(t.endOffset, 'nothing appended').to.equal(0);
    expect(produce(t, batch(7, 0, 0, 3))).to.deep.equal({ kind: 'append' });
    expect(produce(t, batch(7, 0, 3, 2))).to.deep.equal({ kind: 'append' });
    expect(t.entry(7)).to.deep.include({ epoch: 0, firstOffset: 0 });
    expect(t.entry(7)!.batches).to.deep.equal([
      { firstSeq: 0, lastSeq: 2, firstOffset: 0, lastOffset: 2 },
      { firstSeq: 3, lastSeq: 4, firstOffset: 3, lastOffset: 4 },
    ]);
    expect(t.endOffset).to.equal(5);
  });

  it('answers a retry of any of the last five batches with its original offsets, and nothing older', () => {
    const t = new ProducerStateTable();
    t.apply({ ...batch(-1, -1, -1, 4), baseOffset: 0 }); // someone else's records first
    for (let i = 0; i < 7; i++) expect(produce(t, batch(1, 0, 2 * i, 2)).kind).to.equal('append');
    // Batch i is at offsets 4 + 2i .. 5 + 2i with sequences 2i .. 2i + 1.
    for (let i = 2; i < 7; i++) {
      expect(produce(t, batch(1, 0, 2 * i, 2))).to.deep.equal({ kind: 'duplicate', firstOffset: 4 + 2 * i, lastOffset: 5 + 2 * i });
    }
    expect(errorOf(produce(t, batch(1, 0, 2, 2))), 'sixth-newest is no longer retained').to.equal('OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(errorOf(produce(t, batch(1, 0, 12, 1))), 'same first sequence, other last sequence').to.equal('OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(t.entry(1)!.batches).to.have.length(BATCHES_KEPT_PER_PRODUCER);
    expect(t.endOffset).to.equal(18);
  });

  it('refuses gaps, fences older epochs, and lets a newer epoch start over at 0', () => {
    const t = new ProducerStateTable();
    produce(t, batch(5, 2, 0, 3));
    expect(errorOf(produce(t, batch(5, 2, 4)))).to.equal('OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(errorOf(produce(t, batch(5, 1, 3)))).to.equal('INVALID_PRODUCER_EPOCH');
    expect(errorOf(produce(t, batch(5, 1, 0, 3))), 'not even a duplicate under the old epoch').to.equal('INVALID_PRODUCER_EPOCH');
    expect(errorOf(produce(t, batch(5, 3, 3)))).to.equal('OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(produce(t, batch(5, 3, 0, 2)).kind).to.equal('append');
    expect(t.entry(5)).to.deep.include({ epoch: 3, firstOffset: 0 });
    expect(t.entry(5)!.batches, 'a new epoch resets the retained batches').to.deep.equal([{ firstSeq: 0, lastSeq: 1, firstOffset: 3, lastOffset: 4 }]);
    expect(errorOf(produce(t, batch(5, 2, 3)))).to.equal('INVALID_PRODUCER_EPOCH');
    expect(errorOf(produce(t, batch(5, -1, 0)))).to.equal('INVALID_REQUEST');
    expect(errorOf(produce(t, batch(6, 0, -1)))).to.equal('INVALID_REQUEST');
  });

  it('wraps sequences past int32 max to 0', () => {
    expect(lastSequenceOf(SEQUENCE_MAX - 1, 3)).to.equal(1);
    expect(lastSequenceOf(SEQUENCE_MAX, 0)).to.equal(SEQUENCE_MAX);
    expect(nextSequence(SEQUENCE_MAX)).to.equal(0);
    const entry = { producerId: 1, epoch: 0, lastTimestampMs: 0, firstOffset: 0, currentTxnFirstOffset: -1, coordinatorEpoch: -1, lastMarkerOffset: -1, batches: [{ firstSeq: SEQUENCE_MAX - 5, lastSeq: SEQUENCE_MAX - 1, firstOffset: 0, lastOffset: 4 }] };
    expect(checkBatch(entry, batch(1, 0, SEQUENCE_MAX, 3)).kind).to.equal('append');
    const t = ProducerStateTable.fromSnapshot({ endOffset: 5, entries: [entry] })!;
    expect(produce(t, batch(1, 0, SEQUENCE_MAX, 3)).kind).to.equal('append');
    expect(t.entry(1)!.batches.at(-1)).to.deep.equal({ firstSeq: SEQUENCE_MAX, lastSeq: 1, firstOffset: 5, lastOffset: 7 });
    expect(produce(t, batch(1, 0, SEQUENCE_MAX, 3))).to.deep.equal({ kind: 'duplicate', firstOffset: 5, lastOffset: 7 });
    expect(errorOf(produce(t, batch(1, 0, 0)))).to.equal('OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(produce(t, batch(1, 0, 2)).kind).to.equal('append');
  });

  it('checks the batches of one request in order, as if the earlier ones were appended', () => {
    const t = new ProducerStateTable();
    produce(t, batch(1, 0, 0, 2));
    expect(t.checkAppend([batch(1, 0, 2), batch(1, 0, 3), batch(-1, -1, -1), batch(2, 0, 0)])).to.deep.equal({ kind: 'append' });
    expect(errorOf(t.checkAppend([batch(1, 0, 2), batch(1, 0, 4)]))).to.equal('OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(errorOf(t.checkAppend([batch(1, 0, 2), batch(1, 0, 2)])), 'the same new batch twice').to.equal('DUPLICATE_SEQUENCE_NUMBER');
    expect(errorOf(t.checkAppend([batch(1, 0, 0, 2), batch(1, 0, 2)])), 'a duplicate then a new batch').to.equal('DUPLICATE_SEQUENCE_NUMBER');
    expect(errorOf(t.checkAppend([batch(-1, -1, -1), batch(1, 0, 0, 2)]))).to.equal('DUPLICATE_SEQUENCE_NUMBER');
    produce(t, batch(1, 0, 2, 3));
    expect(t.checkAppend([batch(1, 0, 0, 2), batch(1, 0, 2, 3)])).to.deep.equal({ kind: 'duplicate', firstOffset: 0, lastOffset: 4 });
    expect(t.checkAppend([])).to.deep.equal({ kind: 'append' });
    expect(t.endOffset, 'checks change nothing').to.equal(5);
  });

  it('forgets truncated batches exactly, and asks for a rebuild when history it does not retain is left in the log', () => {
    const t = new ProducerStateTable();
    for (let i = 0; i < 7; i++) produce(t, batch(1, 0, i)); // offsets 0..6
    produce(t, batch(2, 0, 0, 2)); // 7..8
    produce(t, batch(3, 0, 0)); // 9
    produce(t, batch(2, 0, 2)); // 10
    expect(t.truncateTo(9)).to.equal(true);
    expect(t.entry(3), 'first seen past the cut').to.equal(undefined);
    expect(t.entry(2)!.batches).to.deep.equal([{ firstSeq: 0, lastSeq: 1, firstOffset: 7, lastOffset: 8 }]);
    expect(t.entry(1)!.batches.map((b) => b.firstSeq)).to.deep.equal([2, 3, 4, 5, 6]);
    expect(t.endOffset).to.equal(9);
    expect(produce(t, batch(2, 0, 2)).kind, 'the truncated batch is new again').to.equal('append');
    expect(t.truncateTo(4)).to.equal(true);
    expect(t.entry(1)!.batches.map((b) => b.firstSeq)).to.deep.equal([2, 3]);
    expect(t.entry(2)).to.equal(undefined);
    expect(t.truncateTo(2), 'producer 1 keeps offsets 0..1, which the table no longer retains').to.equal(false);
  });

  it('expires producers idle longer than the expiration', () => {
    const t = new ProducerStateTable();
    produce(t, batch(1, 0, 0, 1, 1_000));
    produce(t, batch(2, 0, 0, 1, 5_000));
    expect(t.expire(7_000, 3_000)).to.equal(1);
    expect(t.entry(1)).to.equal(undefined);
    expect(t.entry(2)).to.not.equal(undefined);
    expect(errorOf(produce(t, batch(1, 0, 1)))).to.equal('UNKNOWN_PRODUCER_ID');
  });

  it('round-trips through a snapshot and refuses malformed ones', () => {
    const t = new ProducerStateTable();
    for (let i = 0; i < 8; i++) produce(t, batch(i % 3, 1, Math.floor(i / 3) * 2, 2));
    const copy = ProducerStateTable.fromSnapshot(JSON.parse(JSON.stringify(t.snapshot())));
    expect(copy?.snapshot()).to.deep.equal(t.snapshot());
    const s = JSON.parse(JSON.stringify(t.snapshot())) as { endOffset: number; entries: Array<Record<string, unknown>> };
    const bad = [
      null, 'x', { endOffset: -1, entries: [] }, { endOffset: 3 },
      { ...s, endOffset: 4 }, // batches past the end
      { ...s, entries: [...s.entries, s.entries[0]] }, // a producer twice
      { ...s, entries: [{ ...s.entries[0], epoch: 70_000 }] },
      { ...s, entries: [{ ...s.entries[0], currentTxnFirstOffset: 16 }] }, // an open transaction past the end
      { ...s, entries: [{ ...s.entries[0], lastMarkerOffset: -2 }] },
      { ...s, entries: [{ ...s.entries[0], coordinatorEpoch: undefined }] }, // a version 1 entry
      { ...s, entries: [{ ...s.entries[0], batches: [{ firstSeq: 0, lastSeq: 5, firstOffset: 0, lastOffset: 1 }] }] },
    ];
    for (const b of bad) expect(ProducerStateTable.fromSnapshot(b), JSON.stringify(b)).to.equal(null);
  });

  it('property: a retry within the last five batches gets its original offsets, an older one is refused; each batch is appended once', () => {
    fc.assert(fc.property(
      fc.array(fc.record({ records: fc.integer({ min: 1, max: 4 }), retries: fc.array(fc.nat(BATCHES_KEPT_PER_PRODUCER + 3), { maxLength: 3 }) }), { minLength: 1, maxLength: 40 }),
      fc.integer({ min: SEQUENCE_MAX - 20, max: SEQUENCE_MAX }),
      (sends, startNearWrap) => {
        // A producer whose sequences have come near int32 max: the window must work across the wrap to 0.
        const last = startNearWrap - 1;
        const t = ProducerStateTable.fromSnapshot({
          endOffset: 1, entries: [{ producerId: 9, epoch: 1, lastTimestampMs: 0, firstOffset: 0, currentTxnFirstOffset: -1, coordinatorEpoch: -1, lastMarkerOffset: -1, batches: [{ firstSeq: last, lastSeq: last, firstOffset: 0, lastOffset: 0 }] }],
        })!;
        let seq = startNearWrap;
        const sent: Array<{ b: ProducerBatch; offset: number }> = [];
        for (const s of sends) {
          const b = batch(9, 1, seq, s.records);
          const v = produce(t, b);
          expect(v.kind).to.equal('append');
          sent.push({ b, offset: t.endOffset - s.records });
          seq = nextSequence(lastSequenceOf(seq, s.records - 1));
          for (const back of s.retries) {
            const target = sent[sent.length - 1 - back];
            if (!target) continue;
            const again = produce(t, target.b);
            if (back < BATCHES_KEPT_PER_PRODUCER) {
              expect(again).to.deep.equal({ kind: 'duplicate', firstOffset: target.offset, lastOffset: target.offset + target.b.lastOffsetDelta });
            } else {
              expect(errorOf(again)).to.equal('OUT_OF_ORDER_SEQUENCE_NUMBER');
            }
          }
        }
        expect(t.endOffset, 'every record once').to.equal(1 + sends.reduce((n, s) => n + s.records, 0));
      },
    ));
  });

  it('property: after a truncation the state agrees with one rebuilt from the remaining batches', () => {
    const op = fc.record({ producer: fc.integer({ min: 0, max: 3 }), bump: fc.boolean(), records: fc.integer({ min: 1, max: 3 }) });
    fc.assert(fc.property(fc.array(op, { minLength: 1, maxLength: 60 }), fc.nat(), (ops, cutPick) => {
      // A log written by four producers (an occasional epoch bump), with the offsets they got.
      const appended: AppendedBatch[] = [];
      const next = new Map<number, { epoch: number; seq: number }>();
      let end = 0;
      for (const o of ops) {
        let s = next.get(o.producer) ?? { epoch: 0, seq: 0 };
        if (o.bump) s = { epoch: s.epoch + 1, seq: 0 };
        appended.push({ ...batch(o.producer, s.epoch, s.seq, o.records), baseOffset: end });
        next.set(o.producer, { epoch: s.epoch, seq: s.seq + o.records });
        end += o.records;
      }
      const whole = new ProducerStateTable();
      for (const b of appended) whole.apply(b);
      const kept = appended.slice(0, cutPick % (appended.length + 1));
      const cut = kept.length === 0 ? 0 : kept.at(-1)!.baseOffset + kept.at(-1)!.lastOffsetDelta + 1;
      const rebuilt = new ProducerStateTable();
      for (const b of kept) rebuilt.apply(b);
      // A rebuild is needed exactly when a producer still in the log kept none of the batches the table retained.
      const needsRebuild = [...new Set(kept.map((b) => b.producerId))]
        .some((pid) => whole.entry(pid)!.batches.every((r) => r.lastOffset >= cut));
      const exact = whole.truncateTo(cut);
      expect(exact).to.equal(!needsRebuild);
      expect(whole.endOffset).to.equal(cut);
      if (!exact) return; // the caller rebuilds: nothing to compare
      expect(whole.size).to.equal(rebuilt.size);
      for (let pid = 0; pid <= 3; pid++) {
        const a = whole.entry(pid);
        const b = rebuilt.entry(pid);
        if (b === undefined) {
          expect(a).to.equal(undefined);
          continue;
        }
        expect(a?.epoch).to.equal(b.epoch);
        // What the truncated table retains is a suffix of what the rebuilt one does.
        expect(b.batches.slice(-a!.batches.length)).to.deep.equal(a!.batches);
      }
    }));
  });
});
