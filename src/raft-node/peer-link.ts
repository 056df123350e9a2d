// One outgoing link to one peer: a WebSocket this node dials and writes its
// Raft frames to (replies come back on the peer's own outgoing link to us).
//
// Invariants:
//   - the first frame on every connection is our hello;
//   - at most one connection (or connect attempt, or reconnect timer) exists;
//   - the send queue never exceeds sendQueueFramesMax frames or
//     sendQueueBytesMax bytes: when full, the OLDEST frames are dropped
//     (Raft tolerates loss, and newer messages supersede older ones), so a
//     peer that is down costs bounded memory;
//   - frames move from the queue to the socket only while ws.bufferedAmount is
//     below socketBufferedBytesMax; a send callback resumes the flush;
//   - reconnects back off exponentially with jitter from the injected Rng,
//     reset by a successful open or by wake() (the peer connected to us, so
//     it is up); a link whose pongs stop is terminated.

import { WebSocket } from 'ws';
import { dialOptions, type TlsDialer } from '../net/tls.js';
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

export class PeerLink {
  private ws: WebSocket | undefined;
  private open = false;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private keepaliveTimer: NodeJS.Timeout | undefined;
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
    private readonly rng: Rng,
    private readonly logger: Logger,
    private readonly localAddress?: string,
    /** What a wss:// link presents and checks (tls.ts). */
    private readonly tls?: TlsDialer,
  ) {}

  /** Starts dialing (idempotent). */
  start(): void {
    if (!this.closed && !this.ws && !this.reconnectTimer) this.connect();
  }

  /**
   * The peer is evidently up (it just connected to us): skip the rest of the
   * backoff and dial now, so messages queued for it (a pre-vote, say) do not
   * wait out a long reconnect delay.
   */
  wake(): void {
    if (this.closed || this.ws || !this.reconnectTimer) return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
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
    clearTimeout(this.reconnectTimer);
    clearInterval(this.keepaliveTimer);
    this.reconnectTimer = undefined;
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
    this.ws?.terminate();
    this.ws = undefined;
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
    const ws = new WebSocket(this.url, {
      perMessageDeflate: false,
      handshakeTimeout: this.limits.connectTimeoutMs,
      maxPayload: this.limits.frameBytesMax,
      ...(this.localAddress !== undefined ? { localAddress: this.localAddress } : {}),
      ...dialOptions(this.url, this.tls),
    });
    this.ws = ws;
    ws.on('open', () => this.onOpen(ws));
    ws.on('pong', () => { this.lastPongMs = performance.now(); });
    // Nothing is expected from the peer on this link; anything is ignored.
    ws.on('error', (err) => this.logger.debug({ peer: this.peerId, err: err.message }, 'peer link error'));
    ws.on('close', () => this.onClose(ws));
  }

  private onOpen(ws: WebSocket): void {
    if (ws !== this.ws) return;
    this.open = true;
    this.attempt = 0;
    this.lastPongMs = performance.now();
    this.logger.info({ peer: this.peerId, url: this.url }, 'peer link up');
    ws.send(this.hello, { binary: true });
    this.keepaliveTimer = setInterval(() => this.keepalive(ws), this.limits.keepaliveIntervalMs);
    this.flush();
  }

  private keepalive(ws: WebSocket): void {
    if (performance.now() - this.lastPongMs > this.limits.keepaliveTimeoutMs) {
      this.logger.warn({ peer: this.peerId }, 'peer link silent: no pong, reconnecting');
      ws.terminate();
      return;
    }
    ws.ping();
  }

  private onClose(ws: WebSocket): void {
    if (ws !== this.ws) return;
    if (this.open) this.logger.info({ peer: this.peerId }, 'peer link down');
    this.open = false;
    this.ws = undefined;
    clearInterval(this.keepaliveTimer);
    if (this.closed) return;
    const capMs = Math.min(this.limits.reconnectBackoffMaxMs, this.limits.reconnectBackoffBaseMs * 2 ** Math.min(this.attempt, 20));
    this.attempt++;
    // "Equal jitter": at least half the cap, so retries never stampede at 0.
    const delayMs = capMs / 2 + this.rng.next() * (capMs / 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (!this.closed) this.connect();
    }, delayMs);
  }

  private flush(): void {
    const ws = this.ws;
    if (!this.open || !ws) return;
    while (this.head < this.queue.length && ws.bufferedAmount < this.limits.socketBufferedBytesMax) {
      const frame = this.queue[this.head];
      this.queue[this.head++] = EMPTY;
      if (!frame) continue;
      this.queuedBytes -= frame.length;
      this.sentFrames++;
      ws.send(frame, { binary: true }, (err) => {
        if (!err && ws === this.ws) this.flush();
      });
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
  }
}
