// Server-side assignment, in the spirit of KIP-848: when a group's protocol is
// one of the `server-*` assignors, the coordinator computes the assignment
// itself the moment a generation starts, so no member leads. A member that
// freezes or vanishes mid-rebalance (a browser tab) then holds nobody up:
// every other member's SyncGroup is answered as soon as the assignment is
// written, whether or not the vanished one ever syncs.
//
// Pure: the topics' partition counts are passed in (the coordinator reads
// them from its metadata image). The assignors are the client's own
// (assignors.ts), eager ones only: 'server-range' and 'server-roundrobin'.
// A member's unreadable subscription counts as subscribing to nothing.
//
// Clients opt in by listing the protocol (Sluice's consumer:
// `partitionAssigners: ['server-range']`). A coordinator that did not know
// these names would pick a leader as usual, and the client's assignor of the
// same name computes the same assignment itself.

import { ASSIGNORS, type MemberSubscription, type PartitionAssignor } from './assignors.js';
import { decodeSubscription, encodeAssignment } from './consumer-protocol.js';

export const SERVER_ASSIGNOR_PREFIX = 'server-';

/** The assignor a server-side protocol name stands for, or null when the name is not server-side. */
export function serverAssignor(protocol: string): PartitionAssignor | null {
  if (!protocol.startsWith(SERVER_ASSIGNOR_PREFIX)) return null;
  const a = ASSIGNORS.get(protocol.slice(SERVER_ASSIGNOR_PREFIX.length));
  return a !== undefined && a.protocol === 'eager' ? a : null;
}

export interface ServerAssignInput {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  /** The member's metadata for the chosen protocol (a ConsumerProtocol subscription). */
  readonly metadata: Uint8Array;
}

/** memberId → its assignment bytes, or null when `protocol` is not server-side. */
export function computeServerAssignment(
  protocol: string, generationId: number, members: readonly ServerAssignInput[], partitionCount: (topic: string) => number | undefined,
): Map<string, Uint8Array> | null {
  const assignor = serverAssignor(protocol);
  if (assignor === null) return null;
  const subs: MemberSubscription[] = members.map((m) => {
    let topics: readonly string[] = [];
    try {
      topics = decodeSubscription(m.metadata).topics;
    } catch {
      // refused nothing: a member whose subscription does not decode gets no partitions
    }
    return { memberId: m.memberId, groupInstanceId: m.groupInstanceId, topics, ownedPartitions: [], generationId };
  });
  const counts = new Map<string, number>();
  for (const s of subs) {
    for (const t of s.topics) {
      const n = partitionCount(t);
      if (n !== undefined && n > 0) counts.set(t, n);
    }
  }
  const assignment = assignor.assign(subs, counts);
  return new Map(members.map((m) => [m.memberId, encodeAssignment({ partitions: assignment.get(m.memberId) ?? [], userData: null })]));
}
