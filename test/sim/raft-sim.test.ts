// Randomized deterministic simulation of the Raft quorum, part of `make test`:
// 300 seeds mixing 3 and 5 voters, observers, membership changes, network
// faults, crashes (some between write and fsync, some torn), snapshots,
// leadership transfers and reads. Every invariant is checked after every
// event; each run ends with a heal phase that must make progress. A failure
// names its seed; `make sim SEED=<n>` replays it with the full trace.
import { expect } from 'chai';
import { runSeed, type RunReport } from './random-run.js';

const SEEDS = 300;
const BATCH = 25;

describe('raft simulation: random seeds', function () {
  this.timeout(300_000);
  const reports: RunReport[] = [];

  for (let first = 1; first <= SEEDS; first += BATCH) {
    const last = Math.min(first + BATCH - 1, SEEDS);
    it(`seeds ${first}–${last} keep every invariant and make progress once healed`, () => {
      for (let seed = first; seed <= last; seed++) reports.push(runSeed(seed));
    });
  }

  it('the seeds exercised every fault and feature they are meant to', function () {
    if (reports.length < SEEDS) this.skip();
    const sum = (f: (r: RunReport) => number): number => reports.reduce((s, r) => s + f(r), 0);
    const count = (p: (r: RunReport) => boolean): number => reports.filter(p).length;
    expect(count((r) => r.profile.voters === 3), '3-voter runs').to.be.greaterThan(50);
    expect(count((r) => r.profile.voters === 5), '5-voter runs').to.be.greaterThan(50);
    expect(count((r) => r.profile.observers > 0), 'runs with observers').to.be.greaterThan(50);
    expect(sum((r) => r.stats.crashes), 'crashes').to.be.greaterThan(1000);
    expect(sum((r) => r.stats.tornFlushes), 'torn flushes').to.be.greaterThan(100);
    expect(sum((r) => r.stats.snapshotsInstalled), 'snapshots installed').to.be.greaterThan(100);
    expect(sum((r) => r.stats.snapshotChunks), 'snapshot chunks').to.be.greaterThan(3 * sum((r) => r.stats.snapshotsInstalled));
    expect(sum((r) => r.stats.confChanges), 'membership changes').to.be.greaterThan(200);
    expect(sum((r) => r.stats.transfers), 'leadership transfers').to.be.greaterThan(100);
    expect(sum((r) => r.readsCompleted), 'linearizable reads served').to.be.greaterThan(300);
    expect(sum((r) => r.leaderTerms), 'elections won').to.be.greaterThan(3 * SEEDS);
    expect(sum((r) => r.maxCommitted), 'entries committed').to.be.greaterThan(100 * SEEDS);
  });

  it('a run is a pure function of its seed', () => {
    const a = runSeed(4242);
    const b = runSeed(4242);
    expect(b).to.deep.equal(a);
    expect(runSeed(4243).events).to.not.equal(a.events);
  });
});
