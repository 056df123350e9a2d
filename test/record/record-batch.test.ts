import '../../src/node.js'; // Node runtime: native CRC32C and every codec
import { expect } from 'chai';
import fc from 'fast-check';
import {
  ATTRIBUTES_OFFSET, BATCH_LENGTH_OFFSET, CRC_OFFSET, CompressionType, LAST_OFFSET_DELTA_OFFSET,
  RECORD_BATCH_HEADER_BYTES, RECORD_COUNT_OFFSET, computeBatchCrc, stampBatch,
} from '../../src/record/batch-header.js';
import { CompressionRegistry, noneCodec } from '../../src/record/compression.js';
import { gzipCodec } from '../../src/record/node-codecs.js';
import {
  type BatchInput, type DecodedBatch, type RecordInput, decodeRecordBatch, decodeRecordBatches, encodeRecordBatch,
} from '../../src/record/record-batch.js';
import { Errors, SluiceError, isSluiceError } from '../../src/util/errors.js';
import { loadHexFixture } from './fixtures/load.js';
import { fcParams } from './fixtures/property.js';
import { asBuffer } from '../../src/util/node-bytes.js';

const b = (text: string): Buffer => Buffer.from(text, 'utf8');

function expectCorrupt(fn: () => unknown, messagePart = ''): SluiceError {
  try {
    fn();
  } catch (err) {
    expect(isSluiceError(err, Errors.CORRUPT_MESSAGE), `expected CORRUPT_MESSAGE, got ${String(err)}`).to.equal(true);
    expect((err as SluiceError).message).to.contain(messagePart);
    return err as SluiceError;
  }
  return expect.fail(`expected CORRUPT_MESSAGE${messagePart ? ` (${messagePart})` : ''}`);
}

/** The records as the decoder should return them, given the encoder's defaults. */
function expectedRecords(input: BatchInput): Array<Omit<RecordInput, 'timestamp'> & { offset: number; timestamp: number }> {
  const base = input.baseTimestamp ?? input.records[0]?.timestamp ?? 0;
  const times = input.records.map((r) => r.timestamp ?? base);
  const max = Math.max(...times);
  return input.records.map((r, i) => ({
    offset: (input.baseOffset ?? 0) + i,
    timestamp: input.timestampType === 'logAppend' ? max : times[i]!,
    key: r.key ?? null,
    value: r.value,
    headers: r.headers ?? [],
    attributes: 0,
  }));
}

function roundTrip(input: BatchInput): DecodedBatch {
  const buf = encodeRecordBatch(input);
  const batch = decodeRecordBatch(buf);
  expect(batch.sizeBytes).to.equal(buf.length);
  expect(batch.records).to.deep.equal(expectedRecords(input));
  expect(batch.header.recordCount).to.equal(input.records.length);
  expect(batch.header.lastOffsetDelta).to.equal(input.records.length - 1);
  return batch;
}

/** A batch with the given records section (bytes after the header) and a valid CRC. */
function craftBatch(section: Buffer, count: number, lastOffsetDelta = Math.max(count - 1, 0), attributes = 0): Buffer {
  const header = encodeRecordBatch({ records: [{ value: null }] }).subarray(0, RECORD_BATCH_HEADER_BYTES);
  const buf = Buffer.concat([header, section]);
  buf.writeInt32BE(buf.length - 12, BATCH_LENGTH_OFFSET);
  buf.writeInt16BE(attributes, ATTRIBUTES_OFFSET);
  buf.writeInt32BE(lastOffsetDelta, LAST_OFFSET_DELTA_OFFSET);
  buf.writeInt32BE(count, RECORD_COUNT_OFFSET);
  return reseal(buf);
}

function reseal(buf: Buffer): Buffer {
  buf.writeUInt32BE(computeBatchCrc(buf, 0), CRC_OFFSET);
  return buf;
}

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

describe('record/record-batch', () => {
  describe('golden bytes', () => {
    it('reproduces the kafkajs Produce v3 record batch byte for byte and decodes it', () => {
      const golden = loadHexFixture('kafkajs-produce-v3.hex');
      const h = (key: string, value: string) => ({ key, value: b(value) });
      const timestamp = 1509928155660;
      const input: BatchInput = {
        partitionLeaderEpoch: 0, producerEpoch: 0, baseSequence: 10,
        records: [
          { key: b('key-9d0f348cb2e730e1edc4'), value: b('some-value-a17b4c81f9ecd1e896e3'), timestamp, headers: [h('a', 'b'), h('c', 'd'), h('c', 'e')] },
          { key: b('key-c7073e965c34b4cc6442'), value: b('some-value-65df422070d7ad73914f'), timestamp, headers: [h('a', 'b')] },
          { key: b('key-1693b184a9b52dbe03bc'), value: b('some-value-3fcb65ffca087cba20ad'), timestamp, headers: [h('a', 'b')] },
        ],
      };
      const encoded = encodeRecordBatch(input);
      expect(Buffer.from(encoded).toString('hex')).to.equal(golden.toString('hex'));
      const batch = decodeRecordBatch(golden);
      expect(batch.records).to.deep.equal(expectedRecords(input));
      expect(batch.header).to.include({ crc: 0xd20a45ed, baseSequence: 10, producerEpoch: 0, maxTimestamp: timestamp });
      expect(batch.header.producerId).to.equal(-1n);
    });

    it('reproduces the hand-assembled spec batch (null key/value, unicode header, negative delta)', () => {
      const golden = loadHexFixture('spec-two-records.hex');
      const input: BatchInput = {
        baseOffset: 5, partitionLeaderEpoch: 7, producerId: 1000n, producerEpoch: 3, baseSequence: 42, isTransactional: true,
        records: [
          { key: null, value: b('hi'), timestamp: 1_700_000_000_000, headers: [{ key: 'é', value: null }] },
          { key: b('k'), value: null, timestamp: 1_699_999_999_900 },
        ],
      };
      expect(Buffer.from(encodeRecordBatch(input)).toString('hex')).to.equal(golden.toString('hex'));
      const batch = decodeRecordBatch(golden);
      expect(batch.records).to.deep.equal(expectedRecords(input));
      expect(batch.records.map((r) => r.offset)).to.deep.equal([5, 6]);
      expect(batch.header).to.include({ partitionLeaderEpoch: 7, attributes: 0x10, baseTimestamp: 1_700_000_000_000 });
    });

    it('decodes a gzip LogAppendTime batch written by another implementation', () => {
      const batch = decodeRecordBatch(loadHexFixture('kafkajs-gzip-log-append-time.hex'));
      expect(batch.header.attributes).to.equal(CompressionType.Gzip | 0x08);
      expect(batch.records).to.have.length(1);
      const [record] = batch.records;
      expect(record!.key!.toString()).to.equal('key-0');
      expect(record!.value!.toString()).to.equal('value-0-2020-08-14T17:13:08.682Z');
      expect(record!.timestamp).to.equal(1597425188809); // the batch's LogAppendTime, not the create time
      expect(record!.offset).to.equal(0);
    });
  });

  describe('round trips', () => {
    it('null and empty keys, values and header values', () => {
      roundTrip({ records: [
        { value: null },
        { key: null, value: Buffer.alloc(0) },
        { key: Buffer.alloc(0), value: null, headers: [{ key: '', value: null }, { key: 'x', value: Buffer.alloc(0) }] },
      ] });
    });

    it('headers with unicode keys, duplicates and binary values', () => {
      roundTrip({ records: [{ key: b('k'), value: b('v'), headers: [
        { key: 'trace-id', value: Buffer.from([0, 1, 255]) },
        { key: 'ключ 🔑 键', value: b('ünïcödé') },
        { key: 'trace-id', value: b('second') },
      ] }] });
    });

    it('large and negative timestamps, negative deltas, records without timestamps', () => {
      const big = Number.MAX_SAFE_INTEGER - 10;
      roundTrip({ records: [{ value: b('a'), timestamp: big }, { value: b('b'), timestamp: big - 2 ** 40 }, { value: b('c') }] });
      roundTrip({ records: [{ value: b('a'), timestamp: -1 }, { value: b('b'), timestamp: -5_000_000_000_000 }] });
      const batch = roundTrip({ baseTimestamp: 1000, records: [{ value: b('a') }, { value: b('b'), timestamp: 400 }] });
      expect(batch.header).to.include({ baseTimestamp: 1000, maxTimestamp: 1000 });
      expect(roundTrip({ records: [{ value: b('z') }] }).header.baseTimestamp).to.equal(0);
    });

    it('sets maxTimestamp to the largest record timestamp', () => {
      const batch = roundTrip({ records: [{ value: null, timestamp: 50 }, { value: null, timestamp: 90 }, { value: null, timestamp: 70 }] });
      expect(batch.header).to.include({ baseTimestamp: 50, maxTimestamp: 90 });
    });

    it('one record and 10,000 records', () => {
      roundTrip({ records: [{ key: b('only'), value: b('one') }] });
      const records: RecordInput[] = [];
      for (let i = 0; i < 10_000; i++) {
        records.push({ key: b(`key-${i}`), value: b(`value-${i}`.repeat(i % 7)), timestamp: 1_700_000_000_000 + i * 3 - (i % 5) * 1000 });
      }
      const batch = roundTrip({ baseOffset: 123_456_789, records });
      expect(batch.records[9_999]!.offset).to.equal(123_456_789 + 9_999);
    });

    it('records whose sizes cross the varint length boundaries', () => {
      for (const size of [0, 57, 58, 63, 64, 127, 128, 8191, 8192, 70_000]) {
        roundTrip({ records: [{ key: Buffer.alloc(size % 3, 1), value: Buffer.alloc(size, 0xab) }] });
      }
    });

    it('gzip: compressed section, same records back', () => {
      const records: RecordInput[] = Array.from({ length: 500 }, (_, i) => ({ key: b(`k${i % 10}`), value: b('repetitive payload '.repeat(4)) }));
      const plain = encodeRecordBatch({ records });
      const packed = encodeRecordBatch({ records, compression: CompressionType.Gzip });
      expect(packed.length).to.be.lessThan(plain.length / 5);
      expect(Buffer.from(packed).readInt16BE(ATTRIBUTES_OFFSET) & 0x07).to.equal(CompressionType.Gzip);
      expect(Buffer.from(packed.subarray(RECORD_BATCH_HEADER_BYTES, RECORD_BATCH_HEADER_BYTES + 2)).toString('hex')).to.equal('1f8b');
      roundTrip({ records, compression: CompressionType.Gzip });
    });

    it('batch attributes and producer fields', () => {
      const input: BatchInput = {
        records: [{ value: b('x'), timestamp: 10 }, { value: b('y'), timestamp: 20 }],
        producerId: 9_007_199_254_740_993n, producerEpoch: 32767, baseSequence: 2147483647,
        isTransactional: true, isControl: true, timestampType: 'logAppend', partitionLeaderEpoch: 3,
      };
      const { header } = roundTrip(input);
      expect(header.attributes).to.equal(0x08 | 0x10 | 0x20);
      expect(header).to.include({ producerEpoch: 32767, baseSequence: 2147483647, partitionLeaderEpoch: 3, magic: 2 });
      expect(header.producerId).to.equal(9_007_199_254_740_993n);
      expect(roundTrip({ records: [{ value: null }] }).header).to.include({ producerEpoch: -1, baseSequence: -1, partitionLeaderEpoch: -1, attributes: 0 });
    });

    it('decodes keys and values as views into the input, without copying', () => {
      const buf = encodeRecordBatch({ records: [{ key: b('kk'), value: b('vv') }] });
      const [record] = decodeRecordBatch(buf).records;
      expect(record!.value!.buffer).to.equal(buf.buffer);
      expect(record!.key!.byteOffset).to.be.greaterThan(buf.byteOffset + RECORD_BATCH_HEADER_BYTES - 1);
    });

    it('decodes a batch that starts at an offset inside a larger buffer', () => {
      const batch = encodeRecordBatch({ records: [{ value: b('x') }] });
      const buf = Buffer.concat([Buffer.alloc(13, 7), batch, Buffer.alloc(5, 9)]);
      expect(decodeRecordBatch(buf, 13).records[0]!.value!.toString()).to.equal('x');
    });

    it('refuses an empty record list (caller bug)', () => {
      expect(() => encodeRecordBatch({ records: [] })).to.throw('at least one record');
    });
  });

  describe('corruption', () => {
    const sample = (): Buffer => asBuffer(encodeRecordBatch({ baseOffset: 3, records: [
      { key: b('key'), value: b('value'), timestamp: 1_700_000_000_000, headers: [{ key: 'h', value: b('v') }] },
      { key: null, value: b('second'), timestamp: 1_700_000_000_100 },
    ] }));

    it('every flipped byte in the CRC range is caught as a CRC mismatch', () => {
      const original = sample();
      for (let pos = ATTRIBUTES_OFFSET; pos < original.length; pos++) {
        for (const mask of [0x01, 0x80, 0xff]) {
          const buf = Buffer.from(original);
          buf[pos]! ^= mask;
          expectCorrupt(() => decodeRecordBatch(buf), 'CRC mismatch');
        }
      }
    });

    it('a flipped CRC byte or magic byte is caught', () => {
      for (let pos = CRC_OFFSET; pos < ATTRIBUTES_OFFSET; pos++) {
        const buf = sample();
        buf[pos]! ^= 0x10;
        expectCorrupt(() => decodeRecordBatch(buf), 'CRC mismatch');
      }
      const buf = sample();
      buf[16] = 1;
      expectCorrupt(() => decodeRecordBatch(buf), 'magic');
    });

    it('every truncation is caught', () => {
      const original = sample();
      for (let length = 0; length < original.length; length++) {
        expectCorrupt(() => decodeRecordBatch(original.subarray(0, length)), 'truncated');
      }
    });

    it('stamping base offset and leader epoch keeps the CRC valid and moves the offsets', () => {
      const buf = sample();
      stampBatch(buf, 0, 1_000_000, 42);
      const batch = decodeRecordBatch(buf);
      expect(batch.records.map((r) => r.offset)).to.deep.equal([1_000_000, 1_000_001]);
      expect(batch.header.partitionLeaderEpoch).to.equal(42);
    });

    it('record count that disagrees with the bytes', () => {
      const good = sample();
      const section = good.subarray(RECORD_BATCH_HEADER_BYTES);
      expectCorrupt(() => decodeRecordBatch(craftBatch(section, 3)), 'truncated');
      expectCorrupt(() => decodeRecordBatch(craftBatch(section, 1, 1)), 'trailing bytes');
      expectCorrupt(() => decodeRecordBatch(craftBatch(section, 0, 0)), 'trailing bytes');
      expectCorrupt(() => decodeRecordBatch(craftBatch(section, 1_000_000)), 'cannot fit');
    });

    it('trailing garbage inside a batch', () => {
      const section = Buffer.concat([sample().subarray(RECORD_BATCH_HEADER_BYTES), Buffer.from([0])]);
      expectCorrupt(() => decodeRecordBatch(craftBatch(section, 2)), '1 trailing bytes');
    });

    // One record: length, attributes, timestampDelta, offsetDelta, key, value, headers.
    const records: Array<[string, string, string]> = [
      ['key length -2', '0e 00 00 00 03 02 6b 6b 6b 6b 6b 6b 6b 00', 'key length -2'],
      ['value length -3', '0c 00 00 00 01 05 61 61 61 61 61 61 00', 'value length -3'],
      ['negative header count', '0c 00 00 00 01 01 01', 'header count -1'],
      ['header count past the record', '0e 00 00 00 01 01 14 00 01 00 01 00 01 00', 'header count 10'],
      ['null header key', '10 00 00 00 01 01 02 01 01', 'header 0 key length -1'],
      ['varint longer than 5 bytes', '14 00 00 00 ff ff ff ff ff 01 01 00 00 00 00 00 00 00 00 00', 'varint'],
      ['varlong beyond the safe range', '18 00 ff ff ff ff ff ff ff ff ff 01 00 01 01 00 00 00 00 00 00 00 00 00', 'safe integer'],
      ['record length below the minimum', '0a 00 00 00 01 01 00', 'length 5'],
      ['record length past the section', '20 00 00 00 01 01 00', 'length 16'],
      ['fields running past the record length', '0c 00 00 00 01 08 61 61 61 61 00 00 00', 'truncated'],
      ['record length longer than its fields', '10 00 00 00 01 01 00 00 00 00', 'bytes past its fields'],
      ['negative record length', '01 00 00 00 01 01 00', 'length -1'],
      ['negative offset delta', '0c 00 00 01 01 01 00', 'offset delta -1'],
    ];
    for (const [what, recordHex, message] of records) {
      it(`rejects a record with ${what}`, () => {
        expectCorrupt(() => decodeRecordBatch(craftBatch(hex(recordHex), 1)), message);
      });
    }

    it('rejects offset deltas that do not increase or pass lastOffsetDelta', () => {
      const record = (offsetDeltaZigzag: string) => `0c 00 00 ${offsetDeltaZigzag} 01 01 00`;
      expectCorrupt(() => decodeRecordBatch(craftBatch(hex(record('02') + record('02')), 2)), 'offset delta 1 after 1');
      expectCorrupt(() => decodeRecordBatch(craftBatch(hex(record('04') + record('02')), 2, 2)), 'offset delta 1 after 2');
      expectCorrupt(() => decodeRecordBatch(craftBatch(hex(record('00') + record('08')), 2, 3)), 'offset delta 4');
      // Gaps (a compacted batch) are fine.
      const gapped = decodeRecordBatch(craftBatch(hex(record('00') + record('08')), 2, 4));
      expect(gapped.records.map((r) => r.offset)).to.deep.equal([0, 4]);
    });

    it('decodes an empty (fully compacted) batch to no records', () => {
      const batch = decodeRecordBatch(craftBatch(Buffer.alloc(0), 0, 7, CompressionType.Gzip));
      expect(batch.records).to.deep.equal([]);
      expect(batch.sizeBytes).to.equal(RECORD_BATCH_HEADER_BYTES);
    });
  });

  describe('compression registry', () => {
    const section = hex('0c 00 00 00 01 01 00');

    it('names unsupported codecs in the error', () => {
      expectCorrupt(() => decodeRecordBatch(craftBatch(section, 1, 0, 6)), 'compression type 6 not supported');
    });

    it('reports a broken gzip stream with a valid CRC as corrupt', () => {
      const err = expectCorrupt(() => decodeRecordBatch(craftBatch(section, 1, 0, CompressionType.Gzip)), 'gzip decompression failed');
      expect(err.retriable).to.equal(true);
    });

    it('refuses to inflate past decompressedBytesMax', () => {
      const input: BatchInput = { records: [{ value: Buffer.alloc(100_000) }], compression: CompressionType.Gzip };
      const small = new CompressionRegistry(10_000).register(CompressionType.Gzip, gzipCodec);
      const buf = encodeRecordBatch(input, small);
      expectCorrupt(() => decodeRecordBatch(buf, 0, small), 'gzip');
      expect(decodeRecordBatch(buf).records[0]!.value!.length).to.equal(100_000);
    });

    it('takes injected codecs', () => {
      const reverse = { compress: (buf: Buffer) => Buffer.from(buf).reverse(), decompress: (buf: Buffer) => Buffer.from(buf).reverse() };
      const registry = new CompressionRegistry().register(CompressionType.None, noneCodec).register(CompressionType.Snappy, reverse);
      const input: BatchInput = { records: [{ key: b('k'), value: b('v') }], compression: CompressionType.Snappy };
      const buf = encodeRecordBatch(input, registry);
      expect(decodeRecordBatch(buf, 0, registry).records).to.deep.equal(expectedRecords(input));
      expectCorrupt(() => decodeRecordBatch(buf), 'snappy decompression failed');
      expect(() => encodeRecordBatch({ ...input, compression: CompressionType.Gzip }, registry)).to.throw('not registered');
    });
  });

  describe('decodeRecordBatches', () => {
    it('splits a concatenation of whole batches', () => {
      const batches = [0, 10, 20].map((baseOffset) => encodeRecordBatch({ baseOffset, records: [{ value: b(`${baseOffset}`) }, { value: null }] }));
      const decoded = decodeRecordBatches(Buffer.concat(batches));
      expect(decoded.map((d) => d.records.map((r) => r.offset))).to.deep.equal([[0, 1], [10, 11], [20, 21]]);
      expect(decodeRecordBatches(Buffer.alloc(0))).to.deep.equal([]);
    });

    it('rejects a partial trailing batch or trailing junk', () => {
      const one = encodeRecordBatch({ records: [{ value: b('x') }] });
      expectCorrupt(() => decodeRecordBatches(Buffer.concat([one, one.subarray(0, 30)])), 'truncated');
      expectCorrupt(() => decodeRecordBatches(Buffer.concat([one, Buffer.alloc(70)])), '');
    });
  });

  describe('properties', () => {
    const bytes = fc.option(fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)), { nil: null });
    const header = fc.record({ key: fc.string({ unit: 'binary', maxLength: 8 }), value: bytes });
    const record = fc.record({
      key: fc.option(bytes, { nil: undefined }),
      value: bytes,
      headers: fc.option(fc.array(header, { maxLength: 3 }), { nil: undefined }),
      timestamp: fc.option(fc.integer({ min: -(2 ** 50), max: 2 ** 50 }), { nil: undefined }),
    }, { requiredKeys: ['value'] });
    const batch = fc.record({
      records: fc.array(record, { minLength: 1, maxLength: 20 }),
      baseOffset: fc.option(fc.integer({ min: 0, max: 2 ** 52 }), { nil: undefined }),
      compression: fc.constantFrom(CompressionType.None, CompressionType.Gzip),
      timestampType: fc.constantFrom<'create' | 'logAppend'>('create', 'logAppend'),
    });

    it('decode(encode(x)) equals x', () => {
      fc.assert(fc.property(batch, (input) => {
        roundTrip(input);
      }), fcParams(300));
    });

    it('mutated bytes decode to the same records or fail with CORRUPT_MESSAGE', () => {
      const mutation = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 3 });
      const cut = fc.option(fc.nat(), { nil: undefined });
      fc.assert(fc.property(batch, mutation, cut, (input, changes, cutAt) => {
        const original = encodeRecordBatch(input);
        let buf = Buffer.from(original);
        for (const [at, mask] of changes) buf[at % buf.length]! ^= mask;
        if (cutAt !== undefined) buf = buf.subarray(0, cutAt % (buf.length + 1));
        let decoded: DecodedBatch;
        try {
          decoded = decodeRecordBatch(buf);
        } catch (err) {
          expect(isSluiceError(err, Errors.CORRUPT_MESSAGE), String(err)).to.equal(true);
          return;
        }
        // Only bytes outside the CRC'd range (base offset, length, epoch, magic, CRC) may change undetected,
        // and the records (apart from their offsets, shifted by a new base offset) must be untouched.
        const crcRangeChanged = buf.length !== original.length ||
          !buf.subarray(ATTRIBUTES_OFFSET).equals(original.subarray(ATTRIBUTES_OFFSET));
        expect(crcRangeChanged).to.equal(false);
        const shift = decoded.header.baseOffset - (input.baseOffset ?? 0);
        const expected = expectedRecords(input).map((r) => ({ ...r, offset: r.offset + shift }));
        expect(decoded.records).to.deep.equal(expected);
      }), fcParams(1000));
    });
  });
});
