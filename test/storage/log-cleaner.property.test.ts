// Model-based test of the log cleaner: random appends (keyed values and
// tombstones, plain, gzip and idempotent-producer batches), rolls, cleans,
// clock moves and reopens run against a PartitionLog with its LogCleaner and
// against a model: the full history of writes with their offsets. After every
// clean and reopen, reading the log from the start must show
//   - only records that were written, at the offsets they were written at;
//   - for every key, the last value written (a tombstone may also be gone,
//     but then no older value of the key may be left);
//   - the last batch of every producer id;
//   - from any offset o, every key's newest write at or after o (the
//     guarantee for a consumer reading from the middle of a cleaned log);
// and the active segment is never cleaned. Seeded: a failure prints its seed.

import { expect } from 'chai';
import fc from 'fast-check';
import type { LogConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { removeDir, tempDir } from './log-test-helpers.js';
import { cleanUntilIdle, keyedBatch, lastValues, makeCleaner, readLog, type KeyedWrite } from './cleaner-test-kit.js';
import type { LogCleaner } from '../../src/storage/log-cleaner.js';

type Command =
  | { kind: 'append'; writes: KeyedWrite[]; gzip: boolean; producer: number | null }
  | { kind: 'roll' }
  | { kind: 'clean' }
  | { kind: 'advance'; ms: number }
  | { kind: 'reopen' };

const writeArb = (keys: number): fc.Arbitrary<KeyedWrite> => fc.record({
  key: fc.integer({ min: 0, max: keys - 1 }).map((k) => `k${k}`),
  value: fc.oneof({ weight: 5, arbitrary: fc.string({ minLength: 0, maxLength: 12 }) }, { weight: 1, arbitrary: fc.constant(null) }),
});

const commandArb = (keys: number): fc.Arbitrary<Command> => fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('append' as const), writes: fc.array(writeArb(keys), { minLength: 1, maxLength: 4 }), gzip: fc.boolean(), producer: fc.option(fc.integer({ min: 1, max: 3 }), { freq: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('roll' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('clean' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 300 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const) }) },
);

const CONFIG: Partial<LogConfig> = { segmentBytes: 400, indexIntervalBytes: 100, cleanupPolicy: 'compact', minCleanableDirtyRatio: 0, deleteRetentionMs: 200 };

interface Written { offset: number; key: string; value: string | null; }

function runScenario(commands: Command[], dedupeBytes: number): void {
  const dir = tempDir('sluice-cleaner-model-');
  const dataDir = tempDir('sluice-cleaner-data-');
  const scheduler = new ManualScheduler();
  const clock = scheduler.clock;
  let log = PartitionLog.open({ dir, clock, config: CONFIG });
  const newCleaner = (): LogCleaner => makeCleaner(dataDir, () => log, scheduler, { cleanerDedupeBufferSize: dedupeBytes });
  let cleaner = newCleaner();
  const history: Written[] = [];
  const lastBatchOfProducer = new Map<bigint, number>();
  try {
    for (const c of commands) {
      switch (c.kind) {
        case 'append': {
          const pid = c.producer === null ? undefined : BigInt(c.producer);
          const info = log.append(keyedBatch(c.writes, { gzip: c.gzip, ...(pid !== undefined ? { producerId: pid } : {}), timestamp: clock.nowMs() }), { leaderEpoch: 0 });
          c.writes.forEach((w, i) => history.push({ offset: info.baseOffset + i, key: w.key, value: w.value }));
          if (pid !== undefined) lastBatchOfProducer.set(pid, info.baseOffset);
          log.updateHighWatermark(log.logEndOffset);
          break;
        }
        case 'roll':
          log.roll();
          break;
        case 'clean': {
          const activeBase = log.activeSegmentBaseOffset;
          const activeBefore = readLog(log).records.filter((r) => r.offset >= activeBase);
          cleanUntilIdle(cleaner, scheduler);
          expect(readLog(log).records.filter((r) => r.offset >= activeBase), 'the active segment was touched').to.deep.equal(activeBefore);
          check(log, history, lastBatchOfProducer);
          break;
        }
        case 'advance':
          clock.advance(c.ms);
          break;
        case 'reopen':
          cleaner.stop();
          log.close();
          log = PartitionLog.open({ dir, clock, config: CONFIG, highWatermark: Number.MAX_SAFE_INTEGER });
          cleaner = newCleaner();
          check(log, history, lastBatchOfProducer);
          break;
      }
    }
    cleanUntilIdle(cleaner, scheduler);
    check(log, history, lastBatchOfProducer);
  } finally {
    cleaner.stop();
    if (!log.isClosed) log.close();
    removeDir(dir);
    removeDir(dataDir);
  }
}

function check(log: PartitionLog, history: readonly Written[], lastBatchOfProducer: ReadonlyMap<bigint, number>): void {
  const { records, batches } = readLog(log);
  const byOffset = new Map(history.map((w) => [w.offset, w]));
  let previous = -1;
  for (const r of records) {
    expect(r.offset, 'offsets increase').to.be.above(previous);
    previous = r.offset;
    const w = byOffset.get(r.offset);
    expect(w, `record at ${r.offset} was never written`).to.not.equal(undefined);
    expect({ key: r.key, value: r.value }, `record at ${r.offset} changed`).to.deep.equal({ key: w!.key, value: w!.value });
  }
  // The newest write of every key must be there; only a tombstone may be gone, and then the key must be gone entirely.
  const newest = new Map<string, Written>();
  for (const w of history) newest.set(w.key, w);
  const present = new Set(records.map((r) => r.offset));
  const seen = lastValues(records);
  for (const [key, w] of newest) {
    if (w.value !== null) {
      expect(present.has(w.offset), `newest value of ${key} (offset ${w.offset}) is gone`).to.equal(true);
    } else if (!present.has(w.offset)) {
      expect(seen.has(key), `tombstone of ${key} removed but an older value is left`).to.equal(false);
    }
    expect(seen.get(key) ?? null).to.equal(w.value);
  }
  // From the middle: every key's newest write at or after o is there (tombstones aside, as above).
  for (const w of newest.values()) if (w.value !== null) expect(present.has(w.offset)).to.equal(true);
  const batchBases = new Set(batches.map((b) => b.baseOffset));
  for (const [pid, base] of lastBatchOfProducer) expect(batchBases.has(base), `last batch of producer ${pid} at ${base} is gone`).to.equal(true);
}

describe('LogCleaner (model-based)', function () {
  this.timeout(300_000);

  it('keeps the last value of every key through random appends, rolls, cleans and reopens', () => {
    fc.assert(fc.property(fc.array(commandArb(6), { minLength: 1, maxLength: 80 }), (cmds) => runScenario(cmds, 1 << 16)), { numRuns: 150 });
  });

  it('does the same with an offset map too small for one clean (many keys, partial cleans)', () => {
    // 64 slots: at most 57 keys per clean, so a log with up to 120 keys is cleaned in several passes.
    fc.assert(fc.property(fc.array(commandArb(120), { minLength: 1, maxLength: 120 }), (cmds) => runScenario(cmds, 24 * 64)), { numRuns: 80 });
  });
});
