// Transaction markers (src/record/control-batch.ts) on bytes: Kafka's layout
// (attributes, producer fields, the key and value of the one control record),
// round trips, and refusals of what is not a marker.

import { expect } from 'chai';
import {
  ATTRIBUTES_OFFSET, BASE_SEQUENCE_OFFSET, CONTROL_FLAG_MASK, PRODUCER_EPOCH_OFFSET, PRODUCER_ID_OFFSET, RECORD_COUNT_OFFSET, TRANSACTIONAL_FLAG_MASK,
  readBatchHeader,
} from '../../src/record/batch-header.js';
import { CONTROL_TYPE_ABORT, CONTROL_TYPE_COMMIT, encodeTxnMarker, isControlBatch, isTransactionalBatch, parseControlBatch } from '../../src/record/control-batch.js';
import { decodeRecordBatch, encodeRecordBatch } from '../../src/record/record-batch.js';
import { isSluiceError } from '../../src/util/errors.js';
import { asBuffer } from '../../src/util/node-bytes.js';

function corrupt(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (isSluiceError(err)) return err.errorName;
    throw err;
  }
  return 'no error';
}

describe('record: control batches (transaction markers)', () => {
  it('encodes a marker as Kafka lays it out', () => {
    const buf = asBuffer(encodeTxnMarker({ producerId: 77, producerEpoch: 3, committed: true, coordinatorEpoch: 9, timestampMs: 1234 }));
    const attrs = buf.readInt16BE(ATTRIBUTES_OFFSET);
    expect(attrs & (CONTROL_FLAG_MASK | TRANSACTIONAL_FLAG_MASK)).to.equal(CONTROL_FLAG_MASK | TRANSACTIONAL_FLAG_MASK);
    expect(attrs & 0x07, 'uncompressed').to.equal(0);
    expect(buf.readBigInt64BE(PRODUCER_ID_OFFSET)).to.equal(77n);
    expect(buf.readInt16BE(PRODUCER_EPOCH_OFFSET)).to.equal(3);
    expect(buf.readInt32BE(BASE_SEQUENCE_OFFSET)).to.equal(-1);
    expect(buf.readInt32BE(RECORD_COUNT_OFFSET)).to.equal(1);
    const batch = decodeRecordBatch(buf);
    expect(batch.header.maxTimestamp).to.equal(1234);
    const r = batch.records[0]!;
    expect(Buffer.from(r.key!).toString('hex'), 'key: version 0, type 1 (COMMIT)').to.equal('00000001');
    expect(Buffer.from(r.value!).toString('hex'), 'value: version 0, coordinator epoch 9').to.equal('000000000009');
    expect(isControlBatch(buf) && isTransactionalBatch(buf)).to.equal(true);
  });

  it('round-trips commit and abort markers', () => {
    for (const committed of [true, false]) {
      for (const coordinatorEpoch of [0, 5, 0x7fffffff]) {
        const buf = encodeTxnMarker({ producerId: 1, producerEpoch: 0, committed, coordinatorEpoch, timestampMs: 0 });
        expect(parseControlBatch(buf)).to.deep.equal({ kind: 'marker', committed, coordinatorEpoch });
      }
    }
    const abort = asBuffer(encodeTxnMarker({ producerId: 1, producerEpoch: 0, committed: false, coordinatorEpoch: 0, timestampMs: 0 }));
    expect(Buffer.from(decodeRecordBatch(abort).records[0]!.key!).readInt16BE(2)).to.equal(CONTROL_TYPE_ABORT);
    expect(CONTROL_TYPE_COMMIT).to.equal(1);
  });

  it('parses a marker at a position inside a larger buffer', () => {
    const data = asBuffer(encodeRecordBatch({ records: [{ value: Buffer.from('x') }] }));
    const marker = asBuffer(encodeTxnMarker({ producerId: 5, producerEpoch: 1, committed: false, coordinatorEpoch: 2, timestampMs: 0 }));
    const both = Buffer.concat([data, marker, data]);
    expect(parseControlBatch(both, data.length)).to.deep.equal({ kind: 'marker', committed: false, coordinatorEpoch: 2 });
  });

  it('reads other control types as other, and refuses what is not a marker', () => {
    const leaderChange = encodeRecordBatch({
      records: [{ key: Uint8Array.from([0, 0, 0, 2]), value: Uint8Array.from([0, 0]) }], isControl: true, producerId: -1n,
    });
    expect(parseControlBatch(leaderChange)).to.deep.equal({ kind: 'other', type: 2 });
    const data = encodeRecordBatch({ records: [{ value: Buffer.from('x') }] });
    expect(corrupt(() => parseControlBatch(data))).to.equal('CORRUPT_MESSAGE');
    const two = encodeRecordBatch({ records: [{ key: Uint8Array.from([0, 0, 0, 1]), value: new Uint8Array(6) }, { key: Uint8Array.from([0, 0, 0, 1]), value: new Uint8Array(6) }], isControl: true });
    expect(corrupt(() => parseControlBatch(two))).to.equal('CORRUPT_MESSAGE');
    const shortKey = encodeRecordBatch({ records: [{ key: Uint8Array.from([0, 0]), value: new Uint8Array(6) }], isControl: true });
    expect(corrupt(() => parseControlBatch(shortKey))).to.equal('CORRUPT_MESSAGE');
    const shortValue = encodeRecordBatch({ records: [{ key: Uint8Array.from([0, 0, 0, 0]), value: new Uint8Array(3) }], isControl: true });
    expect(corrupt(() => parseControlBatch(shortValue))).to.equal('CORRUPT_MESSAGE');
    const marker = asBuffer(encodeTxnMarker({ producerId: 1, producerEpoch: 0, committed: true, coordinatorEpoch: 0, timestampMs: 0 }));
    marker.writeUInt8(marker.readUInt8(marker.length - 1) ^ 0xff, marker.length - 1);
    expect(corrupt(() => parseControlBatch(marker)), 'a bad CRC').to.equal('CORRUPT_MESSAGE');
    expect(readBatchHeader(marker).producerId).to.equal(1n);
  });
});
