// The replica manager (Kafka's ReplicaManager): the partitions this broker
// hosts, and the data-plane operations on them. It composes parts with one
// job each and owns only their wiring and the lifecycle (start, stop):
//
//   hosted-partitions.ts  the hosted partitions and the image they follow
//   image-applier.ts      metadata images → become leader / follower, remove
//                         replica, topic configs (every role transition)
//   produce-handler.ts    produce; acks=all waits as a DelayedProduce
//   fetch-handler.ts      fetch: sessionless and session reads, long poll
//                         (DelayedFetch), reassignment throttle
//   offset-queries.ts     ListOffsets, OffsetForLeaderEpoch, DeleteRecords
//   isr-requests.ts       the AlterPartition calls in flight
//   replica-fetcher.ts    followers pulling from leaders
//   partition.ts          one partition: ISR, acks, HW (stored once, in the log)
//   producer-state-store  idempotent and transactional producer state, the LSO
//
// Transactions: produce verifies transactional writes with the injected
// TxnVerifier (KIP-890), writeTxnMarkers appends the coordinator's markers,
// and onTxnMarker listeners hear of each marker once committed here.
//
// Time is injected: the ISR check timer, purgatory deadlines, image slices,
// the fsync group commit and the fetchers' back-offs all run on the
// Scheduler and read the Clock they are given.

import '../node.js'; // Node runtime: native CRC32C, every codec, Buffer bytes
import type { Clock, Scheduler } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { LogManager } from '../storage/log-manager.js';
import type { LogConfig } from '../storage/log-config.js';
import type { MetadataImage } from '../metadata/image.js';
import type { MetadataChanges } from '../metadata/delta.js';
import type { ProduceRequest, ProduceResponse } from '../protocol/apis/produce.js';
import type { FetchRequest, FetchResponse } from '../protocol/apis/fetch.js';
import type { EpochEndOffsetResponse, ListOffsetsPartitionResponse, ListOffsetsRequest, OffsetForLeaderEpochRequest } from '../protocol/apis/offsets.js';
import type { DeleteRecordsRequest, DeleteRecordsResponse } from '../protocol/apis/delete-records.js';
import { HostedPartitions } from './hosted-partitions.js';
import { ImageApplier, type LeadershipListener } from './image-applier.js';
import { ProduceHandler, type DurabilityMode, type ProduceOrigin } from './produce-handler.js';
import type { WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../protocol/apis/transactions.js';
import type { TxnMarkerApplied, TxnVerifier } from './txn-seams.js';
import { FetchHandler } from './fetch-handler.js';
import { OffsetQueries } from './offset-queries.js';
import { IsrRequests, type AlterPartitionAnswer, type AlterPartitionCall } from './isr-requests.js';
import type { Partition } from './partition.js';
import { ReplicaFetcherManager, type FetcherOptions } from './replica-fetcher.js';
import { PRODUCER_ID_EXPIRATION_MS_DEFAULT, ProducerStateStore } from './producer-state-store.js';
import type { ProducerStateTable } from './rules/producer-state.js';

export type { AlterPartitionAnswer, AlterPartitionCall } from './isr-requests.js';
export type { DurabilityMode, ProduceOrigin } from './produce-handler.js';
export type { TxnMarkerApplied, TxnVerifier } from './txn-seams.js';

/** Kafka's request.timeout.ms default: how long WriteTxnMarkers waits for its markers to replicate. */
export const TXN_MARKER_TIMEOUT_MS_DEFAULT = 30_000;
export type { LeadershipListener } from './image-applier.js';

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
  /**
   * The transaction coordinator a leader asks before a producer's first
   * transactional write to a partition (KIP-890). A getter may return it
   * once constructed (the coordinator is built after the replica manager).
   * None: transactional writes are appended unverified.
   */
  readonly txnVerifier?: TxnVerifier | (() => TxnVerifier | undefined);
  /** How long WriteTxnMarkers waits for its markers to reach the ISR (default TXN_MARKER_TIMEOUT_MS_DEFAULT). */
  readonly txnMarkerTimeoutMs?: number;
}

export type TxnMarkerListener = (m: TxnMarkerApplied) => void;

export class ReplicaManager {
  private readonly hosted: HostedPartitions;
  private readonly fetchers: ReplicaFetcherManager;
  /** Idempotent-producer state per hosted partition (checked on produce, updated by every append). */
  private readonly producerStates: ProducerStateStore;
  private readonly applier: ImageApplier;
  private readonly producer: ProduceHandler;
  private readonly fetcher: FetchHandler;
  private readonly offsets: OffsetQueries;
  private readonly isrRequests: IsrRequests;
  private cancelIsrTimer: (() => void) | undefined;
  private readonly markerListeners = new Set<TxnMarkerListener>();

  constructor(private readonly opts: ReplicaManagerOptions) {
    const hosted = (this.hosted = new HostedPartitions(opts.brokerId));
    const logger = opts.logger;
    this.producerStates = new ProducerStateStore({
      clock: opts.clock, logger: logger.child({ component: 'producer-state' }),
      expirationMs: opts.producerIdExpirationMs ?? PRODUCER_ID_EXPIRATION_MS_DEFAULT,
    });
    this.fetchers = new ReplicaFetcherManager({
      ...opts.fetcher, brokerId: opts.brokerId, brokerEpoch: opts.brokerEpoch, durability: opts.durability,
      clock: opts.clock, scheduler: opts.scheduler, logger: logger.child({ component: 'fetcher' }),
      onAppended: (p, batches) => this.producerStates.afterAppend(p, batches),
    });
    this.isrRequests = new IsrRequests({ brokerId: opts.brokerId, brokerEpoch: opts.brokerEpoch, hosted, logger, alterPartition: opts.alterPartition });
    const highWatermarkMoved = (p: Partition): void => {
      this.producer.wake(p);
      this.fetcher.wakeOnHighWatermark(p);
    };
    this.producer = new ProduceHandler({
      hosted, scheduler: opts.scheduler, logger, durability: opts.durability, producerStates: this.producerStates,
      onHighWatermarkMoved: highWatermarkMoved, onAppended: (p) => this.fetcher.wake(p),
      txnVerifier: () => (typeof opts.txnVerifier === 'function' ? opts.txnVerifier() : opts.txnVerifier),
      onMarkerCommitted: (m) => this.tellMarker(m),
    });
    this.fetcher = new FetchHandler({
      hosted, clock: opts.clock, scheduler: opts.scheduler, producerStates: this.producerStates,
      onHighWatermarkMoved: highWatermarkMoved, onFollowerOutsideIsr: (p) => this.isrRequests.maybeRequest(p),
    });
    this.offsets = new OffsetQueries({ hosted, logs: opts.logs, producerStates: this.producerStates, onLogStartMoved: (p) => this.fetcher.wake(p) });
    this.applier = new ImageApplier({
      brokerId: opts.brokerId, logs: opts.logs, brokerLogConfig: opts.brokerLogConfig, clock: opts.clock, scheduler: opts.scheduler,
      logger, replicaLagTimeMaxMs: opts.replicaLagTimeMaxMs, hosted, fetchers: this.fetchers, producerStates: this.producerStates,
      effects: {
        highWatermarkMoved,
        registrationChanged: (p) => this.producer.wake(p),
        answerProducesNow: (p) => this.producer.answerNow(p),
        answerFetchesNow: (p) => this.fetcher.answerNow(p),
        wakeFetches: (p) => this.fetcher.wake(p),
        durableEnd: (p) => this.producer.durableEnd(p),
        flushForLeadership: (p) => this.producer.flushForLeadership(p),
        forget: (p) => this.producer.forget(p),
      },
    });
  }

  /** Starts the ISR check (every half replica.lag.time.max.ms), which also expires idle producers' state. */
  start(): void {
    const intervalMs = Math.max(10, Math.floor(this.opts.replicaLagTimeMaxMs / 2));
    const tick = (): void => {
      if (this.hosted.stopped) return;
      this.cancelIsrTimer = this.opts.scheduler.schedule(intervalMs, tick);
      this.isrRequests.checkAll();
      this.producerStates.maybeExpire();
    };
    this.cancelIsrTimer = this.opts.scheduler.schedule(intervalMs, tick);
  }

  async stop(): Promise<void> {
    if (this.hosted.stopped) return;
    this.hosted.stopped = true;
    this.cancelIsrTimer?.();
    this.producer.answerAll();
    this.fetcher.answerAll();
    await this.fetchers.stop();
    this.producer.flushNow();
    this.producerStates.writeSnapshots();
  }

  /** The hosted partition (tests, describe). */
  partition(topic: string, index: number): Partition | undefined {
    return this.hosted.find(topic, index);
  }

  get hostedPartitions(): readonly Partition[] {
    return [...this.hosted.values()];
  }

  /** Requests waiting in each purgatory (metrics). */
  get purgatorySizes(): { produce: number; fetch: number } {
    return { produce: this.producer.waiting, fetch: this.fetcher.waiting };
  }

  /** Partitions this broker leads (metrics). */
  get leaderCount(): number {
    let n = 0;
    for (const p of this.hosted.values()) if (p.isLeader) n++;
    return n;
  }

  /** The idempotent-producer state of a hosted partition, once built (tests). */
  producerState(topic: string, index: number): ProducerStateTable | undefined {
    const p = this.hosted.find(topic, index);
    return p && this.producerStates.table(p);
  }

  // ---- metadata image (image-applier.ts) ---------------------------------------

  /** Applies a new metadata image: become leader/follower, stop and delete replicas, topic configs. */
  applyImage(image: MetadataImage, changes: MetadataChanges | null): void {
    this.applier.applyImage(image, changes);
  }

  /** Partitions queued by images and not handled yet (0 once caught up). */
  get pendingImageWork(): number {
    return this.applier.pendingImageWork;
  }

  /** Deletes logs on disk that the image does not assign to this broker. Call only once the image has caught up. */
  deleteStrayLogs(image: MetadataImage): number {
    return this.applier.deleteStrayLogs(image);
  }

  /** Told when this broker starts (also at a new epoch) or stops leading a partition; returns the unsubscribe. */
  onLeadershipChange(listener: LeadershipListener): () => void {
    return this.applier.onLeadershipChange(listener);
  }

  // ---- the request paths ---------------------------------------------------------

  /**
   * Appends to the leaders' logs; with acks=all, resolves once the HW passed
   * every batch (or the timeout). `origin` 'coordinator': a coordinator of
   * this broker writing transactional batches with base sequence -1
   * (TxnOffsetCommit), not verified with the transaction coordinator.
   */
  produce(req: ProduceRequest, origin: ProduceOrigin = 'client'): Promise<ProduceResponse> | ProduceResponse {
    return this.producer.produce(req, origin);
  }

  /**
   * The transaction coordinator's COMMIT/ABORT markers (WriteTxnMarkers):
   * appended on the partitions this broker leads, each answered once in the
   * ISR (acks=all), with per-partition errors (NOT_LEADER_OR_FOLLOWER,
   * NOT_ENOUGH_REPLICAS, INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED,
   * REQUEST_TIMED_OUT, ...). The coordinator retries what failed.
   */
  writeTxnMarkers(req: WriteTxnMarkersRequest): Promise<WriteTxnMarkersResponse> | WriteTxnMarkersResponse {
    return this.producer.writeTxnMarkers(req, this.opts.txnMarkerTimeoutMs ?? TXN_MARKER_TIMEOUT_MS_DEFAULT, this.opts.clock.nowMs());
  }

  /** Told of every marker committed (the HW passed it) on a partition this broker leads; returns the unsubscribe. */
  onTxnMarker(listener: TxnMarkerListener): () => void {
    this.markerListeners.add(listener);
    return () => this.markerListeners.delete(listener);
  }

  /** The last stable offset of a hosted partition (min(first open transaction, HW)); undefined if not hosted. */
  lastStableOffset(topic: string, index: number): number | undefined {
    const p = this.hosted.find(topic, index);
    return p && this.producerStates.lastStableOffset(p);
  }

  private tellMarker(m: TxnMarkerApplied): void {
    for (const listener of [...this.markerListeners]) {
      try {
        listener(m);
      } catch (err) {
        this.opts.logger.error({ topic: m.topic, partition: m.partition, err: (err as Error).message }, 'transaction marker listener failed');
      }
    }
  }

  fetch(req: FetchRequest, isClosed: () => boolean): Promise<FetchResponse> | FetchResponse {
    return this.fetcher.fetch(req, isClosed);
  }

  listOffsets(req: ListOffsetsRequest): { topics: Array<{ name: string; partitions: ListOffsetsPartitionResponse[] }> } {
    return this.offsets.listOffsets(req);
  }

  offsetForLeaderEpoch(req: OffsetForLeaderEpochRequest): { topics: Array<{ name: string; partitions: EpochEndOffsetResponse[] }> } {
    return this.offsets.offsetForLeaderEpoch(req);
  }

  deleteRecords(req: DeleteRecordsRequest): DeleteRecordsResponse {
    return this.offsets.deleteRecords(req);
  }
}

/** The replica manager's operations the request layers of both protocols call (access-control.ts guards them). */
export type ReplicaOps = Pick<ReplicaManager, 'produce' | 'fetch' | 'listOffsets' | 'offsetForLeaderEpoch' | 'deleteRecords'>;
