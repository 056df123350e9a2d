// An acks=all produce waiting for replication (src/replication/delayed-produce.ts)
// in the purgatory, on simulated time: each partition settles on its own —
// ok once the HW passes its batch, NOT_ENOUGH_REPLICAS_AFTER_APPEND when the
// ISR shrank below the minimum, NOT_LEADER_OR_FOLLOWER when leadership moved —
// the answer goes out once all settled, or at the deadline with the rest
// REQUEST_TIMED_OUT, and exactly once.

import { expect } from 'chai';
import { Purgatory } from '../../src/replication/delayed.js';
import { DelayedProduce, type ProduceWait } from '../../src/replication/delayed-produce.js';
import type { AckState, Partition } from '../../src/replication/partition.js';
import type { LeaderState } from '../../src/replication/rules/leader-state.js';
import type { ProducePartitionResponse, ProduceResponse } from '../../src/protocol/apis/produce.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { Errors } from '../../src/util/errors.js';

/** A partition whose acks=all state the test sets. */
function partition(key: string): { p: Partition; leader: LeaderState; set(s: AckState | 'leaderChanged'): void } {
  let state: AckState | 'leaderChanged' = 'wait';
  const leader = {} as LeaderState;
  const p = { key, ackState: (l: LeaderState) => (l === leader ? state : 'leaderChanged') } as unknown as Partition;
  return { p, leader, set: (s) => (state = s) };
}

function setUp(keys: string[], timeoutMs: number) {
  const scheduler = new ManualScheduler();
  const purgatory = new Purgatory(scheduler);
  const parts = keys.map(partition);
  const outs: ProducePartitionResponse[] = keys.map((_, i) => ({ partition: i, errorCode: 0, errorMessage: null, baseOffset: i * 10, logStartOffset: 0 }));
  const response: ProduceResponse = { topics: [{ name: 't', partitions: outs }] };
  const waits: ProduceWait[] = parts.map((x, i) => ({ p: x.p, leader: x.leader, lastOffset: i * 10, minIsr: 2, out: outs[i]! }));
  const answers: ProduceResponse[] = [];
  const op = new DelayedProduce(waits, timeoutMs, response, (r) => answers.push(r));
  const done = purgatory.tryCompleteElseWatch(op, op.keys, timeoutMs);
  const codes = (): number[] => outs.map((o) => o.errorCode);
  return { scheduler, purgatory, parts, answers, done, codes };
}

describe('replication: DelayedProduce', () => {
  it('answers once every partition settled, each with its own outcome', () => {
    const t = setUp(['t-0', 't-1', 't-2'], 1000);
    expect(t.done).to.equal(false);
    t.parts[0]!.set('ok');
    t.purgatory.poke('t-0');
    t.parts[1]!.set('notEnoughReplicasAfterAppend');
    t.purgatory.poke('t-1');
    expect(t.answers, 'one partition still waits').to.have.length(0);
    t.parts[2]!.set('leaderChanged');
    t.purgatory.poke('t-2');
    expect(t.answers).to.have.length(1);
    expect(t.codes()).to.deep.equal([0, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND.code, Errors.NOT_LEADER_OR_FOLLOWER.code]);
    t.scheduler.advance(5000);
    expect(t.answers, 'answered once').to.have.length(1);
  });

  it('at the deadline, answers with the unsettled partitions timed out, not before', () => {
    const t = setUp(['t-0', 't-1'], 300);
    t.parts[0]!.set('ok');
    t.purgatory.poke('t-0');
    t.scheduler.advance(299);
    expect(t.answers).to.have.length(0);
    t.scheduler.advance(1);
    expect(t.answers).to.have.length(1);
    expect(t.codes()).to.deep.equal([0, Errors.REQUEST_TIMED_OUT.code]);
    expect(t.purgatory.size).to.equal(0);
  });

  it('completes at once when every partition is already settled, and is never watched', () => {
    const scheduler = new ManualScheduler();
    const purgatory = new Purgatory(scheduler);
    const x = partition('t-0');
    x.set('ok');
    const out: ProducePartitionResponse = { partition: 0, errorCode: 0, errorMessage: null, baseOffset: 0, logStartOffset: 0 };
    const answers: ProduceResponse[] = [];
    const op = new DelayedProduce([{ p: x.p, leader: x.leader, lastOffset: 0, minIsr: 1, out }], 100, { topics: [{ name: 't', partitions: [out] }] }, (r) => answers.push(r));
    expect(purgatory.tryCompleteElseWatch(op, op.keys, 100)).to.equal(true);
    expect([answers.length, out.errorCode, purgatory.size, scheduler.size]).to.deep.equal([1, 0, 0, 0]);
  });

  it('leadership moving completes the waiters of that partition now (completeKey), the settled ones keep their outcome', () => {
    const t = setUp(['t-0', 't-1'], 10_000);
    t.parts[0]!.set('ok');
    t.purgatory.poke('t-0');
    t.parts[1]!.set('leaderChanged');
    t.purgatory.completeKey('t-1');
    expect(t.answers).to.have.length(1);
    expect(t.codes()).to.deep.equal([0, Errors.NOT_LEADER_OR_FOLLOWER.code]);
  });
});
