// The snappy (codec 2) and zstd (codec 4) codecs of the default registry:
// batches round-trip; snappy reads both xerial-framed streams (Kafka's Java
// client) and raw blocks (librdkafka, KafkaJS) and writes the framing; both
// refuse, before inflating, data that declares more than decompressedBytesMax
// (a CRC-valid bomb), and report bad streams as CORRUPT_MESSAGE.
import '../../src/node.js'; // Node runtime: native CRC32C and every codec
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { compressSync } from 'snappy';
import { CompressionType, COMPRESSION_CODEC_MASK, readBatchHeader } from '../../src/record/batch-header.js';
import { CompressionRegistry, defaultCompressionRegistry } from '../../src/record/compression.js';
import { snappyCodec, snappyDeclaredLength } from '../../src/record/snappy-codec.js';
import { zstdCodec, zstdDeclaredSize } from '../../src/record/zstd-codec.js';
import { decodeRecordBatch, encodeRecordBatch } from '../../src/record/record-batch.js';
import { Errors, isSluiceError } from '../../src/util/errors.js';
import { bytesEqual } from '../../src/util/bytes.js';

function corrupt(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(isSluiceError(err, Errors.CORRUPT_MESSAGE), String(err)).to.equal(true);
    return (err as Error).message;
  }
  throw new Error('expected CORRUPT_MESSAGE');
}

const records = Array.from({ length: 300 }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`value-${i % 7}-`.repeat(40)), timestamp: 1_700_000_000_000 + i }));

for (const [name, type] of [['snappy', CompressionType.Snappy], ['zstd', CompressionType.Zstd]] as const) {
  describe(`record: ${name} compression`, () => {
    it('round-trips a batch through the default registry, smaller than uncompressed', () => {
      const batch = encodeRecordBatch({ records, compression: type });
      expect(readBatchHeader(batch).attributes & COMPRESSION_CODEC_MASK).to.equal(type);
      expect(batch.length).to.be.lessThan(encodeRecordBatch({ records }).length / 4);
      const decoded = decodeRecordBatch(batch);
      expect(decoded.records.map((r) => r.value!.toString())).to.deep.equal(records.map((r) => r.value.toString()));
    });

    it('refuses a bomb above decompressedBytesMax and garbage as CORRUPT_MESSAGE', () => {
      const big = encodeRecordBatch({ records: [{ value: Buffer.alloc(200_000) }], compression: type });
      const small = new CompressionRegistry(10_000).register(type, type === CompressionType.Snappy ? snappyCodec : zstdCodec);
      expect(corrupt(() => decodeRecordBatch(big, 0, small))).to.match(new RegExp(`${name}.*(above|past) 10000`));
      expect(decodeRecordBatch(big).records[0]!.value!.length).to.equal(200_000);
      const garbage = Buffer.from(big);
      garbage.fill(0x41, 61 + 20);
      expect(corrupt(() => defaultCompressionRegistry.decompress(type, garbage.subarray(61)))).to.contain(`${name} decompression failed`);
    });
  });
}

describe('record: snappy framing', () => {
  it('writes xerial framing with 32 KiB blocks and reads it back', () => {
    const data = Buffer.alloc(100_000, 3);
    const framed = snappyCodec.compress(data);
    expect(Buffer.from(framed.subarray(0, 16)).toString('hex')).to.equal('82534e4150505900' + '00000001' + '00000001');
    expect(bytesEqual(snappyCodec.decompress(framed, 1 << 20), data)).to.equal(true);
  });

  it('reads a raw snappy block, as librdkafka writes it', () => {
    const data = Buffer.from('raw snappy from librdkafka '.repeat(50));
    const raw = compressSync(data);
    expect(snappyDeclaredLength(raw)).to.equal(data.length);
    expect(bytesEqual(snappyCodec.decompress(raw, 1 << 20), data)).to.equal(true);
    expect(() => snappyCodec.decompress(raw, data.length - 1)).to.throw(RangeError, /declares/);
  });
});

describe('record: zstd frames', () => {
  it('reads the declared content size, or none for a streamed frame', () => {
    const data = Buffer.alloc(70_000, 9);
    expect(zstdDeclaredSize(zstdCodec.compress(data))).to.equal(70_000);
    let streamed: Buffer | null = null;
    try {
      // The zstd command reading a pipe writes no content size (as a streaming compressor such as zstd-jni does).
      streamed = execFileSync('zstd', ['-c', '-q', '--no-content-size', '-'], { input: data });
    } catch {
      streamed = null;
    }
    if (streamed) {
      expect(zstdDeclaredSize(streamed)).to.equal(null);
      expect(bytesEqual(zstdCodec.decompress(streamed, 1 << 20), data)).to.equal(true);
      expect(() => zstdCodec.decompress(streamed, 60_000)).to.throw(RangeError, /past 60000/);
    }
  });

  it('refuses a non-zstd header', () => {
    expect(() => zstdDeclaredSize(Buffer.from('not zstd at all'))).to.throw(RangeError, /magic/);
  });
});
