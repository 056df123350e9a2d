import { expect } from 'chai';
import { generateReassignmentPlan, type PlanInput } from '../../src/controller/decisions/reassignment-plan.js';
import { placeReplicas } from '../../src/controller/decisions/placement.js';
import { SeededRng } from '../../src/util/rng.js';

function current(brokers: number[], partitions: number, rf: number): PlanInput[] {
  return placeReplicas(brokers.map((id) => ({ id, rack: null })), partitions, rf, new SeededRng(3))
    .map((replicas, partition) => ({ topic: 't', partition, replicas }));
}

function counts(plan: Array<{ replicas: readonly number[] }>) {
  const load = new Map<number, number>();
  const leaders = new Map<number, number>();
  for (const p of plan) {
    leaders.set(p.replicas[0]!, (leaders.get(p.replicas[0]!) ?? 0) + 1);
    for (const b of p.replicas) load.set(b, (load.get(b) ?? 0) + 1);
  }
  return { load, leaders };
}

describe('reassignment plan generator', () => {
  it('spreads replicas and leaders evenly onto a newly added broker, moving only its share', () => {
    const before = current([1, 2, 3], 12, 3); // 36 replicas on 3 brokers
    const plan = generateReassignmentPlan(before, [1, 2, 3, 4]);
    const { load, leaders } = counts(plan);
    expect([...load.keys()].sort()).to.deep.equal([1, 2, 3, 4]);
    for (const n of load.values()) expect(n).to.equal(9);
    for (const n of leaders.values()) expect(n).to.equal(3);
    for (const p of plan) expect(new Set(p.replicas).size).to.equal(3);
    // Minimal movement: 9 replicas land on broker 4, so at most 9 replica slots change hands.
    const movedReplicas = plan.reduce((n, p) => n + p.replicas.filter((b) => !p.current.includes(b)).length, 0);
    expect(movedReplicas).to.equal(9);
  });

  it('moves everything off a broker that is not in the list', () => {
    const before = current([1, 2, 3, 4], 8, 2);
    const plan = generateReassignmentPlan(before, [1, 2, 3]);
    for (const p of plan) expect(p.replicas).to.not.include(4);
    const { load } = counts(plan);
    for (const n of load.values()) expect(n).to.be.at.most(6);
  });

  it('leaves a balanced assignment alone and is deterministic', () => {
    const before = current([1, 2, 3], 6, 3);
    const plan = generateReassignmentPlan(before, [3, 2, 1]);
    expect(plan.filter((p) => p.moved).map((p) => p.partition)).to.deep.equal([]);
    expect(generateReassignmentPlan(before, [1, 2, 3, 4])).to.deep.equal(generateReassignmentPlan(before, [4, 3, 2, 1]));
  });

  it('refuses a replication factor larger than the broker list', () => {
    expect(() => generateReassignmentPlan(current([1, 2, 3], 1, 3), [1, 2])).to.throw(/only 2 brokers/);
  });
});
