import { expect } from 'chai';
import { SeededRng } from '../../src/util/rng.js';

describe('SeededRng', () => {
  it('is reproducible from its seed and differs across seeds', () => {
    const a = new SeededRng(42);
    const b = new SeededRng(42);
    const c = new SeededRng(43);
    const sa = Array.from({ length: 16 }, () => a.u32());
    const sb = Array.from({ length: 16 }, () => b.u32());
    const sc = Array.from({ length: 16 }, () => c.u32());
    expect(sa).to.deep.equal(sb);
    expect(sa).to.not.deep.equal(sc);
  });

  it('int(n) stays in range and covers it', () => {
    const r = new SeededRng(7);
    const seen = new Set<number>();
    for (let i = 0; i < 10_000; i++) {
      const v = r.int(10);
      expect(v).to.be.within(0, 9);
      seen.add(v);
    }
    expect(seen.size).to.equal(10);
    expect(() => r.int(0)).to.throw(RangeError);
  });

  it('is roughly uniform', () => {
    const r = new SeededRng(1);
    const buckets = new Array(8).fill(0);
    const n = 80_000;
    for (let i = 0; i < n; i++) buckets[Math.floor(r.next() * 8)]++;
    for (const count of buckets) expect(Math.abs(count - n / 8)).to.be.lessThan(n / 8 / 10);
  });
});
