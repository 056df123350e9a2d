import { expect } from 'chai';
import { decideRetention, type RetentionInput, type SegmentSummary } from '../../src/storage/retention.js';

describe('decideRetention', () => {
  // Four segments of 100 bytes, newest timestamps 1000, 2000, 3000, 4000; the last is active.
  const segments: SegmentSummary[] = [0, 10, 20, 30].map((baseOffset, i) => ({ baseOffset, sizeBytes: 100, largestTimestampMs: (i + 1) * 1000 }));
  const base: RetentionInput = { segments, nowMs: 10_000, retentionMs: -1, retentionBytes: -1, logStartOffset: 0, highWatermark: 35 };

  it('keeps everything without limits', () => {
    expect(decideRetention(base)).to.deep.equal({ deleteCount: 0, reason: null, logStartOffset: 0 });
  });

  it('deletes the expired prefix by time', () => {
    expect(decideRetention({ ...base, retentionMs: 7_500 })).to.deep.equal({ deleteCount: 2, reason: 'retention.ms', logStartOffset: 20 });
    expect(decideRetention({ ...base, retentionMs: 8_000 })).to.include({ deleteCount: 1 });
  });

  it('deletes the oldest segments while the log stays at or above retention.bytes', () => {
    expect(decideRetention({ ...base, retentionBytes: 250 })).to.deep.equal({ deleteCount: 1, reason: 'retention.bytes', logStartOffset: 10 });
    expect(decideRetention({ ...base, retentionBytes: 200 })).to.include({ deleteCount: 2 });
    expect(decideRetention({ ...base, retentionBytes: 0 })).to.include({ deleteCount: 3 });
  });

  it('never deletes the active segment', () => {
    const d = decideRetention({ ...base, retentionMs: 0 });
    expect(d.deleteCount).to.equal(3);
    expect(d.logStartOffset).to.equal(30);
  });

  it('never deletes past the high watermark', () => {
    expect(decideRetention({ ...base, retentionMs: 0, highWatermark: 20 })).to.include({ deleteCount: 2 });
    expect(decideRetention({ ...base, retentionMs: 0, highWatermark: 9 })).to.include({ deleteCount: 0 });
  });

  it('deletes segments wholly below the log start offset', () => {
    expect(decideRetention({ ...base, logStartOffset: 25 })).to.deep.equal({ deleteCount: 2, reason: 'log-start-offset', logStartOffset: 25 });
  });
});
