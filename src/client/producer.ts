// The Producer: send records to topics, batched per partition, with
// idempotence on by default. Built on the Client (metadata, connections);
// the parts are:
//   producer-options.ts      options, defaults, INVALID_CONFIG checks
//   partitioners.ts          which partition a record goes to (murmur2 / sticky)
//   producer-accumulator.ts  per-partition batches and the buffer memory bound
//   producer-batch.ts        per-partition queues and the in-order retry rules
//   producer-sender.ts       the I/O loop: requests per broker, answers, identity
//
// Transactions (transactionalId): transaction-manager.ts talks to the
// transaction coordinator; the Sender holds each partition's first batch of
// a transaction until the coordinator has added the partition. Without a
// transactionalId none of that code runs (one null check per send() call).
//
// send() resolves once every one of its records is acknowledged (acks=-1:
// replicated to the ISR), with each record's partition and offset in input
// order; it rejects with the first failure (a typed SluiceError) if any record
// fails. Records of one producer reach each partition in the order send() was
// called: appends are serialized (a send() waiting for buffer memory or
// metadata holds later ones back), and with idempotence retries keep that
// order too (producer-batch.ts).
//
// Keys, values and headers are encoded into their partition's open batch
// when send() appends them (producer-accumulator.ts), which may be after
// send() returns (it waited for metadata, memory or an earlier send()): the
// documented rule stays "do not modify a buffer before send() resolves".

import { Errors, SluiceError, isSluiceError } from '../util/errors.js';
import type { Clock } from '../util/clock.js';
import type { Rng } from '../util/rng.js';
import { RECORD_BATCH_HEADER_BYTES } from '../record/batch-header.js';
import type { Client, TopicInfo } from './client.js';
import type { Message, MessageBytes } from './records.js';
import { DefaultPartitioner, type Partitioner, type PartitionerInput } from './partitioners.js';
import { RecordAccumulator } from './producer-accumulator.js';
import type { Acks, RecordMetadata } from './producer-batch.js';
import { resolveProducerOptions, type ProducerOptions, type ResolvedProducerOptions } from './producer-options.js';
import { Sender } from './producer-sender.js';
import { SendResults, SingleSend } from './producer-results.js';
import { utf8Encode, utf8Length } from '../util/bytes.js';
import type { Transaction, TransactionStatus } from './transaction.js';
import { TransactionManager } from './transaction-manager.js';

export type { ProducerOptions } from './producer-options.js';
export type { RecordMetadata, Acks } from './producer-batch.js';
export type { Transaction, SendOffsetsInput, ConsumerGroupMetadata, TransactionState, TransactionStatus } from './transaction.js';

export interface ProducerMessage extends Message {
  /** Goes to this partition; the partitioner is not asked. */
  readonly partition?: number;
}

export interface ProducerRecord {
  readonly topic: string;
  readonly messages: readonly ProducerMessage[];
  /** Default the producer's acks. An idempotent producer accepts only -1. */
  readonly acks?: Acks;
}

export interface ProducerBatchRecord {
  readonly topicMessages: ReadonlyArray<{ readonly topic: string; readonly messages: readonly ProducerMessage[] }>;
  readonly acks?: Acks;
}

/** Upper bound of the bytes a varint-framed record adds around its key, value and headers. */
const RECORD_FRAMING_BYTES = 5 + 1 + 10 + 5 + 5 + 5 + 5;
const HEADER_FRAMING_BYTES = 5 + 5;

export class Producer {
  private readonly opts: ResolvedProducerOptions;
  private readonly clock: Clock;
  private readonly partitioner: Partitioner;
  private readonly acc: RecordAccumulator;
  private readonly sender: Sender;
  /** Appends run one send() at a time, in call order. */
  private appendChain: Promise<void> = Promise.resolve();
  /**
   * send() calls on appendChain whose appends have not finished: while any
   * is, a new call takes the chain too (order), not the synchronous fast path.
   */
  private appendsPending = 0;
  /** The partitioner's keyless input per TopicInfo (the Client replaces the object on every refresh). */
  private readonly keylessInputs = new WeakMap<TopicInfo, KeylessInput>();
  private closing: Promise<void> | null = null;
  /** Set for a transactional producer (transactionalId). */
  private readonly txn: TransactionManager | null;

  constructor(private readonly client: Client, opts: ProducerOptions = {}) {
    this.opts = resolveProducerOptions(opts);
    this.clock = opts.clock ?? client.clock;
    const rng: Rng = opts.rng ?? client.rng.fork();
    this.partitioner = opts.partitioner ?? new DefaultPartitioner(rng.fork());
    this.acc = new RecordAccumulator(this.opts, this.partitioner, this.clock, client.scheduler);
    const transactionalId = this.opts.transactionalId;
    this.txn = transactionalId === null ? null : new TransactionManager({
      client, opts: { ...this.opts, transactionalId }, clock: this.clock, rng: rng.fork(), logger: client.logger,
      host: { flush: () => this.flush(), adoptIdentity: (id) => this.sender.adoptIdentity(id), wakeSender: () => this.sender.wake() },
    });
    this.sender = new Sender({
      client, acc: this.acc, opts: this.opts, clock: this.clock, scheduler: client.scheduler, rng, logger: client.logger,
      ...(this.txn ? { txn: this.txn } : {}),
    });
  }

  /** The producer id and epoch batches carry now (null before the first send, and without idempotence). */
  get identity(): { producerId: bigint; producerEpoch: number } | null {
    return this.sender.producerIdentity;
  }

  /** Record bytes buffered now (reserved from bufferBytesMax until their batch is done). */
  get bufferedBytes(): number {
    return this.acc.pool.usedBytes;
  }

  /** Sends `messages` to `topic`; resolves with each record's partition and offset, in input order. */
  send(req: ProducerRecord): Promise<RecordMetadata[]> {
    try {
      const sent = this.trySendNow(req);
      if (sent !== null) return sent;
    } catch (err) {
      return Promise.reject(err);
    }
    return this.sendBatch({ topicMessages: [{ topic: req.topic, messages: req.messages }], ...(req.acks === undefined ? {} : { acks: req.acks }) });
  }

  /** Several topics at once: results are in input order, topic by topic. */
  async sendBatch(req: ProducerBatchRecord): Promise<RecordMetadata[]> {
    const acks = this.checkAcks(req.acks);
    if (this.closing) throw new SluiceError(Errors.NETWORK_EXCEPTION, 'the producer is closed');
    if (this.txn !== null) this.txn.checkCanSend();
    const results = new SendResults();
    this.appendsPending++;
    const appended = this.appendChain.then(async () => {
      try {
        for (const t of req.topicMessages) await this.appendTopic(t.topic, t.messages, acks, results);
      } finally {
        this.appendsPending--;
      }
    });
    this.appendChain = appended.catch(() => undefined);
    // In a transaction, a send() that failed before all its records were buffered (too large, no
    // metadata within maxBlockMs, ...) leaves the transaction incomplete: it must not commit (as Kafka's).
    if (this.txn !== null) appended.catch((err: unknown) => this.txn?.onSendFailed(err));
    await appended;
    results.close();
    return results.done;
  }

  /**
   * The fast path of the common call, send() of one record: appended at once,
   * with no promise but the result's, when nothing has to wait — no earlier
   * send() still appending (order), fresh metadata that knows the partition,
   * buffer memory free at once. Returns null when the call must take the
   * general path, which then does every check again; throws what that path
   * would reject with.
   */
  private trySendNow(req: ProducerRecord): Promise<RecordMetadata[]> | null {
    const messages = req.messages;
    if (this.appendsPending > 0 || this.closing || !Array.isArray(messages) || messages.length !== 1) return null;
    const topic = req.topic;
    const info = typeof topic === 'string' ? this.client.freshTopic(topic) : undefined;
    const m = messages[0] as ProducerMessage;
    if (info === undefined || m === null || typeof m !== 'object' || (m.partition !== undefined && m.partition >= info.partitions.length)) return null;
    const acks = this.checkAcks(req.acks);
    if (this.txn === null) return this.appendNow(topic, info, m, acks);
    this.txn.checkCanSend();
    try {
      return this.appendNow(topic, info, m, acks);
    } catch (err) {
      this.txn.onSendFailed(err); // as the general path: a record that failed to buffer leaves the transaction incomplete
      throw err;
    }
  }

  /** One record appended now, or null if its buffer memory is not free at once (nothing is reserved then). */
  private appendNow(topic: string, info: TopicInfo, m: ProducerMessage, acks: Acks): Promise<RecordMetadata[]> | null {
    checkMessage(m);
    const key = keyBytes(m.key);
    const bytes = estimateRecordBytes(key, m);
    this.checkRecordBytes(bytes, topic);
    // The clock is read only for a record without a timestamp.
    const timestampMs = m.timestamp ?? this.timestampNow();
    if (!this.acc.pool.tryReserve(bytes)) return null;
    let partition: number;
    try {
      partition = this.partitionFor(m, key, this.keylessInput(topic, info), acks, timestampMs);
    } catch (err) {
      this.acc.pool.release(bytes);
      throw err;
    }
    const pending = new SingleSend();
    if (this.acc.append(topic, partition, acks, pending, bytes, key, m.value ?? null, m.headers, timestampMs)) this.sender.wake();
    return pending.done;
  }

  /** The transactional id (null: not a transactional producer). */
  get transactionalId(): string | null {
    return this.opts.transactionalId;
  }

  /**
   * Transactional producers: registers the transactional id with its
   * coordinator (InitProducerId), which fences any older producer with the
   * same id and finishes its open transaction. transaction() does it on first
   * use; call it at start-up to fence zombies before doing anything else.
   */
  async initTransactions(): Promise<void> {
    await this.txnManager().init();
  }

  /**
   * Begins a transaction (initTransactions() first if it was not called).
   * One at a time: commit or abort it before the next. Records sent with
   * producer.send() while it is open belong to it too (as in Kafka's Java
   * client); outside a transaction a transactional producer refuses to send.
   */
  async transaction(): Promise<Transaction> {
    const txn = this.txnManager();
    if (this.closing) throw new SluiceError(Errors.NETWORK_EXCEPTION, 'the producer is closed');
    const n = await txn.begin();
    return {
      send: async (req) => {
        txn.checkCanSend(n);
        return this.send(req);
      },
      sendBatch: async (req) => {
        txn.checkCanSend(n);
        return this.sendBatch(req);
      },
      sendOffsets: (req) => txn.sendOffsets(n, req),
      commit: () => txn.commit(n),
      abort: () => txn.abort(n),
      isActive: () => txn.isActive(n),
    };
  }

  /** A transactional producer's state (uninitialized, ready, in-transaction, ..., fatal-error), with its producer id and epoch. */
  get transactionStatus(): TransactionStatus | null {
    return this.txn?.status ?? null;
  }

  private txnManager(): TransactionManager {
    if (this.txn === null) throw new SluiceError(Errors.INVALID_CONFIG, 'not a transactional producer: set transactionalId');
    return this.txn;
  }

  /** Sends everything buffered now, ignoring linger, and resolves once all of it is acknowledged or failed. */
  async flush(): Promise<void> {
    await this.appendChain;
    await this.acc.flush(() => this.sender.wake());
  }

  /** Refuses new sends, flushes, and stops. The Client stays open (it may be shared). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        await this.flush();
      } finally {
        this.acc.pool.failWaiters(new SluiceError(Errors.NETWORK_EXCEPTION, 'the producer is closed'));
        this.sender.stop();
      }
    })();
    return this.closing;
  }

  private checkAcks(acks: Acks | undefined): Acks {
    const a = acks ?? this.opts.acks;
    if (a !== -1 && a !== 0 && a !== 1) throw new SluiceError(Errors.INVALID_CONFIG, `acks must be -1 (all), 0 or 1, got ${String(a)}`);
    if (this.opts.idempotent && a !== -1) throw new SluiceError(Errors.INVALID_CONFIG, 'an idempotent producer sends with acks=-1 (all) only');
    return a;
  }

  private async appendTopic(topic: string, messages: readonly ProducerMessage[], acks: Acks, out: SendResults): Promise<void> {
    if (typeof topic !== 'string' || topic.length === 0) throw new SluiceError(Errors.INVALID_TOPIC, 'topic must be a non-empty string');
    if (!Array.isArray(messages)) throw new SluiceError(Errors.INVALID_REQUEST, 'messages must be an array');
    if (messages.length === 0) return;
    const deadlineMs = this.clock.monotonicMs() + this.opts.maxBlockMs;
    let info = await this.topicInfo(topic, deadlineMs);
    // Per call, not per record: what the partitioner is asked, and the default timestamp (read again after a wait).
    let choice = this.keylessInput(topic, info);
    let nowMs = this.timestampNow();
    let wake = false;
    for (const m of messages) {
      checkMessage(m);
      const key = keyBytes(m.key);
      const bytes = estimateRecordBytes(key, m);
      this.checkRecordBytes(bytes, topic);
      const wait = this.acc.pool.tryReserve(bytes) ? null : this.acc.pool.reserve(bytes, deadlineMs - this.clock.monotonicMs());
      if (wait) {
        this.sender.wake(); // let buffered batches go: they free the memory
        await wait;
        info = this.client.cachedTopic(topic) ?? info;
        choice = this.keylessInput(topic, info);
        nowMs = this.timestampNow();
      }
      let partition: number;
      try {
        if (m.partition !== undefined && m.partition >= info.partitions.length) { // created since?
          info = await this.client.topic(topic, { refresh: true });
          choice = this.keylessInput(topic, info);
        }
        partition = this.partitionFor(m, key, choice, acks, m.timestamp ?? nowMs);
      } catch (err) {
        this.acc.pool.release(bytes);
        throw err;
      }
      if (this.acc.append(topic, partition, acks, out.add(), bytes, key, m.value ?? null, m.headers, m.timestamp ?? nowMs)) wake = true;
    }
    if (wake) this.sender.wake();
  }

  private checkRecordBytes(bytes: number, topic: string): void {
    if (RECORD_BATCH_HEADER_BYTES + bytes > this.opts.requestBytesMax) {
      throw new SluiceError(Errors.MESSAGE_TOO_LARGE, `a record of ~${bytes} bytes exceeds requestBytesMax ${this.opts.requestBytesMax}`, { topic });
    }
  }

  private keylessInput(topic: string, info: TopicInfo): KeylessInput {
    let input = this.keylessInputs.get(info);
    if (input === undefined || input.topic !== topic) {
      input = partitionerInput(topic, info);
      this.keylessInputs.set(info, input);
    }
    return input;
  }

  /** A record timestamp: whole milliseconds, whatever the clock's resolution (a simulated or offset clock may read fractions). */
  private timestampNow(): number {
    return Math.floor(this.clock.nowMs());
  }

  /** Topic metadata, waiting (until the deadline) for a topic being created. */
  private async topicInfo(topic: string, deadlineMs: number): Promise<TopicInfo> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.client.topic(topic);
      } catch (err) {
        const left = deadlineMs - this.clock.monotonicMs();
        if (!isSluiceError(err) || !err.retriable || left <= 0) throw err;
        await this.client.sleep(Math.max(1, Math.min(left, this.opts.retryBackoffMs * 2 ** Math.min(attempt, 10), this.opts.retryBackoffMaxMs)));
      }
    }
  }

  private partitionFor(m: ProducerMessage, key: Uint8Array | null, choice: KeylessInput, acks: Acks, timestampMs: number): number {
    const { topic, partitionCount: count } = choice;
    if (m.partition !== undefined) {
      if (!Number.isSafeInteger(m.partition) || m.partition < 0) throw new SluiceError(Errors.INVALID_PARTITIONS, `bad partition ${m.partition}`, { topic });
      if (m.partition >= count) throw new SluiceError(Errors.UNKNOWN_TOPIC_OR_PARTITION, `topic ${topic} has no partition ${m.partition}`, { topic, partition: m.partition });
      return m.partition;
    }
    const input: PartitionerInput = key === null ? choice : { ...choice, key };
    let partition = this.partitioner.partition(input);
    if (key === null && this.acc.openBatchRefuses(topic, partition, acks, null, m.value, m.headers, timestampMs)) {
      // KIP-480: the sticky batch is full — close it so the sticky partition moves on, and ask again.
      this.acc.sealOpen(topic, partition);
      partition = this.partitioner.partition(input);
    }
    if (!(Number.isSafeInteger(partition) && partition >= 0 && partition < count)) {
      throw new SluiceError(Errors.INVALID_PARTITIONS, `the partitioner chose partition ${partition} of ${count}`, { topic });
    }
    return partition;
  }
}

/** The partitioner's input for a keyless record of `topic` (keyed ones add their key). */
type KeylessInput = PartitionerInput & { readonly key: null };

function partitionerInput(topic: string, info: TopicInfo): KeylessInput {
  const available = info.partitions.filter((p) => p !== undefined && p.leader >= 0).map((p) => p.partition);
  return { topic, key: null, partitionCount: info.partitions.length, availablePartitions: available };
}

function checkBytes(what: string, v: unknown): void {
  if (v !== undefined && v !== null && typeof v !== 'string' && !(v instanceof Uint8Array)) {
    throw new SluiceError(Errors.INVALID_REQUEST, `message ${what} must be a string, a Uint8Array or null`);
  }
}

/** Timestamps within ±(2^52 - 1) ms: any two differ by a safe integer (a record's timestamp delta in its batch). */
const TIMESTAMP_ABS_MAX = 2 ** 52 - 1;

/** Throws INVALID_REQUEST / INVALID_TIMESTAMP for a message the batch encoder cannot take. */
function checkMessage(m: ProducerMessage): void {
  if (m === null || typeof m !== 'object') throw new SluiceError(Errors.INVALID_REQUEST, 'a message must be an object');
  checkBytes('key', m.key);
  checkBytes('value', m.value);
  if (m.headers !== undefined) {
    if (Array.isArray(m.headers)) {
      for (const h of m.headers as ReadonlyArray<{ key: unknown; value: unknown }>) {
        if (typeof h?.key !== 'string') throw new SluiceError(Errors.INVALID_REQUEST, 'a header key must be a string');
        checkBytes(`header ${h.key}`, h.value);
      }
    } else {
      for (const [k, v] of Object.entries(m.headers)) checkBytes(`header ${k}`, v);
    }
  }
  if (m.timestamp !== undefined && !(Number.isSafeInteger(m.timestamp) && Math.abs(m.timestamp) <= TIMESTAMP_ABS_MAX)) {
    throw new SluiceError(Errors.INVALID_TIMESTAMP, `bad timestamp ${String(m.timestamp)}`);
  }
}

/** The key as bytes (what the partitioner hashes and the batch holds). */
function keyBytes(key: MessageBytes | undefined): Uint8Array | null {
  if (key === undefined || key === null) return null;
  return typeof key === 'string' ? utf8Encode(key) : key;
}

function bytesLength(b: MessageBytes | undefined): number {
  if (b === undefined || b === null) return 0;
  return typeof b === 'string' ? utf8Length(b) : b.length;
}

/** An upper bound of the record's encoded size (what the buffer memory reserves and the batchBytes check adds). */
export function estimateRecordBytes(key: Uint8Array | null, m: Message): number {
  let n = RECORD_FRAMING_BYTES + (key?.length ?? 0) + bytesLength(m.value);
  const headers = m.headers;
  if (headers === undefined) return n;
  if (Array.isArray(headers)) {
    for (const h of headers as ReadonlyArray<{ key: string; value: MessageBytes }>) n += HEADER_FRAMING_BYTES + utf8Length(h.key) + bytesLength(h.value);
  } else {
    for (const [k, v] of Object.entries(headers as Readonly<Record<string, MessageBytes>>)) n += HEADER_FRAMING_BYTES + utf8Length(k) + bytesLength(v);
  }
  return n;
}
