import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  LOG_START_OFFSET_CHECKPOINT_FILE,
  RECOVERY_POINT_CHECKPOINT_FILE,
  REPLICATION_OFFSET_CHECKPOINT_FILE,
  readOffsetCheckpoint,
} from '../../src/storage/checkpoint.js';
import { LogManager, parsePartitionDirName } from '../../src/storage/log-manager.js';
import { ManualClock, ManualScheduler } from '../../src/util/clock.js';
import { NodeFileSystem } from '../../src/util/file-system.js';
import { Errors, isSluiceError } from '../../src/util/errors.js';
import { appendMany, makeBatch, readAllBytes, removeDir, tempDir } from './log-test-helpers.js';

describe('parsePartitionDirName', () => {
  it('splits on the last dash', () => {
    expect(parsePartitionDirName('orders-eu.v2-13')).to.deep.equal({ topic: 'orders-eu.v2', partition: 13 });
    expect(parsePartitionDirName('a-0')).to.deep.equal({ topic: 'a', partition: 0 });
    for (const bad of ['orders', '-3', 'orders-', 'orders-x', 'orders-1.2', 'orders-3-delete', 'ord ers-1', '..-1']) {
      expect(parsePartitionDirName(bad), bad).to.equal(null);
    }
  });
});

describe('LogManager', () => {
  let dataDir: string;
  let clock: ManualClock;
  let scheduler: ManualScheduler;
  const S = makeBatch().length;

  beforeEach(() => {
    dataDir = tempDir('sluice-logmgr-');
    clock = new ManualClock();
    scheduler = new ManualScheduler(clock);
  });
  afterEach(() => removeDir(dataDir));

  const open = (): LogManager => LogManager.open({ dataDir, clock, scheduler, logConfig: { segmentBytes: 3 * S, retentionMs: -1 } });

  it('reopens every partition, ignoring other directories and the metadata log', () => {
    fs.mkdirSync(path.join(dataDir, '__cluster_metadata-0'));
    fs.writeFileSync(path.join(dataDir, '__cluster_metadata-0', 'keep-me'), 'raft');
    fs.mkdirSync(path.join(dataDir, 'lost+found'));
    fs.writeFileSync(path.join(dataDir, 'meta.properties'), 'node.id=1\n');
    const m = open();
    const written = new Map<string, Buffer>();
    for (const [topic, partition, n] of [['orders-eu.v2', 0, 7], ['orders-eu.v2', 11, 2], ['a', 3, 1]] as const) {
      written.set(`${topic}/${partition}`, Buffer.concat(appendMany(m.getOrCreateLog(topic, partition), n)));
    }
    expect(m.getOrCreateLog('a', 3)).to.equal(m.getLog('a', 3));
    m.close();

    const again = open();
    expect(again.allLogs().map((l) => `${l.topic}/${l.partition}`).sort()).to.deep.equal([...written.keys()].sort());
    for (const l of again.allLogs()) expect(readAllBytes(l.log).equals(written.get(`${l.topic}/${l.partition}`)!)).to.equal(true);
    expect(fs.readFileSync(path.join(dataDir, '__cluster_metadata-0', 'keep-me'), 'utf8')).to.equal('raft');
    again.close();
  });

  it('round-trips recovery points, high watermarks and log start offsets through checkpoint files', () => {
    const m = open();
    const log = m.getOrCreateLog('t-x', 1);
    appendMany(log, 8);
    log.updateHighWatermark(6);
    log.advanceLogStartOffset(4);
    log.flush();
    m.checkpointAll();
    const read = (f: string): unknown => readOffsetCheckpoint(NodeFileSystem, path.join(dataDir, f));
    expect(read(RECOVERY_POINT_CHECKPOINT_FILE)).to.deep.equal([{ topic: 't-x', partition: 1, offset: 8 }]);
    expect(read(REPLICATION_OFFSET_CHECKPOINT_FILE)).to.deep.equal([{ topic: 't-x', partition: 1, offset: 6 }]);
    expect(read(LOG_START_OFFSET_CHECKPOINT_FILE)).to.deep.equal([{ topic: 't-x', partition: 1, offset: 4 }]);
    m.close();
    const again = open();
    const reopened = again.getLog('t-x', 1)!;
    expect([reopened.logStartOffset, reopened.highWatermark, reopened.logEndOffset]).to.deep.equal([4, 6, 8]);
    again.close();
  });

  it('deletes a log: directory gone, checkpoints without it, and it stays gone on reopen', async () => {
    const m = open();
    appendMany(m.getOrCreateLog('keep', 0), 2);
    appendMany(m.getOrCreateLog('drop', 0), 2);
    expect(m.deleteLog('drop', 0)).to.equal(true);
    expect(m.deleteLog('drop', 0)).to.equal(false);
    expect(fs.readdirSync(dataDir).filter((n) => n.startsWith('drop'))).to.deep.equal([]);
    scheduler.advance(0);
    await m.whenCheckpointed();
    expect(readOffsetCheckpoint(NodeFileSystem, path.join(dataDir, RECOVERY_POINT_CHECKPOINT_FILE)).map((e) => e.topic)).to.deep.equal(['keep']);
    m.close();
    fs.mkdirSync(path.join(dataDir, 'half-0.123.0-delete'));
    const again = open();
    expect(again.allLogs().map((l) => l.topic)).to.deep.equal(['keep']);
    expect(fs.existsSync(path.join(dataDir, 'half-0.123.0-delete'))).to.equal(false);
    again.close();
  });

  it('refuses to host the metadata log or bad names', () => {
    const m = open();
    for (const [topic, partition, code] of [['__cluster_metadata', 0, Errors.INVALID_TOPIC], ['bad name', 0, Errors.INVALID_TOPIC], ['ok', -1, Errors.INVALID_PARTITIONS]] as const) {
      expect(() => m.getOrCreateLog(topic, partition)).to.throw().that.satisfies((e: unknown) => isSluiceError(e, code));
    }
    m.close();
  });

  it('runs retention over all logs with per-topic overrides', () => {
    const t0 = clock.nowMs();
    const m = open();
    m.updateTopicConfig('short', { retentionMs: 1000 });
    const short = m.getOrCreateLog('short', 0);
    const long = m.getOrCreateLog('long', 0);
    for (const log of [short, long]) {
      for (let i = 0; i < 7; i++) log.append(makeBatch({ timestamp: t0 }), { leaderEpoch: 0 });
      log.updateHighWatermark(log.logEndOffset);
    }
    clock.advance(5000);
    expect(m.runRetention()).to.equal(2);
    expect(short.logStartOffset).to.equal(6);
    expect(long.logStartOffset).to.equal(0);
    m.close();
  });

  it('runs retention on its own timer once started, and not after stop', () => {
    const m = LogManager.open({
      dataDir,
      clock,
      scheduler,
      logConfig: { segmentBytes: 2 * S, retentionBytes: 2 * S, retentionMs: -1 },
      managerConfig: { retentionCheckIntervalMs: 5 },
    });
    const log = m.getOrCreateLog('timed', 0);
    appendMany(log, 6);
    log.updateHighWatermark(6);
    m.start();
    scheduler.advance(4);
    expect(log.numberOfSegments).to.equal(3);
    scheduler.advance(1);
    expect(log.numberOfSegments).to.equal(1);
    expect(log.logStartOffset).to.equal(4);
    m.stop();
    expect(scheduler.size).to.equal(0);
    m.close();
  });
});
