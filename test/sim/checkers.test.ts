// The invariant checkers must be able to fail: each is fed a hand-made bad
// history and must throw, and the matching good history must pass.
import { expect } from 'chai';
import {
  CommitLedger,
  ElectionSafety,
  expectViolation as violation,
  InvariantViolation,
  LogMatching,
  ReadLinearizability,
  StateMachineSafety,
  type LogView,
} from './invariants.js';
import { chainNext } from './sim-state-machine.js';

/** A log view over [term, digest] pairs starting after a snapshot at `snapIndex`/`snapTerm`. */
function log(entries: [number, string][], snapIndex = 0, snapTerm = 0): LogView {
  return {
    firstIndex: () => snapIndex + 1,
    lastIndex: () => snapIndex + entries.length,
    termAt: (i) => (i === snapIndex ? snapTerm : entries[i - snapIndex - 1]?.[0]),
    digestAt: (i) => entries[i - snapIndex - 1]?.[1] ?? 'none',
  };
}

describe('sim: invariant checkers catch bad histories', () => {
  it('election safety: two leaders in one term', () => {
    const es = new ElectionSafety();
    es.observe(1, 1);
    es.observe(2, 2);
    es.observe(2, 2);
    const v = violation(() => es.observe(2, 3));
    expect(v.invariant).to.equal('election safety');
    expect(v.detail).to.match(/two leaders in term 2: 2 and 3/);
  });

  it('state machine safety: divergent applied sequences', () => {
    const sm = new StateMachineSafety(chainNext);
    sm.apply(1, 1, 1, 'cmd:a');
    sm.apply(2, 1, 1, 'cmd:a');
    sm.apply(1, 2, 1, 'cmd:b');
    const v = violation(() => sm.apply(2, 2, 1, 'cmd:c'));
    expect(v.invariant).to.equal('state machine safety');
  });

  it('state machine safety: gaps, re-application and duplicated commands', () => {
    const sm = new StateMachineSafety(chainNext);
    sm.apply(1, 1, 1, 'cmd:a');
    expect(violation(() => sm.apply(1, 3, 1, 'cmd:c')).detail).to.match(/applies 3 after 1/);
    expect(violation(() => sm.apply(1, 1, 1, 'cmd:a')).detail).to.match(/applies 1 after 1/);
    sm.apply(1, 2, 1, 'cmd:b');
    expect(violation(() => sm.apply(1, 3, 1, 'cmd:a')).detail).to.match(/applied at 3 and at 1/);
    // A restart from a snapshot image that disagrees with what was applied.
    const good = chainNext(chainNext(0, 1, 'cmd:a'), 1, 'cmd:b');
    const bad = chainNext(chainNext(0, 1, 'cmd:z'), 1, 'cmd:b');
    expect(violation(() => sm.restore(2, 2, bad, [])).detail).to.match(/history differs/);
    expect(violation(() => sm.restore(2, 1, chainNext(0, 1, 'cmd:a'), [{ index: 1, term: 1, digest: 'cmd:z' }])).invariant)
      .to.equal('state machine safety');
    expect(violation(() => sm.restore(2, 7, good, [])).detail).to.match(/no node applied/);
    sm.restore(2, 2, good, [{ index: 2, term: 1, digest: 'cmd:b' }]);
    sm.apply(2, 3, 1, 'cmd:c');
    expect(violation(() => sm.apply(1, 3, 1, 'cmd:d')).invariant).to.equal('state machine safety');
  });

  it('log matching: same (index, term) with different content or history', () => {
    const lm = new LogMatching();
    lm.check('n1', log([[1, 'a'], [1, 'b'], [2, 'c']]));
    lm.check('n2', log([[1, 'a'], [1, 'b']]));
    expect(violation(() => lm.check('n3', log([[1, 'a'], [1, 'X']]))).detail).to.match(/entry 2\/t1/);
    const lm2 = new LogMatching();
    lm2.check('n1', log([[1, 'a'], [2, 'b'], [2, 'c']]));
    // Same entry 3/t2 but a different term at index 2: the logs disagree before it.
    expect(violation(() => lm2.check('n2', log([[1, 'a'], [1, 'q'], [2, 'c']]))).detail).to.match(/term at 2/);
    expect(violation(() => lm2.check('n3', log([[3, 'a'], [2, 'b']]))).detail).to.match(/term goes down/);
  });

  it('log matching: a changed entry is re-checked on the same node', () => {
    const lm = new LogMatching();
    lm.check('n1', log([[1, 'a'], [1, 'b']]));
    lm.check('n1', log([[1, 'a'], [2, 'b2']]));
    expect(() => lm.check('n2', log([[1, 'a'], [2, 'other']]))).to.throw(InvariantViolation);
  });

  it('leader completeness: a later leader lacks a committed entry', () => {
    const ledger = new CommitLedger();
    ledger.record(1, 2, 1, 1);
    ledger.record(1, 2, 2, 2);
    ledger.checkLeader(3, 3, log([[1, 'a'], [2, 'b'], [3, 'noop']]));
    // A stale leader of the same (or an earlier) term is not bound.
    ledger.checkLeader(4, 2, log([[1, 'a']]));
    expect(violation(() => ledger.checkLeader(5, 4, log([[1, 'a']]))).invariant).to.equal('leader completeness');
    expect(violation(() => ledger.checkLeader(5, 4, log([[1, 'a'], [3, 'x']]))).detail).to.match(/has 2\/t3/);
    // Entries covered by the leader's snapshot count as held.
    ledger.checkLeader(5, 4, log([[4, 'x']], 2, 2));
  });

  it('committed entry lost: an index re-committed with another term', () => {
    const ledger = new CommitLedger();
    ledger.record(1, 3, 5, 3);
    ledger.record(2, 4, 5, 3);
    expect(violation(() => ledger.record(2, 5, 5, 4)).invariant).to.equal('committed entry lost');
  });

  it('read linearizability: a read index below what was committed when issued', () => {
    const reads = new ReadLinearizability();
    reads.issue(1, 1, 10);
    reads.complete(1, 1, 10);
    reads.issue(2, 1, 10);
    expect(violation(() => reads.complete(2, 1, 9)).invariant).to.equal('read linearizability');
    expect(violation(() => reads.complete(7, 1, 12)).detail).to.match(/unknown/);
  });
});
