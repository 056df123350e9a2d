// The aborted-transaction index of each segment (src/storage/txn-index.ts)
// through a real PartitionLog on a temp directory: entries land in the
// segment holding their marker, survive a clean restart, go with truncation
// (also from the file, so a restart does not bring a cut entry back), with
// retention (the .txnindex is deleted with its segment) and with recovery of
// a crashed log; a malformed file is dropped and reported; a read_committed
// read's collection finds every overlapping abort across segments.

import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PartitionLog } from '../../src/storage/partition-log.js';
import type { LogConfig } from '../../src/storage/log-config.js';
import { segmentFileName } from '../../src/storage/segment.js';
import { TXN_INDEX_FILE_SUFFIX, type AbortedTxn } from '../../src/storage/txn-index.js';
import { ManualClock } from '../../src/util/clock.js';
import { makeBatch, removeDir, tempDir } from './log-test-helpers.js';

const CONFIG: Partial<LogConfig> = { segmentBytes: 600, indexIntervalBytes: 100, retentionMs: -1 };

function txnFile(dir: string, base: number): string {
  return path.join(dir, segmentFileName(base, TXN_INDEX_FILE_SUFFIX));
}

/** Appends `n` one-record batches; returns the offset of the last. */
function fill(log: PartitionLog, n: number): number {
  let last = -1;
  for (let i = 0; i < n; i++) last = log.append(makeBatch({ valueBytes: 60, fill: i }), { leaderEpoch: 0 }).lastOffset;
  return last;
}

function allAborts(log: PartitionLog): AbortedTxn[] {
  return log.abortedTransactions(0, Number.MAX_SAFE_INTEGER);
}

describe('storage: aborted-transaction index (.txnindex)', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('sluice-txnindex-');
  });
  afterEach(() => removeDir(dir));

  it('indexes an abort in the segment of its marker and keeps it across a clean restart', () => {
    const log = PartitionLog.open({ dir, clock: new ManualClock(), config: CONFIG });
    const m1 = fill(log, 3);
    log.addAbortedTxn({ producerId: 1, firstOffset: 0, lastOffset: m1, lastStableOffset: m1 + 1 });
    log.addAbortedTxn({ producerId: 1, firstOffset: 0, lastOffset: m1, lastStableOffset: m1 + 1 }); // the same marker again: not twice
    const m2 = fill(log, 20);
    log.addAbortedTxn({ producerId: 2, firstOffset: 5, lastOffset: m2, lastStableOffset: 7 });
    expect(log.numberOfSegments).to.be.greaterThan(2);
    const infos = log.segmentInfos();
    const segOf = (o: number): number => infos.filter((s) => s.baseOffset <= o).pop()!.baseOffset;
    expect(segOf(m2)).to.not.equal(segOf(m1));
    const expected = [
      { producerId: 1, firstOffset: 0, lastOffset: m1, lastStableOffset: m1 + 1 },
      { producerId: 2, firstOffset: 5, lastOffset: m2, lastStableOffset: 7 },
    ];
    expect(allAborts(log)).to.deep.equal(expected);
    expect(fs.existsSync(txnFile(dir, segOf(m1))), 'written when its segment rolled').to.equal(true);
    log.close();
    const again = PartitionLog.open({ dir, clock: new ManualClock(), config: CONFIG });
    expect(again.txnIndexDamaged).to.equal(false);
    expect(allAborts(again)).to.deep.equal(expected);
    const withoutAborts = again.segmentInfos().filter((s) => s.baseOffset !== segOf(m1) && s.baseOffset !== segOf(m2));
    for (const s of withoutAborts) expect(fs.existsSync(txnFile(dir, s.baseOffset)), `no .txnindex for segment ${s.baseOffset}`).to.equal(false);
    again.close();
  });

  it('collects the aborts a read must know of, across segments, from the marker segment on', () => {
    const log = PartitionLog.open({ dir, clock: new ManualClock(), config: CONFIG });
    fill(log, 30);
    // Producer 1 aborted [2, 10]; producer 2 began at 4 and aborted at 25, while producer 3 (begun at 12) was still open.
    log.addAbortedTxn({ producerId: 1, firstOffset: 2, lastOffset: 10, lastStableOffset: 4 });
    log.addAbortedTxn({ producerId: 2, firstOffset: 4, lastOffset: 25, lastStableOffset: 12 });
    log.addAbortedTxn({ producerId: 4, firstOffset: 27, lastOffset: 29, lastStableOffset: 30 });
    const ids = (from: number, to: number): number[] => log.abortedTransactions(from, to).map((a) => a.producerId);
    expect(ids(0, 4), 'a read of [0, 4): producer 1 overlaps; 2 begins at 4').to.deep.equal([1]);
    expect(ids(0, 5)).to.deep.equal([1, 2]);
    expect(ids(11, 20), 'producer 1 ended before 11').to.deep.equal([2]);
    expect(ids(26, 30)).to.deep.equal([4]);
    expect(ids(0, 30)).to.deep.equal([1, 2, 4]);
    log.close();
  });

  it('truncation cuts the entries past it, in memory and in the file', () => {
    const log = PartitionLog.open({ dir, clock: new ManualClock(), config: CONFIG });
    fill(log, 4);
    log.addAbortedTxn({ producerId: 1, firstOffset: 0, lastOffset: 1, lastStableOffset: 2 });
    log.addAbortedTxn({ producerId: 2, firstOffset: 2, lastOffset: 3, lastStableOffset: 4 });
    log.flush(); // the file holds both
    log.truncateTo(3);
    expect(allAborts(log).map((a) => a.producerId)).to.deep.equal([1]);
    fill(log, 3); // offsets 3.. again, with no abort this time: the old entry for 3 must not come back
    log.close();
    const again = PartitionLog.open({ dir, clock: new ManualClock(), config: CONFIG });
    expect(allAborts(again).map((a) => a.producerId)).to.deep.equal([1]);
    again.truncateFullyAndStartAt(50);
    expect(allAborts(again)).to.deep.equal([]);
    again.close();
  });

  it('retention deletes the .txnindex with its segment', () => {
    const clock = new ManualClock();
    const log = PartitionLog.open({ dir, clock, config: { ...CONFIG, retentionMs: 1000 } });
    const m = fill(log, 3);
    log.addAbortedTxn({ producerId: 1, firstOffset: 0, lastOffset: m, lastStableOffset: m + 1 });
    fill(log, 20);
    const first = log.segmentInfos()[0]!.baseOffset;
    expect(fs.existsSync(txnFile(dir, first))).to.equal(true);
    log.updateHighWatermark(log.logEndOffset);
    clock.advance(10_000_000);
    expect(log.deleteOldSegments()).to.be.greaterThan(0);
    expect(fs.existsSync(txnFile(dir, first))).to.equal(false);
    expect(allAborts(log)).to.deep.equal([]);
    log.close();
  });

  it('cuts entries past what a crashed log recovered, and drops a malformed file', () => {
    const log = PartitionLog.open({ dir, clock: new ManualClock(), config: CONFIG });
    const m1 = fill(log, 2);
    log.addAbortedTxn({ producerId: 1, firstOffset: 0, lastOffset: m1, lastStableOffset: m1 + 1 });
    const m2 = fill(log, 2);
    log.addAbortedTxn({ producerId: 2, firstOffset: m1 + 1, lastOffset: m2, lastStableOffset: m2 + 1 });
    log.flush();
    const base = log.segmentInfos().at(-1)!.baseOffset;
    log.closeForDelete(); // a crash
    // The log lost its tail (a torn write) but the index file still names the lost marker.
    const logFile = path.join(dir, segmentFileName(base, '.log'));
    const bytes = fs.readFileSync(logFile);
    fs.writeFileSync(logFile, bytes.subarray(0, bytes.length - 10));
    const recovered = PartitionLog.open({ dir, clock: new ManualClock(), config: CONFIG });
    expect(recovered.logEndOffset).to.equal(m2);
    expect(allAborts(recovered).map((a) => a.producerId)).to.deep.equal([1]);
    recovered.flush();
    recovered.closeForDelete();
    fs.writeFileSync(txnFile(dir, base), Buffer.alloc(33, 1)); // not a whole entry
    const damaged = PartitionLog.open({ dir, clock: new ManualClock(), config: CONFIG });
    expect(damaged.txnIndexDamaged).to.equal(true);
    expect(allAborts(damaged)).to.deep.equal([]);
    damaged.close();
  });

  it('resetAbortedTxns makes every segment hold exactly the given entries', () => {
    const log = PartitionLog.open({ dir, clock: new ManualClock(), config: CONFIG });
    fill(log, 25);
    log.addAbortedTxn({ producerId: 9, firstOffset: 0, lastOffset: 3, lastStableOffset: 4 });
    const entries = [
      { producerId: 1, firstOffset: 0, lastOffset: 2, lastStableOffset: 3 },
      { producerId: 2, firstOffset: 1, lastOffset: 20, lastStableOffset: 21 },
    ];
    log.resetAbortedTxns(entries);
    expect(allAborts(log)).to.deep.equal(entries);
    log.close();
    const again = PartitionLog.open({ dir, clock: new ManualClock(), config: CONFIG });
    expect(allAborts(again)).to.deep.equal(entries);
    again.close();
  });
});
