// The pending transactional offsets of one offsets partition, alone: what a
// marker ends (only its producer's records written before it), what stays
// pending (a record after the marker belongs to the next transaction), what
// an append in flight looks like to requireStable, and a marker that lands
// while an append is in flight.

import { expect } from 'chai';
import { PendingTxnOffsets } from '../../src/groups/txn-pending.js';
import type { StoredOffset } from '../../src/groups/loader.js';

const at = (offset: number, logOffset: number): StoredOffset => ({ offset, leaderEpoch: 0, metadata: null, commitTimestampMs: 1, logOffset });
const key = (groupId: string, partition: number) => ({ groupId, topic: 'orders', partition });

describe('pending transactional offsets', () => {
  it('a COMMIT marker ends its producer\'s records written before it, in log order; other producers stay pending', () => {
    const p = new PendingTxnOffsets();
    p.add(7, key('g', 0), at(10, 100));
    p.add(7, key('g', 0), at(12, 103)); // the same transaction moves partition 0 again: the later record replaces it
    p.add(7, key('h', 1), at(5, 101));
    p.add(8, key('g', 0), at(99, 102));
    expect(p.isUnstable('g', 'orders', 0)).to.equal(true);
    expect(p.openProducers).to.deep.equal([7, 8]);
    const out = p.marker(7, 104, true);
    expect(out.committed.map((c) => [c.groupId, c.partition, c.value.offset])).to.deep.equal([['h', 1, 5], ['g', 0, 12]]);
    expect([...out.groups].sort()).to.deep.equal(['g', 'h']);
    expect(p.isUnstable('h', 'orders', 1)).to.equal(false);
    expect(p.isUnstable('g', 'orders', 0), 'producer 8 still has it').to.equal(true);
    expect(p.openProducers).to.deep.equal([8]);
  });

  it('an ABORT marker drops the records; a record after the marker is the next transaction\'s', () => {
    const p = new PendingTxnOffsets();
    p.add(7, key('g', 0), at(10, 100));
    p.add(7, key('g', 1), at(11, 105));
    const out = p.marker(7, 103, false);
    expect(out.committed).to.deep.equal([]);
    expect([...out.groups]).to.deep.equal(['g']);
    expect(p.isUnstable('g', 'orders', 0)).to.equal(false);
    expect(p.isUnstable('g', 'orders', 1), 'written after the marker').to.equal(true);
    expect(p.hasPending('g')).to.equal(true);
    expect(p.marker(7, 106, true).committed.map((c) => c.value.offset)).to.deep.equal([11]);
    expect(p.hasPending('g')).to.equal(false);
    expect(p.marker(9, 107, true)).to.deep.equal({ committed: [], groups: new Set() });
  });

  it('an append in flight is unstable; a failed one leaves nothing', () => {
    const p = new PendingTxnOffsets();
    const flight = p.start(7, [key('g', 0)]);
    expect(p.isUnstable('g', 'orders', 0)).to.equal(true);
    expect(p.hasPending('g')).to.equal(true);
    expect(p.finish(flight, null).committed).to.deep.equal([]);
    expect(p.isUnstable('g', 'orders', 0)).to.equal(false);
    expect(p.hasPending('g')).to.equal(false);
  });

  it('an acknowledged append stays pending until its marker', () => {
    const p = new PendingTxnOffsets();
    const flight = p.start(7, [key('g', 0), key('g', 1)]);
    const out = p.finish(flight, { baseOffset: 50, values: [{ ...key('g', 0), value: at(1, 50) }, { ...key('g', 1), value: at(2, 51) }] });
    expect(out.committed).to.deep.equal([]);
    expect(p.isUnstable('g', 'orders', 1)).to.equal(true);
    expect(p.marker(7, 52, true).committed.map((c) => [c.partition, c.value.logOffset])).to.deep.equal([[0, 50], [1, 51]]);
  });

  it('a marker that lands while the append that precedes it is in flight ends that append when it is answered', () => {
    const p = new PendingTxnOffsets();
    const committed = p.start(7, [key('g', 0)]);
    expect(p.markerSinceStart(committed)).to.equal(false);
    const other = p.start(8, [key('g', 1)]);
    p.marker(7, 60, true);
    expect(p.markerSinceStart(committed), 'a marker of its producer').to.equal(true);
    expect(p.markerSinceStart(other), 'of another producer').to.equal(false);
    p.finish(other, null);
    expect(p.finish(committed, { baseOffset: 59, values: [{ ...key('g', 0), value: at(4, 59) }] }).committed.map((c) => c.value.offset)).to.deep.equal([4]);
    expect(p.isUnstable('g', 'orders', 0)).to.equal(false);

    const aborted = p.start(7, [key('g', 0)]);
    p.marker(7, 70, false);
    const out = p.finish(aborted, { baseOffset: 69, values: [{ ...key('g', 0), value: at(5, 69) }] });
    expect(out.committed).to.deep.equal([]);
    expect([...out.groups]).to.deep.equal(['g']);
    expect(p.isUnstable('g', 'orders', 0)).to.equal(false);

    // Landed after the marker: the producer's next transaction.
    const next = p.start(7, [key('g', 0)]);
    p.marker(7, 80, true);
    expect(p.finish(next, { baseOffset: 81, values: [{ ...key('g', 0), value: at(6, 81) }] }).committed).to.deep.equal([]);
    expect(p.isUnstable('g', 'orders', 0)).to.equal(true);
  });
});
