// Configuration of partition logs and of the log manager: Kafka's names, Kafka's
// defaults, in this one module. Every limit the storage layer enforces comes
// from here; no other storage file holds a default.
//
// Per-log settings have a topic-level name (`segment.bytes`) and a broker-level
// name (`log.segment.bytes`), as in Kafka; `logConfigFrom` accepts either, the
// topic-level name winning when both are given. Unknown keys are ignored because
// a topic's config map also carries keys owned by other layers
// (`min.insync.replicas`, ...). `cleanup.policy` (a list of `delete` and
// `compact`) and `min.cleanable.dirty.ratio` (a fraction) are the two per-log
// settings that are not integers; they are parsed by their own rules below.
//
// "Never" (Kafka's Long.MAX_VALUE for flush.messages / flush.ms) is
// Number.MAX_SAFE_INTEGER here so configs stay JSON-friendly.

import { Errors, SluiceError } from '../util/errors.js';

export const NEVER = Number.MAX_SAFE_INTEGER;
/** Positions in the offset index are int32, so a segment cannot exceed this. */
export const SEGMENT_BYTES_LIMIT = 2 ** 31 - 1;

export interface LogConfig {
  /** segment.bytes: roll when the active segment would grow past this. */
  segmentBytes: number;
  /** segment.ms: roll when the active segment's first batch is older than this. */
  segmentMs: number;
  /** segment.index.bytes: roll when the offset or time index reaches this size. */
  segmentIndexBytes: number;
  /** index.interval.bytes: log bytes between two sparse index entries. */
  indexIntervalBytes: number;
  /** retention.ms: delete closed segments whose newest timestamp is older; -1 = forever. */
  retentionMs: number;
  /** retention.bytes: delete the oldest closed segments while the log is larger; -1 = unbounded. */
  retentionBytes: number;
  /** max.message.bytes: largest record batch accepted (Kafka: 1 MiB + 12 bytes of log overhead). */
  maxMessageBytes: number;
  /** flush.messages: fsync after this many records; NEVER leaves it to the OS. */
  flushMessages: number;
  /** flush.ms: fsync when the last flush is older than this; NEVER leaves it to the OS. */
  flushMs: number;
  /** cleanup.policy: retention deletes old segments, the log cleaner compacts them, or both (docs/compaction.md). */
  cleanupPolicy: CleanupPolicy;
  /** min.cleanable.dirty.ratio: compact once dirty bytes / (clean + dirty bytes) reaches this. */
  minCleanableDirtyRatio: number;
  /** min.compaction.lag.ms: a record stays uncompacted for at least this long after it was written. */
  minCompactionLagMs: number;
  /** max.compaction.lag.ms: a record is compacted at the latest this long after it was written, whatever the dirty ratio. */
  maxCompactionLagMs: number;
  /** delete.retention.ms: how long a tombstone stays after the clean that first saw it. */
  deleteRetentionMs: number;
}

export type CleanupPolicy = 'delete' | 'compact' | 'compact,delete';
const CLEANUP_POLICIES: readonly CleanupPolicy[] = ['delete', 'compact', 'compact,delete'];

export function isCompacted(config: Readonly<LogConfig>): boolean {
  return config.cleanupPolicy !== 'delete';
}

export function deletesByRetention(config: Readonly<LogConfig>): boolean {
  return config.cleanupPolicy !== 'compact';
}

/**
 * The canonical form of a `cleanup.policy` value: a comma-separated list of
 * `delete` and `compact` in any order, spaces allowed (Kafka's list type);
 * INVALID_CONFIG for anything else.
 */
export function parseCleanupPolicy(raw: string, key = 'cleanup.policy'): CleanupPolicy {
  const parts = raw.split(',').map((p) => p.trim()).filter((p) => p !== '');
  const set = new Set(parts);
  const ok = parts.length > 0 && parts.length === set.size && parts.every((p) => p === 'delete' || p === 'compact');
  if (!ok) {
    throw new SluiceError(Errors.INVALID_CONFIG, `${key}=${raw} must be delete, compact or compact,delete`, { key, value: raw });
  }
  return set.size === 2 ? 'compact,delete' : (parts[0] as CleanupPolicy);
}

function parseRatio(key: string, raw: string | number): number {
  const value = typeof raw === 'number' ? raw : raw.trim() === '' ? NaN : Number(raw.trim());
  if (!(Number.isFinite(value) && value >= 0 && value <= 1)) {
    throw new SluiceError(Errors.INVALID_CONFIG, `${key}=${String(raw)} must be a number in [0, 1]`, { key, value: raw });
  }
  return value;
}

export const DEFAULT_LOG_CONFIG: Readonly<LogConfig> = Object.freeze({
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * 24 * 60 * 60 * 1000,
  segmentIndexBytes: 10 * 1024 * 1024,
  indexIntervalBytes: 4096,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  retentionBytes: -1,
  maxMessageBytes: 1024 * 1024 + 12,
  flushMessages: NEVER,
  flushMs: NEVER,
  cleanupPolicy: 'delete',
  minCleanableDirtyRatio: 0.5,
  minCompactionLagMs: 0,
  maxCompactionLagMs: NEVER,
  deleteRetentionMs: 24 * 60 * 60 * 1000,
});

interface KeySpec<F extends string> {
  field: F;
  topicKey: string;
  brokerKey: string;
  min: number;
  max: number;
}

function spec<F extends string>(field: F, topicKey: string, brokerKey: string, min: number, max = NEVER): KeySpec<F> {
  return { field, topicKey, brokerKey, min, max };
}

type IntegerLogConfigKey = Exclude<keyof LogConfig, 'cleanupPolicy' | 'minCleanableDirtyRatio'>;

/** The per-log integer keys: field, topic-level name, broker-level name, bounds. */
export const LOG_CONFIG_KEYS: readonly KeySpec<IntegerLogConfigKey>[] = [
  spec('segmentBytes', 'segment.bytes', 'log.segment.bytes', 64, SEGMENT_BYTES_LIMIT),
  spec('segmentMs', 'segment.ms', 'log.roll.ms', 1),
  spec('segmentIndexBytes', 'segment.index.bytes', 'log.index.size.max.bytes', 12, SEGMENT_BYTES_LIMIT),
  spec('indexIntervalBytes', 'index.interval.bytes', 'log.index.interval.bytes', 0, SEGMENT_BYTES_LIMIT),
  spec('retentionMs', 'retention.ms', 'log.retention.ms', -1),
  spec('retentionBytes', 'retention.bytes', 'log.retention.bytes', -1),
  spec('maxMessageBytes', 'max.message.bytes', 'message.max.bytes', 0, SEGMENT_BYTES_LIMIT),
  spec('flushMessages', 'flush.messages', 'log.flush.interval.messages', 1),
  spec('flushMs', 'flush.ms', 'log.flush.interval.ms', 0),
  spec('minCompactionLagMs', 'min.compaction.lag.ms', 'log.cleaner.min.compaction.lag.ms', 0),
  spec('maxCompactionLagMs', 'max.compaction.lag.ms', 'log.cleaner.max.compaction.lag.ms', 1),
  spec('deleteRetentionMs', 'delete.retention.ms', 'log.cleaner.delete.retention.ms', 0),
];

export type ConfigValue = string | number | undefined;

/**
 * A LogConfig from `base` overridden by the Kafka-named keys in `props`
 * (topic-level or broker-level names). Throws INVALID_CONFIG on a value that is
 * not an integer or lies outside the key's bounds.
 */
export function logConfigFrom(props: Readonly<Record<string, ConfigValue>>, base: Readonly<LogConfig> = DEFAULT_LOG_CONFIG): LogConfig {
  const out: LogConfig = { ...base };
  for (const k of LOG_CONFIG_KEYS) {
    const key = props[k.topicKey] !== undefined ? k.topicKey : k.brokerKey;
    const raw = props[key];
    if (raw === undefined) continue;
    out[k.field] = parseBounded(key, raw, k.min, k.max);
  }
  const policy = props['cleanup.policy'] ?? props['log.cleanup.policy'];
  if (policy !== undefined) out.cleanupPolicy = parseCleanupPolicy(String(policy));
  const ratioKey = props['min.cleanable.dirty.ratio'] !== undefined ? 'min.cleanable.dirty.ratio' : 'log.cleaner.min.cleanable.ratio';
  const ratio = props[ratioKey];
  if (ratio !== undefined) out.minCleanableDirtyRatio = parseRatio(ratioKey, ratio);
  return out;
}

/** Checks a fully built LogConfig (e.g. one assembled in code) against the same bounds. */
export function validateLogConfig(config: Readonly<LogConfig>): LogConfig {
  for (const k of LOG_CONFIG_KEYS) parseBounded(k.topicKey, config[k.field], k.min, k.max);
  if (!CLEANUP_POLICIES.includes(config.cleanupPolicy)) parseCleanupPolicy(String(config.cleanupPolicy));
  parseRatio('min.cleanable.dirty.ratio', config.minCleanableDirtyRatio);
  return { ...config };
}

/** Settings of the log manager's background work (broker-level only). */
export interface LogManagerConfig {
  /** log.retention.check.interval.ms: how often retention runs. */
  retentionCheckIntervalMs: number;
  /** log.flush.scheduler.interval.ms: how often logs are checked against flush.ms. */
  flushSchedulerIntervalMs: number;
  /** log.flush.offset.checkpoint.interval.ms: how often recovery points are checkpointed. */
  flushOffsetCheckpointIntervalMs: number;
  /** log.flush.start.offset.checkpoint.interval.ms: how often log start offsets are checkpointed. */
  flushStartOffsetCheckpointIntervalMs: number;
  /** replica.high.watermark.checkpoint.interval.ms: how often high watermarks are checkpointed. */
  highWatermarkCheckpointIntervalMs: number;
  /** log.tail.cache.bytes (Sluice's own): bytes of newly appended batches all logs keep in memory for fetches near the end; 0 turns it off. */
  tailCacheBytes: number;
  /** log.cleaner.enable: run the log cleaner (compacted topics are not compacted without it). 1 = on, 0 = off. */
  cleanerEnable: number;
  /** log.cleaner.threads: how many logs are cleaned at once (interleaved slices on the event loop; each gets its share of the dedupe buffer). */
  cleanerThreads: number;
  /** log.cleaner.backoff.ms: how long an idle cleaner waits before looking for a dirty log again. */
  cleanerBackoffMs: number;
  /** log.cleaner.dedupe.buffer.size: bytes of the cleaners' offset maps (key hash -> last offset), shared by the threads. */
  cleanerDedupeBufferSize: number;
  /** log.cleaner.io.max.bytes.per.second: read+write throttle of the cleaner; NEVER = unthrottled. */
  cleanerIoMaxBytesPerSecond: number;
  /** log.cleaner.slice.bytes (Sluice's own): bytes a cleaner reads in one event-loop turn before yielding. */
  cleanerSliceBytes: number;
}

export const DEFAULT_LOG_MANAGER_CONFIG: Readonly<LogManagerConfig> = Object.freeze({
  retentionCheckIntervalMs: 5 * 60 * 1000,
  flushSchedulerIntervalMs: NEVER,
  flushOffsetCheckpointIntervalMs: 60 * 1000,
  flushStartOffsetCheckpointIntervalMs: 60 * 1000,
  highWatermarkCheckpointIntervalMs: 5 * 1000,
  tailCacheBytes: 4 * 1024 * 1024,
  cleanerEnable: 1,
  cleanerThreads: 1,
  cleanerBackoffMs: 15 * 1000,
  cleanerDedupeBufferSize: 128 * 1024 * 1024,
  cleanerIoMaxBytesPerSecond: NEVER,
  cleanerSliceBytes: 256 * 1024,
});

export const LOG_MANAGER_CONFIG_KEYS: readonly KeySpec<keyof LogManagerConfig>[] = [
  spec('retentionCheckIntervalMs', 'log.retention.check.interval.ms', 'log.retention.check.interval.ms', 1),
  spec('flushSchedulerIntervalMs', 'log.flush.scheduler.interval.ms', 'log.flush.scheduler.interval.ms', 1),
  spec('flushOffsetCheckpointIntervalMs', 'log.flush.offset.checkpoint.interval.ms', 'log.flush.offset.checkpoint.interval.ms', 1),
  spec('flushStartOffsetCheckpointIntervalMs', 'log.flush.start.offset.checkpoint.interval.ms', 'log.flush.start.offset.checkpoint.interval.ms', 1),
  spec('highWatermarkCheckpointIntervalMs', 'replica.high.watermark.checkpoint.interval.ms', 'replica.high.watermark.checkpoint.interval.ms', 1),
  spec('tailCacheBytes', 'log.tail.cache.bytes', 'log.tail.cache.bytes', 0),
  spec('cleanerThreads', 'log.cleaner.threads', 'log.cleaner.threads', 1, 64),
  spec('cleanerBackoffMs', 'log.cleaner.backoff.ms', 'log.cleaner.backoff.ms', 0),
  // At least one slot per thread: 24 bytes each (offset-map.ts).
  spec('cleanerDedupeBufferSize', 'log.cleaner.dedupe.buffer.size', 'log.cleaner.dedupe.buffer.size', 24 * 64, 2 ** 31 - 1),
  spec('cleanerIoMaxBytesPerSecond', 'log.cleaner.io.max.bytes.per.second', 'log.cleaner.io.max.bytes.per.second', 1),
  spec('cleanerSliceBytes', 'log.cleaner.slice.bytes', 'log.cleaner.slice.bytes', 1024, SEGMENT_BYTES_LIMIT),
];

export function logManagerConfigFrom(
  props: Readonly<Record<string, ConfigValue>>,
  base: Readonly<LogManagerConfig> = DEFAULT_LOG_MANAGER_CONFIG,
): LogManagerConfig {
  const out: LogManagerConfig = { ...base };
  for (const k of LOG_MANAGER_CONFIG_KEYS) {
    const raw = props[k.topicKey];
    if (raw !== undefined) out[k.field] = parseBounded(k.topicKey, raw, k.min, k.max);
  }
  const enable = props['log.cleaner.enable'];
  if (enable !== undefined) {
    const v = String(enable).trim();
    if (v !== 'true' && v !== 'false') {
      throw new SluiceError(Errors.INVALID_CONFIG, `log.cleaner.enable=${String(enable)} must be true or false`, { key: 'log.cleaner.enable', value: enable });
    }
    out.cleanerEnable = v === 'true' ? 1 : 0;
  }
  return out;
}

function parseBounded(key: string, raw: string | number, min: number, max: number): number {
  const value = typeof raw === 'number' ? raw : raw.trim() === '' ? NaN : Number(raw.trim());
  // Kafka's Long.MAX_VALUE spelled out in a properties file means "never".
  const clamped = Number.isFinite(value) && value > NEVER ? NEVER : value;
  if (!Number.isInteger(clamped) || clamped < min || clamped > max) {
    throw new SluiceError(Errors.INVALID_CONFIG, `${key}=${String(raw)} must be an integer in [${min}, ${max}]`, { key, value: raw });
  }
  return clamped;
}
