// The transactional producer's shell: talks to the transaction coordinator
// (and, for sendOffsets, the group coordinator) and tells the Sender which
// partitions may be written. The rules (states, error classes) are pure, in
// txn-rules.ts; this file does the requests.
//
// The protocol, in order (KIP-98 with KIP-447 and KIP-890's epoch bump):
//   1. FindCoordinator(keyType 1) → the broker leading the id's __transaction_state partition;
//      InitProducerId { transactionalId, transactionTimeoutMs } there → producer id and epoch.
//      This fences every older producer of the id and finishes its open transaction.
//   2. Per transaction: before the first batch to a partition, AddPartitionsToTxn
//      (partitions waiting meanwhile are sent together; one request at a time).
//      The Sender holds such batches back until their partition is added
//      (partitionAdded), then sends them with the transactional flag.
//   3. sendOffsets: AddOffsetsToTxn(group) to the transaction coordinator, then
//      TxnOffsetCommit to the group's coordinator with the consumer's generation.
//   4. commit: flush (every batch acknowledged, or the transaction is
//      abortable); EndTxn { committed, bumpEpoch: true } → the epoch (maybe a new
//      producer id) the next transaction uses; sequences restart at 0. abort:
//      fail what is not sent yet, wait for what is in flight, EndTxn(abort).
//      A transaction that asked the coordinator for nothing ends without EndTxn, as in Kafka.
//
// Retries: 'retry' and 'refind' errors (txn-rules.ts) are retried with
// exponential backoff and jitter (retryBackoffMs .. retryBackoffMaxMs; from
// 20 ms for the first AddPartitionsToTxn that meets the previous transaction's
// markers still being written, retryInitialBackoffMs) until
// maxBlockMs has passed, after which the call throws REQUEST_TIMED_OUT with
// the last error and the state stays where it was (commit()/abort() resume).
//
// Invariants: a batch is sent only for a partition in `added` (the
// coordinator confirmed it is in this transaction); `added` and
// `offsetsAdded` are cleared only once EndTxn answered; the identity changes
// only at InitProducerId and EndTxn, when no batch is unresolved.

import { Errors, SluiceError, isSluiceError } from '../util/errors.js';
import { AssertionError } from '../util/assert.js';
import { COORDINATOR_KEY_TRANSACTION, type TopicPartitions } from '../protocol/apis/transactions.js';
import { backoffMs, type Client, type ClientLogger } from './client.js';
import type { BrokerConnection } from './broker-connection.js';
import { CoordinatorLink } from './consumer-coordinator.js';
import type { ProducerIdentity } from './producer-batch.js';
import type { ResolvedProducerOptions } from './producer-options.js';
import { errorFromCode } from './responses.js';
import type { SendOffsetsInput, TransactionStatus } from './transaction.js';
import { classifyTxnError, OPERATION_NOT_ATTEMPTED_CODE, retryInitialBackoffMs, TxnStateMachine, type TxnApi, type TxnErrorClass } from './txn-rules.js';
import type { TxnGate } from './producer-sender.js';
import type { Clock } from '../util/clock.js';
import type { Rng } from '../util/rng.js';

/** What the manager needs from its Producer. */
export interface TxnProducerHost {
  /** Resolves once every record appended so far is acknowledged or failed. */
  flush(): Promise<void>;
  /** Batches from now on carry this identity (sequences restart at 0). */
  adoptIdentity(identity: ProducerIdentity): void;
  wakeSender(): void;
}

export interface TransactionManagerDeps {
  readonly client: Client;
  readonly opts: ResolvedProducerOptions & { readonly transactionalId: string };
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: ClientLogger;
  readonly host: TxnProducerHost;
}

/** A final answer inside a retried request: not retried, the state takes it. */
class TxnFailure {
  constructor(readonly kind: 'fatal' | 'abortable', readonly error: SluiceError) {}
}

/** The request is no longer wanted (the transaction moved on); not an error of its own. */
class Cancelled {}

const partitionKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

export class TransactionManager implements TxnGate {
  readonly transactionalId: string;
  private readonly sm = new TxnStateMachine();
  private readonly coord: CoordinatorLink;
  private readonly groupLinks = new Map<string, CoordinatorLink>();
  private identity: { producerId: number; producerEpoch: number } | null = null;
  /** Partitions the coordinator confirmed in the open transaction. */
  private readonly added = new Set<string>();
  /** Partitions a batch waits for, not yet confirmed. */
  private readonly pending = new Map<string, { topic: string; partition: number }>();
  private addInFlight: Promise<void> | null = null;
  private offsetsAdded = false;
  /**
   * An AddPartitionsToTxn or AddOffsetsToTxn went out in this transaction,
   * answered or not: the coordinator may hold an open transaction, so it is
   * ended with EndTxn (Sluice's coordinator ends an empty one with bumpEpoch).
   */
  private touched = false;
  /** While aborting: what queued (unsent) batches fail with. */
  private abortFailure: SluiceError | null = null;
  private initializing: Promise<void> | null = null;

  constructor(private readonly deps: TransactionManagerDeps) {
    this.transactionalId = deps.opts.transactionalId;
    this.coord = new CoordinatorLink(deps.client, this.transactionalId, COORDINATOR_KEY_TRANSACTION);
  }

  get status(): TransactionStatus {
    return {
      state: this.sm.state, error: this.sm.error,
      producerId: this.identity?.producerId ?? -1, producerEpoch: this.identity?.producerEpoch ?? -1,
    };
  }

  get transactionNumber(): number {
    return this.sm.transactionNumber;
  }

  // ---- the Sender's gate -------------------------------------------------------

  get queuedFailure(): SluiceError | null {
    const s = this.sm.state;
    if (s === 'abortable-error' || s === 'fatal-error') return this.sm.error;
    return s === 'aborting' ? this.abortFailure : null;
  }

  partitionAdded(topic: string, partition: number): boolean {
    const key = partitionKey(topic, partition);
    if (this.added.has(key)) return true;
    if (!this.sm.sending) return false;
    if (!this.pending.has(key)) {
      this.pending.set(key, { topic, partition });
      this.kickAdd();
    }
    return false;
  }

  onBatchFailed(error: SluiceError): void {
    if (this.sm.state === 'aborting') return;
    const kind = classifyTxnError('Produce', error);
    if (kind === 'fatal' || kind === 'abortable') this.failWith(new TxnFailure(kind, error));
  }

  /** A send() failed before all its records were buffered. */
  onSendFailed(err: unknown): void {
    if (isSluiceError(err)) this.onBatchFailed(err);
  }

  // ---- the application's calls ----------------------------------------------------

  /** Throws unless records may be appended to the open transaction now (called per send, not per record). */
  checkCanSend(txnNumber?: number): void {
    if (txnNumber !== undefined && txnNumber !== this.sm.transactionNumber) {
      throw new SluiceError(Errors.INVALID_TXN_STATE, 'this transaction is over (committed or aborted): begin a new one');
    }
    if (this.sm.acceptsSends) return;
    if (this.sm.error) throw this.sm.error;
    throw new SluiceError(Errors.INVALID_TXN_STATE, this.sm.state === 'ready' || this.sm.state === 'uninitialized'
      ? 'a transactional producer sends inside a transaction: await producer.transaction() first'
      : `cannot send while the transaction is ${this.sm.state}`);
  }

  async init(): Promise<void> {
    if (this.initializing) return this.initializing;
    const s = this.sm.state;
    if (s === 'fatal-error') throw this.sm.error!;
    if (s !== 'uninitialized') return;
    this.sm.to('initializing');
    this.initializing = (async () => {
      try {
        const res = await this.request('InitProducerId', (conn) => conn.initTransactionalProducerId({
          transactionalId: this.transactionalId, transactionTimeoutMs: this.deps.opts.transactionTimeoutMs,
        }));
        this.adopt(res.producerId, res.producerEpoch);
        this.sm.to('ready');
        this.deps.logger.info({ transactionalId: this.transactionalId, producerId: res.producerId, producerEpoch: res.producerEpoch }, 'transactional producer initialized');
      } catch (err) {
        if (err instanceof TxnFailure) {
          this.sm.fail('fatal', err.error);
          throw err.error;
        }
        this.sm.initFailed();
        throw err;
      }
    })().finally(() => {
      this.initializing = null;
    });
    return this.initializing;
  }

  /** Opens a transaction; returns its number (a handle is current while it is). */
  async begin(): Promise<number> {
    if (this.sm.state === 'uninitialized' || this.sm.state === 'initializing') await this.init();
    if (this.sm.state === 'fatal-error') throw this.sm.error!;
    if (this.sm.state !== 'ready') {
      throw new SluiceError(Errors.INVALID_TXN_STATE, `a transaction is already ${this.sm.state}: commit or abort it first (one transaction at a time)`);
    }
    this.sm.to('in-transaction');
    return this.sm.transactionNumber;
  }

  isActive(txnNumber: number): boolean {
    const s = this.sm.state;
    return txnNumber === this.sm.transactionNumber && (s === 'in-transaction' || s === 'committing' || s === 'aborting' || s === 'abortable-error');
  }

  async sendOffsets(txnNumber: number, input: SendOffsetsInput): Promise<void> {
    this.checkCanSend(txnNumber);
    const meta = groupOf(input);
    const topics = offsetTopics(input);
    if (topics.length === 0) return;
    try {
      // The group's coordinator first: looking it up creates __consumer_offsets if needed, which the
      // transaction coordinator needs to place the group's offsets partition in the transaction.
      const link = this.groupLink(meta.groupId);
      await this.request('FindCoordinator', async () => undefined, link, () => this.sm.acceptsSends);
      await this.request('AddOffsetsToTxn', (conn) => {
        this.touched = true;
        return conn.addOffsetsToTxn({ transactionalId: this.transactionalId, ...this.ids(), groupId: meta.groupId });
      });
      this.offsetsAdded = true;
      await this.request('TxnOffsetCommit', async (conn) => {
        const res = await conn.txnOffsetCommit({
          transactionalId: this.transactionalId, groupId: meta.groupId, ...this.ids(),
          generationId: meta.generationId, memberId: meta.memberId, groupInstanceId: meta.groupInstanceId, topics,
        });
        for (const t of res.topics) {
          for (const p of t.partitions) {
            if (p.errorCode === Errors.NONE.code) continue;
            const e = errorFromCode(p.errorCode, p.errorMessage, { api: 'TxnOffsetCommit', topic: t.name, partition: p.partition, groupId: meta.groupId });
            const kind = classifyTxnError('TxnOffsetCommit', e);
            if (kind === 'fatal' || kind === 'abortable') throw new TxnFailure(kind, e);
            throw e;
          }
        }
      }, link, () => this.sm.acceptsSends);
    } catch (err) {
      throw this.failWith(err);
    }
  }

  async commit(txnNumber: number): Promise<void> {
    this.checkHandle(txnNumber);
    const s = this.sm.state;
    if (s === 'in-transaction') this.sm.to('committing');
    else if (s !== 'committing') throw this.sm.error ?? new SluiceError(Errors.INVALID_TXN_STATE, `cannot commit a transaction that is ${s}`);
    await this.deps.host.flush();
    if (this.sm.state !== 'committing') throw this.sm.error!; // a batch failed: abortable (or fatal)
    await this.addsSettled();
    if (this.sm.state !== 'committing') throw this.sm.error!;
    await this.end(true);
  }

  async abort(txnNumber: number): Promise<void> {
    this.checkHandle(txnNumber);
    const s = this.sm.state;
    if (s === 'in-transaction' || s === 'abortable-error') this.sm.to('aborting');
    else if (s !== 'aborting') throw this.sm.error ?? new SluiceError(Errors.INVALID_TXN_STATE, `cannot abort a transaction that is ${s}`);
    this.abortFailure = new SluiceError(Errors.TRANSACTION_ABORTABLE, 'the transaction was aborted before this record was sent');
    this.deps.host.wakeSender();
    await this.deps.host.flush();
    await this.addsSettled();
    await this.end(false);
    this.abortFailure = null;
  }

  // ---- internals ---------------------------------------------------------------

  private checkHandle(txnNumber: number): void {
    if (this.sm.state === 'fatal-error') throw this.sm.error!;
    if (txnNumber !== this.sm.transactionNumber || this.sm.state === 'ready') {
      throw new SluiceError(Errors.INVALID_TXN_STATE, 'this transaction is over (committed or aborted)');
    }
  }

  private ids(): { producerId: number; producerEpoch: number } {
    if (!this.identity) throw new AssertionError('a transaction request before InitProducerId');
    return this.identity;
  }

  private adopt(producerId: number, producerEpoch: number): void {
    if (this.identity?.producerId === producerId && this.identity.producerEpoch === producerEpoch) return;
    this.identity = { producerId, producerEpoch };
    this.deps.host.adoptIdentity({ producerId: BigInt(producerId), producerEpoch });
  }

  /** EndTxn (when the coordinator knows of the transaction), then ready. */
  private async end(committed: boolean): Promise<void> {
    if (this.added.size > 0 || this.offsetsAdded || this.touched) {
      try {
        const res = await this.request('EndTxn', (conn) => conn.endTxn({ transactionalId: this.transactionalId, ...this.ids(), committed, bumpEpoch: true }));
        // An answer without an epoch (a coordinator that did not bump) keeps ours: sequences then continue.
        if (res.producerId >= 0 && res.producerEpoch >= 0) this.adopt(res.producerId, res.producerEpoch);
      } catch (err) {
        throw this.failWith(err);
      }
    }
    this.added.clear();
    this.pending.clear();
    this.offsetsAdded = false;
    this.touched = false;
    this.sm.to('ready');
    this.deps.logger.debug({ transactionalId: this.transactionalId, committed, producerEpoch: this.identity?.producerEpoch }, 'transaction ended');
  }

  /** Waits for an AddPartitionsToTxn in flight (its partitions must be ended too). */
  private async addsSettled(): Promise<void> {
    while (this.addInFlight) await this.addInFlight;
  }

  private kickAdd(): void {
    if (this.addInFlight || this.pending.size === 0 || !this.sm.sending) return;
    this.addInFlight = this.addPartitions().finally(() => {
      this.addInFlight = null;
      this.kickAdd();
      this.deps.host.wakeSender();
    });
  }

  private async addPartitions(): Promise<void> {
    try {
      await this.request('AddPartitionsToTxn', async (conn) => {
        const wanted = [...this.pending.values()].filter((tp) => !this.added.has(partitionKey(tp.topic, tp.partition)));
        if (wanted.length === 0) return;
        this.touched = true;
        const res = await conn.addPartitionsToTxn({ transactionalId: this.transactionalId, ...this.ids(), topics: byTopic(wanted) });
        let retriable: SluiceError | null = null;
        for (const t of res.results) {
          for (const p of t.partitions) {
            const key = partitionKey(t.name, p.partition);
            if (p.errorCode === Errors.NONE.code) {
              this.added.add(key);
              this.pending.delete(key);
              continue;
            }
            const e = errorFromCode(p.errorCode, p.errorMessage, { api: 'AddPartitionsToTxn', topic: t.name, partition: p.partition });
            const kind = classifyTxnError('AddPartitionsToTxn', e);
            if (kind === 'fatal' || kind === 'abortable') throw new TxnFailure(kind, e);
            if (retriable === null || e.code !== OPERATION_NOT_ATTEMPTED_CODE) retriable = e; // OPERATION_NOT_ATTEMPTED only says another one failed
          }
        }
        if (retriable) throw retriable;
      }, this.coord, () => this.sm.sending);
    } catch (err) {
      if (err instanceof Cancelled) return;
      // Batches wait for these partitions: past maxBlockMs the transaction cannot complete (abortable).
      this.failWith(err instanceof TxnFailure ? err : new TxnFailure('abortable', asSluiceError(err)));
    }
  }

  /**
   * Records a failure in the state and returns the error to throw: a
   * TxnFailure moves the state; a timeout (REQUEST_TIMED_OUT after
   * maxBlockMs) leaves it, so the call can be made again.
   */
  private failWith(err: unknown): SluiceError {
    if (err instanceof Cancelled) return this.sm.error ?? new SluiceError(Errors.INVALID_TXN_STATE, 'the transaction moved on');
    if (err instanceof TxnFailure) {
      if (this.sm.fail(err.kind, err.error)) {
        this.deps.logger.warn({ transactionalId: this.transactionalId, kind: err.kind, err: err.error.message }, 'transaction error');
        this.deps.host.wakeSender();
      }
      return err.error;
    }
    if (isSluiceError(err)) return err;
    throw err;
  }

  private groupLink(groupId: string): CoordinatorLink {
    let link = this.groupLinks.get(groupId);
    if (!link) this.groupLinks.set(groupId, (link = new CoordinatorLink(this.deps.client, groupId)));
    return link;
  }

  /**
   * One coordinator request, retried ('retry', 'refind') with backoff until
   * maxBlockMs; 'fatal'/'abortable' throw a TxnFailure; `wanted` false stops
   * the retries (throws Cancelled).
   */
  private async request<T>(api: TxnApi, fn: (conn: BrokerConnection) => Promise<T>, link = this.coord, wanted: () => boolean = () => true): Promise<T> {
    const { clock, opts, client } = this.deps;
    const deadlineMs = clock.monotonicMs() + opts.maxBlockMs;
    for (let attempt = 0; ; attempt++) {
      if (!wanted()) throw new Cancelled();
      const outcome = await this.attempt(api, fn, link);
      if ('value' in outcome) return outcome.value;
      const { error, kind } = outcome;
      if (kind === 'fatal' || kind === 'abortable') throw new TxnFailure(kind, error);
      if (kind === 'refind') link.invalidate();
      client.noteError(error);
      const left = deadlineMs - clock.monotonicMs();
      if (client.isClosed) throw error;
      if (left <= 0) {
        throw new SluiceError(Errors.REQUEST_TIMED_OUT,
          `${api} for transactional id ${this.transactionalId} did not succeed within maxBlockMs ${opts.maxBlockMs} (last error: ${error.message})`);
      }
      const r = { retries: Number.MAX_SAFE_INTEGER, maxRetryTimeMs: opts.retryBackoffMaxMs,
        initialRetryTimeMs: retryInitialBackoffMs(api, error, this.added.size === 0, opts.retryBackoffMs) };
      const delayMs = Math.max(1, Math.min(left, backoffMs(attempt, r, () => this.deps.rng.next())));
      this.deps.logger.debug({ api, attempt: attempt + 1, err: error.message, delayMs }, 'transaction request retry');
      await client.sleep(delayMs);
    }
  }

  /** One try: the value, or the error with its class (a lookup failure is FindCoordinator's). */
  private async attempt<T>(api: TxnApi, fn: (conn: BrokerConnection) => Promise<T>, link: CoordinatorLink): Promise<{ value: T } | { error: SluiceError; kind: TxnErrorClass }> {
    let conn: BrokerConnection;
    try {
      conn = await link.connection();
    } catch (err) {
      const error = asSluiceError(err);
      return { error, kind: classifyTxnError('FindCoordinator', error) };
    }
    try {
      return { value: await fn(conn) };
    } catch (err) {
      if (err instanceof TxnFailure) throw err;
      const error = asSluiceError(err);
      return { error, kind: classifyTxnError(api, error) };
    }
  }
}

function byTopic(tps: ReadonlyArray<{ topic: string; partition: number }>): TopicPartitions[] {
  const m = new Map<string, number[]>();
  for (const tp of tps) m.set(tp.topic, [...(m.get(tp.topic) ?? []), tp.partition]);
  return [...m].map(([name, partitions]) => ({ name, partitions }));
}

function groupOf(input: SendOffsetsInput): { groupId: string; generationId: number; memberId: string; groupInstanceId: string | null } {
  if ((input.consumer === undefined) === (input.consumerGroupId === undefined)) {
    throw new SluiceError(Errors.INVALID_REQUEST, 'sendOffsets takes exactly one of consumer and consumerGroupId');
  }
  if (input.consumer) return input.consumer.groupMetadata();
  const groupId = input.consumerGroupId!;
  if (typeof groupId !== 'string' || groupId.length === 0) throw new SluiceError(Errors.INVALID_REQUEST, 'consumerGroupId must be a non-empty string');
  return { groupId, generationId: -1, memberId: '', groupInstanceId: null };
}

function offsetTopics(input: SendOffsetsInput): Array<{ name: string; partitions: Array<{ partition: number; committedOffset: number; committedLeaderEpoch: number; metadata: string | null }> }> {
  if (!Array.isArray(input.topics as unknown)) throw new SluiceError(Errors.INVALID_REQUEST, 'sendOffsets needs topics: [{ topic, partitions: [{ partition, offset }] }]');
  return input.topics.filter((t) => t.partitions.length > 0).map((t) => ({
    name: t.topic,
    partitions: t.partitions.map((p) => {
      if (!Number.isSafeInteger(p.partition) || p.partition < 0 || !Number.isSafeInteger(p.offset) || p.offset < 0) {
        throw new SluiceError(Errors.INVALID_REQUEST, `bad offset ${String(p.offset)} for ${t.topic}-${String(p.partition)}`);
      }
      return { partition: p.partition, committedOffset: p.offset, committedLeaderEpoch: -1, metadata: p.metadata ?? null };
    }),
  }));
}

function asSluiceError(err: unknown): SluiceError {
  if (isSluiceError(err)) return err;
  if (err instanceof AssertionError) throw err;
  return new SluiceError(Errors.NETWORK_EXCEPTION, err instanceof Error ? err.message : String(err));
}
