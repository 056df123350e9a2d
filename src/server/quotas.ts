// Client quota enforcement on both client protocols (the shell around the
// pure QuotaManager, src/security/quota-manager.ts). One instance per broker;
// the WebSocket listener's handler is wrapped by wrapHandler(), the Kafka
// dispatcher calls settle() itself. Either way, per request:
//   - the handler's own time (its synchronous part: the event-loop time the
//     request took, not time spent waiting) → request_percentage;
//   - Produce: the batch bytes → producer_byte_rate;
//   - Fetch by a consumer: the answer's record bytes → consumer_byte_rate. A
//     throttled fetch of a consumer that was already over its quota is
//     answered empty and its bytes taken back, as in Kafka (the records are
//     read again after the throttle). Unlike Kafka, a consumer within its
//     quota gets its answer even when that answer takes it over (and is then
//     throttled): a batch larger than the quota's window budget would
//     otherwise never be delivered. A consumer's fetch size is capped at what
//     its quota allows over the window span, as in Kafka;
//   - the throttle is the largest of those; the answer carries it in
//     throttleTimeMs and the connection is muted for that long (KIP-219: no
//     further request is read from it until then).
// Follower fetches (replicaId >= 0 that the replica manager accepted), and
// every later request on that connection, are exempt: replication must not
// be throttled by a client quota.
//
// Who: the user is the connection's principal name (ANONYMOUS until
// authenticated: a user like any other), the client id the request header's.

import type { Clock } from '../util/clock.js';
import type { ConnectionInfo, RequestHandler } from '../net/server-connection.js';
import { NO_RESPONSE } from '../net/server-connection.js';
import type { RequestEnvelope } from '../protocol/envelope.js';
import { ApiKey } from '../protocol/api-keys.js';
import type { MetadataImage } from '../metadata/image.js';
import { QuotaManager, type QuotaClient, type QuotaKind, type QuotaWindowConfig } from '../security/quota-manager.js';

/** Called for every throttle handed out: the quota that caused it and its metric entity. */
export type ThrottleObserver = (kind: QuotaKind, user: string, clientId: string, throttleMs: number) => void;

/** A connection the listener can mute (KafkaConnection, ServerConnection). */
export interface Throttleable {
  throttle(ms: number): void;
}

export interface RequestUsage {
  /** Handler time, ms. */
  readonly handlerMs: number;
  readonly produceBytes?: number;
  readonly fetchBytes?: number;
}

export interface Settled {
  readonly throttleMs: number;
  /** A fetch that must be answered empty (it was throttled). */
  readonly emptyFetch: boolean;
}

const NOT_THROTTLED: Settled = { throttleMs: 0, emptyFetch: false };

export class ClientQuotas {
  readonly manager: QuotaManager;
  private readonly replicationConns = new WeakSet<ConnectionInfo>();

  constructor(
    private readonly clock: Clock,
    windows: QuotaWindowConfig,
    private readonly observer: ThrottleObserver = () => undefined,
  ) {
    this.manager = new QuotaManager(clock, windows);
  }

  applyImage(image: MetadataImage): void {
    this.manager.setQuotas(image.clientQuotas);
  }

  now(): number {
    return this.clock.monotonicMs();
  }

  client(conn: ConnectionInfo, clientId: string | null): QuotaClient {
    return { user: conn.security.principal.name, clientId: clientId ?? '' };
  }

  isReplication(conn: ConnectionInfo): boolean {
    return this.replicationConns.has(conn);
  }

  markReplication(conn: ConnectionInfo): void {
    this.replicationConns.add(conn);
  }

  /** The most a consumer's fetch may return now, or null (no consumer quota). */
  fetchBytesMax(client: QuotaClient): number | null {
    return this.manager.windowBudget('fetch', client);
  }

  /** Records one request's use and returns its throttle; mutes `conn` when throttled. */
  settle(conn: ConnectionInfo, client: QuotaClient, use: RequestUsage): Settled {
    if (!this.manager.enabled || this.isReplication(conn)) return NOT_THROTTLED;
    // Kafka's ClientRequestQuotaManager: percent of one thread, recorded as percent-seconds.
    const requestMs = this.track('request', client, use.handlerMs * 0.1);
    const produceMs = use.produceBytes !== undefined ? this.track('produce', client, use.produceBytes) : 0;
    let fetchMs = 0;
    let wasOver = false;
    if (use.fetchBytes !== undefined) {
      wasOver = this.manager.overQuota('fetch', client) || requestMs > 0;
      fetchMs = this.track('fetch', client, use.fetchBytes);
    }
    const throttleMs = Math.max(requestMs, produceMs, fetchMs);
    const emptyFetch = use.fetchBytes !== undefined && throttleMs > 0 && wasOver;
    if (emptyFetch) this.manager.unrecord('fetch', client, use.fetchBytes!);
    if (throttleMs > 0) (conn as Partial<Throttleable>).throttle?.(throttleMs);
    return { throttleMs, emptyFetch };
  }

  private track(kind: QuotaKind, client: QuotaClient, value: number): number {
    const ms = this.manager.record(kind, client, value);
    if (ms > 0) {
      const m = this.manager.match(kind, client);
      if (m) this.observer(kind, m.metric.user, m.metric.clientId, ms);
    }
    return ms;
  }

  /** The WebSocket listener's handler with quotas enforced around it. */
  wrapHandler(handler: RequestHandler): RequestHandler {
    return (req: RequestEnvelope, conn: ConnectionInfo) => {
      if (this.isReplication(conn)) return handler(req, conn);
      if (req.apiKey === ApiKey.Fetch && isFollowerFetch(req.body)) return this.watchReplication(conn, handler(req, conn));
      if (!this.manager.enabled) return handler(req, conn);
      const client = this.client(conn, req.clientId);
      const isFetch = req.apiKey === ApiKey.Fetch;
      const request = isFetch ? capFetch(req, this.fetchBytesMax(client)) : req;
      const start = this.now();
      const result = handler(request, conn);
      const syncMs = this.now() - start;
      const finish = (body: unknown): unknown => {
        if (body === NO_RESPONSE || !isMap(body)) {
          // acks=0 produce: nothing to answer, but its bytes and time still count.
          if (req.apiKey === ApiKey.Produce) this.settle(conn, client, { handlerMs: syncMs, produceBytes: produceBytesOf(req.body) });
          return body;
        }
        const use: RequestUsage = {
          handlerMs: syncMs,
          ...(req.apiKey === ApiKey.Produce ? { produceBytes: produceBytesOf(req.body) } : {}),
          ...(isFetch ? { fetchBytes: fetchBytesOf(body) } : {}),
        };
        const s = this.settle(conn, client, use);
        if (s.throttleMs === 0) return body;
        return s.emptyFetch ? { errorCode: 0, topics: [], throttleTimeMs: s.throttleMs } : { ...body, throttleTimeMs: s.throttleMs };
      };
      if (result instanceof Promise) return result.then(finish);
      return finish(result);
    };
  }

  /** Marks a connection whose follower fetch the replica manager accepted (validated broker id and epoch). */
  private watchReplication(conn: ConnectionInfo, result: unknown): unknown {
    const mark = (body: unknown): unknown => {
      if (isMap(body) && (body.errorCode === undefined || body.errorCode === 0)) this.markReplication(conn);
      return body;
    };
    return result instanceof Promise ? result.then(mark) : mark(result);
  }
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

function isFollowerFetch(body: unknown): boolean {
  return isMap(body) && typeof body.replicaId === 'number' && body.replicaId >= 0;
}

/** The fetch with its maxBytes lowered to the quota's window budget. */
function capFetch(req: RequestEnvelope, budget: number | null): RequestEnvelope {
  if (budget === null || !isMap(req.body)) return req;
  const asked = typeof req.body.maxBytes === 'number' ? req.body.maxBytes : Infinity;
  if (asked <= budget) return req;
  return { ...req, body: { ...req.body, maxBytes: budget } };
}

/** Record batch bytes of a Produce body (its shape is validated by the handler; anything odd counts 0). */
export function produceBytesOf(body: unknown): number {
  let n = 0;
  if (!isMap(body) || !Array.isArray(body.topics)) return 0;
  for (const t of body.topics) {
    if (!isMap(t) || !Array.isArray(t.partitions)) continue;
    for (const p of t.partitions) if (isMap(p) && p.records instanceof Uint8Array) n += p.records.byteLength;
  }
  return n;
}

/** Record bytes of a Fetch answer (either protocol's: topics|responses → partitions → records). */
export function fetchBytesOf(body: unknown): number {
  let n = 0;
  if (!isMap(body)) return 0;
  const topics = Array.isArray(body.topics) ? body.topics : Array.isArray(body.responses) ? body.responses : [];
  for (const t of topics) {
    if (!isMap(t) || !Array.isArray(t.partitions)) continue;
    for (const p of t.partitions) if (isMap(p) && p.records instanceof Uint8Array) n += p.records.byteLength;
  }
  return n;
}
