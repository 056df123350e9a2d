// Fetch on the leaders of this broker (Kafka's ReplicaManager.fetchMessages):
// consumers read up to the high watermark, followers up to the log end.
//
// - Sessionless reads list every partition each time (consumers, and
//   followers of a leader without sessions); follower session reads
//   (KIP-227, fetch-sessions.ts) name only what changed, and every partition
//   of the session counts as fetched at its session position, so the ISR
//   rules see a follower keep up with idle partitions too.
// - A follower's fetch offset is its LEO: it is recorded on the partition
//   (Partition.onFollowerFetch), which may move the HW, and a follower
//   outside the ISR may now be asked in (onFollowerOutsideIsr).
// - A read with less than minBytes long-polls as a DelayedFetch in this
//   handler's purgatory: appends wake it (consumers' and sessionless fetches
//   by partition key, sessions by their own key), and a consumer's also by
//   HW moves (a follower's waits for data; it hears of the HW with it).
// - read_committed consumers (KIP-98) read up to the last stable offset
//   (min(first open transaction, HW): producer-state-store.ts) and get the
//   aborted transactions overlapping what they read, from the segments'
//   transaction indexes; the LSO only moves with an append (a marker) or an
//   HW move, both of which wake waiting fetches. Every consumer answer
//   carries the LSO (read_uncommitted: from producer state already built,
//   else the HW).
// - Reassignment traffic (to a replica being added, or to an out-of-sync
//   follower the topic lists in leader.replication.throttled.replicas) is
//   throttled by one token bucket when the cluster sets
//   leader.replication.throttled.rate (rules/throttle.ts, on the injected clock).

import type { Clock, Scheduler } from '../util/clock.js';
import { Errors, SluiceError } from '../util/errors.js';
import { throttledReplicasInclude } from '../metadata/config-defs.js';
import { READ_COMMITTED, SESSIONLESS_EPOCH, type FetchPartition, type FetchPartitionResponse, type FetchRequest, type FetchResponse } from '../protocol/apis/fetch.js';
import { Purgatory } from './delayed.js';
import { DelayedFetch, type FetchRead } from './delayed-fetch.js';
import {
  FetchSessionCache, markSent, mustInclude, sessionWaitKey, type FetchSession, type PartitionAnswer, type SessionPartition,
} from './fetch-sessions.js';
import type { HostedPartitions } from './hosted-partitions.js';
import { partitionKey, type Partition } from './partition.js';
import { failure, failureOf, NONE } from './partition-errors.js';
import type { ProducerStateStore } from './producer-state-store.js';
import { TokenBucket } from './rules/throttle.js';
import { mutant } from '../util/mutants.js';

export interface FetchHandlerOptions {
  readonly hosted: HostedPartitions;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  /** The last stable offsets (open transactions per partition). */
  readonly producerStates: ProducerStateStore;
  /** The HW of `p` moved on a follower's fetch (waiting produces and fetches re-check). */
  readonly onHighWatermarkMoved: (p: Partition) => void;
  /** A follower outside `p`'s ISR fetched: it may be due to join (an AlterPartition). */
  readonly onFollowerOutsideIsr: (p: Partition) => void;
}

const EMPTY = new Uint8Array(0);

export class FetchHandler {
  private readonly purgatory: Purgatory;
  /** Followers' incremental fetch sessions (KIP-227). */
  private readonly sessions = new FetchSessionCache();
  /** Bytes/s sent to replicas a reassignment is adding (leader.replication.throttled.rate). */
  private readonly throttle: TokenBucket;
  private readonly hosted: HostedPartitions;

  constructor(private readonly opts: FetchHandlerOptions) {
    this.hosted = opts.hosted;
    this.purgatory = new Purgatory(opts.scheduler);
    this.throttle = new TokenBucket(opts.clock);
  }

  /** Long-poll fetches waiting (metrics). */
  get waiting(): number {
    return this.purgatory.size;
  }

  fetch(req: FetchRequest, isClosed: () => boolean): Promise<FetchResponse> | FetchResponse {
    const replicaId = req.replicaId;
    // A replica fetch moves the high watermark, so it must come from the
    // broker's current registration (its broker epoch), not from any client
    // that names a follower's id (found by the bad-input tests).
    if (replicaId >= 0) {
      const reg = this.hosted.image?.brokers.get(replicaId);
      if (!reg || reg.brokerEpoch !== req.brokerEpoch) {
        throw new SluiceError(Errors.STALE_BROKER_EPOCH, `replica fetch from broker ${replicaId} with broker epoch ${req.brokerEpoch}; its registration has ${reg?.brokerEpoch ?? 'none'}`);
      }
      if (req.sessionEpoch !== SESSIONLESS_EPOCH) return this.fetchInSession(req, isClosed);
    }
    let anyError = false;
    for (const t of req.topics) {
      for (const fp of t.partitions) if (!this.servable(partitionKey(t.name, fp.partition), replicaId, fp)) anyError = true;
    }
    const first = this.readAll(req);
    // An error in any partition (e.g. OFFSET_OUT_OF_RANGE from the read) is answered at once, as Kafka does.
    const minBytes = Math.max(1, req.minBytes);
    if (anyError || first.anyError || req.maxWaitMs === 0 || first.bytes >= minBytes) return first.answer();
    const keys = req.topics.flatMap((t) => t.partitions.map((fp) => partitionKey(t.name, fp.partition)));
    return this.longPoll(keys, first, () => this.readAll(req), (r) => r.bytes >= minBytes, req.maxWaitMs, isClosed);
  }

  /** New data (or a new leader) in `p`: its waiting fetches — by its key, and the sessions holding it by theirs — re-check. */
  wake(p: Partition): void {
    this.purgatory.poke(p.key);
    for (const session of this.sessions.sessionsOf(p.key)) this.purgatory.poke(sessionWaitKey(session));
  }

  /** `p`'s HW moved: consumers' and sessionless fetches of it re-check (a session's waits for data). */
  wakeOnHighWatermark(p: Partition): void {
    this.purgatory.poke(p.key);
  }

  /** `p` changed hands: its waiting fetches answer now (sessions with this partition's error in them). */
  answerNow(p: Partition): void {
    this.purgatory.completeKey(p.key);
    for (const session of [...this.sessions.sessionsOf(p.key)]) this.purgatory.completeKey(sessionWaitKey(session));
  }

  /** Shutdown: every waiting fetch answers. */
  answerAll(): void {
    this.purgatory.completeAll();
  }

  /**
   * Waits for `ready(read())` — re-read whenever one of `keys` is poked —
   * and answers with that read; at the deadline with a read of that moment;
   * with `first` once the connection or the broker goes away.
   */
  private longPoll(keys: readonly string[], first: FetchRead, read: () => FetchRead, ready: (r: FetchRead) => boolean, maxWaitMs: number, isClosed: () => boolean): Promise<FetchResponse> {
    return new Promise((resolve) => {
      const op = new DelayedFetch(first, read, ready, () => isClosed() || this.hosted.stopped, resolve);
      this.purgatory.watch(op, keys, maxWaitMs);
    });
  }

  /** Whether partition `key` can serve `fp` here; a follower's fetch of it is recorded (its LEO, the ISR rules). */
  private servable(key: string, replicaId: number, fp: FetchPartition): boolean {
    const p = this.hosted.get(key);
    if (!p || p.leaderProblem(fp.currentLeaderEpoch)) return false;
    if (replicaId >= 0) this.recordFollowerFetch(p, replicaId, fp);
    return true;
  }

  /**
   * A follower's session fetch (fetch-sessions.ts): the request updated the
   * session; every partition of it counts as fetched at its session position
   * (the ISR rules see the follower keep up with idle ones too) and is read,
   * and the answer names only the partitions with something to tell.
   */
  private fetchInSession(req: FetchRequest, isClosed: () => boolean): Promise<FetchResponse> | FetchResponse {
    const applied = this.sessions.apply(req, this.opts.clock.monotonicMs());
    if ('error' in applied) throw new SluiceError(applied.error, applied.message);
    const session = applied.session;
    const parts = session.ordered();
    let anyError = false;
    for (const sp of parts) if (!this.servable(sp.key, req.replicaId, sp)) anyError = true;
    const first = this.readSession(session, parts, req);
    const minBytes = Math.max(1, req.minBytes);
    if (anyError || first.anyError || req.maxWaitMs === 0 || first.bytes >= minBytes) return first.answer();
    // Watched under the session's own key: appends to any of its partitions wake it (wake()), and an
    // HW move alone does not (a follower's fetch waits for data; it hears of the HW with it or at the deadline).
    return this.longPoll([sessionWaitKey(session)], first, () => this.readSession(session, parts, req), (r) => r.bytes >= minBytes || r.anyError, req.maxWaitMs, isClosed);
  }

  /** Reads every partition of the session; answer() builds the answer of the ones to include and marks them sent (call it once, for the answer that goes out). */
  private readSession(session: FetchSession, parts: readonly SessionPartition[], req: FetchRequest): FetchRead {
    let remaining = req.maxBytes;
    let bytes = 0;
    let anyError = false;
    const included: Array<{ sp: SessionPartition; out: FetchPartitionResponse; told: PartitionAnswer }> = [];
    for (const sp of parts) {
      if (this.idleInSession(sp)) continue;
      const out = this.readOne(sp.topic, sp, req.replicaId, remaining, false);
      const recordBytes = out.records.length;
      bytes += recordBytes;
      remaining -= recordBytes;
      if (out.errorCode !== 0) anyError = true;
      const told: PartitionAnswer = { errorCode: out.errorCode, highWatermark: out.highWatermark, logStartOffset: out.logStartOffset, recordBytes };
      if (mustInclude(sp, told)) included.push({ sp, out, told });
    }
    const answer = (): FetchResponse => {
      const byTopic = new Map<string, FetchPartitionResponse[]>();
      for (const { sp, out, told } of included) {
        markSent(sp, told);
        let list = byTopic.get(sp.topic);
        if (!list) byTopic.set(sp.topic, (list = []));
        list.push(out);
      }
      return { errorCode: 0, sessionId: session.id, topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })) };
    };
    return { bytes, anyError, answer };
  }

  /**
   * Nothing to read and nothing new to tell: the follower is at the log end
   * and knows the high watermark and log start. The common case for most
   * partitions of a session, so readOne is skipped for it (it would answer
   * the same: no records, no error, left out of the answer).
   */
  private idleInSession(sp: SessionPartition): boolean {
    const p = this.hosted.get(sp.key);
    if (!p || !p.leader || (sp.currentLeaderEpoch >= 0 && sp.currentLeaderEpoch !== p.leaderEpoch)) return false;
    const log = p.log;
    return sp.fetchOffset === log.logEndOffset && sp.sentHighWatermark === log.highWatermark && sp.sentLogStartOffset === log.logStartOffset;
  }

  private recordFollowerFetch(p: Partition, replicaId: number, fp: FetchPartition): void {
    if (fp.currentLeaderEpoch !== p.leaderEpoch || fp.fetchOffset > p.log.logEndOffset) return;
    // In fsync mode the follower's fetch offset is durable there (it flushes
    // before fetching); the leader counts its own end only once flushed.
    if (p.onFollowerFetch(replicaId, fp.fetchOffset)) this.opts.onHighWatermarkMoved(p);
    if (!p.isr.includes(replicaId)) this.opts.onFollowerOutsideIsr(p);
  }

  private readAll(req: FetchRequest): FetchRead {
    let remaining = req.maxBytes;
    let bytes = 0;
    let anyError = false;
    const topics = req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((fp) => {
        const out = this.readOne(t.name, fp, req.replicaId, remaining, req.replicaId < 0 && req.isolationLevel === READ_COMMITTED);
        bytes += out.records.length;
        remaining -= out.records.length;
        if (out.errorCode !== 0) anyError = true;
        return out;
      }),
    }));
    const response: FetchResponse = { errorCode: 0, topics };
    return { bytes, anyError, answer: () => response };
  }

  private readOne(topic: string, fp: FetchPartition, replicaId: number, remainingBytes: number, readCommitted: boolean): FetchPartitionResponse {
    const out: FetchPartitionResponse = { partition: fp.partition, ...NONE, highWatermark: -1, logStartOffset: -1, lastStableOffset: -1, abortedTransactions: null, records: EMPTY };
    const p = this.hosted.get(partitionKey(topic, fp.partition));
    const problem = this.hosted.problemOf(p, topic, fp.partition, fp.currentLeaderEpoch);
    if (problem) return Object.assign(out, failure(problem.error, problem.message));
    const log = p!.log;
    out.highWatermark = log.highWatermark;
    out.logStartOffset = log.logStartOffset;
    if (replicaId >= 0) out.logEndOffset = log.logEndOffset;
    try {
      // A read_committed read needs the exact LSO (its table is built if need be); others report what is known.
      out.lastStableOffset = replicaId >= 0 ? log.highWatermark
        : readCommitted ? this.opts.producerStates.lastStableOffset(p!) : this.opts.producerStates.lastStableOffsetIfKnown(p!);
      if (readCommitted) out.abortedTransactions = [];
      if (remainingBytes <= 0) return out;
      const rate = replicaId >= 0 && this.throttled(p!, topic, replicaId) ? this.throttleRate() : -1;
      const allowed = rate > 0 ? this.throttle.available(rate) : Infinity;
      if (allowed <= 0) return out;
      const limit = replicaId >= 0 ? log.logEndOffset : readCommitted && !mutant('read-committed-past-lso') ? out.lastStableOffset : log.highWatermark;
      const r = log.read(fp.fetchOffset, Math.min(fp.partitionMaxBytes, remainingBytes, allowed), { maxOffset: limit });
      out.records = r.records;
      if (rate > 0) this.throttle.take(r.records.length);
      if (readCommitted && r.records.length > 0) {
        out.abortedTransactions = log.abortedTransactions(r.firstOffset, r.nextOffset).map((a) => ({ producerId: a.producerId, firstOffset: a.firstOffset }));
      }
    } catch (err) {
      Object.assign(out, failureOf(err), { records: EMPTY, abortedTransactions: readCommitted ? [] : null });
    }
    return out;
  }

  private throttled(p: Partition, topic: string, replicaId: number): boolean {
    if (p.addingReplicas.includes(replicaId)) return true;
    const list = this.hosted.image?.config('topic', topic).get('leader.replication.throttled.replicas');
    return list !== undefined && !p.isr.includes(replicaId) && throttledReplicasInclude(list, p.index, this.hosted.brokerId);
  }

  private throttleRate(): number {
    const v = this.hosted.clusterConfig('leader.replication.throttled.rate');
    return v === null ? -1 : Number(v);
  }
}
