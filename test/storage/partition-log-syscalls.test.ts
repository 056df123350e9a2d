// The system calls a log pays on its hot and cold paths.
//
// fsyncs at open, close and its first change. Found by the
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

/** Counts calls of fs[name] made while `fn` runs. */
function callsDuring(name: 'fsyncSync' | 'readSync', fn: () => void): number {
  const target = fs as unknown as Record<string, (...args: unknown[]) => unknown>;
  const original = target[name]!;
  let calls = 0;
  target[name] = (...args: unknown[]) => {
    calls++;
    return original(...args);
  };
  syncBuiltinESMExports();
  try {
    fn();
  } finally {
    target[name] = original;
    syncBuiltinESMExports();
  }
  return calls;
}

/** fs.fsyncSync calls made while `fn` runs (the storage code's only synchronous fsync). */
const fsyncsDuring = (fn: () => void): number => callsDuring('fsyncSync', fn);

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

  // A 10-record batch cost a leader four read(2) calls per fetch, three of them for headers.
  it('reads near the end of the log with one read: the batch\'s place is remembered', () => {
    const log = open();
    for (let i = 0; i < 50; i++) log.append(makeBatch({ records: 10, valueBytes: 100 }), { leaderEpoch: 0 });
    let result!: ReturnType<PartitionLog['read']>;
    expect(callsDuring('readSync', () => { result = log.read(485, 1 << 20, { maxOffset: 495 }); })).to.equal(1);
    expect(result.firstOffset).to.equal(480);
    expect(result.nextOffset).to.equal(490);
    // After a truncation the remembered places are dropped and found again from the file.
    log.truncateTo(300);
    log.append(makeBatch({ records: 10, valueBytes: 100 }), { leaderEpoch: 1 });
    expect(log.read(300, 1 << 20).firstOffset).to.equal(300);
    expect(log.read(295, 1 << 20).firstOffset).to.equal(290);
    log.close();
    const reopened = open();
    expect(reopened.read(305, 1 << 20).firstOffset).to.equal(300);
    expect(reopened.read(305, 1 << 20).nextOffset).to.equal(310);
  });

  // Found by the scale bench: a node with 10,000 new, empty replicas took ~30 s to stop,
  // creating and fsyncing two empty index files per log.
  it('creates, closes and reopens an empty log without an fsync or an index file', () => {
    let log!: PartitionLog;
    log = open();
    expect(fsyncsDuring(() => log.close()), 'fsyncs at close').to.equal(0);
    expect(fs.readdirSync(path.join(dir, 't-0')).filter((f) => f.endsWith('index'))).to.deep.equal([]);
    expect(fsyncsDuring(() => { log = open(); }), 'fsyncs at reopen').to.equal(0);
    log.append(makeBatch({ records: 2 }), { leaderEpoch: 0 });
    expect(log.logEndOffset).to.equal(2);
    log.close();
    expect(open().logEndOffset).to.equal(2);
  });
});

