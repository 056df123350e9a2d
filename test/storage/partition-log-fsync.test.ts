// Which fsyncs a log pays at open, close and its first change. Found by the
// scale bench: with 10,000 replicas a node spent about a minute stopping and
// tens of seconds starting on one fsync (or three) per log that had not
// changed. The rules kept: an unchanged log is neither fsynced at close nor at
// open; the removal of the clean-shutdown marker reaches the disk before the
// log's bytes change; a changed log is still fsynced at close.
import { expect } from 'chai';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import * as path from 'node:path';
import { CLEAN_SHUTDOWN_FILE } from '../../src/storage/log-loader.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { ManualClock } from '../../src/util/clock.js';
import { makeBatch, removeDir, tempDir } from './log-test-helpers.js';

/** Counts fs.fsyncSync calls made while `fn` runs (the storage code's only synchronous fsync). */
function fsyncsDuring(fn: () => void): number {
  const original = fs.fsyncSync;
  let calls = 0;
  fs.fsyncSync = (fd: number) => {
    calls++;
    original(fd);
  };
  syncBuiltinESMExports();
  try {
    fn();
  } finally {
    fs.fsyncSync = original;
    syncBuiltinESMExports();
  }
  return calls;
}

describe('PartitionLog fsyncs', () => {
  let dir: string;
  const clock = new ManualClock();
  beforeEach(() => { dir = tempDir('sluice-fsync-'); });
  afterEach(() => removeDir(dir));
  const open = (): PartitionLog => PartitionLog.open({ dir: path.join(dir, 't-0'), clock });

  it('counts what it measures (the spy sees the fsyncs of a changed log\'s close)', () => {
    const log = open();
    log.append(makeBatch({ records: 3 }), { leaderEpoch: 0 });
    expect(fsyncsDuring(() => log.close())).to.be.greaterThan(0);
  });

  it('reopens and closes an unchanged log without an fsync', () => {
    const first = open();
    first.append(makeBatch({ records: 3 }), { leaderEpoch: 0 });
    first.close();
    let log!: PartitionLog;
    expect(fsyncsDuring(() => { log = open(); }), 'fsyncs at open').to.equal(0);
    expect(fs.existsSync(path.join(dir, 't-0', CLEAN_SHUTDOWN_FILE)), 'marker removed at open').to.equal(false);
    expect(fsyncsDuring(() => log.close()), 'fsyncs at close').to.equal(0);
    expect(fs.existsSync(path.join(dir, 't-0', CLEAN_SHUTDOWN_FILE)), 'marker written at close').to.equal(true);
    expect(open().logEndOffset).to.equal(3);
  });

  it('makes the marker\'s removal durable before the first change, once', () => {
    const first = open();
    first.append(makeBatch({ records: 3 }), { leaderEpoch: 0 });
    first.close();
    const log = open();
    const atFirst = fsyncsDuring(() => log.append(makeBatch({ records: 2 }), { leaderEpoch: 0 }));
    const atSecond = fsyncsDuring(() => log.append(makeBatch({ records: 2 }), { leaderEpoch: 0 }));
    expect(atFirst, 'the directory is fsynced before the first append').to.equal(1);
    expect(atSecond).to.equal(0);
    expect(fsyncsDuring(() => log.close()), 'the appended segment is fsynced at close').to.be.greaterThan(0);
  });

  it('fsyncs the directory before a truncation of a reopened log too', () => {
    const first = open();
    first.append(makeBatch({ records: 3 }), { leaderEpoch: 0 });
    first.append(makeBatch({ records: 3 }), { leaderEpoch: 1 });
    first.close();
    const log = open();
    expect(fsyncsDuring(() => log.truncateTo(3))).to.be.greaterThan(0);
    expect(log.logEndOffset).to.equal(3);
    log.close();
    expect(open().logEndOffset).to.equal(3);
  });
});
