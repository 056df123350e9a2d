// gzip for the browser build, in pure JavaScript through fflate: synchronous
// like every codec here (the record codec is synchronous; the Web's
// CompressionStream is stream-only and asynchronous), about 8 kB minified.
//
// Bound: the input is fed to fflate's streaming gunzip in slices small
// enough that one slice cannot inflate past a few MiB (deflate expands at
// most ~1032:1), and the output is counted as it comes: decompression stops
// with a RangeError as soon as it passes `outputBytesMax`, so a gzip bomb
// costs at most one slice's worth of output beyond the bound.

import { Gunzip, gzipSync } from 'fflate';
import { CompressionType } from './batch-header.js';
import { defaultCompressionRegistry, type CompressionCodec, type CompressionRegistry } from './compression.js';
import { concatBytes } from '../util/bytes.js';

const INPUT_SLICE_BYTES = 4096;

export const gzipJsCodec: CompressionCodec = {
  compress: (buf) => gzipSync(buf),
  decompress(buf, outputBytesMax) {
    const parts: Uint8Array[] = [];
    let total = 0;
    let ended = false;
    const gunzip = new Gunzip((chunk, final) => {
      total += chunk.length;
      if (total > outputBytesMax) throw new RangeError(`gzip data decompresses past ${outputBytesMax} bytes`);
      parts.push(chunk);
      if (final) ended = true;
    });
    for (let pos = 0; pos < buf.length; pos += INPUT_SLICE_BYTES) {
      const end = Math.min(pos + INPUT_SLICE_BYTES, buf.length);
      gunzip.push(buf.subarray(pos, end), end === buf.length);
    }
    if (!ended) throw new RangeError('gzip stream truncated');
    return concatBytes(parts, total);
  },
};

/** Registers gzip-js in `registry` (the default one unless given). */
export function registerGzipJs(registry: CompressionRegistry = defaultCompressionRegistry): void {
  registry.register(CompressionType.Gzip, gzipJsCodec);
}
