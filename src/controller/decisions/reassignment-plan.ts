// Reassignment plan generator (pure): given the current replicas of some
// partitions and the brokers they should live on (typically the old brokers
// plus newly added ones), propose a balanced assignment that moves as little
// as possible. Replicas on allowed brokers stay; missing ones go to the
// least-loaded brokers; then single replicas move from the most to the least
// loaded broker until replica counts differ by at most one, and likewise for
// preferred leaders (by reordering, which copies nothing). Adding a broker so
// moves only its fair share onto it.
//
// The output feeds alterReassignments (start) — the plan itself changes
// nothing. Deterministic: ties go to the lower broker id.

import { assert } from '../../util/assert.js';

export interface PlanInput {
  readonly topic: string;
  readonly partition: number;
  readonly replicas: readonly number[];
}

export interface PlanEntry extends PlanInput {
  /** True when the proposed replicas differ from the current ones (order included). */
  readonly moved: boolean;
  readonly current: readonly number[];
}

export function generateReassignmentPlan(partitions: readonly PlanInput[], brokers: readonly number[]): PlanEntry[] {
  const allowed = [...new Set(brokers)].sort((a, b) => a - b);
  assert(allowed.length > 0, 'a plan needs at least one broker');
  const ordered = [...partitions].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  for (const p of ordered) {
    assert(p.replicas.length <= allowed.length, `${p.topic}-${p.partition} has ${p.replicas.length} replicas but only ${allowed.length} brokers are allowed`);
  }
  const load = new Map(allowed.map((b) => [b, 0]));
  const bump = (b: number, d: number) => load.set(b, load.get(b)! + d);
  // Keep replicas on allowed brokers; fill the rest from the least-loaded brokers.
  const plan = ordered.map((p) => {
    const replicas = p.replicas.filter((b) => load.has(b));
    for (const b of replicas) bump(b, 1);
    return replicas;
  });
  const byLoad = (a: number, b: number) => load.get(a)! - load.get(b)! || a - b;
  ordered.forEach((p, i) => {
    const replicas = plan[i]!;
    while (replicas.length < p.replicas.length) {
      const pick = allowed.filter((b) => !replicas.includes(b)).sort(byLoad)[0]!;
      replicas.push(pick);
      bump(pick, 1);
    }
  });
  // Move one replica at a time from the most to the least loaded broker until
  // loads differ by at most one: each move is one replica's worth of copying.
  rebalance(allowed, (b) => load.get(b)!, (hi, lo) => {
    const i = plan.findIndex((r) => r.includes(hi) && !r.includes(lo));
    if (i < 0) return false;
    const r = plan[i]!;
    r[r.indexOf(hi)] = lo;
    bump(hi, -1);
    bump(lo, 1);
    return true;
  }, totalOf(plan));
  // Then preferred leaders, by moving a replica that is already there to the front.
  const leaders = new Map(allowed.map((b) => [b, 0]));
  for (const r of plan) leaders.set(r[0]!, leaders.get(r[0]!)! + 1);
  rebalance(allowed, (b) => leaders.get(b)!, (hi, lo) => {
    const r = plan.find((x) => x[0] === hi && x.includes(lo));
    if (!r) return false;
    r.unshift(...r.splice(r.indexOf(lo), 1));
    leaders.set(hi, leaders.get(hi)! - 1);
    leaders.set(lo, leaders.get(lo)! + 1);
    return true;
  }, plan.length);
  const kept = plan;
  return ordered.map((p, i) => {
    const replicas = kept[i]!;
    const moved = replicas.length !== p.replicas.length || replicas.some((b, j) => b !== p.replicas[j]);
    return { topic: p.topic, partition: p.partition, replicas, current: p.replicas, moved };
  });
}

function totalOf(plan: readonly (readonly number[])[]): number {
  return plan.reduce((n, r) => n + r.length, 0);
}

/**
 * Greedy leveling: while the most and least loaded brokers differ by more
 * than one, ask `move(hi, lo)` to shift one unit; stop when it cannot. Each
 * successful move lowers the spread, so `movesMax` bounds the loop.
 */
function rebalance(brokers: readonly number[], loadOf: (b: number) => number, move: (hi: number, lo: number) => boolean, movesMax: number): void {
  for (let i = 0; i < movesMax; i++) {
    const sorted = [...brokers].sort((a, b) => loadOf(a) - loadOf(b) || a - b);
    const lo = sorted[0]!;
    // Try the most loaded brokers first; one of them may have no partition to give.
    const donors = [...sorted].reverse().filter((hi) => loadOf(hi) - loadOf(lo) > 1);
    if (donors.length === 0 || !donors.some((hi) => move(hi, lo))) return;
  }
}
