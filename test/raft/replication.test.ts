import { expect } from 'chai';
import { EntryType, type AppendRequest, type AppendResponse, type Message } from '../../src/raft/types.js';
import { Cluster, logWithTerms } from './harness.js';

const appendsTo = (c: Cluster, to: number): AppendRequest[] =>
  c.delivered.filter((m): m is AppendRequest => m.type === 'append' && m.to === to);

describe('raft log replication', () => {
  it('replicates and commits proposals in order on every node', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 1 });
    c.elect(1);
    const values = Array.from({ length: 20 }, (_, i) => `v${i}`);
    for (const v of values) c.propose(1, v);
    c.settle();
    c.tick(1); // heartbeats carry the final commit index to followers
    for (const id of [1, 2, 3]) {
      expect(c.node(id).values(), `node ${id}`).to.deep.equal(values);
      expect(c.raft(id).status().commit).to.equal(21);
    }
  });

  it('batches entries by count and by bytes', () => {
    const byCount = new Cluster({ voters: [1, 2], seed: 2, config: { maxEntriesPerAppend: 3 } });
    byCount.elect(1);
    for (let i = 0; i < 10; i++) byCount.propose(1, `v${i}`);
    byCount.settle();
    const sizes = appendsTo(byCount, 2).map((m) => m.entries.length).filter((n) => n > 0);
    expect(Math.max(...sizes)).to.equal(3);
    expect(sizes.reduce((a, b) => a + b, 0)).to.equal(11); // NoOp + 10 proposals
    expect(byCount.node(2).values()).to.have.length(10);

    const byBytes = new Cluster({ voters: [1, 2], seed: 2, config: { maxBytesPerAppend: 8 } });
    byBytes.elect(1);
    for (let i = 0; i < 10; i++) byBytes.propose(1, 'abcd');
    byBytes.settle();
    const counts = appendsTo(byBytes, 2).map((m) => m.entries.filter((e) => e.type === EntryType.Normal).length);
    expect(Math.max(...counts)).to.equal(2);
  });

  it('pipelines at most maxInflightAppends unacknowledged appends per follower', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 3, config: { maxInflightAppends: 2, maxEntriesPerAppend: 1 } });
    c.elect(1);
    expect(c.raft(1).status().progress?.get(2)?.state).to.equal('replicate');
    const before = appendsTo(c, 2).length;
    c.addFilter((m) => m.type === 'appendResp'); // acknowledgements never arrive
    for (let i = 0; i < 10; i++) c.propose(1, `v${i}`);
    c.settle();
    expect(appendsTo(c, 2).length - before).to.equal(2);
    c.heal();
    c.tickUntil(() => [2, 3].every((id) => c.node(id).values().length === 10), 200, 'catch-up');
  });

  it('recovers from lost appends', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 4 });
    c.elect(1);
    let n = 0;
    c.addFilter((m) => m.type === 'append' && n++ % 3 !== 0);
    for (let i = 0; i < 30; i++) {
      c.propose(1, `v${i}`);
      c.settle();
    }
    c.heal();
    c.tickUntil(() => [1, 2, 3].every((id) => c.node(id).values().length === 30), 200, 'convergence');
  });

  it('backtracks divergent follower logs quickly with the conflict hint (Raft Figure 7)', () => {
    const c = new Cluster({ voters: [1, 2, 3, 4, 5], seed: 5 });
    c.load(1, logWithTerms([1, 1, 1, 4, 4, 5, 5, 6, 6, 6]), 6);
    c.load(2, logWithTerms([1, 1, 1, 4, 4, 5, 5, 6, 6]), 6); // (a) missing one entry
    c.load(3, logWithTerms([1, 1, 1, 4]), 4); // (b) missing many
    c.load(4, logWithTerms([1, 1, 1, 4, 4, 4, 4]), 4); // (e) extra entries of term 4
    c.load(5, logWithTerms([1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3]), 3); // (f) extra entries of terms 2, 3
    c.elect(1);
    c.tick(1);
    const leaderTerms = Array.from({ length: 11 }, (_, i) => c.raft(1).termAt(i + 1));
    expect(leaderTerms).to.deep.equal([1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 7]);
    for (const id of [2, 3, 4, 5]) {
      expect(Array.from({ length: 11 }, (_, i) => c.raft(id).termAt(i + 1)), `node ${id}`).to.deep.equal(leaderTerms);
      expect(c.raft(id).lastIndex()).to.equal(11);
      expect(c.node(id).appliedIndex()).to.equal(11);
    }
    const rejections = (id: number): number =>
      c.delivered.filter((m) => m.type === 'appendResp' && m.from === id && !(m as AppendResponse).success).length;
    // One step back per entry would take 7 rejections for (f) and 5 for (e).
    expect(rejections(5)).to.be.at.most(2);
    expect(rejections(4)).to.be.at.most(2);
  });

  it('never commits an old-term entry by counting replicas (Raft Figure 8)', () => {
    const c = new Cluster({ voters: [1, 2, 3, 4, 5], seed: 8, config: { preVote: false, checkQuorum: false } });
    // (a) S1 leads term 1 and replicates X at index 2 to S2 only.
    c.elect(1);
    c.addFilter((m) => m.from === 1 && m.type === 'append' && [3, 4, 5].includes(m.to));
    c.propose(1, 'X');
    c.settle();
    c.heal();
    expect(c.raft(2).termAt(2)).to.equal(1);
    // (b) S1 crashes; S5 wins term 2 with S3, S4 and appends index 2 in term 2 locally.
    c.crash(1);
    c.addFilter((m) => m.from === 5 && m.type === 'append');
    c.elect(5);
    expect(c.raft(5).status().term).to.equal(2);
    expect(c.raft(5).termAt(2)).to.equal(2);
    c.heal();
    // (c) S5 crashes; S1 restarts and wins term 3; X reaches a majority (S1, S2, S3...)
    //     while the leader's own term-3 entry is kept away from everyone.
    c.crash(5);
    c.restart(1);
    c.addRewrite((m: Message) => (m.type === 'append' ? { ...m, entries: m.entries.filter((e) => e.term !== 3) } : m));
    c.raft(1).campaign(); // term 2: S3 and S4 already voted for S5
    c.settle();
    c.elect(1);
    expect(c.raft(1).status().term).to.equal(3);
    c.tick(2, [1]);
    const holdersOfX = [1, 2, 3, 4].filter((id) => c.raft(id).termAt(2) === 1);
    expect(holdersOfX.length).to.be.at.least(3);
    expect(c.raft(1).status().commit, 'X is on a majority but is not of the current term').to.equal(1);
    // (d) S1 crashes; S5 returns, wins term 4 and overwrites index 2 everywhere.
    c.crash(1);
    c.heal();
    c.restart(5);
    c.raft(5).campaign(); // term 3 is taken: loses
    c.settle();
    c.elect(5);
    c.tick(2);
    for (const id of [2, 3, 4, 5]) {
      expect(c.raft(id).termAt(2), `node ${id}`).to.equal(2);
      expect(c.node(id).values()).to.not.include('X');
      expect(c.node(id).appliedIndex()).to.equal(3);
    }
    c.restart(1);
    c.tick(3);
    expect(c.raft(1).termAt(2)).to.equal(2);
    expect(c.node(1).values()).to.not.include('X');
  });

  it('a heartbeat never makes a follower commit entries it has not matched with the leader', () => {
    const c = new Cluster({ voters: [1, 2, 3, 4, 5], seed: 12 });
    for (const id of [1, 2]) c.load(id, logWithTerms([1, 1]), 1); // index 2 is an old, uncommitted entry
    for (const id of [3, 4, 5]) c.load(id, logWithTerms([1]), 1);
    c.addFilter((m) => m.type === 'append' && m.to === 2);
    c.isolate(1);
    c.elect(3); // term 2, NoOp at index 2 commits on 3, 4, 5
    expect(c.raft(3).status().commit).to.equal(2);
    c.tick(3);
    expect(c.raft(2).status().commit, 'node 2 holds a different entry at index 2').to.be.below(2);
    c.heal();
    c.tick(2);
    expect(c.raft(2).termAt(2)).to.equal(2);
    expect(c.raft(2).status().commit).to.equal(2);
  });

  it('a stale leader in a minority partition cannot commit', () => {
    const c = new Cluster({ voters: [1, 2, 3, 4, 5], seed: 9 });
    c.elect(1);
    const commitBefore = c.raft(1).status().commit;
    c.partition([1, 2], [3, 4, 5]);
    const lostIndex = c.propose(1, 'lost');
    c.settle();
    expect(c.raft(1).status().commit).to.equal(commitBefore);
    expect(c.raft(2).lastIndex()).to.equal(lostIndex);
    c.tickUntil(() => [3, 4, 5].some((id) => c.raft(id).status().role === 'leader'), 500, 'majority leader');
    const leader = [3, 4, 5].find((id) => c.raft(id).status().role === 'leader')!;
    c.propose(leader, 'kept');
    c.settle();
    c.heal();
    c.tickUntil(() => [1, 2, 3, 4, 5].every((id) => c.node(id).values().includes('kept')), 200, 'convergence');
    for (const id of [1, 2, 3, 4, 5]) expect(c.node(id).values()).to.deep.equal(['kept']);
  });

  it('observers receive entries but do not count toward commit', () => {
    const c = new Cluster({ voters: [1, 2, 3], observers: [4, 5], seed: 10 });
    c.elect(1);
    const commitBefore = c.raft(1).status().commit;
    c.partition([1, 4, 5], [2, 3]);
    const index = c.propose(1, 'o');
    c.settle();
    for (const id of [4, 5]) {
      expect(c.raft(id).lastIndex()).to.equal(index);
      expect(c.raft(1).status().progress?.get(id)?.match).to.equal(index);
    }
    expect(c.raft(1).status().commit, '3 of 5 nodes, but 1 of 3 voters').to.equal(commitBefore);
    c.heal();
    c.tick(2);
    expect(c.raft(1).status().commit).to.equal(index);
    expect(c.node(4).values()).to.deep.equal(['o']);
  });

  it('refuses proposals beyond maxUncommittedEntries, and on followers', () => {
    const c = new Cluster({ voters: [1, 2, 3], seed: 11, config: { maxUncommittedEntries: 5 } });
    c.elect(1);
    c.isolate(1);
    for (let i = 0; i < 5; i++) expect(c.raft(1).propose(new Uint8Array([i])).ok).to.equal(true);
    expect(c.raft(1).propose(new Uint8Array([9]))).to.deep.equal({ ok: false, reason: 'tooManyUncommitted', leader: 1 });
    expect(c.raft(2).propose(new Uint8Array([9]))).to.deep.equal({ ok: false, reason: 'notLeader', leader: 1 });
  });
});
