// The log manager: owns every partition log under one data directory (Kafka's
// LogManager). It opens all `<topic>-<partition>` directories at start, creates
// and deletes logs, keeps the three offset checkpoint files of the data
// directory, and — this is the shell — runs retention, flush checks and
// checkpoints on timers. The retention decision itself is the pure
// decideRetention (retention.ts) applied by each PartitionLog. The log
// cleaner (log-cleaner.ts), which compacts logs with cleanup.policy=compact,
// is owned here too and runs on the injected Scheduler once start() is called.
//
// Directory names: topic names may contain '-' and '.', partitions are
// decimal, so a name is split on its LAST '-'. Other entries are ignored, and
// so is the Raft metadata log (`__cluster_metadata-0`, owned by raft-node/).
// A log being deleted is first renamed to `<name>.<n>-delete` (which no longer
// parses as a partition), then removed; a leftover one is removed at start.
//
// Checkpoints (checkpoint.ts format) hold one line per open log:
//   recovery-point-offset-checkpoint   offset below which the log is fsynced
//   replication-offset-checkpoint      high watermark
//   log-start-offset-checkpoint        log start offset (after DeleteRecords)
// A missing or malformed checkpoint reads as empty, which is always safe: it
// means full recovery, a high watermark re-learned from replication, and a log
// start at the first segment.

import * as path from 'node:path';
import type { Clock, Scheduler } from '../util/clock.js';
import { NodeFileSystem, type FileSystem } from '../util/file-system.js';
import { Errors, SluiceError, isSluiceError } from '../util/errors.js';
import { silentLogger, type Logger } from '../util/logger.js';
import {
  LOG_START_OFFSET_CHECKPOINT_FILE,
  RECOVERY_POINT_CHECKPOINT_FILE,
  REPLICATION_OFFSET_CHECKPOINT_FILE,
  readOffsetCheckpoint,
  writeOffsetCheckpoint,
  type PartitionOffset,
} from './checkpoint.js';
import { fsyncDir } from '../util/fs-util.js';
import { DEFAULT_LOG_MANAGER_CONFIG, NEVER, type LogConfig, type LogManagerConfig } from './log-config.js';
import { TailCache } from './tail-cache.js';
import { PartitionLog } from './partition-log.js';
import { LogCleaner, type LogCleanerStatus } from './log-cleaner.js';
import type { SwapHook } from './segment-swap.js';

export const METADATA_TOPIC = '__cluster_metadata';
const TOPIC_NAME_PATTERN = /^[a-zA-Z0-9._-]{1,249}$/;
const PARTITION_PATTERN = /^\d{1,9}$/;
const DELETE_DIR_SUFFIX = '-delete';
/** Intervals longer than a timer can wait (Node's limit) mean "never". */
const TIMER_DELAY_MAX_MS = 2 ** 31 - 1;

export interface TopicPartition {
  topic: string;
  partition: number;
}

export function partitionDirName(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

/** The topic-partition a directory name stands for, or null if it is not one. */
export function parsePartitionDirName(name: string): TopicPartition | null {
  const dash = name.lastIndexOf('-');
  if (dash <= 0) return null;
  const topic = name.slice(0, dash);
  const partition = name.slice(dash + 1);
  if (!PARTITION_PATTERN.test(partition) || !isValidTopicName(topic)) return null;
  return { topic, partition: Number(partition) };
}

export function isValidTopicName(topic: string): boolean {
  return TOPIC_NAME_PATTERN.test(topic) && topic !== '.' && topic !== '..';
}

export interface LogManagerOptions {
  dataDir: string;
  /** Broker-wide defaults for every log (over DEFAULT_LOG_CONFIG). */
  logConfig?: Partial<LogConfig>;
  managerConfig?: Partial<LogManagerConfig>;
  /** Per-topic overrides known at start (e.g. from the metadata image). */
  topicConfig?: (topic: string) => Partial<LogConfig>;
  /** Which topics' directories this manager owns; default: all but the metadata log. */
  isManagedTopic?: (topic: string) => boolean;
  /** Time for retention, flush.ms and segment.ms. */
  clock: Clock;
  /** Timers: retention, flush and checkpoint intervals, and the log cleaner. */
  scheduler: Scheduler;
  /** The disk (default the real one, NodeFileSystem; the simulation passes its own). */
  fs?: FileSystem;
  logger?: Logger;
  /** Tests: called between the steps of every cleaner swap (segment-swap.ts). */
  cleanerSwapHook?: SwapHook;
}

export interface ManagedLog extends TopicPartition {
  log: PartitionLog;
}

export class LogManager {
  readonly dataDir: string;
  private readonly logs = new Map<string, ManagedLog>();
  private readonly topicOverrides = new Map<string, Partial<LogConfig>>();
  private readonly brokerConfig: Partial<LogConfig>;
  private readonly managerConfig: LogManagerConfig;
  /** The newest bytes of every log, within one budget (tail-cache.ts). */
  private readonly tailCache: TailCache | undefined;
  private readonly clock: Clock;
  private readonly scheduler: Scheduler;
  private readonly fs: FileSystem;
  private readonly logger: Logger;
  private readonly isManagedTopic: (topic: string) => boolean;
  private readonly topicConfig: (topic: string) => Partial<LogConfig>;
  /** Cancels the pending run of each periodic task (empty when stopped). */
  private timers: (() => void)[] = [];
  private deletions = 0;
  private checkpointScheduled: Promise<void> | undefined;
  private closed = false;
  /** Null when log.cleaner.enable is false. */
  readonly cleaner: LogCleaner | null;

  private constructor(opts: LogManagerOptions) {
    this.dataDir = opts.dataDir;
    this.brokerConfig = opts.logConfig ?? {};
    this.managerConfig = { ...DEFAULT_LOG_MANAGER_CONFIG, ...opts.managerConfig };
    this.tailCache = this.managerConfig.tailCacheBytes > 0 ? new TailCache(this.managerConfig.tailCacheBytes) : undefined;
    this.clock = opts.clock;
    this.scheduler = opts.scheduler;
    this.fs = opts.fs ?? NodeFileSystem;
    this.logger = (opts.logger ?? silentLogger).child({ component: 'log-manager' });
    this.isManagedTopic = opts.isManagedTopic ?? ((topic) => topic !== METADATA_TOPIC);
    this.topicConfig = opts.topicConfig ?? (() => ({}));
    this.cleaner = this.managerConfig.cleanerEnable === 0 ? null : new LogCleaner({
      fs: this.fs,
      dataDir: this.dataDir,
      config: this.managerConfig,
      clock: this.clock,
      scheduler: this.scheduler,
      logger: this.logger.child({ component: 'log-cleaner' }),
      logs: () => this.logs.values(),
      ...(opts.cleanerSwapHook ? { swapHook: opts.cleanerSwapHook } : {}),
    });
  }

  /** What the cleaner knows of one log (null: no such log, or the cleaner is off). */
  cleanerStatus(topic: string, partition: number): LogCleanerStatus | null {
    const m = this.logs.get(partitionDirName(topic, partition));
    return m === undefined || this.cleaner === null ? null : this.cleaner.status(m);
  }

  /** Opens (recovering as needed) every partition log under `opts.dataDir`. */
  static open(opts: LogManagerOptions): LogManager {
    const manager = new LogManager(opts);
    manager.loadLogs();
    return manager;
  }

  private loadLogs(): void {
    const fs = this.fs;
    fs.mkdirSync(this.dataDir, { recursive: true });
    const recoveryPoints = this.readCheckpoint(RECOVERY_POINT_CHECKPOINT_FILE);
    const startOffsets = this.readCheckpoint(LOG_START_OFFSET_CHECKPOINT_FILE);
    const highWatermarks = this.readCheckpoint(REPLICATION_OFFSET_CHECKPOINT_FILE);
    for (const name of fs.readdirSync(this.dataDir).sort()) {
      // Names that are neither a partition nor a deletion are never stat'ed (a data dir holds many logs).
      const tp = parsePartitionDirName(name);
      const doomed = name.endsWith(DELETE_DIR_SUFFIX);
      if (!doomed && (tp === null || !this.isManagedTopic(tp.topic))) continue;
      if (!fs.statSync(path.join(this.dataDir, name)).isDirectory) continue;
      if (doomed) {
        fs.rmSync(path.join(this.dataDir, name), { recursive: true, force: true });
        continue;
      }
      if (tp === null) continue;
      const key = name;
      this.openLog(tp, {
        recoveryPoint: recoveryPoints.get(key) ?? 0,
        logStartOffset: startOffsets.get(key) ?? 0,
        highWatermark: highWatermarks.get(key) ?? 0,
      });
    }
    this.logger.info({ dataDir: this.dataDir, logs: this.logs.size }, 'loaded logs');
  }

  private readCheckpoint(file: string): Map<string, number> {
    try {
      const entries = readOffsetCheckpoint(this.fs, path.join(this.dataDir, file));
      return new Map(entries.map((e) => [partitionDirName(e.topic, e.partition), e.offset]));
    } catch (err) {
      if (!isSluiceError(err)) throw err;
      this.logger.warn({ file, err: err.message }, 'ignoring unreadable checkpoint');
      return new Map();
    }
  }

  private openLog(tp: TopicPartition, offsets: { recoveryPoint: number; logStartOffset: number; highWatermark: number }, newDirectory = false): PartitionLog {
    const name = partitionDirName(tp.topic, tp.partition);
    const log = PartitionLog.open({
      dir: path.join(this.dataDir, name),
      config: this.configFor(tp.topic),
      clock: this.clock,
      fs: this.fs,
      logger: this.logger.child({ topic: tp.topic, partition: tp.partition }),
      ...offsets,
      newDirectory,
      ...(this.tailCache ? { tailCache: this.tailCache } : {}),
    });
    this.logs.set(name, { ...tp, log });
    return log;
  }

  private configFor(topic: string): Partial<LogConfig> {
    const overrides = this.topicOverrides.get(topic) ?? this.topicConfig(topic);
    this.topicOverrides.set(topic, overrides);
    return { ...this.brokerConfig, ...overrides };
  }

  getLog(topic: string, partition: number): PartitionLog | undefined {
    return this.logs.get(partitionDirName(topic, partition))?.log;
  }

  allLogs(): ManagedLog[] {
    return [...this.logs.values()];
  }

  /** The log of `topic`-`partition`, created empty if it does not exist yet. */
  getOrCreateLog(topic: string, partition: number): PartitionLog {
    this.ensureOpen();
    const existing = this.getLog(topic, partition);
    if (existing !== undefined) return existing;
    if (!isValidTopicName(topic) || !this.isManagedTopic(topic)) {
      throw new SluiceError(Errors.INVALID_TOPIC, `cannot host a log for topic ${JSON.stringify(topic)}`, { topic });
    }
    if (!Number.isInteger(partition) || partition < 0 || !PARTITION_PATTERN.test(String(partition))) {
      throw new SluiceError(Errors.INVALID_PARTITIONS, `bad partition ${partition}`, { topic, partition });
    }
    // The new directory's entry reaches the disk with the log's first flush (PartitionLog newDirectory).
    return this.openLog({ topic, partition }, { recoveryPoint: 0, logStartOffset: 0, highWatermark: 0 }, true);
  }

  /**
   * Closes and removes the log's directory (rename first, so a crash midway
   * leaves a `-delete` directory that the next start finishes off); the
   * checkpoints are rewritten without it after this event-loop turn (see
   * whenCheckpointed). Returns whether the log existed.
   */
  deleteLog(topic: string, partition: number): boolean {
    this.ensureOpen();
    const name = partitionDirName(topic, partition);
    const managed = this.logs.get(name);
    if (managed === undefined) return false;
    this.cleaner?.forget(topic, partition);
    managed.log.closeForDelete();
    this.logs.delete(name);
    const doomed = path.join(this.dataDir, `${name}.${this.clock.nowMs()}.${this.deletions++}${DELETE_DIR_SUFFIX}`);
    this.fs.renameSync(path.join(this.dataDir, name), doomed);
    fsyncDir(this.fs, this.dataDir);
    this.fs.rmSync(doomed, { recursive: true, force: true });
    this.checkpointSoon();
    return true;
  }

  /**
   * Rewrites the checkpoints once after this event-loop turn: deleting a
   * topic's thousands of logs then costs one rewrite, not one per log.
   */
  private checkpointSoon(): void {
    this.checkpointScheduled ??= new Promise<void>((resolve) => this.scheduler.schedule(0, () => {
      this.checkpointScheduled = undefined;
      try {
        if (!this.closed) this.checkpointAll();
      } catch (err) {
        this.logger.error({ err: String(err) }, 'checkpoint after log deletion failed');
      }
      resolve();
    }));
  }

  /** Resolves once checkpoints scheduled by deletions are written (tests). */
  whenCheckpointed(): Promise<void> {
    return this.checkpointScheduled ?? Promise.resolve();
  }

  /** Sets a topic's overrides (replacing earlier ones) and applies them to its open logs. */
  updateTopicConfig(topic: string, overrides: Partial<LogConfig>): void {
    this.topicOverrides.set(topic, overrides);
    for (const m of this.logs.values()) {
      if (m.topic === topic) m.log.updateConfig({ ...this.brokerConfig, ...overrides });
    }
    // A topic just made compact (or given a lower dirty ratio) should not wait out the cleaner's backoff.
    this.cleaner?.wakeUp();
  }

  // ---- periodic work (each also callable directly) ---------------------------

  /** Runs retention on every log; returns the number of segments deleted. */
  runRetention(): number {
    let deleted = 0;
    for (const m of this.logs.values()) deleted += m.log.deleteOldSegments();
    return deleted;
  }

  /** Flushes the logs whose flush.ms has passed; returns how many it flushed. */
  flushDueLogs(): number {
    const now = this.clock.nowMs();
    let flushed = 0;
    for (const m of this.logs.values()) if (m.log.maybeFlush(now)) flushed++;
    return flushed;
  }

  checkpointRecoveryPoints(): void {
    this.writeCheckpoint(RECOVERY_POINT_CHECKPOINT_FILE, (log) => log.recoveryPoint);
  }

  checkpointHighWatermarks(): void {
    this.writeCheckpoint(REPLICATION_OFFSET_CHECKPOINT_FILE, (log) => log.highWatermark);
  }

  checkpointLogStartOffsets(): void {
    this.writeCheckpoint(LOG_START_OFFSET_CHECKPOINT_FILE, (log) => log.logStartOffset);
  }

  checkpointAll(): void {
    this.checkpointRecoveryPoints();
    this.checkpointHighWatermarks();
    this.checkpointLogStartOffsets();
  }

  private writeCheckpoint(file: string, offsetOf: (log: PartitionLog) => number): void {
    const entries: PartitionOffset[] = [...this.logs.values()]
      .map((m) => ({ topic: m.topic, partition: m.partition, offset: offsetOf(m.log) }))
      .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
    writeOffsetCheckpoint(this.fs, path.join(this.dataDir, file), entries);
  }

  /** Starts the timers for retention, flush.ms checks and the checkpoints. */
  start(): void {
    this.ensureOpen();
    if (this.timers.length > 0) return;
    const c = this.managerConfig;
    this.every(c.retentionCheckIntervalMs, 'retention', () => this.runRetention());
    this.every(c.flushSchedulerIntervalMs, 'flush', () => this.flushDueLogs());
    this.every(c.flushOffsetCheckpointIntervalMs, 'recovery-point checkpoint', () => this.checkpointRecoveryPoints());
    this.every(c.flushStartOffsetCheckpointIntervalMs, 'log-start-offset checkpoint', () => this.checkpointLogStartOffsets());
    this.every(c.highWatermarkCheckpointIntervalMs, 'high-watermark checkpoint', () => this.checkpointHighWatermarks());
    this.cleaner?.start();
  }

  private every(intervalMs: number, what: string, task: () => unknown): void {
    if (intervalMs >= NEVER || intervalMs > TIMER_DELAY_MAX_MS) return;
    // One slot per task: it holds the cancel of the next run, re-armed after each run (an interval on the Scheduler).
    const slot = this.timers.length;
    const run = (): void => {
      try {
        task();
      } catch (err) {
        this.logger.error({ task: what, err: String(err) }, 'log manager task failed');
      }
      if (this.timers.length > slot) this.timers[slot] = this.scheduler.schedule(intervalMs, run);
    };
    this.timers.push(this.scheduler.schedule(intervalMs, run));
  }

  stop(): void {
    for (const cancel of this.timers) cancel();
    this.timers = [];
    this.cleaner?.stop();
  }

  /** Stops the timers, closes every log cleanly, and writes the checkpoints. */
  close(): void {
    if (this.closed) return;
    this.stop();
    for (const m of this.logs.values()) {
      try {
        m.log.close();
      } catch (err) {
        this.logger.error({ topic: m.topic, partition: m.partition, err: String(err) }, 'failed to close log');
      }
    }
    this.checkpointAll();
    this.closed = true;
  }

  private ensureOpen(): void {
    if (this.closed) throw new SluiceError(Errors.KAFKA_STORAGE_ERROR, 'log manager is closed');
  }
}
