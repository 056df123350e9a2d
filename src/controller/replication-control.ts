// Topic and partition commands (pure) — Kafka's ReplicationControlManager:
// create/delete topics, add partitions, AlterPartition from leaders,
// preferred-leader elections and reassignments. Each returns records plus a
// per-item response; an invalid item gets its error and contributes no
// records, so one bad topic never half-creates another.

import type { MetadataImage } from '../metadata/image.js';
import { NO_LEADER, type BrokerId, type MetadataRecord, type PartitionRecord } from '../metadata/records.js';
import { configValueProblem, topicConfigDef } from '../metadata/config-defs.js';
import { Errors, SluiceError, type ErrorInfo } from '../util/errors.js';
import type { Rng } from '../util/rng.js';
import { brokerSetting, electionContext, isAcceptableLeader, noRecords, type CommandContext, type CommandResult } from './context.js';
import { placeReplicas } from './decisions/placement.js';
import { collidingTopicName, partitionCountProblem, replicationFactorProblem, topicNameProblem } from './decisions/topic-rules.js';
import { decideAlterPartition, type AlterPartitionRequest } from './decisions/alter-partition.js';
import { buildPartitionChange } from './decisions/partition-change.js';
import { cancelReassignment, isReassigning, originalReplicas, startReassignment, targetReplicas } from './decisions/reassignment.js';
import type { CreatedTopic, ItemError, OngoingReassignment, TopicPartition } from '../protocol/apis/admin-results.js';

// The answers' shapes are the wire's (the client reads them too).
export type { CreatedTopic, ItemError, OngoingReassignment, TopicPartition };

const ok: ItemError = { errorCode: 0, errorMessage: null };
const fail = (info: ErrorInfo, message: string): ItemError => ({ errorCode: info.code, errorMessage: `${info.name}: ${message}` });
const fromError = (e: SluiceError): ItemError => ({ errorCode: e.code, errorMessage: e.message });

// ---------------------------------------------------------------- create topics

export interface CreatableTopic {
  readonly name: string;
  /** -1 = num.partitions */
  readonly numPartitions: number;
  /** -1 = default.replication.factor */
  readonly replicationFactor: number;
  readonly configs: Readonly<Record<string, string>>;
  /** Explicit assignment: one replica list per partition (overrides count and RF). */
  readonly assignments?: readonly (readonly BrokerId[])[];
}

export function newTopicId(rng: Rng): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let id = '';
  for (let i = 0; i < 22; i++) id += alphabet[rng.int(64)];
  return id;
}

export function validateTopicConfigs(configs: Readonly<Record<string, string>>): SluiceError | null {
  for (const [name, value] of Object.entries(configs)) {
    const d = topicConfigDef(name);
    if (!d) return new SluiceError(Errors.INVALID_CONFIG, `unknown topic config ${name}`);
    const problem = configValueProblem(d, String(value));
    if (problem) return new SluiceError(Errors.INVALID_CONFIG, problem);
  }
  return null;
}

function topicProblem(image: MetadataImage, t: CreatableTopic, seen: Set<string>): SluiceError | null {
  const nameProblem = topicNameProblem(t.name);
  if (nameProblem) return nameProblem;
  if (image.topic(t.name) || seen.has(t.name)) return new SluiceError(Errors.TOPIC_ALREADY_EXISTS, `topic ${t.name} already exists`);
  const collision = collidingTopicName(t.name, [...image.topicsByName.keys(), ...seen]);
  if (collision) return new SluiceError(Errors.INVALID_TOPIC, `topic ${t.name} collides with ${collision} ('.' and '_' are interchangeable in metric names)`);
  return validateTopicConfigs(t.configs);
}

function assignmentFor(ctx: CommandContext, t: CreatableTopic): { assignment: BrokerId[][] } | { error: SluiceError } {
  const live = ctx.image.unfencedBrokers().filter((b) => !b.inControlledShutdown);
  if (t.assignments && t.assignments.length > 0) {
    for (const replicas of t.assignments) {
      if (replicas.length === 0 || new Set(replicas).size !== replicas.length || replicas.some((b) => !ctx.image.brokers.has(b))) {
        return { error: new SluiceError(Errors.INVALID_REPLICA_ASSIGNMENT, `invalid replica list ${replicas}`) };
      }
    }
    return { assignment: t.assignments.map((r) => [...r]) };
  }
  const partitions = t.numPartitions === -1 ? Number(brokerSetting(ctx.image, 'num.partitions')) : t.numPartitions;
  const rf = t.replicationFactor === -1 ? Number(brokerSetting(ctx.image, 'default.replication.factor')) : t.replicationFactor;
  const problem = partitionCountProblem(partitions) ?? replicationFactorProblem(rf, live.length);
  if (problem) return { error: problem };
  return { assignment: placeReplicas(live.map((b) => ({ id: b.brokerId, rack: b.rack })), partitions, rf, ctx.rng) };
}

function partitionRecords(image: MetadataImage, topicId: string, assignment: BrokerId[][], first: number): PartitionRecord[] {
  return assignment.map((replicas, i) => {
    const isr = replicas.filter((b) => isAcceptableLeader(image, b));
    const insync = isr.length > 0 ? isr : replicas.slice(0, 1);
    return {
      type: 'partition', v: 1, topicId, partition: first + i, replicas, isr: insync,
      leader: isr.length > 0 ? isr[0]! : -1, leaderEpoch: 0, partitionEpoch: 0, addingReplicas: [], removingReplicas: [],
    };
  });
}

export function createTopics(ctx: CommandContext, topics: readonly CreatableTopic[], validateOnly = false): CommandResult<CreatedTopic[]> {
  const records: MetadataRecord[] = [];
  const seen = new Set<string>();
  const response = topics.map((t): CreatedTopic => {
    const base = { name: t.name, topicId: null, numPartitions: -1, replicationFactor: -1 };
    const problem = topicProblem(ctx.image, t, seen);
    if (problem) return { ...base, ...fromError(problem) };
    const placed = assignmentFor(ctx, t);
    if ('error' in placed) return { ...base, ...fromError(placed.error) };
    seen.add(t.name);
    const topicId = newTopicId(ctx.rng);
    if (!validateOnly) {
      records.push({ type: 'topic', v: 1, name: t.name, topicId });
      records.push(...partitionRecords(ctx.image, topicId, placed.assignment, 0));
      for (const [name, value] of Object.entries(t.configs)) {
        records.push({ type: 'config', v: 1, resourceType: 'topic', resourceName: t.name, name, value: String(value) });
      }
    }
    return { ...base, ...ok, topicId: validateOnly ? null : topicId, numPartitions: placed.assignment.length, replicationFactor: placed.assignment[0]!.length };
  });
  return { records, response };
}

// ---------------------------------------------------------------- delete, add partitions

export function deleteTopics(ctx: CommandContext, names: readonly string[]): CommandResult<Array<ItemError & { name: string }>> {
  const records: MetadataRecord[] = [];
  const done = new Set<string>();
  const response = names.map((name) => {
    const topic = ctx.image.topic(name);
    if (!topic || done.has(name)) return { name, ...fail(Errors.UNKNOWN_TOPIC_OR_PARTITION, `topic ${name} does not exist`) };
    done.add(name);
    records.push({ type: 'removeTopic', v: 1, topicId: topic.topicId });
    return { name, ...ok };
  });
  return { records, response };
}

/**
 * Raises a topic's partition count to `totalCount`. The new partitions are
 * placed like a new topic's, or on `assignments` (one replica list per new
 * partition, each as long as the topic's replication factor).
 */
export function createPartitions(
  ctx: CommandContext, name: string, totalCount: number, validateOnly = false, assignments: readonly (readonly BrokerId[])[] | null = null,
): CommandResult<ItemError> {
  const topic = ctx.image.topic(name);
  if (!topic) return noRecords(fail(Errors.UNKNOWN_TOPIC_OR_PARTITION, `topic ${name} does not exist`));
  const current = topic.partitions.size;
  if (totalCount <= current) return noRecords(fail(Errors.INVALID_PARTITIONS, `topic ${name} has ${current} partitions; the new count must be larger, got ${totalCount}`));
  const countProblem = partitionCountProblem(totalCount);
  if (countProblem) return noRecords(fromError(countProblem));
  const rf = topic.partitions.get(0)?.replicas.length ?? 1;
  if (assignments !== null) {
    const problem = newPartitionAssignmentProblem(ctx.image, assignments, totalCount - current, rf);
    if (problem) return noRecords(fail(Errors.INVALID_REPLICA_ASSIGNMENT, problem));
    return { records: validateOnly ? [] : partitionRecords(ctx.image, topic.topicId, assignments.map((r) => [...r]), current), response: ok };
  }
  const live = ctx.image.unfencedBrokers().filter((b) => !b.inControlledShutdown);
  const rfProblem = replicationFactorProblem(rf, live.length);
  if (rfProblem) return noRecords(fromError(rfProblem));
  const assignment = placeReplicas(live.map((b) => ({ id: b.brokerId, rack: b.rack })), totalCount - current, rf, ctx.rng, current);
  return { records: validateOnly ? [] : partitionRecords(ctx.image, topic.topicId, assignment, current), response: ok };
}

function newPartitionAssignmentProblem(image: MetadataImage, assignments: readonly (readonly BrokerId[])[], added: number, rf: number): string | null {
  if (assignments.length !== added) return `${assignments.length} replica lists for ${added} new partitions`;
  for (const replicas of assignments) {
    if (replicas.length !== rf) return `replica list ${replicas.join(',')} does not have the topic's replication factor ${rf}`;
    if (new Set(replicas).size !== replicas.length) return `replica list ${replicas.join(',')} names a broker twice`;
    const unknown = replicas.find((b) => !image.brokers.has(b));
    if (unknown !== undefined) return `broker ${unknown} is not registered`;
  }
  return null;
}

// ---------------------------------------------------------------- AlterPartition, elections

export interface AlterPartitionResult extends ItemError {
  readonly leader: BrokerId;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  readonly isr: readonly BrokerId[];
}

export function alterPartition(ctx: CommandContext, req: AlterPartitionRequest): CommandResult<AlterPartitionResult> {
  const topic = ctx.image.topicsById.get(req.topicId);
  const reg = topic?.partitions.get(req.partition);
  const decision = decideAlterPartition(reg, req, ctx.image.brokers.get(req.brokerId)?.brokerEpoch, electionContext(ctx.image, topic?.name ?? ''));
  if (decision.error) {
    return noRecords({ ...fail(decision.error, decision.message), leader: reg?.leader ?? -1, leaderEpoch: reg?.leaderEpoch ?? -1, partitionEpoch: reg?.partitionEpoch ?? -1, isr: reg?.isr ?? [] });
  }
  const { record, after } = decision.change;
  return { records: record ? [record] : [], response: { ...ok, leader: after.leader, leaderEpoch: after.leaderEpoch, partitionEpoch: after.partitionEpoch, isr: after.isr } };
}

export type ElectionType = 'preferred' | 'unclean';

/**
 * Elects leaders of `partitions` (null: all). 'preferred' moves leadership to
 * the first replica when it is in sync and live (a partition it already leads
 * is answered without error). 'unclean' (Kafka's ElectionType.UNCLEAN) acts
 * only on partitions without a leader: a live in-sync replica if one exists,
 * else any live replica — which may lack committed records, whatever the
 * topic's unclean.leader.election.enable says, because an operator asked.
 * A partition that has a leader is ELECTION_NOT_NEEDED.
 */
export function electLeaders(
  ctx: CommandContext, partitions: readonly TopicPartition[] | null, type: ElectionType = 'preferred',
): CommandResult<Array<TopicPartition & ItemError>> {
  const targets = partitions ?? [...ctx.image.topicsByName.values()].flatMap((t) => [...t.partitions.keys()].map((partition) => ({ topic: t.name, partition })));
  const records: MetadataRecord[] = [];
  const response = targets.map((tp) => {
    const topic = ctx.image.topic(tp.topic);
    const reg = topic?.partitions.get(tp.partition);
    if (!topic || !reg) return { ...tp, ...fail(Errors.UNKNOWN_TOPIC_OR_PARTITION, `no partition ${tp.topic}-${tp.partition}`) };
    if (type === 'unclean') {
      if (reg.leader !== NO_LEADER) return { ...tp, ...fail(Errors.ELECTION_NOT_NEEDED, `${tp.topic}-${tp.partition} has a leader (${reg.leader})`) };
      const change = buildPartitionChange(topic.topicId, tp.partition, reg, {}, { ...electionContext(ctx.image, topic.name), uncleanLeaderElectionEnabled: true });
      if (change.after.leader === NO_LEADER) return { ...tp, ...fail(Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE, `no live replica of ${tp.topic}-${tp.partition}`) };
      if (change.record) records.push(change.record);
      return { ...tp, ...ok };
    }
    if (reg.leader === reg.replicas[0]) return { ...tp, ...ok };
    const change = buildPartitionChange(topic.topicId, tp.partition, reg, { preferredLeader: true }, electionContext(ctx.image, topic.name));
    if (change.after.leader !== reg.replicas[0]) return { ...tp, ...fail(Errors.PREFERRED_LEADER_NOT_AVAILABLE, `broker ${reg.replicas[0]} cannot lead ${tp.topic}-${tp.partition} now`) };
    if (change.record) records.push(change.record);
    return { ...tp, ...ok };
  });
  return { records, response };
}

/** Preferred-leader elections (auto.leader.rebalance.enable and the elect-leaders tools). */
export function electPreferredLeaders(ctx: CommandContext, partitions: readonly TopicPartition[] | null): CommandResult<Array<TopicPartition & ItemError>> {
  return electLeaders(ctx, partitions, 'preferred');
}

/**
 * Partitions whose preferred replica (the first) is acceptable, in the ISR
 * and not leading: what auto.leader.rebalance.enable moves back, so
 * leadership returns to an even spread after brokers come back.
 */
export function imbalancedPartitions(image: MetadataImage): TopicPartition[] {
  const out: TopicPartition[] = [];
  for (const topic of image.topicsByName.values()) {
    for (const [partition, reg] of topic.partitions) {
      const preferred = reg.replicas[0];
      if (preferred !== undefined && reg.leader !== preferred && reg.isr.includes(preferred) && isAcceptableLeader(image, preferred)) {
        out.push({ topic: topic.name, partition });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------- reassignment

export interface ReassignmentItem extends TopicPartition {
  /** Target replicas, or null to cancel. */
  readonly replicas: readonly BrokerId[] | null;
}

export function alterReassignments(ctx: CommandContext, items: readonly ReassignmentItem[]): CommandResult<Array<TopicPartition & ItemError>> {
  const records: MetadataRecord[] = [];
  const response = items.map((item) => {
    const tp = { topic: item.topic, partition: item.partition };
    const topic = ctx.image.topic(item.topic);
    const reg = topic?.partitions.get(item.partition);
    if (!topic || !reg) return { ...tp, ...fail(Errors.UNKNOWN_TOPIC_OR_PARTITION, `no partition ${item.topic}-${item.partition}`) };
    const ectx = electionContext(ctx.image, topic.name);
    const decision = item.replicas === null
      ? cancelReassignment(topic.topicId, item.partition, reg, ectx)
      : startReassignment(topic.topicId, item.partition, reg, item.replicas, (b) => ctx.image.brokers.has(b), ectx);
    if (decision.error) return { ...tp, ...fail(decision.error, decision.message) };
    if (decision.change.record) records.push(decision.change.record);
    return { ...tp, ...ok };
  });
  return { records, response };
}

export function listReassignments(image: MetadataImage): OngoingReassignment[] {
  const out: OngoingReassignment[] = [];
  for (const topic of image.topicsByName.values()) {
    for (const [partition, reg] of topic.partitions) {
      if (!isReassigning(reg)) continue;
      out.push({ topic: topic.name, partition, replicas: reg.replicas, addingReplicas: reg.addingReplicas, removingReplicas: reg.removingReplicas, original: originalReplicas(reg), target: targetReplicas(reg) });
    }
  }
  return out.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
}
