// Partition reassignment steps (pure), as in Kafka's KIP-455: to move a
// partition from replicas R to target T, the controller first sets
// replicas = T ∪ R (target order first), adding = T − R, removing = R − T,
// where R is the current replica set (a running move's new replicas included).
// The new replicas catch up and join the ISR through AlterPartition; when
// every adding replica is in the ISR, buildPartitionChange completes the move
// (replicas = T, removed brokers leave the ISR, leadership moves if the
// leader is leaving). Cancel restores R and drops the adding replicas.

import type { PartitionRegistration } from '../../metadata/image.js';
import type { BrokerId } from '../../metadata/records.js';
import { Errors, type ErrorInfo } from '../../util/errors.js';
import type { ElectionContext } from './election.js';
import { buildPartitionChange, type ChangeResult } from './partition-change.js';

export type ReassignDecision = { readonly error: ErrorInfo; readonly message: string } | { readonly error: null; readonly change: ChangeResult };

export function isReassigning(reg: PartitionRegistration): boolean {
  return reg.addingReplicas.length > 0 || reg.removingReplicas.length > 0;
}

/** The replica set before the reassignment started. */
export function originalReplicas(reg: PartitionRegistration): BrokerId[] {
  return reg.replicas.filter((b) => !reg.addingReplicas.includes(b));
}

/** The replica set the reassignment moves to. */
export function targetReplicas(reg: PartitionRegistration): BrokerId[] {
  return reg.replicas.filter((b) => !reg.removingReplicas.includes(b));
}

export function startReassignment(
  topicId: string,
  partition: number,
  reg: PartitionRegistration,
  target: readonly BrokerId[],
  isRegistered: (b: BrokerId) => boolean,
  ctx: ElectionContext,
): ReassignDecision {
  if (target.length === 0 || new Set(target).size !== target.length) {
    return { error: Errors.INVALID_REPLICA_ASSIGNMENT, message: `target replicas ${target} must be non-empty and distinct` };
  }
  const unknown = target.filter((b) => !isRegistered(b));
  if (unknown.length > 0) return { error: Errors.INVALID_REPLICA_ASSIGNMENT, message: `brokers ${unknown} are not registered` };
  // A new target replaces a running reassignment. Like Kafka, start from the
  // current replicas (adding ones included): a replica that already joined the
  // ISR stays until the new move completes, so no in-sync copy is dropped.
  const current = [...reg.replicas];
  const adding = target.filter((b) => !current.includes(b));
  const removing = current.filter((b) => !target.includes(b));
  const replicas = [...target, ...removing];
  const change = buildPartitionChange(topicId, partition, reg, { replicas, addingReplicas: adding, removingReplicas: removing }, ctx);
  if (change.refused) return { error: Errors.INVALID_REPLICA_ASSIGNMENT, message: `${topicId}/${partition}: ${change.refused}` };
  return { error: null, change };
}

export function cancelReassignment(
  topicId: string,
  partition: number,
  reg: PartitionRegistration,
  ctx: ElectionContext,
): ReassignDecision {
  if (!isReassigning(reg)) return { error: Errors.NO_REASSIGNMENT_IN_PROGRESS, message: `${topicId}/${partition} is not being reassigned` };
  const replicas = originalReplicas(reg);
  const isr = reg.isr.filter((b) => replicas.includes(b));
  // Reverting would drop every in-sync copy: refuse, as Kafka does, unless an
  // unclean election is allowed to pick from the original replicas.
  if (isr.length === 0 && !ctx.uncleanLeaderElectionEnabled) {
    return { error: Errors.INVALID_REPLICA_ASSIGNMENT, message: `${topicId}/${partition}: cancelling would leave no in-sync replica; wait for the move to finish` };
  }
  const change = buildPartitionChange(topicId, partition, reg, { replicas, isr, addingReplicas: [], removingReplicas: [] }, ctx);
  if (change.refused) return { error: Errors.INVALID_REPLICA_ASSIGNMENT, message: `${topicId}/${partition}: ${change.refused}` };
  return { error: null, change };
}
