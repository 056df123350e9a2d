import { expect } from 'chai';
import { Raft } from '../../src/raft/raft.js';
import { DEFAULT_RAFT_CONFIG } from '../../src/raft/types.js';
import { SeededRng } from '../../src/util/rng.js';
import { Cluster, drain, soloRaft } from './harness.js';

const T = DEFAULT_RAFT_CONFIG.electionTimeoutTicks;

describe('raft election', () => {
  it('elects exactly one leader by timeout, and every node learns it', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 7 });
    c.tickUntil(() => c.leader() !== undefined, 10 * T, 'a leader');
    const leader = c.leader()!;
    c.tick(2);
    const statuses = [1, 2, 3].map((id) => c.raft(id).status());
    expect(statuses.filter((s) => s.role === 'leader')).to.have.length(1);
    for (const s of statuses) {
      expect(s.leader).to.equal(leader);
      expect(s.term).to.equal(statuses[0]!.term);
    }
    // The election NoOp commits and is applied everywhere.
    for (const id of [1, 2, 3]) expect(c.node(id).appliedIndex()).to.equal(1);
  });

  it('draws election timeouts from [T, 2T) with the injected rng', () => {
    const seen = new Set<number>();
    for (let seed = 1; seed <= 40; seed++) {
      const raft = new Raft({ ...DEFAULT_RAFT_CONFIG, id: 1 }, {
        hardState: { term: 0, vote: 0, commit: 0 }, entries: [], bootstrapMembership: { voters: [1], observers: [] }, applied: 0,
      }, new SeededRng(seed));
      let ticks = 0;
      while (raft.status().role !== 'leader' && ticks < 3 * T) {
        raft.tick();
        ticks++;
      }
      expect(ticks).to.be.within(T, 2 * T - 1);
      seen.add(ticks);
    }
    expect(seen.size, 'timeouts should vary across seeds').to.be.greaterThan(3);
  });

  it('a single voter elects itself on campaign() and commits after persisting', () => {
    const raft = soloRaft(1, { voters: [1], observers: [] });
    raft.campaign();
    expect(raft.status()).to.include({ role: 'leader', term: 1 });
    let rd = raft.ready();
    expect(rd.entries.map((e) => e.index)).to.deep.equal([1]);
    expect(rd.committedEntries).to.have.length(0); // not durable yet, so not counted
    raft.advance(rd);
    rd = raft.ready();
    expect(rd.committedEntries.map((e) => e.index)).to.deep.equal([1]);
    expect(rd.hardState?.commit).to.equal(1);
  });

  it('pre-vote: a partitioned node keeps its term and does not disrupt the leader when it returns', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 3 });
    c.elect(1);
    const term = c.raft(1).status().term;
    c.isolate(3);
    c.tick(20 * T);
    expect(c.raft(3).status().term, 'pre-vote must not bump the term').to.equal(term);
    c.heal();
    c.tick(5 * T);
    expect(c.raft(1).status()).to.include({ role: 'leader', term });
    expect(c.raft(3).status()).to.include({ role: 'follower', leader: 1, term });
  });

  it('without pre-vote and check-quorum, the same rejoin disrupts the leader (the test can fail)', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 3, config: { preVote: false, checkQuorum: false } });
    c.elect(1);
    const term = c.raft(1).status().term;
    c.isolate(3);
    c.tick(20 * T);
    expect(c.raft(3).status().term).to.be.greaterThan(term);
    c.heal();
    c.tick(5 * T);
    const leader = c.leader()!;
    expect(c.raft(leader).status().term).to.be.greaterThan(term);
  });

  it('voters ignore pre-votes while they hear from a live leader', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 5 });
    c.elect(1);
    const term = c.raft(1).status().term;
    c.raft(3).campaign(); // pre-vote to 1 and 2, both in lease
    c.settle();
    expect(c.raft(3).status().role).to.equal('preCandidate');
    c.tick(1); // the leader's heartbeat brings 3 back
    expect(c.raft(1).status()).to.include({ role: 'leader', term });
    expect(c.raft(3).status()).to.include({ role: 'follower', term });
  });

  it('check-quorum: a leader cut off from a majority steps down within two election timeouts', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 11 });
    c.elect(1);
    c.isolate(1);
    c.tick(2 * T, [1]);
    expect(c.raft(1).status().role).to.equal('follower');
  });

  it('without check-quorum the cut-off leader stays leader (the test can fail)', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 11, config: { checkQuorum: false } });
    c.elect(1);
    c.isolate(1);
    c.tick(10 * T, [1]);
    expect(c.raft(1).status().role).to.equal('leader');
  });

  it('the majority side elects a new leader; the old one follows it after healing', () => {
    const c = new Cluster({ voters: [1, 2, 3, 4, 5], seed: 13 });
    c.elect(1);
    c.partition([1, 2], [3, 4, 5]);
    c.tickUntil(() => [3, 4, 5].some((id) => c.raft(id).status().role === 'leader'), 20 * T, 'a majority leader');
    const newLeader = [3, 4, 5].find((id) => c.raft(id).status().role === 'leader')!;
    c.heal();
    c.tick(3 * T);
    expect(c.leader()).to.equal(newLeader);
    expect(c.raft(1).status()).to.include({ role: 'follower', leader: newLeader });
  });

  it('observers never campaign, and their votes never make a quorum', () => {
    const c = new Cluster({ voters: [1, 2, 3], observers: [4], seed: 17 });
    c.tick(20 * T, [4]);
    expect(c.raft(4).status()).to.include({ role: 'observer', term: 0 });
    c.raft(4).campaign();
    expect(drain(c.raft(4))).to.deep.equal([]);

    // Self + observer are two "yes" votes, but only one of the three voters.
    const cand = soloRaft(1, { voters: [1, 2, 3], observers: [4] }, { config: { preVote: false } });
    cand.campaign();
    expect(drain(cand).map((m) => m.to)).to.deep.equal([2, 3]); // observers are not asked
    cand.step({ type: 'voteResp', from: 4, to: 1, term: 1, granted: true });
    expect(cand.status().role).to.equal('candidate');
    cand.step({ type: 'voteResp', from: 2, to: 1, term: 1, granted: true });
    expect(cand.status().role).to.equal('leader');
  });

  it('a node whose config is stale still grants votes (a promoted observer that has not heard yet)', () => {
    const obs = soloRaft(4, { voters: [1, 2, 3], observers: [4] });
    obs.step({ type: 'vote', from: 1, to: 4, term: 1, lastLogIndex: 0, lastLogTerm: 0, transfer: false });
    expect(drain(obs)).to.deep.include({ type: 'voteResp', from: 4, to: 1, term: 1, granted: true });
  });

  it('a node outside the membership never campaigns', () => {
    const raft = soloRaft(9, { voters: [1, 2, 3], observers: [] });
    for (let i = 0; i < 10 * T; i++) raft.tick();
    raft.campaign();
    expect(raft.status()).to.include({ role: 'observer', term: 0 });
    expect(drain(raft).filter((m) => m.type === 'vote' || m.type === 'preVote')).to.deep.equal([]);
  });

  it('grants at most one vote per term, and only to an up-to-date log', () => {
    const r = soloRaft(2, { voters: [1, 2, 3], observers: [] }, { entries: [{ index: 1, term: 1, type: 0, data: new Uint8Array() }], term: 1 });
    r.step({ type: 'vote', from: 1, to: 2, term: 2, lastLogIndex: 0, lastLogTerm: 0, transfer: false }); // behind
    r.step({ type: 'vote', from: 3, to: 2, term: 2, lastLogIndex: 1, lastLogTerm: 1, transfer: false }); // ok
    r.step({ type: 'vote', from: 1, to: 2, term: 2, lastLogIndex: 5, lastLogTerm: 1, transfer: false }); // already voted
    const rd = r.ready();
    expect(rd.hardState).to.deep.include({ term: 2, vote: 3 });
    expect(rd.messages.map((m) => [m.to, (m as { granted: boolean }).granted])).to.deep.equal([[1, false], [3, true], [1, false]]);
  });

  it('answers stale-term requests with its term so the sender steps down', () => {
    const r = soloRaft(2, { voters: [1, 2, 3], observers: [] }, { term: 5 });
    r.step({ type: 'append', from: 1, to: 2, term: 3, prevLogIndex: 0, prevLogTerm: 0, entries: [], commit: 0 });
    r.step({ type: 'heartbeat', from: 1, to: 2, term: 3, commit: 0, readRound: 0 });
    r.step({ type: 'appendResp', from: 1, to: 2, term: 3, success: true, matchIndex: 0, conflictTerm: 0, conflictIndex: 0 });
    const out = drain(r);
    expect(out.map((m) => [m.type, m.term])).to.deep.equal([['appendResp', 5], ['heartbeatResp', 5]]);

    const leader = soloRaft(1, { voters: [1], observers: [] });
    leader.campaign();
    drain(leader);
    leader.step({ type: 'heartbeatResp', from: 1, to: 1, term: 9, readRound: 0, lastIndex: 0 }); // from itself: dropped
    expect(leader.status().role).to.equal('leader');
  });
});
