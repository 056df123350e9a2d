import { expect } from 'chai';
import { encodeConfChange } from '../../src/raft/raft.js';
import { EntryType, type ConfChange } from '../../src/raft/types.js';
import { Cluster, drain, enc, entry, soloRaft } from './harness.js';

function change(c: Cluster, leader: number, cc: ConfChange): void {
  const r = c.raft(leader).proposeConfChange(cc);
  expect(r, JSON.stringify(cc)).to.include({ ok: true });
  c.settle();
  c.tick(1);
  expect(c.raft(leader).status().commit).to.equal(c.raft(leader).lastIndex());
}

describe('raft membership changes', () => {
  it('adds an observer, promotes it, removes a voter — one change at a time', () => {
    const c = new Cluster({ voters: [1, 2, 3], spares: [4], seed: 31 });
    c.elect(1);
    c.propose(1, 'before');
    c.settle();
    expect(c.raft(4).status()).to.include({ role: 'observer' });

    expect(c.raft(1).proposeConfChange({ type: 'addObserver', node: 4 })).to.include({ ok: true });
    expect(c.raft(1).proposeConfChange({ type: 'promoteObserver', node: 4 }))
      .to.deep.equal({ ok: false, reason: 'configChangePending', leader: 1 });
    // In effect on the leader as soon as appended, before it commits.
    expect(c.raft(1).status().membership).to.deep.equal({ voters: [1, 2, 3], observers: [4] });
    c.settle();
    c.tick(1);
    expect(c.node(4).values()).to.deep.equal(['before']);
    expect(c.raft(4).status()).to.include({ role: 'observer', leader: 1 });

    change(c, 1, { type: 'promoteObserver', node: 4 });
    expect(c.raft(4).status()).to.include({ role: 'follower' });
    for (const id of [1, 2, 3, 4]) expect(c.raft(id).status().membership).to.deep.equal({ voters: [1, 2, 3, 4], observers: [] });

    // Four voters: leader + one other is no longer a quorum.
    c.partition([1, 4], [2, 3]);
    const commit = c.raft(1).status().commit;
    c.propose(1, 'needs-three');
    c.settle();
    expect(c.raft(1).status().commit).to.equal(commit);
    c.heal();
    c.tick(1);
    expect(c.raft(1).status().commit).to.be.greaterThan(commit);

    change(c, 1, { type: 'removeVoter', node: 2 });
    expect(c.raft(1).status().membership).to.deep.equal({ voters: [1, 3, 4], observers: [] });
    expect([...c.raft(1).status().progress!.keys()].sort()).to.deep.equal([3, 4]);
    c.propose(1, 'after');
    c.settle();
    c.tick(1);
    expect(c.node(4).values()).to.deep.equal(['before', 'needs-three', 'after']);
    expect(c.node(2).values()).to.not.include('after');
  });

  it('a leader that removes itself steps down once the change commits, and the rest elect a leader', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 32 });
    c.elect(1);
    expect(c.raft(1).proposeConfChange({ type: 'removeVoter', node: 1 })).to.include({ ok: true });
    expect(c.raft(1).status().role, 'still leading until the change commits').to.equal('leader');
    c.settle();
    c.tick(1);
    expect(c.raft(1).status().role).to.equal('observer');
    c.tickUntil(() => [2, 3].some((id) => c.raft(id).status().role === 'leader'), 100, 'a new leader');
    const leader = c.leader()!;
    expect(leader).to.be.oneOf([2, 3]);
    c.propose(leader, 'x');
    c.settle();
    c.tick(1);
    expect(c.node(leader === 2 ? 3 : 2).values()).to.deep.equal(['x']);
    c.tick(50);
    expect(c.raft(1).status().role, 'a removed node never campaigns').to.equal('observer');
  });

  it('refuses invalid changes, and any change before the leader commits in its term', () => {
    const c = new Cluster({ voters: [1, 2, 3], observers: [5], seed: 33 });
    c.addFilter((m) => m.type === 'appendResp');
    c.elect(1); // the NoOp cannot commit
    expect(c.raft(1).proposeConfChange({ type: 'addVoter', node: 4 }))
      .to.deep.equal({ ok: false, reason: 'configChangePending', leader: 1 });
    c.heal();
    c.tick(1);
    const invalid: ConfChange[] = [
      { type: 'addVoter', node: 2 }, { type: 'addObserver', node: 5 }, { type: 'promoteObserver', node: 2 },
      { type: 'removeObserver', node: 3 }, { type: 'removeVoter', node: 9 }, { type: 'addVoter', node: 0 },
      { type: 'addVoter', node: 1.5 },
    ];
    for (const cc of invalid) {
      expect(c.raft(1).proposeConfChange(cc), JSON.stringify(cc)).to.deep.equal({ ok: false, reason: 'invalidConfChange', leader: 1 });
    }
    expect(c.raft(2).proposeConfChange({ type: 'addVoter', node: 4 })).to.include({ ok: false, reason: 'notLeader' });
    const single = new Cluster({ voters: [1], seed: 34 });
    single.elect(1);
    single.settle();
    expect(single.raft(1).proposeConfChange({ type: 'removeVoter', node: 1 })).to.include({ reason: 'invalidConfChange' });
  });

  it('a config entry takes effect on append and is reverted when truncated away', () => {
    const f = soloRaft(2, { voters: [1, 2, 3], observers: [] });
    const add4 = { index: 2, term: 1, type: EntryType.Config, data: encodeConfChange({ type: 'addVoter', node: 4 }) };
    f.step({ type: 'append', from: 1, to: 2, term: 1, prevLogIndex: 0, prevLogTerm: 0, entries: [entry(1, 1), add4], commit: 1 });
    expect(f.status().membership).to.deep.equal({ voters: [1, 2, 3, 4], observers: [] });
    // A leader of term 2 never had it: its entry at index 2 replaces the config entry.
    f.step({ type: 'append', from: 3, to: 2, term: 2, prevLogIndex: 1, prevLogTerm: 1, entries: [entry(2, 2)], commit: 1 });
    expect(f.termAt(2)).to.equal(2);
    expect(f.status().membership).to.deep.equal({ voters: [1, 2, 3], observers: [] });
    const rd = f.ready();
    expect(rd.entries.map((e) => [e.index, e.term])).to.deep.equal([[1, 1], [2, 2]]);
  });

  it('a node that knows no one can still learn from the leader; responses from non-members are dropped', () => {
    const fresh = soloRaft(4, { voters: [], observers: [] });
    fresh.step({ type: 'append', from: 1, to: 4, term: 3, prevLogIndex: 0, prevLogTerm: 0, entries: [entry(1, 3)], commit: 1 });
    expect(fresh.status()).to.include({ term: 3, leader: 1, lastIndex: 1, commit: 1, role: 'observer' });
    expect(drain(fresh).map((m) => m.type)).to.deep.equal(['appendResp']);

    const member = soloRaft(2, { voters: [1, 2, 3], observers: [] });
    for (const type of ['voteResp', 'preVoteResp'] as const) member.step({ type, from: 9, to: 2, term: 0, granted: true });
    member.step({ type: 'appendResp', from: 9, to: 2, term: 0, success: true, matchIndex: 0, conflictTerm: 0, conflictIndex: 0 });
    member.step({ type: 'heartbeatResp', from: 9, to: 2, term: 5, readRound: 0, lastIndex: 0 });
    member.step({ type: 'installSnapshotResp', from: 9, to: 2, term: 5, snapshotIndex: 0, nextOffset: 0, done: true });
    expect(drain(member)).to.deep.equal([]);
    expect(member.status().term, 'a non-member response must not even move the term').to.equal(0);
  });

  it('a lagging voter votes for a voter it does not know yet (its configuration is stale)', () => {
    // {1,2,3} + observer 4, promote 4, remove 3 → {1,2,4}, all committed without 2.
    const c = new Cluster({ voters: [1, 2, 3], spares: [4], seed: 35 });
    c.elect(1);
    c.addFilter((m) => m.to === 2 && m.type === 'append');
    for (const cc of [{ type: 'addObserver', node: 4 }, { type: 'promoteObserver', node: 4 }, { type: 'removeVoter', node: 3 }] as const) {
      change(c, 1, cc);
    }
    expect(c.raft(2).status().membership).to.deep.equal({ voters: [1, 2, 3], observers: [] });
    c.crash(1);
    c.crash(3);
    c.heal();
    c.tickUntil(() => c.leader() === 4, 300, 'node 4 elected with the vote of node 2');
    c.propose(4, 'after');
    c.settle();
    c.tick(1);
    expect(c.node(2).values()).to.deep.equal(['after']);
    expect(c.raft(2).status().membership).to.deep.equal({ voters: [1, 2, 4], observers: [] });
  });

  it('conf changes survive an encode/decode round trip through the log', () => {
    const f = soloRaft(2, { voters: [1, 2], observers: [] });
    const changes: ConfChange[] = [
      { type: 'addObserver', node: 7 }, { type: 'promoteObserver', node: 7 }, { type: 'removeVoter', node: 1 },
    ];
    f.step({
      type: 'append', from: 1, to: 2, term: 1, prevLogIndex: 0, prevLogTerm: 0, commit: 0,
      entries: changes.map((cc, i) => ({ index: i + 1, term: 1, type: EntryType.Config, data: encodeConfChange(cc) })),
    });
    expect(f.status().membership).to.deep.equal({ voters: [2, 7], observers: [] });
    expect(f.membershipAt(1)).to.deep.equal({ voters: [1, 2], observers: [7] });
    expect(f.membershipAt(0)).to.deep.equal({ voters: [1, 2], observers: [] });
    // A config entry whose bytes do not decode makes the whole append malformed.
    const g = soloRaft(2, { voters: [1, 2], observers: [] });
    g.step({ type: 'append', from: 1, to: 2, term: 1, prevLogIndex: 0, prevLogTerm: 0, commit: 0,
      entries: [{ index: 1, term: 1, type: EntryType.Config, data: enc('junk') }] });
    expect(g.status()).to.include({ term: 0, lastIndex: 0 });
  });
});
