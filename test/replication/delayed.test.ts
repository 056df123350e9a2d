// The purgatory of delayed operations (src/replication/delayed.ts): waiters
// are re-checked when a key they watch is poked, expire at their deadline or
// on expireKey/expireAll, and complete exactly once whichever comes first.
// Deadlines are short real timeouts; the tests wait for completions, never
// for fixed times, and assert no timings.

import { expect } from 'chai';
import { Purgatory, type Waiter } from '../../src/replication/delayed.js';

/** A waiter that completes when `ready` is set, counting checks and expiries. */
class TestWaiter implements Waiter {
  ready = false;
  checks = 0;
  expiries = 0;
  completions = 0;
  readonly expired: Promise<void>;
  private onExpire!: () => void;

  constructor() {
    this.expired = new Promise((resolve) => (this.onExpire = resolve));
  }

  check(): boolean {
    this.checks++;
    if (this.ready) this.completions++;
    return this.ready;
  }

  expire(): void {
    this.expiries++;
    this.onExpire();
  }
}

const LONG_MS = 60_000;

describe('replication: purgatory of delayed operations', () => {
  let purgatory: Purgatory;
  beforeEach(() => {
    purgatory = new Purgatory();
  });
  afterEach(() => {
    purgatory.expireAll(); // clears the long timers
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

  it('expires a waiter at its deadline', async () => {
    const w = new TestWaiter();
    purgatory.watch(['t-0'], w, 10);
    await w.expired;
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

  it('a waiter watching several keys completes once, and its deadline no longer fires', async () => {
    const w = new TestWaiter();
    purgatory.watch(['t-0', 't-1', 't-2'], w, 10);
    w.ready = true;
    purgatory.poke('t-1');
    purgatory.poke('t-0');
    purgatory.poke('t-2');
    expect(w.completions).to.equal(1);
    expect(w.checks).to.equal(1);
    // A later deadline on another key fires after the first one would have.
    const sentinel = new TestWaiter();
    purgatory.watch(['other'], sentinel, 30);
    await sentinel.expired;
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
