// The producer's encoder (src/record/batch-builder.ts) against the codec it
// must agree with byte for byte (record-batch.ts encodeRecordBatch), on
// random records; re-identification (same bodies, new header); and the
// sizes the producer's batchBytes and requestBytesMax accounting reads.

import '../../src/node.js'; // Node runtime: native CRC32C and every codec
import { expect } from 'chai';
import fc from 'fast-check';
import {
  BASE_SEQUENCE_OFFSET, CRC_OFFSET, CompressionType, PRODUCER_EPOCH_OFFSET, PRODUCER_ID_OFFSET, RECORD_BATCH_HEADER_BYTES,
  TRANSACTIONAL_FLAG_MASK, readBatchHeader,
} from '../../src/record/batch-header.js';
import { RecordBatchBuilder, type BodyBytes } from '../../src/record/batch-builder.js';
import { decodeRecordBatch, encodeRecordBatch, type RecordHeader, type RecordInput } from '../../src/record/record-batch.js';
import { utf8Encode } from '../../src/util/bytes.js';
import { fcParams } from './fixtures/property.js';

/** A record as the producer hands it to the builder: strings allowed, headers as a list or a map. */
interface Appended {
  key: BodyBytes;
  value: BodyBytes;
  headers: Array<{ key: string; value: BodyBytes }> | Record<string, BodyBytes> | undefined;
  timestamp: number;
}

const bytesArb: fc.Arbitrary<BodyBytes> = fc.oneof(
  fc.constant(null),
  fc.uint8Array({ maxLength: 300 }),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
);
const headerListArb = fc.array(fc.record({ key: fc.string({ unit: 'binary', maxLength: 12 }), value: bytesArb }), { maxLength: 4 });
const headerMapArb = fc.dictionary(fc.string({ maxLength: 8 }), bytesArb, { maxKeys: 3 })
  // Object.keys order puts integer-like keys first; the codec sees the same order through toInput.
  .map((d) => Object.assign(Object.create(null) as Record<string, BodyBytes>, d));
const appendedArb = (base: number): fc.Arbitrary<Appended> => fc.record({
  key: bytesArb,
  value: bytesArb,
  headers: fc.oneof(fc.constant(undefined), headerListArb, headerMapArb),
  // Around the first record's time, both sides of it (negative deltas), and far from it (long varlongs).
  timestamp: fc.oneof(fc.integer({ min: -100, max: 100 }), fc.integer({ min: -(2 ** 40), max: 2 ** 40 })).map((d) => base + d),
});
const recordsArb = fc.integer({ min: 0, max: 2 ** 45 }).chain((base) => fc.array(appendedArb(base), { minLength: 1, maxLength: 40 }));
const compressionArb = fc.constantFrom(CompressionType.None, CompressionType.Gzip, CompressionType.Snappy, CompressionType.Lz4, CompressionType.Zstd);
const identityArb = fc.record({
  producerId: fc.bigInt({ min: 0n, max: 2n ** 62n }),
  producerEpoch: fc.integer({ min: 0, max: 0x7fff }),
  baseSequence: fc.integer({ min: 0, max: 0x7fffffff }),
});

const toBytes = (b: BodyBytes): Uint8Array | null => (typeof b === 'string' ? utf8Encode(b) : b);

/** The same record as the codec's input (what the producer built per record before). */
function toInput(r: Appended): RecordInput {
  let headers: RecordHeader[] = [];
  if (Array.isArray(r.headers)) headers = r.headers.map((h) => ({ key: h.key, value: toBytes(h.value) }));
  else if (r.headers !== undefined) headers = Object.keys(r.headers).map((k) => ({ key: k, value: toBytes((r.headers as Record<string, BodyBytes>)[k]!) }));
  return { key: toBytes(r.key), value: toBytes(r.value), headers, timestamp: r.timestamp };
}

function build(records: Appended[], hint = 64): { builder: RecordBatchBuilder; sizes: number[] } {
  const builder = new RecordBatchBuilder(hint, 16); // small: the buffer grows many times
  const sizes = records.map((r) => builder.append(r.key, r.value, r.headers, r.timestamp));
  return { builder, sizes };
}

describe('record/batch-builder', () => {
  it('writes exactly the bytes encodeRecordBatch writes for the same records, with and without compression', () => {
    fc.assert(fc.property(recordsArb, compressionArb, fc.option(identityArb), fc.boolean(), (records, compression, identity, isTransactional) => {
      const { builder } = build(records);
      const opts = { compression, isTransactional, ...(identity ?? {}) };
      const ours = builder.build(opts);
      const theirs = encodeRecordBatch({ records: records.map(toInput), ...opts });
      expect(Buffer.from(ours).equals(Buffer.from(theirs))).to.equal(true);
      const decoded = decodeRecordBatch(ours);
      expect(decoded.records.map((r) => r.timestamp)).to.deep.equal(records.map((r) => r.timestamp));
      expect((decoded.header.attributes & TRANSACTIONAL_FLAG_MASK) !== 0).to.equal(isTransactional);
    }), fcParams(200));
  });

  it('re-identified, keeps the record bodies and changes only the header (ids, sequence, CRC)', () => {
    fc.assert(fc.property(recordsArb, compressionArb, identityArb, identityArb, (records, compression, first, second) => {
      const { builder } = build(records);
      const a = Uint8Array.from(builder.build({ compression, ...first })); // a copy: an uncompressed build is rewritten in place
      const b = builder.build({ compression, ...second });
      expect(b.length).to.equal(a.length);
      expect(Buffer.from(b.subarray(RECORD_BATCH_HEADER_BYTES)).equals(Buffer.from(a.subarray(RECORD_BATCH_HEADER_BYTES))), 'same bodies').to.equal(true);
      const identityFields = new Set<number>();
      for (const [at, n] of [[CRC_OFFSET, 4], [PRODUCER_ID_OFFSET, 8], [PRODUCER_EPOCH_OFFSET, 2], [BASE_SEQUENCE_OFFSET, 4]] as const) {
        for (let i = 0; i < n; i++) identityFields.add(at + i);
      }
      for (let i = 0; i < RECORD_BATCH_HEADER_BYTES; i++) if (!identityFields.has(i)) expect(b[i], `header byte ${i}`).to.equal(a[i]);
      const h = readBatchHeader(b);
      expect([h.producerId, h.producerEpoch, h.baseSequence]).to.deep.equal([second.producerId, second.producerEpoch, second.baseSequence]);
      // And it is what the codec writes for the records under the second identity.
      expect(Buffer.from(b).equals(Buffer.from(encodeRecordBatch({ records: records.map(toInput), compression, ...second })))).to.equal(true);
    }), fcParams(100));
  });

  it('counts the real encoded sizes: per record, in total, and against a limit', () => {
    fc.assert(fc.property(recordsArb, (records) => {
      const { builder, sizes } = build(records);
      const total = sizes.reduce((n, s) => n + s, 0);
      expect(builder.recordsBytes).to.equal(total);
      expect(builder.uncompressedBytes).to.equal(RECORD_BATCH_HEADER_BYTES + total);
      expect(builder.count).to.equal(records.length);
      expect(builder.build().length).to.equal(RECORD_BATCH_HEADER_BYTES + total);
      // Each record's size is what the codec adds for it.
      const prefix = (n: number) => encodeRecordBatch({ records: records.slice(0, n).map(toInput) }).length;
      expect(prefix(records.length) - RECORD_BATCH_HEADER_BYTES).to.equal(total);
    }), fcParams(100));
  });

  it('tryAppend takes a record that fits the limit exactly, refuses one byte less, and measure agrees', () => {
    const value = new Uint8Array(100);
    const one = new RecordBatchBuilder(1024);
    const size = one.append(null, value, undefined, 5);
    const probe = new RecordBatchBuilder(1024);
    probe.append(null, value, undefined, 5);
    const second = probe.measure('k', value, { h: 'v' }, 7);
    expect(probe.tryAppend('k', value, { h: 'v' }, 7, size + second - 1)).to.equal(-1);
    expect(probe.count, 'nothing written when refused').to.equal(1);
    expect(probe.recordsBytes).to.equal(size);
    expect(probe.tryAppend('k', value, { h: 'v' }, 7, size + second)).to.equal(second);
    expect(probe.recordsBytes).to.equal(size + second);
    // The first record is taken whatever the limit (a record larger than batchBytes gets a batch of its own).
    expect(new RecordBatchBuilder(16).tryAppend(null, value, undefined, 0, 1)).to.be.above(100);
  });

  it('refuses an append after a build, and a build without records', () => {
    const b = new RecordBatchBuilder();
    expect(() => b.build()).to.throw(/at least one record/);
    b.append(null, 'x', undefined, 0);
    b.build();
    expect(() => b.append(null, 'y', undefined, 0)).to.throw(/after the batch is built/);
  });
});
