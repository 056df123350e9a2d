// The Consumer's options: their defaults in one place (limits named with
// units last) and the checks that turn a bad option into INVALID_CONFIG at
// construction rather than a confusing failure later.
//
// Names follow KafkaJS where it has the option (groupId, sessionTimeoutMs,
// maxBytesPerPartition, ...) and Kafka's consumer configs otherwise.
//
// Default assignor: ['cooperative-sticky']. Rebalances are incremental — a
// member keeps consuming the partitions it keeps while the group rebalances,
// and only partitions that move are revoked (KIP-429) — so a member joining
// or dying does not stop the whole group, and assignments stay put across
// restarts. Kafka lists range first only for compatibility with old groups;
// Sluice has none to upgrade from.

import { Errors, SluiceError } from '../util/errors.js';
import { ASSIGNORS, type PartitionAssignor } from '../groups/assignors.js';
import { READ_COMMITTED, READ_UNCOMMITTED, type IsolationLevel } from '../protocol/apis/fetch.js';

export type OffsetReset = 'earliest' | 'latest';
export type IsolationLevelName = 'read_uncommitted' | 'read_committed';

export interface ConsumerOptions {
  /** The consumer group; required for subscribe() and for committing offsets. */
  readonly groupId?: string;
  /** Static membership (KIP-345): a restart with the same id within the session timeout keeps the assignment. */
  readonly groupInstanceId?: string;
  /** The coordinator removes a member it has not heard from for this long. Default 30 000. */
  readonly sessionTimeoutMs?: number;
  /** How long the coordinator waits for members to rejoin during a rebalance. Default 60 000. */
  readonly rebalanceTimeoutMs?: number;
  /** Default 3 000; must be below sessionTimeoutMs. */
  readonly heartbeatIntervalMs?: number;
  /** Commit the offsets of processed records every autoCommitIntervalMs (and on revoke and close). Default true. */
  readonly autoCommit?: boolean;
  /** Default 5 000. */
  readonly autoCommitIntervalMs?: number;
  /** Where to start a partition without a committed offset, and after OFFSET_OUT_OF_RANGE. Default 'latest'. */
  readonly autoOffsetReset?: OffsetReset;
  /** Assignor names in order of preference: 'cooperative-sticky', 'range', 'roundrobin'. Default ['cooperative-sticky']. */
  readonly partitionAssigners?: readonly string[];
  /** Bytes per partition in one fetch response. Default 1 MiB. */
  readonly maxBytesPerPartition?: number;
  /** Bytes per fetch response. Default 10 MiB. */
  readonly maxBytes?: number;
  /** How long a broker holds a fetch waiting for minBytes (the long poll). Default 500. */
  readonly maxWaitMs?: number;
  /** Default 1. */
  readonly minBytes?: number;
  /** Fetched bytes buffered ahead of the application, across partitions. Default 2 × maxBytes. */
  readonly prefetchBytesMax?: number;
  /** Wait after a fetch error before fetching the partition again. Default 100. */
  readonly retryBackoffMs?: number;
  /** How often topics of a RegExp subscription (and partition counts) are re-checked. Default 300 000. */
  readonly metadataMaxAgeMs?: number;
  /**
   * 'read_committed': read only committed transactions' records (up to the
   * last stable offset; aborted ones skipped). Default 'read_uncommitted'
   * (every record below the high watermark), as Kafka's Java consumer.
   * Control records (transaction markers) are never delivered either way.
   */
  readonly isolationLevel?: IsolationLevelName;
}

export interface ResolvedConsumerOptions {
  readonly groupId: string | null;
  readonly groupInstanceId: string | null;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly autoCommit: boolean;
  readonly autoCommitIntervalMs: number;
  readonly autoOffsetReset: OffsetReset;
  readonly assignors: readonly PartitionAssignor[];
  readonly maxBytesPerPartition: number;
  readonly maxBytes: number;
  readonly maxWaitMs: number;
  readonly minBytes: number;
  readonly prefetchBytesMax: number;
  readonly retryBackoffMs: number;
  readonly metadataMaxAgeMs: number;
  /** READ_COMMITTED (1) or READ_UNCOMMITTED (0), as on the wire. */
  readonly isolationLevel: IsolationLevel;
}

export const CONSUMER_DEFAULTS = {
  sessionTimeoutMs: 30_000,
  rebalanceTimeoutMs: 60_000,
  heartbeatIntervalMs: 3_000,
  autoCommit: true,
  autoCommitIntervalMs: 5_000,
  autoOffsetReset: 'latest' as OffsetReset,
  partitionAssigners: ['cooperative-sticky'] as readonly string[],
  maxBytesPerPartition: 1024 * 1024,
  maxBytes: 10 * 1024 * 1024,
  maxWaitMs: 500,
  minBytes: 1,
  retryBackoffMs: 100,
  metadataMaxAgeMs: 300_000,
  isolationLevel: 'read_uncommitted' as IsolationLevelName,
} as const;

/** The broker refuses fetch waits above this (src/protocol/apis/fetch.ts). */
const FETCH_WAIT_MS_MAX = 60_000;

function invalid(message: string): SluiceError {
  return new SluiceError(Errors.INVALID_CONFIG, message);
}

function positive(name: string, v: number, min = 1): number {
  if (!(Number.isSafeInteger(v) && v >= min)) throw invalid(`${name} must be an integer >= ${min}, got ${v}`);
  return v;
}

export function resolveConsumerOptions(o: ConsumerOptions): ResolvedConsumerOptions {
  const d = CONSUMER_DEFAULTS;
  if (o.groupId !== undefined && (typeof o.groupId !== 'string' || o.groupId.length === 0)) throw invalid('groupId must be a non-empty string');
  const sessionTimeoutMs = positive('sessionTimeoutMs', o.sessionTimeoutMs ?? d.sessionTimeoutMs);
  const heartbeatIntervalMs = positive('heartbeatIntervalMs', o.heartbeatIntervalMs ?? Math.min(d.heartbeatIntervalMs, Math.floor(sessionTimeoutMs / 3)));
  if (heartbeatIntervalMs >= sessionTimeoutMs) throw invalid(`heartbeatIntervalMs (${heartbeatIntervalMs}) must be below sessionTimeoutMs (${sessionTimeoutMs})`);
  const maxBytes = positive('maxBytes', o.maxBytes ?? d.maxBytes);
  const maxWaitMs = positive('maxWaitMs', o.maxWaitMs ?? d.maxWaitMs, 0);
  if (maxWaitMs > FETCH_WAIT_MS_MAX) throw invalid(`maxWaitMs must be at most ${FETCH_WAIT_MS_MAX}`);
  const reset = o.autoOffsetReset ?? d.autoOffsetReset;
  if (reset !== 'earliest' && reset !== 'latest') throw invalid(`autoOffsetReset must be 'earliest' or 'latest', got ${String(reset)}`);
  const isolation = o.isolationLevel ?? d.isolationLevel;
  if (isolation !== 'read_committed' && isolation !== 'read_uncommitted') {
    throw invalid(`isolationLevel must be 'read_committed' or 'read_uncommitted', got ${String(isolation)}`);
  }
  const names = o.partitionAssigners ?? d.partitionAssigners;
  if (names.length === 0) throw invalid('partitionAssigners names no assignor');
  const assignors = names.map((n) => {
    const a = ASSIGNORS.get(n);
    if (!a) throw invalid(`unknown partition assigner '${n}' (known: ${[...ASSIGNORS.keys()].join(', ')})`);
    return a;
  });
  return {
    groupId: o.groupId ?? null,
    groupInstanceId: o.groupInstanceId ?? null,
    sessionTimeoutMs,
    rebalanceTimeoutMs: positive('rebalanceTimeoutMs', o.rebalanceTimeoutMs ?? Math.max(d.rebalanceTimeoutMs, sessionTimeoutMs)),
    heartbeatIntervalMs,
    autoCommit: o.autoCommit ?? d.autoCommit,
    autoCommitIntervalMs: positive('autoCommitIntervalMs', o.autoCommitIntervalMs ?? d.autoCommitIntervalMs),
    autoOffsetReset: reset,
    assignors,
    maxBytesPerPartition: positive('maxBytesPerPartition', o.maxBytesPerPartition ?? d.maxBytesPerPartition),
    maxBytes,
    maxWaitMs,
    minBytes: positive('minBytes', o.minBytes ?? d.minBytes, 0),
    prefetchBytesMax: positive('prefetchBytesMax', o.prefetchBytesMax ?? 2 * maxBytes),
    retryBackoffMs: positive('retryBackoffMs', o.retryBackoffMs ?? d.retryBackoffMs),
    metadataMaxAgeMs: positive('metadataMaxAgeMs', o.metadataMaxAgeMs ?? d.metadataMaxAgeMs),
    isolationLevel: isolation === 'read_committed' ? READ_COMMITTED : READ_UNCOMMITTED,
  };
}
