import '../../src/node.js'; // Node runtime: native CRC32C and every codec
import { expect } from 'chai';
import { CompressionType, stampBatch } from '../../src/record/batch-header.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { decodeFetchedRecords, encodeMessages, type ConsumedRecord } from '../../src/client/records.js';
import { Errors, isSluiceError } from '../../src/util/errors.js';
import { utf8Decode } from '../../src/util/bytes.js';
import { asBuffer } from '../../src/util/node-bytes.js';

const T0 = 1_700_000_000_000;

const text = (b: Uint8Array | null) => (b === null ? null : utf8Decode(b));
const simple = (r: ConsumedRecord) => ({
  offset: r.offset, timestamp: r.timestamp, key: text(r.key), value: text(r.value),
  headers: r.headers.map((h) => [h.key, text(h.value)]),
});

/** A batch as a leader would store it: encoded, then stamped with its base offset. */
function stored(values: string[], baseOffset: number): Buffer {
  const batch = asBuffer(encodeMessages(values.map((value) => ({ value })), { timestampMs: T0 }));
  stampBatch(batch, 0, baseOffset, 1);
  return batch;
}

describe('client: records helpers', () => {
  it('round-trips keys, values, nulls, headers and timestamps', () => {
    const batch = encodeMessages([
      { key: 'k', value: 'v', headers: { a: '1', b: null }, timestamp: T0 + 5 },
      { value: Buffer.from([0, 1, 255]) },
      { key: null, value: null, headers: [{ key: 'dup', value: 'x' }, { key: 'dup', value: new Uint8Array([7]) }] },
    ], { timestampMs: T0 });
    const records = decodeFetchedRecords(batch, 0);
    expect(records.map(simple)).to.deep.equal([
      { offset: 0, timestamp: T0 + 5, key: 'k', value: 'v', headers: [['a', '1'], ['b', null]] },
      { offset: 1, timestamp: T0, key: null, value: '\u0000\u0001\ufffd', headers: [] },
      { offset: 2, timestamp: T0, key: null, value: null, headers: [['dup', 'x'], ['dup', '\u0007']] },
    ]);
    expect([...records[1]!.value!]).to.deep.equal([0, 1, 255]);
  });

  it('round-trips a compressed batch', () => {
    const values = Array.from({ length: 50 }, (_, i) => `value-${i}-${'z'.repeat(40)}`);
    const batch = encodeMessages(values.map((value) => ({ value })), { timestampMs: T0, compression: CompressionType.Gzip });
    expect(batch.length).to.be.lessThan(values.join('').length);
    expect(decodeFetchedRecords(batch, 0).map((r) => text(r.value))).to.deep.equal(values);
  });

  it('skips records below the fetch offset across concatenated batches', () => {
    const fetched = Buffer.concat([stored(['a', 'b', 'c'], 10), stored(['d', 'e'], 13)]);
    expect(decodeFetchedRecords(fetched, 12).map((r) => [r.offset, text(r.value)])).to.deep.equal([[12, 'c'], [13, 'd'], [14, 'e']]);
    expect(decodeFetchedRecords(fetched, 14).map((r) => r.offset)).to.deep.equal([14]);
    expect(decodeFetchedRecords(fetched, 15)).to.deep.equal([]);
    expect(decodeFetchedRecords(new Uint8Array(0), 0)).to.deep.equal([]);
  });

  it('decodes a plain Uint8Array (as msgpack hands it over) without copying', () => {
    const batch = stored(['only'], 3);
    const view = new Uint8Array(batch.buffer, batch.byteOffset, batch.byteLength);
    const [record] = decodeFetchedRecords(view, 0);
    expect(record!.offset).to.equal(3);
    expect(record!.value!.buffer).to.equal(batch.buffer);
  });

  it('skips control batches', () => {
    const control = encodeRecordBatch({ records: [{ key: Buffer.from([0, 0, 0, 0]), value: null }], baseOffset: 2, isControl: true });
    const fetched = Buffer.concat([stored(['a', 'b'], 0), control, stored(['c'], 3)]);
    expect(decodeFetchedRecords(fetched, 0).map((r) => [r.offset, text(r.value)])).to.deep.equal([[0, 'a'], [1, 'b'], [3, 'c']]);
  });

  it('throws CORRUPT_MESSAGE for a damaged batch', () => {
    const batch = stored(['a', 'b'], 0);
    batch[batch.length - 1]! ^= 0xff;
    let err: unknown;
    try {
      decodeFetchedRecords(batch, 0);
    } catch (e) {
      err = e;
    }
    expect(isSluiceError(err, Errors.CORRUPT_MESSAGE)).to.equal(true);
  });
});
