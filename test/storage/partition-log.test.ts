import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { baseOffsetOf, leaderEpochOf } from '../../src/record/batch-header.js';
import { CLEAN_SHUTDOWN_FILE } from '../../src/storage/log-loader.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { decodeRecordBatches, encodeRecordBatch } from '../../src/record/record-batch.js';
import { ManualClock } from '../../src/util/clock.js';
import { Errors, SluiceError, isSluiceError, type ErrorInfo } from '../../src/util/errors.js';
import type { LogConfig } from '../../src/storage/log-config.js';
import { appendMany, batchesIn, makeBatch, readAllBytes, removeDir, tempDir } from './log-test-helpers.js';
import { asBuffer } from '../../src/util/node-bytes.js';

function expectSluice(fn: () => unknown, info: ErrorInfo): SluiceError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(isSluiceError(caught, info), `expected ${info.name}, got ${String(caught)}`).to.equal(true);
  return caught as SluiceError;
}

describe('PartitionLog', () => {
  let dir: string;
  let clock: ManualClock;
  const S = makeBatch().length;

  beforeEach(() => {
    dir = tempDir('sluice-plog-');
    clock = new ManualClock();
  });
  afterEach(() => removeDir(dir));

  const open = (config: Partial<LogConfig> = {}): PartitionLog => PartitionLog.open({ dir, clock, config });

  describe('append', () => {
    it('assigns consecutive offsets and stamps offset and leader epoch in place', () => {
      const log = open();
      const b1 = makeBatch({ records: 3 });
      const b2 = makeBatch({ records: 2 });
      expect(log.append(b1, { leaderEpoch: 5 })).to.deep.include({ baseOffset: 0, lastOffset: 2, recordCount: 3, batchCount: 1, sizeBytes: b1.length });
      expect(log.append(b2, { leaderEpoch: 5 })).to.deep.include({ baseOffset: 3, lastOffset: 4 });
      expect([baseOffsetOf(b2), leaderEpochOf(b2)]).to.deep.equal([3, 5]);
      expect(log.logEndOffset).to.equal(5);
      const read = log.read(0, 1 << 20);
      expect(read.records.equals(Buffer.concat([b1, b2]))).to.equal(true);
      expect(decodeRecordBatches(read.records).flatMap((b) => b.records.map((r) => r.offset))).to.deep.equal([0, 1, 2, 3, 4]);
      log.close();
    });

    it('appends several batches given in one buffer', () => {
      const log = open();
      const info = log.append(Buffer.concat([makeBatch({ records: 2 }), makeBatch({ records: 4 })]), { leaderEpoch: 0 });
      expect(info).to.deep.include({ baseOffset: 0, lastOffset: 5, batchCount: 2, recordCount: 6 });
      expect(batchesIn(log.read(0, 1 << 20).records).map((b) => [b.baseOffset, b.lastOffset])).to.deep.equal([[0, 1], [2, 5]]);
      log.close();
    });

    it('with crcChecked skips only the CRC (the produce path verified it), still refusing a malformed batch', () => {
      const log = open();
      const flipped = makeBatch();
      flipped[flipped.length - 1]! ^= 0x01; // CRC now wrong, structure intact
      expectSluice(() => log.append(makeBatch().subarray(0, 40), { leaderEpoch: 0, crcChecked: true }), Errors.CORRUPT_MESSAGE);
      expectSluice(() => log.append(Buffer.from(flipped), { leaderEpoch: 0 }), Errors.CORRUPT_MESSAGE);
      expect(log.append(flipped, { leaderEpoch: 0, crcChecked: true }).baseOffset).to.equal(0);
      log.close();
    });

    it('rejects a bad CRC with CORRUPT_MESSAGE and leaves the log untouched', () => {
      const log = open();
      appendMany(log, 3);
      const file = path.join(dir, '00000000000000000000.log');
      const before = { leo: log.logEndOffset, size: log.sizeBytes, bytes: fs.readFileSync(file) };
      const good = makeBatch();
      const bad = makeBatch();
      bad[bad.length - 1]! ^= 0x01;
      expectSluice(() => log.append(bad, { leaderEpoch: 0 }), Errors.CORRUPT_MESSAGE);
      expectSluice(() => log.append(Buffer.concat([good, bad]), { leaderEpoch: 0 }), Errors.CORRUPT_MESSAGE);
      expectSluice(() => log.append(good.subarray(0, 40), { leaderEpoch: 0 }), Errors.CORRUPT_MESSAGE);
      expect(baseOffsetOf(good)).to.equal(0);
      expect(leaderEpochOf(good)).to.equal(-1);
      expect({ leo: log.logEndOffset, size: log.sizeBytes, bytes: fs.readFileSync(file) }).to.deep.equal(before);
      expect(log.append(good, { leaderEpoch: 0 }).baseOffset).to.equal(3);
      log.close();
    });

    it('rejects a batch larger than max.message.bytes with MESSAGE_TOO_LARGE', () => {
      const log = open({ maxMessageBytes: 200 });
      const big = makeBatch({ valueBytes: 300 });
      const err = expectSluice(() => log.append(big, { leaderEpoch: 0 }), Errors.MESSAGE_TOO_LARGE);
      expect(err.details).to.deep.include({ sizeBytes: big.length, maxMessageBytes: 200 });
      expect(log.logEndOffset).to.equal(0);
      expect(log.sizeBytes).to.equal(0);
      log.close();
    });

    it("accepts up to Kafka's default max.message.bytes (1 MiB + 12) and no more", () => {
      const log = open();
      expectSluice(() => log.append(makeBatch({ valueBytes: 1024 * 1024 }), { leaderEpoch: 0 }), Errors.MESSAGE_TOO_LARGE);
      expect(log.append(makeBatch({ valueBytes: 1024 * 1024 - 100 }), { leaderEpoch: 0 }).baseOffset).to.equal(0);
      log.close();
    });

    it('rejects an append from a stale leader epoch', () => {
      const log = open();
      log.append(makeBatch(), { leaderEpoch: 4 });
      expectSluice(() => log.append(makeBatch(), { leaderEpoch: 3 }), Errors.FENCED_LEADER_EPOCH);
      expect(log.logEndOffset).to.equal(1);
      log.close();
    });
  });

  describe('segments', () => {
    it('rolls on segment.bytes and names files by 20-digit base offset', () => {
      const log = open({ segmentBytes: 3 * S });
      const batches = appendMany(log, 10);
      expect(log.segmentInfos().map((s) => s.baseOffset)).to.deep.equal([0, 3, 6, 9]);
      const bases = ['00000000000000000000', '00000000000000000003', '00000000000000000006', '00000000000000000009'];
      const present = (base: string, suffix: string) => fs.existsSync(path.join(dir, base + suffix));
      // Rolled segments have their indexes on disk; the active one gets them at its first persist (here: close).
      for (const base of bases.slice(0, 3)) for (const suffix of ['.log', '.index', '.timeindex']) expect(present(base, suffix), base + suffix).to.equal(true);
      expect(present(bases[3]!, '.log')).to.equal(true);
      expect(readAllBytes(log, 1).equals(Buffer.concat(batches))).to.equal(true);
      log.close();
      for (const suffix of ['.index', '.timeindex']) expect(present(bases[3]!, suffix), bases[3] + suffix).to.equal(true);
    });

    it('rolls on segment.ms measured by the injected clock', () => {
      const log = open({ segmentMs: 1000 });
      appendMany(log, 1);
      clock.advance(1000);
      appendMany(log, 1);
      expect(log.numberOfSegments).to.equal(1);
      clock.advance(1);
      appendMany(log, 1);
      expect(log.segmentInfos().map((s) => s.baseOffset)).to.deep.equal([0, 2]);
      clock.advance(5000);
      expect(log.numberOfSegments).to.equal(2);
      appendMany(log, 2);
      expect(log.segmentInfos().map((s) => s.baseOffset)).to.deep.equal([0, 2, 3]);
      log.close();
    });

    it('rolls when the offset index is full', () => {
      const log = open({ segmentIndexBytes: 24, indexIntervalBytes: 0 });
      const batches = Array.from({ length: 9 }, () => makeBatch({ timestamp: 5 }));
      for (const b of batches) log.append(b, { leaderEpoch: 0 });
      expect(log.segmentInfos().map((s) => s.baseOffset)).to.deep.equal([0, 4, 8]);
      expect(readAllBytes(log).equals(Buffer.concat(batches))).to.equal(true);
      log.close();
    });
  });

  describe('read', () => {
    it('returns whole batches, at least one even when it exceeds maxBytes', () => {
      const log = open();
      const batches = appendMany(log, 5, { records: 3 });
      const one = log.read(0, 1);
      expect(one.records.equals(batches[0]!)).to.equal(true);
      expect([one.firstOffset, one.nextOffset]).to.deep.equal([0, 3]);
      const two = log.read(0, 2 * batches[0]!.length + 5);
      expect(two.records.equals(Buffer.concat(batches.slice(0, 2)))).to.equal(true);
      expect(log.read(0, 1 << 20).records.equals(Buffer.concat(batches))).to.equal(true);
      const mid = log.read(7, 1);
      expect([mid.firstOffset, mid.nextOffset]).to.deep.equal([6, 9]);
      const atEnd = log.read(15, 1000);
      expect([atEnd.records.length, atEnd.nextOffset, atEnd.logEndOffset]).to.deep.equal([0, 15, 15]);
      log.close();
    });

    it('throws OFFSET_OUT_OF_RANGE with the log bounds below the start or past the end', () => {
      const log = open();
      appendMany(log, 5);
      expect(expectSluice(() => log.read(6, 100), Errors.OFFSET_OUT_OF_RANGE).details).to.deep.equal({ logStartOffset: 0, logEndOffset: 5 });
      log.updateHighWatermark(5);
      log.advanceLogStartOffset(2);
      expect(expectSluice(() => log.read(1, 100), Errors.OFFSET_OUT_OF_RANGE).details).to.deep.equal({ logStartOffset: 2, logEndOffset: 5 });
      expect(log.read(2, 1).firstOffset).to.equal(2);
      log.close();
    });

    it('stops before the batch holding maxOffset (a high watermark)', () => {
      const log = open();
      const batches = appendMany(log, 4, { records: 2 });
      expect(log.read(0, 1 << 20, { maxOffset: 4 }).records.equals(Buffer.concat(batches.slice(0, 2)))).to.equal(true);
      expect(log.read(0, 1 << 20, { maxOffset: 5 }).records.equals(Buffer.concat(batches.slice(0, 2)))).to.equal(true);
      expect(log.read(4, 1 << 20, { maxOffset: 5 }).records.length).to.equal(0);
      expect(log.read(0, 1 << 20, { maxOffset: 1 }).records.length).to.equal(0);
      log.close();
    });

    it('reads across segment boundaries and from every offset', () => {
      const log = open({ segmentBytes: 4 * S, indexIntervalBytes: 2 * S });
      const batches = appendMany(log, 20);
      for (let o = 0; o < 20; o++) {
        const r = log.read(o, 3 * S);
        expect(r.firstOffset).to.equal(o);
        expect(r.records.subarray(0, S).equals(batches[o]!)).to.equal(true);
      }
      log.close();
    });
  });

  describe('offsetForTimestamp', () => {
    it('finds the first batch whose max timestamp reaches the target, across segments', () => {
      const log = open({ segmentBytes: 3 * S, indexIntervalBytes: 0, retentionMs: -1 });
      const stamps = [500, 100, 700, 300, 900, 900, 800, 1200, 50, 1300];
      stamps.forEach((ts) => log.append(makeBatch({ timestamp: ts }), { leaderEpoch: 0 }));
      for (let t = 0; t <= 1400; t += 25) {
        const i = stamps.findIndex((s) => s >= t);
        expect(log.offsetForTimestamp(t), `t=${t}`).to.equal(i < 0 ? null : i);
      }
      log.updateHighWatermark(10);
      log.advanceLogStartOffset(3);
      expect(log.offsetForTimestamp(600)).to.equal(4);
      expect(log.offsetForTimestamp(0)).to.equal(3);
      log.close();
    });
  });

  describe('truncation', () => {
    it('truncates within and across segments, fixing indexes and the epoch cache', () => {
      const log = open({ segmentBytes: 3 * S, indexIntervalBytes: 0 });
      const first = appendMany(log, 5, { epoch: 1 });
      const second = appendMany(log, 5, { epoch: 2, timestamp: 5_000 });
      expect(log.endOffsetForEpoch(1)).to.deep.equal({ epoch: 1, endOffset: 5 });
      expect(log.truncateTo(7)).to.equal(7);
      expect(log.segmentInfos().map((s) => s.baseOffset)).to.deep.equal([0, 3, 6]);
      expect(readAllBytes(log).equals(Buffer.concat([...first, ...second.slice(0, 2)]))).to.equal(true);
      expect(log.endOffsetForEpoch(2)).to.deep.equal({ epoch: 2, endOffset: 7 });
      expect(log.truncateTo(4)).to.equal(4);
      expect(log.segmentInfos().map((s) => s.baseOffset)).to.deep.equal([0, 3]);
      expect(log.epochEntries()).to.deep.equal([{ epoch: 1, startOffset: 0 }]);
      expect(log.offsetForTimestamp(5_000)).to.equal(null);
      const third = appendMany(log, 4, { epoch: 3, timestamp: 9_000 });
      expect(log.epochEntries()).to.deep.equal([{ epoch: 1, startOffset: 0 }, { epoch: 3, startOffset: 4 }]);
      const expected = [...first.slice(0, 4), ...third];
      for (let o = 0; o < 8; o++) expect(log.read(o, 1).records.equals(expected[o]!), `offset ${o}`).to.equal(true);
      expect(log.offsetForTimestamp(9_001)).to.equal(5);
      log.close();
    });

    it('keeps the max timestamp of batches the time index never saw', () => {
      const log = open({ indexIntervalBytes: 1 << 20 });
      for (const ts of [100, 900, 50, 60]) log.append(makeBatch({ timestamp: ts }), { leaderEpoch: 0 });
      log.truncateTo(3);
      expect(log.offsetForTimestamp(800)).to.equal(1);
      expect(log.segmentInfos()[0]!.maxTimestamp).to.equal(900);
      log.close();
    });

    it('never splits a batch: truncating inside one drops it whole', () => {
      const log = open();
      appendMany(log, 3, { records: 3 });
      expect(log.truncateTo(4)).to.equal(3);
      expect(log.truncateTo(100)).to.equal(3);
      expect(log.logEndOffset).to.equal(3);
      log.close();
    });

    it('truncateFullyAndStartAt empties the log and starts over at the offset', () => {
      const log = open({ segmentBytes: 2 * S });
      appendMany(log, 5, { epoch: 2 });
      log.truncateFullyAndStartAt(100);
      expect([log.logStartOffset, log.logEndOffset, log.numberOfSegments]).to.deep.equal([100, 100, 1]);
      expect(fs.readdirSync(dir).filter((f) => f.endsWith('.log'))).to.deep.equal(['00000000000000000100.log']);
      expect(log.epochEntries()).to.deep.equal([]);
      expect(log.append(makeBatch(), { leaderEpoch: 3 }).baseOffset).to.equal(100);
      expect(log.epochEntries()).to.deep.equal([{ epoch: 3, startOffset: 100 }]);
      log.close();
    });
  });

  describe('retention', () => {
    const t0 = 1_700_000_000_000;

    it('deletes closed segments past retention.ms, never the active one nor past the HW', () => {
      clock.set(t0);
      const log = open({ segmentBytes: 2 * S, retentionMs: 10_000 });
      for (let i = 0; i < 6; i++) log.append(makeBatch({ timestamp: t0 + i * 1000 }), { leaderEpoch: 0 });
      expect(log.segmentInfos().map((s) => s.baseOffset)).to.deep.equal([0, 2, 4]);
      clock.set(t0 + 100_000);
      expect(log.deleteOldSegments()).to.equal(0);
      log.updateHighWatermark(6);
      clock.set(t0 + 11_500);
      expect(log.deleteOldSegments()).to.equal(1);
      expect(log.logStartOffset).to.equal(2);
      expect(fs.existsSync(path.join(dir, '00000000000000000000.log'))).to.equal(false);
      clock.set(t0 + 100_000);
      expect(log.deleteOldSegments()).to.equal(1);
      expect(log.segmentInfos().map((s) => s.baseOffset)).to.deep.equal([4]);
      expect(log.logStartOffset).to.equal(4);
      expectSluice(() => log.read(3, 100), Errors.OFFSET_OUT_OF_RANGE);
      log.close();
    });

    it('deletes the oldest closed segments past retention.bytes', () => {
      const log = open({ segmentBytes: 2 * S, retentionBytes: 3 * S, retentionMs: -1 });
      appendMany(log, 7);
      log.updateHighWatermark(7);
      expect(log.deleteOldSegments()).to.equal(2);
      expect(log.sizeBytes).to.equal(3 * S);
      expect(log.logStartOffset).to.equal(4);
      expect(log.deleteOldSegments()).to.equal(0);
      log.close();
    });

    it('advanceLogStartOffset moves the start up to the HW and drops covered segments', () => {
      const log = open({ segmentBytes: 2 * S, retentionMs: -1 });
      appendMany(log, 6, { epoch: 1 });
      expectSluice(() => log.advanceLogStartOffset(3), Errors.OFFSET_OUT_OF_RANGE);
      log.updateHighWatermark(5);
      log.advanceLogStartOffset(3);
      expect(log.logStartOffset).to.equal(3);
      expect(log.segmentInfos().map((s) => s.baseOffset)).to.deep.equal([2, 4]);
      expect(log.epochEntries()).to.deep.equal([{ epoch: 1, startOffset: 3 }]);
      log.advanceLogStartOffset(1);
      expect(log.logStartOffset).to.equal(3);
      log.close();
    });
  });

  describe('follower appends and leader epochs', () => {
    it('copies a leader log batch for batch and answers endOffsetForEpoch the same', () => {
      const leader = PartitionLog.open({ dir: path.join(dir, 'leader'), clock });
      for (const epoch of [1, 1, 2, 2, 5]) leader.append(makeBatch({ records: 2 }), { leaderEpoch: epoch });
      const follower = PartitionLog.open({ dir: path.join(dir, 'follower'), clock });
      expect(follower.appendAsFollower(Buffer.alloc(0)).recordCount).to.equal(0);
      const fetched = leader.read(0, 1 << 20).records;
      expect(follower.appendAsFollower(Buffer.from(fetched))).to.deep.include({ baseOffset: 0, lastOffset: 9, batchCount: 5 });
      expect(follower.epochEntries()).to.deep.equal(leader.epochEntries());
      expect(follower.epochEntries()).to.deep.equal([{ epoch: 1, startOffset: 0 }, { epoch: 2, startOffset: 4 }, { epoch: 5, startOffset: 8 }]);
      for (const e of [0, 1, 2, 3, 4, 5, 6]) expect(follower.endOffsetForEpoch(e)).to.deep.equal(leader.endOffsetForEpoch(e));
      expect(readAllBytes(follower).equals(readAllBytes(leader))).to.equal(true);
      leader.close();
      follower.close();
    });

    it('rejects offsets that go back and falling leader epochs', () => {
      const log = open();
      log.append(makeBatch(), { leaderEpoch: 3 });
      const behind = encodeRecordBatch({ records: [{ value: Buffer.from('x') }], baseOffset: 0, partitionLeaderEpoch: 3 });
      expect(expectSluice(() => log.appendAsFollower(asBuffer(behind)), Errors.OFFSET_OUT_OF_RANGE).details).to.deep.include({ logEndOffset: 1, baseOffset: 0 });
      const stale = encodeRecordBatch({ records: [{ value: Buffer.from('x') }], baseOffset: 1, partitionLeaderEpoch: 2 });
      expectSluice(() => log.appendAsFollower(asBuffer(stale)), Errors.FENCED_LEADER_EPOCH);
      const ok = encodeRecordBatch({ records: [{ value: Buffer.from('x') }], baseOffset: 1, partitionLeaderEpoch: 4 });
      expect(log.appendAsFollower(asBuffer(ok)).lastOffset).to.equal(1);
      expect(log.latestEpoch()).to.equal(4);
      log.close();
    });

    it('accepts a gap ahead of the LEO (a compacted leader dropped batches) and reads across it', () => {
      const log = open();
      log.append(makeBatch(), { leaderEpoch: 3 });
      const gap = encodeRecordBatch({ records: [{ value: Buffer.from('x') }], baseOffset: 5, partitionLeaderEpoch: 3 });
      expect(log.appendAsFollower(asBuffer(gap)).lastOffset).to.equal(5);
      expect(log.logEndOffset).to.equal(6);
      log.updateHighWatermark(6);
      const r = log.read(2, 1024);
      expect(r.firstOffset).to.equal(5);
      expect(r.nextOffset).to.equal(6);
      log.close();
      const reopened = open();
      expect(reopened.logEndOffset).to.equal(6);
      expect(reopened.read(1, 1024).firstOffset).to.equal(5);
      reopened.close();
    });
  });

  describe('flushing and lifecycle', () => {
    it('flush.messages fsyncs and moves the recovery point', () => {
      const log = open({ flushMessages: 3 });
      appendMany(log, 2);
      expect(log.recoveryPoint).to.equal(0);
      appendMany(log, 1);
      expect(log.recoveryPoint).to.equal(3);
      log.close();
    });

    it('flush.ms flushes when the injected clock says so', () => {
      const log = open({ flushMs: 1000 });
      appendMany(log, 1);
      expect(log.maybeFlush()).to.equal(false);
      clock.advance(1000);
      expect(log.maybeFlush()).to.equal(true);
      expect(log.recoveryPoint).to.equal(1);
      log.close();
    });

    it('moves the recovery point past a rolled segment once its background flush is done', async () => {
      const log = open({ segmentBytes: 2 * S });
      appendMany(log, 5);
      await log.whenBackgroundFlushed();
      expect(log.recoveryPoint).to.equal(4);
      log.flush();
      expect(log.recoveryPoint).to.equal(5);
      log.close();
    });

    it('flushData moves the recovery point without writing the active segment\'s indexes; a crash then rebuilds them', () => {
      const config = { segmentBytes: 4 * S, indexIntervalBytes: S };
      const log = open(config);
      const batches = appendMany(log, 6); // segments [0, 4) and [4, 6): the first rolled
      log.flushData();
      expect(log.recoveryPoint).to.equal(6);
      const activeIndex = path.join(dir, '00000000000000000004.index');
      expect(fs.existsSync(activeIndex), 'the active segment\'s index is not written').to.equal(false);
      expect(fs.statSync(path.join(dir, '00000000000000000000.index')).size, 'the rolled one is').to.be.greaterThan(0);
      // A crash: no close, so no marker; reopen from the flushed recovery point.
      const again = PartitionLog.open({ dir, clock, config, recoveryPoint: log.recoveryPoint });
      expect([again.logEndOffset, again.numberOfSegments]).to.deep.equal([6, 2]);
      expect(readAllBytes(again, 1).equals(Buffer.concat(batches))).to.equal(true);
      expect(again.offsetForTimestamp(1_005)).to.equal(5);
      expect(again.append(makeBatch(), { leaderEpoch: 0 }).baseOffset).to.equal(6);
      again.close();
      log.closeForDelete();
    });

    it('reopens after a clean close with the same contents and removes the marker', () => {
      const log = open({ segmentBytes: 3 * S, indexIntervalBytes: S });
      const batches = appendMany(log, 10, { epoch: 2 });
      log.close();
      expect(fs.existsSync(path.join(dir, CLEAN_SHUTDOWN_FILE))).to.equal(true);
      expectSluice(() => log.append(makeBatch(), { leaderEpoch: 2 }), Errors.KAFKA_STORAGE_ERROR);
      const again = open({ segmentBytes: 3 * S, indexIntervalBytes: S });
      expect(fs.existsSync(path.join(dir, CLEAN_SHUTDOWN_FILE))).to.equal(false);
      expect([again.logEndOffset, again.recoveryPoint, again.numberOfSegments]).to.deep.equal([10, 10, 4]);
      expect(readAllBytes(again, 1).equals(Buffer.concat(batches))).to.equal(true);
      expect(again.epochEntries()).to.deep.equal([{ epoch: 2, startOffset: 0 }]);
      expect(again.offsetForTimestamp(1_005)).to.equal(5);
      expect(again.append(makeBatch(), { leaderEpoch: 2 }).baseOffset).to.equal(10);
      again.close();
    });
  });
});
