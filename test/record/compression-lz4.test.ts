// The lz4 codec (Kafka codec id 3, LZ4 frame format) of the default registry:
// batches round-trip, and a frame is bounded before it is inflated — a
// CRC-valid batch whose frame could expand past decompressedBytesMax, or a
// malformed frame, is CORRUPT_MESSAGE rather than a memory blow-up or a raw
// native error.
import '../../src/node.js'; // Node runtime: native CRC32C and every codec
import { expect } from 'chai';
import { compressFrameSync } from 'lz4-napi';
import { CompressionType, COMPRESSION_CODEC_MASK, readBatchHeader } from '../../src/record/batch-header.js';
import { CompressionRegistry, defaultCompressionRegistry, lz4FrameBound } from '../../src/record/compression.js';
import { lz4Codec } from '../../src/record/node-codecs.js';
import { decodeRecordBatch, encodeRecordBatch } from '../../src/record/record-batch.js';
import { Errors, isSluiceError } from '../../src/util/errors.js';

function corrupt(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(isSluiceError(err, Errors.CORRUPT_MESSAGE), String(err)).to.equal(true);
    return (err as Error).message;
  }
  throw new Error('expected CORRUPT_MESSAGE');
}

describe('storage: lz4 compression', () => {
  it('round-trips a batch through the default registry', () => {
    const records = Array.from({ length: 200 }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`value-${i % 7}-`.repeat(30)), timestamp: 1_700_000_000_000 + i }));
    const batch = encodeRecordBatch({ records, compression: CompressionType.Lz4 });
    expect(readBatchHeader(batch).attributes & COMPRESSION_CODEC_MASK).to.equal(CompressionType.Lz4);
    const raw = encodeRecordBatch({ records });
    expect(batch.length).to.be.lessThan(raw.length / 4);
    const decoded = decodeRecordBatch(batch);
    expect(decoded.records.map((r) => r.value!.toString())).to.deep.equal(records.map((r) => r.value.toString()));
    expect(decoded.records.map((r) => r.offset)).to.deep.equal(records.map((_, i) => i));
  });

  it('bounds a frame by its block count and block size', () => {
    const data = Buffer.alloc(300 * 1024, 7);
    const frame = compressFrameSync(data);
    const bound = lz4FrameBound(frame);
    expect(bound).to.be.at.least(data.length);
    // Whole blocks of the frame's declared size (64 KiB to 4 MiB; lz4-napi writes 4 MiB ones).
    expect(bound % (64 * 1024)).to.equal(0);
    expect(bound).to.be.below(data.length + 4 * 1024 * 1024);
    expect(Buffer.from(lz4Codec.decompress(frame, bound)).equals(data)).to.equal(true);
  });

  it('refuses a frame that could expand past decompressedBytesMax, before inflating it', () => {
    const bomb = compressFrameSync(Buffer.alloc(8 * 1024 * 1024)); // zeros: a tiny frame
    expect(bomb.length).to.be.lessThan(100 * 1024);
    const small = new CompressionRegistry(1024 * 1024).register(CompressionType.Lz4, lz4Codec);
    expect(corrupt(() => small.decompress(CompressionType.Lz4, bomb))).to.match(/lz4.*may expand/);
    expect(defaultCompressionRegistry.decompress(CompressionType.Lz4, bomb).length).to.equal(8 * 1024 * 1024);
  });

  it('reports malformed frames as CORRUPT_MESSAGE', () => {
    const frame = compressFrameSync(Buffer.from('hello hello hello hello'));
    const reg = defaultCompressionRegistry;
    expect(corrupt(() => reg.decompress(CompressionType.Lz4, Buffer.from('not a frame at all')))).to.match(/bad magic/);
    expect(corrupt(() => reg.decompress(CompressionType.Lz4, frame.subarray(0, frame.length - 3)))).to.match(/truncated/);
    expect(corrupt(() => reg.decompress(CompressionType.Lz4, Buffer.concat([frame, Buffer.from([1, 2])])))).to.match(/after the lz4 frame/);
    const badVersion = Buffer.from(frame);
    badVersion[4] = badVersion[4]! & 0x3f; // version bits 00
    expect(corrupt(() => reg.decompress(CompressionType.Lz4, badVersion))).to.match(/version or block size/);
  });
});
