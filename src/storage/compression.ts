// Compression codecs for the records section of a RecordBatch v2 (everything
// after the 61-byte header), looked up by the batch's CompressionType.
//
// The registry is a value, not a hidden global: record-batch.ts takes one as a
// parameter (defaulting to `defaultCompressionRegistry`), so a browser build or
// the client can register other codecs (lz4, zstd) without touching storage.
// This is the only module of the codec that imports node:zlib.
//
// Invariants: decompress never returns more than `decompressedBytesMax` bytes
// (a CRC-valid batch is no proof of good intent: a gzip bomb has a fine CRC),
// and every failure to decompress — unknown codec, bad stream, too large — is
// SluiceError(CORRUPT_MESSAGE), never a raw zlib or Range error.

import { gunzipSync, gzipSync } from 'node:zlib';
import { CompressionType } from './batch-header.js';
import { assert } from '../util/assert.js';
import { Errors, SluiceError, isSluiceError } from '../util/errors.js';

export interface CompressionCodec {
  compress(buf: Buffer): Buffer;
  /** Must throw rather than produce more than `outputBytesMax` bytes. */
  decompress(buf: Buffer, outputBytesMax: number): Buffer;
}

/** Default bound on one batch's decompressed records (Kafka batches are ~1 MiB compressed). */
export const DECOMPRESSED_BYTES_MAX = 64 * 1024 * 1024;

export const noneCodec: CompressionCodec = {
  compress: (buf) => buf,
  decompress: (buf, outputBytesMax) => {
    if (buf.length > outputBytesMax) throw new RangeError(`${buf.length} bytes exceed ${outputBytesMax}`);
    return buf;
  },
};

export const gzipCodec: CompressionCodec = {
  compress: (buf) => gzipSync(buf),
  decompress: (buf, outputBytesMax) => gunzipSync(buf, { maxOutputLength: outputBytesMax }),
};

/** Lower-case codec name as Kafka's `compression.type` spells it ("type 6" for unassigned ids). */
export function compressionName(type: number): string {
  const name = (CompressionType as Record<number, string | undefined>)[type];
  return name === undefined ? `type ${type}` : name.toLowerCase();
}

export class CompressionRegistry {
  private readonly codecs = new Map<number, CompressionCodec>();

  constructor(readonly decompressedBytesMax = DECOMPRESSED_BYTES_MAX) {
    assert(Number.isSafeInteger(decompressedBytesMax) && decompressedBytesMax > 0, 'decompressedBytesMax must be positive');
  }

  /** Adds or replaces the codec for `type`; returns this for chaining. */
  register(type: CompressionType, codec: CompressionCodec): this {
    this.codecs.set(type, codec);
    return this;
  }

  has(type: number): boolean {
    return this.codecs.has(type);
  }

  /** Compresses records for a batch being built. An unregistered codec here is a caller bug. */
  compress(type: CompressionType, buf: Buffer): Buffer {
    const codec = this.codecs.get(type);
    assert(codec !== undefined, `compression ${compressionName(type)} not registered`);
    return codec.compress(buf);
  }

  /** Decompresses a received records section; throws CORRUPT_MESSAGE on any failure. */
  decompress(type: number, buf: Buffer): Buffer {
    const name = compressionName(type);
    const codec = this.codecs.get(type);
    if (codec === undefined) throw new SluiceError(Errors.CORRUPT_MESSAGE, `compression ${name} not supported`, { compression: type });
    let out: Buffer;
    try {
      out = codec.decompress(buf, this.decompressedBytesMax);
    } catch (err) {
      if (isSluiceError(err)) throw err;
      const reason = err instanceof Error ? err.message : String(err);
      throw new SluiceError(Errors.CORRUPT_MESSAGE, `${name} decompression failed: ${reason}`, { compression: type });
    }
    if (out.length > this.decompressedBytesMax) {
      throw new SluiceError(Errors.CORRUPT_MESSAGE, `${name} records exceed ${this.decompressedBytesMax} bytes`, { compression: type });
    }
    return out;
  }
}

/** None and Gzip; the client adds lz4/zstd here (or builds its own registry). */
export const defaultCompressionRegistry = new CompressionRegistry()
  .register(CompressionType.None, noneCodec)
  .register(CompressionType.Gzip, gzipCodec);
