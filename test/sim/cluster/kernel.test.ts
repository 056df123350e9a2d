import { strict as assert } from 'node:assert';
import { SimKernel } from './kernel.js';

/** A little world of three hosts that ping each other through timers and promises, all from the kernel's RNG. */
async function run(seed: number, events = 2_000): Promise<{ digest: string; now: number }> {
  const k = new SimKernel({ seed });
  const hosts = ['n1', 'n2', 'n3'];
  const rng = k.rng.fork();
  for (const h of hosts) {
    const t = k.time(h);
    const tick = (): void => {
      const to = hosts[rng.int(hosts.length)]!;
      void Promise.resolve().then(() => {
        k.time(to).schedule(rng.range(0, 20), `msg ${h}->${to}`, () => undefined);
      });
      t.scheduler.schedule(rng.range(1, 50), tick);
    };
    t.scheduler.schedule(rng.range(1, 50), tick);
  }
  for (let i = 0; i < events; i++) await k.step();
  return { digest: k.digest(), now: k.now() };
}

describe('sim/cluster kernel', () => {
  it('one seed gives one trace digest; another seed another', async () => {
    const a = await run(7);
    const b = await run(7);
    const c = await run(8);
    assert.equal(a.digest, b.digest);
    assert.equal(a.now, b.now);
    assert.notEqual(a.digest, c.digest);
  });

  it('runs events in time order and drains promise continuations within the event', async () => {
    const k = new SimKernel({ seed: 1 });
    const t = k.time('n1');
    const seen: string[] = [];
    t.scheduler.schedule(10, () => {
      seen.push('a');
      void Promise.resolve().then(() => Promise.resolve()).then(() => seen.push('a-then'));
    });
    t.scheduler.schedule(10, () => seen.push('b'));
    t.scheduler.schedule(5, () => seen.push('first'));
    await k.runFor(100);
    assert.deepEqual(seen, ['first', 'a', 'a-then', 'b']);
    assert.equal(k.now(), 100);
  });

  it('holds a paused host’s events and drops a crashed incarnation’s', async () => {
    const k = new SimKernel({ seed: 1 });
    const seen: string[] = [];
    const t1 = k.time('n1');
    t1.scheduler.schedule(10, () => seen.push('n1 early'));
    k.time('n2').scheduler.schedule(20, () => seen.push('n2'));
    k.pause('n1');
    await k.runFor(50);
    assert.deepEqual(seen, ['n2']);
    k.resume('n1');
    await k.runFor(1);
    assert.deepEqual(seen, ['n2', 'n1 early']);
    t1.scheduler.schedule(10, () => seen.push('dead'));
    const t1b = k.incarnate('n1');
    assert.equal(t1.alive, false);
    t1.scheduler.schedule(1, () => seen.push('dead too'));
    t1b.scheduler.schedule(5, () => seen.push('reborn'));
    await k.runFor(50);
    assert.deepEqual(seen, ['n2', 'n1 early', 'reborn']);
  });

  it('gives each host its own clock; a jump moves only that host', async () => {
    const k = new SimKernel({ seed: 3 });
    const a = k.time('a').clock;
    const b = k.time('b').clock;
    const a0 = a.nowMs();
    const b0 = b.nowMs();
    k.jumpClock('a', -60_000, 5_000);
    assert.equal(a.nowMs(), a0 - 60_000);
    assert.equal(b.nowMs(), b0);
    await k.runFor(1_000);
    assert.equal(b.nowMs(), b0 + 1_000);
  });

  it('await runs the world until the promise settles', async () => {
    const k = new SimKernel({ seed: 1 });
    const sched = k.time('n1').scheduler;
    const p = new Promise<number>((resolve) => sched.schedule(250, () => resolve(42)));
    assert.equal(await k.await(p, 1_000), 42);
    assert.equal(k.now(), 250);
    await assert.rejects(k.await(new Promise(() => undefined), 100), /did not finish/);
  });
});
