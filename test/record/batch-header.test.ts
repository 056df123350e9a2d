import '../../src/node.js'; // Node runtime: native CRC32C and every codec
import { expect } from 'chai';
import {
  ATTRIBUTES_OFFSET, BASE_OFFSET_OFFSET, BASE_SEQUENCE_OFFSET, BASE_TIMESTAMP_OFFSET, BATCH_LENGTH_OFFSET, CRC_OFFSET,
  CompressionType, LAST_OFFSET_DELTA_OFFSET, LOG_OVERHEAD_BYTES, MAGIC_OFFSET, MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET, PRODUCER_EPOCH_OFFSET, PRODUCER_ID_OFFSET, RECORD_BATCH_HEADER_BYTES,
  RECORD_COUNT_OFFSET, TIMESTAMP_TYPE_MASK, baseOffsetOf, batchProblem, batchSizeAt, compressionOf, computeBatchCrc,
  lastOffsetDeltaOf, lastOffsetOf, leaderEpochOf, maxTimestampOf, readBatchHeader, recordCountOf, stampBatch,
  stampLogAppendTime, validateBatch,
} from '../../src/record/batch-header.js';
import { decodeRecordBatch, encodeRecordBatch } from '../../src/record/record-batch.js';
import { AssertionError } from '../../src/util/assert.js';
import { crc32c } from '../../src/util/crc32c.js';
import { Errors, isSluiceError } from '../../src/util/errors.js';
import { loadHexFixture } from './fixtures/load.js';
import { asBuffer } from '../../src/util/node-bytes.js';

const sample = (): Buffer => asBuffer(encodeRecordBatch({
  baseOffset: 40, partitionLeaderEpoch: 2, compression: CompressionType.Gzip,
  records: [{ value: Buffer.from('a'), timestamp: 1000 }, { value: Buffer.from('b'), timestamp: 1500 }, { value: null, timestamp: 1200 }],
}));

/** Rewrites a header field and fixes the CRC, so only the field itself is wrong. */
function withField(write: (buf: Buffer) => void): Buffer {
  const buf = sample();
  write(buf);
  buf.writeUInt32BE(computeBatchCrc(buf, 0), CRC_OFFSET);
  return buf;
}

describe('record/batch-header', () => {
  it('lays fields out as the Kafka RecordBatch v2 spec does', () => {
    // [offset, size] of each field in spec order; each starts where the previous ends.
    const fields: Array<[number, number]> = [
      [BASE_OFFSET_OFFSET, 8], [BATCH_LENGTH_OFFSET, 4], [PARTITION_LEADER_EPOCH_OFFSET, 4], [MAGIC_OFFSET, 1],
      [CRC_OFFSET, 4], [ATTRIBUTES_OFFSET, 2], [LAST_OFFSET_DELTA_OFFSET, 4], [BASE_TIMESTAMP_OFFSET, 8],
      [MAX_TIMESTAMP_OFFSET, 8], [PRODUCER_ID_OFFSET, 8], [PRODUCER_EPOCH_OFFSET, 2], [BASE_SEQUENCE_OFFSET, 4],
      [RECORD_COUNT_OFFSET, 4],
    ];
    let next = 0;
    for (const [offset, size] of fields) {
      expect(offset).to.equal(next);
      next = offset + size;
    }
    expect(next).to.equal(RECORD_BATCH_HEADER_BYTES);
    expect(LOG_OVERHEAD_BYTES).to.equal(BATCH_LENGTH_OFFSET + 4);
  });

  it('reads every field of a batch encoded by kafkajs', () => {
    const golden = loadHexFixture('kafkajs-produce-v3.hex');
    expect(readBatchHeader(golden)).to.deep.equal({
      baseOffset: 0, batchLength: 258, partitionLeaderEpoch: 0, magic: 2, crc: 0xd20a45ed, attributes: 0,
      lastOffsetDelta: 2, baseTimestamp: 1509928155660, maxTimestamp: 1509928155660, producerId: -1n,
      producerEpoch: 0, baseSequence: 10, recordCount: 3,
    });
    expect(batchSizeAt(golden)).to.equal(golden.length);
  });

  it('computes the CRC32C over [attributes, end), matching the stored one', () => {
    const golden = loadHexFixture('kafkajs-produce-v3.hex');
    expect(computeBatchCrc(golden)).to.equal(0xd20a45ed);
    expect(computeBatchCrc(golden)).to.equal(crc32c(golden.subarray(ATTRIBUTES_OFFSET)));
  });

  it('reads single fields of a batch in the middle of a buffer', () => {
    const batch = sample();
    const buf = Buffer.concat([Buffer.alloc(7, 0xaa), batch, Buffer.alloc(9, 0xbb)]);
    expect(baseOffsetOf(buf, 7)).to.equal(40);
    expect(lastOffsetDeltaOf(buf, 7)).to.equal(2);
    expect(lastOffsetOf(buf, 7)).to.equal(42);
    expect(leaderEpochOf(buf, 7)).to.equal(2);
    expect(maxTimestampOf(buf, 7)).to.equal(1500);
    expect(recordCountOf(buf, 7)).to.equal(3);
    expect(compressionOf(buf, 7)).to.equal(CompressionType.Gzip);
    expect(batchSizeAt(buf, 7)).to.equal(batch.length);
    expect(validateBatch(buf, 7)).to.equal(batch.length);
    expect(batchProblem(buf, 7, 7 + batch.length)).to.equal(null);
  });

  describe('batchProblem', () => {
    const cases: Array<[string, () => Buffer, string]> = [
      ['a short header', () => sample().subarray(0, 60), 'truncated header (60 bytes)'],
      ['a length below the header size', () => withField((b) => b.writeInt32BE(48, BATCH_LENGTH_OFFSET)), 'batch length 48 below header size'],
      ['a negative length', () => withField((b) => b.writeInt32BE(-1, BATCH_LENGTH_OFFSET)), 'batch length -1'],
      ['a length past the buffer', () => withField((b) => b.writeInt32BE(b.length, BATCH_LENGTH_OFFSET)), 'truncated batch'],
      ['magic 1', () => withField((b) => b.writeInt8(1, MAGIC_OFFSET)), 'unsupported magic 1'],
      ['a wrong CRC', () => { const b = sample(); b[b.length - 1]! ^= 1; return b; }, 'CRC mismatch'],
      ['a negative record count', () => withField((b) => b.writeInt32BE(-1, RECORD_COUNT_OFFSET)), 'negative record count -1'],
      ['a negative last offset delta', () => withField((b) => b.writeInt32BE(-3, LAST_OFFSET_DELTA_OFFSET)), 'last offset delta -3'],
      ['a last offset delta too small', () => withField((b) => b.writeInt32BE(1, LAST_OFFSET_DELTA_OFFSET)), 'last offset delta 1 too small for 3 records'],
    ];
    for (const [what, make, message] of cases) {
      it(`reports ${what}`, () => {
        const buf = make();
        expect(batchProblem(buf)).to.contain(message);
        try {
          validateBatch(buf);
          expect.fail('validateBatch accepted a bad batch');
        } catch (err) {
          expect(isSluiceError(err, Errors.CORRUPT_MESSAGE), String(err)).to.equal(true);
        }
      });
    }

    it('accepts a last offset delta larger than count - 1 (compacted batch)', () => {
      expect(batchProblem(withField((b) => b.writeInt32BE(9, LAST_OFFSET_DELTA_OFFSET)))).to.equal(null);
    });

    it('respects `end`, even when the buffer goes on', () => {
      const buf = Buffer.concat([sample(), Buffer.alloc(50)]);
      expect(batchProblem(buf, 0, buf.length - 60)).to.contain('truncated batch');
    });

    it('puts the position into the error details', () => {
      const buf = Buffer.concat([Buffer.alloc(5), sample()]);
      buf[buf.length - 1]! ^= 1;
      try {
        validateBatch(buf, 5);
        expect.fail('accepted');
      } catch (err) {
        expect(isSluiceError(err) && err.details.position).to.equal(5);
      }
    });

    it('asserts its bounds lie inside the buffer (caller bug)', () => {
      expect(() => batchProblem(Buffer.alloc(10), 0, 100)).to.throw(AssertionError);
      expect(() => batchProblem(Buffer.alloc(100), -1)).to.throw(AssertionError);
    });
  });

  describe('stamping', () => {
    it('stampBatch sets base offset and leader epoch in place and keeps the CRC valid', () => {
      const batch = sample();
      const buf = Buffer.concat([Buffer.alloc(3, 0xcc), batch, Buffer.alloc(3, 0xdd)]);
      const crcBefore = buf.readUInt32BE(3 + CRC_OFFSET);
      stampBatch(buf, 3, 2 ** 40, 17);
      expect(batchProblem(buf, 3, 3 + batch.length)).to.equal(null);
      expect(buf.readUInt32BE(3 + CRC_OFFSET)).to.equal(crcBefore);
      expect(readBatchHeader(buf, 3)).to.include({ baseOffset: 2 ** 40, partitionLeaderEpoch: 17 });
      expect(buf.subarray(0, 3).toString('hex')).to.equal('cccccc');
      expect(buf.subarray(buf.length - 3).toString('hex')).to.equal('dddddd');
      const decoded = decodeRecordBatch(buf, 3);
      expect(decoded.records.map((r) => r.offset)).to.deep.equal([2 ** 40, 2 ** 40 + 1, 2 ** 40 + 2]);
    });

    it('stampLogAppendTime sets the type bit and max timestamp, keeps compression, re-seals the CRC', () => {
      const buf = sample();
      stampLogAppendTime(buf, 0, 1_800_000_000_000);
      expect(batchProblem(buf)).to.equal(null);
      const header = readBatchHeader(buf);
      expect(header.attributes & TIMESTAMP_TYPE_MASK).to.equal(TIMESTAMP_TYPE_MASK);
      expect(compressionOf(buf)).to.equal(CompressionType.Gzip);
      expect(header.maxTimestamp).to.equal(1_800_000_000_000);
      expect(decodeRecordBatch(buf).records.map((r) => r.timestamp)).to.deep.equal([1_800_000_000_000, 1_800_000_000_000, 1_800_000_000_000]);
    });
  });
});
