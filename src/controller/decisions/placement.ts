// Replica placement for new partitions. Spreads replicas and preferred
// leaders (the first replica) evenly: round-robin over brokers from a random
// start, with the follower offset shifted per round like Kafka's
// AdminUtils.assignReplicasToBrokers, so leaders and followers of a topic
// land on different brokers. When brokers carry racks, the broker list is
// first interleaved by rack so consecutive brokers sit on different racks,
// and each partition's replicas then span as many racks as possible.
//
// Pure: randomness comes from the injected Rng; output depends only on input.

import type { Rng } from '../../util/rng.js';
import { assert } from '../../util/assert.js';

export interface PlacementBroker {
  readonly id: number;
  readonly rack: string | null;
}

/**
 * Assigns `replicationFactor` distinct brokers to each of `partitions`
 * partitions, numbered from `firstPartition` (for add-partitions requests).
 */
export function placeReplicas(
  brokers: readonly PlacementBroker[],
  partitions: number,
  replicationFactor: number,
  rng: Rng,
  firstPartition = 0,
): number[][] {
  assert(replicationFactor >= 1 && replicationFactor <= brokers.length, `cannot place RF ${replicationFactor} on ${brokers.length} brokers`);
  const racked = brokers.some((b) => b.rack !== null);
  const ordered = racked ? interleaveByRack(brokers) : [...brokers].sort((a, b) => a.id - b.id);
  const n = ordered.length;
  const start = rng.int(n);
  let shift = rng.int(n);
  const result: number[][] = [];
  for (let p = firstPartition; p < firstPartition + partitions; p++) {
    if (p > 0 && p % n === 0) shift++;
    const first = (start + p) % n;
    const replicas = [ordered[first]!.id];
    for (let j = 0; j < replicationFactor - 1; j++) {
      replicas.push(ordered[(first + 1 + ((shift + j) % (n - 1))) % n]!.id);
    }
    result.push(racked ? spreadRacks(replicas, ordered) : replicas);
  }
  for (const r of result) assert(new Set(r).size === r.length, `placement produced duplicate replicas ${r}`);
  return result;
}

/** Orders brokers rack by rack in turn: r1b1, r2b1, r3b1, r1b2, ... */
function interleaveByRack(brokers: readonly PlacementBroker[]): PlacementBroker[] {
  const byRack = new Map<string, PlacementBroker[]>();
  for (const b of [...brokers].sort((x, y) => x.id - y.id)) {
    const rack = b.rack ?? '';
    const list = byRack.get(rack) ?? [];
    list.push(b);
    byRack.set(rack, list);
  }
  const racks = [...byRack.keys()].sort();
  const out: PlacementBroker[] = [];
  for (let i = 0; out.length < brokers.length; i++) {
    for (const rack of racks) {
      const b = byRack.get(rack)![i];
      if (b) out.push(b);
    }
  }
  return out;
}

/**
 * Keeps the preferred leader and reorders/replaces followers so that no rack
 * repeats while an unused rack remains; replacement brokers come from the
 * interleaved order, so balance is roughly preserved.
 */
function spreadRacks(replicas: number[], ordered: readonly PlacementBroker[]): number[] {
  const rackOf = new Map(ordered.map((b) => [b.id, b.rack ?? '']));
  const allRacks = new Set(rackOf.values());
  const out = [replicas[0]!];
  const usedRacks = new Set([rackOf.get(replicas[0]!)!]);
  const pending = replicas.slice(1);
  while (out.length < replicas.length) {
    const needNewRack = usedRacks.size < allRacks.size;
    let pickIdx = pending.findIndex((id) => !needNewRack || !usedRacks.has(rackOf.get(id)!));
    let pick: number;
    if (pickIdx >= 0) {
      pick = pending.splice(pickIdx, 1)[0]!;
    } else {
      const alt = ordered.find((b) => !out.includes(b.id) && !pending.includes(b.id) && !usedRacks.has(b.rack ?? ''));
      if (alt) {
        pending.pop();
        pick = alt.id;
      } else {
        pickIdx = 0;
        pick = pending.splice(pickIdx, 1)[0]!;
      }
    }
    out.push(pick);
    usedRacks.add(rackOf.get(pick)!);
  }
  return out;
}
