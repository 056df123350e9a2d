// Partition assignors: given the members of a consumer group (their
// subscriptions and, for sticky assignment, the partitions they own now) and
// the partition count of each topic, decide which member consumes which
// partition. The group leader (a consumer) runs the assignor the coordinator
// chose and sends the result in SyncGroup; the broker never runs one.
//
// Pure functions: no I/O, no clock, no randomness. Every result is a function
// of the inputs only (members are ordered by group instance id, then member
// id), so tests and replays see the same assignment every time.
//
// Invariants of every assignor's result (checked by test/groups/assignors.test.ts):
// - every member of the input has an entry (possibly empty: members beyond
//   the number of partitions stay idle);
// - a partition is assigned to at most one member, only to a member
//   subscribed to its topic, and only if the topic exists with that partition;
// - eager assignors (range, round-robin) assign every partition of every
//   subscribed topic;
// - cooperative-sticky leaves a partition unassigned for one round exactly
//   when another member still owns it and must revoke it first (KIP-429): the
//   revoking member rejoins at once and the follow-up rebalance hands it out.
//
// Kinds:
// - range: per topic, members subscribed to it take consecutive ranges, the
//   first (count mod members) taking one more (Kafka's RangeAssignor).
// - round-robin: all partitions in (topic, partition) order dealt to members
//   in turn, skipping members not subscribed to the topic.
// - cooperative-sticky: balanced (loads differ by at most one among members
//   with the same subscription), keeping as many owned partitions as possible
//   where they are, and never moving a partition directly between members.

import { assert } from '../util/assert.js';
import type { TopicPartitions } from './consumer-protocol.js';

export type RebalanceProtocol = 'eager' | 'cooperative';

export interface MemberSubscription {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly topics: readonly string[];
  /** What the member holds now (only sticky assignment looks at it). */
  readonly ownedPartitions: readonly TopicPartitions[];
  /** The generation ownedPartitions come from; a higher one wins a conflicting claim. */
  readonly generationId: number;
}

/** memberId → its partitions, by topic (topics sorted, partitions ascending). */
export type GroupAssignment = Map<string, TopicPartitions[]>;

export interface PartitionAssignor {
  /** The protocol name in JoinGroup (Kafka's names). */
  readonly name: string;
  /** eager: members give up everything before a rebalance; cooperative: only what moves. */
  readonly protocol: RebalanceProtocol;
  assign(members: readonly MemberSubscription[], partitionCounts: ReadonlyMap<string, number>): GroupAssignment;
}

export const rangeAssignor: PartitionAssignor = { name: 'range', protocol: 'eager', assign: assignRange };
export const roundRobinAssignor: PartitionAssignor = { name: 'roundrobin', protocol: 'eager', assign: assignRoundRobin };
export const cooperativeStickyAssignor: PartitionAssignor = { name: 'cooperative-sticky', protocol: 'cooperative', assign: assignCooperativeSticky };

/**
 * The server-side variants (server-assignment.ts): the coordinator assigns and
 * no member leads. Should a coordinator not know them and pick this member as
 * leader anyway, the member computes the same assignment.
 */
export const serverRangeAssignor: PartitionAssignor = { name: 'server-range', protocol: 'eager', assign: assignRange };
export const serverRoundRobinAssignor: PartitionAssignor = { name: 'server-roundrobin', protocol: 'eager', assign: assignRoundRobin };

export const ASSIGNORS: ReadonlyMap<string, PartitionAssignor> = new Map(
  [rangeAssignor, roundRobinAssignor, cooperativeStickyAssignor, serverRangeAssignor, serverRoundRobinAssignor].map((a) => [a.name, a]),
);

// ---------------------------------------------------------------- shared

type Key = string;

function keyOf(topic: string, partition: number): Key {
  return `${topic}\u0000${partition}`;
}

function topicOf(k: Key): string {
  return k.slice(0, k.indexOf('\u0000'));
}

function partitionOf(k: Key): number {
  return Number(k.slice(k.indexOf('\u0000') + 1));
}

/** Members in a stable order: static members by instance id (stable across restarts), then member ids. */
function ordered(members: readonly MemberSubscription[]): MemberSubscription[] {
  const rank = (m: MemberSubscription) => m.groupInstanceId ?? m.memberId;
  return [...members].sort((a, b) => cmp(rank(a), rank(b)) || cmp(a.memberId, b.memberId));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Subscribed topics that exist, sorted. */
function subscribedTopics(members: readonly MemberSubscription[], counts: ReadonlyMap<string, number>): string[] {
  const all = new Set(members.flatMap((m) => m.topics));
  return [...all].filter((t) => (counts.get(t) ?? 0) > 0).sort(cmp);
}

function allPartitions(topics: readonly string[], counts: ReadonlyMap<string, number>): Key[] {
  return topics.flatMap((t) => Array.from({ length: counts.get(t)! }, (_, p) => keyOf(t, p)));
}

/** Sets of keys → the result shape, with every member present. */
function toAssignment(members: readonly MemberSubscription[], sets: ReadonlyMap<string, ReadonlySet<Key>>): GroupAssignment {
  const out: GroupAssignment = new Map();
  for (const m of members) {
    const byTopic = new Map<string, number[]>();
    for (const k of sets.get(m.memberId) ?? []) {
      const t = topicOf(k);
      const list = byTopic.get(t) ?? [];
      list.push(partitionOf(k));
      byTopic.set(t, list);
    }
    out.set(m.memberId, [...byTopic.keys()].sort(cmp).map((topic) => ({ topic, partitions: byTopic.get(topic)!.sort((a, b) => a - b) })));
  }
  return out;
}

function emptySets(members: readonly MemberSubscription[]): Map<string, Set<Key>> {
  return new Map(members.map((m) => [m.memberId, new Set<Key>()]));
}

function checkMembers(members: readonly MemberSubscription[]): void {
  assert(new Set(members.map((m) => m.memberId)).size === members.length, 'assignor: duplicate member ids');
}

// ---------------------------------------------------------------- range

function assignRange(members: readonly MemberSubscription[], counts: ReadonlyMap<string, number>): GroupAssignment {
  checkMembers(members);
  const sets = emptySets(members);
  const order = ordered(members);
  for (const topic of subscribedTopics(members, counts)) {
    const subs = order.filter((m) => m.topics.includes(topic));
    const n = counts.get(topic)!;
    const per = Math.floor(n / subs.length);
    const extra = n % subs.length;
    let next = 0;
    subs.forEach((m, i) => {
      const take = per + (i < extra ? 1 : 0);
      for (let j = 0; j < take; j++) sets.get(m.memberId)!.add(keyOf(topic, next++));
    });
    assert(next === n, 'range: every partition assigned');
  }
  return toAssignment(members, sets);
}

// ---------------------------------------------------------------- round-robin

function assignRoundRobin(members: readonly MemberSubscription[], counts: ReadonlyMap<string, number>): GroupAssignment {
  checkMembers(members);
  const sets = emptySets(members);
  const order = ordered(members);
  let cursor = 0;
  for (const k of allPartitions(subscribedTopics(members, counts), counts)) {
    const topic = topicOf(k);
    // Some member subscribes to every topic listed, so this finds one within one lap.
    for (let step = 0; step < order.length; step++) {
      const m = order[(cursor + step) % order.length]!;
      if (!m.topics.includes(topic)) continue;
      sets.get(m.memberId)!.add(k);
      cursor = (cursor + step + 1) % order.length;
      break;
    }
  }
  return toAssignment(members, sets);
}

// ---------------------------------------------------------------- cooperative-sticky

function assignCooperativeSticky(members: readonly MemberSubscription[], counts: ReadonlyMap<string, number>): GroupAssignment {
  checkMembers(members);
  const { target, claimers } = stickyTarget(members, counts);
  // KIP-429: a partition another member still owns is not handed over in the
  // same round. Its owner, not finding it in its assignment, revokes it and
  // rejoins; the follow-up rebalance assigns it, unowned by then.
  for (const [memberId, set] of target) {
    for (const k of [...set]) {
      const c = claimers.get(k);
      if (c && (c.size > 1 || !c.has(memberId))) set.delete(k);
    }
  }
  return toAssignment(members, target);
}

/**
 * The balanced, sticky target assignment (before the cooperative rule), and
 * who validly claims each partition. A claim is valid when the partition
 * exists, the member still subscribes to its topic and no other member claims
 * it from a newer generation; two claims from the same newest generation
 * conflict (a zombie member), and neither keeps the partition.
 */
export function stickyTarget(members: readonly MemberSubscription[], counts: ReadonlyMap<string, number>): {
  target: Map<string, Set<Key>>;
  claimers: Map<Key, Set<string>>;
} {
  const order = ordered(members);
  const claimers = validClaims(order, counts);
  const target = emptySets(members);
  for (const [k, c] of claimers) if (c.size === 1) target.get([...c][0]!)!.add(k);
  const eligible = new Map(subscribedTopics(members, counts).map((t) => [t, order.filter((m) => m.topics.includes(t)).map((m) => m.memberId)]));
  const load = (id: string) => target.get(id)!.size;
  const leastLoaded = (topic: string, except?: string): string | undefined => {
    let best: string | undefined;
    for (const id of eligible.get(topic) ?? []) if (id !== except && (best === undefined || load(id) < load(best))) best = id;
    return best;
  };
  const placed = new Set([...target.values()].flatMap((s) => [...s]));
  for (const k of allPartitions([...eligible.keys()], counts)) {
    if (!placed.has(k)) target.get(leastLoaded(topicOf(k))!)!.add(k);
  }
  balance(order, target, claimers, leastLoaded, load);
  return { target, claimers };
}

function validClaims(order: readonly MemberSubscription[], counts: ReadonlyMap<string, number>): Map<Key, Set<string>> {
  const claimers = new Map<Key, Set<string>>();
  const generation = new Map<Key, number>();
  for (const m of order) {
    for (const tp of m.ownedPartitions) {
      if (!m.topics.includes(tp.topic)) continue;
      for (const p of tp.partitions) {
        if (p >= (counts.get(tp.topic) ?? 0)) continue;
        const k = keyOf(tp.topic, p);
        const g = generation.get(k);
        if (g === undefined || m.generationId > g) {
          claimers.set(k, new Set([m.memberId]));
          generation.set(k, m.generationId);
        } else if (m.generationId === g) {
          claimers.get(k)!.add(m.memberId);
        }
      }
    }
  }
  return claimers;
}

/**
 * Moves one partition at a time from a most-loaded member to a least-loaded
 * eligible one while that narrows the gap (load(to) + 1 < load(from)),
 * preferring partitions the giver did not own before (no revocation needed).
 * Each move lowers the sum of squared loads by at least 2, so the loop ends;
 * when it does, no partition can move to make two members' loads closer.
 */
function balance(
  order: readonly MemberSubscription[], target: Map<string, Set<Key>>, claimers: ReadonlyMap<Key, ReadonlySet<string>>,
  leastLoaded: (topic: string, except?: string) => string | undefined, load: (id: string) => number,
): void {
  const total = [...target.values()].reduce((n, s) => n + s.size, 0);
  let movesLeft = total * total + 1;
  for (;;) {
    const givers = [...order].sort((a, b) => load(b.memberId) - load(a.memberId));
    let moved = false;
    for (const from of givers) {
      const owned = (k: Key) => claimers.get(k)?.has(from.memberId) ?? false;
      const candidates = [...target.get(from.memberId)!].sort((a, b) => Number(owned(a)) - Number(owned(b)) || cmp(a, b));
      for (const k of candidates) {
        const to = leastLoaded(topicOf(k), from.memberId);
        if (to === undefined || load(to) + 1 >= load(from.memberId)) continue;
        target.get(from.memberId)!.delete(k);
        target.get(to)!.add(k);
        moved = true;
        break;
      }
      if (moved) break;
    }
    if (!moved) return;
    assert(--movesLeft > 0, 'sticky balance did not converge');
  }
}
