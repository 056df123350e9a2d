// Builds PartitionChange records (pure), like Kafka's PartitionChangeBuilder:
// given a partition's registration and a wanted ISR (and optionally new
// replicas), it re-elects a leader when needed, completes a reassignment once
// every adding replica is in the ISR, and emits a record only when something
// actually changes. Every caller — fencing, unfencing, controlled shutdown,
// AlterPartition, reassignment, preferred election — goes through build().
//
// Invariants of the output: the ISR is never empty and only ever holds
// brokers that were in sync (or the one an enabled unclean election picked);
// the leader is NO_LEADER or a member of the ISR; adding/removing replicas are
// subsets of replicas. A change that cannot keep them is refused.

import { NO_LEADER, type BrokerId, type PartitionChangeRecord } from '../../metadata/records.js';
import type { PartitionRegistration } from '../../metadata/image.js';
import { electLeader, type ElectionContext, type ElectionKind } from './election.js';

export interface ChangeRequest {
  /** Wanted ISR; defaults to the current one. Members that leave are dropped first. */
  readonly isr?: readonly BrokerId[];
  /** Force a preferred-leader election (replicas[0]) when it is eligible. */
  readonly preferredLeader?: boolean;
  /** Brokers that must not lead (controlled shutdown, fencing). */
  readonly excludeLeaders?: ReadonlySet<BrokerId>;
  /** Replace the replica set (reassignment start/cancel). */
  readonly replicas?: readonly BrokerId[];
  readonly addingReplicas?: readonly BrokerId[];
  readonly removingReplicas?: readonly BrokerId[];
}

export interface ChangeResult {
  readonly record: PartitionChangeRecord | null;
  readonly election: ElectionKind | 'unchanged';
  /** The registration after the change, as replay will compute it. */
  readonly after: PartitionRegistration;
  /** Set when the change was refused (then record is null and after is unchanged). */
  readonly refused?: string;
}

export function buildPartitionChange(
  topicId: string,
  partition: number,
  reg: PartitionRegistration,
  req: ChangeRequest,
  ctx: ElectionContext,
): ChangeResult {
  let replicas = req.replicas ?? reg.replicas;
  let adding = req.addingReplicas ?? reg.addingReplicas;
  let removing = req.removingReplicas ?? reg.removingReplicas;
  let isr = (req.isr ?? reg.isr).filter((b) => replicas.includes(b));
  // Never let the ISR become empty by a shrink: keep the last in-sync member
  // (it may lead again). Never put a replica that was not in sync into it.
  if (isr.length === 0) isr = reg.isr.filter((b) => replicas.includes(b)).slice(0, 1);

  // A reassignment completes (KIP-455) once every adding replica is in the
  // ISR and at least one in-sync replica stays: the target set becomes the
  // replica set and the removed replicas leave the ISR. A move that only
  // removes replicas completes at once on that rule.
  if ((adding.length > 0 || removing.length > 0) && adding.every((b) => isr.includes(b))) {
    const target = replicas.filter((b) => !removing.includes(b));
    const targetIsr = isr.filter((b) => target.includes(b));
    if (targetIsr.length > 0) {
      replicas = target;
      isr = targetIsr;
      adding = [];
      removing = [];
    }
  }

  const exclude = req.excludeLeaders;
  const electCtx: ElectionContext = exclude?.size
    ? { ...ctx, isAcceptableLeader: (b) => !exclude.has(b) && ctx.isAcceptableLeader(b) }
    : ctx;
  const leaderStillValid = reg.leader !== NO_LEADER && isr.includes(reg.leader) && electCtx.isAcceptableLeader(reg.leader);
  let leader = reg.leader;
  let election: ElectionKind | 'unchanged' = 'unchanged';
  if (!leaderStillValid || req.preferredLeader) {
    const result = electLeader(replicas, isr, leaderStillValid ? reg.leader : NO_LEADER, electCtx, req.preferredLeader);
    leader = result.leader;
    isr = [...result.isr];
    election = result.kind;
  }
  // Only an unclean election (enabled per topic) may fill an empty ISR; a
  // change that would leave the partition with no in-sync replica is refused.
  if (isr.length === 0) return { record: null, election: 'unchanged', after: reg, refused: 'no in-sync replica would remain' };

  const after: PartitionRegistration = {
    replicas, isr, leader,
    leaderEpoch: leader !== reg.leader ? reg.leaderEpoch + 1 : reg.leaderEpoch,
    partitionEpoch: reg.partitionEpoch + 1,
    addingReplicas: adding,
    removingReplicas: removing,
  };
  const record: { -readonly [K in keyof PartitionChangeRecord]: PartitionChangeRecord[K] } = { type: 'partitionChange', v: 1, topicId, partition };
  if (leader !== reg.leader) record.leader = leader;
  if (!sameList(isr, reg.isr)) record.isr = isr;
  if (!sameList(replicas, reg.replicas)) record.replicas = replicas;
  if (!sameList(adding, reg.addingReplicas)) record.addingReplicas = adding;
  if (!sameList(removing, reg.removingReplicas)) record.removingReplicas = removing;
  const changed = Object.keys(record).length > 4;
  return changed
    ? { record, election, after }
    : { record: null, election: 'unchanged', after: reg };
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
