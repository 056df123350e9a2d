// Public entry point of the sluice package for browsers (`sluice/browser`,
// bundled as dist/browser/sluice.js): the same Client, Producer, Consumer and
// Admin as the Node entry, over the global WebSocket, with the browser's
// runtime instead of Node's: CRC32C in pure JS (slicing-by-8,
// src/util/crc32c.ts) and gzip in pure JS (fflate, src/record/gzip-js.ts).
//
// Codecs: this build reads and writes none and gzip. A batch in snappy, lz4
// or zstd fails to decode with CORRUPT_MESSAGE "compression zstd not
// supported"; register a codec for it (`compressionCodecs.register(...)`,
// e.g. a WebAssembly zstd) or have the topic store gzip/none
// (compression.type), which the broker then recompresses to on produce.

import { Client as PortableClient } from './client/index.js';
import type { ClientOptions } from './client/client.js';
import { registerGzipJs } from './record/gzip-js.js';
import { defaultCompressionRegistry } from './record/compression.js';

registerGzipJs();

export { VERSION } from './version.js';
export { Errors, SluiceError, errorForCode, isSluiceError } from './util/errors.js';
export type { ErrorInfo, ErrorName } from './util/errors.js';
export * from './client/index.js';
export { CompressionType } from './record/batch-header.js';
export type { CompressionCodec, CompressionRegistry } from './record/compression.js';
export { crc32cImplementation } from './util/crc32c.js';

/** The codecs this build reads and writes (['none', 'gzip'] unless more are registered); register more here. */
export const compressionCodecs = defaultCompressionRegistry;

/** The client, connecting with the global WebSocket unless another `webSocketFactory` is given. */
export class Client extends PortableClient {
  constructor(opts: ClientOptions) {
    super(opts);
  }
}
