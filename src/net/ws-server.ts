// A broker's WebSocket listener: accepts connections on 127.0.0.1-style
// host:port URLs and hands each one a ServerConnection with the shared
// request handler and limits. listen() resolves once bound or rejects with a
// clear message (e.g. port in use) — never an unhandled 'error' event.

import { SystemScheduler, type Scheduler } from '../util/clock.js';
import { WebSocketServer } from 'ws';
import type { Logger } from '../util/logger.js';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './limits.js';
import { ServerConnection, defaultResponseEncoder, type RequestHandler, type ResponseEncoder } from './server-connection.js';

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
    /** Timers of quota throttles (a muted connection's wake-up). */
    private readonly scheduler: Scheduler = SystemScheduler,
  ) {}

  listen(addr: ListenAddress): Promise<ListenAddress> {
    return new Promise((resolve, reject) => {
      const wss = new WebSocketServer({ host: addr.host, port: addr.port, maxPayload: this.limits.frameBytesMax, perMessageDeflate: false });
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
        const conn = new ServerConnection(this.nextConnId++, req.socket.remoteAddress ?? '?', ws, this.handler, this.limits, this.log, req.socket, this.encoder, this.scheduler);
        this.connections.add(conn);
        ws.on('close', () => this.connections.delete(conn));
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
