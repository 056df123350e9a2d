// The WebSocket factory for Node.js, backed by `ws`, and the Node runtime
// (src/node.ts). This is the only Node-specific file of the client: everything else takes a WebSocketFactory,
// so a browser passes `(url) => new WebSocket(url)` instead.
//
// permessage-deflate is off: record batches carry their own compression, and
// brokers refuse the extension anyway (src/net/ws-server.ts).

import '../node.js'; // the Node runtime: native CRC32C, every codec, Buffer keys and values
import { WebSocket } from 'ws';
import type { WebSocketFactory, WebSocketLike } from '../net/client-link.js';

/** Largest response frame accepted: above a broker's largest fetch (fetchMaxBytes) plus envelope overhead. */
export const RESPONSE_FRAME_BYTES_MAX = 128 * 1024 * 1024;

export const nodeWebSocketFactory: WebSocketFactory = (url) =>
  // ws implements the standard onopen/onmessage/onclose/onerror interface;
  // only its event object types differ from WebSocketLike's structural ones.
  new WebSocket(url, { perMessageDeflate: false, maxPayload: RESPONSE_FRAME_BYTES_MAX }) as unknown as WebSocketLike;
