// Compression codecs for the records section of a RecordBatch v2 (everything
// after the 61-byte header), looked up by the batch's CompressionType.
//
// The registry is a value, not a hidden global: record-batch.ts takes one as a
// parameter (defaulting to `defaultCompressionRegistry`), so a browser build or
// the client can register other codecs without touching storage.
// This module is portable (browsers too) and holds only the `none` codec and
// the registry; the codecs are registered by the entry point:
// node-codecs.ts (gzip via node:zlib, snappy, lz4, zstd: the broker and the
// Node client) or gzip-js.ts (gzip in pure JS: the browser build). Those and
// their codec files are the only modules that import a compression library.
//
// LZ4 (Kafka codec id 3) is the LZ4 *frame* format, as Kafka writes it for
// RecordBatch v2. lz4-napi cannot bound its output, so before inflating we
// walk the frame's block headers (cheap: no decompression) and refuse a frame
// whose blocks could expand past the bound: each block holds at most the
// frame's declared block size (64 KiB to 4 MiB).
//
// Invariants: decompress never returns more than `decompressedBytesMax` bytes
// (a CRC-valid batch is no proof of good intent: a gzip bomb has a fine CRC),
// and every failure to decompress — unknown codec, bad stream, too large — is
// SluiceError(CORRUPT_MESSAGE), never a raw zlib or Range error.

import { CompressionType } from './batch-header.js';
import { assert } from '../util/assert.js';
import { uint32LeAt } from '../util/bytes.js';
import { Errors, SluiceError, isSluiceError } from '../util/errors.js';

export interface CompressionCodec {
  compress(buf: Uint8Array): Uint8Array;
  /** Must throw rather than produce more than `outputBytesMax` bytes. */
  decompress(buf: Uint8Array, outputBytesMax: number): Uint8Array;
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

const LZ4_FRAME_MAGIC = 0x184d2204;
/** Block size codes 4..7 of the BD byte: 64 KiB, 256 KiB, 1 MiB, 4 MiB. */
const LZ4_BLOCK_BYTES_MAX = new Map([[4, 64 * 1024], [5, 256 * 1024], [6, 1024 * 1024], [7, 4 * 1024 * 1024]]);
const LZ4_UNCOMPRESSED_BLOCK_FLAG = 0x80000000;

/**
 * The most bytes one LZ4 frame (the whole of `buf`, nothing after it) can
 * decompress to: its block count times its block size. Throws RangeError on a
 * malformed frame header or block list, and on bytes after the frame.
 */
export function lz4FrameBound(buf: Uint8Array): number {
  const need = (pos: number, n: number): void => {
    if (pos + n > buf.length) throw new RangeError(`lz4 frame truncated at byte ${pos}`);
  };
  need(0, 7);
  if (uint32LeAt(buf, 0) !== LZ4_FRAME_MAGIC) throw new RangeError('not an lz4 frame (bad magic)');
  const flg = buf[4]!;
  const blockBytesMax = LZ4_BLOCK_BYTES_MAX.get((buf[5]! >> 4) & 0x07);
  if (flg >> 6 !== 1 || blockBytesMax === undefined) throw new RangeError('unsupported lz4 frame version or block size');
  const blockChecksum = (flg & 0x10) !== 0;
  const contentChecksum = (flg & 0x04) !== 0;
  let pos = 6 + ((flg & 0x08) !== 0 ? 8 : 0) + ((flg & 0x01) !== 0 ? 4 : 0) + 1; // content size, dict id, header checksum
  let blocks = 0;
  for (;;) {
    need(pos, 4);
    const word = uint32LeAt(buf, pos);
    pos += 4;
    if (word === 0) break; // end mark
    const size = (word & ~LZ4_UNCOMPRESSED_BLOCK_FLAG) >>> 0;
    if (size > blockBytesMax) throw new RangeError(`lz4 block of ${size} bytes exceeds the frame's ${blockBytesMax}`);
    pos += size + (blockChecksum ? 4 : 0);
    need(pos, 0);
    blocks++;
  }
  pos += contentChecksum ? 4 : 0;
  need(pos, 0);
  if (pos !== buf.length) throw new RangeError(`${buf.length - pos} bytes after the lz4 frame`);
  return blocks * blockBytesMax;
}

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

  /** The registered codecs' names, e.g. ['none', 'gzip']. */
  names(): string[] {
    return [...this.codecs.keys()].sort((a, b) => a - b).map(compressionName);
  }

  /** Compresses records for a batch being built. An unregistered codec here is a caller bug. */
  compress(type: CompressionType, buf: Uint8Array): Uint8Array {
    const codec = this.codecs.get(type);
    assert(codec !== undefined, `compression ${compressionName(type)} not registered`);
    return codec.compress(buf);
  }

  /** Decompresses a received records section; throws CORRUPT_MESSAGE on any failure. */
  decompress(type: number, buf: Uint8Array): Uint8Array {
    const name = compressionName(type);
    const codec = this.codecs.get(type);
    if (codec === undefined) throw new SluiceError(Errors.CORRUPT_MESSAGE, `compression ${name} not supported`, { compression: type });
    let out: Uint8Array;
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

/**
 * The process's registry: `none` here; the entry point registers the rest
 * (node-codecs.ts on Node: all of Kafka's; gzip-js.ts in the browser build).
 */
export const defaultCompressionRegistry = new CompressionRegistry()
  .register(CompressionType.None, noneCodec);
