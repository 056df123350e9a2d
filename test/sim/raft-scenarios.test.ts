// Scripted scenarios on the simulation harness: each drives a cluster into a
// classic Raft hazard by hand (partitions, crashes, campaigns at chosen
// moments) while every invariant is still checked after every event.
import { expect } from 'chai';
import type { NodeId } from '../../src/raft/types.js';
import { RaftSim, SimFailure, type SimOptions } from './cluster.js';

/** Campaigns on `id` until it leads (a campaign may first only teach it a higher term). */
function electByHand(sim: RaftSim, id: NodeId, attempts = 4): void {
  for (let k = 0; k < attempts && sim.node(id).role !== 'leader'; k++) {
    sim.campaign(id);
    sim.runUntilIdle();
  }
  expect(sim.node(id).role, `n${id} should lead`).to.equal('leader');
}

/** Heartbeat rounds for scripts without automatic ticks: tick every live node, deliver everything. */
function tickRounds(sim: RaftSim, rounds: number): void {
  for (let k = 0; k < rounds; k++) {
    for (const n of sim.alive()) sim.tick(n.id);
    sim.runUntilIdle();
  }
}

function awaitLeader(sim: RaftSim, among?: readonly NodeId[]): NodeId {
  let found: NodeId | undefined;
  sim.runUntil(() => {
    const l = sim.leader();
    found = l !== undefined && (among === undefined || among.includes(l.id)) ? l.id : undefined;
    return found !== undefined;
  }, 20 * sim.electionTimeoutMs(), 'a leader is elected');
  return found as NodeId;
}

/** Proposes on the leader and waits until every listed node applied the command. */
function commitOn(sim: RaftSim, leader: NodeId, nodes: readonly NodeId[]): number {
  const { result, cmd } = sim.propose(leader);
  if (!result.ok) throw new Error(`proposal refused: ${result.reason}`);
  sim.runUntil(() => nodes.every((n) => sim.hasApplied(n, result.index, cmd)),
    20 * sim.electionTimeoutMs(), `${cmd} applied on ${nodes.join(',')}`);
  return result.index;
}

function appliedAnywhere(sim: RaftSim, cmd: string): boolean {
  return sim.machines.indexOf(`cmd:${cmd}`) !== undefined;
}

const ALL5 = [1, 2, 3, 4, 5];

describe('sim scenarios', function () {
  this.timeout(60_000);

  describe('Figure 8 of the Raft paper (scripted, no ticks)', () => {
    const manual: SimOptions = {
      seed: 8, voters: 5, autoTick: false,
      // One entry per append so entry 2 and the leader's NoOp at 3 travel apart.
      raft: { preVote: false, checkQuorum: false, maxEntriesPerAppend: 1 },
    };

    /** Steps (a)–(c): returns the sim with S1 leading term t3, entry 2/t1 on S1–S3, and S1's NoOp 3/t3 on S1–S2 only. */
    function upToC(sim: RaftSim): { t1: number; t2: number; t3: number } {
      // (a) S1 leads term t1 and replicates entry 2 to S2 only.
      electByHand(sim, 1);
      const t1 = sim.node(1).term;
      sim.partition([1, 2], [3, 4, 5]);
      const a = sim.propose(1).result;
      expect(a.ok && a.index).to.equal(2);
      sim.runUntilIdle();
      expect(sim.node(2).raft?.termAt(2)).to.equal(t1);
      // (b) S1 crashes; S5 wins term t2 with S3 and S4, appends 2/t2 (its NoOp) and replicates it nowhere.
      sim.crash(1, false);
      sim.heal();
      sim.partition([2], [5]);
      sim.campaign(5);
      sim.runUntil(() => sim.node(5).role === 'leader', 1000, 'S5 elected in (b)');
      sim.isolate(5);
      sim.runUntilIdle();
      const t2 = sim.node(5).term;
      expect(sim.node(5).disk.termAt(2)).to.equal(t2);
      // (c) S5 crashes; S1 restarts and wins t3 with S2 and S3; S3 gets entry 2/t1 but not S1's NoOp 3/t3.
      sim.crash(5, false);
      sim.heal();
      sim.restart(1);
      sim.partition([1, 2, 3], [4, 5]);
      for (let k = 0; k < 4 && sim.node(1).role !== 'leader'; k++) {
        sim.campaign(1);
        sim.runUntil(() => sim.node(1).role === 'leader' || sim.queue.size === 0, 1000, 'S1 campaign in (c)');
      }
      expect(sim.node(1).role).to.equal('leader');
      const t3 = sim.node(1).term;
      sim.runUntil(() => (sim.status(1).progress?.get(3)?.match ?? 0) >= 2, 1000, 'S3 acknowledges entry 2');
      return { t1, t2, t3 };
    }

    it('(d) an old-term entry on a majority is not committed, and may be overwritten', () => {
      const sim = new RaftSim(manual);
      const { t1, t2 } = upToC(sim);
      // Entry 2/t1 is on S1, S2, S3 — a majority — but S1 must not count it: it is not of S1's term.
      sim.isolate(1);
      expect(sim.status(1).commit, 'S1 committed an old-term entry by counting replicas').to.be.lessThan(2);
      expect(sim.ledger.termOf(2)).to.equal(undefined);
      sim.crash(1, false);
      sim.runUntilIdle();
      // (d) S5 restarts and wins with S3 and S4 (its 2/t2 beats their 2/t1 and 1/t1), overwriting index 2.
      sim.heal();
      sim.restart(5);
      sim.isolate(1);
      electByHand(sim, 5);
      const idx = commitOn(sim, 5, [3, 4, 5]);
      expect(idx).to.be.greaterThan(3);
      expect(sim.ledger.termOf(2)).to.equal(t2);
      expect(sim.machines.digestAt(2)).to.equal('noop');
      // S1 comes back: its entry 2/t1 is replaced, never applied anywhere.
      sim.heal();
      sim.restart(1);
      tickRounds(sim, 3);
      commitOn(sim, 5, ALL5);
      for (const n of ALL5) expect(sim.node(n).raft?.termAt(2), `n${n} index 2`).to.equal(t2);
      expect(appliedAnywhere(sim, 'c1')).to.equal(false);
      expect(t1).to.be.lessThan(t2);
    });

    it('(e) once S1 commits an entry of its own term, S5 can no longer win', () => {
      const sim = new RaftSim(manual);
      const { t1, t3 } = upToC(sim);
      sim.runUntil(() => sim.status(1).commit >= 3, 1000, 'S1 commits its NoOp 3/t3 on S1, S2, S3');
      sim.runUntilIdle();
      expect(sim.ledger.termOf(2)).to.equal(t1);
      expect(sim.ledger.termOf(3)).to.equal(t3);
      sim.crash(1, false);
      sim.heal();
      sim.restart(5);
      for (let k = 0; k < 4; k++) {
        sim.campaign(5);
        sim.runUntilIdle();
        expect(sim.node(5).role, 'S5 must lose: S2 and S3 hold 3/t3').to.not.equal('leader');
      }
      electByHand(sim, 3);
      tickRounds(sim, 3);
      commitOn(sim, 3, [2, 3, 4, 5]);
      expect(sim.machines.digestAt(2)).to.equal('cmd:c1');
    });
  });

  describe('a stale leader in a minority partition', () => {
    it('cannot commit while the majority elects a new leader, and steps down on heal', () => {
      const sim = new RaftSim({ seed: 21, voters: 5, raft: { checkQuorum: false } });
      const old = awaitLeader(sim);
      commitOn(sim, old, ALL5);
      const follower = ALL5.find((n) => n !== old) as NodeId;
      const minority = [old, follower];
      const majority = ALL5.filter((n) => !minority.includes(n));
      sim.partition(minority, majority);
      const commitBefore = sim.status(old).commit;
      const stale = [sim.propose(old), sim.propose(old), sim.propose(old)];
      expect(stale.every((p) => p.result.ok)).to.equal(true);
      const fresh = awaitLeader(sim, majority);
      const idx = commitOn(sim, fresh, majority);
      // Without check-quorum the old leader still believes it leads, but cannot commit.
      expect(sim.status(old).role).to.equal('leader');
      expect(sim.status(old).commit).to.equal(commitBefore);
      expect(sim.status(fresh).term).to.be.greaterThan(sim.status(old).term);
      sim.heal();
      sim.runUntil(() => sim.node(old).role === 'follower' && sim.node(old).leader === fresh,
        10 * sim.electionTimeoutMs(), 'the stale leader steps down');
      commitOn(sim, fresh, ALL5);
      expect(sim.node(old).sm.lastIndex()).to.be.at.least(idx);
      for (const p of stale) expect(appliedAnywhere(sim, p.cmd), `${p.cmd} from the stale leader`).to.equal(false);
    });

    it('with check-quorum, steps down by itself within two election timeouts', () => {
      const sim = new RaftSim({ seed: 22, voters: 5 });
      const old = awaitLeader(sim);
      commitOn(sim, old, ALL5);
      sim.partition([old], ALL5.filter((n) => n !== old));
      sim.runUntil(() => sim.node(old).role !== 'leader', 2 * sim.electionTimeoutMs() + 20, 'check-quorum step-down');
      sim.heal();
      sim.healAndAwaitProgress();
    });
  });

  describe('pre-vote', () => {
    function isolateAndRejoin(preVote: boolean): { before: number; after: number; leaderBefore: NodeId; leaderAfter: NodeId | undefined; isolatedTerm: number } {
      const sim = new RaftSim({ seed: 33, voters: 3, raft: { preVote, checkQuorum: preVote } });
      const leaderBefore = awaitLeader(sim);
      commitOn(sim, leaderBefore, [1, 2, 3]);
      const before = sim.status(leaderBefore).term;
      const f = [1, 2, 3].find((n) => n !== leaderBefore) as NodeId;
      sim.isolate(f);
      sim.runFor(10 * sim.electionTimeoutMs());
      const isolatedTerm = sim.status(f).term;
      sim.heal();
      sim.runFor(5 * sim.electionTimeoutMs());
      const l = sim.leader();
      return { before, after: Math.max(...[1, 2, 3].map((n) => sim.status(n).term)), leaderBefore, leaderAfter: l?.id, isolatedTerm };
    }

    it('keeps a rejoining partitioned node from disrupting the leader', () => {
      const r = isolateAndRejoin(true);
      expect(r.isolatedTerm, 'pre-vote must not bump the isolated node\'s term').to.equal(r.before);
      expect(r.after, 'no term change in the cluster').to.equal(r.before);
      expect(r.leaderAfter).to.equal(r.leaderBefore);
    });

    it('(control) without pre-vote the same rejoin does disrupt', () => {
      const r = isolateAndRejoin(false);
      expect(r.isolatedTerm).to.be.greaterThan(r.before);
      expect(r.after).to.be.greaterThan(r.before);
    });
  });

  describe('leadership transfer', () => {
    it('moves leadership mid-load without losing or duplicating anything', () => {
      const sim = new RaftSim({ seed: 44, voters: 5, compactEvery: 16 });
      const from = awaitLeader(sim);
      let proposing = true;
      const accepted: string[] = [];
      const load = (): void => {
        const l = sim.leader();
        if (l !== undefined) {
          const p = sim.propose(l.id);
          if (p.result.ok) accepted.push(p.cmd);
        }
        if (proposing) sim.queue.schedule(3, 'client', load);
      };
      load();
      sim.runFor(300);
      const target = ALL5.find((n) => n !== from) as NodeId;
      const term = sim.status(from).term;
      const okBefore = sim.stats.proposalsOk;
      expect(sim.transferLeadership(from, target)).to.equal(true);
      sim.runUntil(() => sim.node(target).role === 'leader', 2 * sim.electionTimeoutMs(), 'transfer completes');
      expect(sim.status(target).term).to.equal(term + 1);
      sim.runFor(300);
      proposing = false;
      expect(sim.stats.proposalsOk - okBefore).to.be.greaterThan(20);
      const done = sim.healAndAwaitProgress();
      expect(done.leader).to.equal(target);
      // No fault struck: every accepted proposal made it (the target caught up before taking over).
      const lost = accepted.filter((cmd) => sim.machines.indexOf(`cmd:${cmd}`) === undefined);
      expect(lost, 'accepted proposals that never applied').to.deep.equal([]);
    });
  });

  describe('membership', () => {
    it('a voter that has not yet learned of its promotion still votes', () => {
      // Raft thesis §4.1 / etcd: a server answers vote requests without
      // consulting its own (possibly stale) configuration. Node 4 is promoted
      // while cut off; once a voter is lost, 4's vote is needed to elect anyone.
      const sim = new RaftSim({ seed: 88, voters: 3, observers: 1 });
      const l = awaitLeader(sim);
      commitOn(sim, l, [1, 2, 3]);
      sim.isolate(4);
      const change = sim.proposeConfChange(l, { type: 'promoteObserver', node: 4 });
      expect(change.ok).to.equal(true);
      commitOn(sim, l, [1, 2, 3]);
      expect(sim.status(l).membership.voters).to.deep.equal([1, 2, 3, 4]);
      expect(sim.node(4).sm.lastIndex()).to.be.lessThan(change.ok ? change.index : 0);
      const [x, y] = [1, 2, 3].filter((n) => n !== l) as [NodeId, NodeId];
      sim.crash(x, false);
      sim.crash(l, false);
      sim.heal();
      sim.restart(l);
      // Three of the four voters (l, y, 4) are up and connected: they must elect a leader and commit.
      const next = awaitLeader(sim, [l, y, 4]);
      commitOn(sim, next, [l, y, 4]);
    });
  });

  describe('the checkers catch a broken shell', () => {
    it('acknowledging before fsync loses a committed entry: leader completeness fails', () => {
      const sim = new RaftSim({ seed: 77, voters: 3, fsyncMinMs: 20, fsyncMaxMs: 30, sendBeforeFsync: true });
      const l = awaitLeader(sim);
      commitOn(sim, l, [1, 2, 3]);
      const [f, g] = [1, 2, 3].filter((n) => n !== l) as [NodeId, NodeId];
      sim.cut(l, g);
      const { result } = sim.propose(l);
      const idx = result.ok ? result.index : 0;
      // f acknowledges before its fsync, the leader commits on that promise, then both crash.
      sim.runUntil(() => sim.ledger.maxCommitted >= idx, 1000, 'the entry commits on f\'s early ack');
      expect(sim.node(f).busy).to.equal(true);
      sim.crash(f, false);
      sim.crash(l, false);
      sim.heal();
      sim.restart(f);
      let caught: unknown;
      try {
        sim.runFor(20 * sim.electionTimeoutMs());
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(SimFailure);
      expect((caught as SimFailure).invariant).to.equal('leader completeness');
      expect((caught as SimFailure).message).to.match(/^seed 77: leader completeness: leader \d of term \d+ (lacks committed entry|has \d+\/t\d+, committed was)/);
      expect((caught as SimFailure).traceTail.length).to.be.greaterThan(10);
    });
  });

  describe('lost messages', () => {
    it('a lost acknowledgement does not stall a follower (one append in flight)', () => {
      const sim = new RaftSim({ seed: 66, voters: 3, raft: { maxInflightAppends: 1 } });
      const l = awaitLeader(sim);
      commitOn(sim, l, [1, 2, 3]);
      const f = [1, 2, 3].find((n) => n !== l) as NodeId;
      const { result } = sim.propose(l);
      expect(result.ok).to.equal(true);
      const idx = result.ok ? result.index : 0;
      // f receives the entry; its acknowledgement is lost on the way back.
      sim.runUntil(() => (sim.node(f).raft?.lastIndex() ?? 0) >= idx, 1000, 'f receives the entry');
      sim.cut(f, l);
      sim.runUntil(() => !sim.node(f).busy, 1000, 'f acknowledged (into the void)');
      sim.heal();
      sim.runFor(sim.electionTimeoutMs() / 2);
      // The leader keeps going with the other follower; f must catch up too.
      commitOn(sim, l, [1, 2, 3]);
    });
  });

  describe('crash between write and fsync', () => {
    it('of the leader loses nothing committed (and what it lost was never sent)', () => {
      const sim = new RaftSim({ seed: 55, voters: 3, fsyncMinMs: 5, fsyncMaxMs: 10 });
      const l = awaitLeader(sim);
      for (let k = 0; k < 5; k++) commitOn(sim, l, [1, 2, 3]);
      const committed = sim.ledger.maxCommitted;
      sim.runUntil(() => !sim.node(l).busy, 1000, 'leader idle');
      const lost = sim.propose(l);
      expect(lost.result.ok).to.equal(true);
      expect(sim.node(l).busy && sim.node(l).disk.pendingWrites > 0, 'entry written, not yet fsynced').to.equal(true);
      sim.crash(l, false);
      const next = awaitLeader(sim, [1, 2, 3].filter((n) => n !== l));
      commitOn(sim, next, [1, 2, 3].filter((n) => n !== l));
      sim.restart(l);
      sim.healAndAwaitProgress();
      // Every node applied past what was committed before the crash (the
      // checkers compared each applied entry with what others applied).
      for (const n of [1, 2, 3]) expect(sim.machines.appliedIndex(n), `n${n} applied`).to.be.at.least(committed);
      for (let i = 1; i <= committed; i++) expect(sim.machines.digestAt(i), `index ${i}`).to.not.equal(undefined);
      expect(appliedAnywhere(sim, lost.cmd), 'the unsynced entry was never sent, so it cannot commit').to.equal(false);
    });

    it('of a follower that persisted new-term entries but not yet the hard state restarts', () => {
      // Contract order (types.ts): entries, then hard state, then fsync. A crash
      // in between leaves entries of term T+1 next to a hard state of term T —
      // a legal durable state the node must restart from.
      const sim = new RaftSim({ seed: 57, voters: 3, fsyncMinMs: 5, fsyncMaxMs: 10 });
      const l = awaitLeader(sim);
      commitOn(sim, l, [1, 2, 3]);
      const [f, c] = [1, 2, 3].filter((n) => n !== l) as [NodeId, NodeId];
      // f misses c's vote request, so the first it hears of term T+1 is c's append (with the NoOp).
      sim.cut(c, f);
      expect(sim.transferLeadership(l, c)).to.equal(true);
      sim.runUntil(() => sim.node(c).role === 'leader', 1000, 'c leads');
      sim.heal();
      sim.runUntil(() => sim.node(f).busy && sim.node(f).disk.pendingWrites === 2, 1000, 'f writes entries + hard state');
      const oldTerm = sim.node(f).disk.hardState.term;
      sim.crash(f, 1);
      const disk = sim.node(f).disk;
      expect(disk.termAt(disk.lastIndex())).to.be.greaterThan(oldTerm);
      expect(disk.hardState.term).to.equal(oldTerm);
      sim.restart(f);
      sim.healAndAwaitProgress();
    });

    it('of followers, torn or not, loses nothing committed', () => {
      const sim = new RaftSim({ seed: 56, voters: 3, fsyncMinMs: 5, fsyncMaxMs: 10, tornFlushRate: 1 });
      const l = awaitLeader(sim);
      for (let round = 0; round < 6; round++) {
        const f = [1, 2, 3].filter((n) => n !== l)[round % 2] as NodeId;
        sim.propose(l);
        sim.runUntil(() => sim.node(f).busy && sim.node(f).disk.pendingWrites > 0, 1000, `n${f} writing`);
        sim.crash(f);
        sim.runFor(20);
        sim.restart(f);
        commitOn(sim, l, [1, 2, 3]);
      }
      expect(sim.stats.tornFlushes).to.equal(6);
      sim.healAndAwaitProgress();
    });
  });
});
