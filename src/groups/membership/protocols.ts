// Protocol rules of a group (Kafka's classic group protocol): a member may
// join only if it shares the group's protocol type and supports at least one
// protocol every other member supports; the protocol of a generation is the
// one most members prefer among those all members support.
//
// Invariant kept by the callers: while a group has members, the protocols all
// of them support form a non-empty set (each join is checked against it, and
// removing members only grows it).

import { assert } from '../../util/assert.js';
import type { Protocol } from './types.js';

/** Names every one of `members` supports, in the first member's order of preference. */
export function commonProtocols(members: ReadonlyArray<{ readonly protocols: readonly Protocol[] }>): string[] {
  const first = members[0];
  if (!first) return [];
  return first.protocols.map((p) => p.name).filter((name) => members.every((m) => m.protocols.some((q) => q.name === name)));
}

/**
 * The protocol of the next generation: each member votes for the first of its
 * protocols that every member supports; most votes wins, ties go to the
 * earlier candidate (in the first member's preference order).
 */
export function selectProtocol(members: ReadonlyArray<{ readonly protocols: readonly Protocol[] }>): string {
  const candidates = commonProtocols(members);
  assert(candidates.length > 0, 'the members of a group share no protocol');
  const votes = new Map<string, number>(candidates.map((c) => [c, 0]));
  for (const m of members) {
    const vote = m.protocols.find((p) => votes.has(p.name))!;
    votes.set(vote.name, votes.get(vote.name)! + 1);
  }
  let best = candidates[0]!;
  for (const c of candidates) if (votes.get(c)! > votes.get(best)!) best = c;
  return best;
}

/** Same protocols, in the same order, with byte-equal metadata. */
export function sameProtocols(a: readonly Protocol[], b: readonly Protocol[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((p, i) => p.name === b[i]!.name && bytesEqual(p.metadata, b[i]!.metadata));
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
