// The real timers of src/util/clock.ts on any runtime: SystemScheduler (a
// pending timer keeps no Node process alive) and KeepAliveScheduler (the
// client's default: it does), both working without setImmediate and unref
// as in a browser; and the entropy seed the client picks its Rng from.

import { expect } from 'chai';
import { KeepAliveScheduler, ManualScheduler, SystemScheduler, type Scheduler } from '../../src/util/clock.js';
import { entropySeed } from '../../src/util/rng.js';

/** How many pending timers keep the event loop alive now. */
const refTimers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

const fired = (s: Scheduler, delayMs: number): Promise<void> => new Promise((resolve) => s.schedule(delayMs, resolve));

describe('util/clock: real and manual timers', () => {
  for (const [name, s] of [['SystemScheduler', SystemScheduler], ['KeepAliveScheduler', KeepAliveScheduler]] as const) {
    it(`${name} runs a timer later, never synchronously, and a cancelled one not at all`, async function () {
      // A guard, not a timing: Node does not wake its loop for unref'd immediates alone, and such a zero delay
      // waited ~7 s here for something else to happen (SystemScheduler no longer unrefs immediates).
      this.timeout(3_000);
      let ran = 0;
      const cancel = s.schedule(1, () => { ran++; });
      cancel();
      let zero = false;
      s.schedule(0, () => { zero = true; });
      expect(zero, 'not synchronously').to.equal(false);
      await fired(s, 0); // zero delays run in order
      await fired(s, 5);
      expect([zero, ran]).to.deep.equal([true, 0]);
    });
  }

  it('SystemScheduler keeps no process alive by a pending timer; KeepAliveScheduler does', () => {
    const before = refTimers();
    const cancelSystem = SystemScheduler.schedule(60_000, () => undefined);
    expect(refTimers(), 'unref\'d').to.equal(before);
    const cancelKeep = KeepAliveScheduler.schedule(60_000, () => undefined);
    expect(refTimers(), 'ref\'d').to.equal(before + 1);
    cancelSystem();
    cancelKeep();
    expect(refTimers()).to.equal(before);
  });

  it('works on a runtime without setImmediate (a browser): a zero delay falls back to setTimeout', async () => {
    const g = globalThis as { setImmediate?: unknown; clearImmediate?: unknown };
    const saved = { setImmediate: g.setImmediate, clearImmediate: g.clearImmediate };
    delete g.setImmediate;
    delete g.clearImmediate;
    try {
      let ran = false;
      const cancelled = SystemScheduler.schedule(0, () => { ran = true; });
      cancelled();
      await fired(KeepAliveScheduler, 0);
      await fired(SystemScheduler, 0);
      expect(ran, 'cancelled').to.equal(false);
    } finally {
      Object.assign(g, saved);
    }
  });

  it('ManualScheduler runs due timers in time order, moving its clock to each', () => {
    const s = new ManualScheduler();
    const seen: Array<[string, number]> = [];
    s.schedule(20, () => seen.push(['b', s.clock.monotonicMs()]));
    s.schedule(10, () => seen.push(['a', s.clock.monotonicMs()]));
    s.schedule(10, () => seen.push(['a2', s.clock.monotonicMs()]));
    expect(s.advance(15)).to.equal(2);
    expect(s.clock.monotonicMs()).to.equal(15);
    s.advance(5);
    expect(seen).to.deep.equal([['a', 10], ['a2', 10], ['b', 20]]);
  });

  it('entropySeed gives a 32-bit unsigned seed from Web Crypto', () => {
    const seeds = Array.from({ length: 4 }, entropySeed);
    for (const seed of seeds) expect(Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32, String(seed)).to.equal(true);
    expect(new Set(seeds).size, 'not a constant').to.be.greaterThan(1);
  });
});
