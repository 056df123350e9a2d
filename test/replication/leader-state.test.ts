// The leader-side HW/ISR rules (src/replication/rules/leader-state.ts), pure
// and on a ManualClock: the high watermark over the (maximal) ISR, shrink
// after replica.lag.time.max.ms, expansion once a follower holds HW and the
// epoch start, pending AlterPartition changes, and acks=all outcomes.

import { expect } from 'chai';
import fc from 'fast-check';
import { LeaderState, type LeaderFacts } from '../../src/replication/rules/leader-state.js';
import { ManualClock } from '../../src/util/clock.js';
import { AssertionError } from '../../src/util/assert.js';

const LAG_MS = 10_000;

/** The partition's side (partition.ts stores these): the committed ISR and the HW, stored once, here. */
class Facts implements LeaderFacts {
  constructor(public isr: readonly number[], public highWatermark: number) {}
  advanceHighWatermark(offset: number): void {
    expect(offset, 'the HW only moves up').to.be.greaterThan(this.highWatermark);
    this.highWatermark = offset;
  }
}

const factsOf = new WeakMap<LeaderState, Facts>();

function leader(opts: { isr?: number[]; replicas?: number[]; hw?: number; leo?: number; epochStart?: number } = {}) {
  const clock = new ManualClock();
  const facts = new Facts(opts.isr ?? [1, 2, 3], opts.hw ?? 0);
  const state = new LeaderState(1, 5, opts.epochStart ?? 0, opts.replicas ?? [1, 2, 3], facts, opts.leo ?? 0, clock, LAG_MS);
  factsOf.set(state, facts);
  return { clock, state };
}

/** The image committed `isr` (and `replicas`): the partition takes it, then tells the rules. */
function commitIsr(state: LeaderState, isr: readonly number[], replicas: readonly number[]): boolean {
  factsOf.get(state)!.isr = [...isr];
  return state.onIsrCommitted(replicas);
}

describe('replication rules: leader state', () => {
  it('advances HW to the minimum LEO over the ISR, never backwards', () => {
    const { state } = leader();
    state.onLocalAppend(10);
    expect(state.highWatermark).to.equal(0);
    state.onFollowerFetch(2, 10);
    expect(state.highWatermark, 'follower 3 still at 0').to.equal(0);
    expect(state.onFollowerFetch(3, 6)).to.equal(true);
    expect(state.highWatermark).to.equal(6);
    state.onFollowerFetch(3, 4); // a stale fetch offset
    expect(state.highWatermark).to.equal(6);
    state.onFollowerFetch(3, 10);
    expect(state.highWatermark).to.equal(10);
  });

  it('never moves HW past the leader LEO, even if a follower claims more', () => {
    const { state } = leader({ isr: [1, 2], replicas: [1, 2] });
    state.onLocalAppend(5);
    state.onFollowerFetch(2, 99);
    expect(state.highWatermark).to.equal(5);
  });

  it('asks to shrink a follower that has not caught up within the lag time', () => {
    const { clock, state } = leader();
    state.onLocalAppend(10);
    state.onFollowerFetch(2, 10);
    state.onFollowerFetch(3, 10);
    clock.advance(LAG_MS);
    state.onLocalAppend(20);
    state.onFollowerFetch(2, 20);
    expect(state.isrChangeToRequest()).to.equal(null);
    clock.advance(1);
    expect(state.isrChangeToRequest()).to.deep.equal({ reason: 'shrink', brokers: [3], newIsr: [1, 2] });
  });

  it('counts a shrinking member for HW until the controller commits the shrink', () => {
    const { clock, state } = leader();
    state.onLocalAppend(10);
    state.onFollowerFetch(2, 10);
    clock.advance(LAG_MS + 1);
    const change = state.isrChangeToRequest()!;
    state.markIsrChangePending(change.newIsr);
    expect(state.isrChangeToRequest(), 'one change at a time').to.equal(null);
    expect(state.highWatermark).to.equal(0);
    state.onFollowerFetch(2, 10);
    expect(state.highWatermark, 'pending shrink does not yet release HW').to.equal(0);
    expect(commitIsr(state, [1, 2], [1, 2, 3])).to.equal(true);
    expect(state.highWatermark).to.equal(10);
  });

  it('expands with a follower once it reaches HW and the epoch start offset', () => {
    const { state } = leader({ isr: [1, 2], epochStart: 8, leo: 8, hw: 8 });
    state.onLocalAppend(12);
    state.onFollowerFetch(2, 12);
    expect(state.highWatermark).to.equal(12);
    state.onFollowerFetch(3, 7);
    expect(state.isrChangeToRequest()).to.equal(null);
    state.onFollowerFetch(3, 12);
    expect(state.isrChangeToRequest()).to.deep.equal({ reason: 'expand', brokers: [3], newIsr: [1, 2, 3] });
    state.markIsrChangePending([1, 2, 3]);
    state.onLocalAppend(15);
    state.onFollowerFetch(2, 15);
    expect(state.highWatermark, 'a pending joiner holds HW back').to.equal(12);
  });

  it('decides acks=all outcomes', () => {
    const { state } = leader({ isr: [1, 2], replicas: [1, 2, 3] });
    state.onLocalAppend(5);
    expect(state.ackState(4, 2)).to.equal('wait');
    state.onFollowerFetch(2, 5);
    expect(state.ackState(4, 2)).to.equal('ok');
    commitIsr(state, [1], [1, 2, 3]);
    expect(state.ackState(4, 2)).to.equal('notEnoughReplicasAfterAppend');
    expect(state.hasEnoughReplicas(2)).to.equal(false);
  });

  it('asserts its invariants', () => {
    const clock = new ManualClock();
    expect(() => new LeaderState(1, 0, 0, [1, 2], new Facts([2], 0), 0, clock, LAG_MS)).to.throw(AssertionError);
    const { state } = leader();
    state.onLocalAppend(5);
    expect(() => state.onLocalAppend(4)).to.throw(AssertionError);
  });
});

describe('replication rules: leader state, more cases', () => {
  it('keeps HW = min LEO over the maximal ISR, never decreasing, through any sequence of events', () => {
    type Op =
      | { kind: 'append'; n: number }
      | { kind: 'fetch'; id: number; at: number }
      | { kind: 'tick'; ms: number }
      | { kind: 'request' }
      | { kind: 'commit' }
      | { kind: 'reject' };
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('append' as const), n: fc.integer({ min: 0, max: 5 }) }),
      fc.record({ kind: fc.constant('fetch' as const), id: fc.integer({ min: 2, max: 3 }), at: fc.double({ min: 0, max: 1.2, noNaN: true }) }),
      fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: LAG_MS }) }),
      fc.record({ kind: fc.constant('request' as const) }),
      fc.record({ kind: fc.constant('commit' as const) }),
      fc.record({ kind: fc.constant('reject' as const) }),
    );
    fc.assert(fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
      const { clock, state } = leader({ hw: 3, leo: 5, epochStart: 5 });
      let pending: readonly number[] | null = null;
      for (const op of ops) {
        const before = state.highWatermark;
        if (op.kind === 'append') state.onLocalAppend(state.logEndOffset + op.n);
        else if (op.kind === 'fetch') state.onFollowerFetch(op.id, Math.floor(op.at * state.logEndOffset));
        else if (op.kind === 'tick') clock.advance(op.ms);
        else if (op.kind === 'request') {
          const change = state.isrChangeToRequest();
          if (change) {
            expect(pending, 'one change at a time').to.equal(null);
            state.markIsrChangePending(change.newIsr);
            pending = change.newIsr;
          }
        } else if (op.kind === 'commit' && pending) {
          commitIsr(state, pending, [1, 2, 3]);
          pending = null;
        } else if (op.kind === 'reject') {
          state.clearPendingIsrChange();
          pending = null;
        }
        let min = state.logEndOffset;
        for (const id of state.maximalIsr) if (id !== 1) min = Math.min(min, state.follower(id)!.leo);
        expect(state.highWatermark, `after ${JSON.stringify(op)}`).to.equal(Math.max(before, min));
        expect(state.highWatermark).to.be.at.most(state.logEndOffset);
        expect(state.isr).to.include(1);
      }
    }), { seed: 4242, numRuns: 300 });
  });

  it('keeps a follower that fetches steadily, even if it never reaches the moving LEO', () => {
    const { clock, state } = leader({ isr: [1, 2], replicas: [1, 2] });
    let leo = 0;
    for (let i = 0; i < 10; i++) {
      const previousLeo = leo;
      leo += 10;
      state.onLocalAppend(leo);
      clock.advance(LAG_MS / 2);
      state.onFollowerFetch(2, previousLeo); // reaches what the leader had at its previous fetch
      expect(state.isrChangeToRequest(), `round ${i}`).to.equal(null);
    }
  });

  it('shrinks a follower that keeps fetching but is stuck at one offset', () => {
    const { clock, state } = leader({ isr: [1, 2], replicas: [1, 2] });
    state.onLocalAppend(10);
    for (let t = 0; t <= LAG_MS; t += LAG_MS / 4) {
      state.onFollowerFetch(2, 4);
      expect(state.isrChangeToRequest(), `at ${t} ms`).to.equal(null);
      clock.advance(LAG_MS / 4);
    }
    state.onFollowerFetch(2, 4);
    expect(state.isrChangeToRequest()).to.deep.equal({ reason: 'shrink', brokers: [2], newIsr: [1] });
  });

  it('gives a new leader\'s ISR the lag time before shrinking silent followers, and never shrinks non-members', () => {
    const { clock, state } = leader({ isr: [1, 2], replicas: [1, 2, 3] });
    clock.advance(LAG_MS);
    expect(state.isrChangeToRequest()).to.equal(null);
    clock.advance(1);
    expect(state.isrChangeToRequest()).to.deep.equal({ reason: 'shrink', brokers: [2], newIsr: [1] });
  });

  it('does not admit a replica that never fetched, even when the log is empty', () => {
    const { state } = leader({ isr: [1, 2], replicas: [1, 2, 3] });
    expect(state.isrChangeToRequest()).to.equal(null);
    state.onFollowerFetch(3, 0);
    expect(state.isrChangeToRequest()).to.deep.equal({ reason: 'expand', brokers: [3], newIsr: [1, 2, 3] });
  });

  it('expands only once the follower reached both HW and the epoch start offset', () => {
    // A new leader at epoch start 10 whose HW (5) lags: follower 2 holds it back.
    const { state } = leader({ isr: [1, 2], replicas: [1, 2, 3], hw: 4, leo: 10, epochStart: 10 });
    state.onFollowerFetch(2, 5);
    expect(state.highWatermark).to.equal(5);
    state.onFollowerFetch(3, 7);
    expect(state.isrChangeToRequest(), 'past HW but below the epoch start').to.equal(null);
    state.onFollowerFetch(3, 10);
    expect(state.isrChangeToRequest()).to.deep.equal({ reason: 'expand', brokers: [3], newIsr: [1, 2, 3] });
  });

  it('re-admits a shrunk follower after it caught up, with the change committed', () => {
    const { clock, state } = leader({ isr: [1, 2], replicas: [1, 2] });
    state.onLocalAppend(10);
    clock.advance(LAG_MS + 1);
    state.markIsrChangePending(state.isrChangeToRequest()!.newIsr);
    commitIsr(state, [1], [1, 2]);
    expect(state.highWatermark, 'alone in the ISR, the leader commits its LEO').to.equal(10);
    state.onLocalAppend(12);
    state.onFollowerFetch(2, 11);
    expect(state.isrChangeToRequest(), 'below HW 12').to.equal(null);
    state.onFollowerFetch(2, 12);
    const change = state.isrChangeToRequest();
    expect(change).to.deep.equal({ reason: 'expand', brokers: [2], newIsr: [1, 2] });
    state.markIsrChangePending(change!.newIsr);
    commitIsr(state, [1, 2], [1, 2]);
    expect(state.isr).to.deep.equal([1, 2]);
    expect(state.hasPendingIsrChange).to.equal(false);
  });

  it('a rejected expansion stops holding HW back; a rejected shrink is asked for again', () => {
    const { clock, state } = leader({ isr: [1, 2], replicas: [1, 2, 3] });
    state.onLocalAppend(10);
    state.onFollowerFetch(2, 10);
    state.onFollowerFetch(3, 10);
    state.markIsrChangePending(state.isrChangeToRequest()!.newIsr); // expand with 3
    expect(state.maximalIsr).to.have.members([1, 2, 3]);
    state.onLocalAppend(20);
    state.onFollowerFetch(2, 20);
    expect(state.highWatermark, 'the joiner at 10 holds HW').to.equal(10);
    state.clearPendingIsrChange();
    expect(state.maximalIsr).to.have.members([1, 2]);
    state.onFollowerFetch(2, 20);
    expect(state.highWatermark).to.equal(20);

    clock.advance(LAG_MS + 1);
    const shrink = state.isrChangeToRequest()!;
    expect(shrink.reason).to.equal('shrink');
    state.markIsrChangePending(shrink.newIsr);
    expect(state.isrChangeToRequest(), 'while pending').to.equal(null);
    state.clearPendingIsrChange();
    expect(state.isrChangeToRequest()).to.deep.equal(shrink);
  });

  it('follows the replica set the controller commits', () => {
    const { state } = leader({ isr: [1, 2], replicas: [1, 2] });
    state.onLocalAppend(10);
    commitIsr(state, [1, 2], [1, 2, 4]);
    expect(state.follower(4)).to.deep.include({ leo: -1 }); // unknown until it fetches
    commitIsr(state, [1], [1, 4]);
    expect(state.follower(2)).to.equal(undefined);
    expect(state.highWatermark, 'only the leader is left in the ISR').to.equal(10);
  });

  it('ack state: waits until HW passes the last offset, whatever the ISR; then ok or not enough replicas', () => {
    const { state } = leader({ isr: [1, 2, 3], replicas: [1, 2, 3] });
    state.onLocalAppend(5);
    state.onFollowerFetch(2, 5);
    expect(state.ackState(4, 2), 'follower 3 still at 0').to.equal('wait');
    expect(state.hasEnoughReplicas(3)).to.equal(true);
    state.onFollowerFetch(3, 4);
    expect(state.ackState(4, 2), 'HW 4 does not pass offset 4').to.equal('wait');
    expect(state.ackState(3, 2)).to.equal('ok');
    state.onFollowerFetch(3, 5);
    expect(state.ackState(4, 3)).to.equal('ok');
    commitIsr(state, [1, 2], [1, 2, 3]);
    expect(state.ackState(4, 3)).to.equal('notEnoughReplicasAfterAppend');
    expect(state.hasEnoughReplicas(3)).to.equal(false);
    expect(state.hasEnoughReplicas(2)).to.equal(true);
  });
});
