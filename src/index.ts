// Public entry point of the sluice package for Node.js: the client library
// with ws as its WebSocket (src/client/index.ts is the portable one), and the
// error table.
import './node.js'; // native CRC32C, every Kafka codec, Buffer bytes
import { Client as PortableClient } from './client/index.js';
import type { ClientOptions } from './client/client.js';
import { nodeWebSocketFactory, nodeWebSocketFactoryWith, type NodeTlsOptions } from './client/node-websocket.js';
import { defaultCompressionRegistry } from './record/compression.js';

export { VERSION } from './version.js';
export { Errors, SluiceError, errorForCode, isSluiceError } from './util/errors.js';
export type { ErrorInfo, ErrorName } from './util/errors.js';
export * from './client/index.js';
export { nodeWebSocketFactory, nodeWebSocketFactoryWith } from './client/node-websocket.js';
export type { NodeTlsOptions } from './client/node-websocket.js';

export interface NodeClientOptions extends ClientOptions {
  /** TLS settings for wss:// bootstrap URLs and brokers: the CA, a client certificate (docs/security.md). */
  readonly tls?: NodeTlsOptions;
}

export { CompressionType } from './record/batch-header.js';
export type { CompressionCodec, CompressionRegistry } from './record/compression.js';
export { crc32cImplementation } from './util/crc32c.js';

/** The codecs this process reads and writes (all of Kafka's on Node); register more here. */
export const compressionCodecs = defaultCompressionRegistry;

/** The client, connecting with ws unless another `webSocketFactory` is given. */
export class Client extends PortableClient {
  constructor(opts: NodeClientOptions) {
    const { tls, ...rest } = opts;
    super({ webSocketFactory: tls ? nodeWebSocketFactoryWith(tls) : nodeWebSocketFactory, ...rest });
  }
}
