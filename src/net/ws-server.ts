// A broker's WebSocket listener: accepts connections on 127.0.0.1-style
// host:port URLs and hands each one a ServerConnection with the shared
// request handler and limits. listen() resolves once bound or rejects with a
// clear message (e.g. port in use) — never an unhandled 'error' event.

import { WebSocketServer } from 'ws';
import type { Logger } from '../util/logger.js';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './limits.js';
import { ServerConnection, defaultResponseEncoder, type RequestHandler, type ResponseEncoder } from './server-connection.js';

/** The subprotocol a client may offer, beside "bearer.<token>" (docs/protocol.md); the server answers with it. */
export const SLUICE_SUBPROTOCOL = 'sluice';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/** Parses ws://host:port (the listener URL form of the CLI). */
export function parseListenUrl(url: string): ListenAddress {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`invalid listener address "${url}": expected ws://host:port`);
  }
  if (parsed.protocol !== 'ws:' || !parsed.hostname || !parsed.port) {
    throw new Error(`invalid listener address "${url}": expected ws://host:port`);
  }
  return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port: Number(parsed.port) };
}

export class WsServer {
  private wss: WebSocketServer | null = null;
  private nextConnId = 1;
  readonly connections = new Set<ServerConnection>();

  constructor(
    private readonly handler: RequestHandler,
    private readonly log: Logger,
    private readonly limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
    /** How responses are framed (the broker passes fetch answers' record batches through: broker-api.ts). */
    private readonly encoder: ResponseEncoder = defaultResponseEncoder,
    /**
     * Called for every accepted connection before its first message, with the
     * upgrade request's offered subprotocols (a browser's bearer token rides
     * there: docs/protocol.md); returns a clean-up for its close.
     */
    private readonly onOpen?: (conn: ServerConnection, protocols: readonly string[]) => (() => void),
  ) {}

  listen(addr: ListenAddress): Promise<ListenAddress> {
    return new Promise((resolve, reject) => {
      // A client offering subprotocols ("sluice", "bearer.<token>") is answered "sluice": a token is never echoed.
      const wss = new WebSocketServer({
        host: addr.host, port: addr.port, maxPayload: this.limits.frameBytesMax, perMessageDeflate: false,
        handleProtocols: (offered) => (offered.has(SLUICE_SUBPROTOCOL) ? SLUICE_SUBPROTOCOL : false),
      });
      const onError = (err: Error) => {
        wss.close();
        const code = (err as NodeJS.ErrnoException).code;
        reject(new Error(code === 'EADDRINUSE' ? `address ${addr.host}:${addr.port} is already in use` : `cannot listen on ${addr.host}:${addr.port}: ${err.message}`));
      };
      wss.once('error', onError);
      wss.once('listening', () => {
        wss.off('error', onError);
        wss.on('error', (err) => this.log.error({ err: err.message }, 'listener error'));
        this.wss = wss;
        const bound = wss.address();
        resolve(bound === null || typeof bound === 'string' ? addr : { host: addr.host, port: bound.port });
      });
      wss.on('connection', (ws, req) => {
        const conn = new ServerConnection(this.nextConnId++, req.socket.remoteAddress ?? '?', ws, this.handler, this.limits, this.log, req.socket, this.encoder);
        this.connections.add(conn);
        const header = req.headers['sec-websocket-protocol'];
        const protocols = typeof header === 'string' ? header.split(',').map((p) => p.trim()).filter((p) => p !== '') : [];
        const cleanup = this.onOpen?.(conn, protocols);
        ws.on('close', () => {
          this.connections.delete(conn);
          cleanup?.();
        });
      });
    });
  }

  close(): Promise<void> {
    const wss = this.wss;
    this.wss = null;
    if (!wss) return Promise.resolve();
    for (const client of wss.clients) client.terminate();
    return new Promise((resolve) => wss.close(() => resolve()));
  }
}
