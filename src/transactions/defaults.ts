// Limits of the transaction coordinator, in one place (units last). The
// broker settings an operator changes (transaction.max.timeout.ms, the
// __transaction_state topic's shape, id expiration, the abort scan's
// interval) are cluster configs in src/metadata/config-defs.ts, read from the
// metadata image when used; these are the shell's own bounds.

export interface TxnCoordinatorLimits {
  /** How long a write to __transaction_state may wait for the ISR (acks=all); Kafka's transaction.state.log write timeout. */
  readonly writeTimeoutMs: number;
  /** Bytes read from the log per step while loading a partition (Kafka's transaction.state.log.load.buffer.size). */
  readonly loadReadBytesMax: number;
  /** Wait between rounds of marker writes to partitions whose leader could not take them yet. */
  readonly markerRetryBackoffMs: number;
  /** Wait before retrying a Complete* write that failed (the ISR was short, a timeout). */
  readonly completeRetryBackoffMs: number;
  /** Transactional ids per coordinator partition kept in memory; InitProducerId for a new id beyond it is refused. */
  readonly transactionsPerPartitionMax: number;
  /**
   * How long a request that meets the id's previous transaction still being
   * completed (markers being written) or another write in flight waits for
   * it before answering CONCURRENT_TRANSACTIONS; 0: answers at once, as Kafka.
   */
  readonly concurrentWaitMs: number;
}

export const TXN_COORDINATOR_DEFAULTS: TxnCoordinatorLimits = {
  writeTimeoutMs: 5_000,
  loadReadBytesMax: 5 * 1024 * 1024,
  markerRetryBackoffMs: 100,
  completeRetryBackoffMs: 200,
  transactionsPerPartitionMax: 100_000,
  concurrentWaitMs: 1_000,
};

/**
 * Topic configs of __transaction_state besides min.insync.replicas and
 * segment.bytes (from transaction.state.log.*): compacted, so the log keeps
 * each id's last state, and never deleted by time or size.
 */
export const TRANSACTION_TOPIC_CONFIGS: Readonly<Record<string, string>> = { 'cleanup.policy': 'compact', 'retention.ms': '-1', 'retention.bytes': '-1' };
