// The measurement helpers every deployment shares: the e2e latency recorder
// measures only records sent after the warm-up, the same way for every system.
import { expect } from 'chai';
import { LatencyRecorder, nowMs } from '../../bench/suite/measure.js';

describe('bench suite: LatencyRecorder', () => {
  it('measures nothing before start()', () => {
    const r = new LatencyRecorder();
    r.record(nowMs(), nowMs() + 5);
    expect([r.received, r.measured, r.histogram.totalCount]).to.deep.equal([1, 0, 0]);
  });

  it('receives warm-up records but measures only those sent after the warm-up', () => {
    const r = new LatencyRecorder();
    r.start(10);
    const warm = nowMs();
    r.record(warm, warm + 900); // sent during the 10 s warm-up: a slow first record must not count
    const later = warm + 10_001;
    r.record(later, later + 2);
    r.record(later + 1, later + 5);
    expect([r.received, r.measured]).to.deep.equal([3, 2]);
    const res = r.result({ ratePerS: 100, warmupSeconds: 10 }, 12);
    expect(res.records).to.equal(2);
    expect(res.seconds, 'the measured part only').to.equal(2);
    expect(res.achievedPerS).to.equal(1);
    expect(res.maxMs).to.be.within(3.99, 4.01);
    expect(res.p50Ms).to.be.within(1.99, 2.01);
  });

  it('with no warm-up measures from the start', () => {
    const r = new LatencyRecorder();
    r.start(0);
    const t = nowMs() + 1;
    r.record(t, t + 3);
    expect(r.measured).to.equal(1);
    expect(r.result({ ratePerS: 10, warmupSeconds: 0 }, 1).seconds).to.equal(1);
  });
});
