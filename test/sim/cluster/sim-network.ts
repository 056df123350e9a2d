// The in-memory network of the cluster simulation: a Transport
// (src/net/transport.ts) per simulated host, so the real listeners, Raft peer
// links, quorum clients, replica fetchers and clients run on it unchanged.
//
// Model (TCP under WebSocket, as far as the code above can tell):
//   - a connection is two pipes, one per direction; each pipe delivers in the
//     order sent. A message's arrival time is now + a delay drawn from the
//     seeded Rng for that link, but never before the previous message's on
//     the same pipe (FIFO). Connections are independent, so messages on two
//     connections may overtake each other.
//   - nothing is lost, duplicated or corrupted on an open connection. The only
//     loss is a connection break (breakConnections, crash, a listener closed):
//     both ends see close 1006 and what was in flight is gone.
//   - a blocked direction (partition, one-way partition, isolate) holds its
//     messages — TCP retransmits — and delivers them after heal(); if the
//     block lasts past the code's own keepalive or idle timeout, the code
//     breaks the connection itself, which is then the loss. A dial across a
//     block (either way: the handshake needs both) times out
//     (ETIMEDOUT after connectTimeoutMs); to an address nobody listens on it is
//     refused (ECONNREFUSED after a round trip).
//   - a held host (hold: a paused process) receives nothing until release();
//     its kernel would still take connections, but nothing answers, so dials
//     to it time out.
//   - a receiver's pause() holds its inbound pipe (back-pressure): the
//     sender's `sent` callbacks (called at delivery) stop, its bufferedAmount
//     (bytes in the pipe) grows.
//   - a message over the receiver's frameBytesMax closes the connection with
//     1009 (as ws does).
// Every handler runs from a Scheduler event, never synchronously inside the
// call that caused it; every random choice comes from the one Rng, so a run
// is a function of its seed and the order of calls.

import type { Clock, Scheduler } from '../../../src/util/clock.js';
import type { Rng } from '../../../src/util/rng.js';
import {
  TransportError, webSocketFactoryOver,
  type AcceptedSocket, type DialOptions, type ListenAt, type ListenOptions, type Listener,
  type MessageSocket, type SocketHandlers, type Transport,
} from '../../../src/net/transport.js';
import type { WebSocketFactory } from '../../../src/net/client-link.js';
import type { PeerVerdict } from '../../../src/net/tls.js';

/** A one-way delay range, in ms (uniform, inclusive). */
export interface DelayRange {
  readonly minMs: number;
  readonly maxMs: number;
}

export interface SimNetworkOptions {
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly rng: Rng;
  /** The one-way delay of every link without its own (default 1–3 ms). */
  readonly delay?: DelayRange;
  /** Called with one line per network event worth a trace (connects, breaks, partitions). */
  readonly trace?: (line: string) => void;
}

type Frame =
  | { readonly kind: 'msg'; readonly data: Uint8Array; readonly sent: ((err?: Error) => void) | undefined }
  | { readonly kind: 'ping' }
  | { readonly kind: 'pong' }
  | { readonly kind: 'close'; readonly code: number; readonly reason: string }
  /** The peer is gone without a close handshake (terminate, crash): close 1006 on arrival. */
  | { readonly kind: 'reset' };

interface InFlight {
  readonly frame: Frame;
  readonly atMs: number;
}

const PORT_FIRST = 30_000;
const CLOSE_REASON_BYTES_MAX = 123;

type Event =
  | { readonly kind: 'message'; readonly data: Uint8Array }
  | { readonly kind: 'close'; readonly code: number; readonly reason: string }
  | { readonly kind: 'ping' } | { readonly kind: 'pong' }
  | { readonly kind: 'error'; readonly err: Error & { code?: string } };

/** One direction of a connection. */
class Pipe {
  private readonly queue: InFlight[] = [];
  private lastAtMs = 0;
  /** Bytes of messages in the pipe (the sender's bufferedAmount). */
  bytes = 0;

  constructor(private readonly net: SimNetwork, readonly from: SimSocket, readonly to: SimSocket) {}

  push(frame: Frame): void {
    const now = this.net.clock.monotonicMs();
    const atMs = Math.max(now + this.net.sampleDelay(this.from.host, this.to.host), this.lastAtMs);
    this.lastAtMs = atMs;
    this.queue.push({ frame, atMs });
    if (frame.kind === 'msg') this.bytes += frame.data.byteLength;
    this.net.scheduler.schedule(atMs - now, () => this.pump());
  }

  /** Delivers every due frame in order, unless the direction is blocked or the receiver is not reading. */
  pump(): void {
    const now = this.net.clock.monotonicMs();
    while (this.queue.length > 0 && this.queue[0]!.atMs <= now) {
      if (!this.net.canDeliver(this.from.host, this.to.host) || this.to.paused) {
        this.net.stalled.add(this);
        return;
      }
      const { frame } = this.queue.shift()!;
      if (frame.kind === 'msg') this.bytes -= frame.data.byteLength;
      this.to.receive(frame);
    }
  }

  /** After a heal or resume: deliver what waited, one fresh delay from now, in order. */
  restart(): void {
    if (this.queue.length === 0) return;
    const now = this.net.clock.monotonicMs();
    const atMs = Math.max(now + this.net.sampleDelay(this.from.host, this.to.host), this.lastAtMs);
    this.lastAtMs = atMs;
    for (let i = 0; i < this.queue.length; i++) {
      const f = this.queue[i]!;
      if (f.atMs < atMs) this.queue[i] = { frame: f.frame, atMs };
    }
    this.net.scheduler.schedule(atMs - now, () => this.pump());
  }

  /** The connection broke: what was in flight is lost (senders waiting on `sent` hear so). */
  drop(err: Error): void {
    for (const f of this.queue.splice(0)) {
      if (f.frame.kind === 'msg') f.frame.sent?.(err);
    }
    this.bytes = 0;
  }
}

export class SimSocket implements AcceptedSocket {
  /** The pipe from this end to the peer (set right after construction). */
  out!: Pipe;
  peer!: SimSocket;
  private state: 'open' | 'closing' | 'closed' = 'open';
  private handlers: SocketHandlers | undefined;
  private early: Event[] = [];
  paused = false;
  remotePort: number | undefined = undefined;

  constructor(
    private readonly net: SimNetwork,
    /** The host this end lives on. */
    readonly host: string,
    readonly remoteAddress: string,
    readonly connectionId: number,
    readonly side: 'dialer' | 'acceptor',
    /** Largest message this end accepts. */
    private readonly frameBytesMax: number,
    readonly protocols: readonly string[] = [],
    readonly tls: PeerVerdict | undefined = undefined,
  ) {}

  get isOpen(): boolean {
    return this.state === 'open';
  }

  get isClosed(): boolean {
    return this.state === 'closed';
  }

  get bufferedAmount(): number {
    return this.out.bytes;
  }

  setHandlers(handlers: SocketHandlers): void {
    this.handlers = handlers;
    const early = this.early;
    this.early = [];
    for (const ev of early) this.emit(ev);
  }

  private emit(ev: Event): void {
    const h = this.handlers;
    if (!h) {
      this.early.push(ev);
      return;
    }
    switch (ev.kind) {
      case 'message': h.message(ev.data, true); break;
      case 'close': h.close(ev.code, ev.reason); break;
      case 'ping': h.ping?.(); break;
      case 'pong': h.pong?.(); break;
      case 'error': h.error?.(ev.err); break;
    }
  }

  send(message: Uint8Array | readonly Uint8Array[], sent?: (err?: Error) => void): void {
    if (this.state !== 'open') {
      if (sent) this.net.scheduler.schedule(0, () => sent(new Error('WebSocket is not open')));
      return;
    }
    const chunks = message instanceof Uint8Array ? [message] : message as readonly Uint8Array[];
    let length = 0;
    for (const c of chunks) length += c.byteLength;
    // A copy: the sender may reuse its buffer, and nodes must never share bytes.
    const data = new Uint8Array(length);
    let at = 0;
    for (const c of chunks) {
      data.set(c, at);
      at += c.byteLength;
    }
    this.out.push({ kind: 'msg', data, sent });
  }

  ping(): void {
    if (this.state === 'open') this.out.push({ kind: 'ping' });
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.peer.out.restart();
  }

  close(code = 1000, reason = ''): void {
    if (new TextEncoder().encode(reason).byteLength > CLOSE_REASON_BYTES_MAX) throw new RangeError('The message must not be greater than 123 bytes');
    if (this.state !== 'open') return;
    this.state = 'closing';
    this.out.push({ kind: 'close', code, reason });
  }

  terminate(): void {
    if (this.state === 'closed') return;
    this.net.trace(`conn ${this.connectionId} ${this.host} terminated`);
    this.closeNow(1006, '');
    this.out.drop(new Error('WebSocket was terminated'));
    this.peer.out.drop(new Error('WebSocket was terminated'));
    this.out.push({ kind: 'reset' });
  }

  /** The network broke the connection under this end. */
  broken(): void {
    if (this.state === 'closed') return;
    this.out.drop(new Error('connection broken'));
    this.closeNow(1006, '');
  }

  /** Reports close (once, on a later event) and stops sending and receiving. */
  private closeNow(code: number, reason: string): void {
    this.state = 'closed';
    this.net.forget(this);
    this.net.scheduler.schedule(0, () => this.emit({ kind: 'close', code, reason }));
  }

  /** A frame arrives from the peer. */
  receive(frame: Frame): void {
    if (this.state === 'closed') {
      if (frame.kind === 'msg') frame.sent?.(new Error('WebSocket is closed'));
      return;
    }
    switch (frame.kind) {
      case 'msg':
        if (frame.data.byteLength > this.frameBytesMax) {
          this.emit({ kind: 'error', err: Object.assign(new RangeError('Max payload size exceeded'), { code: 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' }) });
          frame.sent?.();
          this.out.drop(new Error('connection closed'));
          this.out.push({ kind: 'close', code: 1009, reason: '' });
          this.closeNow(1009, '');
          return;
        }
        frame.sent?.();
        this.emit({ kind: 'message', data: frame.data });
        return;
      case 'ping':
        this.emit({ kind: 'ping' });
        this.out.push({ kind: 'pong' });
        return;
      case 'pong':
        this.emit({ kind: 'pong' });
        return;
      case 'close':
        // Our echo (if we did not start the close), then the close event.
        if (this.state === 'open') this.out.push({ kind: 'close', code: frame.code, reason: frame.reason });
        this.state = 'closed';
        this.net.forget(this);
        this.emit({ kind: 'close', code: frame.code, reason: frame.reason });
        return;
      case 'reset':
        this.out.drop(new Error('connection reset'));
        this.closeNow(1006, '');
        return;
    }
  }
}

interface SimListener {
  readonly host: string;
  readonly key: string;
  readonly opts: ListenOptions;
  readonly onConnection: (s: AcceptedSocket) => void;
  readonly accepted: Set<SimSocket>;
}

function linkKey(from: string, to: string): string {
  return `${from}\u0000${to}`;
}

function addressKey(host: string, port: number): string {
  return `${host}:${port}`;
}

export class SimNetwork {
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  private readonly rng: Rng;
  private readonly defaultDelay: DelayRange;
  private readonly linkDelays = new Map<string, DelayRange>();
  /** Blocked directions, by linkKey(from, to). */
  private readonly blocked = new Set<string>();
  /** Hosts that receive nothing (a paused process). */
  private readonly held = new Set<string>();
  private readonly listeners = new Map<string, SimListener>();
  private readonly hosts = new Set<string>();
  private readonly nextPort = new Map<string, number>();
  /** Open connection ends, in creation order (for breaks and crashes). */
  private readonly sockets = new Set<SimSocket>();
  /** Pipes holding frames until a heal, release or resume. */
  readonly stalled = new Set<Pipe>();
  private readonly traceFn: ((line: string) => void) | undefined;
  /** Connection ids, per network so that two runs of one seed name them alike. */
  private connectionIds = 0;

  constructor(opts: SimNetworkOptions) {
    this.clock = opts.clock;
    this.scheduler = opts.scheduler;
    this.rng = opts.rng;
    this.defaultDelay = opts.delay ?? { minMs: 1, maxMs: 3 };
    this.traceFn = opts.trace;
  }

  /** The Transport of one host: it listens on addresses and dials from that host. */
  transport(host: string): Transport {
    this.hosts.add(host);
    return {
      listen: (at, opts, onConnection) => this.listen(host, at, opts, onConnection),
      dial: (url, opts) => this.dial(host, url, opts),
    };
  }

  /** The WebSocketFactory of a client on `host` (the real Client and replica fetchers dial through one). */
  webSocketFactory(host: string, opts: { frameBytesMax?: number; connectTimeoutMs?: number } = {}): WebSocketFactory {
    return webSocketFactoryOver(this.transport(host), { frameBytesMax: opts.frameBytesMax ?? 256 * 1024 * 1024, connectTimeoutMs: opts.connectTimeoutMs ?? 10_000 });
  }

  // ------------------------------------------------------------ faults

  /** Sets the one-way delay from `from` to `to` (both directions with `symmetric`). */
  setDelay(from: string, to: string, delay: DelayRange, symmetric = true): void {
    this.linkDelays.set(linkKey(from, to), delay);
    if (symmetric) this.linkDelays.set(linkKey(to, from), delay);
  }

  /** Back to the default delay everywhere. */
  clearDelays(): void {
    this.linkDelays.clear();
  }

  /** Hosts in different groups cannot reach each other (both ways); hosts in no group are unaffected. */
  partition(groups: readonly (readonly string[])[]): void {
    this.trace(`partition ${groups.map((g) => `[${g.join(',')}]`).join(' ')}`);
    for (let i = 0; i < groups.length; i++) {
      for (let j = 0; j < groups.length; j++) {
        if (i === j) continue;
        for (const a of groups[i]!) for (const b of groups[j]!) this.blocked.add(linkKey(a, b));
      }
    }
  }

  /** Messages from `from` to `to` are held; the other direction flows. */
  blockOneWay(from: string, to: string): void {
    this.trace(`block ${from}->${to}`);
    this.blocked.add(linkKey(from, to));
  }

  /** `host` can reach no other host, nor they it. */
  isolate(host: string): void {
    this.partition([[host], [...this.hosts].filter((h) => h !== host)]);
  }

  /** `left` and `right` cannot reach each other; `bridge` reaches both (Jepsen's bridge). */
  bridge(left: readonly string[], right: readonly string[], bridge: string): void {
    this.partition([left.filter((h) => h !== bridge), right.filter((h) => h !== bridge)]);
  }

  /** Lifts every block; held frames go out after a fresh delay, in order. */
  heal(): void {
    this.trace('heal');
    this.blocked.clear();
    this.restartStalled();
  }

  /** `host` receives nothing until release() (a paused process). */
  hold(host: string): void {
    this.trace(`hold ${host}`);
    this.held.add(host);
  }

  release(host: string): void {
    this.trace(`release ${host}`);
    this.held.delete(host);
    this.restartStalled();
  }

  /**
   * Breaks the open connections between `a` and `b` (either way), or all of
   * `a`'s without `b`: both ends see close 1006; what was in flight is lost.
   */
  breakConnections(a: string, b?: string): number {
    const ends = [...this.sockets].filter((s) => s.host === a && (b === undefined || s.peer.host === b));
    for (const s of ends) {
      this.trace(`conn ${s.connectionId} ${s.host}<->${s.peer.host} broken`);
      s.broken();
      s.peer.broken();
    }
    return ends.length;
  }

  /**
   * The host's process died: its listeners are gone and its connections
   * break (peers see close 1006 after a delay: the kernel's reset).
   */
  crash(host: string): void {
    this.trace(`crash ${host}`);
    for (const [key, l] of this.listeners) if (l.host === host) this.listeners.delete(key);
    for (const s of [...this.sockets]) if (s.host === host) s.terminate();
    this.held.delete(host);
  }

  /** Which directions are blocked now (for traces and checks). */
  blockedLinks(): string[] {
    return [...this.blocked].map((k) => k.replace('\u0000', '->'));
  }

  get openConnections(): number {
    return this.sockets.size;
  }

  // ------------------------------------------------------------ internals

  trace(line: string): void {
    this.traceFn?.(`${this.clock.monotonicMs()} net ${line}`);
  }

  sampleDelay(from: string, to: string): number {
    const d = this.linkDelays.get(linkKey(from, to)) ?? this.defaultDelay;
    return d.minMs >= d.maxMs ? d.minMs : this.rng.range(d.minMs, d.maxMs);
  }

  canDeliver(from: string, to: string): boolean {
    return !this.blocked.has(linkKey(from, to)) && !this.held.has(to);
  }

  private reachable(a: string, b: string): boolean {
    return this.canDeliver(a, b) && this.canDeliver(b, a);
  }

  forget(s: SimSocket): void {
    this.sockets.delete(s);
  }

  private restartStalled(): void {
    const pipes = [...this.stalled];
    this.stalled.clear();
    for (const p of pipes) p.restart();
  }

  private listen(host: string, at: ListenAt, opts: ListenOptions, onConnection: (s: AcceptedSocket) => void): Promise<Listener> {
    let port = at.port;
    if (port === 0) {
      port = this.nextPort.get(at.host) ?? PORT_FIRST;
      while (this.listeners.has(addressKey(at.host, port))) port++;
      this.nextPort.set(at.host, port + 1);
    }
    const key = addressKey(at.host, port);
    if (this.listeners.has(key)) return Promise.reject(new TransportError(`address ${key} is already in use`, 'EADDRINUSE'));
    const l: SimListener = { host, key, opts, onConnection, accepted: new Set() };
    this.listeners.set(key, l);
    this.trace(`listen ${host} ${key}`);
    return Promise.resolve({
      port,
      close: () => {
        if (this.listeners.get(key) === l) this.listeners.delete(key);
        for (const s of l.accepted) s.terminate();
        l.accepted.clear();
        return Promise.resolve();
      },
    });
  }

  private dial(host: string, url: string, opts: DialOptions): Promise<MessageSocket> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return Promise.reject(new TransportError(`cannot connect to ${url}: invalid URL`, 'EINVAL'));
    }
    const key = addressKey(target.hostname.replace(/^\[|\]$/g, ''), Number(target.port));
    return new Promise((resolve, reject) => {
      const refuse = (code: string, why: string, afterMs: number): void => {
        this.scheduler.schedule(afterMs, () => reject(new TransportError(`cannot connect to ${url}: ${why}`, code)));
      };
      const l = this.listeners.get(key);
      if (!l) return refuse('ECONNREFUSED', 'connection refused', this.sampleDelay(host, host) * 2);
      if (!this.reachable(host, l.host)) return refuse('ETIMEDOUT', `timed out after ${opts.connectTimeoutMs} ms`, opts.connectTimeoutMs);
      // The handshake: a request there, an answer back.
      this.scheduler.schedule(this.sampleDelay(host, l.host), () => {
        if (this.listeners.get(key) !== l) return refuse('ECONNREFUSED', 'connection refused', this.sampleDelay(l.host, host));
        if (!this.reachable(host, l.host)) return refuse('ETIMEDOUT', `timed out after ${opts.connectTimeoutMs} ms`, opts.connectTimeoutMs);
        const id = ++this.connectionIds;
        const offered = opts.protocols ?? [];
        const dialer = new SimSocket(this, host, l.host, id, 'dialer', opts.frameBytesMax);
        const acceptor = new SimSocket(this, l.host, host, id, 'acceptor', l.opts.frameBytesMax, offered,
          l.opts.tls ? { ok: true, session: { principal: { type: 'User', name: 'ANONYMOUS' }, mechanism: null, tls: true, expiresAtMs: null } } : undefined);
        dialer.peer = acceptor;
        acceptor.peer = dialer;
        dialer.out = new Pipe(this, dialer, acceptor);
        acceptor.out = new Pipe(this, acceptor, dialer);
        this.sockets.add(dialer);
        this.sockets.add(acceptor);
        l.accepted.add(acceptor);
        this.trace(`conn ${id} ${host}->${l.host} (${key})`);
        l.onConnection(acceptor);
        this.scheduler.schedule(this.sampleDelay(l.host, host), () => {
          if (dialer.isClosed) return reject(new TransportError(`connection to ${url} closed before it opened`, 'ECONNRESET'));
          resolve(dialer);
        });
      });
    });
  }
}
