// One client connection to a broker: many requests in flight, responses
// matched by correlation id, each with its own timeout. Written against the
// standard (browser) WebSocket interface, which `ws` also implements, and
// imports no Node-only module: the WebSocket constructor is injected, so the
// same client code can run in a browser.
//
// Failure is a value: a lost connection rejects every pending request with a
// retriable NETWORK_EXCEPTION, a timeout with REQUEST_TIMED_OUT; an
// undecodable response closes the link (the stream can no longer be trusted).
//
// One-way frames (send(): a produce with acks=0, which the broker never
// answers) share the request queue, so frames leave in the order the caller
// issued them; they take no in-flight slot and have no timeout.

import { decodeResponse, encodeRequest, CORRELATION_ID_MAX } from '../protocol/envelope.js';
import { Errors, SluiceError } from '../util/errors.js';
import type { Scheduler } from '../util/clock.js';

/** The part of the WHATWG WebSocket interface the client uses. */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

/** Makes a WebSocket; `protocols` are the subprotocols to offer ("sluice", "bearer.<token>": docs/protocol.md). */
export type WebSocketFactory = (url: string, protocols?: readonly string[]) => WebSocketLike;

export interface ClientLinkOptions {
  readonly factory: WebSocketFactory;
  readonly clientId?: string;
  readonly connectTimeoutMs?: number;
  /** Subprotocols offered on connect (a browser's bearer token: ["sluice", "bearer.<token>"]). */
  readonly protocols?: readonly string[];
  /** Requests awaiting a response; further requests wait in a bounded queue. */
  readonly requestsInFlightMax?: number;
  /** Requests waiting for an in-flight slot; beyond this, request() fails fast. */
  readonly requestsQueuedMax?: number;
  /** Times the connect and request timeouts (the simulation's scheduler; default FALLBACK_TIMERS). */
  readonly scheduler?: Scheduler;
}

/**
 * Timers when the caller injects none: setTimeout, unref'd where the runtime
 * has unref (Node), so it works in browsers too. util/clock.ts's
 * SystemScheduler calls unref unconditionally and cannot run in a browser
 * yet; once it can, it replaces this.
 */
const FALLBACK_TIMERS: Scheduler = {
  schedule(delayMs, fn) {
    const t = setTimeout(fn, Math.max(0, delayMs)) as { unref?: () => void };
    t.unref?.();
    return () => clearTimeout(t as ReturnType<typeof setTimeout>);
  },
};

interface Pending {
  resolve(body: unknown): void;
  reject(err: Error): void;
  /** Cancels the request's timeout. */
  timer: (() => void) | null;
}

/** A frame waiting to be written: a request that awaits its response, or a one-way frame. */
type Queued =
  | { readonly kind: 'request'; readonly frame: Uint8Array; readonly correlationId: number; readonly pending: Pending; readonly timeoutMs: number }
  | { readonly kind: 'oneWay'; readonly frame: Uint8Array; readonly sent: () => void; readonly reject: (err: Error) => void };

const OPEN = 1;

export class ClientLink {
  private nextCorrelationId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly queue: Queued[] = [];
  private closedError: SluiceError | null = null;
  private closeListeners: Array<(err: SluiceError) => void> = [];
  private readonly inFlightMax: number;
  private readonly queuedMax: number;
  private readonly scheduler: Scheduler;

  private constructor(readonly url: string, private readonly ws: WebSocketLike, private readonly opts: ClientLinkOptions) {
    this.scheduler = opts.scheduler ?? FALLBACK_TIMERS;
    this.inFlightMax = opts.requestsInFlightMax ?? 1024;
    this.queuedMax = opts.requestsQueuedMax ?? 65536;
    ws.onmessage = (ev) => this.onMessage(ev.data);
    ws.onclose = (ev) => this.fail(new SluiceError(Errors.NETWORK_EXCEPTION, `connection to ${url} closed (${ev.code}${ev.reason ? ` ${ev.reason}` : ''})`));
    ws.onerror = () => {};
  }

  static connect(url: string, opts: ClientLinkOptions): Promise<ClientLink> {
    return new Promise((resolve, reject) => {
      let ws: WebSocketLike;
      try {
        ws = opts.protocols ? opts.factory(url, opts.protocols) : opts.factory(url);
      } catch (err) {
        reject(new SluiceError(Errors.NETWORK_EXCEPTION, `cannot connect to ${url}: ${(err as Error).message}`));
        return;
      }
      ws.binaryType = 'arraybuffer';
      const cancelTimer = (opts.scheduler ?? FALLBACK_TIMERS).schedule(opts.connectTimeoutMs ?? 10_000, () => {
        // Closing a socket still connecting makes `ws` emit an error; with no
        // listener left that error would be thrown and end the process.
        ws.onopen = ws.onclose = null;
        ws.onerror = () => {};
        ws.close();
        reject(new SluiceError(Errors.NETWORK_EXCEPTION, `cannot connect to ${url}: timed out after ${opts.connectTimeoutMs ?? 10_000} ms`));
      });
      ws.onopen = () => {
        cancelTimer();
        resolve(new ClientLink(url, ws, opts));
      };
      // The error event says why a connection failed (refused, a TLS certificate that does not verify); the close event only 1006.
      let why = '';
      ws.onerror = (ev) => {
        const message = (ev as { message?: unknown } | null)?.message;
        if (typeof message === 'string' && message.trim() !== '') why = `: ${message.trim().replace(/\s+/g, ' ')}`;
      };
      ws.onclose = (ev) => {
        cancelTimer();
        reject(new SluiceError(Errors.NETWORK_EXCEPTION, `cannot connect to ${url} (${ev.code}${ev.reason ? ` ${ev.reason}` : ''})${why}`));
      };
    });
  }

  get isOpen(): boolean {
    return this.closedError === null && this.ws.readyState === OPEN;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Sends a request and resolves with the response body (whatever its error codes say). */
  request<T = unknown>(apiKey: number, apiVersion: number, body: object, timeoutMs: number): Promise<T> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    const correlationId = this.takeCorrelationId();
    const frame = encodeRequest({ apiKey, apiVersion, correlationId, clientId: this.opts.clientId ?? null, body });
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { resolve: resolve as (b: unknown) => void, reject, timer: null };
      this.queue.push({ kind: 'request', frame, correlationId, pending, timeoutMs });
      this.pump();
    });
  }

  /**
   * Sends a request the server does not answer (produce with acks=0) and
   * resolves once the frame is handed to the socket, behind every frame
   * issued before it. Rejects if the link fails first.
   */
  send(apiKey: number, apiVersion: number, body: object): Promise<void> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    const frame = encodeRequest({ apiKey, apiVersion, correlationId: this.takeCorrelationId(), clientId: this.opts.clientId ?? null, body });
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ kind: 'oneWay', frame, sent: resolve, reject });
      this.pump();
    });
  }

  private refusal(): SluiceError | null {
    if (this.closedError) return this.closedError;
    if (this.queue.length >= this.queuedMax) return new SluiceError(Errors.REQUEST_TIMED_OUT, `too many requests queued on ${this.url}`);
    return null;
  }

  private takeCorrelationId(): number {
    const id = this.nextCorrelationId;
    this.nextCorrelationId = id >= CORRELATION_ID_MAX ? 1 : id + 1;
    return id;
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.closedError) {
      const q = this.queue[0]!;
      // A one-way frame needs no slot, but still waits behind earlier requests.
      if (q.kind === 'request' && this.pending.size >= this.inFlightMax) break;
      this.queue.shift();
      if (q.kind === 'oneWay') {
        this.ws.send(q.frame);
        q.sent();
        continue;
      }
      q.pending.timer = this.scheduler.schedule(q.timeoutMs, () => {
        if (this.pending.delete(q.correlationId)) {
          q.pending.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, `no response from ${this.url} within ${q.timeoutMs} ms`));
          this.pump();
        }
      });
      this.pending.set(q.correlationId, q.pending);
      this.ws.send(q.frame);
    }
  }

  private onMessage(data: unknown): void {
    const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : (data as Uint8Array);
    const decoded = decodeResponse(bytes);
    if (!decoded.ok) {
      this.fail(new SluiceError(Errors.NETWORK_EXCEPTION, `undecodable response from ${this.url}: ${decoded.reason}`));
      this.ws.close(1007, 'undecodable response');
      return;
    }
    const pending = this.pending.get(decoded.value.correlationId);
    if (!pending) return; // timed out already
    this.pending.delete(decoded.value.correlationId);
    pending.timer?.();
    pending.resolve(decoded.value.body);
    this.pump();
  }

  private fail(err: SluiceError): void {
    if (this.closedError) return;
    this.closedError = err;
    for (const p of this.pending.values()) {
      p.timer?.();
      p.reject(err);
    }
    this.pending.clear();
    for (const q of this.queue.splice(0)) {
      if (q.kind === 'request') q.pending.reject(err);
      else q.reject(err);
    }
    for (const listener of this.closeListeners) listener(err);
    this.closeListeners = [];
  }

  onClose(listener: (err: SluiceError) => void): void {
    if (this.closedError) listener(this.closedError);
    else this.closeListeners.push(listener);
  }

  close(): void {
    this.fail(new SluiceError(Errors.NETWORK_EXCEPTION, `connection to ${this.url} closed by the client`));
    this.ws.close(1000, 'bye');
  }
}
