// Zstandard (Kafka codec id 4) for RecordBatch records, through
// @bokuweb/zstd-wasm: the reference zstd library compiled to WebAssembly and
// shipped inside the npm package (no compiler, no download at install, the
// same code in Node and browsers), synchronous once its module is loaded.
// Node 20's zlib has no zstd (22.15+ has).
//
// Bound: ZSTD_decompress writes into a buffer of the capacity it is given and
// fails rather than overrun it. The capacity is the frame's declared content
// size when the header has one (refused unread above the bound), else it
// starts small and doubles up to the bound. One frame per batch, as every
// Kafka client writes it (a second concatenated frame fails the capacity
// check and the batch is refused as corrupt).

import { compress as zstdCompress, decompress as zstdDecompress, init as zstdInit } from '@bokuweb/zstd-wasm';
import type { CompressionCodec } from './compression.js';

await zstdInit();

const ZSTD_MAGIC = 0xfd2fb528;
/** Kafka's default zstd level (compression.zstd.level). */
const ZSTD_LEVEL = 3;
const UNKNOWN_CAPACITY_START_BYTES = 256 * 1024;

/** The content size the first frame's header declares, or null when it declares none. Throws on a non-zstd header. */
export function zstdDeclaredSize(bytes: Uint8Array): number | null {
  const buf = asBuffer(bytes);
  if (buf.length < 6 || buf.readUInt32LE(0) !== ZSTD_MAGIC) throw new RangeError('not a zstd frame (bad magic)');
  const fhd = buf[4]!;
  const fcsFlag = fhd >> 6;
  const singleSegment = (fhd >> 5) & 1;
  const dictBytes = [0, 1, 2, 4][fhd & 3]!;
  const fcsBytes = fcsFlag === 0 ? singleSegment : 1 << fcsFlag;
  if (fcsBytes === 0) return null;
  const pos = 5 + (singleSegment ? 0 : 1) + dictBytes;
  if (pos + fcsBytes > buf.length) throw new RangeError('zstd frame header truncated');
  switch (fcsBytes) {
    case 1: return buf[pos]!;
    case 2: return buf.readUInt16LE(pos) + 256;
    case 4: return buf.readUInt32LE(pos);
    default: return Number(buf.readBigUInt64LE(pos));
  }
}

function decompressInto(buf: Buffer, capacity: number): Buffer | null {
  try {
    const out = zstdDecompress(buf, { defaultHeapSize: capacity });
    return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  } catch {
    return null;
  }
}

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

export const zstdCodec: CompressionCodec = {
  compress: (buf) => {
    const out = zstdCompress(buf, ZSTD_LEVEL);
    return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  },
  decompress(buf, outputBytesMax) {
    const declared = zstdDeclaredSize(buf);
    if (declared !== null) {
      if (declared > outputBytesMax) throw new RangeError(`zstd frame declares ${declared} bytes, above ${outputBytesMax}`);
      const out = decompressInto(asBuffer(buf), declared);
      if (out === null || out.length !== declared) throw new RangeError('zstd data does not decompress to its declared size');
      return out;
    }
    for (let capacity = Math.min(UNKNOWN_CAPACITY_START_BYTES, outputBytesMax); ; capacity = Math.min(capacity * 2, outputBytesMax)) {
      const out = decompressInto(asBuffer(buf), capacity);
      if (out !== null) return out;
      if (capacity >= outputBytesMax) throw new RangeError(`zstd data is corrupt or decompresses past ${outputBytesMax} bytes`);
    }
  },
};
