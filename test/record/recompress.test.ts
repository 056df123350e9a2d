// compression.type's rewrite of produced batches (recompress.ts): batches in
// the target codec and control batches are kept byte for byte (the same
// buffer when none changes); the others are rewritten into the target with
// producer id, epoch, sequence, flags and every record's timestamp, key,
// value and headers kept.
import '../../src/node.js'; // Node runtime: native CRC32C and every codec
import { expect } from 'chai';
import { CompressionType, COMPRESSION_CODEC_MASK, TRANSACTIONAL_FLAG_MASK, readBatchHeader } from '../../src/record/batch-header.js';
import { decodeRecordBatches, encodeRecordBatch } from '../../src/record/record-batch.js';
import { recompressBatches, topicCompression } from '../../src/record/recompress.js';
import { bytesEqual } from '../../src/util/bytes.js';

const records = [
  { key: Buffer.from('a'), value: Buffer.from('one'), headers: [{ key: 'h', value: Buffer.from('x') }], timestamp: 1_700_000_000_000 },
  { key: null, value: null, timestamp: 1_700_000_000_050 },
];

describe('record: compression.type recompression', () => {
  it('maps compression.type values to codecs (producer: keep)', () => {
    expect(topicCompression('producer')).to.equal(null);
    expect(topicCompression('uncompressed')).to.equal(CompressionType.None);
    expect(topicCompression('none')).to.equal(CompressionType.None);
    expect(topicCompression('zstd')).to.equal(CompressionType.Zstd);
    expect(() => topicCompression('brotli')).to.throw(RangeError);
  });

  it('keeps the buffer when every batch already uses the target codec', () => {
    const buf = Buffer.concat([encodeRecordBatch({ records, compression: CompressionType.Lz4 }), encodeRecordBatch({ records, compression: CompressionType.Lz4 })]);
    expect(recompressBatches(buf, CompressionType.Lz4)).to.equal(buf);
  });

  it('rewrites other codecs into the target, keeping idempotence fields, flags and records', () => {
    const gz = encodeRecordBatch({ records, compression: CompressionType.Gzip, producerId: 42n, producerEpoch: 3, baseSequence: 17, isTransactional: true });
    const already = encodeRecordBatch({ records, compression: CompressionType.Snappy });
    const out = recompressBatches(Buffer.concat([gz, already]), CompressionType.Snappy);
    const [a, b] = decodeRecordBatches(out);
    expect(a!.header.attributes & COMPRESSION_CODEC_MASK).to.equal(CompressionType.Snappy);
    expect(a!.header.attributes & TRANSACTIONAL_FLAG_MASK).to.not.equal(0);
    expect([a!.header.producerId, a!.header.producerEpoch, a!.header.baseSequence, a!.header.recordCount]).to.deep.equal([42n, 3, 17, 2]);
    const before = decodeRecordBatches(gz)[0]!;
    expect(a!.records).to.deep.equal(before.records);
    expect(bytesEqual(out.subarray(out.length - already.length), already)).to.equal(true);
    expect(b!.records).to.deep.equal(decodeRecordBatches(already)[0]!.records);
  });

  it('decompresses into none', () => {
    const out = recompressBatches(encodeRecordBatch({ records, compression: CompressionType.Zstd }), CompressionType.None);
    expect(readBatchHeader(out).attributes & COMPRESSION_CODEC_MASK).to.equal(CompressionType.None);
    expect(decodeRecordBatches(out)[0]!.records.map((r) => r.value?.toString() ?? null)).to.deep.equal(['one', null]);
  });

  it('leaves control batches as they are', () => {
    const control = encodeRecordBatch({ records: [{ key: Buffer.from([0, 0, 0, 0]), value: Buffer.from([0, 0, 0, 0, 0, 0]) }], isControl: true, isTransactional: true, producerId: 9n, producerEpoch: 0, compression: CompressionType.None });
    expect(recompressBatches(control, CompressionType.Gzip)).to.equal(control);
  });
});
