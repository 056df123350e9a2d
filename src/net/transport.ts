// The network seam: every connection between Sluice nodes, and from a node's
// clients, goes through a Transport. A Transport dials a URL and gets a
// message socket, or listens on an address and is handed the sockets it
// accepts. A message socket carries whole binary messages in order, with
// back-pressure (pause/resume, bufferedAmount), keepalive pings and a close
// code — what a WebSocket gives, and nothing that only WebSockets have.
//
// Two implementations:
//   - WsTransport (ws-transport.ts): the process's, on `ws` (and HTTPS for
//     wss://, with the TLS context's peer checks);
//   - the simulation's in-memory network (test/sim/cluster/sim-network.ts):
//     ordered per connection, delays, partitions and connection breaks drawn
//     from one seeded Rng and timed on one Scheduler.
// Everything above this seam (the broker listener, the controller listener,
// Raft peer links, the quorum client) is the same code in both.
//
// Contract, which both implementations keep:
//   - messages on one socket arrive whole and in the order sent; nothing is
//     lost or duplicated while the socket is open — loss is a closed socket;
//   - `close` is reported exactly once, after the last message delivered;
//     handlers set with setHandlers() see every event, even ones that
//     happened before they were set (they are queued until then);
//   - no handler is ever called synchronously from the call that caused it
//     (send, close, dial): callers may rely on "not before my next await";
//   - a socket pinged by its peer answers by itself; ping() asks for a pong.
//
// This file is portable (types and a WebSocketLike adapter, no Node module),
// so a browser bundle could import it.

import type { SecuritySession } from '../security/principal.js';
import type { ClientListener, PeerVerdict, TlsContext, TlsDialer } from './tls.js';
import type { WebSocketFactory, WebSocketLike } from './client-link.js';

/** What a message socket reports. Only `message` and `close` are required. */
export interface SocketHandlers {
  /** One whole message. `binary` is false for a text frame (not part of any Sluice protocol: listeners close on one). */
  message(data: Uint8Array, binary: boolean): void;
  /** The socket is gone (either end closed it, or the connection broke); called once, last. */
  close(code: number, reason: string): void;
  /** The peer pinged us (the socket answered already): a sign of life. */
  ping?(): void;
  /** The peer answered our ping(). */
  pong?(): void;
  /**
   * A socket-level error; `close` follows. `code` WS_ERR_* means the peer
   * broke the protocol (a message over frameBytesMax: 1009); others are the
   * network's (a reset).
   */
  error?(err: Error & { readonly code?: string }): void;
}

/** One connection: whole messages in order, both ways. */
export interface MessageSocket {
  /** The peer's address (an IP, or the simulated host name). */
  readonly remoteAddress: string;
  readonly remotePort: number | undefined;
  /** True from open until close was called or reported. */
  readonly isOpen: boolean;
  /** Bytes handed to send() that the network has not taken yet. */
  readonly bufferedAmount: number;
  setHandlers(handlers: SocketHandlers): void;
  /**
   * Sends one message, given as one buffer or as the chunks that make it up
   * (written together: a fetch answer's pass-through record batches).
   * `sent` is called once the bytes left (err: they never will).
   */
  send(message: Uint8Array | readonly Uint8Array[], sent?: (err?: Error) => void): void;
  ping(): void;
  /** Stops delivering messages (they wait; the peer's sends back up) until resume(). */
  pause(): void;
  resume(): void;
  /** Closes after what was sent; a reason longer than 123 UTF-8 bytes may throw (WebSocket's limit). */
  close(code?: number, reason?: string): void;
  /** Drops the connection at once. */
  terminate(): void;
}

/** A socket a listener accepted. */
export interface AcceptedSocket extends MessageSocket {
  /** The subprotocols the dialer offered, in order ("sluice", "bearer.<token>": docs/protocol.md). */
  readonly protocols: readonly string[];
  /** On a TLS listener: what the peer's certificate says (a session, or why to refuse it). */
  readonly tls: PeerVerdict | undefined;
}

/** Where to listen: a host and port (0: any free port). */
export interface ListenAt {
  readonly host: string;
  readonly port: number;
}

export interface ListenOptions {
  /** Largest message accepted; a larger one closes the connection (1009). */
  readonly frameBytesMax: number;
  /** Present: a TLS listener (wss://) following this context's reloads. */
  readonly tls?: {
    readonly context: TlsContext;
    /** Whose ssl.client.auth setting applies (absent: the node-wide one). */
    readonly clientAuthOf?: ClientListener;
    /** Names the listener in TLS handshake failure logs. */
    readonly name: string;
  };
  /** The one subprotocol this listener answers when offered (WebSocket's Sec-WebSocket-Protocol). */
  readonly subprotocol?: string;
}

export interface Listener {
  /** The port actually bound (useful with port 0). */
  readonly port: number;
  /** Stops accepting and drops every connection it accepted. */
  close(): Promise<void>;
}

export interface DialOptions {
  /** Largest message accepted from the peer. */
  readonly frameBytesMax: number;
  /** The dial fails if the connection is not open within this time. */
  readonly connectTimeoutMs: number;
  /** Subprotocols to offer. */
  readonly protocols?: readonly string[];
  /** The local address to dial from (--outbound-address); the OS picks when absent. */
  readonly localAddress?: string;
  /** What a wss:// dial presents and checks. */
  readonly tls?: TlsDialer;
}

/** A listen/dial failure: `code` EADDRINUSE for a taken address, ECONNREFUSED/ETIMEDOUT/... for a dial. */
export class TransportError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
    this.name = 'TransportError';
  }
}

export interface Transport {
  /** Binds `at`; resolves once bound, rejects with a TransportError (nothing left open). */
  listen(at: ListenAt, opts: ListenOptions, onConnection: (socket: AcceptedSocket) => void): Promise<Listener>;
  /** Opens a connection to a ws:// or wss:// URL; rejects with a TransportError. */
  dial(url: string, opts: DialOptions): Promise<MessageSocket>;
}

/** The security session an accepted socket starts with: its TLS verdict's, else anonymous (plain or TLS). */
export function initialSession(socket: AcceptedSocket, anonymous: (tls: boolean) => SecuritySession): SecuritySession {
  const v = socket.tls;
  return v?.ok ? { ...v.session } : anonymous(v !== undefined);
}

// ------------------------------------------------------------ WebSocketLike over a Transport

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

/**
 * The browser-style WebSocket interface (what ClientLink, the client and the
 * replica fetcher dial through) over a Transport: so the real client runs on
 * the simulated network unchanged. Events fire as the standard says: open,
 * then messages, then close (after error for a failed dial).
 */
class TransportWebSocket implements WebSocketLike {
  binaryType = 'arraybuffer';
  readyState = CONNECTING;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  private socket: MessageSocket | undefined;
  /** close() called while still connecting: close as soon as the dial settles. */
  private closeWhenOpen = false;

  constructor(transport: Transport, url: string, opts: DialOptions) {
    transport.dial(url, opts).then((socket) => this.opened(socket), (err: Error) => {
      this.readyState = CLOSED;
      if (!this.closeWhenOpen) this.onerror?.({ message: err.message });
      this.onclose?.({ code: 1006, reason: '' });
    });
  }

  private opened(socket: MessageSocket): void {
    if (this.closeWhenOpen) {
      socket.terminate();
      this.readyState = CLOSED;
      this.onclose?.({ code: 1006, reason: '' });
      return;
    }
    this.socket = socket;
    this.readyState = OPEN;
    socket.setHandlers({
      message: (data) => {
        const copy = new Uint8Array(data.byteLength);
        copy.set(data);
        this.onmessage?.({ data: this.binaryType === 'arraybuffer' ? copy.buffer : copy });
      },
      close: (code, reason) => {
        this.readyState = CLOSED;
        this.onclose?.({ code, reason });
      },
      error: (err) => this.onerror?.({ message: err.message }),
    });
    this.onopen?.({});
  }

  get bufferedAmount(): number {
    return this.socket?.bufferedAmount ?? 0;
  }

  /** As a browser's: an error while connecting; after close() the data is dropped. */
  send(data: Uint8Array): void {
    if (this.readyState === CONNECTING) throw new Error('WebSocket is still connecting');
    if (this.readyState === OPEN) this.socket?.send(data);
  }

  close(code?: number, reason?: string): void {
    if (this.readyState === CLOSED || this.readyState === CLOSING) return;
    this.readyState = CLOSING;
    if (!this.socket) {
      this.closeWhenOpen = true;
      return;
    }
    this.socket.close(code, reason);
  }
}

/** A WebSocketFactory (the client's and replica fetcher's dialer) that dials through `transport`. */
export function webSocketFactoryOver(transport: Transport, opts: Omit<DialOptions, 'protocols'>): WebSocketFactory {
  return (url, protocols) => new TransportWebSocket(transport, url, { ...opts, ...(protocols ? { protocols } : {}) });
}
