// The purgatory of delayed operations (src/replication/delayed.ts) and the
// operations' Kafka shape: tryComplete completes an operation once its
// condition holds, onComplete runs exactly once whichever way it completed,
// onExpiration only when the deadline did it. Operations are re-checked when
// a key they watch is poked, complete at their deadline or on
// completeKey/completeAll. Deadlines are timers of a ManualScheduler: the
// tests move its clock, so "at the deadline" and "not before" are exact.

import { expect } from 'chai';
import { DelayedOperation, Purgatory } from '../../src/replication/delayed.js';
import { ManualScheduler } from '../../src/util/clock.js';

/** An operation that completes when `ready` is set, counting checks, completions and expiries. */
class TestOp extends DelayedOperation {
  ready = false;
  checks = 0;
  completions = 0;
  expiries = 0;
  constructor(private readonly onCheck?: () => void) {
    super();
  }

  tryComplete(): boolean {
    this.checks++;
    this.onCheck?.();
    return this.ready && this.forceComplete();
  }

  protected onComplete(): void {
    this.completions++;
  }

  protected override onExpiration(): void {
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

  it('completes an operation at once when it can, without watching it', () => {
    const op = new TestOp();
    op.ready = true;
    expect(purgatory.tryCompleteElseWatch(op, ['t-0'], LONG_MS)).to.equal(true);
    expect([op.checks, op.completions, purgatory.size, scheduler.size]).to.deep.equal([1, 1, 0, 0]);
  });

  it('re-checks an operation when its key is poked, and drops it once complete', () => {
    const op = new TestOp();
    expect(purgatory.tryCompleteElseWatch(op, ['t-0'], LONG_MS)).to.equal(false);
    purgatory.poke('t-0');
    expect(op.checks).to.equal(2);
    expect(purgatory.size).to.equal(1);
    purgatory.poke('t-1');
    expect(op.checks, 'another key does not concern it').to.equal(2);
    op.ready = true;
    purgatory.poke('t-0');
    expect(op.completions).to.equal(1);
    expect(purgatory.size).to.equal(0);
    purgatory.poke('t-0');
    expect(op.checks, 'gone after completing').to.equal(3);
    purgatory.completeKey('t-0');
    expect([op.completions, op.expiries]).to.deep.equal([1, 0]);
  });

  it('expires an operation at its deadline, not before: onComplete, then onExpiration', () => {
    const op = new TestOp();
    purgatory.watch(op, ['t-0'], 10);
    scheduler.advance(9);
    expect(op.completions, 'not before the deadline').to.equal(0);
    scheduler.advance(1);
    expect([op.completions, op.expiries]).to.deep.equal([1, 1]);
    expect(purgatory.size).to.equal(0);
    purgatory.poke('t-0');
    expect(op.checks, 'an expired operation is not checked again').to.equal(0);
  });

  it('completeKey completes the operations of that key only, not as expiries', () => {
    const a = new TestOp();
    const b = new TestOp();
    const both = new TestOp();
    purgatory.watch(a, ['t-0'], LONG_MS);
    purgatory.watch(b, ['t-1'], LONG_MS);
    purgatory.watch(both, ['t-0', 't-1'], LONG_MS);
    purgatory.completeKey('t-0');
    expect([a.completions, b.completions, both.completions]).to.deep.equal([1, 0, 1]);
    expect(purgatory.size).to.equal(1);
    purgatory.completeKey('t-1');
    expect([a.completions, b.completions, both.completions], 'each completes once').to.deep.equal([1, 1, 1]);
    expect([a.expiries, b.expiries, both.expiries]).to.deep.equal([0, 0, 0]);
    expect(purgatory.size).to.equal(0);
  });

  it('an operation watching several keys completes once, and its deadline no longer fires', () => {
    const op = new TestOp();
    purgatory.watch(op, ['t-0', 't-1', 't-2'], 10);
    op.ready = true;
    purgatory.poke('t-1');
    purgatory.poke('t-0');
    purgatory.poke('t-2');
    expect(op.completions).to.equal(1);
    expect(op.checks).to.equal(1);
    expect(scheduler.size, 'its deadline timer is cancelled').to.equal(0);
    scheduler.advance(30);
    expect(op.expiries).to.equal(0);
    expect(purgatory.size).to.equal(0);
  });

  it('an operation completed on one key is not checked or completed through another', () => {
    const op = new TestOp();
    purgatory.watch(op, ['t-0', 't-1'], LONG_MS);
    purgatory.completeKey('t-1');
    op.ready = true;
    purgatory.poke('t-0');
    purgatory.completeKey('t-0');
    expect([op.checks, op.completions]).to.deep.equal([0, 1]);
  });

  it('an operation completed from outside (forceComplete) leaves at the next poke, and completes once', () => {
    const op = new TestOp();
    purgatory.watch(op, ['t-0'], LONG_MS);
    expect(op.forceComplete()).to.equal(true);
    expect(op.forceComplete()).to.equal(false);
    purgatory.poke('t-0');
    expect([op.checks, op.completions, purgatory.size]).to.deep.equal([0, 1, 0]);
  });

  it('completeAll completes every operation once', () => {
    const ops = [new TestOp(), new TestOp(), new TestOp()];
    purgatory.watch(ops[0]!, ['a'], LONG_MS);
    purgatory.watch(ops[1]!, ['a', 'b'], LONG_MS);
    purgatory.watch(ops[2]!, ['c'], LONG_MS);
    purgatory.completeAll();
    expect(ops.map((op) => op.completions)).to.deep.equal([1, 1, 1]);
    expect(purgatory.size).to.equal(0);
    expect(scheduler.size, 'no deadline timer left').to.equal(0);
  });

  it('an operation added while a key is being poked is checked on the next poke', () => {
    const late = new TestOp();
    const first = new TestOp(() => purgatory.watch(late, ['t-0'], LONG_MS));
    purgatory.watch(first, ['t-0'], LONG_MS);
    first.ready = true;
    purgatory.poke('t-0');
    expect(first.completions).to.equal(1);
    expect(late.checks).to.equal(0);
    expect(purgatory.size).to.equal(1);
    late.ready = true;
    purgatory.poke('t-0');
    expect(late.completions).to.equal(1);
  });
});
