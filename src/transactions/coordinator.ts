// The transaction coordinator of one broker (Kafka's TransactionCoordinator
// and TransactionStateManager): the shell around the pure decisions
// (state-machine.ts). It owns the durable state in __transaction_state, the
// writes in flight, the marker writes and the timers.
//
// - Placement: a transactional id lives on partition abs(hash(id)) mod N of
//   __transaction_state (the group coordinator's placement); this broker
//   coordinates the ids of the partitions it leads. The topic is created on
//   the first FindCoordinator for a transactional id.
// - Shards: one per __transaction_state partition this broker leads, loaded
//   when it becomes leader (COORDINATOR_LOAD_IN_PROGRESS meanwhile) and
//   dropped when it stops (NOT_COORDINATOR). The partition's leader epoch is
//   the coordinator epoch its markers carry.
// - Writes: every transition is one keyed record appended with acks=all; the
//   in-memory state changes and the request is answered only once it is
//   replicated. One write per id at a time: a request for an id with a write
//   in flight, or whose markers are being written (Prepare*), answers
//   CONCURRENT_TRANSACTIONS (retriable).
// - Completion: after Prepare* is durable (EndTxn, a timeout, an
//   InitProducerId over an open transaction, or a load that finds one) the
//   markers go to every partition's leader (markers.ts), then Complete* is
//   written. A new coordinator that loads a Prepare* finishes it the same way,
//   so a coordinator move never leaves a transaction hanging.
// - Timeouts: every transaction.abort.timed.out.transaction.cleanup.interval.ms
//   the shards are scanned: an Ongoing transaction past its timeout is aborted
//   with an epoch bump (its producer is fenced); an id idle past
//   transactional.id.expiration.ms gets a tombstone.
//
// Invariant: a shard's in-memory state of an id is what its log says, less
// writes not yet acknowledged (a write that failed may still be in the log; a
// reload would show it, as in Kafka).

import '../node.js'; // Node runtime: native CRC32C, every codec, Buffer bytes
import { Errors, type ErrorInfo } from '../util/errors.js';
import type { Clock, Scheduler } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { Rng } from '../util/rng.js';
import type { MetadataImage } from '../metadata/image.js';
import { effectiveBrokerConfig } from '../metadata/config-defs.js';
import type { ReplicaManager } from '../replication/replica-manager.js';
import type { Partition } from '../replication/partition.js';
import { BROKER_ENDPOINT } from '../replication/replica-fetcher.js';
import { encodeRecordBatch } from '../record/record-batch.js';
import { asBuffer } from '../util/node-bytes.js';
import { CONSUMER_OFFSETS_TOPIC, type FindCoordinatorRequest, type FindCoordinatorResponse, type InitProducerIdRequest } from '../protocol/apis/groups.js';
import {
  TRANSACTION_STATE_NAMES, TRANSACTION_STATE_TOPIC, TRANSACTIONAL_ID_LENGTH_MAX, TRANSACTION_TIMEOUT_MS_DEFAULT,
  type AddOffsetsToTxnRequest, type AddOffsetsToTxnResponse, type AddPartitionsToTxnRequest, type AddPartitionsToTxnResponse,
  type DescribeTransactionsRequest, type DescribeTransactionsResponse, type DescribedTransaction, type EndTxnRequest, type EndTxnResponse,
  type InitProducerIdTxnResponse, type ListTransactionsRequest, type ListTransactionsResponse, type TopicResults, type TransactionOps,
} from '../protocol/apis/transactions.js';
import { appendErrorFor, type ControllerCall } from '../groups/coordinator.js';
import { coordinatorPartition } from '../groups/placement.js';
import { TRANSACTION_TOPIC_CONFIGS, TXN_COORDINATOR_DEFAULTS, type TxnCoordinatorLimits } from './defaults.js';
import { loadTransactionPartition } from './loader.js';
import { writeMarkers, type MarkerChannel } from './markers.js';
import { txnKey, txnValue } from './records.js';
import {
  completeTransition, decideAddPartitions, decideEnd, decideInit, expireTransition, isIdExpired, isRefusal, verifyPartition,
  type Decision, type Refusal, type TxnMetadata, type TxnPartition,
} from './state-machine.js';

/** Where fresh producer ids come from (the broker's ProducerIdManager: blocks from the controller). */
export interface ProducerIdSource {
  nextProducerId(): Promise<number>;
}

export interface TransactionCoordinatorOptions {
  readonly brokerId: number;
  readonly replicas: ReplicaManager;
  readonly image: () => MetadataImage;
  /** The active controller, for creating __transaction_state. */
  readonly admin: ControllerCall;
  readonly producerIds: ProducerIdSource;
  /** Where markers go (markers.ts: local replica manager or WriteTxnMarkers to another broker). */
  readonly markers: MarkerChannel;
  readonly clock: Clock;
  /** The abort scan, the loader's steps, marker and completion back-offs. */
  readonly scheduler: Scheduler;
  readonly rng: Rng;
  readonly logger: Logger;
  readonly limits?: Partial<TxnCoordinatorLimits>;
  /** Creates __consumer_offsets when AddOffsetsToTxn names a group before it exists (the group coordinator's). */
  readonly ensureOffsetsTopic?: () => void;
}

interface TxnEntry {
  /** undefined while the id's first InitProducerId is being written. */
  meta: TxnMetadata | undefined;
  /** A transition's write is in flight. */
  busy: boolean;
  /** Markers and Complete* are being written for the Prepare* in `meta`. */
  completing: boolean;
  /** Requests waiting for `busy` or `completing` to end (run()), woken by settled(). */
  waiters?: Array<() => void>;
}

/** Wakes the requests waiting for the entry (a write or a completion ended). */
function settled(entry: TxnEntry): void {
  const waiters = entry.waiters;
  if (!waiters || waiters.length === 0) return;
  entry.waiters = [];
  for (const wake of waiters) wake();
}

interface Shard {
  readonly partition: number;
  /** The coordinator epoch: the partition's leader epoch when this broker loaded it. */
  readonly leaderEpoch: number;
  state: 'loading' | 'active' | 'unloaded';
  readonly txns: Map<string, TxnEntry>;
}

type Found = { readonly shard: Shard } | Refusal;

const answerOf = (r: Refusal): { errorCode: number; errorMessage: string } => ({ errorCode: r.error.code, errorMessage: `${r.error.name}: ${r.message}` });

/** The coordinator's figures at one moment (TransactionCoordinator.stats). */
export interface TxnCoordinatorStats {
  /** Transactional ids of the active partitions, by transaction state. */
  readonly byState: ReadonlyMap<string, number>;
  /** __transaction_state partitions this broker leads, loading or serving. */
  readonly partitions: { readonly loading: number; readonly active: number };
  /** Transactions whose markers and completion are being written. */
  readonly completing: number;
  /** Transactions aborted for their timeout since the broker started. */
  readonly timedOutAborts: number;
}

export class TransactionCoordinator implements TransactionOps {
  readonly limits: TxnCoordinatorLimits;
  private readonly shards = new Map<number, Shard>();
  private creatingTopic = false;
  /** Transactions aborted by the timeout scan since start (metrics). */
  private timedOutAborts = 0;
  private stopped = false;
  private unsubscribe: () => void = () => undefined;
  private cancelScan: () => void = () => undefined;
  private readonly log: Logger;

  constructor(private readonly opts: TransactionCoordinatorOptions) {
    this.limits = { ...TXN_COORDINATOR_DEFAULTS, ...opts.limits };
    this.log = opts.logger;
  }

  /** Follows this broker's leadership of __transaction_state partitions (call before the replica manager applies images). */
  start(): void {
    this.unsubscribe = this.opts.replicas.onLeadershipChange((p, leading) => this.onLeadership(p, leading));
    for (const p of this.opts.replicas.hostedPartitions) if (p.topic === TRANSACTION_STATE_TOPIC && p.isLeader) this.onLeadership(p, true);
    this.armScan();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe();
    this.cancelScan();
    for (const shard of [...this.shards.values()]) this.unload(shard, 'the broker is shutting down');
  }

  /** __transaction_state partitions this broker coordinates, with their state (tests, describe). */
  get shardStates(): ReadonlyMap<number, Shard['state']> {
    return new Map([...this.shards].map(([p, s]) => [p, s.state] as const));
  }

  /**
   * What the metrics show on scrape: the ids of the loaded partitions by
   * state, the partitions by load state, the transactions whose markers are
   * being written, and how many transactions this broker aborted for their
   * timeout since it started.
   */
  stats(): TxnCoordinatorStats {
    const byState = new Map<string, number>();
    const partitions = { loading: 0, active: 0 };
    let completing = 0;
    for (const shard of this.shards.values()) {
      if (shard.state === 'loading' || shard.state === 'active') partitions[shard.state]++;
      if (shard.state !== 'active') continue;
      for (const entry of shard.txns.values()) {
        if (entry.completing) completing++;
        if (entry.meta) byState.set(entry.meta.state, (byState.get(entry.meta.state) ?? 0) + 1);
      }
    }
    return { byState, partitions, completing, timedOutAborts: this.timedOutAborts };
  }

  /** The id's state on this broker (tests and DescribeTransactions), undefined when not here. */
  transaction(transactionalId: string): TxnMetadata | undefined {
    const found = this.lookup(transactionalId);
    return 'error' in found ? undefined : found.shard.txns.get(transactionalId)?.meta;
  }

  /** A cluster config of the transaction coordinator (config-defs.ts), as a number. */
  private config(name: string): number {
    return Number(effectiveBrokerConfig(name, this.opts.image().config('cluster', '')));
  }

  private nowMs(): number {
    return Math.floor(this.opts.clock.nowMs());
  }

  // ---- leadership: load and unload -------------------------------------------------

  private onLeadership(p: Partition, leading: boolean): void {
    if (p.topic !== TRANSACTION_STATE_TOPIC || this.stopped) return;
    const current = this.shards.get(p.index);
    if (!leading) {
      if (current) this.unload(current, `broker ${this.opts.brokerId} no longer leads ${p.key}`);
      return;
    }
    if (current && current.leaderEpoch === p.leaderEpoch && current.state !== 'unloaded') return;
    if (current) this.unload(current, `${p.key} has a new leader epoch`);
    const shard: Shard = { partition: p.index, leaderEpoch: p.leaderEpoch, state: 'loading', txns: new Map() };
    this.shards.set(p.index, shard);
    void this.load(shard, p);
  }

  private async load(shard: Shard, p: Partition): Promise<void> {
    const startedMs = this.opts.clock.monotonicMs();
    const endOffset = p.log.logEndOffset;
    try {
      const loaded = await loadTransactionPartition(p.log, {
        endOffset, readBytesMax: this.limits.loadReadBytesMax, cancelled: () => shard.state !== 'loading', scheduler: this.opts.scheduler,
      });
      if (loaded === null || shard.state !== 'loading') return;
      for (const [id, meta] of loaded.transactions) shard.txns.set(id, { meta, busy: false, completing: false });
      shard.state = 'active';
      let unfinished = 0;
      for (const entry of shard.txns.values()) {
        if (entry.meta?.state === 'PrepareCommit' || entry.meta?.state === 'PrepareAbort') {
          unfinished++;
          void this.complete(shard, entry);
        }
      }
      const ms = Math.round(this.opts.clock.monotonicMs() - startedMs);
      this.log.info({ partition: shard.partition, leaderEpoch: shard.leaderEpoch, transactions: loaded.transactions.size, unfinished, records: loaded.records, skipped: loaded.skipped, endOffset, ms }, 'loaded transactions');
    } catch (err) {
      this.log.error({ partition: shard.partition, err: (err as Error).message }, 'could not load transactions; not coordinating them');
      if (shard.state === 'loading') this.unload(shard, 'loading failed');
    }
  }

  private unload(shard: Shard, why: string): void {
    const wasActive = shard.state === 'active';
    shard.state = 'unloaded';
    if (this.shards.get(shard.partition) === shard) this.shards.delete(shard.partition);
    const entries = [...shard.txns.values()];
    shard.txns.clear();
    // Waiting requests look the id up again: NOT_COORDINATOR now.
    for (const entry of entries) settled(entry);
    if (wasActive) this.log.info({ partition: shard.partition, why }, 'unloaded transactions');
  }

  /** The shard still serves (this broker leads its partition at the epoch it loaded). */
  private isCurrent(shard: Shard, entry?: TxnEntry, id?: string): boolean {
    if (shard.state !== 'active' || this.shards.get(shard.partition) !== shard) return false;
    return entry === undefined || id === undefined || shard.txns.get(id) === entry;
  }

  // ---- finding a transactional id ------------------------------------------------------

  /** The shard that holds `transactionalId` on this broker, or why there is none. */
  lookup(transactionalId: string): Found {
    if (transactionalId.length === 0 || transactionalId.length > TRANSACTIONAL_ID_LENGTH_MAX) {
      return { error: Errors.INVALID_REQUEST, message: `a transactional id has 1-${TRANSACTIONAL_ID_LENGTH_MAX} characters` };
    }
    const topic = this.opts.image().topic(TRANSACTION_STATE_TOPIC);
    if (!topic || topic.partitions.size === 0) return { error: Errors.COORDINATOR_NOT_AVAILABLE, message: `${TRANSACTION_STATE_TOPIC} does not exist yet` };
    const partition = coordinatorPartition(transactionalId, topic.partitions.size);
    const shard = this.shards.get(partition);
    if (!shard) {
      const leader = topic.partitions.get(partition)?.leader ?? -1;
      return { error: Errors.NOT_COORDINATOR, message: `transactional id ${transactionalId} is coordinated by the leader of ${TRANSACTION_STATE_TOPIC}-${partition} (broker ${leader}), not broker ${this.opts.brokerId}` };
    }
    if (shard.state === 'loading') return { error: Errors.COORDINATOR_LOAD_IN_PROGRESS, message: `loading the transactions of ${TRANSACTION_STATE_TOPIC}-${partition}` };
    return { shard };
  }

  /** The broker leading the id's __transaction_state partition, or -1 (the verifier's remote path). */
  coordinatorOf(transactionalId: string): number {
    const topic = this.opts.image().topic(TRANSACTION_STATE_TOPIC);
    if (!topic || topic.partitions.size === 0) return -1;
    return topic.partitions.get(coordinatorPartition(transactionalId, topic.partitions.size))?.leader ?? -1;
  }

  findCoordinator(req: FindCoordinatorRequest): FindCoordinatorResponse {
    const unavailable = (error: ErrorInfo, message: string): FindCoordinatorResponse => ({ errorCode: error.code, errorMessage: `${error.name}: ${message}`, nodeId: -1, url: null });
    if (req.key.length === 0 || req.key.length > TRANSACTIONAL_ID_LENGTH_MAX) return unavailable(Errors.INVALID_REQUEST, `a transactional id has 1-${TRANSACTIONAL_ID_LENGTH_MAX} characters`);
    const image = this.opts.image();
    const topic = image.topic(TRANSACTION_STATE_TOPIC);
    if (!topic || topic.partitions.size === 0) {
      this.createTopic(image);
      return unavailable(Errors.COORDINATOR_NOT_AVAILABLE, `creating ${TRANSACTION_STATE_TOPIC}`);
    }
    const partition = coordinatorPartition(req.key, topic.partitions.size);
    const leader = topic.partitions.get(partition)?.leader ?? -1;
    const broker = image.brokers.get(leader);
    const url = broker && !broker.fenced ? broker.endpoints.find((e) => e.name === BROKER_ENDPOINT)?.url : undefined;
    if (url === undefined) return unavailable(Errors.COORDINATOR_NOT_AVAILABLE, `${TRANSACTION_STATE_TOPIC}-${partition} has no live leader`);
    return { errorCode: 0, errorMessage: null, nodeId: leader, url };
  }

  /** Asks the controller for __transaction_state (once at a time). */
  private createTopic(image: MetadataImage): void {
    if (this.creatingTopic) return;
    const live = image.unfencedBrokers().length;
    if (live === 0) return;
    const numPartitions = this.config('transaction.state.log.num.partitions');
    const replicationFactor = Math.min(this.config('transaction.state.log.replication.factor'), live);
    const configs = {
      ...TRANSACTION_TOPIC_CONFIGS,
      'min.insync.replicas': String(Math.min(this.config('transaction.state.log.min.isr'), replicationFactor)),
      'segment.bytes': String(this.config('transaction.state.log.segment.bytes')),
    };
    this.creatingTopic = true;
    this.log.info({ numPartitions, replicationFactor }, `creating ${TRANSACTION_STATE_TOPIC}`);
    const body = { topics: [{ name: TRANSACTION_STATE_TOPIC, numPartitions, replicationFactor, configs }] };
    this.opts.admin<{ topics: Array<{ errorCode: number; errorMessage: string | null }> }>('createTopics', body).then(
      (res) => {
        const t = res.topics[0];
        if (t && t.errorCode !== 0 && t.errorCode !== Errors.TOPIC_ALREADY_EXISTS.code) this.log.warn({ error: t.errorMessage }, `could not create ${TRANSACTION_STATE_TOPIC}`);
      },
      (err: Error) => this.log.warn({ err: err.message }, `could not create ${TRANSACTION_STATE_TOPIC}`),
    ).finally(() => {
      this.creatingTopic = false;
    });
  }

  // ---- requests ----------------------------------------------------------------------

  /**
   * Runs a decision for `id` on its shard: refusals and answers at once, a
   * transition once written (a fresh producer id fetched first when the
   * decision asks for one). `decide` is called again after every wait, on
   * the state as it is then.
   */
  private async run<R>(id: string, decide: (meta: TxnMetadata | undefined, fresh: number | undefined) => Decision<R>): Promise<R | Refusal> {
    let fresh: number | undefined;
    const waitUntilMs = this.opts.clock.monotonicMs() + this.limits.concurrentWaitMs;
    for (let attempt = 0; attempt < 2;) {
      const found = this.lookup(id);
      if ('error' in found) return found;
      const { shard } = found;
      const entry = shard.txns.get(id);
      const busy: Refusal | null = entry?.busy ? { error: Errors.CONCURRENT_TRANSACTIONS, message: `another request for ${id} is being written` } : null;
      const d: Decision<R> = busy ? { kind: 'refuse', refusal: busy } : decide(entry?.meta, fresh);
      // The id's last write or completion is still under way (a client that begins its next transaction as soon as
      // EndTxn answered meets its markers being written): wait for it, bounded, rather than make the client back off.
      if (d.kind === 'refuse' && d.refusal.error === Errors.CONCURRENT_TRANSACTIONS && entry && (entry.busy || entry.completing)
        && await this.settledWithin(entry, waitUntilMs)) continue;
      attempt++;
      switch (d.kind) {
        case 'answer':
          return d.response;
        case 'refuse':
          return d.refusal;
        case 'needProducerId':
          if (fresh !== undefined) throw new Error(`${id}: the decision asked for a second producer id`);
          try {
            fresh = await this.opts.producerIds.nextProducerId();
          } catch (err) {
            return { error: Errors.COORDINATOR_NOT_AVAILABLE, message: `no producer id: ${(err as Error).message}` };
          }
          continue;
        case 'persist': {
          if (!entry && shard.txns.size >= this.limits.transactionsPerPartitionMax) {
            return { error: Errors.COORDINATOR_NOT_AVAILABLE, message: `${TRANSACTION_STATE_TOPIC}-${shard.partition} holds ${shard.txns.size} transactional ids, its limit` };
          }
          const target = entry ?? { meta: undefined, busy: false, completing: false };
          if (!entry) shard.txns.set(id, target);
          const problem = await this.transition(shard, target, id, d.next);
          if (problem) return problem;
          return d.response;
        }
      }
    }
    throw new Error(`${id}: no decision after a fresh producer id`);
  }

  /** Waits until `entry`'s write or completion ends (true) or `untilMs` passes (false). */
  private settledWithin(entry: TxnEntry, untilMs: number): Promise<boolean> {
    const leftMs = untilMs - this.opts.clock.monotonicMs();
    if (leftMs <= 0 || this.stopped) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      let cancel = (): void => {};
      const wake = (): void => {
        cancel();
        resolve(true);
      };
      (entry.waiters ??= []).push(wake);
      cancel = this.opts.scheduler.schedule(leftMs, () => {
        entry.waiters = entry.waiters?.filter((w) => w !== wake);
        resolve(false);
      });
    });
  }

  /** Writes `next` for the id and applies it once replicated; starts completion for a Prepare*. null: done. */
  private async transition(shard: Shard, entry: TxnEntry, id: string, next: TxnMetadata | null): Promise<Refusal | null> {
    try {
      return await this.writeTransition(shard, entry, id, next);
    } finally {
      settled(entry);
    }
  }

  private async writeTransition(shard: Shard, entry: TxnEntry, id: string, next: TxnMetadata | null): Promise<Refusal | null> {
    entry.busy = true;
    const res = await this.append(shard, id, next);
    entry.busy = false;
    if (res && entry.meta === undefined && shard.txns.get(id) === entry) shard.txns.delete(id);
    if (res) return res;
    if (!this.isCurrent(shard, entry, id)) return { error: Errors.NOT_COORDINATOR, message: `broker ${this.opts.brokerId} no longer coordinates ${id}` };
    if (next === null) {
      shard.txns.delete(id);
      return null;
    }
    entry.meta = next;
    if (next.state === 'PrepareCommit' || next.state === 'PrepareAbort') void this.complete(shard, entry);
    return null;
  }

  async initProducerId(req: InitProducerIdRequest & { readonly transactionalId: string }): Promise<InitProducerIdTxnResponse> {
    const init = {
      transactionalId: req.transactionalId, timeoutMs: req.transactionTimeoutMs ?? TRANSACTION_TIMEOUT_MS_DEFAULT,
      producerId: req.producerId, producerEpoch: req.producerEpoch,
    };
    const maxTimeoutMs = this.config('transaction.max.timeout.ms');
    const r = await this.run(req.transactionalId, (meta, fresh) => decideInit(meta, init, this.nowMs(), { maxTimeoutMs }, fresh));
    if (isRefusal(r)) return { ...answerOf(r), producerId: -1, producerEpoch: -1 };
    return { errorCode: 0, errorMessage: null, producerId: r.producerId, producerEpoch: r.producerEpoch };
  }

  async addPartitionsToTxn(req: AddPartitionsToTxnRequest): Promise<AddPartitionsToTxnResponse> {
    const partitions: TxnPartition[] = req.topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.name, partition })));
    const image = this.opts.image();
    const unknown = (p: TxnPartition) => {
      const topic = image.topic(p.topic);
      return !topic || !topic.partitions.has(p.partition);
    };
    const results = (error: (p: TxnPartition) => Refusal | null): TopicResults[] => req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((partition) => {
        const e = error({ topic: t.name, partition });
        return { partition, errorCode: e ? e.error.code : 0, errorMessage: e ? answerOf(e).errorMessage : null };
      }),
    }));
    const whole = (r: Refusal): AddPartitionsToTxnResponse => ({ ...answerOf(r), results: results(() => r) });
    const found = this.lookup(req.transactionalId);
    if ('error' in found) return whole(found);
    if (req.verifyOnly) {
      const meta = found.shard.txns.get(req.transactionalId)?.meta;
      return { errorCode: 0, errorMessage: null, results: results((p) => verifyPartition(meta, req, p)) };
    }
    if (partitions.some(unknown)) {
      const missing: Refusal = { error: Errors.UNKNOWN_TOPIC_OR_PARTITION, message: 'no such topic or partition' };
      const skipped: Refusal = { error: Errors.OPERATION_NOT_ATTEMPTED, message: 'not added: another partition of the request does not exist' };
      return { errorCode: 0, errorMessage: null, results: results((p) => (unknown(p) ? missing : skipped)) };
    }
    const add = { transactionalId: req.transactionalId, producerId: req.producerId, producerEpoch: req.producerEpoch, partitions };
    const r = await this.run(req.transactionalId, (meta) => decideAddPartitions(meta, add, this.nowMs()));
    return isRefusal(r) ? whole(r) : { errorCode: 0, errorMessage: null, results: results(() => null) };
  }

  async addOffsetsToTxn(req: AddOffsetsToTxnRequest): Promise<AddOffsetsToTxnResponse> {
    const offsets = this.opts.image().topic(CONSUMER_OFFSETS_TOPIC);
    if (!offsets || offsets.partitions.size === 0) {
      this.opts.ensureOffsetsTopic?.();
      return answerOf({ error: Errors.COORDINATOR_NOT_AVAILABLE, message: `creating ${CONSUMER_OFFSETS_TOPIC}` });
    }
    const partition = { topic: CONSUMER_OFFSETS_TOPIC, partition: coordinatorPartition(req.groupId, offsets.partitions.size) };
    const add = { transactionalId: req.transactionalId, producerId: req.producerId, producerEpoch: req.producerEpoch, partitions: [partition] };
    const r = await this.run(req.transactionalId, (meta) => decideAddPartitions(meta, add, this.nowMs()));
    return isRefusal(r) ? answerOf(r) : { errorCode: 0, errorMessage: null };
  }

  async endTxn(req: EndTxnRequest): Promise<EndTxnResponse> {
    const r = await this.run(req.transactionalId, (meta, fresh) => decideEnd(meta, req, this.nowMs(), fresh));
    if (isRefusal(r)) return { ...answerOf(r), producerId: -1, producerEpoch: -1 };
    return { errorCode: 0, errorMessage: null, producerId: r.producerId, producerEpoch: r.producerEpoch };
  }

  // ---- completing a transaction -------------------------------------------------------

  /** Markers for the entry's Prepare*, then Complete*; retried until done or this broker lets go of the id. */
  private async complete(shard: Shard, entry: TxnEntry): Promise<void> {
    const meta = entry.meta;
    if (entry.completing || !meta || !meta.markers || (meta.state !== 'PrepareCommit' && meta.state !== 'PrepareAbort')) return;
    entry.completing = true;
    const id = meta.transactionalId;
    try {
      const outcome = await writeMarkers({
        transactionalId: id, producer: meta.markers, committed: meta.state === 'PrepareCommit', coordinatorEpoch: shard.leaderEpoch, partitions: meta.partitions,
      }, {
        channel: this.opts.markers, image: this.opts.image, scheduler: this.opts.scheduler, logger: this.log,
        retryBackoffMs: this.limits.markerRetryBackoffMs, current: () => this.isCurrent(shard, entry, id) && entry.meta === meta,
      });
      if (outcome === 'fenced') {
        this.log.warn({ transactionalId: id, coordinatorEpoch: shard.leaderEpoch }, 'a newer coordinator wrote markers for this producer; leaving the transaction to it');
        return;
      }
      if (outcome === 'cancelled') return;
      for (;;) {
        if (!this.isCurrent(shard, entry, id) || entry.meta !== meta) return;
        if (!entry.busy) {
          const problem = await this.transition(shard, entry, id, completeTransition(meta, this.nowMs()));
          if (!problem) return;
          this.log.debug({ transactionalId: id, error: problem.message }, 'could not write the transaction\'s completion; retrying');
        }
        await new Promise<void>((resolve) => this.opts.scheduler.schedule(this.limits.completeRetryBackoffMs, resolve));
      }
    } finally {
      entry.completing = false;
      settled(entry);
    }
  }

  // ---- timeouts ----------------------------------------------------------------------

  private armScan(): void {
    if (this.stopped) return;
    const interval = this.config('transaction.abort.timed.out.transaction.cleanup.interval.ms');
    this.cancelScan = this.opts.scheduler.schedule(interval, () => {
      this.scan();
      this.armScan();
    });
  }

  /** Aborts Ongoing transactions past their timeout and forgets idle expired ids (one write per id, none for busy ones). */
  scan(): void {
    const now = this.nowMs();
    const expirationMs = this.config('transactional.id.expiration.ms');
    for (const shard of this.shards.values()) {
      if (shard.state !== 'active') continue;
      for (const [id, entry] of shard.txns) {
        const meta = entry.meta;
        if (!meta || entry.busy || entry.completing) continue;
        const abort = expireTransition(meta, now);
        if (abort) {
          this.log.info({ transactionalId: id, producerId: meta.producerId, producerEpoch: meta.producerEpoch, timeoutMs: meta.timeoutMs }, 'aborting a transaction past its timeout');
          void this.transition(shard, entry, id, abort).then((problem) => {
            if (!problem) this.timedOutAborts++;
          });
        } else if (isIdExpired(meta, now, expirationMs)) {
          this.log.info({ transactionalId: id }, 'transactional id expired');
          void this.transition(shard, entry, id, null);
        }
      }
    }
  }

  // ---- describe and list --------------------------------------------------------------

  describeTransactions(req: DescribeTransactionsRequest): DescribeTransactionsResponse {
    return {
      transactionStates: req.transactionalIds.map((id): DescribedTransaction => {
        const none: DescribedTransaction = {
          errorCode: 0, errorMessage: null, transactionalId: id, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1,
          producerId: -1, producerEpoch: -1, topics: [],
        };
        const found = this.lookup(id);
        if ('error' in found) return { ...none, ...answerOf(found) };
        const meta = found.shard.txns.get(id)?.meta;
        if (!meta) return { ...none, ...answerOf({ error: Errors.TRANSACTIONAL_ID_NOT_FOUND, message: `transactional id ${id} is not known` }) };
        const topics = new Map<string, number[]>();
        for (const p of meta.partitions) {
          let list = topics.get(p.topic);
          if (!list) topics.set(p.topic, (list = []));
          list.push(p.partition);
        }
        return {
          errorCode: 0, errorMessage: null, transactionalId: id, transactionState: meta.state, transactionTimeoutMs: meta.timeoutMs,
          transactionStartTimeMs: meta.startTimeMs, producerId: meta.producerId, producerEpoch: meta.producerEpoch,
          topics: [...topics].map(([name, partitions]) => ({ name, partitions })),
        };
      }),
    };
  }

  listTransactions(req: ListTransactionsRequest): ListTransactionsResponse {
    const known = new Set<string>(TRANSACTION_STATE_NAMES);
    const unknownStateFilters = req.stateFilters.filter((s) => !known.has(s));
    const states = new Set(req.stateFilters.filter((s) => known.has(s)));
    const pids = new Set(req.producerIdFilters);
    const now = this.nowMs();
    const loading = [...this.shards.values()].some((s) => s.state === 'loading');
    const transactionStates = [...this.shards.values()].filter((s) => s.state === 'active')
      .flatMap((s) => [...s.txns.values()].flatMap((e) => (e.meta ? [e.meta] : [])))
      .filter((m) => (req.stateFilters.length === 0 || states.has(m.state)) && (pids.size === 0 || pids.has(m.producerId))
        && (req.durationFilterMs < 0 || (m.startTimeMs >= 0 && now - m.startTimeMs > req.durationFilterMs)))
      .map((m) => ({ transactionalId: m.transactionalId, producerId: m.producerId, transactionState: m.state }))
      .sort((a, b) => (a.transactionalId < b.transactionalId ? -1 : a.transactionalId > b.transactionalId ? 1 : 0));
    const error = loading ? answerOf({ error: Errors.COORDINATOR_LOAD_IN_PROGRESS, message: 'some transactions are still loading' }) : { errorCode: 0, errorMessage: null };
    return { ...error, unknownStateFilters, transactionStates };
  }

  // ---- writing to __transaction_state --------------------------------------------------

  /** Appends the id's new state (null: a tombstone) with acks=all; null once the ISR has it, else the error a client should see. */
  private async append(shard: Shard, id: string, meta: TxnMetadata | null): Promise<Refusal | null> {
    const notCoordinator: Refusal = { error: Errors.NOT_COORDINATOR, message: `broker ${this.opts.brokerId} no longer coordinates ${TRANSACTION_STATE_TOPIC}-${shard.partition}` };
    if (!this.isCurrent(shard)) return notCoordinator;
    const batch = encodeRecordBatch({ records: [{ key: txnKey(id), value: meta === null ? null : txnValue(meta), timestamp: this.nowMs() }] });
    let answer;
    try {
      const res = await this.opts.replicas.produce({
        acks: -1, timeoutMs: this.limits.writeTimeoutMs,
        topics: [{ name: TRANSACTION_STATE_TOPIC, partitions: [{ partition: shard.partition, records: asBuffer(batch) }] }],
      });
      answer = res.topics[0]?.partitions[0];
    } catch (err) {
      return { error: Errors.UNKNOWN_SERVER_ERROR, message: (err as Error).message };
    }
    if (!answer) return { error: Errors.UNKNOWN_SERVER_ERROR, message: `no answer for ${TRANSACTION_STATE_TOPIC}-${shard.partition}` };
    if (answer.errorCode !== 0) return { error: appendErrorFor(answer.errorCode, Errors.UNKNOWN_SERVER_ERROR), message: answer.errorMessage ?? `append failed (${answer.errorCode})` };
    if (!this.isCurrent(shard)) return notCoordinator;
    return null;
  }
}
