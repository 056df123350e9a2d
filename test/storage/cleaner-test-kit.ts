// Shared fixtures of the log cleaner tests: a cleaner over one log with a
// manual clock and scheduler, keyed batches, and a decoded view of a log.

import { expect } from 'chai';
import { decodeRecordBatches } from '../../src/record/record-batch.js';
import { CompressionType } from '../../src/record/batch-header.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { DEFAULT_LOG_MANAGER_CONFIG, type LogManagerConfig } from '../../src/storage/log-config.js';
import { LogCleaner } from '../../src/storage/log-cleaner.js';
import type { PartitionLog } from '../../src/storage/partition-log.js';
import type { SwapHook } from '../../src/storage/segment-swap.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { asBuffer } from '../../src/util/node-bytes.js';
import { NodeFileSystem } from '../../src/util/file-system.js';

export const TOPIC = 'table';

export interface ReadRecord {
  offset: number;
  key: string | null;
  value: string | null;
}

export interface KeyedWrite {
  key: string;
  /** null: a tombstone. */
  value: string | null;
}

export function keyedBatch(writes: readonly KeyedWrite[], opts: { gzip?: boolean; producerId?: bigint; timestamp?: number } = {}): Buffer {
  return asBuffer(encodeRecordBatch({
    records: writes.map((w) => ({ key: Buffer.from(w.key), value: w.value === null ? null : Buffer.from(w.value), timestamp: opts.timestamp ?? 1_000 })),
    ...(opts.gzip === true ? { compression: CompressionType.Gzip } : {}),
    ...(opts.producerId !== undefined ? { producerId: opts.producerId, producerEpoch: 0, baseSequence: 0 } : {}),
  }));
}

export interface LogContents {
  records: ReadRecord[];
  batches: { baseOffset: number; lastOffset: number; producerId: bigint; recordCount: number }[];
}

/** Every record and batch from the log start to the LEO, through the log's read path. */
export function readLog(log: PartitionLog): LogContents {
  const out: LogContents = { records: [], batches: [] };
  let offset = log.logStartOffset;
  for (let guard = 0; offset < log.logEndOffset; guard++) {
    expect(guard).to.be.below(100_000);
    const r = log.read(offset, 4096);
    if (r.records.length === 0) break;
    for (const b of decodeRecordBatches(r.records)) {
      out.batches.push({ baseOffset: b.header.baseOffset, lastOffset: b.header.baseOffset + b.header.lastOffsetDelta, producerId: b.header.producerId, recordCount: b.header.recordCount });
      for (const rec of b.records) {
        out.records.push({ offset: rec.offset, key: rec.key?.toString() ?? null, value: rec.value?.toString() ?? null });
      }
    }
    expect(r.nextOffset).to.be.above(offset);
    offset = r.nextOffset;
  }
  return out;
}

/** key -> the last value read (null: a tombstone is the last thing read); keys never read are absent. */
export function lastValues(records: readonly ReadRecord[]): Map<string, string | null> {
  const m = new Map<string, string | null>();
  for (const r of records) if (r.key !== null) m.set(r.key, r.value);
  return m;
}

export function makeCleaner(
  dataDir: string,
  log: () => PartitionLog,
  scheduler: ManualScheduler,
  config: Partial<LogManagerConfig> = {},
  swapHook?: SwapHook,
): LogCleaner {
  return new LogCleaner({
    fs: NodeFileSystem,
    dataDir,
    config: { ...DEFAULT_LOG_MANAGER_CONFIG, cleanerBackoffMs: 1000, ...config },
    clock: scheduler.clock,
    scheduler,
    logger: silentLogger,
    logs: () => [{ topic: TOPIC, partition: 0, log: log() }],
    ...(swapHook ? { swapHook } : {}),
  });
}

/** Starts the cleaner and runs its timers until nothing is due or running (bounded). */
export function cleanUntilIdle(cleaner: LogCleaner, scheduler: ManualScheduler): void {
  cleaner.start();
  cleaner.wakeUp();
  for (let i = 0; i < 1000 && !cleaner.isIdle(); i++) scheduler.advance(0, 100_000);
  expect(cleaner.isIdle(), 'cleaner still busy').to.equal(true);
}
