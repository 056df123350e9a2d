// One client connection on a broker's WebSocket listener.
//
// Ordering: handlers are called synchronously, in arrival order, so any state
// change a handler makes before its first `await` (a produce's append) happens
// in the order the client sent the requests. Responses go back as handlers
// finish — possibly out of order — matched by correlation id.
//
// Bounds: at most `requestsInFlightMax` requests are processed at once and at
// most `sendBufferBytesMax` response bytes wait in the socket; past either,
// the connection stops reading (ws pause → TCP back-pressure on the client)
// until it drains. So a slow consumer cannot grow the broker's memory.
//
// Bad input: a text frame or an undecodable envelope closes the connection
// with a logged reason; a well-formed envelope for an unknown API or version,
// or with an invalid body, gets an error response. Nothing here throws into ws.
//
// Encoding: a response is one msgpack frame (envelope.ts) unless the
// listener's encoder hands back several chunks — a fetch answer whose record
// batches are passed through, not copied (protocol/chunked-msgpack.ts). The
// chunks go out as one message (the transport writes them together: over
// WebSockets, as the fragments of one message in one corked write).
//
// The connection reads and writes a MessageSocket (transport.ts), so the same
// code serves real WebSockets and the simulation's in-memory network.
//
// Throttling (KIP-219): throttle(ms) mutes the connection — frames that
// arrive wait in the backlog and ws is paused — until ms have passed on the
// injected scheduler. Answers already due are still sent.

import type { MessageSocket } from './transport.js';
import { FlowControl } from './flow.js';
import { decodeRequest, encodeResponse, type Decoded, type RequestEnvelope } from '../protocol/envelope.js';
import { apiName } from '../protocol/api-keys.js';
import { Errors, SluiceError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { ConnectionLimits } from './limits.js';
import { anonymousSession, type SecuritySession } from '../security/principal.js';
import { SystemScheduler, type Scheduler } from '../util/clock.js';

export interface ConnectionInfo {
  readonly id: number;
  readonly remoteAddress: string;
  /** True once the socket is gone; long polls check it to stop early. */
  readonly closed: boolean;
  /** Who the client is (anonymous until authenticated); src/security/principal.ts. */
  readonly security: SecuritySession;
  /**
   * Closes the connection with a logged reason once the answers already
   * handed to it are written (a failed SASL exchange, an expired session).
   */
  close?(reason: string): void;
}

/** What a handler returns for a request that gets no response (produce with acks=0, as in Kafka). */
export const NO_RESPONSE: unique symbol = Symbol('no response');

/**
 * Returns the response body (sync or async), or NO_RESPONSE. SluiceError →
 * error body; anything else → UNKNOWN_SERVER_ERROR.
 */
export type RequestHandler = (req: RequestEnvelope, conn: ConnectionInfo) => unknown | Promise<unknown>;

/**
 * Encodes a response frame ([correlationId, body]) as the chunks of one
 * message; the default is one msgpack buffer. It may throw: the connection
 * then answers with an error body.
 */
export type ResponseEncoder = (req: RequestEnvelope, body: unknown) => readonly Uint8Array[];

export const defaultResponseEncoder: ResponseEncoder = (req, body) => [encodeResponse({ correlationId: req.correlationId, body })];

/** Body of a response that failed as a whole. */
export interface ErrorBody {
  readonly errorCode: number;
  readonly errorMessage: string;
}

export function errorBody(err: unknown): ErrorBody {
  // Details (e.g. the controller id of a NOT_CONTROLLER) travel beside the code so clients can follow them.
  if (err instanceof SluiceError) return { ...err.details, errorCode: err.code, errorMessage: err.message };
  return { errorCode: Errors.UNKNOWN_SERVER_ERROR.code, errorMessage: Errors.UNKNOWN_SERVER_ERROR.message };
}

/** A WebSocket close reason is at most 123 bytes of UTF-8 (RFC 6455 5.5: 125-byte control payload less the code). */
const CLOSE_REASON_BYTES_MAX = 123;

/**
 * The reason cut to CLOSE_REASON_BYTES_MAX bytes at a character boundary. It
 * quotes the client's bytes (a string api key of multibyte characters), and
 * cutting by UTF-16 units instead let ws throw from close() and kill the
 * process (found by test/integration/fuzz.test.ts).
 */
function closeReason(reason: string): string {
  let out = '';
  let bytes = 0;
  for (const ch of reason) {
    bytes += Buffer.byteLength(ch);
    if (bytes > CLOSE_REASON_BYTES_MAX) break;
    out += ch;
  }
  return out;
}

/**
 * decodeRequest is meant never to throw, but a hostile envelope made it throw
 * (an api key decoded as [{ toString: 1 }] breaks String() in its error
 * message; found by test/integration/fuzz.test.ts). An exception here would
 * escape into ws's 'message' event and kill the process, so whatever the
 * decoder throws is treated as a malformed frame.
 */
function decodeSafely(bytes: Buffer): Decoded<RequestEnvelope> {
  try {
    return decodeRequest(bytes);
  } catch (err) {
    return { ok: false, reason: `envelope decoder threw: ${err instanceof Error ? err.message : 'a non-Error value'}` };
  }
}

export class ServerConnection implements ConnectionInfo {
  private inFlight = 0;
  /**
   * Frames that arrived while at the in-flight limit. ws keeps emitting
   * frames it had already buffered after pause(), so this holds at most what
   * one socket read delivered; it is drained as slots free up.
   */
  private readonly backlog: RequestEnvelope[] = [];
  private unsentBytes = 0;
  private readonly flow: FlowControl;
  /** Muted by a quota throttle until the timer (cancelled by `unmute`) fires. */
  private muted = false;
  private unmute: (() => void) | null = null;
  closed = false;
  readonly security: SecuritySession = anonymousSession();

  constructor(
    readonly id: number,
    readonly remoteAddress: string,
    private readonly socket: MessageSocket,
    private readonly handler: RequestHandler,
    private readonly limits: ConnectionLimits,
    private readonly log: Logger,
    private readonly encoder: ResponseEncoder = defaultResponseEncoder,
    private readonly scheduler: Scheduler = SystemScheduler,
  ) {
    this.flow = new FlowControl(() => socket.pause(), () => socket.resume());
    socket.setHandlers({
      message: (data, binary) => this.onMessage(data, binary),
      close: () => {
        this.closed = true;
        this.unmute?.();
        this.closeListener?.();
      },
      error: (err) => this.onSocketError(err),
    });
  }

  /** Called once when the socket is gone (the listener's bookkeeping). */
  private closeListener: (() => void) | undefined;

  onClosed(listener: () => void): void {
    this.closeListener = listener;
  }

  /**
   * ws closes the connection itself on a protocol violation by the client (a
   * frame over frameBytesMax → 1009, bad framing → 1002) and reports it here
   * with a WS_ERR_* code: that is bad input, logged like the closes above.
   * Other errors (a reset socket) are the network's and stay at debug.
   */
  private onSocketError(err: Error): void {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code.startsWith('WS_ERR_')) this.log.warn({ conn: this.id, remote: this.remoteAddress, reason: `${code}: ${err.message}` }, 'closing connection');
    else this.log.debug({ err: err.message, conn: this.id }, 'connection error');
  }

  private onMessage(data: Uint8Array, isBinary: boolean): void {
    if (!isBinary) return this.closeWith(1003, 'text frames are not part of the protocol');
    const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const decoded = decodeSafely(bytes);
    if (!decoded.ok) return this.closeWith(1007, `malformed frame: ${decoded.reason}`);
    if (this.muted || this.inFlight >= this.limits.requestsInFlightMax || this.backlog.length > 0) this.backlog.push(decoded.value);
    else this.dispatch(decoded.value);
  }

  private dispatch(req: RequestEnvelope): void {
    this.inFlight++;
    this.updateFlow();
    let result: unknown;
    try {
      result = this.handler(req, this);
    } catch (err) {
      this.finish(req, this.failure(req, err));
      return;
    }
    if (result instanceof Promise) {
      result.then((body) => this.finish(req, body), (err) => this.finish(req, this.failure(req, err)));
    } else {
      this.finish(req, result);
    }
  }

  private failure(req: RequestEnvelope, err: unknown): ErrorBody {
    if (!(err instanceof SluiceError)) {
      this.log.error({ err, api: apiName(req.apiKey), conn: this.id }, 'request handler failed');
    }
    return errorBody(err);
  }

  private finish(req: RequestEnvelope, body: unknown): void {
    this.inFlight--;
    if (this.closed) return;
    if (body !== NO_RESPONSE) this.send(req, body);
    this.drainBacklog();
  }

  private drainBacklog(): void {
    while (this.backlog.length > 0 && this.inFlight < this.limits.requestsInFlightMax && !this.closed && !this.muted) {
      this.dispatch(this.backlog.shift()!);
    }
    this.updateFlow();
  }

  /** Mutes the connection for `ms` from now (a quota throttle); a later throttle replaces an earlier one. */
  throttle(ms: number): void {
    if (this.closed || ms <= 0) return;
    this.unmute?.();
    this.muted = true;
    this.updateFlow();
    this.unmute = this.scheduler.schedule(ms, () => {
      this.unmute = null;
      this.muted = false;
      this.drainBacklog();
    });
  }

  get isMuted(): boolean {
    return this.muted;
  }

  private send(req: RequestEnvelope, body: unknown): void {
    let chunks: readonly Uint8Array[];
    try {
      chunks = this.encoder(req, body);
    } catch (err) {
      this.log.error({ err, api: apiName(req.apiKey) }, 'response encoding failed');
      chunks = [encodeResponse({ correlationId: req.correlationId, body: errorBody(err) })];
    }
    let bytes = 0;
    for (const c of chunks) bytes += c.byteLength;
    this.unsentBytes += bytes;
    const sent = (): void => {
      this.unsentBytes -= bytes;
      this.updateFlow();
    };
    this.socket.send(chunks.length === 1 ? chunks[0]! : chunks, sent);
  }

  /** Pauses reading while over a limit; resumes once back under half of it (flow.ts). */
  private updateFlow(): void {
    if (this.closed) return;
    const busy = this.inFlight >= this.limits.requestsInFlightMax || this.backlog.length > 0 || this.muted;
    this.flow.update(busy, this.unsentBytes, this.limits.sendBufferBytesMax);
  }

  /** ConnectionInfo.close: 1008 (policy violation) after what is queued, as for an authentication failure. */
  close(reason: string): void {
    if (this.closed) return;
    this.closeWith(1008, reason);
  }

  private closeWith(code: number, reason: string): void {
    this.log.warn({ conn: this.id, remote: this.remoteAddress, reason }, 'closing connection');
    this.closed = true;
    try {
      this.socket.close(code, closeReason(reason));
    } catch (err) {
      // ws throws rather than send a close frame it considers invalid; never let that escape into its event.
      this.log.warn({ conn: this.id, err: err instanceof Error ? err.message : String(err) }, 'close failed; dropping the connection');
      this.socket.terminate();
    }
  }

  get inFlightCount(): number {
    return this.inFlight;
  }
}
