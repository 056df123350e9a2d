// The client's view of a cluster: bootstrap, a metadata cache, one
// connection per broker, and retries. Producer, Consumer and Admin are built
// on it; none of them opens sockets or refreshes metadata on its own.
//
// - Metadata: topics of interest are refreshed together; a refresh is
//   coalesced (callers during one refresh share it) and happens on demand
//   (unknown topic, NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
//   LEADER_NOT_AVAILABLE, FENCED/UNKNOWN_LEADER_EPOCH, a lost connection) and
//   every metadataMaxAgeMs.
// - Connections: one BrokerConnection per broker id, opened on first use and
//   dropped when it fails (the next use reconnects).
// - Retries (`retry()`): only retriable errors (the error table's flag), with
//   exponential backoff and full jitter between initialRetryTimeMs and
//   maxRetryTimeMs, at most `retries` times; every non-retriable error, and
//   the last retriable one, surfaces as a typed SluiceError with its code.
//
// Portable: no Node-only module here. The WebSocket implementation is
// injected (`webSocketFactory`); src/index.ts passes ws's for Node, a browser
// can pass `(url) => new WebSocket(url)`, a simulation its in-memory network.
//
// Time, timers and randomness are injected too, and this constructor is the
// one place the client picks their defaults (the system clock, real timers
// that keep a Node process alive, an Rng seeded once from Web Crypto).
// Producer, Consumer, Admin and every connection take them from here
// (`clock`, `scheduler`, `rng`), so one ManualClock/ManualScheduler/SeededRng
// drives a whole client in a test or the cluster simulation.

import { Errors, SluiceError, isSluiceError, type ErrorInfo } from '../util/errors.js';
import type { WebSocketFactory, WebSocketLike } from '../net/client-link.js';
import type { MetadataPartition, MetadataResponse } from '../protocol/apis/metadata.js';
import { BrokerConnection } from './broker-connection.js';
import type { SaslOptions } from './sasl.js';
import { errorFromCode } from './responses.js';
import { KeepAliveScheduler, SystemClock, type Clock, type Scheduler } from '../util/clock.js';
import { SeededRng, entropySeed, type Rng } from '../util/rng.js';

export interface RetryOptions {
  /** Retries after the first attempt (so `retries + 1` attempts at most). */
  readonly retries: number;
  readonly initialRetryTimeMs: number;
  readonly maxRetryTimeMs: number;
}

/** The logging the client does: any object with these methods (pino fits). */
export interface ClientLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface ClientOptions {
  /** Broker listener URLs, ws://host:port (a comma-separated string or a list). */
  readonly bootstrap: string | readonly string[];
  readonly clientId?: string;
  readonly logger?: ClientLogger;
  /** How long a response may take beyond what the request itself waits (Kafka's request.timeout.ms). Default 30 s. */
  readonly requestTimeoutMs?: number;
  /** Default 10 s. */
  readonly connectTimeoutMs?: number;
  readonly retry?: Partial<RetryOptions>;
  /** Metadata is refreshed at least this often while the client is used. Default 5 min. */
  readonly metadataMaxAgeMs?: number;
  /** Default: the global WebSocket (browsers, Node 22+); the Node entry point passes ws's. */
  readonly webSocketFactory?: WebSocketFactory;
  /**
   * Log in to every broker with SASL (docs/security.md): { mechanism:
   * 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | 'PLAIN', username, password } or
   * { mechanism: 'OAUTHBEARER', token } with a JWT or a function returning a
   * fresh one. Sessions are renewed before the broker's lifetime ends.
   */
  readonly sasl?: SaslOptions;
  /**
   * Every reading of time by the client and its producers, consumers and
   * admins (timeouts, linger, heartbeats, metadata age, record timestamps).
   * Default the system clock.
   */
  readonly clock?: Clock;
  /**
   * Every timer of the client and its producers, consumers and admins (retry
   * backoff, linger, heartbeats, fetch retries, auto-commit, SASL
   * re-authentication). Default real timers that keep a Node process alive
   * while pending (KeepAliveScheduler; portable to browsers).
   */
  readonly scheduler?: Scheduler;
  /**
   * Every random choice (backoff jitter, sticky partitions, rejoin backoff);
   * parts fork their own from it. Default a SeededRng seeded once from Web
   * Crypto (`seed` says which).
   */
  readonly rng?: Rng;
}

export const DEFAULT_RETRY: RetryOptions = { retries: 8, initialRetryTimeMs: 100, maxRetryTimeMs: 10_000 };
const DEFAULT_METADATA_MAX_AGE_MS = 300_000;

export interface PartitionInfo {
  readonly partition: number;
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  readonly offlineReplicas: readonly number[];
  readonly errorCode: number;
}

export interface TopicInfo {
  readonly name: string;
  readonly topicId: string;
  /** Indexed by partition number. */
  readonly partitions: readonly PartitionInfo[];
}

export interface ClusterInfo {
  readonly clusterId: string | null;
  readonly controllerId: number;
  readonly brokers: ReadonlyMap<number, { readonly nodeId: number; readonly url: string; readonly rack: string | null }>;
}

/** Errors after which cached metadata is stale. */
const STALE_METADATA: ReadonlySet<number> = new Set([
  Errors.NOT_LEADER_OR_FOLLOWER.code, Errors.UNKNOWN_TOPIC_OR_PARTITION.code, Errors.LEADER_NOT_AVAILABLE.code,
  Errors.FENCED_LEADER_EPOCH.code, Errors.UNKNOWN_LEADER_EPOCH.code, Errors.NETWORK_EXCEPTION.code,
  Errors.NOT_COORDINATOR.code, Errors.COORDINATOR_NOT_AVAILABLE.code,
]);

export function parseBootstrap(bootstrap: string | readonly string[]): string[] {
  const list = (typeof bootstrap === 'string' ? bootstrap.split(',') : [...bootstrap]).map((u) => u.trim()).filter((u) => u.length > 0);
  if (list.length === 0) throw new SluiceError(Errors.INVALID_CONFIG, 'bootstrap names no broker');
  for (const u of list) {
    if (!/^wss?:\/\/[^/\s]+(\/.*)?$/.test(u)) throw new SluiceError(Errors.INVALID_CONFIG, `bootstrap URL '${u}' is not ws://host:port`);
  }
  return list;
}

function defaultFactory(): WebSocketFactory {
  const WS = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
  if (!WS) throw new SluiceError(Errors.INVALID_CONFIG, 'no WebSocket implementation: pass webSocketFactory (or use the Node entry point)');
  return (url) => new WS(url);
}

const NOOP_LOGGER: ClientLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

export class Client {
  readonly clientId: string;
  readonly logger: ClientLogger;
  readonly requestTimeoutMs: number;
  private readonly bootstrap: string[];
  private readonly retryOptions: RetryOptions;
  private readonly factory: WebSocketFactory;
  private readonly connectTimeoutMs: number;
  private readonly sasl: SaslOptions | undefined;
  private readonly metadataMaxAgeMs: number;
  private readonly conns = new Map<string, Promise<BrokerConnection>>();
  private cluster: ClusterInfo = { clusterId: null, controllerId: -1, brokers: new Map() };
  private readonly topics = new Map<string, TopicInfo>();
  /** Topics whose metadata callers asked for: refreshed together. */
  private readonly interest = new Set<string>();
  private refreshing: Promise<void> | null = null;
  /** A refresh was requested while one ran: run another after it (it may not cover new topics). */
  private refreshAgain = false;
  private lastRefreshMs = -Infinity;
  private closed = false;
  /** The client's time: every part built on this client reads it (see ClientOptions.clock). */
  readonly clock: Clock;
  /** The client's timers (see ClientOptions.scheduler). */
  readonly scheduler: Scheduler;
  /** The client's randomness; parts fork from it (see ClientOptions.rng). */
  readonly rng: Rng;
  /** The seed of `rng` when the client picked it (no rng passed), for replaying a run; null otherwise. */
  readonly seed: number | null;

  constructor(opts: ClientOptions) {
    this.bootstrap = parseBootstrap(opts.bootstrap);
    this.clientId = opts.clientId ?? 'sluice-client';
    this.logger = opts.logger ?? NOOP_LOGGER;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;
    this.sasl = opts.sasl;
    this.retryOptions = { ...DEFAULT_RETRY, ...opts.retry };
    this.metadataMaxAgeMs = opts.metadataMaxAgeMs ?? DEFAULT_METADATA_MAX_AGE_MS;
    this.factory = opts.webSocketFactory ?? defaultFactory();
    this.clock = opts.clock ?? SystemClock;
    this.scheduler = opts.scheduler ?? KeepAliveScheduler;
    this.seed = opts.rng ? null : entropySeed();
    this.rng = opts.rng ?? new SeededRng(this.seed!);
    for (const [k, v] of Object.entries({ requestTimeoutMs: this.requestTimeoutMs, connectTimeoutMs: this.connectTimeoutMs, metadataMaxAgeMs: this.metadataMaxAgeMs })) {
      if (!(Number.isSafeInteger(v) && v > 0)) throw new SluiceError(Errors.INVALID_CONFIG, `${k} must be a positive integer`);
    }
    const r = this.retryOptions;
    if (!(Number.isSafeInteger(r.retries) && r.retries >= 0 && r.initialRetryTimeMs > 0 && r.maxRetryTimeMs >= r.initialRetryTimeMs)) {
      throw new SluiceError(Errors.INVALID_CONFIG, 'retry needs retries >= 0 and 0 < initialRetryTimeMs <= maxRetryTimeMs');
    }
  }

  // ---- connections -------------------------------------------------------------

  /** The connection to a broker URL (opened on first use; a failed one is replaced on the next use). */
  connectionTo(url: string): Promise<BrokerConnection> {
    this.ensureOpen();
    const existing = this.conns.get(url);
    if (existing) return existing;
    const p = BrokerConnection.connect(url, {
      factory: this.factory, clientId: this.clientId, connectTimeoutMs: this.connectTimeoutMs, requestTimeoutMs: this.requestTimeoutMs,
      ...(this.sasl ? { sasl: this.sasl } : {}),
      scheduler: this.scheduler,
    });
    this.conns.set(url, p);
    p.then((conn) => conn.onClose(() => {
      if (this.conns.get(url) === p) this.conns.delete(url);
    }), () => {
      if (this.conns.get(url) === p) this.conns.delete(url);
    });
    return p;
  }

  /** The connection to a broker by id, from the cached metadata (refreshed if the broker is unknown). */
  async connection(brokerId: number): Promise<BrokerConnection> {
    let b = this.cluster.brokers.get(brokerId);
    if (!b) {
      await this.refreshMetadata();
      b = this.cluster.brokers.get(brokerId);
    }
    if (!b) throw new SluiceError(Errors.LEADER_NOT_AVAILABLE, `broker ${brokerId} is not in the cluster metadata`);
    return this.connectionTo(b.url);
  }

  /** Any broker that answers: known brokers first, then the bootstrap list. */
  async anyConnection(): Promise<BrokerConnection> {
    const urls = [...new Set([...[...this.cluster.brokers.values()].map((b) => b.url), ...this.bootstrap])];
    let last: unknown;
    for (const url of urls) {
      try {
        return await this.connectionTo(url);
      } catch (err) {
        last = err;
      }
    }
    throw isSluiceError(last) ? last : new SluiceError(Errors.NETWORK_EXCEPTION, `no broker reachable (tried ${urls.join(', ')})`);
  }

  // ---- metadata ----------------------------------------------------------------

  get clusterInfo(): ClusterInfo {
    return this.cluster;
  }

  /** Cached topic metadata, if any. */
  cachedTopic(name: string): TopicInfo | undefined {
    return this.topics.get(name);
  }

  /**
   * What topic(name) would answer without a request — the cached metadata
   * while it is fresh and the topic is of interest — else undefined. The
   * Producer's per-record fast path: no promise when nothing needs fetching.
   */
  freshTopic(name: string): TopicInfo | undefined {
    const cached = this.topics.get(name);
    return cached !== undefined && this.interest.has(name) && !this.metadataExpired() ? cached : undefined;
  }

  /**
   * Metadata of `topic`, from the cache unless stale or `refresh`; throws
   * UNKNOWN_TOPIC_OR_PARTITION (retriable: it may be being created) when the
   * cluster does not know it.
   */
  async topic(name: string, opts: { refresh?: boolean } = {}): Promise<TopicInfo> {
    this.interest.add(name);
    const cached = this.topics.get(name);
    if (cached && !opts.refresh && !this.metadataExpired()) return cached;
    await this.refreshMetadata();
    const t = this.topics.get(name);
    if (!t && this.refusedTopics.has(name)) {
      throw new SluiceError(Errors.TOPIC_AUTHORIZATION_FAILED, `not authorized to access topic ${name}`, { topic: name });
    }
    if (!t) throw new SluiceError(Errors.UNKNOWN_TOPIC_OR_PARTITION, `topic ${name} does not exist`, { topic: name });
    return t;
  }

  /** The leader of a partition and a connection to it; LEADER_NOT_AVAILABLE while it has none. */
  async leaderFor(topic: string, partition: number): Promise<{ brokerId: number; leaderEpoch: number; conn: BrokerConnection }> {
    const t = await this.topic(topic);
    const p = t.partitions[partition];
    if (!p) throw new SluiceError(Errors.UNKNOWN_TOPIC_OR_PARTITION, `topic ${topic} has no partition ${partition}`, { topic, partition });
    if (p.leader < 0) throw new SluiceError(Errors.LEADER_NOT_AVAILABLE, `${topic}-${partition} has no leader now`, { topic, partition });
    return { brokerId: p.leader, leaderEpoch: p.leaderEpoch, conn: await this.connection(p.leader) };
  }

  /** Every topic in the cluster (a fresh Metadata request for all topics). */
  async listTopics(): Promise<TopicInfo[]> {
    const md = await (await this.anyConnection()).metadata(null);
    this.absorb(md, true);
    return md.topics.filter((t) => t.errorCode === 0).map((t) => this.topics.get(t.name)!).filter((t) => t !== undefined);
  }

  /** Refreshes the brokers and every topic of interest; concurrent callers share one request. */
  /** Topics the last Metadata answer refused (TOPIC_AUTHORIZATION_FAILED): named as such, not as unknown. */
  private readonly refusedTopics = new Set<string>();

  refreshMetadata(): Promise<void> {
    this.ensureOpen();
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    const run = async (): Promise<void> => {
      do {
        this.refreshAgain = false;
        const conn = await this.anyConnection();
        const md = await conn.metadata([...this.interest]);
        this.absorb(md, false);
      } while (this.refreshAgain);
    };
    this.refreshing = run().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /** Marks the metadata stale after an error that says so (the next use refreshes). */
  noteError(err: unknown): void {
    if (isSluiceError(err) && STALE_METADATA.has(err.code)) this.lastRefreshMs = -Infinity;
  }

  private metadataExpired(): boolean {
    return this.clock.monotonicMs() - this.lastRefreshMs > this.metadataMaxAgeMs;
  }

  private absorb(md: MetadataResponse, allTopics: boolean): void {
    this.cluster = {
      clusterId: md.clusterId,
      controllerId: md.controllerId,
      brokers: new Map(md.brokers.map((b) => [b.nodeId, { nodeId: b.nodeId, url: b.url, rack: b.rack }])),
    };
    const seen = new Set<string>();
    for (const t of md.topics) {
      seen.add(t.name);
      if (t.errorCode === Errors.TOPIC_AUTHORIZATION_FAILED.code) this.refusedTopics.add(t.name);
      else this.refusedTopics.delete(t.name);
      if (t.errorCode !== 0 || t.topicId === null) {
        this.topics.delete(t.name);
        continue;
      }
      const partitions: PartitionInfo[] = [];
      for (const p of t.partitions as MetadataPartition[]) partitions[p.partition] = { ...p };
      this.topics.set(t.name, { name: t.name, topicId: t.topicId, partitions });
    }
    if (allTopics) for (const name of [...this.topics.keys()]) if (!seen.has(name)) this.topics.delete(name);
    this.lastRefreshMs = this.clock.monotonicMs();
  }

  // ---- retries -----------------------------------------------------------------

  /**
   * Runs `attempt` until it succeeds, retrying retriable errors with backoff
   * (refreshing metadata after the errors that make it stale). `what` names
   * the operation in logs.
   */
  async retry<T>(what: string, attempt: (n: number) => Promise<T>, opts: Partial<RetryOptions> = {}): Promise<T> {
    const r = { ...this.retryOptions, ...opts };
    for (let n = 0; ; n++) {
      try {
        return await attempt(n);
      } catch (err) {
        if (!isSluiceError(err) || !err.retriable || n >= r.retries || this.closed) throw err;
        this.noteError(err);
        const delayMs = backoffMs(n, r, () => this.rng.next());
        this.logger.debug({ what, attempt: n + 1, err: err.message, delayMs }, 'retrying');
        await this.sleep(delayMs);
      }
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const p of this.conns.values()) p.then((c) => c.close(), () => undefined);
    this.conns.clear();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Resolves after `ms` on the client's scheduler. */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => this.scheduler.schedule(ms, resolve));
  }

  private ensureOpen(): void {
    if (this.closed) throw new SluiceError(Errors.NETWORK_EXCEPTION, 'the client is closed');
  }
}

/** Exponential backoff with full jitter: uniform in [0, min(max, initial * 2^n)], at least 1 ms. */
export function backoffMs(attempt: number, r: RetryOptions, random: () => number): number {
  const cap = Math.min(r.maxRetryTimeMs, r.initialRetryTimeMs * 2 ** Math.min(attempt, 30));
  return Math.max(1, Math.round(random() * cap));
}

/** A per-partition error code as a typed error (null for NONE). */
export function partitionError(code: number, message: string | null, details: Record<string, unknown> = {}): SluiceError | null {
  return code === Errors.NONE.code ? null : errorFromCode(code, message, details);
}

export type { ErrorInfo };
