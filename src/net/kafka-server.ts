// The TCP listener of Kafka's binary protocol: length-prefixed frames in,
// length-prefixed frames out, one connection at a time per socket.
//
// Framing: every request and response is a 4-byte big-endian size followed by
// that many bytes. A size over `requestBytesMax` (Kafka's
// socket.request.max.bytes) or below the smallest header closes the
// connection with a logged reason before anything is buffered for it.
//
// Ordering: the handler is called synchronously, in arrival order, so state a
// handler changes before its first `await` (a produce's append) changes in the
// order the client sent its requests. Kafka clients require responses in
// request order (the Java client checks each correlation id against its
// oldest in-flight request), so answers that finish early wait in a queue
// until every earlier one is written.
//
// Bounds: at most `requestsInFlightMax` requests wait for their answers
// (Kafka's queued.max.requests, per connection here) and at most
// `sendBufferBytesMax` answer bytes wait in the socket; past either the
// connection stops reading (TCP back-pressure on the client) until it drains.
// A connection with no traffic for `idleMs` (connections.max.idle.ms) is
// closed. A handler that throws — a malformed frame — closes that connection
// with a logged reason; nothing else is affected.
//
// With a TlsContext the listener speaks TLS (Kafka's SSL and SASL_SSL
// security protocols): requests are read once the handshake is done, and the
// connection's security session carries tls and the client certificate's
// principal (tls.ts).
//
// Throttling (KIP-219): throttle(ms) mutes the connection — no further frame
// is dispatched, and the socket is not read, until ms have passed on the
// injected scheduler. Answers already due are still written.

import net from 'node:net';
import tls from 'node:tls';
import type { TlsContext } from './tls.js';
import type { Logger } from '../util/logger.js';
import type { ConnectionInfo } from './server-connection.js';
import { anonymousSession, principalString, type SecuritySession } from '../security/principal.js';
import { SystemScheduler, type Scheduler } from '../util/clock.js';
import { FlowControl } from './flow.js';

export interface KafkaConnectionLimits {
  /** Largest request frame accepted (socket.request.max.bytes). */
  readonly requestBytesMax: number;
  /** Requests read but not yet answered, per connection (queued.max.requests). */
  readonly requestsInFlightMax: number;
  /** Answer bytes handed to the socket but not yet written; reading pauses above this. */
  readonly sendBufferBytesMax: number;
  /** A connection without traffic for this long is closed (connections.max.idle.ms). */
  readonly idleMs: number;
}

export const DEFAULT_KAFKA_LIMITS: KafkaConnectionLimits = {
  requestBytesMax: 100 * 1024 * 1024,
  requestsInFlightMax: 500,
  sendBufferBytesMax: 32 * 1024 * 1024,
  idleMs: 600_000,
};

/** A request header is at least apiKey + apiVersion + correlationId + client id length. */
const REQUEST_BYTES_MIN = 10;
const SIZE_BYTES = 4;

/**
 * Serves one request frame (the bytes after the size). Returns the answer's
 * chunks without the size prefix, or null for a request that gets no answer
 * (Produce with acks=0). Throwing, or rejecting, closes the connection: the
 * error's message is logged as the reason.
 */
export type KafkaFrameHandler = (frame: Buffer, conn: ConnectionInfo) => Uint8Array[] | null | Promise<Uint8Array[] | null>;

interface Slot {
  done: boolean;
  chunks: Uint8Array[] | null;
}

export class KafkaConnection implements ConnectionInfo {
  closed = false;
  readonly security: SecuritySession = anonymousSession();
  private readonly pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The size of the frame being read, once its prefix is in; -1 while waiting for a prefix. */
  private frameBytes = -1;
  private readonly slots: Slot[] = [];
  private unsentBytes = 0;
  /** Read back-pressure: the same rule as the WebSocket listener's (net/flow.ts). */
  private readonly flow = new FlowControl(() => this.socket.pause(), () => this.socket.resume());
  /** Muted by a quota throttle: frames stay buffered until the timer ends it. */
  private muted = false;
  private unmute: (() => void) | null = null;

  constructor(
    readonly id: number,
    readonly remoteAddress: string,
    private readonly socket: net.Socket,
    private readonly handler: KafkaFrameHandler,
    private readonly limits: KafkaConnectionLimits,
    private readonly log: Logger,
    private readonly scheduler: Scheduler = SystemScheduler,
  ) {
    socket.setNoDelay(true);
    socket.setTimeout(limits.idleMs, () => this.closeWith(`idle for ${limits.idleMs} ms (connections.max.idle.ms)`, 'debug'));
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('close', () => {
      this.closed = true;
      this.unmute?.();
    });
    socket.on('error', (err) => this.log.debug({ conn: this.id, err: err.message }, 'connection error'));
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    this.drain();
  }

  private drain(): void {
    for (;;) {
      if (this.muted || this.closed) return;
      if (this.frameBytes < 0) {
        if (this.pendingBytes < SIZE_BYTES) return;
        const size = this.take(SIZE_BYTES).readInt32BE(0);
        if (size < REQUEST_BYTES_MIN || size > this.limits.requestBytesMax) {
          this.closeWith(`request size ${size} outside [${REQUEST_BYTES_MIN}, ${this.limits.requestBytesMax}] (socket.request.max.bytes)`);
          return;
        }
        this.frameBytes = size;
      }
      if (this.pendingBytes < this.frameBytes) return;
      const frame = this.take(this.frameBytes);
      this.frameBytes = -1;
      this.dispatch(frame);
      if (this.closed) return;
    }
  }

  /** The next `n` buffered bytes, as a view when they lie in one chunk. */
  private take(n: number): Buffer {
    const head = this.pending[0]!;
    let out: Buffer;
    if (head.length >= n) {
      out = head.subarray(0, n);
      if (head.length === n) this.pending.shift();
      else this.pending[0] = head.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      let filled = 0;
      while (filled < n) {
        const c = this.pending[0]!;
        const k = Math.min(c.length, n - filled);
        c.copy(out, filled, 0, k);
        filled += k;
        if (k === c.length) this.pending.shift();
        else this.pending[0] = c.subarray(k);
      }
    }
    this.pendingBytes -= n;
    return out;
  }

  private dispatch(frame: Buffer): void {
    const slot: Slot = { done: false, chunks: null };
    this.slots.push(slot);
    this.updateFlow();
    let result: Uint8Array[] | null | Promise<Uint8Array[] | null>;
    try {
      result = this.handler(frame, this);
    } catch (err) {
      this.closeWith(`malformed request: ${(err as Error).message}`);
      return;
    }
    if (result instanceof Promise) {
      result.then((chunks) => this.complete(slot, chunks), (err: Error) => this.closeWith(`request failed: ${err.message}`, 'error'));
    } else {
      this.complete(slot, result);
    }
  }

  private complete(slot: Slot, chunks: Uint8Array[] | null): void {
    slot.done = true;
    slot.chunks = chunks;
    if (this.closed) return;
    while (this.slots.length > 0 && this.slots[0]!.done) {
      const head = this.slots.shift()!;
      if (head.chunks) this.write(head.chunks);
    }
    this.updateFlow();
  }

  private write(chunks: Uint8Array[]): void {
    let bytes = 0;
    for (const c of chunks) bytes += c.byteLength;
    const size = Buffer.allocUnsafe(SIZE_BYTES);
    size.writeInt32BE(bytes, 0);
    this.unsentBytes += bytes + SIZE_BYTES;
    this.socket.cork();
    this.socket.write(size);
    const last = chunks.length - 1;
    for (let i = 0; i < last; i++) this.socket.write(chunks[i]!);
    this.socket.write(chunks[last] ?? Buffer.alloc(0), () => {
      this.unsentBytes -= bytes + SIZE_BYTES;
      this.updateFlow();
    });
    this.socket.uncork();
  }

  /** Mutes the connection for `ms` from now (a quota throttle); a later throttle replaces an earlier one. */
  throttle(ms: number): void {
    if (this.closed || ms <= 0) return;
    this.unmute?.();
    this.muted = true;
    this.updateFlow();
    const cancel = this.scheduler.schedule(ms, () => {
      this.unmute = null;
      this.muted = false;
      this.updateFlow();
      this.drain();
    });
    this.unmute = cancel;
  }

  get isMuted(): boolean {
    return this.muted;
  }

  /** Pauses reading while over a limit or muted; resumes once back under half of it. */
  private updateFlow(): void {
    if (this.closed) return;
    const busy = this.slots.length >= this.limits.requestsInFlightMax || this.muted;
    this.flow.update(busy, this.unsentBytes, this.limits.sendBufferBytesMax);
  }

  /** ConnectionInfo.close: ends the socket after every answer handed to it so far is written (a SASL failure's answer). */
  close(reason: string): void {
    if (this.closed) return;
    // Answers still being computed are dropped; those already written go out before the FIN.
    this.closed = true;
    this.log.warn({ conn: this.id, remote: this.remoteAddress, reason }, 'closing Kafka connection');
    this.socket.end();
    this.socket.setTimeout(5_000, () => this.socket.destroy());
  }

  closeWith(reason: string, level: 'warn' | 'debug' | 'error' = 'warn'): void {
    if (this.closed) return;
    this.closed = true;
    this.log[level]({ conn: this.id, remote: this.remoteAddress, reason }, 'closing Kafka connection');
    this.socket.destroy();
  }

  get inFlightCount(): number {
    return this.slots.length;
  }
}

export class KafkaServer {
  private readonly server: net.Server;
  private readonly connections = new Set<KafkaConnection>();
  private nextId = 1;
  private readonly detachTls: (() => void) | null = null;

  constructor(
    private readonly handler: KafkaFrameHandler,
    private readonly log: Logger,
    private readonly limits: KafkaConnectionLimits = DEFAULT_KAFKA_LIMITS,
    /** Present: the listener speaks TLS (SSL:// or SASL_SSL://). */
    private readonly tlsContext?: TlsContext,
    /** Called for every accepted connection before its first byte is read (the SASL layer arms its timeout); returns a clean-up for its close. */
    private readonly onOpen?: (conn: KafkaConnection) => (() => void),
    /** Timers of quota throttles (a muted connection's wake-up). */
    private readonly scheduler: Scheduler = SystemScheduler,
  ) {
    if (tlsContext) {
      const server = tls.createServer(tlsContext.serverOptions('kafka'), (socket) => this.onConnection(socket));
      this.detachTls = tlsContext.attach(server, 'kafka');
      this.server = server;
    } else {
      this.server = net.createServer((socket) => this.onConnection(socket));
    }
  }

  private onConnection(socket: net.Socket): void {
    const verdict = this.tlsContext?.checkPeer(socket as tls.TLSSocket);
    if (verdict && !verdict.ok) {
      this.log.warn({ remote: socket.remoteAddress, reason: verdict.reason }, 'closing Kafka connection');
      socket.destroy();
      return;
    }
    const conn = new KafkaConnection(this.nextId++, socket.remoteAddress ?? '?', socket, this.handler, this.limits, this.log, this.scheduler);
    if (verdict?.ok) {
      Object.assign(conn.security, verdict.session);
      if (verdict.session.mechanism === 'SSL') this.log.info({ conn: conn.id, remote: conn.remoteAddress, principal: principalString(verdict.session.principal) }, 'TLS client authenticated');
    }
    this.connections.add(conn);
    const cleanup = this.onOpen?.(conn);
    socket.on('close', () => {
      this.connections.delete(conn);
      cleanup?.();
    });
  }

  listen(addr: { host: string; port: number }): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.server.once('error', onError);
      this.server.listen(addr.port, addr.host, () => {
        this.server.off('error', onError);
        this.server.on('error', (err) => this.log.error({ err: err.message }, 'Kafka listener error'));
        const a = this.server.address() as net.AddressInfo;
        resolve({ host: a.address, port: a.port });
      });
    });
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  close(): Promise<void> {
    this.detachTls?.();
    for (const c of this.connections) c.closeWith('listener closing', 'debug');
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
