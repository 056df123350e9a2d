// One outgoing link to one peer: a connection this node dials (through the
// injected Transport: WebSockets, or the simulation's network) and writes its
// Raft frames to (replies come back on the peer's own outgoing link to us).
//
// Invariants:
//   - the first frame on every connection is our hello;
//   - at most one connection (or connect attempt, or reconnect timer) exists;
//   - the send queue never exceeds sendQueueFramesMax frames or
//     sendQueueBytesMax bytes: when full, the OLDEST frames are dropped
//     (Raft tolerates loss, and newer messages supersede older ones), so a
//     peer that is down costs bounded memory;
//   - frames move from the queue to the socket only while the socket's bufferedAmount is
//     below socketBufferedBytesMax; a send callback resumes the flush;
//   - reconnects back off exponentially with jitter from the injected Rng,
//     reset by a successful open or by wake() (the peer connected to us, so
//     it is up); a link whose pongs stop is terminated. Timers run on the
//     injected Scheduler and read the injected Clock.

import type { TlsDialer } from '../net/tls.js';
import type { MessageSocket, Transport } from '../net/transport.js';
import type { Clock, Scheduler } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { Rng } from '../util/rng.js';
import type { TransportLimits } from './quorum-config.js';

const EMPTY = Buffer.alloc(0);

export interface PeerLinkStats {
  readonly connected: boolean;
  readonly queuedFrames: number;
  readonly queuedBytes: number;
  readonly droppedFrames: number;
  readonly sentFrames: number;
  readonly connects: number;
}

/** What a link needs from its surroundings. */
export interface PeerLinkEnv {
  readonly transport: Transport;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly rng: Rng;
  readonly logger: Logger;
  /** The local address to dial from (--outbound-address). */
  readonly localAddress?: string;
  /** What a wss:// link presents and checks (tls.ts). */
  readonly tls?: TlsDialer;
}

export class PeerLink {
  /** The open connection, or the attempt under way (`socket` still undefined). */
  private socket: MessageSocket | undefined;
  private connecting = false;
  private open = false;
  private closed = false;
  private cancelReconnect: (() => void) | undefined;
  private cancelKeepalive: (() => void) | undefined;
  private lastPongMs = 0;
  private attempt = 0;
  /** Frames not yet handed to the socket; `head` avoids O(n) shifts. */
  private queue: Buffer[] = [];
  private head = 0;
  private queuedBytes = 0;
  private droppedFrames = 0;
  private sentFrames = 0;
  private connects = 0;

  constructor(
    readonly peerId: number,
    readonly url: string,
    private readonly hello: Buffer,
    private readonly limits: TransportLimits,
    private readonly env: PeerLinkEnv,
  ) {}

  /** Starts dialing (idempotent). */
  start(): void {
    if (!this.closed && !this.socket && !this.connecting && !this.cancelReconnect) this.connect();
  }

  /**
   * The peer is evidently up (it just connected to us): skip the rest of the
   * backoff and dial now, so messages queued for it (a pre-vote, say) do not
   * wait out a long reconnect delay.
   */
  wake(): void {
    if (this.closed || this.socket || this.connecting || !this.cancelReconnect) return;
    this.cancelReconnect();
    this.cancelReconnect = undefined;
    this.attempt = 0;
    this.connect();
  }

  enqueue(frame: Buffer): void {
    if (this.closed) return;
    this.queue.push(frame);
    this.queuedBytes += frame.length;
    this.trimQueue();
    this.flush();
  }

  stats(): PeerLinkStats {
    return {
      connected: this.open,
      queuedFrames: this.queue.length - this.head,
      queuedBytes: this.queuedBytes,
      droppedFrames: this.droppedFrames,
      sentFrames: this.sentFrames,
      connects: this.connects,
    };
  }

  close(): void {
    this.closed = true;
    this.cancelReconnect?.();
    this.cancelKeepalive?.();
    this.cancelReconnect = undefined;
    this.cancelKeepalive = undefined;
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
    this.socket?.terminate();
    this.socket = undefined;
  }

  private trimQueue(): void {
    const l = this.limits;
    while (this.queue.length - this.head > l.sendQueueFramesMax || (this.queuedBytes > l.sendQueueBytesMax && this.queue.length - this.head > 1)) {
      const dropped = this.queue[this.head];
      this.queue[this.head++] = EMPTY;
      this.queuedBytes -= dropped?.length ?? 0;
      this.droppedFrames++;
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private connect(): void {
    this.connects++;
    this.connecting = true;
    const { transport, localAddress, tls } = this.env;
    transport.dial(this.url, {
      frameBytesMax: this.limits.frameBytesMax,
      connectTimeoutMs: this.limits.connectTimeoutMs,
      ...(localAddress !== undefined ? { localAddress } : {}),
      ...(tls ? { tls } : {}),
    }).then((socket) => this.onOpen(socket), (err: Error) => {
      this.connecting = false;
      this.env.logger.debug({ peer: this.peerId, err: err.message }, 'peer link error');
      this.reconnectLater();
    });
  }

  private onOpen(socket: MessageSocket): void {
    this.connecting = false;
    if (this.closed) {
      socket.terminate();
      return;
    }
    this.socket = socket;
    this.open = true;
    this.attempt = 0;
    this.lastPongMs = this.env.clock.monotonicMs();
    socket.setHandlers({
      // Nothing is expected from the peer on this link; anything is ignored.
      message: () => undefined,
      pong: () => { this.lastPongMs = this.env.clock.monotonicMs(); },
      error: (err) => this.env.logger.debug({ peer: this.peerId, err: err.message }, 'peer link error'),
      close: () => this.onClose(socket),
    });
    this.env.logger.info({ peer: this.peerId, url: this.url }, 'peer link up');
    socket.send(this.hello);
    this.armKeepalive(socket);
    this.flush();
  }

  private armKeepalive(socket: MessageSocket): void {
    this.cancelKeepalive = this.env.scheduler.schedule(this.limits.keepaliveIntervalMs, () => {
      this.cancelKeepalive = undefined;
      if (socket !== this.socket) return;
      if (this.env.clock.monotonicMs() - this.lastPongMs > this.limits.keepaliveTimeoutMs) {
        this.env.logger.warn({ peer: this.peerId }, 'peer link silent: no pong, reconnecting');
        socket.terminate();
        return;
      }
      socket.ping();
      this.armKeepalive(socket);
    });
  }

  private onClose(socket: MessageSocket): void {
    if (socket !== this.socket) return;
    if (this.open) this.env.logger.info({ peer: this.peerId }, 'peer link down');
    this.open = false;
    this.socket = undefined;
    this.cancelKeepalive?.();
    this.cancelKeepalive = undefined;
    this.reconnectLater();
  }

  private reconnectLater(): void {
    if (this.closed) return;
    const capMs = Math.min(this.limits.reconnectBackoffMaxMs, this.limits.reconnectBackoffBaseMs * 2 ** Math.min(this.attempt, 20));
    this.attempt++;
    // "Equal jitter": at least half the cap, so retries never stampede at 0.
    const delayMs = capMs / 2 + this.env.rng.next() * (capMs / 2);
    this.cancelReconnect = this.env.scheduler.schedule(delayMs, () => {
      this.cancelReconnect = undefined;
      if (!this.closed) this.connect();
    });
  }

  private flush(): void {
    const socket = this.socket;
    if (!this.open || !socket) return;
    while (this.head < this.queue.length && socket.bufferedAmount < this.limits.socketBufferedBytesMax) {
      const frame = this.queue[this.head];
      this.queue[this.head++] = EMPTY;
      if (!frame) continue;
      this.queuedBytes -= frame.length;
      this.sentFrames++;
      socket.send(frame, (err) => {
        if (!err && socket === this.socket) this.flush();
      });
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
  }
}
