// Builds PartitionChange records (pure), like Kafka's PartitionChangeBuilder:
// given a partition's registration and a wanted ISR (and optionally new
// replicas), it re-elects a leader when needed, completes a reassignment once
// every adding replica is in the ISR, and emits a record only when something
// actually changes. Every caller — fencing, unfencing, controlled shutdown,
// AlterPartition, reassignment, preferred election — goes through build().
//
// Invariants of the output: the ISR is never empty while the partition has a
// replica; the leader is NO_LEADER or a member of the ISR; adding/removing
// replicas are subsets of replicas.

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

  // A reassignment completes once every adding replica is in the ISR: the
  // target set becomes the replica set and the removed replicas leave the ISR.
  if (adding.length > 0 && adding.every((b) => isr.includes(b))) {
    replicas = replicas.filter((b) => !removing.includes(b));
    isr = isr.filter((b) => replicas.includes(b));
    adding = [];
    removing = [];
  }
  // Never let the ISR become empty: keep the last member (it may lead again).
  if (isr.length === 0) isr = reg.isr.filter((b) => replicas.includes(b)).slice(0, 1);

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
  if (leader === NO_LEADER && isr.length === 0) isr = replicas.slice(0, 1);

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
