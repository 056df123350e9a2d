// The public face of a transactional producer (KafkaJS' shape, Kafka's
// semantics: KIP-98, KIP-447, KIP-890). A Producer built with a
// `transactionalId` hands out one Transaction at a time:
//
//   const tx = await producer.transaction();
//   await tx.send({ topic, messages });              // as producer.send
//   await tx.sendOffsets({ consumer, topics });      // read-process-write (KIP-447)
//   await tx.commit();                               // or tx.abort()
//
// Everything sent in a transaction, and the offsets, become visible to
// read_committed consumers together at commit, or never (abort). The rules
// and the error classes are those of Kafka's Java client (transaction-manager.ts):
// - fatal (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH, TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
//   TRANSACTION_COORDINATOR_FENCED, INVALID_TXN_STATE, ...): every later call
//   throws the same error; close the producer (a newer instance took over).
// - abortable (a record that could not be written, TRANSACTION_ABORTABLE,
//   TOPIC/GROUP_AUTHORIZATION_FAILED, a stale consumer generation in
//   sendOffsets, ...): send/sendOffsets/commit throw; call abort(), then start
//   a new transaction.
// - retriable (the coordinator moving or loading, CONCURRENT_TRANSACTIONS,
//   lost connections): retried inside, with backoff, until maxBlockMs.

import type { RecordMetadata } from './producer-batch.js';
import type { ProducerBatchRecord, ProducerRecord } from './producer.js';
import type { SluiceError } from '../util/errors.js';

/** The group a consumer belongs to now (Kafka's ConsumerGroupMetadata, KIP-447). */
export interface ConsumerGroupMetadata {
  readonly groupId: string;
  /** -1 outside the group's membership (an assign() consumer): the coordinator then checks no generation. */
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
}

/** Anything that can say which group generation consumed the records (a Consumer). */
export interface GroupMetadataSource {
  groupMetadata(): ConsumerGroupMetadata;
}

export interface SendOffsetsInput {
  /**
   * The consumer that read the input (KIP-447): its group, generation and
   * member id go with the offsets, so a zombie consumer's commit is refused
   * (ILLEGAL_GENERATION / FENCED_INSTANCE_ID: abortable).
   */
  readonly consumer?: GroupMetadataSource;
  /** KafkaJS' form: the group only (no generation check). Exactly one of consumer / consumerGroupId. */
  readonly consumerGroupId?: string;
  /** Offsets to commit: the NEXT offset to read, as Consumer.commitOffsets takes them. */
  readonly topics: ReadonlyArray<{
    readonly topic: string;
    readonly partitions: ReadonlyArray<{ readonly partition: number; readonly offset: number; readonly metadata?: string | null }>;
  }>;
}

export interface Transaction {
  /** Sends records in this transaction; resolves once they are written (not yet visible to read_committed readers). */
  send(req: ProducerRecord): Promise<RecordMetadata[]>;
  sendBatch(req: ProducerBatchRecord): Promise<RecordMetadata[]>;
  /** Adds consumed offsets to the transaction: they are committed for the group if and only if the transaction commits. */
  sendOffsets(req: SendOffsetsInput): Promise<void>;
  /** Flushes, then commits. Throws the abortable error if any part failed (then call abort()). Retry it after a timeout. */
  commit(): Promise<void>;
  /** Drops what was buffered, waits for requests in flight, and aborts. */
  abort(): Promise<void>;
  /** True until commit() or abort() completes (and false once the producer hit a fatal error). */
  isActive(): boolean;
}

/** Where a transactional producer stands (Kafka's TransactionManager states). */
export type TransactionState =
  | 'uninitialized' | 'initializing' | 'ready' | 'in-transaction' | 'committing' | 'aborting' | 'abortable-error' | 'fatal-error';

export interface TransactionStatus {
  readonly state: TransactionState;
  /** The error behind an abortable or fatal state. */
  readonly error: SluiceError | null;
  readonly producerId: number;
  readonly producerEpoch: number;
}
