// The producer's I/O loop: takes sealed batches from the accumulator, sends
// them to partition leaders, and acts on the answers by the rules of
// producer-batch.ts (complete, retry in order, re-encode under a new
// identity, or fail).
//
// One drain pass: seal open batches a flush or a memory waiter asks for; fail queued batches past
// their delivery timeout; obtain or renew the producer identity (idempotent
// producers: InitProducerId through any broker); then build produce requests
// — one per (leader broker, acks), holding at most one batch per partition
// and at most requestBytesMax of batches — while the broker has fewer than
// maxInFlightRequestsPerConnection requests in flight, and repeat while
// anything more can go. A pass runs (once per microtask turn, however often
// it is asked for) when an append opens or seals a batch — not per record,
// as Kafka's sender wakes on a full batch or a linger — and after every
// answer, identity or metadata change and timer. The one timer is armed for
// the earliest linger, backoff or delivery deadline and is left alone while
// it is due no later than needed.
//
// Metadata: leaders come from the Client's cache. A partition without a
// known leader, and every retriable error, asks the Client for a refresh
// (at most once per retryBackoffMs), after which the loop runs again.
//
// Invariants: a broker's in-flight count is taken when its request is planned
// and returned when the answer (or failure) is handled; every batch is
// settled exactly once per send.

import { AssertionError, assert } from '../util/assert.js';
import type { Clock, Scheduler } from '../util/clock.js';
import { Errors, SluiceError, isSluiceError } from '../util/errors.js';
import type { Rng } from '../util/rng.js';
import type { ProduceResponse } from '../protocol/apis/produce.js';
import { RECORD_BATCH_HEADER_BYTES } from '../record/batch-header.js';
import { backoffMs, partitionError, type Client, type ClientLogger } from './client.js';
import type { RecordAccumulator } from './producer-accumulator.js';
import { outcomeOf, type Acks, type ProducerBatch, type ProducerIdentity } from './producer-batch.js';
import type { ResolvedProducerOptions } from './producer-options.js';

/**
 * What a transactional producer's Sender asks its TransactionManager
 * (transaction-manager.ts). Without one (every other producer) the Sender
 * does exactly what it did before: nothing here runs per record.
 */
export interface TxnGate {
  readonly transactionalId: string;
  /** Whether the partition is in the open transaction; if not, asks for it to be added (the Sender is woken then) and answers false. */
  partitionAdded(topic: string, partition: number): boolean;
  /** Non-null: batches not yet sent fail with this (the transaction is aborting, or cannot commit). */
  readonly queuedFailure: SluiceError | null;
  /** A batch failed for good: the transaction cannot commit (or the producer is fenced). */
  onBatchFailed(error: SluiceError): void;
}

export interface SenderDeps {
  /** Set for a transactional producer: the identity comes from its coordinator (adoptIdentity), partitions are added first. */
  readonly txn?: TxnGate;
  readonly client: Client;
  readonly acc: RecordAccumulator;
  readonly opts: ResolvedProducerOptions;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly rng: Rng;
  readonly logger: ClientLogger;
}

interface RequestPlan {
  readonly brokerId: number;
  readonly acks: Acks;
  readonly batches: ProducerBatch[];
  bytes: number;
}

/** A pass stops planning requests after this many rounds (each round sends at least one request, so slots run out first). */
const SEND_ROUNDS_MAX = 1000;

export class Sender {
  private scheduled = false;
  private stopped = false;
  /** Cancels the armed wake-up timer; null when none is armed. */
  private cancelTimer: (() => void) | null = null;
  /** Monotonic ms the armed timer fires at (Infinity when none is armed). */
  private timerAtMs = Infinity;
  /** expireQueued's scratch list, reused so a drain pass allocates nothing for it. */
  private readonly expired: ProducerBatch[] = [];
  private readonly inFlightByBroker = new Map<number, number>();
  private identity: ProducerIdentity | null = null;
  /** A batch failed for good or is known unappendable: take a new epoch once the old one's batches are resolved. */
  private renewNeeded = false;
  private initializing = false;
  private initAttempts = 0;
  private initRetryAtMs = 0;
  private lastInitError: SluiceError | null = null;
  private refreshing = false;
  private refreshAllowedAtMs = 0;

  constructor(private readonly deps: SenderDeps) {}

  /** The identity batches are sent under now (idempotent producers), for diagnostics and tests. */
  get producerIdentity(): ProducerIdentity | null {
    return this.identity;
  }

  /**
   * A transactional producer's identity, from its coordinator (InitProducerId,
   * or EndTxn's bumped epoch): batches from now on carry it, sequences from 0.
   */
  adoptIdentity(identity: ProducerIdentity): void {
    this.identity = identity;
    for (const q of this.deps.acc.partitions.values()) q.resetSequences();
    this.renewNeeded = false;
    this.wake();
  }

  /** Runs a drain pass soon (once, however often it is called before then). */
  wake(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    queueMicrotask(() => this.drain());
  }

  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.timerAtMs = Infinity;
  }

  private drain(): void {
    this.scheduled = false;
    if (this.stopped) return;
    const now = this.deps.clock.monotonicMs();
    if (this.deps.client.isClosed) {
      this.failQueued(new SluiceError(Errors.NETWORK_EXCEPTION, 'the client is closed'));
      return;
    }
    const txnFailure = this.deps.txn?.queuedFailure;
    if (txnFailure) this.failQueued(txnFailure);
    let wakeAtMs = this.deps.acc.sealDue(now);
    wakeAtMs = Math.min(wakeAtMs, this.expireQueued(now));
    wakeAtMs = Math.min(wakeAtMs, this.manageIdentity(now));
    wakeAtMs = Math.min(wakeAtMs, this.sendReady(now));
    this.armTimer(wakeAtMs, now);
  }

  /**
   * Makes sure a drain pass runs by `wakeAtMs`. A timer already armed for no
   * later than that stays: firing early costs one drain pass, which arms the
   * next; cancelling and re-arming on every pass cost a timer removal and
   * insertion per pass. With nothing to wait for the timer is cancelled, so
   * an idle producer holds no timer (the client's keep the process alive).
   */
  private armTimer(wakeAtMs: number, nowMs: number): void {
    if (wakeAtMs === Infinity) {
      this.cancelTimer?.();
      this.cancelTimer = null;
      this.timerAtMs = Infinity;
      return;
    }
    if (this.cancelTimer !== null && this.timerAtMs <= wakeAtMs) return;
    this.cancelTimer?.();
    const delayMs = Math.max(0, Math.ceil(wakeAtMs - nowMs));
    this.timerAtMs = nowMs + delayMs;
    this.cancelTimer = this.deps.scheduler.schedule(delayMs, () => {
      this.cancelTimer = null;
      this.timerAtMs = Infinity;
      this.wake();
    });
  }

  // ---- sending -------------------------------------------------------------------

  /** Plans and dispatches every request that may go now; returns when a waiting retry becomes due. */
  private sendReady(now: number): number {
    let next = Infinity;
    let needMetadata = false;
    const identity = { ready: this.identity !== null, renewing: this.renewNeeded };
    for (let round = 0; round < SEND_ROUNDS_MAX; round++) {
      const plans = new Map<string, RequestPlan>();
      for (const q of this.deps.acc.partitions.values()) {
        const head = q.queue[0];
        if (head?.isReady(now) && head.retryAtMs > now) next = Math.min(next, head.retryAtMs);
        const batch = q.sendable(now, identity);
        if (!batch) continue;
        if (this.deps.txn && !this.deps.txn.partitionAdded(q.topic, q.partition)) continue;
        const leader = this.leaderOf(q.topic, q.partition);
        if (leader < 0) {
          needMetadata = true;
          continue;
        }
        const plan = this.planFor(plans, leader, batch);
        if (!plan) continue;
        this.deps.acc.sealNow(batch);
        q.markSent(batch, this.identity);
        plan.batches.push(batch);
        plan.bytes += this.sizeOf(batch);
      }
      if (plans.size === 0) break;
      for (const plan of plans.values()) void this.dispatch(plan);
    }
    if (needMetadata) next = Math.min(next, this.refreshMetadata(now));
    return next;
  }

  /** The request to `leader` this batch can join, or null (no slot, or the request is full). */
  private planFor(plans: Map<string, RequestPlan>, leader: number, batch: ProducerBatch): RequestPlan | null {
    const key = `${leader}/${batch.acks}`;
    const plan = plans.get(key);
    if (plan) return plan.bytes + this.sizeOf(batch) <= this.deps.opts.requestBytesMax ? plan : null;
    const inFlight = this.inFlightByBroker.get(leader) ?? 0;
    if (inFlight >= this.deps.opts.maxInFlightRequestsPerConnection) return null;
    this.inFlightByBroker.set(leader, inFlight + 1);
    const created: RequestPlan = { brokerId: leader, acks: batch.acks, batches: [], bytes: 0 };
    plans.set(key, created);
    return created;
  }

  /** The batch's bytes in a request: as encoded once it was, else header plus the records' encoded (uncompressed) bytes. */
  private sizeOf(batch: ProducerBatch): number {
    return batch.encoded?.length ?? RECORD_BATCH_HEADER_BYTES + batch.recordBytes;
  }

  private leaderOf(topic: string, partition: number): number {
    return this.deps.client.cachedTopic(topic)?.partitions[partition]?.leader ?? -1;
  }

  private async dispatch(plan: RequestPlan): Promise<void> {
    let response: ProduceResponse | null = null;
    let failure: SluiceError | null = null;
    try {
      const topics = this.requestTopics(plan.batches);
      const conn = await this.deps.client.connection(plan.brokerId);
      const txn = this.deps.txn;
      response = await conn.produce({
        acks: plan.acks, timeoutMs: this.deps.opts.ackTimeoutMs, topics, ...(txn ? { transactionalId: txn.transactionalId } : {}),
      });
    } catch (err) {
      failure = asSluiceError(err);
    } finally {
      this.inFlightByBroker.set(plan.brokerId, (this.inFlightByBroker.get(plan.brokerId) ?? 1) - 1);
    }
    for (const batch of plan.batches) {
      if (failure) this.settle(batch, failure, -1);
      else this.settleFromResponse(batch, response);
    }
    this.wake();
  }

  /**
   * The request body's topics. A batch sent for the first time (or
   * re-encoded) gets its header here, over the record bodies encoded at
   * append; a retry resends the bytes it was first sent as.
   */
  private requestTopics(batches: readonly ProducerBatch[]): Array<{ name: string; partitions: Array<{ partition: number; records: Uint8Array }> }> {
    const byTopic = new Map<string, Array<{ partition: number; records: Uint8Array }>>();
    for (const b of batches) {
      if (b.encoded === null) {
        assert(b.body.count === b.recordCount, 'every record of a batch is in its body');
        b.encoded = b.body.build({
          compression: this.deps.opts.compression,
          ...(b.identity ? { producerId: b.identity.producerId, producerEpoch: b.identity.producerEpoch, baseSequence: b.baseSequence } : {}),
          ...(this.deps.txn ? { isTransactional: true } : {}),
        });
      }
      const list = byTopic.get(b.topic) ?? [];
      list.push({ partition: b.partition, records: b.encoded });
      byTopic.set(b.topic, list);
    }
    return [...byTopic].map(([name, partitions]) => ({ name, partitions }));
  }

  private settleFromResponse(batch: ProducerBatch, response: ProduceResponse | null): void {
    if (response === null) return this.settle(batch, null, -1); // acks=0: no answer by design
    const p = response.topics.find((t) => t.name === batch.topic)?.partitions.find((x) => x.partition === batch.partition);
    if (!p) {
      return this.settle(batch, new SluiceError(Errors.UNKNOWN_SERVER_ERROR, `the produce answer lacks ${batch.topic}-${batch.partition}`), -1);
    }
    this.settle(batch, partitionError(p.errorCode, p.errorMessage, { topic: batch.topic, partition: batch.partition }), p.baseOffset);
  }

  // ---- answers -------------------------------------------------------------------

  private settle(batch: ProducerBatch, error: SluiceError | null, baseOffset: number): void {
    const q = this.deps.acc.queueFor(batch.topic, batch.partition);
    q.settle(batch, error);
    const now = this.deps.clock.monotonicMs();
    const outcome = outcomeOf(batch, error, baseOffset, {
      idempotent: this.deps.opts.idempotent, earlierUnresolved: q.hasEarlierUnresolved(batch), expired: now >= batch.deliveryDeadlineMs,
    });
    switch (outcome.kind) {
      case 'done':
        return this.complete(batch, outcome.baseOffset);
      case 'retry': {
        batch.lastError = outcome.error;
        const r = { retries: Number.MAX_SAFE_INTEGER, initialRetryTimeMs: Math.max(1, this.deps.opts.retryBackoffMs), maxRetryTimeMs: this.deps.opts.retryBackoffMaxMs };
        batch.retryAtMs = now + backoffMs(batch.attempts - 1, r, () => this.deps.rng.next());
        this.deps.client.noteError(outcome.error);
        this.refreshMetadata(now);
        this.deps.logger.debug({ topic: batch.topic, partition: batch.partition, sequence: batch.baseSequence, attempt: batch.attempts, err: outcome.error.message }, 'produce retry');
        return q.requeue(batch);
      }
      case 'split': {
        const pieces = this.deps.acc.splitRefused(q, batch);
        this.deps.logger.info({ topic: batch.topic, partition: batch.partition, records: batch.recordCount, bytes: batch.recordBytes, pieces: pieces.length, err: outcome.error.message },
          'batch refused as too large: split, and batches to this topic made smaller');
        return;
      }
      case 'reencode':
        // In a transaction a refused sequence or epoch cannot be cured by a new epoch of our own:
        // the transaction must abort (EndTxn's epoch bump then restarts the sequences).
        if (this.deps.txn) return this.fail(batch, outcome.error);
        batch.lastError = outcome.error;
        this.renewNeeded = true;
        this.deps.logger.info({ topic: batch.topic, partition: batch.partition, err: outcome.error.message }, 'producer sequence rejected: renewing the producer epoch');
        return q.requeueForReencode(batch);
      case 'fail':
        if (outcome.hole && !this.deps.txn) this.renewNeeded = true;
        return this.fail(batch, outcome.error);
    }
  }

  private complete(batch: ProducerBatch, baseOffset: number): void {
    batch.records.forEach((r, i) => r.resolve({ topic: batch.topic, partition: batch.partition, offset: baseOffset < 0 ? -1 : baseOffset + i }));
    this.deps.acc.batchDone(batch);
  }

  private fail(batch: ProducerBatch, error: SluiceError): void {
    for (const r of batch.records) r.reject(error);
    this.deps.acc.batchDone(batch);
    this.deps.txn?.onBatchFailed(error);
  }

  /**
   * Fails queued batches whose delivery timeout passed; returns the next deadline of a queued batch.
   * Per partition O(expired + 1) (PartitionQueue.takeExpired): a pass used to scan every queued batch.
   */
  private expireQueued(now: number): number {
    let next = Infinity;
    const expired = this.expired;
    for (const q of this.deps.acc.partitions.values()) {
      next = Math.min(next, q.takeExpired(now, expired));
      if (expired.length === 0) continue;
      const batches = expired.splice(0);
      for (const batch of batches) {
        this.deps.acc.sealNow(batch);
        if (batch.hasSequence && !this.deps.txn) this.renewNeeded = true;
        const last = batch.lastError ?? this.lastInitError;
        this.fail(batch, new SluiceError(Errors.REQUEST_TIMED_OUT,
          `${batch.topic}-${batch.partition}: not acknowledged within deliveryTimeoutMs ${this.deps.opts.deliveryTimeoutMs}${last ? ` (last error: ${last.message})` : ''}`,
          { topic: batch.topic, partition: batch.partition }));
      }
    }
    return next;
  }

  private failQueued(error: SluiceError): void {
    for (const q of this.deps.acc.partitions.values()) {
      for (const batch of q.queue.splice(0)) this.fail(batch, error);
    }
  }

  // ---- identity (idempotence) --------------------------------------------------------

  /**
   * Starts InitProducerId when a batch waits for an identity: the first one,
   * or the next epoch once nothing of the current one is unresolved.
   * Returns when to try again after a failure.
   */
  private manageIdentity(now: number): number {
    if (!this.deps.opts.idempotent || this.initializing || this.deps.txn) return Infinity;
    if (this.identity !== null && !this.renewNeeded) return Infinity;
    const queues = [...this.deps.acc.partitions.values()];
    if (!queues.some((q) => q.queue.length > 0)) return Infinity; // nothing waits for it
    if (queues.some((q) => q.holdsUnresolvedSequences)) return Infinity; // resolve the old epoch's batches first
    if (now < this.initRetryAtMs) return this.initRetryAtMs;
    this.startInit();
    return Infinity;
  }

  private startInit(): void {
    this.initializing = true;
    const current = this.identity ? { producerId: Number(this.identity.producerId), producerEpoch: this.identity.producerEpoch } : undefined;
    const { client } = this.deps;
    client.retry('InitProducerId', async () => (await client.anyConnection()).initProducerId(current))
      .then((r) => {
        this.identity = { producerId: BigInt(r.producerId), producerEpoch: r.producerEpoch };
        for (const q of this.deps.acc.partitions.values()) q.resetSequences();
        this.renewNeeded = false;
        this.initAttempts = 0;
        this.lastInitError = null;
        this.deps.logger.info({ producerId: r.producerId, producerEpoch: r.producerEpoch }, 'producer identity');
      }, (err: unknown) => {
        const error = asSluiceError(err);
        this.lastInitError = error;
        this.initAttempts++;
        const r = { retries: Number.MAX_SAFE_INTEGER, initialRetryTimeMs: Math.max(1, this.deps.opts.retryBackoffMs), maxRetryTimeMs: this.deps.opts.retryBackoffMaxMs };
        this.initRetryAtMs = this.deps.clock.monotonicMs() + backoffMs(this.initAttempts, r, () => this.deps.rng.next());
        this.deps.logger.warn({ err: error.message }, 'InitProducerId failed');
        // Nothing of ours is unresolved now, so failing the waiting batches loses nothing acknowledged.
        if (!error.retriable) this.failQueued(error);
      })
      .finally(() => {
        this.initializing = false;
        this.wake();
      });
  }

  // ---- metadata ----------------------------------------------------------------------

  /** Asks the Client for fresh metadata (one request at a time, at most once per retryBackoffMs); returns when it may ask again. */
  private refreshMetadata(now: number): number {
    if (this.refreshing) return Infinity;
    if (now < this.refreshAllowedAtMs) return this.refreshAllowedAtMs;
    this.refreshAllowedAtMs = now + Math.max(1, this.deps.opts.retryBackoffMs);
    this.refreshing = true;
    let refresh: Promise<void>;
    try {
      refresh = this.deps.client.refreshMetadata();
    } catch (err) {
      refresh = Promise.reject(err);
    }
    refresh.catch((err: unknown) => this.deps.logger.debug({ err: (err as Error).message }, 'producer metadata refresh failed'))
      .finally(() => {
        this.refreshing = false;
        this.wake();
      });
    return Infinity;
  }
}

/** A thrown value as a SluiceError; assertion failures (bugs) are rethrown. */
function asSluiceError(err: unknown): SluiceError {
  if (isSluiceError(err)) return err;
  if (err instanceof AssertionError) throw err;
  return new SluiceError(Errors.NETWORK_EXCEPTION, err instanceof Error ? err.message : String(err));
}
