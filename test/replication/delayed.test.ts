// The purgatory of delayed operations (src/replication/delayed.ts): waiters
// are re-checked when a key they watch is poked, expire at their deadline or
// on expireKey/expireAll, and complete exactly once whichever comes first.
// Deadlines are timers of a ManualScheduler: the tests move its clock, so
// "at the deadline" and "not before" are exact, with no real time involved.

import { expect } from 'chai';
import { Purgatory, type Waiter } from '../../src/replication/delayed.js';
import { ManualScheduler } from '../../src/util/clock.js';

/** A waiter that completes when `ready` is set, counting checks and expiries. */
class TestWaiter implements Waiter {
  ready = false;
  checks = 0;
  expiries = 0;
  completions = 0;
  check(): boolean {
    this.checks++;
    if (this.ready) this.completions++;
    return this.ready;
  }

  expire(): void {
    this.expiries++;
  }
}

const LONG_MS = 60_000;

describe('replication: purgatory of delayed operations', () => {
  let purgatory: Purgatory;
  let scheduler: ManualScheduler;
  beforeEach(() => {
    scheduler = new ManualScheduler();
    purgatory = new Purgatory(scheduler);
  });

  it('re-checks a waiter when its key is poked, and drops it once complete', () => {
    const w = new TestWaiter();
    purgatory.watch(['t-0'], w, LONG_MS);
    purgatory.poke('t-0');
    expect(w.checks).to.equal(1);
    expect(purgatory.size).to.equal(1);
    purgatory.poke('t-1');
    expect(w.checks, 'another key does not concern it').to.equal(1);
    w.ready = true;
    purgatory.poke('t-0');
    expect(w.completions).to.equal(1);
    expect(purgatory.size).to.equal(0);
    purgatory.poke('t-0');
    expect(w.checks, 'gone after completing').to.equal(2);
    purgatory.expireKey('t-0');
    expect(w.expiries).to.equal(0);
  });

  it('expires a waiter at its deadline, not before', () => {
    const w = new TestWaiter();
    purgatory.watch(['t-0'], w, 10);
    scheduler.advance(9);
    expect(w.expiries, 'not before the deadline').to.equal(0);
    scheduler.advance(1);
    expect(w.expiries).to.equal(1);
    expect(purgatory.size).to.equal(0);
    purgatory.poke('t-0');
    expect(w.checks, 'an expired waiter is not checked again').to.equal(0);
  });

  it('expireKey expires the waiters of that key only', () => {
    const a = new TestWaiter();
    const b = new TestWaiter();
    const both = new TestWaiter();
    purgatory.watch(['t-0'], a, LONG_MS);
    purgatory.watch(['t-1'], b, LONG_MS);
    purgatory.watch(['t-0', 't-1'], both, LONG_MS);
    purgatory.expireKey('t-0');
    expect([a.expiries, b.expiries, both.expiries]).to.deep.equal([1, 0, 1]);
    expect(purgatory.size).to.equal(1);
    purgatory.expireKey('t-1');
    expect([a.expiries, b.expiries, both.expiries], 'each expires once').to.deep.equal([1, 1, 1]);
    expect(purgatory.size).to.equal(0);
  });

  it('a waiter watching several keys completes once, and its deadline no longer fires', () => {
    const w = new TestWaiter();
    purgatory.watch(['t-0', 't-1', 't-2'], w, 10);
    w.ready = true;
    purgatory.poke('t-1');
    purgatory.poke('t-0');
    purgatory.poke('t-2');
    expect(w.completions).to.equal(1);
    expect(w.checks).to.equal(1);
    expect(scheduler.size, 'its deadline timer is cancelled').to.equal(0);
    scheduler.advance(30);
    expect(w.expiries).to.equal(0);
    expect(purgatory.size).to.equal(0);
  });

  it('a waiter that expires on one key is not checked or expired through another', () => {
    const w = new TestWaiter();
    purgatory.watch(['t-0', 't-1'], w, LONG_MS);
    purgatory.expireKey('t-1');
    w.ready = true;
    purgatory.poke('t-0');
    purgatory.expireKey('t-0');
    expect([w.checks, w.expiries]).to.deep.equal([0, 1]);
  });

  it('expireAll expires every waiter once', () => {
    const ws = [new TestWaiter(), new TestWaiter(), new TestWaiter()];
    purgatory.watch(['a'], ws[0]!, LONG_MS);
    purgatory.watch(['a', 'b'], ws[1]!, LONG_MS);
    purgatory.watch(['c'], ws[2]!, LONG_MS);
    purgatory.expireAll();
    expect(ws.map((w) => w.expiries)).to.deep.equal([1, 1, 1]);
    expect(purgatory.size).to.equal(0);
    expect(scheduler.size, 'no deadline timer left').to.equal(0);
  });

  it('a waiter added while a key is being poked is checked on the next poke', () => {
    const late = new TestWaiter();
    const first: Waiter = {
      check: () => {
        purgatory.watch(['t-0'], late, LONG_MS);
        return true;
      },
      expire: () => expect.fail('completed, not expired'),
    };
    purgatory.watch(['t-0'], first, LONG_MS);
    purgatory.poke('t-0');
    expect(late.checks).to.equal(0);
    expect(purgatory.size).to.equal(1);
    late.ready = true;
    purgatory.poke('t-0');
    expect(late.completions).to.equal(1);
  });
});
