// The process's Transport (transport.ts), on WebSockets: `ws` for plain
// listeners and dials, an HTTPS server under it for wss:// listeners (which
// follows the TLS context's reloads and reports each peer's certificate
// verdict), and ws's own ping/pong for keepalive. The only module of the
// node's side that touches `ws`, `http(s)` or sockets for Sluice's own
// protocols (the Kafka listener, kafka-server.ts, stays on raw TCP).
//
// permessage-deflate is off everywhere: record batches carry their own
// compression, and a compressor per connection costs memory.

import https from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { dialOptions } from './tls.js';
import {
  TransportError,
  type AcceptedSocket, type DialOptions, type ListenAt, type ListenOptions, type Listener,
  type MessageSocket, type SocketHandlers, type Transport,
} from './transport.js';
import type { PeerVerdict } from './tls.js';

type Event =
  | { readonly kind: 'message'; readonly data: Uint8Array; readonly binary: boolean }
  | { readonly kind: 'close'; readonly code: number; readonly reason: string }
  | { readonly kind: 'ping' } | { readonly kind: 'pong' }
  | { readonly kind: 'error'; readonly err: Error };

function toBytes(data: RawData): Buffer {
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
}

/** A `ws` WebSocket as a MessageSocket; events before setHandlers() are queued. */
class WsSocket implements AcceptedSocket {
  private handlers: SocketHandlers | undefined;
  private early: Event[] = [];
  private closedReported = false;

  constructor(
    private readonly ws: WebSocket,
    readonly remoteAddress: string,
    readonly remotePort: number | undefined,
    /** The TCP socket under `ws`, corked while a multi-chunk message is written; null: one write per chunk. */
    private readonly tcp: Socket | null,
    readonly protocols: readonly string[] = [],
    readonly tls: PeerVerdict | undefined = undefined,
  ) {
    ws.on('message', (data, isBinary) => this.emit({ kind: 'message', data: toBytes(data), binary: isBinary }));
    ws.on('close', (code, reason) => this.emit({ kind: 'close', code, reason: reason.toString() }));
    ws.on('ping', () => this.emit({ kind: 'ping' }));
    ws.on('pong', () => this.emit({ kind: 'pong' }));
    ws.on('error', (err) => this.emit({ kind: 'error', err }));
  }

  private emit(ev: Event): void {
    if (!this.handlers) {
      this.early.push(ev);
      return;
    }
    const h = this.handlers;
    switch (ev.kind) {
      case 'message': h.message(ev.data, ev.binary); break;
      case 'close':
        if (this.closedReported) return;
        this.closedReported = true;
        h.close(ev.code, ev.reason);
        break;
      case 'ping': h.ping?.(); break;
      case 'pong': h.pong?.(); break;
      case 'error': h.error?.(ev.err as Error & { code?: string }); break;
    }
  }

  setHandlers(handlers: SocketHandlers): void {
    this.handlers = handlers;
    const early = this.early;
    this.early = [];
    for (const ev of early) this.emit(ev);
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  send(message: Uint8Array | readonly Uint8Array[], sent?: (err?: Error) => void): void {
    const cb = sent ? (err?: Error) => sent(err ?? undefined) : undefined;
    if (message instanceof Uint8Array) {
      this.ws.send(message, { binary: true }, cb);
      return;
    }
    const chunks = message as readonly Uint8Array[];
    if (chunks.length === 1) {
      this.ws.send(chunks[0]!, { binary: true }, cb);
      return;
    }
    // The chunks go out as the fragments of one message, corked so they leave in one write.
    this.tcp?.cork();
    try {
      const last = chunks.length - 1;
      for (let i = 0; i < last; i++) this.ws.send(chunks[i]!, { binary: true, fin: false });
      this.ws.send(chunks[last] ?? Buffer.alloc(0), { binary: true, fin: true }, cb);
    } finally {
      this.tcp?.uncork();
    }
  }

  ping(): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.ping();
  }

  pause(): void {
    this.ws.pause();
  }

  resume(): void {
    this.ws.resume();
  }

  close(code?: number, reason?: string): void {
    this.ws.close(code, reason);
  }

  terminate(): void {
    this.ws.terminate();
  }
}

function offeredProtocols(header: string | string[] | undefined): string[] {
  return typeof header === 'string' ? header.split(',').map((p) => p.trim()).filter((p) => p !== '') : [];
}

export class WsTransport implements Transport {
  listen(at: ListenAt, opts: ListenOptions, onConnection: (socket: AcceptedSocket) => void): Promise<Listener> {
    return new Promise((resolve, reject) => {
      const ctx = opts.tls?.context;
      const httpsServer = ctx ? https.createServer(ctx.serverOptions(opts.tls?.clientAuthOf)) : null;
      const subprotocol = opts.subprotocol;
      const common = {
        maxPayload: opts.frameBytesMax, perMessageDeflate: false,
        ...(subprotocol !== undefined ? { handleProtocols: (offered: Set<string>) => (offered.has(subprotocol) ? subprotocol : false) } : {}),
      };
      const wss = httpsServer
        ? new WebSocketServer({ server: httpsServer, ...common })
        : new WebSocketServer({ host: at.host, port: at.port, ...common });
      const emitter = httpsServer ?? wss;
      // ws re-emits the HTTPS server's errors; they are handled on the server itself.
      if (httpsServer) wss.on('error', () => undefined);
      const onError = (err: NodeJS.ErrnoException): void => {
        wss.close();
        httpsServer?.close();
        const code = err.code ?? 'EUNKNOWN';
        reject(new TransportError(code === 'EADDRINUSE' ? `address ${at.host}:${at.port} is already in use` : `cannot listen on ${at.host}:${at.port}: ${err.message}`, code));
      };
      emitter.once('error', onError);
      emitter.once('listening', () => {
        emitter.off('error', onError);
        // Errors after binding (a failed accept) are the OS's; the connections report their own.
        emitter.on('error', () => undefined);
        const detachTls = httpsServer && ctx ? ctx.attach(httpsServer, opts.tls?.name ?? 'listener') : undefined;
        const bound = httpsServer ? httpsServer.address() : wss.address();
        const port = bound === null || typeof bound === 'string' ? at.port : bound.port;
        resolve({ port, close: () => closeServer(wss, httpsServer, detachTls) });
      });
      if (httpsServer) httpsServer.listen(at.port, at.host);
      wss.on('connection', (ws, req) => {
        const tcp = req.socket;
        const verdict = ctx ? ctx.checkPeer(tcp as TLSSocket) : undefined;
        onConnection(new WsSocket(ws, tcp.remoteAddress ?? '?', tcp.remotePort, tcp, offeredProtocols(req.headers['sec-websocket-protocol']), verdict));
      });
    });
  }

  dial(url: string, opts: DialOptions): Promise<MessageSocket> {
    return new Promise((resolve, reject) => {
      let ws: WebSocket;
      try {
        ws = new WebSocket(url, opts.protocols ? [...opts.protocols] : [], {
          perMessageDeflate: false, handshakeTimeout: opts.connectTimeoutMs, maxPayload: opts.frameBytesMax,
          ...(opts.localAddress !== undefined ? { localAddress: opts.localAddress } : {}),
          ...dialOptions(url, opts.tls),
        });
      } catch (err) {
        reject(new TransportError(`cannot connect to ${url}: ${(err as Error).message}`, 'EINVAL'));
        return;
      }
      // Wrapped at once so nothing the peer sends right after the handshake is missed.
      const socket = new WsSocket(ws, '', undefined, null);
      let why = '';
      const onError = (err: NodeJS.ErrnoException): void => {
        why = err.message;
        if (err.code) code = err.code;
      };
      let code = 'ECONNREFUSED';
      const onClose = (): void => reject(new TransportError(why || `connection to ${url} closed before it opened`, code));
      ws.on('error', onError);
      ws.once('close', onClose);
      ws.once('open', () => {
        ws.off('error', onError);
        ws.off('close', onClose);
        const tcp = (ws as unknown as { _socket?: Socket })._socket;
        Object.assign(socket, { remoteAddress: tcp?.remoteAddress ?? '?', remotePort: tcp?.remotePort });
        resolve(socket);
      });
    });
  }
}

function closeServer(wss: WebSocketServer, httpsServer: https.Server | null, detachTls: (() => void) | undefined): Promise<void> {
  detachTls?.();
  for (const client of wss.clients) client.terminate();
  return new Promise((resolve) => wss.close(() => {
    if (!httpsServer) return resolve();
    httpsServer.close(() => resolve());
    httpsServer.closeAllConnections();
  }));
}

/** The one WsTransport of a process (it holds no state). */
export const WS_TRANSPORT: Transport = new WsTransport();
