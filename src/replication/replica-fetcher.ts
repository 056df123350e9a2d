// Followers pull from leaders: one ReplicaFetcher per leader broker, one
// WebSocket link to that leader's client listener, every partition this
// broker follows there multiplexed into each Fetch (Kafka's
// ReplicaFetcherThread).
//
// A partition handed to a fetcher first truncates (state 'truncating'): it
// asks the leader OffsetForLeaderEpoch about its latest epoch and cuts its log
// where the leader's epoch ends (rules/truncation.ts) — never at its own high
// watermark — so a returning old leader drops exactly its divergent tail.
// Then it fetches from its LEO ('fetching'), appends what the leader sends as
// follower batches, and takes the leader's high watermark (capped at its LEO).
// In fsync durability mode it fsyncs the logs appended by one response before
// sending the next fetch, whose offsets tell the leader what it holds.
// A failure on one partition's log backs off that partition alone.
//
// Errors: link failures back off and reconnect; OFFSET_OUT_OF_RANGE below the
// leader's log start restarts the log there, above its end truncates again;
// epoch errors back off until the image brings the new leader epoch.
//
// Fetch sessions (KIP-227, protocol/apis/fetch.ts): the first fetch on a link
// opens a session with every partition; later ones list only the partitions
// whose fetch position changed (or that joined) and name the ones that left,
// and answers carry only partitions with news. The session is dropped — the
// next fetch opens a new one — whenever an answer may have been missed: a new
// link, a failed or timed-out fetch, a session error from the leader.
//
// Leader reachability (fast failover, docs/replication.md "Failover"): each
// fetcher tells `onLeaderLink` when its leader becomes unreachable — the link
// failed or would not connect, or a request went unanswered leaderSilenceMs
// past the time the leader may hold it (a fetch's maxWaitMs) — and when a
// request is answered again (any answer, an error code included: the leader
// is alive). The broker's heartbeats carry the unreachable leaders to the
// controller, which fences a leader early only if it has also stopped
// hearing from it. A stopped fetcher withdraws its report.
//
// Time: back-offs and idle waits read the injected Clock and sleep on the
// injected Scheduler, so a simulation runs the fetchers on its own clock.

import { dialOptions, type TlsDialer } from '../net/tls.js';
import { WebSocket } from 'ws';
import { AssertionError } from '../util/assert.js';
import type { Clock, Scheduler } from '../util/clock.js';
import { mutant } from '../util/mutants.js';
import { Errors } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { ApiKey } from '../protocol/api-keys.js';
import { INITIAL_SESSION_EPOCH, NO_FETCH_SESSION, nextSessionEpoch, type FetchPartitionResponse, type FetchResponse } from '../protocol/apis/fetch.js';
import type { EpochEndOffsetResponse } from '../protocol/apis/offsets.js';
import { ClientLink, type WebSocketFactory, type WebSocketLike } from '../net/client-link.js';
import { BrokerConnection } from '../client/broker-connection.js';
import type { SaslOptions } from '../client/sasl.js';
import type { MetadataImage } from '../metadata/image.js';
import { baseOffsetOf, batchSizeAt, lastOffsetOf, LOG_OVERHEAD_BYTES, RECORD_BATCH_HEADER_BYTES } from '../record/batch-header.js';
import type { Partition } from './partition.js';
import { truncationAfterEpochQuery } from './rules/truncation.js';

/** The endpoint name of a broker's client listener in its registration. */
export const BROKER_ENDPOINT = 'BROKER';

export interface FetcherOptions {
  readonly brokerId: number;
  readonly brokerEpoch: () => number;
  readonly logger: Logger;
  readonly durability: 'replication' | 'fsync';
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly factory?: WebSocketFactory;
  /** Log in to leaders' broker listeners with this SASL identity (ws.sasl.required there); none: anonymous. */
  readonly sasl?: SaslOptions;
  readonly maxWaitMs?: number;
  readonly fetchBytesMax?: number;
  readonly partitionFetchBytesMax?: number;
  readonly backoffMs?: number;
  readonly requestTimeoutMs?: number;
  /** Told of every follower append (stamped batches), so producer state follows the log (idempotence). */
  readonly onAppended?: (p: Partition, batches: Buffer) => void;
  /** Told when the link to a leader goes down and when it answers again, on changes only (see the header). */
  readonly onLeaderLink?: (leaderId: number, reachable: boolean) => void;
  /** A request unanswered this long past the leader's own wait counts the leader unreachable (it still runs to its timeout). */
  readonly leaderSilenceMs?: number;
}

/**
 * Default of FetcherOptions.leaderSilenceMs. A dead process's links are reset
 * by its kernel at once; this only decides when a SILENT leader (paused, cut
 * off, powered off) is reported: three seconds after the fetch went out, a
 * third of the broker session, so a GC pause or a stall of a loaded machine
 * shorter than that never moves a leadership.
 */
export const LEADER_SILENCE_MS_DEFAULT = 2_500;

interface FetchState {
  readonly p: Partition;
  readonly leaderEpoch: number;
  state: 'truncating' | 'fetching';
  /** Skip this partition until then (monotonic ms). */
  delayUntilMs: number;
}

/** The fetch session with the leader, as this follower last told it. */
interface FollowerSession {
  readonly id: number;
  /** The epoch of the next request. */
  readonly epoch: number;
  /** Every partition in the session, with the position the leader holds for it. */
  readonly positions: ReadonlyMap<string, { readonly state: FetchState; readonly fetchOffset: number }>;
}

/**
 * Links to leaders over `ws`, dialed from `localAddress` when given (a node's
 * --outbound-address); to a wss:// leader with the node's certificate and
 * trust (src/net/tls.ts), read at each dial so a reloaded certificate is used.
 */
export function replicaLinkFactory(localAddress?: string, tls?: TlsDialer): WebSocketFactory {
  return (url) => new WebSocket(url, {
    perMessageDeflate: false, maxPayload: 256 * 1024 * 1024, ...(localAddress !== undefined ? { localAddress } : {}),
    ...dialOptions(url, tls),
  }) as unknown as WebSocketLike;
}

const nodeFactory = replicaLinkFactory();

export function brokerUrl(image: MetadataImage, brokerId: number): string | null {
  return image.brokers.get(brokerId)?.endpoints.find((e) => e.name === BROKER_ENDPOINT)?.url ?? null;
}

export class ReplicaFetcher {
  private readonly states = new Map<string, FetchState>();
  private link: ClientLink | null = null;
  /** Null: the next fetch opens a session (listing every partition). */
  private session: FollowerSession | null = null;
  private stopped = false;
  private wake: (() => void) | null = null;
  private readonly loop: Promise<void>;
  private readonly maxWaitMs: number;
  private readonly backoffMs: number;
  /** What this fetcher last told onLeaderLink (it starts out reachable: nothing to report). */
  private leaderReachable = true;

  constructor(readonly leaderId: number, readonly url: string, private readonly opts: FetcherOptions) {
    this.maxWaitMs = opts.maxWaitMs ?? 500;
    this.backoffMs = opts.backoffMs ?? 200;
    this.loop = this.run();
  }

  get size(): number {
    return this.states.size;
  }

  add(p: Partition, leaderEpoch: number): void {
    // Every partition handed over truncates first (against the leader's epochs), whatever it holds.
    const state = mutant('follower-skips-epoch-truncation') ? 'fetching' : 'truncating';
    this.states.set(p.key, { p, leaderEpoch, state, delayUntilMs: 0 });
    this.poke();
  }

  remove(p: Partition): void {
    this.states.delete(p.key);
  }

  /** The partitions and the leader epochs they follow. */
  entries(): Array<{ p: Partition; leaderEpoch: number }> {
    return [...this.states.values()].map((s) => ({ p: s.p, leaderEpoch: s.leaderEpoch }));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.poke();
    this.link?.close();
    await this.loop;
    this.setLeaderReachable(true, true);
  }

  /** Whether the leader answered this fetcher's latest request (false: the link is down or silent). */
  get reachable(): boolean {
    return this.leaderReachable;
  }

  private setLeaderReachable(reachable: boolean, evenIfStopped = false): void {
    if (reachable === this.leaderReachable || (this.stopped && !evenIfStopped)) return;
    this.leaderReachable = reachable;
    if (!reachable) this.opts.logger.info({ leader: this.leaderId, url: this.url }, 'leader unreachable; reporting it to the controller');
    else if (!this.stopped) this.opts.logger.info({ leader: this.leaderId }, 'leader reachable again');
    this.opts.onLeaderLink?.(this.leaderId, reachable);
  }

  /**
   * One request to the leader: an answer marks it reachable; a link failure,
   * or no answer leaderSilenceMs past `holdMs` (how long the leader may keep
   * the request by design), marks it unreachable.
   */
  private async ask<T>(link: ClientLink, apiKey: number, body: object, holdMs: number, timeoutMs: number): Promise<T> {
    const silenceMs = this.opts.leaderSilenceMs ?? LEADER_SILENCE_MS_DEFAULT;
    const cancel = this.opts.scheduler.schedule(holdMs + silenceMs, () => this.setLeaderReachable(false));
    try {
      const res = await link.request<T>(apiKey, 0, body, timeoutMs);
      this.setLeaderReachable(true);
      return res;
    } catch (err) {
      this.setLeaderReachable(false);
      throw err;
    } finally {
      cancel();
    }
  }

  private poke(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.opts.scheduler.schedule(ms, () => {
        this.wake = null;
        resolve();
      });
      this.wake = () => {
        cancel();
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const now = this.opts.clock.monotonicMs();
      const ready = [...this.states.values()].filter((s) => s.delayUntilMs <= now);
      if (ready.length === 0) {
        const next = Math.min(...[...this.states.values()].map((s) => s.delayUntilMs));
        await this.sleep(Number.isFinite(next) ? Math.max(1, next - now) : 60_000);
        continue;
      }
      try {
        const link = await this.connect();
        const truncating = ready.filter((s) => s.state === 'truncating');
        if (truncating.length > 0) await this.truncate(link, truncating);
        else await this.fetch(link, ready);
      } catch (err) {
        // Whatever the leader answered may not have been applied: start over with a new session.
        this.session = null;
        if (this.stopped) break;
        this.opts.logger.debug({ leader: this.leaderId, err: (err as Error).message }, 'fetch from leader failed; backing off');
        await this.sleep(this.backoffMs);
      }
    }
  }

  private async connect(): Promise<ClientLink> {
    if (this.link?.isOpen) return this.link;
    this.link?.close();
    this.link = null;
    this.session = null;
    // The link times its connect and requests on this fetcher's scheduler (ClientLinkOptions.scheduler, from
    // lane transport's seam; a link without that option ignores it and uses real timers).
    const linkOptions = { factory: this.opts.factory ?? nodeFactory, clientId: `replica-${this.opts.brokerId}`, connectTimeoutMs: 5000, scheduler: this.opts.scheduler };
    let link: ClientLink;
    try {
      link = await ClientLink.connect(this.url, linkOptions);
    } catch (err) {
      this.setLeaderReachable(false);
      throw err;
    }
    if (this.opts.sasl) {
      // The broker principal's login (and its KIP-368 renewals) on the fetch link; a refusal closes it and the fetcher backs off and retries.
      try {
        await new BrokerConnection(link).authenticate(this.opts.sasl);
      } catch (err) {
        link.close();
        throw err;
      }
    }
    if (this.stopped) {
      link.close();
      throw new Error('stopped');
    }
    this.link = link;
    return link;
  }

  private groupByTopic<T>(states: FetchState[], item: (s: FetchState) => T): Array<{ name: string; partitions: T[] }> {
    const byTopic = new Map<string, T[]>();
    for (const s of states) {
      let list = byTopic.get(s.p.topic);
      if (!list) byTopic.set(s.p.topic, (list = []));
      list.push(item(s));
    }
    return [...byTopic].map(([name, partitions]) => ({ name, partitions }));
  }

  private current(topic: string, partition: number, sent: Map<string, FetchState>): FetchState | undefined {
    const s = sent.get(`${topic}-${partition}`);
    return s && this.states.get(s.p.key) === s ? s : undefined;
  }

  private async truncate(link: ClientLink, states: FetchState[]): Promise<void> {
    const asked = new Map<string, number>();
    const toAsk: FetchState[] = [];
    for (const s of states) {
      const epoch = s.p.log.latestEpoch();
      if (epoch < 0) s.state = 'fetching'; // nothing written under any epoch: nothing can diverge
      else {
        asked.set(s.p.key, epoch);
        toAsk.push(s);
      }
    }
    if (toAsk.length === 0) return;
    const sent = new Map(toAsk.map((s) => [s.p.key, s]));
    const body = {
      replicaId: this.opts.brokerId,
      topics: this.groupByTopic(toAsk, (s) => ({ partition: s.p.index, currentLeaderEpoch: s.leaderEpoch, leaderEpoch: asked.get(s.p.key)! })),
    };
    const res = await this.ask<{ topics?: Array<{ name: string; partitions: EpochEndOffsetResponse[] }>; errorCode?: number }>(
      link, ApiKey.OffsetForLeaderEpoch, body, 0, this.opts.requestTimeoutMs ?? 10_000);
    for (const t of res.topics ?? []) {
      for (const a of t.partitions) {
        const s = this.current(t.name, a.partition, sent);
        if (!s) continue;
        if (a.errorCode !== 0) {
          s.delayUntilMs = this.opts.clock.monotonicMs() + this.backoffMs;
          continue;
        }
        this.isolated(s, 'truncation', () => this.applyEpochAnswer(s, asked.get(s.p.key)!, a));
      }
    }
    if (res.errorCode) throw new Error(`OffsetForLeaderEpoch failed with error ${res.errorCode}`);
  }

  private applyEpochAnswer(s: FetchState, askedEpoch: number, a: EpochEndOffsetResponse): void {
    const log = s.p.log;
    const decision = truncationAfterEpochQuery(
      { logEndOffset: log.logEndOffset, highWatermark: log.highWatermark, endOffsetForEpoch: (e) => log.endOffsetForEpoch(e) },
      askedEpoch, a,
    );
    const before = log.logEndOffset;
    log.truncateTo(decision.truncateTo);
    if (log.logEndOffset < before) {
      this.opts.logger.info({ topic: s.p.topic, partition: s.p.index, from: before, to: log.logEndOffset, leaderEpoch: s.leaderEpoch }, 'truncated divergent log tail');
    }
    if (decision.done) s.state = 'fetching';
  }

  /**
   * Runs one partition's step. A failure there (a storage error on its log,
   * say) backs off that partition only: thrown out of the round, it would
   * skip every partition after it in the response, on every round, and
   * starve them. Broken invariants still propagate.
   */
  private isolated(s: FetchState, what: string, step: () => void): boolean {
    try {
      step();
      return true;
    } catch (err) {
      if (err instanceof AssertionError) throw err;
      this.opts.logger.warn({ topic: s.p.topic, partition: s.p.index, err: (err as Error).message }, `${what} failed; backing off this partition`);
      s.delayUntilMs = this.opts.clock.monotonicMs() + this.backoffMs;
      return false;
    }
  }

  private async fetch(link: ClientLink, ready: FetchState[]): Promise<void> {
    // In fsync mode a fetch offset tells the leader what this replica holds
    // durably, so a log reports its LEO only once flushed up to it (this is
    // the flush of what the previous response appended); a log that fails to
    // flush sits out, rather than reporting what is not on disk.
    const states = this.opts.durability !== 'fsync' ? ready
      : ready.filter((s) => this.isolated(s, 'flush', () => {
        if (s.p.log.recoveryPoint < s.p.log.logEndOffset) s.p.log.flushData();
      }));
    if (states.length === 0) return;
    const sent = new Map(states.map((s) => [s.p.key, s]));
    const session = this.session;
    const positions = new Map(states.map((s) => [s.p.key, { state: s, fetchOffset: s.p.log.logEndOffset }]));
    // In a session, only partitions whose position changed (or that joined) are listed; the others stay as they were.
    const listed = session === null ? states : states.filter((s) => {
      const had = session.positions.get(s.p.key);
      return had === undefined || had.state !== s || had.fetchOffset !== positions.get(s.p.key)!.fetchOffset;
    });
    const forgotten = session === null ? [] : [...session.positions.values()].filter((x) => !sent.has(x.state.p.key)).map((x) => x.state);
    const body = {
      replicaId: this.opts.brokerId,
      brokerEpoch: this.opts.brokerEpoch(),
      maxWaitMs: this.maxWaitMs,
      minBytes: 1,
      maxBytes: this.opts.fetchBytesMax ?? 16 * 1024 * 1024,
      sessionId: session?.id ?? NO_FETCH_SESSION,
      sessionEpoch: session?.epoch ?? INITIAL_SESSION_EPOCH,
      topics: this.groupByTopic(listed, (s) => ({
        partition: s.p.index, fetchOffset: positions.get(s.p.key)!.fetchOffset, currentLeaderEpoch: s.leaderEpoch,
        partitionMaxBytes: this.opts.partitionFetchBytesMax ?? 1024 * 1024,
      })),
      ...(forgotten.length > 0 ? { forgotten: this.groupByTopic(forgotten, (s) => s.p.index) } : {}),
    };
    this.session = null; // until this answer is in: a failure from here on starts a new session
    const res = await this.ask<FetchResponse>(link, ApiKey.Fetch, body, this.maxWaitMs, this.maxWaitMs + (this.opts.requestTimeoutMs ?? 10_000));
    if (res.errorCode === Errors.FETCH_SESSION_ID_NOT_FOUND.code || res.errorCode === Errors.INVALID_FETCH_SESSION_EPOCH.code) {
      this.opts.logger.debug({ leader: this.leaderId, errorCode: res.errorCode }, 'fetch session refused; opening a new one');
      return;
    }
    if (res.errorCode) throw new Error(`fetch failed with error ${res.errorCode}`);
    // A leader without sessions answers every partition and no session id: stay sessionless then.
    if (res.sessionId !== undefined && res.sessionId !== NO_FETCH_SESSION) {
      const epoch = session !== null && session.id === res.sessionId ? session.epoch : INITIAL_SESSION_EPOCH;
      this.session = { id: res.sessionId, epoch: nextSessionEpoch(epoch), positions };
    }
    for (const t of res.topics ?? []) {
      for (const r of t.partitions) {
        const s = this.current(t.name, r.partition, sent);
        if (s) this.isolated(s, 'applying fetched data', () => this.applyFetched(s, r));
      }
    }
  }

  /** Applies one partition's fetch answer. */
  private applyFetched(s: FetchState, r: FetchPartitionResponse): void {
    const log = s.p.log;
    if (r.errorCode === Errors.OFFSET_OUT_OF_RANGE.code) {
      if (log.logEndOffset < r.logStartOffset) {
        this.opts.logger.info({ topic: s.p.topic, partition: s.p.index, leaderLogStart: r.logStartOffset }, 'behind the leader\'s log start: restarting the log there');
        log.truncateFullyAndStartAt(r.logStartOffset);
      } else {
        s.state = 'truncating';
      }
      return;
    }
    if (r.errorCode !== 0) {
      s.delayUntilMs = this.opts.clock.monotonicMs() + this.backoffMs;
      return;
    }
    const records = toBuffer(r.records);
    if (records.length > 0) {
      const from = firstBatchAtOrAfter(records, log.logEndOffset);
      if (from.overlapBase !== null) log.truncateTo(from.overlapBase);
      const tail = records.subarray(from.position);
      if (tail.length > 0) {
        log.appendAsFollower(tail);
        this.opts.onAppended?.(s.p, tail);
      }
    }
    log.updateHighWatermark(Math.min(r.highWatermark, log.logEndOffset));
    // The leader's log start moved up (DeleteRecords, retention): follow it,
    // as far as this replica's high watermark allows (the log refuses more).
    const leaderStart = Math.min(r.logStartOffset, log.highWatermark);
    if (leaderStart > log.logStartOffset) log.advanceLogStartOffset(leaderStart);
  }
}

function toBuffer(u: Uint8Array | undefined): Buffer {
  if (!u) return Buffer.alloc(0);
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/**
 * Where the batches the follower lacks begin in a fetched buffer: batches that
 * end below `leo` are skipped; a batch straddling `leo` (possible only after a
 * high-watermark fallback truncation) means the follower's own tail batch is
 * not the leader's, so the follower truncates to its base and takes it whole.
 */
function firstBatchAtOrAfter(buf: Buffer, leo: number): { position: number; overlapBase: number | null } {
  let pos = 0;
  while (pos + RECORD_BATCH_HEADER_BYTES <= buf.length) {
    const len = batchSizeAt(buf, pos);
    if (len < LOG_OVERHEAD_BYTES) break; // malformed: appendAsFollower will refuse it with a clear error
    const base = baseOffsetOf(buf, pos);
    if (base >= leo) return { position: pos, overlapBase: null };
    if (lastOffsetOf(buf, pos) >= leo) return { position: pos, overlapBase: base };
    pos += len;
  }
  return { position: buf.length, overlapBase: null };
}

/** The fetchers of one broker, one per leader it follows. */
export class ReplicaFetcherManager {
  private readonly fetchers = new Map<number, ReplicaFetcher>();
  private readonly leaderOf = new Map<string, number>();

  constructor(private readonly opts: FetcherOptions) {}

  addPartition(p: Partition, leaderId: number, leaderEpoch: number, image: MetadataImage): void {
    this.removePartition(p);
    const url = brokerUrl(image, leaderId);
    if (url === null) {
      this.opts.logger.warn({ topic: p.topic, partition: p.index, leader: leaderId }, 'leader has no broker endpoint; not fetching');
      return;
    }
    let f = this.fetchers.get(leaderId);
    if (f && f.url !== url) {
      void f.stop();
      this.fetchers.delete(leaderId);
      f = undefined;
    }
    if (!f) {
      f = new ReplicaFetcher(leaderId, url, this.opts);
      this.fetchers.set(leaderId, f);
    }
    f.add(p, leaderEpoch);
    this.leaderOf.set(p.key, leaderId);
  }

  removePartition(p: Partition): void {
    const leaderId = this.leaderOf.get(p.key);
    if (leaderId === undefined) return;
    this.leaderOf.delete(p.key);
    const f = this.fetchers.get(leaderId);
    if (!f) return;
    f.remove(p);
    if (f.size === 0) {
      this.fetchers.delete(leaderId);
      void f.stop();
    }
  }

  /** A leader re-registered with another URL: its partitions move to a fetcher for the new one. */
  refreshEndpoints(image: MetadataImage): void {
    for (const [leaderId, f] of [...this.fetchers]) {
      const url = brokerUrl(image, leaderId);
      if (url === null || url === f.url) continue;
      const moving = f.entries();
      this.fetchers.delete(leaderId);
      void f.stop();
      for (const { p, leaderEpoch } of moving) this.addPartition(p, leaderId, leaderEpoch, image);
    }
  }

  async stop(): Promise<void> {
    const all = [...this.fetchers.values()];
    this.fetchers.clear();
    this.leaderOf.clear();
    await Promise.all(all.map((f) => f.stop()));
  }
}
