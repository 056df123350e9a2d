// Snappy (Kafka codec id 2) for RecordBatch records, through the `snappy`
// package (napi-rs bindings of Google's snappy, prebuilt per platform, sync).
//
// Kafka's Java client writes snappy in xerial's framing (snappy-java's
// SnappyOutputStream): an 8-byte magic, two int32 version words, then blocks
// of [int32 compressed length][raw snappy block]. librdkafka and KafkaJS read
// that framing and may write plain raw snappy; Kafka reads both. So
// decompress accepts both, and compress writes the xerial framing, which every
// Kafka client reads.
//
// Bound: a raw snappy block opens with its uncompressed length (a varint), so
// the total output is known before anything is inflated; a stream whose
// blocks would exceed the bound is refused unread.

import { compressSync, uncompressSync } from 'snappy';
import type { CompressionCodec } from './compression.js';

const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_BYTES = 16;
const XERIAL_VERSION = 1;
const XERIAL_COMPATIBLE_VERSION = 1;
/** snappy-java's default block size: each block holds at most this many uncompressed bytes. */
const XERIAL_BLOCK_BYTES = 32 * 1024;

/** The uncompressed length a raw snappy block declares (its leading varint32). */
export function snappyDeclaredLength(block: Buffer): number {
  let result = 0;
  for (let i = 0; i < 5; i++) {
    if (i >= block.length) throw new RangeError('snappy block truncated in its length');
    const b = block[i]!;
    result += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) return result;
  }
  throw new RangeError('snappy block length is longer than 5 bytes');
}

function isXerial(buf: Buffer): boolean {
  return buf.length >= XERIAL_HEADER_BYTES && buf.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC);
}

/** The raw snappy blocks of a xerial stream (views, no copies). */
function xerialBlocks(buf: Buffer): Buffer[] {
  const blocks: Buffer[] = [];
  let pos = XERIAL_HEADER_BYTES;
  while (pos < buf.length) {
    if (pos + 4 > buf.length) throw new RangeError(`xerial snappy block length truncated at byte ${pos}`);
    const size = buf.readInt32BE(pos);
    pos += 4;
    if (size < 0 || pos + size > buf.length) throw new RangeError(`xerial snappy block of ${size} bytes overruns the stream`);
    blocks.push(buf.subarray(pos, pos + size));
    pos += size;
  }
  return blocks;
}

function uncompressBlock(block: Buffer): Buffer {
  const out = uncompressSync(block);
  return Buffer.isBuffer(out) ? out : Buffer.from(out);
}

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

export const snappyCodec: CompressionCodec = {
  compress(bytes) {
    const buf = asBuffer(bytes);
    const parts: Buffer[] = [XERIAL_MAGIC, Buffer.alloc(8)];
    parts[1]!.writeInt32BE(XERIAL_VERSION, 0);
    parts[1]!.writeInt32BE(XERIAL_COMPATIBLE_VERSION, 4);
    for (let pos = 0; pos < buf.length; pos += XERIAL_BLOCK_BYTES) {
      const block = compressSync(buf.subarray(pos, pos + XERIAL_BLOCK_BYTES));
      const len = Buffer.alloc(4);
      len.writeInt32BE(block.length, 0);
      parts.push(len, block);
    }
    return Buffer.concat(parts);
  },
  decompress(bytes, outputBytesMax) {
    const buf = asBuffer(bytes);
    const blocks = isXerial(buf) ? xerialBlocks(buf) : [buf];
    let total = 0;
    for (const b of blocks) total += snappyDeclaredLength(b);
    if (total > outputBytesMax) throw new RangeError(`snappy data declares ${total} bytes, above ${outputBytesMax}`);
    const out = blocks.map(uncompressBlock);
    return out.length === 1 ? out[0]! : Buffer.concat(out, total);
  },
};
