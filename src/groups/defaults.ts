// Limits and defaults of the group coordinator, in one place (units last).
// Kafka's broker setting each one mirrors is named beside it; where Sluice's
// value differs from Kafka's default, the comment says why.

export interface GroupLimits {
  /** group.min.session.timeout.ms. Kafka: 6000; Sluice allows 1 s so tests and demos can fail members over quickly. */
  readonly sessionTimeoutMsMin: number;
  /** group.max.session.timeout.ms (Kafka's default). */
  readonly sessionTimeoutMsMax: number;
  /** A JoinGroup's rebalanceTimeoutMs must be in [1, this]: it becomes a timer delay, and Node caps those at 2^31-1 ms. */
  readonly rebalanceTimeoutMsMax: number;
  /** group.max.size. Kafka: unbounded; every collection here is bounded. */
  readonly groupMembersMax: number;
}

export interface CoordinatorLimits extends GroupLimits {
  /** offset.metadata.max.bytes: the longest `metadata` string an OffsetCommit may carry (UTF-8 bytes). */
  readonly offsetMetadataBytesMax: number;
  /** offsets.commit.timeout.ms: how long a write to __consumer_offsets may wait for the ISR (acks=all). */
  readonly commitTimeoutMs: number;
  /** offsets.load.buffer.size: bytes read from the log per step while loading a partition's groups. */
  readonly loadReadBytesMax: number;
}

export const GROUP_DEFAULTS: CoordinatorLimits = {
  sessionTimeoutMsMin: 1_000,
  sessionTimeoutMsMax: 1_800_000,
  rebalanceTimeoutMsMax: 2_147_483_647,
  groupMembersMax: 1_000,
  offsetMetadataBytesMax: 4_096,
  commitTimeoutMs: 5_000,
  loadReadBytesMax: 5 * 1024 * 1024,
};

/**
 * Topic configs __consumer_offsets is created with (Kafka's): compacted, so
 * the log keeps the last commit of every group/partition and each group's
 * last metadata, and never deleted by time or size (that would lose live
 * offsets). Group load on failover (loader.ts) reads the compacted log.
 */
export const OFFSETS_TOPIC_CONFIGS: Readonly<Record<string, string>> = { 'cleanup.policy': 'compact', 'retention.ms': '-1', 'retention.bytes': '-1' };
