// The WebSocket factory for Node.js, backed by `ws`, and the Node runtime
// (src/node.ts). This is the only Node-specific file of the client: everything else takes a WebSocketFactory,
// so a browser passes `(url) => new WebSocket(url)` instead.
//
// permessage-deflate is off: record batches carry their own compression, and
// brokers refuse the extension anyway (src/net/ws-server.ts).

import '../node.js'; // the Node runtime: native CRC32C, every codec, Buffer keys and values
import { WebSocket, type ClientOptions } from 'ws';
import type { WebSocketFactory, WebSocketLike } from '../net/client-link.js';

/** Largest response frame accepted: above a broker's largest fetch (fetchMaxBytes) plus envelope overhead. */
export const RESPONSE_FRAME_BYTES_MAX = 128 * 1024 * 1024;

export const nodeWebSocketFactory: WebSocketFactory = (url, protocols) =>
  // ws implements the standard onopen/onmessage/onclose/onerror interface;
  // only its event object types differ from WebSocketLike's structural ones.
  new WebSocket(url, protocols ? [...protocols] : [], { perMessageDeflate: false, maxPayload: RESPONSE_FRAME_BYTES_MAX }) as unknown as WebSocketLike;

/**
 * TLS settings for wss:// brokers (Node only; a browser uses its own trust
 * store and client certificates). PEM texts, as Node's tls options take them.
 */
export interface NodeTlsOptions {
  /** CA certificates to trust instead of the system's (the cluster's CA). */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /** A client certificate (chain) and its key, for brokers that ask for one (mTLS). */
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  readonly passphrase?: string;
  /** Default true: refuse a broker whose certificate does not verify. */
  readonly rejectUnauthorized?: boolean;
  /** Default true: the broker's certificate must name the host dialed (ssl.endpoint.identification.algorithm=https). */
  readonly checkHostname?: boolean;
}

/** The factory with TLS settings for wss:// URLs (ws:// URLs dial as nodeWebSocketFactory does). */
export function nodeWebSocketFactoryWith(tls: NodeTlsOptions): WebSocketFactory {
  const plain: ClientOptions = { perMessageDeflate: false, maxPayload: RESPONSE_FRAME_BYTES_MAX };
  const options: ClientOptions = {
    ...plain,
    ...(tls.ca !== undefined ? { ca: tls.ca as string | Buffer | Array<string | Buffer> } : {}),
    ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
    ...(tls.key !== undefined ? { key: tls.key } : {}),
    ...(tls.passphrase !== undefined ? { passphrase: tls.passphrase } : {}),
    rejectUnauthorized: tls.rejectUnauthorized ?? true,
    // Node's tls wants undefined for "identity fine" (ws's typings say boolean).
    ...(tls.checkHostname === false ? { checkServerIdentity: (() => undefined) as unknown as ClientOptions['checkServerIdentity'] } : {}),
  };
  return (url, protocols) => new WebSocket(url, protocols ? [...protocols] : [], url.startsWith('wss:') ? options : plain) as unknown as WebSocketLike;
}
