// The replica manager (Kafka's ReplicaManager): the partitions this broker
// hosts, driven by the metadata image, and the data-plane operations on them.
//
// - Image changes make this broker leader (new LeaderState at the image's
//   leader epoch) or follower (the partition is handed to the fetcher of its
//   leader) or remove the replica (log deleted) — applyImage().
// - Produce appends to the leader's log under its leader epoch; acks=all
//   waits in the purgatory until the high watermark passes the batch.
//   Batches of idempotent producers are checked first against the
//   partition's producer state (producer-state-store.ts): a retried duplicate
//   is answered with its original offsets instead of being appended again.
// - Fetch serves consumers up to the high watermark and followers up to the
//   log end; a follower's fetch offset is its LEO, which moves the HW.
//   Fetches with nothing to return long-poll in the purgatory.
// - ISR changes the leader wants (LeaderState.isrChangeToRequest) go to the
//   controller as AlterPartition; they take effect when the image shows them.
//
// Durability: 'replication' (default, Kafka's) counts an appended batch toward
// the HW at once; 'fsync' counts it only once it is fsynced — on the leader by
// a group flush across partitions after each event-loop turn of appends, on
// followers before their next fetch reports the new offset.

import '../node.js'; // Node runtime: native CRC32C, every codec, Buffer bytes
import type { Clock, Scheduler } from '../util/clock.js';
import { Errors, SluiceError, type ErrorInfo } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { LogManager } from '../storage/log-manager.js';
import { logConfigFrom, type LogConfig } from '../storage/log-config.js';
import type { MetadataImage, PartitionRegistration, TopicImage } from '../metadata/image.js';
import type { MetadataChanges } from '../metadata/delta.js';
import { effectiveBrokerConfig, effectiveTopicConfig, throttledReplicasInclude } from '../metadata/config-defs.js';
import { TokenBucket } from './rules/throttle.js';
import type { ProduceRequest, ProduceResponse, ProducePartitionResponse } from '../protocol/apis/produce.js';
import { SESSIONLESS_EPOCH, type FetchPartition, type FetchRequest, type FetchResponse, type FetchPartitionResponse } from '../protocol/apis/fetch.js';
import {
  FetchSessionCache, markSent, mustInclude, sessionWaitKey, type FetchSession, type PartitionAnswer, type SessionPartition,
} from './fetch-sessions.js';
import {
  EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP,
  type EpochEndOffsetResponse, type ListOffsetsPartitionResponse, type ListOffsetsRequest, type OffsetForLeaderEpochRequest,
} from '../protocol/apis/offsets.js';
import { DELETE_TO_HIGH_WATERMARK, type DeleteRecordsPartitionResponse, type DeleteRecordsRequest, type DeleteRecordsResponse } from '../protocol/apis/delete-records.js';
import { checkRecordBatches, decodeRecordBatch } from '../record/record-batch.js';
import { recompressBatches, topicCompression } from '../record/recompress.js';
import { Purgatory } from './delayed.js';
import type { LeaderState } from './rules/leader-state.js';
import { Partition, partitionKey } from './partition.js';
import { ReplicaFetcherManager, type FetcherOptions } from './replica-fetcher.js';
import { PRODUCER_ID_EXPIRATION_MS_DEFAULT, ProducerStateStore } from './producer-state-store.js';
import type { ProducerStateTable } from './rules/producer-state.js';
import { asBuffer } from '../util/node-bytes.js';
import { mutant } from '../util/mutants.js';

export type DurabilityMode = 'replication' | 'fsync';

export interface AlterPartitionCall {
  readonly brokerId: number;
  readonly brokerEpoch: number;
  readonly topicId: string;
  readonly partition: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  readonly newIsr: readonly number[];
}

export interface AlterPartitionAnswer {
  readonly errorCode: number;
  readonly errorMessage?: string | null;
  readonly partitionEpoch?: number;
}

export interface ReplicaManagerOptions {
  readonly brokerId: number;
  readonly logs: LogManager;
  /** Broker-wide log settings (from flags/config file), under the image's cluster and topic configs. */
  readonly brokerLogConfig: LogConfig;
  readonly clock: Clock;
  /** Timers: the ISR check, purgatory deadlines, image slices, the fsync group commit, fetcher back-offs. */
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  readonly replicaLagTimeMaxMs: number;
  readonly durability: DurabilityMode;
  readonly alterPartition: (req: AlterPartitionCall) => Promise<AlterPartitionAnswer>;
  readonly brokerEpoch: () => number;
  /** How followers reach leaders (link factory, fetch sizes). */
  readonly fetcher: Omit<FetcherOptions, 'brokerId' | 'brokerEpoch' | 'logger' | 'durability' | 'onAppended' | 'clock' | 'scheduler'>;
  /** Idle producers' state is forgotten after this long (Kafka's producer.id.expiration.ms; default one day). */
  readonly producerIdExpirationMs?: number;
}

type PartitionError = { errorCode: number; errorMessage: string | null };

/** One read of a fetch's partitions: the record bytes found, whether any partition erred, and the answer it makes. */
interface FetchRead {
  readonly bytes: number;
  readonly anyError: boolean;
  answer(): FetchResponse;
}

export type LeadershipListener = (p: Partition, leading: boolean) => void;

/** Image work per event-loop turn: about this long, and at least this many partitions. */
const APPLY_SLICE_MS = 20;
const APPLY_SLICE_ITEMS_MIN = 16;

function failure(error: ErrorInfo, message?: string): PartitionError {
  return { errorCode: error.code, errorMessage: message ? `${error.name}: ${message}` : error.message };
}

function failureOf(err: unknown): PartitionError {
  if (err instanceof SluiceError) return { errorCode: err.code, errorMessage: err.message };
  return failure(Errors.UNKNOWN_SERVER_ERROR);
}

const NONE: PartitionError = { errorCode: 0, errorMessage: null };

export class ReplicaManager {
  private readonly partitions = new Map<string, Partition>();
  private readonly producePurgatory: Purgatory;
  private readonly fetchPurgatory: Purgatory;
  /** Followers' incremental fetch sessions (KIP-227). */
  private readonly fetchSessions = new FetchSessionCache();
  private readonly fetchers: ReplicaFetcherManager;
  /** Idempotent-producer state per hosted partition (checked on produce, updated by every append). */
  private readonly producerStates: ProducerStateStore;
  private readonly unflushed = new Set<Partition>();
  /** Bytes/s sent to replicas a reassignment is adding (leader.replication.throttled.rate). */
  private readonly reassignmentThrottle: TokenBucket;
  private flushScheduled = false;
  private image: MetadataImage | null = null;
  private cancelIsrTimer: (() => void) | undefined;
  /**
   * The AlterPartition call each leader has in flight. Only that call's answer
   * may clear the pending change: an image can clear it first and a newer
   * call go out, and a late answer to the older one must not release that.
   */
  private readonly isrCallInFlight = new WeakMap<LeaderState, AlterPartitionCall>();
  private stopped = false;
  private readonly log: Logger;
  /** Partitions (topic id, index) that images changed and applyPartition has not handled yet. */
  private readonly queue: Array<{ topicId: string; index: number; name: string }> = [];
  private queueHead = 0;
  private readonly queued = new Set<string>();
  private drainScheduled = false;
  /** The topic id whose config each topic's logs were given. */
  private readonly configuredTopics = new Map<string, string>();
  /** Told when this broker starts or stops leading a partition (the group coordinator follows __consumer_offsets). */
  private readonly leadershipListeners = new Set<LeadershipListener>();

  constructor(private readonly opts: ReplicaManagerOptions) {
    this.log = opts.logger;
    this.producePurgatory = new Purgatory(opts.scheduler);
    this.fetchPurgatory = new Purgatory(opts.scheduler);
    this.reassignmentThrottle = new TokenBucket(opts.clock);
    this.producerStates = new ProducerStateStore({
      clock: opts.clock, logger: opts.logger.child({ component: 'producer-state' }),
      expirationMs: opts.producerIdExpirationMs ?? PRODUCER_ID_EXPIRATION_MS_DEFAULT,
    });
    this.fetchers = new ReplicaFetcherManager({
      ...opts.fetcher, brokerId: opts.brokerId, brokerEpoch: opts.brokerEpoch, durability: opts.durability,
      clock: opts.clock, scheduler: opts.scheduler,
      logger: opts.logger.child({ component: 'fetcher' }),
      onAppended: (p, batches) => this.producerStates.afterAppend(p, batches),
    });
  }

  start(): void {
    const intervalMs = Math.max(10, Math.floor(this.opts.replicaLagTimeMaxMs / 2));
    const tick = (): void => {
      if (this.stopped) return;
      this.cancelIsrTimer = this.opts.scheduler.schedule(intervalMs, tick);
      this.checkIsrs();
      this.producerStates.maybeExpire();
    };
    this.cancelIsrTimer = this.opts.scheduler.schedule(intervalMs, tick);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.cancelIsrTimer?.();
    this.producePurgatory.expireAll();
    this.fetchPurgatory.expireAll();
    await this.fetchers.stop();
    this.flushNow();
    this.producerStates.writeSnapshots();
  }

  /** The hosted partition (tests, describe). */
  partition(topic: string, index: number): Partition | undefined {
    return this.partitions.get(partitionKey(topic, index));
  }

  get hostedPartitions(): readonly Partition[] {
    return [...this.partitions.values()];
  }

  /** Requests waiting in each purgatory (metrics). */
  get purgatorySizes(): { produce: number; fetch: number } {
    return { produce: this.producePurgatory.size, fetch: this.fetchPurgatory.size };
  }

  /** Partitions this broker leads (metrics). */
  get leaderCount(): number {
    let n = 0;
    for (const p of this.partitions.values()) if (p.isLeader) n++;
    return n;
  }

  /** The idempotent-producer state of a hosted partition, once built (tests). */
  producerState(topic: string, index: number): ProducerStateTable | undefined {
    const p = this.partitions.get(partitionKey(topic, index));
    return p && this.producerStates.table(p);
  }

  // ---- metadata image --------------------------------------------------------

  /**
   * Applies a new metadata image: become leader/follower, stop and delete
   * replicas. The partitions it touches are queued and handled in slices of
   * about APPLY_SLICE_MS (at least APPLY_SLICE_ITEMS_MIN each), yielding to
   * the event loop in between: creating or deleting thousands of logs at
   * once would otherwise stall Raft and the heartbeats of this node for
   * seconds. Each queued partition is handled against the latest image, so a
   * partition changed twice while queued is handled once, in its latest state.
   */
  applyImage(image: MetadataImage, changes: MetadataChanges | null): void {
    if (this.stopped) return;
    this.image = image;
    const me = this.opts.brokerId;
    if (changes) {
      for (const [topicId] of changes.removedTopics) {
        for (const p of this.partitions.values()) if (p.topicId === topicId) this.enqueue(p.topicId, p.index, p.topic);
      }
      for (const topicId of changes.topics) {
        const t = image.topicsById.get(topicId);
        if (t) for (const index of t.partitions.keys()) this.enqueue(topicId, index, t.name);
      }
      for (const key of changes.configs) {
        if (key.startsWith('topic:')) this.applyTopicConfig(image, key.slice('topic:'.length));
        else for (const t of image.topicsByName.values()) this.applyTopicConfig(image, t.name);
      }
      if (changes.brokers.size > 0) this.fetchers.refreshEndpoints(image);
    } else {
      // No changes to go by (start, snapshot restore): look at everything, configs included.
      for (const t of image.topicsByName.values()) {
        this.applyTopicConfig(image, t.name);
        for (const index of t.partitions.keys()) this.enqueue(t.topicId, index, t.name);
      }
      for (const p of this.partitions.values()) {
        if (image.topicsById.get(p.topicId)?.partitions.get(p.index)?.replicas.includes(me) !== true) this.enqueue(p.topicId, p.index, p.topic);
      }
      this.fetchers.refreshEndpoints(image);
    }
    this.drainQueue();
  }

  /** Partitions queued by images and not handled yet (0 once caught up). */
  get pendingImageWork(): number {
    return this.queued.size;
  }

  private enqueue(topicId: string, index: number, name: string): void {
    const key = `${topicId}:${index}`;
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push({ topicId, index, name });
  }

  private drainQueue(): void {
    this.drainScheduled = false;
    const clock = this.opts.clock;
    const deadline = clock.monotonicMs() + APPLY_SLICE_MS;
    let handled = 0;
    while (this.queueHead < this.queue.length && !this.stopped && (handled < APPLY_SLICE_ITEMS_MIN || clock.monotonicMs() < deadline)) {
      const item = this.queue[this.queueHead++]!;
      this.queued.delete(`${item.topicId}:${item.index}`);
      this.applyPartition(item.topicId, item.index, item.name);
      handled++;
    }
    if (this.queueHead >= this.queue.length) {
      this.queue.length = 0;
      this.queueHead = 0;
    } else if (!this.drainScheduled && !this.stopped) {
      this.drainScheduled = true;
      this.opts.scheduler.schedule(0, () => this.drainQueue());
    }
  }

  /** Brings one partition in line with the latest image. */
  private applyPartition(topicId: string, index: number, name: string): void {
    const image = this.image!;
    const t = image.topicsById.get(topicId);
    const reg = t?.partitions.get(index);
    if (!t || !reg || !reg.replicas.includes(this.opts.brokerId)) {
      const hosted = this.partitions.get(partitionKey(name, index));
      if (hosted && hosted.topicId === topicId) this.removeReplica(hosted);
      return;
    }
    let p = this.partitions.get(partitionKey(t.name, index));
    if (p && p.topicId !== topicId) {
      this.removeReplica(p); // the topic was deleted and created again under the same name
      p = undefined;
    }
    if (!p) p = this.createPartition(image, t, index);
    this.applyRegistration(p, reg);
  }

  /**
   * Deletes logs on disk that the image does not assign to this broker (a
   * topic deleted while it was down). Call only once the image has caught up.
   */
  deleteStrayLogs(image: MetadataImage): number {
    let n = 0;
    for (const m of this.opts.logs.allLogs()) {
      const reg = image.partition(m.topic, m.partition);
      if (reg && (reg.replicas.includes(this.opts.brokerId) || reg.addingReplicas.includes(this.opts.brokerId))) continue;
      if (this.partitions.has(partitionKey(m.topic, m.partition))) continue;
      this.log.info({ topic: m.topic, partition: m.partition }, 'deleting stray log');
      this.opts.logs.deleteLog(m.topic, m.partition);
      n++;
    }
    return n;
  }

  private createPartition(image: MetadataImage, t: TopicImage, index: number): Partition {
    // Once per topic id (not per partition: that re-applied the config to every open log of the topic each time).
    if (this.configuredTopics.get(t.name) !== t.topicId) {
      this.opts.logs.updateTopicConfig(t.name, this.topicLogConfig(image, t.name));
      this.configuredTopics.set(t.name, t.topicId);
    }
    const log = this.opts.logs.getOrCreateLog(t.name, index);
    const p = new Partition(t.name, index, t.topicId, log, this.opts.brokerId);
    this.partitions.set(p.key, p);
    this.producerStates.open(p);
    return p;
  }

  private applyRegistration(p: Partition, reg: PartitionRegistration): void {
    const me = this.opts.brokerId;
    if (reg.leader === me) {
      if (!p.leader || p.leaderEpoch !== reg.leaderEpoch) return this.becomeLeader(p, reg);
      if (p.partitionEpoch !== reg.partitionEpoch) {
        p.setRegistration(reg);
        if (p.leader.onIsrCommitted(reg.isr, reg.replicas)) this.onHighWatermarkMoved(p);
        this.producePurgatory.poke(p.key);
      }
      return;
    }
    if (p.leader || p.leaderEpoch !== reg.leaderEpoch || p.leaderId !== reg.leader) return this.becomeFollower(p, reg);
    p.setRegistration(reg);
  }

  private becomeLeader(p: Partition, reg: PartitionRegistration): void {
    this.fetchers.removePartition(p);
    if (this.opts.durability === 'fsync') p.log.flush();
    p.makeLeader(reg, this.durableEnd(p), this.opts.clock, this.opts.replicaLagTimeMaxMs);
    this.log.info({ topic: p.topic, partition: p.index, leaderEpoch: reg.leaderEpoch, isr: reg.isr, leo: p.log.logEndOffset }, 'became leader');
    // Waiters of the previous epoch (if this broker led before) must not complete under the new one.
    this.producePurgatory.expireKey(p.key);
    this.pokeFetches(p);
    if (p.leader!.onLocalAppend(this.durableEnd(p))) this.onHighWatermarkMoved(p);
    this.notifyLeadership(p, true);
  }

  private becomeFollower(p: Partition, reg: PartitionRegistration): void {
    const wasLeader = p.isLeader;
    p.makeFollower(reg);
    this.producePurgatory.expireKey(p.key);
    this.expireFetches(p);
    if (reg.leader >= 0 && this.image) this.fetchers.addPartition(p, reg.leader, reg.leaderEpoch, this.image);
    else this.fetchers.removePartition(p);
    this.log.info({ topic: p.topic, partition: p.index, leader: reg.leader, leaderEpoch: reg.leaderEpoch, wasLeader }, 'became follower');
    if (wasLeader) this.notifyLeadership(p, false);
  }

  private removeReplica(p: Partition): void {
    const wasLeader = p.isLeader;
    this.fetchers.removePartition(p);
    p.leader = null;
    this.partitions.delete(p.key);
    this.producerStates.forget(p);
    this.unflushed.delete(p);
    this.producePurgatory.expireKey(p.key);
    this.expireFetches(p);
    this.opts.logs.deleteLog(p.topic, p.index);
    this.log.info({ topic: p.topic, partition: p.index }, 'removed replica');
    if (wasLeader) this.notifyLeadership(p, false);
  }

  // ---- leadership listeners (the group coordinator) ----------------------------

  /**
   * Calls `listener(p, true)` each time this broker becomes leader of a
   * partition (also at a new leader epoch) and `listener(p, false)` when it
   * stops leading one — after the change took effect. Returns the unsubscribe.
   */
  onLeadershipChange(listener: LeadershipListener): () => void {
    this.leadershipListeners.add(listener);
    return () => this.leadershipListeners.delete(listener);
  }

  private notifyLeadership(p: Partition, leading: boolean): void {
    for (const listener of this.leadershipListeners) {
      try {
        listener(p, leading);
      } catch (err) {
        this.log.error({ topic: p.topic, partition: p.index, err: (err as Error).message }, 'leadership listener failed');
      }
    }
  }

  private topicLogConfig(image: MetadataImage, topic: string): Partial<LogConfig> {
    const props: Record<string, string> = {};
    for (const [k, v] of image.config('cluster', '')) props[k] = v;
    for (const [k, v] of image.config('topic', topic)) props[k] = v;
    try {
      return logConfigFrom(props, this.opts.brokerLogConfig);
    } catch (err) {
      this.log.error({ topic, err: (err as Error).message }, 'ignoring invalid topic config');
      return this.opts.brokerLogConfig;
    }
  }

  private applyTopicConfig(image: MetadataImage, topic: string): void {
    if (!image.topic(topic)) return;
    this.opts.logs.updateTopicConfig(topic, this.topicLogConfig(image, topic));
  }

  private minInsyncReplicas(topic: string): number {
    const image = this.image;
    if (!image) return 1;
    return Number(effectiveTopicConfig('min.insync.replicas', image.config('topic', topic), image.config('cluster', '')));
  }

  // ---- produce ---------------------------------------------------------------

  /** Appends to the leaders' logs; with acks=all, resolves once the HW passed every batch (or the timeout). */
  produce(req: ProduceRequest): Promise<ProduceResponse> | ProduceResponse {
    const waiting: Array<{ p: Partition; leader: object; lastOffset: number; minIsr: number; out: ProducePartitionResponse }> = [];
    const response: ProduceResponse = {
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((pd) => {
          const out: ProducePartitionResponse = { partition: pd.partition, ...NONE, baseOffset: -1, logStartOffset: -1 };
          const p = this.partitions.get(partitionKey(t.name, pd.partition));
          const problem = p ? p.leaderProblem(-1) : this.unknownPartition(t.name, pd.partition);
          if (problem) return Object.assign(out, failure(problem.error, problem.message));
          const minIsr = this.minInsyncReplicas(t.name);
          if (req.acks === -1 && !p!.leader!.hasEnoughReplicas(minIsr)) {
            return Object.assign(out, failure(Errors.NOT_ENOUGH_REPLICAS, `${p!.key} has ${p!.leader!.isr.length} in-sync replicas, min.insync.replicas is ${minIsr}`));
          }
          try {
            // Nothing is stored that a consumer could not decode: a CRC only
            // proves the bytes are what the producer sent (found by the fuzz test).
            checkRecordBatches(pd.records);
            // Idempotence: a retried batch already in the log is answered with its original offsets, not appended again.
            const idem = this.producerStates.checkProduce(p!, pd.records);
            if (idem.kind === 'duplicate' && !mutant('idempotent-duplicate-append')) {
              out.baseOffset = idem.firstOffset;
              out.logStartOffset = p!.log.logStartOffset;
              if (req.acks === -1) waiting.push({ p: p!, leader: p!.leader!, lastOffset: idem.lastOffset, minIsr, out });
              return out;
            }
            const records = this.storedForm(t.name, pd.records);
            // One CRC per append: checkRecordBatches verified it on pd.records, and
            // a recompressed buffer's CRCs were just computed by its encoder.
            const info = p!.log.append(records, { leaderEpoch: p!.leaderEpoch, crcChecked: true });
            out.baseOffset = info.baseOffset;
            out.logStartOffset = info.logStartOffset;
            this.afterLeaderAppend(p!);
            if (req.acks === -1) waiting.push({ p: p!, leader: p!.leader!, lastOffset: info.lastOffset, minIsr, out });
            // Last: should it fail, the batch is in the log and the table, behind it, is rebuilt at the next check.
            this.producerStates.afterAppend(p!, records);
          } catch (err) {
            Object.assign(out, failureOf(err));
          }
          return out;
        }),
      })),
    };
    if (waiting.length === 0) return response;
    return new Promise((resolve) => {
      const settle = (timedOut: boolean): boolean => {
        let done = true;
        for (const w of waiting) {
          if (w.out.errorCode !== 0) continue;
          if (w.p.leader !== w.leader) {
            Object.assign(w.out, failure(Errors.NOT_LEADER_OR_FOLLOWER, `leadership of ${w.p.key} moved while waiting for replication`));
            continue;
          }
          const state = w.p.leader!.ackState(w.lastOffset, w.minIsr);
          if (state === 'ok') continue;
          if (state === 'notEnoughReplicasAfterAppend') {
            Object.assign(w.out, failure(Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, `${w.p.key}: the ISR shrank below min.insync.replicas=${w.minIsr}`));
            continue;
          }
          if (timedOut) Object.assign(w.out, failure(Errors.REQUEST_TIMED_OUT, `${w.p.key}: not replicated to the ISR within ${req.timeoutMs} ms`));
          else done = false;
        }
        if (done || timedOut) resolve(response);
        return done;
      };
      if (settle(false)) return;
      this.producePurgatory.watch(waiting.map((w) => w.p.key), { check: () => settle(false), expire: () => void settle(true) }, req.timeoutMs);
    });
  }

  /** The batches as the topic's compression.type stores them (recompress.ts): the same buffer for 'producer'. */
  private storedForm(topic: string, records: Buffer): Buffer {
    const image = this.image;
    if (!image) return records;
    const target = topicCompression(effectiveTopicConfig('compression.type', image.config('topic', topic), image.config('cluster', '')));
    return target === null ? records : asBuffer(recompressBatches(records, target));
  }

  private unknownPartition(topic: string, index: number): { error: ErrorInfo; message: string } {
    const reg = this.image?.partition(topic, index);
    if (!reg) return { error: Errors.UNKNOWN_TOPIC_OR_PARTITION, message: `no partition ${topic}-${index}` };
    return { error: Errors.NOT_LEADER_OR_FOLLOWER, message: `broker ${this.opts.brokerId} does not host ${topic}-${index} (leader: ${reg.leader})` };
  }

  private durableEnd(p: Partition): number {
    return this.opts.durability === 'fsync' ? p.log.recoveryPoint : p.log.logEndOffset;
  }

  /**
   * New data in `p`: waiting fetches of it — consumers' and sessionless ones
   * by its key, followers' sessions holding it by their own key — are checked.
   */
  private pokeFetches(p: Partition): void {
    this.fetchPurgatory.poke(p.key);
    for (const session of this.fetchSessions.sessionsOf(p.key)) this.fetchPurgatory.poke(sessionWaitKey(session));
  }

  /** `p` changed hands: its waiting fetches answer now (sessions with this partition's error in them). */
  private expireFetches(p: Partition): void {
    this.fetchPurgatory.expireKey(p.key);
    for (const session of [...this.fetchSessions.sessionsOf(p.key)]) this.fetchPurgatory.expireKey(sessionWaitKey(session));
  }

  private afterLeaderAppend(p: Partition): void {
    this.pokeFetches(p);
    if (this.opts.durability === 'fsync') {
      this.unflushed.add(p);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        this.opts.scheduler.schedule(0, () => this.flushNow());
      }
      return;
    }
    if (p.leader!.onLocalAppend(p.log.logEndOffset)) this.onHighWatermarkMoved(p);
  }

  /** Group commit: one fsync pass over every leader log appended to since the last pass. */
  private flushNow(): void {
    this.flushScheduled = false;
    const batch = [...this.unflushed];
    this.unflushed.clear();
    for (const p of batch) {
      try {
        p.log.flushData();
      } catch (err) {
        this.log.error({ topic: p.topic, partition: p.index, err: (err as Error).message }, 'flush failed');
        continue;
      }
      if (p.leader && p.leader.onLocalAppend(p.log.recoveryPoint)) this.onHighWatermarkMoved(p);
    }
  }

  private onHighWatermarkMoved(p: Partition): void {
    if (!p.leader) return;
    p.log.updateHighWatermark(p.leader.highWatermark);
    this.producePurgatory.poke(p.key);
    this.fetchPurgatory.poke(p.key);
  }

  // ---- fetch -----------------------------------------------------------------

  fetch(req: FetchRequest, isClosed: () => boolean): Promise<FetchResponse> | FetchResponse {
    const replicaId = req.replicaId;
    // A replica fetch moves the high watermark, so it must come from the
    // broker's current registration (its broker epoch), not from any client
    // that names a follower's id (found by the bad-input tests).
    if (replicaId >= 0) {
      const reg = this.image?.brokers.get(replicaId);
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

  /**
   * Waits for `ready(read())` — re-read whenever one of `keys` is poked —
   * and answers with that read; at the deadline with a read of that moment;
   * with `first` once the connection or the broker goes away.
   */
  private longPoll(keys: readonly string[], first: FetchRead, read: () => FetchRead, ready: (r: FetchRead) => boolean, maxWaitMs: number, isClosed: () => boolean): Promise<FetchResponse> {
    return new Promise((resolve) => {
      const check = (): boolean => {
        if (isClosed() || this.stopped) {
          resolve(first.answer());
          return true;
        }
        const again = read();
        if (!ready(again)) return false;
        resolve(again.answer());
        return true;
      };
      this.fetchPurgatory.watch(keys, { check, expire: () => resolve(read().answer()) }, maxWaitMs);
    });
  }

  /** Whether partition `key` can serve `fp` here; a follower's fetch of it is recorded (its LEO, the ISR rules). */
  private servable(key: string, replicaId: number, fp: FetchPartition): boolean {
    const p = this.partitions.get(key);
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
    const applied = this.fetchSessions.apply(req, this.opts.clock.monotonicMs());
    if ('error' in applied) throw new SluiceError(applied.error, applied.message);
    const session = applied.session;
    const parts = session.ordered();
    let anyError = false;
    for (const sp of parts) if (!this.servable(sp.key, req.replicaId, sp)) anyError = true;
    const first = this.readSession(session, parts, req);
    const minBytes = Math.max(1, req.minBytes);
    if (anyError || first.anyError || req.maxWaitMs === 0 || first.bytes >= minBytes) return first.answer();
    // Watched under the session's own key: appends to any of its partitions wake it (pokeFetches), and an
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
      const out = this.readOne(sp.topic, sp, req.replicaId, remaining);
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
    const p = this.partitions.get(sp.key);
    if (!p || !p.leader || (sp.currentLeaderEpoch >= 0 && sp.currentLeaderEpoch !== p.leaderEpoch)) return false;
    const log = p.log;
    return sp.fetchOffset === log.logEndOffset && sp.sentHighWatermark === log.highWatermark && sp.sentLogStartOffset === log.logStartOffset;
  }

  private recordFollowerFetch(p: Partition, replicaId: number, fp: FetchPartition): void {
    const leader = p.leader!;
    if (fp.currentLeaderEpoch !== p.leaderEpoch || fp.fetchOffset > p.log.logEndOffset) return;
    // In fsync mode the follower's fetch offset is durable there (it flushes
    // before fetching); the leader counts its own end only once flushed.
    if (leader.onFollowerFetch(replicaId, fp.fetchOffset)) this.onHighWatermarkMoved(p);
    if (!leader.isr.includes(replicaId)) this.maybeChangeIsr(p);
  }

  private readAll(req: FetchRequest): FetchRead {
    let remaining = req.maxBytes;
    let bytes = 0;
    let anyError = false;
    const topics = req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((fp) => {
        const out = this.readOne(t.name, fp, req.replicaId, remaining);
        bytes += out.records.length;
        remaining -= out.records.length;
        if (out.errorCode !== 0) anyError = true;
        return out;
      }),
    }));
    const response: FetchResponse = { errorCode: 0, topics };
    return { bytes, anyError, answer: () => response };
  }


  private readOne(topic: string, fp: FetchPartition, replicaId: number, remainingBytes: number): FetchPartitionResponse {
    const out: FetchPartitionResponse = { partition: fp.partition, ...NONE, highWatermark: -1, logStartOffset: -1, records: EMPTY };
    const p = this.partitions.get(partitionKey(topic, fp.partition));
    const problem = p ? p.leaderProblem(fp.currentLeaderEpoch) : this.unknownPartition(topic, fp.partition);
    if (problem) return Object.assign(out, failure(problem.error, problem.message));
    const log = p!.log;
    out.highWatermark = log.highWatermark;
    out.logStartOffset = log.logStartOffset;
    if (replicaId >= 0) out.logEndOffset = log.logEndOffset;
    if (remainingBytes <= 0) return out;
    // Reassignment traffic (to a replica being added, or to an out-of-sync
    // follower of a replica the topic lists in leader.replication.throttled.replicas,
    // as Kafka's reassignment tool sets it) is throttled when the cluster sets a rate.
    const rate = replicaId >= 0 && this.throttled(p!, topic, replicaId) ? this.throttleRate() : -1;
    const allowed = rate > 0 ? this.reassignmentThrottle.available(rate) : Infinity;
    if (allowed <= 0) return out;
    try {
      const limit = replicaId >= 0 ? log.logEndOffset : log.highWatermark;
      const r = log.read(fp.fetchOffset, Math.min(fp.partitionMaxBytes, remainingBytes, allowed), { maxOffset: limit });
      out.records = r.records;
      if (rate > 0) this.reassignmentThrottle.take(r.records.length);
    } catch (err) {
      Object.assign(out, failureOf(err));
    }
    return out;
  }

  private throttled(p: Partition, topic: string, replicaId: number): boolean {
    if (p.addingReplicas.includes(replicaId)) return true;
    const list = this.image?.config('topic', topic).get('leader.replication.throttled.replicas');
    return list !== undefined && !p.isr.includes(replicaId) && throttledReplicasInclude(list, p.index, this.opts.brokerId);
  }

  private throttleRate(): number {
    const image = this.image;
    return image ? Number(effectiveBrokerConfig('leader.replication.throttled.rate', image.config('cluster', ''))) : -1;
  }

  // ---- offsets ---------------------------------------------------------------

  listOffsets(req: ListOffsetsRequest): { topics: Array<{ name: string; partitions: ListOffsetsPartitionResponse[] }> } {
    return {
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((q) => {
          const out: ListOffsetsPartitionResponse = { partition: q.partition, ...NONE, timestamp: -1, offset: -1, leaderEpoch: -1 };
          const p = this.partitions.get(partitionKey(t.name, q.partition));
          const problem = p ? p.leaderProblem(q.currentLeaderEpoch) : this.unknownPartition(t.name, q.partition);
          if (problem) return Object.assign(out, failure(problem.error, problem.message));
          const log = p!.log;
          out.leaderEpoch = p!.leaderEpoch;
          const visibleEnd = req.replicaId >= 0 ? log.logEndOffset : log.highWatermark;
          if (q.timestamp === LATEST_TIMESTAMP) out.offset = visibleEnd;
          else if (q.timestamp === EARLIEST_TIMESTAMP) out.offset = log.logStartOffset;
          else if (q.timestamp < 0 && q.timestamp !== MAX_TIMESTAMP) return Object.assign(out, failure(Errors.INVALID_REQUEST, `timestamp ${q.timestamp} is neither -1, -2, -3 nor a time`));
          else {
            // These two decode one stored batch; a failure there (a disk error) is this partition's answer.
            try {
              Object.assign(out, q.timestamp === MAX_TIMESTAMP ? maxTimestampRecord(log, visibleEnd) : recordAtTime(log, q.timestamp, visibleEnd));
            } catch (err) {
              return Object.assign(out, failureOf(err), { offset: -1, timestamp: -1 });
            }
          }
          return out;
        }),
      })),
    };
  }

  offsetForLeaderEpoch(req: OffsetForLeaderEpochRequest): { topics: Array<{ name: string; partitions: EpochEndOffsetResponse[] }> } {
    return {
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((q) => {
          const out: EpochEndOffsetResponse = { partition: q.partition, ...NONE, leaderEpoch: -1, endOffset: -1 };
          const p = this.partitions.get(partitionKey(t.name, q.partition));
          const problem = p ? p.leaderProblem(q.currentLeaderEpoch) : this.unknownPartition(t.name, q.partition);
          if (problem) return Object.assign(out, failure(problem.error, problem.message));
          const r = p!.log.endOffsetForEpoch(q.leaderEpoch);
          out.leaderEpoch = r.epoch;
          out.endOffset = r.endOffset;
          return out;
        }),
      })),
    };
  }

  // ---- DeleteRecords -------------------------------------------------------

  /**
   * Moves the leaders' log start offsets up (DeleteRecords). The log deletes
   * the segments wholly below the new start; followers learn it from the
   * logStartOffset of their next fetch answer (waiting fetches are woken so
   * they hear at once), and the start offsets are checkpointed before the
   * answer so a restart does not bring the deleted records back.
   */
  deleteRecords(req: DeleteRecordsRequest): DeleteRecordsResponse {
    let moved = false;
    const topics = req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((q): DeleteRecordsPartitionResponse => {
        const out: DeleteRecordsPartitionResponse = { partition: q.partition, ...NONE, lowWatermark: -1 };
        const p = this.partitions.get(partitionKey(t.name, q.partition));
        const problem = p ? p.leaderProblem(-1) : this.unknownPartition(t.name, q.partition);
        if (problem) return Object.assign(out, failure(problem.error, problem.message));
        const log = p!.log;
        const target = q.offset === DELETE_TO_HIGH_WATERMARK ? log.highWatermark : q.offset;
        if (target < 0 || target > log.highWatermark) {
          return Object.assign(out, failure(Errors.OFFSET_OUT_OF_RANGE, `offset ${q.offset} of ${p!.key} is outside [0, high watermark ${log.highWatermark}]`));
        }
        try {
          const before = log.logStartOffset;
          log.advanceLogStartOffset(target);
          if (log.logStartOffset !== before) {
            moved = true;
            this.pokeFetches(p!);
          }
        } catch (err) {
          return Object.assign(out, failureOf(err));
        }
        out.lowWatermark = log.logStartOffset;
        return out;
      }),
    }));
    if (moved) this.opts.logs.checkpointLogStartOffsets();
    return { topics };
  }

  // ---- ISR changes -----------------------------------------------------------

  private checkIsrs(): void {
    for (const p of this.partitions.values()) if (p.leader) this.maybeChangeIsr(p);
  }

  private maybeChangeIsr(p: Partition): void {
    const leader = p.leader;
    if (!leader || this.stopped) return;
    const change = leader.isrChangeToRequest();
    if (!change) return;
    leader.markIsrChangePending(change.newIsr);
    const sentEpoch = p.partitionEpoch;
    this.log.info({ topic: p.topic, partition: p.index, reason: change.reason, brokers: change.brokers, newIsr: change.newIsr }, 'asking the controller to change the ISR');
    const call: AlterPartitionCall = {
      brokerId: this.opts.brokerId, brokerEpoch: this.opts.brokerEpoch(), topicId: p.topicId, partition: p.index,
      leaderEpoch: p.leaderEpoch, partitionEpoch: sentEpoch, newIsr: change.newIsr,
    };
    this.isrCallInFlight.set(leader, call);
    const settle = (why: string | null): void => {
      if (p.leader !== leader || this.isrCallInFlight.get(leader) !== call || !leader.hasPendingIsrChange) return;
      if (why) this.log.warn({ topic: p.topic, partition: p.index, why }, 'ISR change not accepted');
      leader.clearPendingIsrChange();
    };
    this.opts.alterPartition(call).then(
      (res) => {
        if (res.errorCode !== 0) settle(res.errorMessage ?? `error ${res.errorCode}`);
        else if (res.partitionEpoch === sentEpoch || p.partitionEpoch !== sentEpoch) settle(null);
        // else: committed; the image carrying it calls onIsrCommitted.
      },
      (err: Error) => settle(err.message),
    );
  }
}

const EMPTY = new Uint8Array(0);

/**
 * The offset and timestamp of the first record whose timestamp is >= `timestamp`
 * (as Kafka answers a ListOffsets by time: the record's own timestamp, not the
 * one asked for), if it is below `visibleEnd`; else -1/-1. The time index
 * finds the batch; that batch is decoded for the record.
 */
function recordAtTime(log: Partition['log'], timestamp: number, visibleEnd: number): { offset: number; timestamp: number } {
  const none = { offset: -1, timestamp: -1 };
  const found = log.offsetForTimestamp(timestamp);
  if (found === null || found >= visibleEnd) return none;
  const batch = decodeRecordBatch(log.read(found, 1).records, 0);
  const record = batch.records.find((r) => r.offset >= found && r.timestamp >= timestamp);
  if (!record || record.offset >= visibleEnd) return none;
  return { offset: record.offset, timestamp: record.timestamp };
}

/**
 * The offset and timestamp of the first record carrying the log's largest
 * timestamp, if it is below `visibleEnd` (else -1/-1, as Kafka answers it).
 * Only this lookup decodes a batch: the segments know which batch, not which record.
 */
function maxTimestampRecord(log: Partition['log'], visibleEnd: number): { offset: number; timestamp: number } {
  const none = { offset: -1, timestamp: -1 };
  const hit = log.maxTimestampBatch();
  if (!hit || hit.baseOffset >= visibleEnd) return none;
  const batch = decodeRecordBatch(log.read(hit.baseOffset, 1).records, 0);
  const record = batch.records.find((r) => r.timestamp >= hit.timestamp) ?? batch.records[batch.records.length - 1];
  if (!record || record.offset >= visibleEnd) return none;
  return { offset: Math.max(record.offset, log.logStartOffset), timestamp: hit.timestamp };
}

/** The replica manager's operations the request layers of both protocols call (access-control.ts guards them). */
export type ReplicaOps = Pick<ReplicaManager, 'produce' | 'fetch' | 'listOffsets' | 'offsetForLeaderEpoch' | 'deleteRecords'>;
