// The client of the quorum's request API: propose / status / read (tests and
// the Raft benchmark) and `controller` calls (brokers and admin tools talking
// to the active controller: registration, heartbeats, topics, ...).
//
// It keeps one connection per endpoint it talks to, dialed through the
// injected Transport (src/net/transport.ts; a connection says hello as
// a client and waits for helloAck), pipelines any number of requests over it
// with correlation ids (the requests of one event-loop turn go out as one
// frame), and follows the leader: a NOT_CONTROLLER answer names
// the leader (id and endpoint), so the next attempt goes there; with no hint
// it tries the next endpoint after a jittered backoff.
//
// Retry rule (safety over convenience): propose is retried only when the
// server said NOT_CONTROLLER (nothing was appended) or the connection could
// not be opened (nothing was sent). A connection lost after a request went
// out rejects with REQUEST_TIMED_OUT and `details.ambiguous = true`: the entry
// may or may not be committed, and only the caller can decide what to do.
//
// Bounds: requestsPendingMax outstanding requests per connection; every
// request times out after requestTimeoutMs; leader search gives up after
// leaderSearchTimeoutMs. Timeouts and backoffs run on the injected Scheduler
// and read the injected Clock.

import type { TlsDialer } from '../net/tls.js';
import type { MessageSocket, Transport } from '../net/transport.js';
import { WS_TRANSPORT } from '../net/ws-transport.js';
import { SystemClock, SystemScheduler, type Clock, type Scheduler } from '../util/clock.js';
import { Errors, SluiceError, errorForCode, isSluiceError } from '../util/errors.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { SeededRng, type Rng } from '../util/rng.js';
import type { Proposed } from './pending.js';
import type { ReadResult, StatusResult } from './client-service.js';
import { DEFAULT_CLIENT_LIMITS, type QuorumClientLimits } from './quorum-config.js';
import { WIRE_VERSION, decodeFrame, encodeFrame, type ClientOp, type ClientRequest, type WireError } from './wire.js';

export interface ProposeAck extends Proposed {
  /** The node that acknowledged (the leader at the time). */
  readonly nodeId: number;
}

export interface QuorumClientOptions {
  readonly endpoints: readonly string[];
  readonly clusterId?: string;
  readonly limits?: Partial<QuorumClientLimits>;
  readonly rng?: Rng;
  readonly logger?: Logger;
  /** The local address connections are dialed from (a node's --outbound-address); the OS picks when absent. */
  readonly localAddress?: string;
  /** What links to wss:// endpoints present and check (src/net/tls.ts). */
  readonly tls?: TlsDialer;
  /** The network (default WebSockets). */
  readonly transport?: Transport;
  readonly clock?: Clock;
  readonly scheduler?: Scheduler;
}

/** What a connection needs from its surroundings. */
interface ConnectionEnv {
  readonly transport: Transport;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly localAddress?: string;
  readonly tls?: TlsDialer;
}

interface Outstanding {
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: Error) => void;
  readonly deadlineMs: number;
}

function fromWire(e: WireError): SluiceError {
  const info = errorForCode(e.code);
  const details: Record<string, unknown> = {};
  if (e.leader !== undefined) details.leader = e.leader;
  if (e.leaderEndpoint !== undefined) details.leaderEndpoint = e.leaderEndpoint;
  const err = new SluiceError(info, undefined, details);
  err.message = e.message;
  return err;
}

/** One client connection to one node. */
export class QuorumConnection {
  private nextId = 1;
  private readonly outstanding = new Map<number, Outstanding>();
  /** Requests made in this event-loop turn, sent together as one frame. */
  private outbox: ClientRequest[] = [];
  private cancelSweep: (() => void) | undefined;
  private closedErr: SluiceError | undefined;

  private constructor(readonly url: string, readonly nodeId: number, private readonly socket: MessageSocket, private readonly limits: QuorumClientLimits, private readonly env: ConnectionEnv) {
    socket.setHandlers({
      message: (data, isBinary) => this.onMessage(data, isBinary),
      close: () => this.fail(new SluiceError(Errors.REQUEST_TIMED_OUT, `connection to ${url} lost; outcome unknown`, { ambiguous: true })),
    });
    this.armSweep();
  }

  private armSweep(): void {
    this.cancelSweep = this.env.scheduler.schedule(Math.min(1_000, this.limits.requestTimeoutMs), () => {
      if (this.closedErr) return;
      this.expire();
      this.armSweep();
    });
  }

  /** Connects and exchanges hellos. Rejects with `details.notSent = true` (safe to retry elsewhere). */
  static async open(url: string, clusterId: string | undefined, limits: QuorumClientLimits, env: ConnectionEnv): Promise<QuorumConnection> {
    const notReached = (why: string): SluiceError => new SluiceError(Errors.LEADER_NOT_AVAILABLE, `cannot reach ${url}: ${why}`, { notSent: true });
    let socket: MessageSocket;
    try {
      socket = await env.transport.dial(url, {
        frameBytesMax: limits.frameBytesMax, connectTimeoutMs: limits.connectTimeoutMs,
        ...(env.localAddress !== undefined ? { localAddress: env.localAddress } : {}),
        ...(env.tls ? { tls: env.tls } : {}),
      });
    } catch (err) {
      throw notReached((err as Error).message);
    }
    return new Promise((resolve, reject) => {
      let settled = false;
      const failOpen = (why: string): void => {
        if (settled) return;
        settled = true;
        cancelTimer();
        socket.terminate();
        reject(notReached(why));
      };
      const cancelTimer = env.scheduler.schedule(limits.connectTimeoutMs, () => failOpen('timed out'));
      socket.setHandlers({
        message: (data) => {
          if (settled) return;
          const d = decodeFrame(data);
          if (!d.ok || d.frame.k !== 'helloAck') return failOpen('no helloAck');
          settled = true;
          cancelTimer();
          resolve(new QuorumConnection(url, d.frame.nodeId, socket, limits, env));
        },
        close: () => failOpen('closed during hello'),
      });
      socket.send(encodeFrame({ k: 'hello', role: 'client', version: WIRE_VERSION, ...(clusterId ? { clusterId } : {}) }));
    });
  }

  get isOpen(): boolean {
    return this.closedErr === undefined;
  }

  request(op: ClientOp, data?: Uint8Array, call?: { api: string; body: Record<string, unknown> }): Promise<unknown> {
    if (this.closedErr) return Promise.reject(this.closedErr);
    if (this.outstanding.size >= this.limits.requestsPendingMax) {
      return Promise.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, 'too many requests outstanding on this connection', { notSent: true }));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.outstanding.set(id, { resolve, reject, deadlineMs: this.env.clock.monotonicMs() + this.limits.requestTimeoutMs });
      this.outbox.push({ id, op, ...(data ? { data } : {}), ...(call ? { api: call.api, body: call.body } : {}) });
      if (this.outbox.length === 1) queueMicrotask(() => this.flush());
    });
  }

  private flush(): void {
    const reqs = this.outbox;
    this.outbox = [];
    if (this.closedErr || reqs.length === 0) return;
    this.socket.send(encodeFrame({ k: 'req', reqs }));
  }

  close(): void {
    this.fail(new SluiceError(Errors.REQUEST_TIMED_OUT, 'connection closed by the client; outcome unknown', { ambiguous: true }));
  }

  private onMessage(data: Uint8Array, isBinary: boolean): void {
    const d = isBinary ? decodeFrame(data) : undefined;
    if (!d?.ok || d.frame.k !== 'resp') {
      this.fail(new SluiceError(Errors.REQUEST_TIMED_OUT, `malformed response from ${this.url}; outcome unknown`, { ambiguous: true }));
      return;
    }
    for (const r of d.frame.resps) {
      const o = this.outstanding.get(r.id);
      if (!o) continue;
      this.outstanding.delete(r.id);
      if (r.error) o.reject(fromWire(r.error));
      else o.resolve(r.result);
    }
  }

  private expire(): void {
    const now = this.env.clock.monotonicMs();
    for (const [id, o] of this.outstanding) {
      if (o.deadlineMs > now) break;
      this.outstanding.delete(id);
      o.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, `no answer from ${this.url} in ${this.limits.requestTimeoutMs} ms; outcome unknown`, { ambiguous: true }));
    }
  }

  private fail(err: SluiceError): void {
    if (this.closedErr) return;
    this.closedErr = err;
    this.cancelSweep?.();
    this.socket.terminate();
    // Requests still in the outbox never left: retrying them is safe.
    const unsent = new Set(this.outbox.map((r) => r.id));
    this.outbox = [];
    const notSent = new SluiceError(Errors.LEADER_NOT_AVAILABLE, `connection to ${this.url} closed before sending`, { notSent: true });
    const all = [...this.outstanding];
    this.outstanding.clear();
    for (const [id, o] of all) o.reject(unsent.has(id) ? notSent : err);
  }
}

export class QuorumClient {
  private readonly limits: QuorumClientLimits;
  private readonly rng: Rng;
  private readonly logger: Logger;
  private readonly conns = new Map<string, Promise<QuorumConnection>>();
  /** Connections that finished their hello, for the synchronous fast path. */
  private readonly established = new Map<string, QuorumConnection>();
  /** Where leader-bound requests go next. */
  private target: string;
  private closed = false;
  private readonly env: ConnectionEnv;

  constructor(private readonly opts: QuorumClientOptions) {
    if (opts.endpoints.length === 0) throw new SluiceError(Errors.INVALID_CONFIG, 'quorum client needs at least one endpoint');
    this.limits = { ...DEFAULT_CLIENT_LIMITS, ...opts.limits };
    const clock = opts.clock ?? SystemClock;
    this.env = {
      transport: opts.transport ?? WS_TRANSPORT, clock, scheduler: opts.scheduler ?? SystemScheduler,
      ...(opts.localAddress !== undefined ? { localAddress: opts.localAddress } : {}),
      ...(opts.tls ? { tls: opts.tls } : {}),
    };
    // Without an injected Rng (CLI tools), one seeded from the injected clock and the pid.
    this.rng = opts.rng ?? new SeededRng((clock.nowMs() ^ process.pid) >>> 0);
    this.logger = opts.logger ?? silentLogger;
    this.target = opts.endpoints[this.rng.int(opts.endpoints.length)] ?? '';
  }

  /** Proposes `data` to the leader, following hints; resolves once the leader applied it. */
  propose(data: Uint8Array): Promise<ProposeAck> {
    return this.toLeader((conn) => conn.request('propose', data).then((r) => ({ ...(r as Proposed), nodeId: conn.nodeId })));
  }

  /**
   * Calls a controller API on the active controller, following leader hints.
   * Retried only where nothing took effect (NOT_CONTROLLER, not sent).
   */
  controller<T>(api: string, body: Record<string, unknown>): Promise<T> {
    return this.toLeader((conn) => conn.request('controller', undefined, { api, body }) as Promise<T>);
  }

  /** A linearizable read of the state machine summary (served by the leader). */
  read(): Promise<ReadResult> {
    return this.toLeader((conn) => conn.request('read') as Promise<ReadResult>);
  }

  /** Status of one particular node (no leader following). */
  async status(endpoint: string): Promise<StatusResult> {
    const conn = await this.connection(endpoint);
    return await conn.request('status') as StatusResult;
  }

  /** The endpoint requests currently go to. */
  get leaderEndpoint(): string {
    return this.target;
  }

  close(): void {
    this.closed = true;
    for (const p of this.conns.values()) p.then((c) => c.close(), () => undefined);
    this.conns.clear();
    this.established.clear();
  }

  /** Fast path: an open connection to the current target is used without extra promise hops. */
  private toLeader<T>(op: (conn: QuorumConnection) => Promise<T>): Promise<T> {
    const url = this.target;
    const conn = this.established.get(url);
    if (!conn?.isOpen) return this.searchLeader(op, this.env.clock.monotonicMs() + this.limits.leaderSearchTimeoutMs);
    const deadline = this.env.clock.monotonicMs() + this.limits.leaderSearchTimeoutMs;
    return op(conn).catch((err: unknown) => {
      this.moveOnSilence(url, err);
      if (!this.retriable(err) || this.env.clock.monotonicMs() > deadline || this.closed) throw err;
      this.follow(url, err as SluiceError);
      return this.searchLeader(op, deadline, err as SluiceError);
    });
  }

  private async searchLeader<T>(op: (conn: QuorumConnection) => Promise<T>, deadline: number, first?: SluiceError): Promise<T> {
    if (first && !first.details.leaderEndpoint) await this.backoff(0);
    for (let attempt = first ? 1 : 0; ; attempt++) {
      const url = this.target;
      try {
        return await op(await this.connection(url));
      } catch (err) {
        this.moveOnSilence(url, err);
        if (!this.retriable(err) || this.env.clock.monotonicMs() > deadline || this.closed) throw err;
        this.follow(url, err as SluiceError);
        if (!(err as SluiceError).details.leaderEndpoint) await this.backoff(attempt);
      }
    }
  }

  /** Retry only what certainly did not take effect. */
  private retriable(err: unknown): boolean {
    if (!isSluiceError(err)) return false;
    return err.is(Errors.NOT_CONTROLLER) || err.details.notSent === true;
  }

  /**
   * A request that timed out is not retried (it may have taken effect), but
   * the node that stayed silent — paused, partitioned, overloaded — is not
   * where the next request should go: move on to the next endpoint, whose
   * answer (or leader hint) finds the active controller again.
   */
  private moveOnSilence(url: string, err: unknown): void {
    if (isSluiceError(err) && err.is(Errors.REQUEST_TIMED_OUT) && err.details.notSent !== true) this.follow(url, err);
  }

  private follow(failedUrl: string, err: SluiceError): void {
    if (this.target !== failedUrl) return; // another request already moved on
    const hint = err.details.leaderEndpoint;
    if (typeof hint === 'string' && hint !== failedUrl) {
      this.target = hint;
      return;
    }
    const eps = this.opts.endpoints;
    this.target = eps[(eps.indexOf(failedUrl) + 1) % eps.length] ?? failedUrl;
  }

  private backoff(attempt: number): Promise<void> {
    const capMs = Math.min(this.limits.retryBackoffMaxMs, this.limits.retryBackoffBaseMs * 2 ** Math.min(attempt, 16));
    return new Promise((resolve) => this.env.scheduler.schedule(capMs / 2 + this.rng.next() * (capMs / 2), resolve));
  }

  private connection(url: string): Promise<QuorumConnection> {
    if (this.closed) return Promise.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, 'client closed', { notSent: true }));
    const existing = this.conns.get(url);
    if (!existing) return this.reconnect(url);
    return existing.then((c) => {
      if (c.isOpen) return c;
      // The first caller to notice a dead connection replaces it; the others use the replacement.
      return this.conns.get(url) === existing ? this.reconnect(url) : this.connection(url);
    });
  }

  private reconnect(url: string): Promise<QuorumConnection> {
    const p = QuorumConnection.open(url, this.opts.clusterId, this.limits, this.env);
    this.conns.set(url, p);
    p.then((c) => {
      this.logger.debug({ url, nodeId: c.nodeId }, 'connected');
      if (this.closed) c.close();
      else if (this.conns.get(url) === p) this.established.set(url, c);
    }, () => {
      if (this.conns.get(url) === p) this.conns.delete(url);
    });
    return p;
  }
}
