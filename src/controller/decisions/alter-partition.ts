// Validation of AlterPartition (ISR shrink/expand) requests from partition
// leaders (pure). Accepted only from the current leader, carrying the current
// leader epoch and partition epoch: a request built on a stale view is
// rejected, which is what stops a deposed leader from changing the ISR (and
// so from acknowledging writes the new leader may not have). The proposed ISR
// must contain the leader, lie within the replicas, and may only add brokers
// that are eligible (registered, unfenced, not shutting down).

import type { PartitionRegistration } from '../../metadata/image.js';
import type { BrokerId } from '../../metadata/records.js';
import { Errors, type ErrorInfo } from '../../util/errors.js';
import { mutant } from '../../util/mutants.js';
import type { ElectionContext } from './election.js';
import { buildPartitionChange, type ChangeResult } from './partition-change.js';

export interface AlterPartitionRequest {
  readonly brokerId: BrokerId;
  readonly brokerEpoch: number;
  readonly topicId: string;
  readonly partition: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  readonly newIsr: readonly BrokerId[];
}

export type AlterPartitionDecision =
  | { readonly error: ErrorInfo; readonly message: string }
  | { readonly error: null; readonly change: ChangeResult };

export function decideAlterPartition(
  reg: PartitionRegistration | undefined,
  req: AlterPartitionRequest,
  currentBrokerEpoch: number | undefined,
  ctx: ElectionContext,
): AlterPartitionDecision {
  const reject = (error: ErrorInfo, message: string): AlterPartitionDecision => ({ error, message });
  if (!reg) return reject(Errors.UNKNOWN_TOPIC_OR_PARTITION, `no partition ${req.topicId}/${req.partition}`);
  if (currentBrokerEpoch !== req.brokerEpoch) {
    return reject(Errors.STALE_BROKER_EPOCH, `broker epoch ${req.brokerEpoch} is not the current ${currentBrokerEpoch}`);
  }
  if (reg.leader !== req.brokerId) return reject(Errors.NOT_LEADER_OR_FOLLOWER, `broker ${req.brokerId} is not the leader (${reg.leader})`);
  if (req.leaderEpoch < reg.leaderEpoch) return reject(Errors.FENCED_LEADER_EPOCH, `leader epoch ${req.leaderEpoch} < ${reg.leaderEpoch}`);
  if (req.leaderEpoch > reg.leaderEpoch) return reject(Errors.UNKNOWN_LEADER_EPOCH, `leader epoch ${req.leaderEpoch} > ${reg.leaderEpoch}`);
  // Deliberate bug (test-only switch): a stale partition epoch passes.
  if (req.partitionEpoch !== reg.partitionEpoch && !mutant('alter-partition-stale-epoch')) {
    return reject(Errors.INVALID_UPDATE_VERSION, `partition epoch ${req.partitionEpoch} is not the current ${reg.partitionEpoch}`);
  }
  if (new Set(req.newIsr).size !== req.newIsr.length) return reject(Errors.INVALID_REQUEST, 'duplicate brokers in the ISR');
  if (!req.newIsr.includes(req.brokerId)) return reject(Errors.INVALID_REQUEST, 'the ISR must contain the leader');
  const outside = req.newIsr.filter((b) => !reg.replicas.includes(b));
  if (outside.length > 0) return reject(Errors.INVALID_REQUEST, `brokers ${outside} are not replicas`);
  const ineligible = req.newIsr.filter((b) => !reg.isr.includes(b) && !ctx.isAcceptableLeader(b));
  if (ineligible.length > 0) return reject(Errors.INELIGIBLE_REPLICA, `brokers ${ineligible} are fenced or shutting down`);
  return { error: null, change: buildPartitionChange(req.topicId, req.partition, reg, { isr: req.newIsr }, ctx) };
}
