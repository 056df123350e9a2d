// The configuration keys Sluice understands, with Kafka's names, types and
// defaults, and their validation. Topic-level keys override the broker/cluster
// defaults (`log.`-prefixed where Kafka prefixes them). The controller
// validates alter/create requests against this table; brokers read effective
// values through effectiveTopicConfig().

/** 'list': comma-separated items, each one of validValues, none twice (Kafka's LIST type). */
export type ConfigType = 'int' | 'long' | 'boolean' | 'string' | 'double' | 'list';

export interface ConfigDef {
  readonly name: string;
  readonly type: ConfigType;
  readonly defaultValue: string;
  readonly doc: string;
  readonly min?: number;
  /** Checked for 'double' only (integers are bounded by their type). */
  readonly max?: number;
  readonly validValues?: readonly string[];
  /** The broker-level key whose value is the default for this topic key. */
  readonly brokerKey?: string;
  /** Checked for 'string' values without validValues. */
  readonly pattern?: RegExp;
}

const def = (d: ConfigDef) => d;

/** Kafka's throttled-replica lists: empty, `*`, or partition:broker pairs. */
const THROTTLED_REPLICAS = /^(|\*|\d+:\d+(,\d+:\d+)*)$/;

/** Whether a throttled-replica list names `partition:brokerId` (or everything). */
export function throttledReplicasInclude(list: string, partition: number, brokerId: number): boolean {
  const v = list.trim();
  return v === '*' || v.split(',').some((pair) => pair.trim() === `${partition}:${brokerId}`);
}

export const TOPIC_CONFIGS: readonly ConfigDef[] = [
  def({ name: 'cleanup.policy', type: 'list', defaultValue: 'delete', validValues: ['delete', 'compact'], brokerKey: 'log.cleanup.policy', doc: 'What happens to old segments: delete (retention), compact (keep the last value of every key), or compact,delete (docs/compaction.md)' }),
  def({ name: 'min.cleanable.dirty.ratio', type: 'double', defaultValue: '0.5', min: 0, max: 1, brokerKey: 'log.cleaner.min.cleanable.ratio', doc: 'Compact a log once this share of it is dirty (not yet compacted)' }),
  def({ name: 'min.compaction.lag.ms', type: 'long', defaultValue: '0', min: 0, brokerKey: 'log.cleaner.min.compaction.lag.ms', doc: 'A record stays uncompacted at least this long' }),
  def({ name: 'max.compaction.lag.ms', type: 'long', defaultValue: '9223372036854775807', min: 1, brokerKey: 'log.cleaner.max.compaction.lag.ms', doc: 'A record is compacted at the latest this long after it was written' }),
  def({ name: 'delete.retention.ms', type: 'long', defaultValue: '86400000', min: 0, brokerKey: 'log.cleaner.delete.retention.ms', doc: 'How long a tombstone stays after compaction first sees it' }),
  def({ name: 'retention.ms', type: 'long', defaultValue: '604800000', min: -1, brokerKey: 'log.retention.ms', doc: 'Delete closed segments older than this; -1 = keep forever' }),
  def({ name: 'retention.bytes', type: 'long', defaultValue: '-1', min: -1, brokerKey: 'log.retention.bytes', doc: 'Delete oldest closed segments while a partition is larger than this; -1 = no limit' }),
  def({ name: 'segment.bytes', type: 'int', defaultValue: '1073741824', min: 1024 * 14, brokerKey: 'log.segment.bytes', doc: 'Roll a new segment at this size' }),
  def({ name: 'segment.ms', type: 'long', defaultValue: '604800000', min: 1, brokerKey: 'log.roll.ms', doc: 'Roll a new segment after this time' }),
  def({ name: 'segment.index.bytes', type: 'int', defaultValue: '10485760', min: 8, brokerKey: 'log.index.size.max.bytes', doc: 'Maximum size of an offset index file' }),
  def({ name: 'index.interval.bytes', type: 'int', defaultValue: '4096', min: 0, brokerKey: 'log.index.interval.bytes', doc: 'Bytes between offset index entries' }),
  def({ name: 'max.message.bytes', type: 'int', defaultValue: '1048588', min: 0, brokerKey: 'message.max.bytes', doc: 'Largest record batch accepted' }),
  def({ name: 'min.insync.replicas', type: 'int', defaultValue: '1', min: 1, brokerKey: 'min.insync.replicas', doc: 'Replicas that must hold a record before acks=all succeeds' }),
  def({ name: 'unclean.leader.election.enable', type: 'boolean', defaultValue: 'false', brokerKey: 'unclean.leader.election.enable', doc: 'Allow an out-of-sync replica to lead (may lose records)' }),
  def({ name: 'flush.messages', type: 'long', defaultValue: '9223372036854775807', min: 1, brokerKey: 'log.flush.interval.messages', doc: 'fsync after this many records (default: leave it to the OS)' }),
  def({ name: 'flush.ms', type: 'long', defaultValue: '9223372036854775807', min: 0, brokerKey: 'log.flush.interval.ms', doc: 'fsync after this much time (default: leave it to the OS)' }),
  def({ name: 'compression.type', type: 'string', defaultValue: 'producer', validValues: ['producer', 'uncompressed', 'none', 'gzip', 'snappy', 'lz4', 'zstd'], brokerKey: 'compression.type', doc: 'Codec of stored batches: producer keeps the client\'s; a codec makes the leader recompress batches in other codecs (none = Kafka\'s uncompressed)' }),
  def({ name: 'leader.replication.throttled.replicas', type: 'string', defaultValue: '', pattern: THROTTLED_REPLICAS, doc: 'Replicas (partition:broker, or * for all) whose leaders throttle replication to out-of-sync followers at leader.replication.throttled.rate, besides replicas a reassignment adds' }),
  def({ name: 'follower.replication.throttled.replicas', type: 'string', defaultValue: '', pattern: THROTTLED_REPLICAS, doc: 'Kafka\'s follower-side throttle list: accepted and kept so Kafka\'s tools work; Sluice throttles on the leader side only' }),
  def({ name: 'message.timestamp.type', type: 'string', defaultValue: 'CreateTime', validValues: ['CreateTime', 'LogAppendTime'], brokerKey: 'log.message.timestamp.type', doc: 'Which timestamp records carry' }),
];

/** Broker/cluster-level keys that are not just defaults of topic keys. */
export const BROKER_CONFIGS: readonly ConfigDef[] = [
  def({ name: 'num.partitions', type: 'int', defaultValue: '1', min: 1, doc: 'Partitions of a topic created without a count' }),
  def({ name: 'default.replication.factor', type: 'int', defaultValue: '1', min: 1, doc: 'Replication factor of a topic created without one' }),
  def({ name: 'replica.lag.time.max.ms', type: 'long', defaultValue: '30000', min: 1, doc: 'A follower that has not caught up for this long leaves the ISR' }),
  def({ name: 'leader.replication.throttled.rate', type: 'long', defaultValue: '-1', min: -1, doc: 'Bytes/s a leader sends to replicas being added by a reassignment; -1 = no limit' }),
  def({ name: 'broker.session.timeout.ms', type: 'int', defaultValue: '9000', min: 1, doc: 'A broker whose heartbeats stop for this long is fenced' }),
  def({ name: 'broker.suspect.timeout.ms', type: 'int', defaultValue: '1000', min: 0, doc: 'A broker whose heartbeats stop for this long is fenced at once when another broker reports its replica links to it down (docs/replication.md, Failover); 0 = only broker.session.timeout.ms fences' }),
  def({ name: 'auto.leader.rebalance.enable', type: 'boolean', defaultValue: 'true', doc: 'Move leadership back to preferred replicas when they return' }),
  def({ name: 'offsets.topic.replication.factor', type: 'int', defaultValue: '3', min: 1, doc: 'Replication factor of __consumer_offsets (capped at the live brokers)' }),
  def({ name: 'offsets.topic.num.partitions', type: 'int', defaultValue: '50', min: 1, doc: 'Partitions of __consumer_offsets' }),
  def({ name: 'transaction.state.log.num.partitions', type: 'int', defaultValue: '50', min: 1, doc: 'Partitions of __transaction_state (the transaction coordinators\' log)' }),
  def({ name: 'transaction.state.log.replication.factor', type: 'int', defaultValue: '3', min: 1, doc: 'Replication factor of __transaction_state (capped at the live brokers)' }),
  def({ name: 'transaction.state.log.min.isr', type: 'int', defaultValue: '2', min: 1, doc: 'min.insync.replicas of __transaction_state (capped at its replication factor)' }),
  def({ name: 'transaction.state.log.segment.bytes', type: 'int', defaultValue: '104857600', min: 1024 * 14, doc: 'segment.bytes of __transaction_state' }),
  def({ name: 'transaction.max.timeout.ms', type: 'int', defaultValue: '900000', min: 1, doc: 'The longest transaction.timeout.ms a producer may ask for (InitProducerId answers INVALID_TRANSACTION_TIMEOUT beyond it)' }),
  def({ name: 'transactional.id.expiration.ms', type: 'int', defaultValue: '604800000', min: 1, doc: 'A transactional id with no transaction open and no request for this long is forgotten' }),
  def({ name: 'transaction.abort.timed.out.transaction.cleanup.interval.ms', type: 'int', defaultValue: '10000', min: 1, doc: 'How often the coordinator looks for transactions past their timeout (and aborts them) and for expired transactional ids' }),
];

const TOPIC_BY_NAME = new Map(TOPIC_CONFIGS.map((d) => [d.name, d]));
const BROKER_BY_NAME = new Map([
  ...BROKER_CONFIGS.map((d) => [d.name, d] as const),
  ...TOPIC_CONFIGS.filter((d) => d.brokerKey).map((d) => [d.brokerKey!, { ...d, name: d.brokerKey! }] as const),
]);

export function topicConfigDef(name: string): ConfigDef | undefined {
  return TOPIC_BY_NAME.get(name);
}

export function brokerConfigDef(name: string): ConfigDef | undefined {
  return BROKER_BY_NAME.get(name);
}

/** Why `value` is not valid for `def`, or null. */
export function configValueProblem(d: ConfigDef, value: string): string | null {
  switch (d.type) {
    case 'int':
    case 'long': {
      if (!/^-?\d+$/.test(value)) return `${d.name} must be an integer, got "${value}"`;
      const n = Number(value);
      if (d.type === 'int' && (n > 2147483647 || n < -2147483648)) return `${d.name} must fit in 32 bits`;
      if (d.min !== undefined && n < d.min) return `${d.name} must be at least ${d.min}, got ${value}`;
      return null;
    }
    case 'double': {
      const n = value.trim() === '' ? NaN : Number(value);
      if (!Number.isFinite(n)) return `${d.name} must be a number, got "${value}"`;
      if ((d.min !== undefined && n < d.min) || (d.max !== undefined && n > d.max)) return `${d.name} must be in [${d.min ?? '-inf'}, ${d.max ?? 'inf'}], got ${value}`;
      return null;
    }
    case 'list': {
      const items = value.split(',').map((v) => v.trim());
      const ok = items.every((v) => d.validValues === undefined || d.validValues.includes(v)) && new Set(items).size === items.length;
      return ok ? null : `${d.name} must be a comma-separated list of ${d.validValues?.join(', ') ?? 'values'} without repeats, got "${value}"`;
    }
    case 'boolean':
      return value === 'true' || value === 'false' ? null : `${d.name} must be true or false, got "${value}"`;
    case 'string':
      if (d.validValues && !d.validValues.includes(value)) return `${d.name} must be one of ${d.validValues.join(', ')}, got "${value}"`;
      return d.pattern && !d.pattern.test(value.replace(/\s+/g, '')) ? `${d.name} must be * or a comma-separated list of partition:broker, got "${value}"` : null;
  }
}

/**
 * The effective value of a topic key: the topic's own setting, else the
 * cluster-level setting of its broker key, else the built-in default.
 */
export function effectiveTopicConfig(
  name: string,
  topicConfigs: ReadonlyMap<string, string>,
  clusterConfigs: ReadonlyMap<string, string>,
): string {
  const d = TOPIC_BY_NAME.get(name);
  if (!d) throw new Error(`unknown topic config ${name}`);
  return topicConfigs.get(name) ?? (d.brokerKey ? clusterConfigs.get(d.brokerKey) : undefined) ?? d.defaultValue;
}

export function effectiveBrokerConfig(name: string, clusterConfigs: ReadonlyMap<string, string>): string {
  const d = BROKER_BY_NAME.get(name);
  if (!d) throw new Error(`unknown broker config ${name}`);
  return clusterConfigs.get(name) ?? d.defaultValue;
}
