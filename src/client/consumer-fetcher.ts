// The consumer's fetch side: per-partition positions, one long-polling fetch
// session per leader broker, and a bounded prefetch buffer the application
// drains in partition order.
//
// - A fetch session is one in-flight Fetch per leader broker carrying every
//   fetchable partition that broker leads; the broker holds it up to
//   maxWaitMs until minBytes arrive (the long poll). When it returns the next
//   one starts, so each partition is fetched again as soon as its data is
//   buffered — the prefetch.
// - Memory bound: bytes buffered plus bytes reserved by in-flight requests
//   stay within prefetchBytesMax, and a partition with maxBytesPerPartition
//   or more buffered is not fetched. (A broker returns the first batch of a
//   partition whole even when it is larger than asked, so the bound can be
//   passed by at most one batch per in-flight partition, as in Kafka.)
// - Order: records of a partition are buffered and handed out in offset
//   order, chunk after chunk; partitions take turns (round-robin) so one busy
//   partition cannot starve the others.
// - Positions: a new partition's position is its committed offset
//   (committedOffsets hook) or, when there is none, the reset policy's
//   ListOffsets answer (earliest -2, latest -1); OFFSET_OUT_OF_RANGE resets
//   the same way (without the committed offset, which is what went out of
//   range). seek() moves a position and drops what was buffered.
// - Isolation: read_committed fetches stop at the last stable offset and
//   skip aborted transactions' records (records.ts); control batches are
//   never delivered, but the position moves past them like past any batch.
// - Versions: seek, reset and removal bump a partition's version; a fetch
//   answer or a chunk carrying an older version is stale and is dropped, so
//   nothing fetched before a seek is ever delivered after it.
// - Errors per partition: leader changes (NOT_LEADER_OR_FOLLOWER,
//   FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, LEADER_NOT_AVAILABLE, ...)
//   refresh metadata and fetch again after retryBackoffMs; a lost connection
//   likewise; a non-retriable error is fatal (onFatal) — the consumer
//   surfaces it to the application.

import { Errors, isSluiceError, SluiceError } from '../util/errors.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from '../protocol/apis/offsets.js';
import { READ_COMMITTED, type AbortedTransaction, type FetchPartitionResponse } from '../protocol/apis/fetch.js';
import { batchSizeAt, LOG_OVERHEAD_BYTES, RECORD_BATCH_HEADER_BYTES, lastOffsetOf } from '../record/batch-header.js';
import type { Client } from './client.js';
import { listOffsets, partitionKey } from './consumer-list-offsets.js';
import type { OffsetReset, ResolvedConsumerOptions } from './consumer-options.js';
import { decodeFetchedRecords, type ConsumedRecord } from './records.js';
import { errorFromCode } from './responses.js';

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/** Records of one partition, in offset order, from one fetch. */
export interface Chunk {
  readonly topic: string;
  readonly partition: number;
  readonly key: string;
  /** The partition's version when fetched: stale once it differs from Fetcher.version(key). */
  readonly version: number;
  readonly records: ConsumedRecord[];
  readonly highWatermark: number;
  readonly bytes: number;
}

export interface FetcherHooks {
  /** Committed offsets by partition key (-1 or missing: none); null when there is no group. */
  readonly committedOffsets: ((tps: readonly TopicPartition[]) => Promise<Map<string, number>>) | null;
  readonly resetPolicy: (topic: string) => OffsetReset;
  /** Data became available to take(). */
  readonly onReady: () => void;
  readonly onFatal: (err: SluiceError) => void;
}

interface PartitionState {
  readonly topic: string;
  readonly partition: number;
  readonly key: string;
  /** Next offset to fetch; null until the committed offset or the reset policy says. */
  position: number | null;
  /** The position went out of range: reset by policy, do not reuse the committed offset. */
  resetOnly: boolean;
  version: number;
  chunks: Chunk[];
  bufferedBytes: number;
  paused: boolean;
  inFlight: boolean;
  initializing: boolean;
  retryAtMs: number;
  highWatermark: number;
}

export class Fetcher {
  private readonly parts = new Map<string, PartitionState>();
  private readonly busyBrokers = new Set<number>();
  private bufferedTotal = 0;
  private reservedTotal = 0;
  private running = false;
  /** Cancels the retry timer (on the client's scheduler); null when none is armed. */
  private cancelTimer: (() => void) | null = null;
  private timerAtMs = Infinity;
  private cursor = 0;
  private metadataRefreshing = false;

  constructor(private readonly client: Client, private readonly opts: ResolvedConsumerOptions, private readonly hooks: FetcherHooks) {}

  start(): void {
    this.running = true;
    this.pump();
  }

  /** No new fetches; answers still in flight are dropped when they come back. Buffers are kept. */
  stop(): void {
    this.running = false;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.timerAtMs = Infinity;
  }

  /** Starts fetching these partitions (from `offset` when given) unless already fetched. */
  add(tps: ReadonlyArray<TopicPartition & { readonly offset?: number }>): void {
    for (const tp of tps) {
      const key = partitionKey(tp.topic, tp.partition);
      if (this.parts.has(key)) continue;
      this.parts.set(key, {
        topic: tp.topic, partition: tp.partition, key, position: tp.offset ?? null, resetOnly: false, version: 0,
        chunks: [], bufferedBytes: 0, paused: false, inFlight: false, initializing: false, retryAtMs: 0, highWatermark: -1,
      });
    }
    this.pump();
  }

  /** Stops fetching these partitions and drops their buffered records. */
  remove(keys: Iterable<string>): void {
    for (const key of keys) {
      const s = this.parts.get(key);
      if (!s) continue;
      this.release(s);
      this.parts.delete(key);
    }
  }

  keys(): string[] {
    return [...this.parts.keys()];
  }

  has(key: string): boolean {
    return this.parts.has(key);
  }

  /** The partition's current version (undefined once removed). */
  version(key: string): number | undefined {
    return this.parts.get(key)?.version;
  }

  /** Next offset to fetch (null while unknown). */
  position(key: string): number | null | undefined {
    return this.parts.get(key)?.position;
  }

  /** Moves a partition's position; returns false when the partition is not fetched here. */
  seek(topic: string, partition: number, offset: number): boolean {
    const s = this.parts.get(partitionKey(topic, partition));
    if (!s) return false;
    this.release(s);
    s.version++;
    s.position = offset;
    s.resetOnly = false;
    s.retryAtMs = 0;
    this.pump();
    return true;
  }

  setPaused(keys: Iterable<string>, paused: boolean): void {
    for (const key of keys) {
      const s = this.parts.get(key);
      if (s) s.paused = paused;
    }
    if (!paused) {
      this.pump();
      this.hooks.onReady();
    }
  }

  isPaused(key: string): boolean {
    return this.parts.get(key)?.paused ?? false;
  }

  /** Bytes of fetched records not yet taken (for tests and metrics). */
  get bufferedBytes(): number {
    return this.bufferedTotal;
  }

  /** The next chunk to deliver, partitions taking turns; null when none is ready. */
  take(): Chunk | null {
    const all = [...this.parts.values()];
    for (let i = 0; i < all.length; i++) {
      const s = all[(this.cursor + i) % all.length]!;
      if (s.paused || s.chunks.length === 0) continue;
      this.cursor = (this.cursor + i + 1) % all.length;
      const chunk = s.chunks.shift()!;
      s.bufferedBytes -= chunk.bytes;
      this.bufferedTotal -= chunk.bytes;
      this.pump();
      return chunk;
    }
    return null;
  }

  private release(s: PartitionState): void {
    this.bufferedTotal -= s.bufferedBytes;
    s.bufferedBytes = 0;
    s.chunks = [];
    s.version++;
  }

  // ---- scheduling --------------------------------------------------------------

  private pump(): void {
    if (!this.running) return;
    const now = this.client.clock.monotonicMs();
    const unknown = [...this.parts.values()].filter((s) => s.position === null && !s.initializing && s.retryAtMs <= now);
    if (unknown.length > 0) void this.initialize(unknown);
    const byBroker = new Map<number, Array<{ s: PartitionState; epoch: number }>>();
    for (const s of this.parts.values()) {
      if (!this.fetchable(s, now)) continue;
      const leader = this.leaderOf(s);
      if (leader === null || this.busyBrokers.has(leader.id)) continue;
      byBroker.set(leader.id, [...(byBroker.get(leader.id) ?? []), { s, epoch: leader.epoch }]);
    }
    for (const [brokerId, list] of byBroker) {
      const room = this.opts.prefetchBytesMax - this.bufferedTotal - this.reservedTotal;
      if (room <= 0) break;
      void this.fetchFrom(brokerId, list, room);
    }
    this.scheduleRetry(now);
  }

  private fetchable(s: PartitionState, now: number): boolean {
    return s.position !== null && !s.paused && !s.inFlight && !s.initializing && s.retryAtMs <= now && s.bufferedBytes < this.opts.maxBytesPerPartition;
  }

  /** The cached leader; null (and a metadata refresh) when there is none yet. */
  private leaderOf(s: PartitionState): { id: number; epoch: number } | null {
    const p = this.client.cachedTopic(s.topic)?.partitions[s.partition];
    if (p && p.leader >= 0) return { id: p.leader, epoch: p.leaderEpoch };
    this.refreshMetadata(s.topic);
    s.retryAtMs = this.client.clock.monotonicMs() + this.opts.retryBackoffMs;
    return null;
  }

  private refreshMetadata(topic: string): void {
    if (this.metadataRefreshing || this.client.isClosed) return;
    this.metadataRefreshing = true;
    this.client.topic(topic, { refresh: true }).catch(() => undefined).finally(() => {
      this.metadataRefreshing = false;
      this.pump();
    });
  }

  /** One timer, for the earliest partition waiting out a backoff. */
  private scheduleRetry(now: number): void {
    let at = Infinity;
    for (const s of this.parts.values()) if (s.retryAtMs > now && !s.inFlight && !s.initializing) at = Math.min(at, s.retryAtMs);
    if (at === Infinity || at >= this.timerAtMs) return;
    this.cancelTimer?.();
    this.timerAtMs = at;
    this.cancelTimer = this.client.scheduler.schedule(Math.max(1, Math.ceil(at - now)), () => {
      this.cancelTimer = null;
      this.timerAtMs = Infinity;
      this.pump();
    });
  }

  private backoff(s: PartitionState): void {
    s.retryAtMs = this.client.clock.monotonicMs() + this.opts.retryBackoffMs;
  }

  // ---- positions ---------------------------------------------------------------

  /** Committed offset, else the reset policy, for partitions without a position. */
  private async initialize(ss: PartitionState[]): Promise<void> {
    const versions = new Map(ss.map((s) => [s, s.version]));
    const current = (s: PartitionState) => this.parts.get(s.key) === s && s.version === versions.get(s) && s.position === null;
    for (const s of ss) s.initializing = true;
    try {
      const fromCommit = ss.filter((s) => !s.resetOnly);
      const committed = this.hooks.committedOffsets && fromCommit.length > 0 ? await this.hooks.committedOffsets(fromCommit) : new Map<string, number>();
      const toReset: PartitionState[] = [];
      for (const s of ss) {
        const c = committed.get(s.key);
        if (!current(s)) continue;
        if (!s.resetOnly && c !== undefined && c >= 0) s.position = c;
        else toReset.push(s);
      }
      if (toReset.length === 0) return;
      const offsets = await listOffsets(this.client, toReset.map((s) => ({
        topic: s.topic, partition: s.partition, timestamp: this.hooks.resetPolicy(s.topic) === 'earliest' ? EARLIEST_TIMESTAMP : LATEST_TIMESTAMP,
      })), this.opts.isolationLevel);
      for (const s of toReset) {
        const o = offsets.get(s.key);
        if (o === undefined || !current(s)) continue;
        s.position = o;
        s.resetOnly = false;
      }
    } catch (err) {
      this.onError(err, ss);
    } finally {
      for (const s of ss) s.initializing = false;
      this.pump();
    }
  }

  private onError(err: unknown, ss: readonly PartitionState[]): void {
    // A closed Client cannot recover: retrying would spin until the consumer is closed too.
    if (isSluiceError(err) && err.retriable && !this.client.isClosed) {
      this.client.noteError(err);
      for (const s of ss) this.backoff(s);
      // A lost or refused connection (a broker killed, restarted or out of
      // reach) may mean a new leader: ask again rather than retry the cached
      // one forever. The refresh asks any known broker, then the bootstrap list.
      if (err.is(Errors.NETWORK_EXCEPTION) || err.is(Errors.REQUEST_TIMED_OUT)) {
        for (const topic of new Set(ss.map((s) => s.topic))) this.refreshMetadata(topic);
      }
      return;
    }
    this.hooks.onFatal(isSluiceError(err) ? err : new SluiceError(Errors.UNKNOWN_SERVER_ERROR, (err as Error).message));
  }

  // ---- fetching ----------------------------------------------------------------

  private async fetchFrom(brokerId: number, list: Array<{ s: PartitionState; epoch: number }>, room: number): Promise<void> {
    const partitionBytes = Math.max(1, Math.min(this.opts.maxBytesPerPartition, Math.floor(room / list.length)));
    const reserve = Math.min(this.opts.maxBytes, room, partitionBytes * list.length);
    const sent = list.map(({ s, epoch }) => ({ s, epoch, version: s.version, offset: s.position! }));
    this.busyBrokers.add(brokerId);
    this.reservedTotal += reserve;
    for (const { s } of sent) s.inFlight = true;
    try {
      const byTopic = new Map<string, typeof sent>();
      for (const x of sent) byTopic.set(x.s.topic, [...(byTopic.get(x.s.topic) ?? []), x]);
      const conn = await this.client.connection(brokerId);
      const res = await conn.fetch({
        maxWaitMs: this.opts.maxWaitMs, minBytes: this.opts.minBytes, maxBytes: reserve, isolationLevel: this.opts.isolationLevel,
        topics: [...byTopic].map(([name, xs]) => ({
          name, partitions: xs.map((x) => ({ partition: x.s.partition, fetchOffset: x.offset, currentLeaderEpoch: x.epoch, partitionMaxBytes: partitionBytes })),
        })),
      });
      const answers = new Map(res.topics.flatMap((t) => t.partitions.map((p) => [partitionKey(t.name, p.partition), p] as const)));
      for (const x of sent) {
        const p = answers.get(x.s.key);
        if (p && this.running && this.parts.get(x.s.key) === x.s && x.s.version === x.version) this.absorb(x.s, x.offset, p);
      }
    } catch (err) {
      if (this.running) this.onError(err, sent.map((x) => x.s));
    } finally {
      this.reservedTotal -= reserve;
      for (const { s } of sent) s.inFlight = false;
      this.busyBrokers.delete(brokerId);
      this.pump();
    }
  }

  /** One partition's answer, for a fetch still current. */
  private absorb(s: PartitionState, fetchOffset: number, p: FetchPartitionResponse): void {
    const committed = this.opts.isolationLevel === READ_COMMITTED;
    // read_committed reads up to the last stable offset: that is where its lag is counted to, as in Kafka.
    const end = committed && p.lastStableOffset >= 0 ? p.lastStableOffset : p.highWatermark;
    if (end >= 0) s.highWatermark = end;
    if (p.errorCode === Errors.NONE.code) {
      let decoded: { records: ConsumedRecord[]; nextOffset: number };
      try {
        decoded = decodeFetched(p.records, fetchOffset, committed ? p.abortedTransactions ?? [] : null);
      } catch (err) {
        this.onError(err, [s]);
        return;
      }
      s.position = Math.max(fetchOffset, decoded.nextOffset);
      if (decoded.records.length === 0) return;
      const bytes = p.records.length;
      s.chunks.push({ topic: s.topic, partition: s.partition, key: s.key, version: s.version, records: decoded.records, highWatermark: s.highWatermark, bytes });
      s.bufferedBytes += bytes;
      this.bufferedTotal += bytes;
      this.hooks.onReady();
      return;
    }
    const err = errorFromCode(p.errorCode, p.errorMessage, { topic: s.topic, partition: s.partition, fetchOffset });
    if (err.is(Errors.OFFSET_OUT_OF_RANGE)) {
      // Records buffered before stay valid: they were below the position.
      s.position = null;
      s.resetOnly = true;
      return;
    }
    if (err.retriable) this.refreshMetadata(s.topic);
    this.onError(err, [s]);
  }
}

/**
 * Records at or after `fetchOffset` in a fetch answer, and the offset after
 * the last whole batch (which may be past the last record: control batches
 * and compacted-away records still advance the position).
 */
export function decodeFetched(bytes: Uint8Array, fetchOffset: number, aborted: readonly AbortedTransaction[] | null = null): { records: ConsumedRecord[]; nextOffset: number } {
  const buf = bytes;
  let pos = 0;
  let nextOffset = fetchOffset;
  while (pos + LOG_OVERHEAD_BYTES <= buf.length) {
    const size = batchSizeAt(buf, pos);
    if (size < RECORD_BATCH_HEADER_BYTES) throw new SluiceError(Errors.CORRUPT_MESSAGE, `batch of ${size} bytes at position ${pos} of a fetch answer`);
    if (pos + size > buf.length) break;
    nextOffset = Math.max(nextOffset, lastOffsetOf(buf, pos) + 1);
    pos += size;
  }
  return { records: decodeFetchedRecords(buf.subarray(0, pos), fetchOffset, aborted), nextOffset };
}
