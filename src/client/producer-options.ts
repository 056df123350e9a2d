// The Producer's options: every default in one place (names follow Kafka's
// producer configs, limits with their unit last) and the checks that turn a
// bad combination into INVALID_CONFIG when the producer is built, not at the
// first send.

import type { Clock } from '../util/clock.js';
import { Errors, SluiceError } from '../util/errors.js';
import type { Rng } from '../util/rng.js';
import { CompressionType } from '../record/batch-header.js';
import type { Partitioner } from './partitioners.js';
import { IDEMPOTENT_IN_FLIGHT_MAX, type Acks } from './producer-batch.js';
import { TRANSACTIONAL_ID_LENGTH_MAX, TRANSACTION_TIMEOUT_MS_DEFAULT } from '../protocol/apis/transactions.js';

export type CompressionName = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

export interface ProducerOptions {
  /** Exactly-once per partition for retries (producer id, epoch, sequences). Default true, as Kafka since 3.0. */
  readonly idempotent?: boolean;
  /**
   * Makes the producer transactional (Kafka's transactional.id; implies
   * idempotence): records are sent only inside `await producer.transaction()`,
   * and a newer producer with the same id fences this one. 1-249 characters.
   */
  readonly transactionalId?: string;
  /** How long the coordinator lets a transaction stay open before aborting it (and fencing this producer). Default 60 000. */
  readonly transactionTimeoutMs?: number;
  /** -1 = all in-sync replicas (required with idempotence), 1 = the leader, 0 = no answer. Default -1. */
  readonly acks?: Acks;
  /** How long a partition's batch waits for more records before it is sent. Default 5. */
  readonly lingerMs?: number;
  /**
   * A batch is sent once its records reach this size (a larger single record
   * gets a batch of its own). Default 1,000,000 bytes (librdkafka's and
   * franz-go's; Kafka's Java client has 16 KiB): batches only grow this large
   * while records arrive faster than requests complete — under lingerMs they
   * are sent at the linger — and the brokers' cost is per batch. Its buffer
   * grows with the records. A topic whose max.message.bytes is below a batch
   * refuses it; the producer then splits it and sends that topic smaller
   * batches.
   */
  readonly batchBytes?: number;
  /** Bound on buffered record bytes (not yet acknowledged); send() waits when it is reached. Default 32 MiB. */
  readonly bufferBytesMax?: number;
  /** How long send() may wait for buffer space or topic metadata before failing. Default 60 s. */
  readonly maxBlockMs?: number;
  /** Bound on one produce request's batches (at least one batch is always sent). Default 1 MiB. */
  readonly requestBytesMax?: number;
  /** Produce requests awaiting an answer per broker. Default 5 (at most 5 with idempotence). */
  readonly maxInFlightRequestsPerConnection?: number;
  /** Codec of every batch. Default 'none'. */
  readonly compression?: CompressionName;
  /** How long the leader may wait for acks=all before answering REQUEST_TIMED_OUT. Default 30 s. */
  readonly ackTimeoutMs?: number;
  /** How long a record may take from send() to its acknowledgement, retries included. Default 120 s. */
  readonly deliveryTimeoutMs?: number;
  /** First backoff before a retry; doubles per attempt, with jitter. Default 100. */
  readonly retryBackoffMs?: number;
  /** Largest backoff. Default 1000. */
  readonly retryBackoffMaxMs?: number;
  /** Default: murmur2 for keys, sticky for keyless records (DefaultPartitioner). */
  readonly partitioner?: Partitioner;
  /** Record timestamps and timeouts. Default the client's clock. */
  readonly clock?: Clock;
  /** Sticky partition choice and retry jitter. Default forked from the client's Rng. */
  readonly rng?: Rng;
}

export const PRODUCER_DEFAULTS = {
  idempotent: true,
  transactionTimeoutMs: TRANSACTION_TIMEOUT_MS_DEFAULT,
  acks: -1 as Acks,
  lingerMs: 5,
  batchBytes: 1_000_000,
  bufferBytesMax: 32 * 1024 * 1024,
  maxBlockMs: 60_000,
  requestBytesMax: 1024 * 1024,
  maxInFlightRequestsPerConnection: 5,
  compression: 'none' as CompressionName,
  ackTimeoutMs: 30_000,
  deliveryTimeoutMs: 120_000,
  retryBackoffMs: 100,
  retryBackoffMaxMs: 1000,
} as const;

export interface ResolvedProducerOptions {
  readonly idempotent: boolean;
  /** null: not transactional. */
  readonly transactionalId: string | null;
  readonly transactionTimeoutMs: number;
  readonly acks: Acks;
  readonly lingerMs: number;
  readonly batchBytes: number;
  readonly bufferBytesMax: number;
  readonly maxBlockMs: number;
  readonly requestBytesMax: number;
  readonly maxInFlightRequestsPerConnection: number;
  readonly compression: CompressionType;
  readonly ackTimeoutMs: number;
  readonly deliveryTimeoutMs: number;
  readonly retryBackoffMs: number;
  readonly retryBackoffMaxMs: number;
}

const CODECS: Record<CompressionName, CompressionType> = {
  none: CompressionType.None, gzip: CompressionType.Gzip, snappy: CompressionType.Snappy, lz4: CompressionType.Lz4, zstd: CompressionType.Zstd,
};

function invalid(message: string): SluiceError {
  return new SluiceError(Errors.INVALID_CONFIG, message);
}

export function resolveProducerOptions(opts: ProducerOptions): ResolvedProducerOptions {
  const { transactionalId, ...rest } = opts;
  if (transactionalId !== undefined) {
    if (typeof transactionalId !== 'string' || transactionalId.length === 0 || transactionalId.length > TRANSACTIONAL_ID_LENGTH_MAX) {
      throw invalid(`transactionalId must be a string of 1-${TRANSACTIONAL_ID_LENGTH_MAX} characters`);
    }
    if (opts.idempotent === false) throw invalid('a transactional producer is idempotent: do not set idempotent: false with transactionalId');
  }
  const o = { ...PRODUCER_DEFAULTS, ...definedOnly(rest) };
  const nonNegative = { lingerMs: o.lingerMs, retryBackoffMs: o.retryBackoffMs };
  const positive = {
    transactionTimeoutMs: o.transactionTimeoutMs,
    batchBytes: o.batchBytes, bufferBytesMax: o.bufferBytesMax, maxBlockMs: o.maxBlockMs, requestBytesMax: o.requestBytesMax,
    maxInFlightRequestsPerConnection: o.maxInFlightRequestsPerConnection, ackTimeoutMs: o.ackTimeoutMs,
    deliveryTimeoutMs: o.deliveryTimeoutMs, retryBackoffMaxMs: o.retryBackoffMaxMs,
  };
  for (const [k, v] of Object.entries(nonNegative)) if (!(Number.isSafeInteger(v) && v >= 0)) throw invalid(`${k} must be an integer >= 0`);
  for (const [k, v] of Object.entries(positive)) if (!(Number.isSafeInteger(v) && v > 0)) throw invalid(`${k} must be a positive integer`);
  if (o.retryBackoffMaxMs < o.retryBackoffMs) throw invalid('retryBackoffMaxMs must be >= retryBackoffMs');
  if (o.deliveryTimeoutMs < o.lingerMs) throw invalid('deliveryTimeoutMs must be >= lingerMs (a record must get a chance to be sent)');
  if (o.acks !== -1 && o.acks !== 0 && o.acks !== 1) throw invalid(`acks must be -1 (all), 0 or 1, got ${String(o.acks)}`);
  const compression = CODECS[o.compression];
  if (compression === undefined) throw invalid(`compression must be one of ${Object.keys(CODECS).join(', ')}`);
  if (o.idempotent) {
    if (o.acks !== -1) throw invalid('an idempotent producer needs acks=-1 (all); set idempotent: false for acks 0 or 1');
    if (o.maxInFlightRequestsPerConnection > IDEMPOTENT_IN_FLIGHT_MAX) {
      throw invalid(`an idempotent producer allows at most ${IDEMPOTENT_IN_FLIGHT_MAX} requests in flight per connection`);
    }
  }
  return { ...o, compression, transactionalId: transactionalId ?? null };
}

function definedOnly(opts: ProducerOptions): Partial<ProducerOptions> {
  return Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as Partial<ProducerOptions>;
}
