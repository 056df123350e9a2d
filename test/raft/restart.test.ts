import { expect } from 'chai';
import { Raft } from '../../src/raft/raft.js';
import { DEFAULT_RAFT_CONFIG } from '../../src/raft/types.js';
import { SeededRng } from '../../src/util/rng.js';
import { Cluster, logWithTerms } from './harness.js';

describe('raft restart from RaftInitialState', () => {
  it('a restarted follower keeps its log, term and vote, re-applies from applied + 1, and catches up', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 61 });
    c.elect(1);
    for (const v of ['a', 'b']) c.propose(1, v);
    c.settle();
    c.tick(1);
    const before = c.raft(3).status();
    c.crash(3);
    c.propose(1, 'c');
    c.settle();
    c.restart(3);
    const after = c.raft(3).status();
    expect(after).to.include({ term: before.term, vote: before.vote, lastIndex: before.lastIndex, commit: before.commit });
    expect(after.role).to.equal('follower');
    c.tick(2); // state machine replay (checked in order, exactly once, by the harness) and catch-up
    expect(c.node(3).values()).to.deep.equal(['a', 'b', 'c']);
  });

  it('the whole cluster restarts with nothing lost and nothing applied twice', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 62 });
    c.elect(2);
    for (let i = 0; i < 5; i++) c.propose(2, `v${i}`);
    c.settle();
    c.tick(1);
    const term = c.raft(2).status().term;
    for (const id of [1, 2, 3]) c.crash(id);
    for (const id of [1, 2, 3]) c.restart(id);
    c.tickUntil(() => c.leader() !== undefined, 200, 'a leader');
    const leader = c.leader()!;
    expect(c.raft(leader).status().term).to.be.greaterThan(term);
    c.propose(leader, 'v5');
    c.settle();
    c.tick(1);
    for (const id of [1, 2, 3]) expect(c.node(id).values()).to.deep.equal(['v0', 'v1', 'v2', 'v3', 'v4', 'v5']);
  });

  it('restarts from a snapshot: the log starts after it', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 63 });
    c.elect(1);
    for (const v of ['a', 'b', 'c']) c.propose(1, v);
    c.settle();
    c.tick(1);
    const snap = c.node(2).compact();
    c.propose(1, 'd');
    c.settle();
    c.tick(1);
    c.crash(2);
    c.restart(2);
    expect(c.raft(2).firstIndex()).to.equal(snap.meta.index + 1);
    expect(c.raft(2).termAt(snap.meta.index)).to.equal(snap.meta.term);
    c.tick(1);
    expect(c.node(2).values()).to.deep.equal(['a', 'b', 'c', 'd']);
  });

  it('restarts from entries persisted without their hard state (a crash between the two writes)', () => {
    const raft = new Raft({ ...DEFAULT_RAFT_CONFIG, id: 1 }, {
      hardState: { term: 1, vote: 2, commit: 1 },
      entries: logWithTerms([1, 3]),
      bootstrapMembership: { voters: [1, 2, 3], observers: [] },
      applied: 0,
    }, new SeededRng(1));
    expect(raft.status()).to.include({ term: 3, vote: 0 });
    expect(raft.ready().hardState).to.deep.equal({ term: 3, vote: 0, commit: 1 });
  });

  it('hands out exactly the committed entries above initial.applied', () => {
    const raft = new Raft({ ...DEFAULT_RAFT_CONFIG, id: 1 }, {
      hardState: { term: 2, vote: 1, commit: 4 },
      entries: logWithTerms([1, 1, 2, 2, 2]),
      bootstrapMembership: { voters: [1, 2, 3], observers: [] },
      applied: 2,
    }, new SeededRng(1));
    const rd = raft.ready();
    expect(rd.entries).to.deep.equal([]); // already durable
    expect(rd.hardState).to.equal(undefined); // unchanged
    expect(rd.committedEntries.map((e) => e.index)).to.deep.equal([3, 4]);
    raft.advance(rd);
    expect(raft.status()).to.include({ applied: 4, commit: 4, term: 2, vote: 1, role: 'follower' });
    expect(raft.hasReady()).to.equal(false);
  });
});
