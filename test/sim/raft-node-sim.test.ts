// The Raft simulation of the real shell (test/sim/raft-node-sim.ts), part of
// `make test`: seeded runs of real RaftNodes and RaftTransports on the
// in-memory network and simulated disks, with crashes (some keeping torn
// unsynced tails), partitions, one-way blocks and connection breaks; every
// invariant after every event, progress once healed. A failure names its
// seed; SLUICE_SIM_SEED=<n> runs just that one. The two Raft mutants
// (src/util/mutants.ts) are run on it by test/sim/mutants.test.ts.
import { expect } from 'chai';
import { figure8, runRaftNodeSeed, type RaftNodeSimReport } from './raft-node-sim.js';

const one = process.env.SLUICE_SIM_SEED;
const SEEDS = one !== undefined ? [Number(one)] : Array.from({ length: 12 }, (_, i) => i + 1);

describe('raft simulation of the real shell (RaftNode + RaftTransport on the simulated network and disk)', function () {
  this.timeout(300_000);
  const reports: RaftNodeSimReport[] = [];

  it(`seeds ${SEEDS[0]}–${SEEDS[SEEDS.length - 1]} keep every invariant and make progress once healed`, async () => {
    for (const seed of SEEDS) reports.push(await runRaftNodeSeed(seed));
    const sum = (f: (r: RaftNodeSimReport) => number): number => reports.reduce((s, r) => s + f(r), 0);
    expect(sum((r) => r.crashes), 'crashes').to.be.greaterThan(0);
    expect(sum((r) => r.proposalsAcked), 'acknowledged proposals').to.be.greaterThan(SEEDS.length * 10);
    expect(sum((r) => r.clientAcks), 'proposals acknowledged through the quorum client').to.be.greaterThan(SEEDS.length * 5);
    expect(sum((r) => r.readsOk), 'linearizable reads answered').to.be.greaterThan(SEEDS.length);
    expect(sum((r) => r.transfers), 'leadership transfers').to.be.greaterThan(0);
    if (one === undefined) expect(sum((r) => r.observerApplied), 'entries applied by observers').to.be.greaterThan(0);
  });

  it('replays a seed bit for bit (same trace digest)', async () => {
    const a = await runRaftNodeSeed(5, { faultMs: 1_500 });
    const b = await runRaftNodeSeed(5, { faultMs: 1_500 });
    expect(a.digest).to.equal(b.digest);
    expect(a.events).to.equal(b.events);
    const c = await runRaftNodeSeed(6, { faultMs: 1_500 });
    expect(c.digest).to.not.equal(a.digest);
  });

  it('Figure 8 scripted on real nodes: an earlier term entry on a majority is not committed', async () => {
    for (const seed of [1, 2, 3]) await figure8(seed);
  });
});
