// A crash at every step of a clean's swap (segment-swap.ts): the hook throws
// between steps, the process state is abandoned as a crash would leave it,
// and the directory is reopened. The log must read exactly as before the
// clean (crash before the commit point) or exactly as after an uninterrupted
// clean (at or after it) — never a mix, never a lost key — and the loader
// must leave no `.cleaned`, `.swap` or `.deleted` file behind.

import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LogConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { SWAP_STEPS, type SwapStep } from '../../src/storage/segment-swap.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { removeDir, tempDir } from './log-test-helpers.js';
import { cleanUntilIdle, keyedBatch, lastValues, makeCleaner, readLog, type LogContents } from './cleaner-test-kit.js';

const CONFIG: Partial<LogConfig> = { segmentBytes: 300, cleanupPolicy: 'compact', minCleanableDirtyRatio: 0 };

/** A log of several segments holding many versions of five keys (and a tombstone). */
function buildLog(dir: string, scheduler: ManualScheduler): void {
  const log = PartitionLog.open({ dir, clock: scheduler.clock, config: CONFIG });
  for (let i = 0; i < 60; i++) {
    const key = `k${i % 5}`;
    log.append(keyedBatch([{ key, value: i === 57 ? null : `v${i}` }], { timestamp: scheduler.clock.nowMs() }), { leaderEpoch: 0 });
  }
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  log.close();
}

function copyDir(from: string, to: string): void {
  fs.cpSync(from, to, { recursive: true });
}

function contentsAfter(dir: string, scheduler: ManualScheduler, dataDir: string, hook?: (step: SwapStep, index?: number) => void): { contents: LogContents | null; log: PartitionLog } {
  const log = PartitionLog.open({ dir, clock: scheduler.clock, config: CONFIG, highWatermark: Number.MAX_SAFE_INTEGER });
  const cleaner = makeCleaner(dataDir, () => log, scheduler, {}, hook);
  cleanUntilIdle(cleaner, scheduler);
  cleaner.stop();
  // After a failed swap the live log still reads (every old segment keeps its descriptor).
  return { contents: readLog(log), log };
}

describe('LogCleaner: a crash at every step of a swap', () => {
  const dirs: string[] = [];
  const mk = (p: string): string => {
    const d = tempDir(p);
    dirs.push(d);
    return d;
  };
  after(() => dirs.forEach(removeDir));

  const scheduler = new ManualScheduler();
  const original = mk('sluice-swap-orig-');
  buildLog(original, scheduler);

  let before: LogContents;
  let cleaned: LogContents;
  before = { records: [], batches: [] };
  cleaned = { records: [], batches: [] };

  it('an uninterrupted clean shrinks the log and keeps the last value of every key', () => {
    const plainDir = mk('sluice-swap-plain-');
    copyDir(original, plainDir);
    const reference = PartitionLog.open({ dir: plainDir, clock: scheduler.clock, config: CONFIG, highWatermark: Number.MAX_SAFE_INTEGER });
    before = readLog(reference);
    reference.close();
    const { contents, log } = contentsAfter(plainDir, scheduler, mk('sluice-swap-data-'));
    cleaned = contents!;
    log.close();
    expect(cleaned.records.length).to.be.below(before.records.length);
    expect(lastValues(cleaned.records)).to.deep.equal(lastValues(before.records));
    const reopened = PartitionLog.open({ dir: plainDir, clock: scheduler.clock, config: CONFIG });
    expect(readLog(reopened)).to.deep.equal(cleaned);
    reopened.close();
  });

  // Every step, and the rename of each old segment (there are several per group).
  const points: { step: SwapStep; index?: number }[] = [];
  for (const step of SWAP_STEPS) {
    if (step === 'old-renamed') for (let i = 0; i < 4; i++) points.push({ step, index: i });
    else points.push({ step });
  }
  const committed = (step: SwapStep): boolean => step === 'swap-renamed' || step === 'log-renamed' || step === 'deleted-removed';

  for (const point of points) {
    it(`a crash after ${point.step}${point.index === undefined ? '' : ` #${point.index}`} recovers to the ${committed(point.step) ? 'new' : 'old'} segments`, () => {
      const dir = mk('sluice-swap-crash-');
      copyDir(original, dir);
      let crashed = false;
      const hook = (step: SwapStep, index?: number): void => {
        if (!crashed && step === point.step && (point.index === undefined || point.index === index)) {
          crashed = true;
          throw new Error(`crash after ${step}`);
        }
      };
      // The crashed process's log object is abandoned, as a crash would leave it.
      const live = contentsAfter(dir, scheduler, mk('sluice-swap-data-'), hook);
      if (!crashed) return; // fewer old segments in the first group than this index: nothing to crash
      expect(lastValues(live.contents!.records), 'the live log after a failed swap').to.deep.equal(lastValues(before.records));
      const reopened = PartitionLog.open({ dir, clock: scheduler.clock, config: CONFIG });
      const after = readLog(reopened);
      reopened.close();
      const leftovers = fs.readdirSync(dir).filter((n) => /\.(cleaned|swap|deleted)$/.test(n));
      expect(leftovers, 'swap files left behind').to.deep.equal([]);
      expect(lastValues(after.records), 'a key lost or rolled back').to.deep.equal(lastValues(before.records));
      // Only the first group is swapped before the crash; the rest of the log is the old one.
      if (committed(point.step)) {
        expect(after.records.length).to.be.below(before.records.length);
        const firstBase = Math.min(...after.batches.map((b) => b.baseOffset));
        expect(firstBase).to.be.at.least(0);
        expect(after.records.every((r) => before.records.some((b) => b.offset === r.offset && b.value === r.value))).to.equal(true);
      } else {
        expect(after).to.deep.equal(before);
      }
      expect(fs.existsSync(path.join(dir, '00000000000000000000.log'))).to.equal(true);
    });
  }
});
