// The Raft simulation of the real shell (test/sim/raft-node-sim.ts), part of
// `make test`: seeded runs of real RaftNodes on the in-memory network with
// crashes, partitions, one-way blocks and connection breaks; every invariant
// after every event, progress once healed. A failure names its seed;
// SLUICE_SIM_SEED=<n> runs just that one.
import { expect } from 'chai';
import { runRaftNodeSeed, type RaftNodeSimReport } from './raft-node-sim.js';

const one = process.env.SLUICE_SIM_SEED;
const SEEDS = one !== undefined ? [Number(one)] : Array.from({ length: 12 }, (_, i) => i + 1);

describe('raft simulation of the real shell (RaftNode + RaftTransport on the simulated network)', function () {
  this.timeout(300_000);
  const reports: RaftNodeSimReport[] = [];

  it(`seeds ${SEEDS[0]}–${SEEDS[SEEDS.length - 1]} keep every invariant and make progress once healed`, async () => {
    for (const seed of SEEDS) reports.push(await runRaftNodeSeed(seed));
    const sum = (f: (r: RaftNodeSimReport) => number): number => reports.reduce((s, r) => s + f(r), 0);
    expect(sum((r) => r.crashes), 'crashes').to.be.greaterThan(0);
    expect(sum((r) => r.proposalsAcked), 'acknowledged proposals').to.be.greaterThan(SEEDS.length * 10);
  });

  it('replays a seed bit for bit (same trace digest)', async () => {
    const a = await runRaftNodeSeed(5, { faultMs: 1_500 });
    const b = await runRaftNodeSeed(5, { faultMs: 1_500 });
    expect(a.digest).to.equal(b.digest);
    expect(a.events).to.equal(b.events);
    const c = await runRaftNodeSeed(6, { faultMs: 1_500 });
    expect(c.digest).to.not.equal(a.digest);
  });
});
