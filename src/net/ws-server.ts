// A broker's WebSocket listener: accepts connections on 127.0.0.1-style
// host:port URLs and hands each one a ServerConnection with the shared
// request handler and limits. listen() resolves once bound or rejects with a
// clear message (e.g. port in use) — never an unhandled 'error' event.
// With a TlsContext the listener is wss://: an HTTPS server that follows the
// context's reloads, and each connection's security session says tls and, with
// a verified client certificate, its principal (tls.ts).

import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { SystemScheduler, type Scheduler } from '../util/clock.js';
import { WebSocketServer } from 'ws';
import type { TlsContext } from './tls.js';
import { principalString } from '../security/principal.js';
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
  private https: https.Server | null = null;
  private nextConnId = 1;
  readonly connections = new Set<ServerConnection>();

  constructor(
    private readonly handler: RequestHandler,
    private readonly log: Logger,
    private readonly limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
    /** How responses are framed (the broker passes fetch answers' record batches through: broker-api.ts). */
    private readonly encoder: ResponseEncoder = defaultResponseEncoder,
    /** Present: the listener speaks wss://. */
    private readonly tls?: TlsContext,
    /**
     * Called for every accepted connection before its first message, with the
     * upgrade request's offered subprotocols (a browser's bearer token rides
     * there: docs/protocol.md); returns a clean-up for its close.
     */
    private readonly onOpen?: (conn: ServerConnection, protocols: readonly string[]) => (() => void),
    /** Timers of quota throttles (a muted connection's wake-up). */
    private readonly scheduler: Scheduler = SystemScheduler,
  ) {}

  private detachTls: (() => void) | null = null;

  listen(addr: ListenAddress): Promise<ListenAddress> {
    return new Promise((resolve, reject) => {
      const ctx = this.tls;
      const https_ = ctx ? https.createServer(ctx.serverOptions('broker')) : null;
      // A client offering subprotocols ("sluice", "bearer.<token>") is answered "sluice": a token is never echoed.
      const common = {
        maxPayload: this.limits.frameBytesMax, perMessageDeflate: false,
        handleProtocols: (offered: Set<string>) => (offered.has(SLUICE_SUBPROTOCOL) ? SLUICE_SUBPROTOCOL : false),
      };
      const wss = https_
        ? new WebSocketServer({ server: https_, ...common })
        : new WebSocketServer({ host: addr.host, port: addr.port, ...common });
      const emitter = https_ ?? wss;
      // ws re-emits the HTTPS server's errors; they are handled on the server itself.
      if (https_) wss.on('error', () => undefined);
      if (https_ && ctx) this.detachTls = ctx.attach(https_, 'broker');
      const onError = (err: Error) => {
        wss.close();
        https_?.close();
        const code = (err as NodeJS.ErrnoException).code;
        reject(new Error(code === 'EADDRINUSE' ? `address ${addr.host}:${addr.port} is already in use` : `cannot listen on ${addr.host}:${addr.port}: ${err.message}`));
      };
      emitter.once('error', onError);
      emitter.once('listening', () => {
        emitter.off('error', onError);
        emitter.on('error', (err: Error) => this.log.error({ err: err.message }, 'listener error'));
        this.wss = wss;
        this.https = https_;
        const bound = https_ ? https_.address() : wss.address();
        resolve(bound === null || typeof bound === 'string' ? addr : { host: addr.host, port: bound.port });
      });
      if (https_) https_.listen(addr.port, addr.host);
      wss.on('connection', (ws, req) => {
        const verdict = ctx?.checkPeer(req.socket as TLSSocket);
        if (verdict && !verdict.ok) {
          this.log.warn({ remote: req.socket.remoteAddress, reason: verdict.reason }, 'closing connection');
          ws.terminate();
          return;
        }
        const conn = new ServerConnection(this.nextConnId++, req.socket.remoteAddress ?? '?', ws, this.handler, this.limits, this.log, req.socket, this.encoder, this.scheduler);
        if (verdict?.ok) {
          Object.assign(conn.security, verdict.session);
          if (verdict.session.mechanism === 'SSL') this.log.info({ conn: conn.id, remote: conn.remoteAddress, principal: principalString(verdict.session.principal) }, 'TLS client authenticated');
        }
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
    const server = this.https;
    this.wss = null;
    this.https = null;
    this.detachTls?.();
    if (!wss) return Promise.resolve();
    for (const client of wss.clients) client.terminate();
    return new Promise((resolve) => wss.close(() => {
      if (!server) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    }));
  }
}
