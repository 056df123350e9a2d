// The cleaner's pure pieces on hand-made inputs: the dirty ratio and the
// cleanable range (active segment, high watermark, min/max compaction lag,
// a stale checkpoint), which log goes first, segment grouping, the offset
// map's bounds, the tombstone horizon and the producer rule of the batch
// filter, and the cleanup.policy parsing of both config layers.

import { expect } from 'chai';
import { cleanableRange, chooseLogToClean, groupSegments, type CleanerLogView, type CleanerSegment } from '../../src/storage/cleaner-plan.js';
import { filterBatch, deleteHorizonOf } from '../../src/storage/cleaner-filter.js';
import { hashKey, OffsetMap } from '../../src/storage/offset-map.js';
import { logConfigFrom, logManagerConfigFrom, parseCleanupPolicy } from '../../src/storage/log-config.js';
import { configValueProblem, topicConfigDef } from '../../src/metadata/config-defs.js';
import { decodeRecordBatch } from '../../src/record/record-batch.js';
import { stampBatch } from '../../src/record/batch-header.js';
import { keyedBatch } from './cleaner-test-kit.js';

const seg = (baseOffset: number, sizeBytes: number, extra: Partial<CleanerSegment> = {}): CleanerSegment => ({
  baseOffset, nextOffset: baseOffset + 10, sizeBytes, maxTimestamp: 1_000, firstBatchTimestampMs: 1_000, offsetIndexEntries: 1, timeIndexEntries: 1, ...extra,
});
const settings = { cleanupPolicy: 'compact' as const, minCleanableDirtyRatio: 0.5, minCompactionLagMs: 0, maxCompactionLagMs: Number.MAX_SAFE_INTEGER };
const view = (segments: CleanerSegment[], extra: Partial<CleanerLogView> = {}): CleanerLogView => ({
  segments, logStartOffset: 0, highWatermark: 1_000, logEndOffset: 1_000, checkpointedFirstDirty: null, ...extra,
});

describe('cleaner plan', () => {
  it('never counts the active segment, and measures the dirty ratio by whole segments', () => {
    const r = cleanableRange(view([seg(0, 100), seg(10, 100), seg(20, 100), seg(30, 999)], { checkpointedFirstDirty: 10 }), settings, 2_000);
    expect(r).to.include({ firstDirtyOffset: 10, firstUncleanableOffset: 30, cleanBytes: 100, cleanableBytes: 200 });
    expect(r.dirtyRatio).to.be.closeTo(2 / 3, 1e-9);
    expect(r.due).to.equal(true);
    expect(cleanableRange(view([seg(0, 100), seg(10, 100), seg(20, 100), seg(30, 999)], { checkpointedFirstDirty: 20 }), settings, 2_000).due).to.equal(false);
  });

  it('stops at the first segment not wholly below the high watermark, or younger than min.compaction.lag.ms', () => {
    expect(cleanableRange(view([seg(0, 1), seg(10, 1), seg(20, 1)], { highWatermark: 15 }), settings, 2_000).firstUncleanableOffset).to.equal(10);
    const young = [seg(0, 1), seg(10, 1, { maxTimestamp: 1_900 }), seg(20, 1)];
    expect(cleanableRange(view(young), { ...settings, minCompactionLagMs: 500 }, 2_000).firstUncleanableOffset).to.equal(10);
  });

  it('is due past max.compaction.lag.ms whatever the ratio; never for cleanup.policy=delete', () => {
    const segs = [seg(0, 1000), seg(10, 1), seg(20, 1)];
    const v = view(segs, { checkpointedFirstDirty: 10 });
    expect(cleanableRange(v, settings, 2_000).due).to.equal(false);
    expect(cleanableRange(v, { ...settings, maxCompactionLagMs: 500 }, 2_000)).to.include({ pastMaxLag: true, due: true });
    expect(cleanableRange(view(segs), { ...settings, cleanupPolicy: 'delete' }, 2_000).due).to.equal(false);
  });

  it('starts over at the log start when the checkpoint lies outside the log', () => {
    expect(cleanableRange(view([seg(50, 1), seg(60, 1)], { logStartOffset: 50, checkpointedFirstDirty: 10 }), settings, 0).firstDirtyOffset).to.equal(50);
  });

  it('picks a log past its max lag first, then the dirtiest', () => {
    const r = (dirtyRatio: number, pastMaxLag = false) => ({ firstDirtyOffset: 0, firstUncleanableOffset: 1, cleanBytes: 0, cleanableBytes: 1, dirtyRatio, pastMaxLag, due: true });
    expect(chooseLogToClean([{ id: 'a', range: r(0.6) }, { id: 'b', range: r(0.9) }])?.id).to.equal('b');
    expect(chooseLogToClean([{ id: 'a', range: r(0.1, true) }, { id: 'b', range: r(0.9) }])?.id).to.equal('a');
    expect(chooseLogToClean([{ id: 'a', range: { ...r(0.9), due: false } }])).to.equal(null);
  });

  it('groups consecutive segments within segment.bytes and one index', () => {
    const segs = [seg(0, 40), seg(10, 40), seg(20, 40), seg(30, 40), seg(40, 0)];
    expect(groupSegments(segs, 4, { segmentBytes: 100, offsetIndexEntriesMax: 100, timeIndexEntriesMax: 100 })).to.deep.equal([[0, 2], [2, 4]]);
    expect(groupSegments(segs, 4, { segmentBytes: 1000, offsetIndexEntriesMax: 3, timeIndexEntriesMax: 100 })).to.deep.equal([[0, 3], [3, 4]]);
  });
});

describe('offset map', () => {
  it('keeps the largest offset per key and refuses new keys once full, never evicting', () => {
    const m = new OffsetMap(24 * 10);
    expect(m.capacity).to.equal(9);
    for (let i = 0; i < 9; i++) expect(m.put(hashKey(Buffer.from(`k${i}`)), i)).to.equal(true);
    expect(m.isFull).to.equal(true);
    expect(m.put(hashKey(Buffer.from('new')), 99)).to.equal(false);
    expect(m.put(hashKey(Buffer.from('k3')), 50)).to.equal(true);
    expect(m.put(hashKey(Buffer.from('k3')), 20)).to.equal(true);
    expect(m.get(hashKey(Buffer.from('k3')))).to.equal(50);
    expect(m.get(hashKey(Buffer.from('new')))).to.equal(-1);
    expect(m.latestOffset).to.equal(50);
  });
});

describe('batch filter', () => {
  const batchAt = (base: number, ...args: Parameters<typeof keyedBatch>): Buffer => {
    const b = keyedBatch(...args);
    stampBatch(b, 0, base, 0);
    return b;
  };
  const noMap = { get: () => -1 };

  it('stamps a delete horizon on a batch keeping a tombstone, and drops the tombstone once it has passed', () => {
    const bytes = batchAt(5, [{ key: 'a', value: null }, { key: 'b', value: 'x' }]);
    const first = filterBatch(decodeRecordBatch(bytes), bytes, { map: noMap, nowMs: 1_000, deleteRetentionMs: 100, isLastBatchOfProducer: () => false });
    expect(first.kind).to.equal('rewrite');
    const rewritten = decodeRecordBatch((first as { bytes: Buffer }).bytes);
    expect(deleteHorizonOf(rewritten)).to.equal(1_100);
    expect(rewritten.header).to.include({ baseOffset: 5, lastOffsetDelta: 1, maxTimestamp: 1_000 });
    expect(rewritten.records.map((r) => [r.offset, r.timestamp])).to.deep.equal([[5, 1_000], [6, 1_000]]);
    const before = filterBatch(rewritten, (first as { bytes: Buffer }).bytes, { map: noMap, nowMs: 1_099, deleteRetentionMs: 100, isLastBatchOfProducer: () => false });
    expect(before.kind).to.equal('keep');
    const after = filterBatch(rewritten, (first as { bytes: Buffer }).bytes, { map: noMap, nowMs: 1_100, deleteRetentionMs: 100, isLastBatchOfProducer: () => false });
    expect(after.kind).to.equal('rewrite');
    expect(decodeRecordBatch((after as { bytes: Buffer }).bytes).records.map((r) => r.key?.toString())).to.deep.equal(['b']);
  });

  it('keeps an emptied batch, header and offsets intact, only when it is its producer\'s last', () => {
    const bytes = batchAt(7, [{ key: 'a', value: '1' }, { key: 'a', value: '2' }], { producerId: 9n, gzip: true });
    const map = { get: () => 100 };
    const dropped = filterBatch(decodeRecordBatch(bytes), bytes, { map, nowMs: 0, deleteRetentionMs: 0, isLastBatchOfProducer: () => false });
    expect(dropped).to.deep.equal({ kind: 'drop', removed: 2 });
    const kept = filterBatch(decodeRecordBatch(bytes), bytes, { map, nowMs: 0, deleteRetentionMs: 0, isLastBatchOfProducer: () => true });
    const empty = decodeRecordBatch((kept as { bytes: Buffer }).bytes);
    expect(empty.records).to.deep.equal([]);
    expect(empty.header).to.include({ baseOffset: 7, lastOffsetDelta: 1, recordCount: 0, producerId: 9n, producerEpoch: 0, baseSequence: 0 });
  });
});

describe('cleanup.policy', () => {
  it('accepts delete, compact and both in any order, and names the valid values otherwise', () => {
    expect(['delete', 'compact', 'compact,delete', 'delete, compact'].map((v) => parseCleanupPolicy(v))).to.deep.equal(['delete', 'compact', 'compact,delete', 'compact,delete']);
    for (const bad of ['', 'compaction', 'delete,delete', 'compact,']) {
      if (bad === 'compact,') expect(parseCleanupPolicy(bad)).to.equal('compact');
      else expect(() => parseCleanupPolicy(bad)).to.throw(/must be delete, compact or compact,delete/);
    }
    expect(logConfigFrom({ 'cleanup.policy': 'compact', 'min.cleanable.dirty.ratio': '0.2', 'delete.retention.ms': '5' })).to.include({ cleanupPolicy: 'compact', minCleanableDirtyRatio: 0.2, deleteRetentionMs: 5 });
    expect(() => logConfigFrom({ 'min.cleanable.dirty.ratio': '1.5' })).to.throw(/\[0, 1\]/);
    expect(logManagerConfigFrom({ 'log.cleaner.enable': 'false', 'log.cleaner.backoff.ms': '7' })).to.include({ cleanerEnable: 0, cleanerBackoffMs: 7 });
  });

  it('is validated by the topic config table the controller uses', () => {
    const d = topicConfigDef('cleanup.policy')!;
    expect(configValueProblem(d, 'compact')).to.equal(null);
    expect(configValueProblem(d, 'compact,delete')).to.equal(null);
    expect(configValueProblem(d, 'compact, delete')).to.equal(null);
    expect(configValueProblem(d, 'zstd')).to.match(/cleanup.policy must be a comma-separated list of delete, compact/);
    expect(configValueProblem(topicConfigDef('min.cleanable.dirty.ratio')!, '2')).to.match(/must be in \[0, 1\]/);
  });
});
