// The fault mix is a pure function of the seed, and over many seeds it
// draws every kind of fault and operation the issue lists.
import { expect } from 'chai';
import { SeededRng } from '../../../src/util/rng.js';
import { formatPlan, planFaults, type ClusterShape, type FaultKind } from './faults.js';

const SHAPE: ClusterShape = {
  nodeIds: [1, 2, 3, 4], brokerIds: [1, 2, 3, 4], controllerIds: [1, 2, 3], clientHosts: ['p0', 'c0'],
  sessionTimeoutMs: 3_000, replicaLagTimeMaxMs: 3_000, membershipChanges: true,
};

describe('cluster simulation: fault plans', () => {
  it('are the same for the same seed and differ between seeds', () => {
    const a = formatPlan(planFaults(new SeededRng(7), SHAPE, 30_000));
    expect(formatPlan(planFaults(new SeededRng(7), SHAPE, 30_000))).to.equal(a);
    expect(formatPlan(planFaults(new SeededRng(8), SHAPE, 30_000))).to.not.equal(a);
  });

  it('draw every fault and operation kind over a few seeds, within the duration', () => {
    const faults = new Set<FaultKind>();
    const ops = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) {
      const plan = planFaults(new SeededRng(seed), SHAPE, 20_000);
      expect(plan.length).to.be.greaterThan(0);
      for (const s of plan) {
        expect(s.atMs).to.be.lessThan(20_000);
        faults.add(s.fault);
        if (s.op) ops.add(s.op.kind);
        if (s.fault === 'pause' || s.fault === 'followers-cut') expect(s.holdMs, 'a pause outlasts the session and lag timeouts').to.be.greaterThan(3_000);
        if (s.fault === 'partition-minority') expect(s.nodes.length).to.be.lessThan(SHAPE.nodeIds.length / 2);
      }
    }
    expect([...faults].sort()).to.deep.equal([
      'break-connections', 'clock-jump', 'crash', 'delay', 'election-crash', 'followers-cut', 'partition-bridge', 'partition-isolate', 'partition-minority', 'partition-one-way',
      'pause', 'shutdown', 'slow-disk', 'torn-crash',
    ]);
    expect([...ops].sort()).to.deep.equal(['add-partitions', 'controller-remove-add', 'controller-transfer', 'leader-transfer', 'reassign']);
  });

  it('leave controller membership changes out when the cluster cannot make them', () => {
    for (let seed = 1; seed <= 40; seed++) {
      for (const s of planFaults(new SeededRng(seed), { ...SHAPE, membershipChanges: false }, 20_000)) expect(s.op?.kind).to.not.equal('controller-remove-add');
    }
  });
});
