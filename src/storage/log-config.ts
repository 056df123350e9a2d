// Configuration of partition logs and of the log manager: Kafka's names, Kafka's
// defaults, in this one module. Every limit the storage layer enforces comes
// from here; no other storage file holds a default.
//
// Per-log settings have a topic-level name (`segment.bytes`) and a broker-level
// name (`log.segment.bytes`), as in Kafka; `logConfigFrom` accepts either, the
// topic-level name winning when both are given. Unknown keys are ignored because
// a topic's config map also carries keys owned by other layers
// (`min.insync.replicas`, `cleanup.policy`, ...).
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

/** The per-log keys: field, topic-level name, broker-level name, bounds. */
export const LOG_CONFIG_KEYS: readonly KeySpec<keyof LogConfig>[] = [
  spec('segmentBytes', 'segment.bytes', 'log.segment.bytes', 64, SEGMENT_BYTES_LIMIT),
  spec('segmentMs', 'segment.ms', 'log.roll.ms', 1),
  spec('segmentIndexBytes', 'segment.index.bytes', 'log.index.size.max.bytes', 12, SEGMENT_BYTES_LIMIT),
  spec('indexIntervalBytes', 'index.interval.bytes', 'log.index.interval.bytes', 0, SEGMENT_BYTES_LIMIT),
  spec('retentionMs', 'retention.ms', 'log.retention.ms', -1),
  spec('retentionBytes', 'retention.bytes', 'log.retention.bytes', -1),
  spec('maxMessageBytes', 'max.message.bytes', 'message.max.bytes', 0, SEGMENT_BYTES_LIMIT),
  spec('flushMessages', 'flush.messages', 'log.flush.interval.messages', 1),
  spec('flushMs', 'flush.ms', 'log.flush.interval.ms', 0),
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
  return out;
}

/** Checks a fully built LogConfig (e.g. one assembled in code) against the same bounds. */
export function validateLogConfig(config: Readonly<LogConfig>): LogConfig {
  for (const k of LOG_CONFIG_KEYS) parseBounded(k.topicKey, config[k.field], k.min, k.max);
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
}

export const DEFAULT_LOG_MANAGER_CONFIG: Readonly<LogManagerConfig> = Object.freeze({
  retentionCheckIntervalMs: 5 * 60 * 1000,
  flushSchedulerIntervalMs: NEVER,
  flushOffsetCheckpointIntervalMs: 60 * 1000,
  flushStartOffsetCheckpointIntervalMs: 60 * 1000,
  highWatermarkCheckpointIntervalMs: 5 * 1000,
  tailCacheBytes: 4 * 1024 * 1024,
});

export const LOG_MANAGER_CONFIG_KEYS: readonly KeySpec<keyof LogManagerConfig>[] = [
  spec('retentionCheckIntervalMs', 'log.retention.check.interval.ms', 'log.retention.check.interval.ms', 1),
  spec('flushSchedulerIntervalMs', 'log.flush.scheduler.interval.ms', 'log.flush.scheduler.interval.ms', 1),
  spec('flushOffsetCheckpointIntervalMs', 'log.flush.offset.checkpoint.interval.ms', 'log.flush.offset.checkpoint.interval.ms', 1),
  spec('flushStartOffsetCheckpointIntervalMs', 'log.flush.start.offset.checkpoint.interval.ms', 'log.flush.start.offset.checkpoint.interval.ms', 1),
  spec('highWatermarkCheckpointIntervalMs', 'replica.high.watermark.checkpoint.interval.ms', 'replica.high.watermark.checkpoint.interval.ms', 1),
  spec('tailCacheBytes', 'log.tail.cache.bytes', 'log.tail.cache.bytes', 0),
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
