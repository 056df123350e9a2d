// The __transaction_state record codec on bytes: every state round-trips, and
// a record that breaks the format or the state machine's invariants is
// refused with CORRUPT_MESSAGE (the loader skips it) rather than loaded.

import { expect } from 'chai';
import { Packr } from 'msgpackr';
import { decodeTxnKey, decodeTxnValue, txnKey, txnValue } from '../../src/transactions/records.js';
import type { TxnMetadata } from '../../src/transactions/state-machine.js';

const packr = new Packr({ useRecords: false, moreTypes: false, variableMapSize: true });

const ONGOING: TxnMetadata = {
  transactionalId: 'tx-1', producerId: 5, producerEpoch: 2, lastProducer: { producerId: 5, producerEpoch: 1 }, timeoutMs: 60_000, state: 'Ongoing',
  partitions: [{ topic: 'a', partition: 0 }, { topic: 'a', partition: 3 }, { topic: 'b', partition: 1 }], markers: null,
  startTimeMs: 1_700_000_000_000, updateTimeMs: 1_700_000_000_500, coordinatorAborted: false,
};

function raw(over: Record<string, unknown>): Uint8Array {
  const base = packr.unpack(txnValue(ONGOING)) as Record<string, unknown>;
  return packr.pack({ ...base, ...over });
}

describe('__transaction_state records', () => {
  it('keys carry the transactional id; unknown key kinds are skipped, malformed ones refused', () => {
    expect(decodeTxnKey(txnKey('tx-1'))).to.equal('tx-1');
    expect(decodeTxnKey(packr.pack([9, 'x']))).to.equal(null);
    for (const bad of [packr.pack([0]), packr.pack([0, '']), packr.pack('tx'), packr.pack([0, 'a', 'b']), new Uint8Array([0xc1])]) {
      expect(() => decodeTxnKey(bad)).to.throw(/__transaction_state record/);
    }
  });

  it('round-trips every state', () => {
    const states: TxnMetadata[] = [
      ONGOING,
      { ...ONGOING, state: 'PrepareCommit', markers: { producerId: 5, producerEpoch: 3 }, producerEpoch: 3 },
      { ...ONGOING, state: 'PrepareAbort', markers: { producerId: 5, producerEpoch: 3 }, producerEpoch: 3, coordinatorAborted: true },
      { ...ONGOING, state: 'CompleteCommit', partitions: [], startTimeMs: -1, markers: { producerId: 5, producerEpoch: 2 } },
      { ...ONGOING, state: 'CompleteAbort', partitions: [], startTimeMs: -1, markers: { producerId: 5, producerEpoch: 2 } },
      { ...ONGOING, state: 'Empty', partitions: [], startTimeMs: -1, lastProducer: null },
    ];
    for (const m of states) expect(decodeTxnValue('tx-1', txnValue(m))).to.deep.equal(m);
  });

  it('refuses values that break the format or the invariants', () => {
    const bad: Array<[string, Record<string, unknown>]> = [
      ['version', { v: 2 }],
      ['state', { state: 'Frozen' }],
      ['transient state', { state: 'PrepareEpochFence' }],
      ['epoch beyond int16', { producerEpoch: 40_000 }],
      ['negative producer id', { producerId: -1 }],
      ['half a last producer', { lastProducerId: 5, lastProducerEpoch: -1 }],
      ['unsorted partitions', { partitions: [['b', 1], ['a', 0]] }],
      ['duplicate partitions', { partitions: [['a', 0], ['a', 0]] }],
      ['bad partition', { partitions: [['a', -1]] }],
      ['Empty with partitions', { state: 'Empty', startTimeMs: -1 }],
      ['Prepare without markers', { state: 'PrepareCommit' }],
      ['Ongoing with markers', { markerProducerId: 5, markerEpoch: 2 }],
      ['Ongoing without a start', { startTimeMs: -1 }],
      ['timeout', { timeoutMs: 0 }],
      ['flag', { coordinatorAborted: 'no' }],
    ];
    for (const [what, over] of bad) expect(() => decodeTxnValue('tx-1', raw(over)), what).to.throw(/__transaction_state record/);
    expect(() => decodeTxnValue('tx-1', packr.pack([1, 2]))).to.throw(/not a map/);
  });
});
