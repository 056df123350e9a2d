// A broker's WebSocket listener: accepts connections on 127.0.0.1-style
// host:port URLs and hands each one a ServerConnection with the shared
// request handler and limits. listen() resolves once bound or rejects with a
// clear message (e.g. port in use) — never an unhandled 'error' event.
// It listens through a Transport (transport.ts): WebSockets in the process,
// the in-memory network in the simulation.
// With a TlsContext the listener is wss://: an HTTPS server that follows the
// context's reloads, and each connection's security session says tls and, with
// a verified client certificate, its principal (tls.ts).

import { SystemScheduler, type Scheduler } from '../util/clock.js';
import type { TlsContext } from './tls.js';
import { principalString } from '../security/principal.js';
import type { Logger } from '../util/logger.js';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './limits.js';
import { ServerConnection, defaultResponseEncoder, type RequestHandler, type ResponseEncoder } from './server-connection.js';
import { TransportError, type AcceptedSocket, type Listener, type Transport } from './transport.js';
import { WS_TRANSPORT } from './ws-transport.js';

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
  private listener: Listener | null = null;
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
    /** The network: WebSockets, or the simulation's. */
    private readonly transport: Transport = WS_TRANSPORT,
  ) {}

  async listen(addr: ListenAddress): Promise<ListenAddress> {
    const ctx = this.tls;
    try {
      this.listener = await this.transport.listen(addr, {
        frameBytesMax: this.limits.frameBytesMax,
        // A client offering subprotocols ("sluice", "bearer.<token>") is answered "sluice": a token is never echoed.
        subprotocol: SLUICE_SUBPROTOCOL,
        ...(ctx ? { tls: { context: ctx, clientAuthOf: 'broker' as const, name: 'broker' } } : {}),
      }, (socket) => this.onConnection(socket));
    } catch (err) {
      throw err instanceof TransportError ? new Error(err.message) : err;
    }
    return { host: addr.host, port: this.listener.port };
  }

  private onConnection(socket: AcceptedSocket): void {
    const verdict = socket.tls;
    if (verdict && !verdict.ok) {
      this.log.warn({ remote: socket.remoteAddress, reason: verdict.reason }, 'closing connection');
      socket.terminate();
      return;
    }
    const conn = new ServerConnection(this.nextConnId++, socket.remoteAddress, socket, this.handler, this.limits, this.log, this.encoder, this.scheduler);
    if (verdict?.ok) {
      Object.assign(conn.security, verdict.session);
      if (verdict.session.mechanism === 'SSL') this.log.info({ conn: conn.id, remote: conn.remoteAddress, principal: principalString(verdict.session.principal) }, 'TLS client authenticated');
    }
    this.connections.add(conn);
    const cleanup = this.onOpen?.(conn, socket.protocols);
    conn.onClosed(() => {
      this.connections.delete(conn);
      cleanup?.();
    });
  }

  close(): Promise<void> {
    const listener = this.listener;
    this.listener = null;
    return listener ? listener.close() : Promise.resolve();
  }
}
