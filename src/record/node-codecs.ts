// Every codec Kafka defines, registered in the default registry, for Node:
// gzip through node:zlib, lz4 through lz4-napi (the LZ4 frame format, bounded
// by lz4FrameBound before inflating), snappy and zstd (their own files).
// Imported for its effect by src/node.ts (the Node entry, CLI, broker).

import { gunzipSync, gzipSync } from 'node:zlib';
import { compressFrameSync, decompressFrameSync } from 'lz4-napi';
import { CompressionType } from './batch-header.js';
import { defaultCompressionRegistry, lz4FrameBound, type CompressionCodec } from './compression.js';
import { snappyCodec } from './snappy-codec.js';
import { zstdCodec } from './zstd-codec.js';

export const gzipCodec: CompressionCodec = {
  compress: (buf) => gzipSync(buf),
  decompress: (buf, outputBytesMax) => gunzipSync(buf, { maxOutputLength: outputBytesMax }),
};

export const lz4Codec: CompressionCodec = {
  compress: (buf) => compressFrameSync(asBuffer(buf)),
  decompress: (buf, outputBytesMax) => {
    const bound = lz4FrameBound(buf);
    if (bound > outputBytesMax) throw new RangeError(`lz4 frame may expand to ${bound} bytes, above ${outputBytesMax}`);
    return decompressFrameSync(asBuffer(buf));
  },
};

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

defaultCompressionRegistry
  .register(CompressionType.Gzip, gzipCodec)
  .register(CompressionType.Snappy, snappyCodec)
  .register(CompressionType.Lz4, lz4Codec)
  .register(CompressionType.Zstd, zstdCodec);
