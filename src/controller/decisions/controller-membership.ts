// Rules for changing the controller quorum's voters at an operator's request
// (KIP-853's AddRaftVoter / RemoveRaftVoter; `sluice cluster add-controller`
// and `remove-controller`). Pure: the shell (service/controller-membership.ts)
// asks these, then does the Raft changes one at a time.
//
// Adding node N at url U:
//   1. refused unless N is no voter, no registered broker (a broker process
//      runs no controller: make a controller process with its own id), U is a
//      ws(s)://host:port listener, and no other membership change is running;
//   2. a ControllerEndpointRecord {N, U} is committed: every voter dials N
//      there, and the active controller's observer membership adds N as a
//      Raft observer (observer-membership.ts), so it receives the log;
//   3. once the leader knows N holds everything committed (its match index ≥
//      the commit index when it was observed), N is promoted to voter
//      (promoteObserver: one voter at a time, Raft's single-server rule).
// Removing voter N: refused unless N is a voter and not the last one; then
// removeVoter, and its endpoint record (if any) is dropped. Removing the
// leader itself is allowed: Raft's leader steps down once the change commits.

import type { MetadataImage } from '../../metadata/image.js';
import type { Membership, NodeId } from '../../raft/types.js';
import { parseListenUrl } from '../../raft-node/quorum-config.js';
import { Errors, SluiceError } from '../../util/errors.js';

/** Why an add-controller request is refused, or the normalized url when it may go ahead. */
export function checkAddController(membership: Membership, image: MetadataImage, nodeId: NodeId, url: string): { error: SluiceError } | { url: string } {
  if (!Number.isSafeInteger(nodeId) || nodeId <= 0) return refuse(Errors.INVALID_REQUEST, `node id ${nodeId} is not a positive integer`);
  if (membership.voters.includes(nodeId)) return refuse(Errors.INVALID_REQUEST, `node ${nodeId} is already a controller (voter)`);
  if (image.brokers.has(nodeId)) {
    return refuse(Errors.INVALID_REQUEST, `node ${nodeId} is a registered broker; a controller needs a node id of its own`);
  }
  let normalized: string;
  try {
    normalized = parseListenUrl(url).url;
  } catch (err) {
    return refuse(Errors.INVALID_REQUEST, `controller listener ${JSON.stringify(url)} is not usable: ${(err as Error).message}`);
  }
  for (const [id, other] of image.controllerEndpoints) {
    if (id !== nodeId && other === normalized) return refuse(Errors.INVALID_REQUEST, `listener ${normalized} is already node ${id}'s`);
  }
  return { url: normalized };
}

/** Why a remove-controller request is refused, or undefined. */
export function checkRemoveController(membership: Membership, nodeId: NodeId): SluiceError | undefined {
  if (!membership.voters.includes(nodeId)) return new SluiceError(Errors.INVALID_REQUEST, `node ${nodeId} is not a controller (voters: ${membership.voters.join(',')})`);
  if (membership.voters.length === 1) return new SluiceError(Errors.INVALID_REQUEST, `node ${nodeId} is the last controller`);
  return undefined;
}

/** True when the leader's view of `nodeId` (its match index) covers `commit`. */
export function caughtUp(progress: ReadonlyMap<NodeId, { readonly match: number }> | undefined, nodeId: NodeId, commit: number): boolean {
  const p = progress?.get(nodeId);
  return p !== undefined && p.match >= commit;
}

function refuse(code: (typeof Errors)[keyof typeof Errors], message: string): { error: SluiceError } {
  return { error: new SluiceError(code, message) };
}
