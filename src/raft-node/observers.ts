// Which nodes follow the metadata log as Raft observers, and how the voters
// reach them.
//
// Convention: a node that follows the metadata log registers (as a broker) an
// endpoint named METADATA_ENDPOINT ('CONTROLLER') whose url is its own Raft
// listener, ws://host:port. From the metadata image every node can then tell
// (a) the active controller which brokers to add as observers and (b) every
// voter where to send them the log (RaftTransport.addPeer).
//
// Pure functions over plain data: registrations are read structurally, so
// this module does not depend on src/metadata (which depends on raft-node).
//
// Invariants: the followers never include a voter or `self`; their urls are
// well-formed ws://host:port listeners (others are skipped: a voter could not
// dial them, so adding the broker as an observer would only cost the leader
// a useless progress entry).

import { isMember } from '../raft/membership.js';
import type { ConfChange, Membership, NodeId } from '../raft/types.js';
import { parseListenUrl } from './quorum-config.js';

/** Name of the endpoint a metadata follower registers: its Raft listener. */
export const METADATA_ENDPOINT = 'CONTROLLER';

/** The parts of a broker registration this module reads. */
export interface FollowerRegistration {
  readonly brokerId: NodeId;
  readonly endpoints: readonly { readonly name: string; readonly url: string }[];
}

/** The METADATA_ENDPOINT url of a registration, normalized; undefined when absent or malformed. */
export function metadataEndpointUrl(reg: FollowerRegistration): string | undefined {
  const ep = reg.endpoints.find((e) => e.name === METADATA_ENDPOINT);
  if (!ep) return undefined;
  try {
    return parseListenUrl(ep.url).url;
  } catch {
    return undefined;
  }
}

/**
 * Registered brokers that should follow the metadata log as observers, by id,
 * with their Raft listener url: those with a usable METADATA_ENDPOINT that are
 * neither a voter nor `self`.
 */
export function metadataFollowers(brokers: Iterable<FollowerRegistration>, voters: readonly NodeId[], self?: NodeId): Map<NodeId, string> {
  const out = new Map<NodeId, string>();
  for (const reg of brokers) {
    if (reg.brokerId === self || voters.includes(reg.brokerId)) continue;
    const url = metadataEndpointUrl(reg);
    if (url !== undefined) out.set(reg.brokerId, url);
  }
  return out;
}

/**
 * The next one-server change that moves `membership`'s observers towards
 * `followers` (additions first, lowest id first, then removals), or undefined
 * when they agree. Never touches voters: a follower that is already a voter
 * is left alone, and only observers are ever removed.
 */
export function nextObserverChange(membership: Membership, followers: ReadonlySet<NodeId> | ReadonlyMap<NodeId, unknown>): ConfChange | undefined {
  const wanted = [...followers.keys()].sort((a, b) => a - b);
  const add = wanted.find((id) => !isMember(membership, id));
  if (add !== undefined) return { type: 'addObserver', node: add };
  const remove = membership.observers.find((id) => !followers.has(id));
  if (remove !== undefined) return { type: 'removeObserver', node: remove };
  return undefined;
}
