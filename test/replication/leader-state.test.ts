import { expect } from 'chai';
import { LeaderState } from '../../src/replication/rules/leader-state.js';
import { ManualClock } from '../../src/util/clock.js';
import { AssertionError } from '../../src/util/assert.js';

const LAG_MS = 10_000;

function leader(opts: { isr?: number[]; replicas?: number[]; hw?: number; leo?: number; epochStart?: number } = {}) {
  const clock = new ManualClock();
  const state = new LeaderState(1, 5, opts.epochStart ?? 0, opts.replicas ?? [1, 2, 3], opts.isr ?? [1, 2, 3], opts.hw ?? 0, opts.leo ?? 0, clock, LAG_MS);
  return { clock, state };
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
    expect(state.onIsrCommitted([1, 2], [1, 2, 3])).to.equal(true);
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
    state.onIsrCommitted([1], [1, 2, 3]);
    expect(state.ackState(4, 2)).to.equal('notEnoughReplicasAfterAppend');
    expect(state.hasEnoughReplicas(2)).to.equal(false);
  });

  it('asserts its invariants', () => {
    const clock = new ManualClock();
    expect(() => new LeaderState(1, 0, 0, [1, 2], [2], 0, 0, clock, LAG_MS)).to.throw(AssertionError);
    const { state } = leader();
    state.onLocalAppend(5);
    expect(() => state.onLocalAppend(4)).to.throw(AssertionError);
  });
});
