import { expect } from 'chai';
import { DEFAULT_RAFT_CONFIG } from '../../src/raft/types.js';
import { Cluster, soloRaft } from './harness.js';

const T = DEFAULT_RAFT_CONFIG.electionTimeoutTicks;

describe('raft leadership transfer', () => {
  it('hands leadership to an up-to-date voter at once, despite leader stickiness', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 41 });
    c.elect(1);
    const term = c.raft(1).status().term;
    expect(c.raft(1).transferLeadership(2)).to.equal(true);
    expect(c.raft(1).propose(new Uint8Array([1]))).to.deep.equal({ ok: false, reason: 'transferring', leader: 1 });
    c.settle();
    expect(c.raft(2).status()).to.include({ role: 'leader', term: term + 1 });
    expect(c.raft(1).status()).to.include({ role: 'follower', leader: 2 });
    expect(c.delivered.filter((m) => m.type === 'timeoutNow')).to.have.length(1);
    expect(c.delivered.filter((m) => m.type === 'preVote' && m.term > term)).to.have.length(0); // skipped pre-vote
  });

  it('brings a lagging target up to date before sending TimeoutNow', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 42 });
    c.elect(1);
    c.isolate(2);
    for (let i = 0; i < 5; i++) c.propose(1, `v${i}`);
    c.settle();
    c.heal();
    const last = c.raft(1).lastIndex();
    expect(c.raft(2).lastIndex()).to.be.below(last);
    c.raft(1).transferLeadership(2);
    c.settle();
    expect(c.raft(2).status().role).to.equal('leader');
    c.tick(1);
    expect(c.node(2).values()).to.deep.equal(['v0', 'v1', 'v2', 'v3', 'v4']);
  });

  it('aborts after an election timeout if the target cannot take over', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 43 });
    c.elect(1);
    c.isolate(2);
    expect(c.raft(1).transferLeadership(2)).to.equal(true);
    expect(c.raft(1).status().transferTarget).to.equal(2);
    c.tick(T - 1, [1]);
    expect(c.raft(1).propose(new Uint8Array([1]))).to.include({ reason: 'transferring' });
    c.tick(1, [1]);
    expect(c.raft(1).status().transferTarget).to.equal(undefined);
    expect(c.raft(1).propose(new Uint8Array([1]))).to.include({ ok: true });
    expect(c.raft(1).status().role).to.equal('leader');
  });

  it('refuses targets that are not other voters, and on non-leaders', () => {
    const c = new Cluster({ voters: [1, 2, 3], observers: [4], seed: 44 });
    c.elect(1);
    expect(c.raft(1).transferLeadership(1)).to.equal(false);
    expect(c.raft(1).transferLeadership(4)).to.equal(false);
    expect(c.raft(1).transferLeadership(9)).to.equal(false);
    expect(c.raft(2).transferLeadership(3)).to.equal(false);
  });
});

describe('raft ReadIndex', () => {
  it('confirms a read with a heartbeat round and returns the commit index', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 51 });
    c.elect(1);
    c.propose(1, 'a');
    c.settle();
    const commit = c.raft(1).status().commit;
    expect(c.raft(1).readIndex(7)).to.equal(true);
    c.settle();
    expect(c.node(1).readStates).to.deep.equal([{ requestId: 7, index: commit }]);
  });

  it('waits until the leader has committed an entry of its term', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 52 });
    c.addFilter((m) => m.type === 'appendResp');
    c.elect(1);
    expect(c.raft(1).readIndex(1)).to.equal(true);
    c.settle();
    c.tick(2, [1]);
    expect(c.node(1).readStates, 'no read before the NoOp commits').to.deep.equal([]);
    c.heal();
    c.tick(2);
    expect(c.node(1).readStates).to.have.length(1);
    expect(c.node(1).readStates[0]!.index).to.be.at.least(1);
  });

  it('a leader cut off from the quorum never confirms a read', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 53 });
    c.elect(1);
    c.isolate(1);
    expect(c.raft(1).readIndex(3)).to.equal(true);
    c.tick(T, [1]);
    expect(c.node(1).readStates).to.deep.equal([]);
  });

  it('is refused by followers, confirmed at once by a single voter, and bounded', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 54, config: { maxPendingReads: 2 } });
    c.elect(1);
    expect(c.raft(2).readIndex(1)).to.equal(false);
    c.isolate(1);
    expect(c.raft(1).readIndex(1)).to.equal(true);
    expect(c.raft(1).readIndex(2)).to.equal(true);
    expect(c.raft(1).readIndex(3)).to.equal(false);

    const solo = soloRaft(1, { voters: [1], observers: [] });
    solo.campaign();
    solo.advance(solo.ready()); // persist the NoOp, so it commits
    solo.advance(solo.ready());
    expect(solo.readIndex(9)).to.equal(true);
    expect(solo.ready().readStates).to.deep.equal([{ requestId: 9, index: 1 }]);
  });
});
