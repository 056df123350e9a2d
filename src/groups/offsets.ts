// OffsetCommit and OffsetFetch on the coordinator. A commit is checked (the
// group's rules in Group.commitProblem, then each partition: the topic
// exists, the metadata fits), written as one batch of keyed records with
// acks=all, and only then applied in memory and answered. A fetch reads the
// in-memory offsets: what was acknowledged, never a write still in flight.
//
// Rule for concurrent commits of one partition: the record later in the log
// wins in memory too (StoredOffset.logOffset), whatever order the answers
// come back in. Transactional commits (txn-offsets.ts) follow the same rule
// when their COMMIT marker makes them committed.
//
// OffsetFetch with requireStable (KIP-447): a partition with a transactional
// offset not yet ended (or a TxnOffsetCommit in flight) answers
// UNSTABLE_OFFSET_COMMIT, so a consumer taking over the partition waits for
// the transaction rather than start from an offset it is about to move.

import { Errors, type ErrorInfo } from '../util/errors.js';
import type { MetadataImage } from '../metadata/image.js';
import type { RecordInput } from '../record/record-batch.js';
import type {
  OffsetDeleteRequest, OffsetDeleteResponse, OffsetCommitPartition, OffsetCommitRequest, OffsetCommitResponse, OffsetFetchPartitionResponse, OffsetFetchRequest, OffsetFetchResponse,
} from '../protocol/apis/groups.js';
import type { CoordinatorLimits } from './defaults.js';
import { CONSUMER_PROTOCOL_TYPE } from './consumer-protocol.js';
import type { Refusal } from './membership/group.js';
import { errorMessage } from './membership/responses.js';
import type { GroupOffsets, StoredOffset } from './loader.js';
import { offsetKey, offsetValue } from './records.js';
import type { AppendResult, GroupEntry, Shard, TxnAppend } from './coordinator.js';

/** What the offset handlers need from the coordinator. */
export interface OffsetsHost {
  readonly limits: CoordinatorLimits;
  lookup(groupId: string): { shard: Shard } | Refusal;
  entryFor(shard: Shard, groupId: string, create: boolean): GroupEntry | undefined;
  append(shard: Shard, records: RecordInput[], tooLarge: ErrorInfo, txn?: TxnAppend): Promise<AppendResult>;
  currentImage(): MetadataImage;
  nowMs(): number;
  isCurrent(shard: Shard, entry?: GroupEntry): boolean;
  forgetIfVacant(shard: Shard, entry: GroupEntry): void;
}

type PartitionAnswer = { partition: number; errorCode: number; errorMessage: string | null };

function answerFor(partition: number, problem: Refusal | null): PartitionAnswer {
  return problem ? { partition, errorCode: problem.error.code, errorMessage: errorMessage(problem.error, problem.message) } : { partition, errorCode: 0, errorMessage: null };
}

/** Every partition of the request answered with `problem`. */
function allRefused(req: OffsetCommitRequest, problem: Refusal): OffsetCommitResponse {
  return { topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => answerFor(p.partition, problem)) })) };
}

export function partitionProblem(image: MetadataImage, topic: string, p: OffsetCommitPartition, limits: CoordinatorLimits): Refusal | null {
  if (!image.partition(topic, p.partition)) return { error: Errors.UNKNOWN_TOPIC_OR_PARTITION, message: `no partition ${topic}-${p.partition}` };
  if (p.committedOffset < 0) return { error: Errors.INVALID_REQUEST, message: `committed offset ${p.committedOffset} of ${topic}-${p.partition} is negative` };
  if (p.metadata !== null && Buffer.byteLength(p.metadata, 'utf8') > limits.offsetMetadataBytesMax) {
    return { error: Errors.INVALID_COMMIT_OFFSET_SIZE, message: `metadata of ${topic}-${p.partition} is over ${limits.offsetMetadataBytesMax} bytes` };
  }
  return null;
}

export async function commitOffsets(host: OffsetsHost, req: OffsetCommitRequest): Promise<OffsetCommitResponse> {
  const found = host.lookup(req.groupId);
  if ('error' in found) return allRefused(req, found);
  const shard = found.shard;
  // A group that does not exist may only be created by a commit outside group management (generation -1).
  const entry = host.entryFor(shard, req.groupId, req.generationId < 0);
  if (!entry) return allRefused(req, { error: Errors.ILLEGAL_GENERATION, message: `group ${req.groupId} does not exist, so generation ${req.generationId} is stale` });
  const problem = entry.group.commitProblem(req.memberId, req.groupInstanceId, req.generationId);
  if (problem) {
    host.forgetIfVacant(shard, entry);
    return allRefused(req, problem);
  }
  const image = host.currentImage();
  const now = host.nowMs();
  const writes: Array<{ topic: string; p: OffsetCommitPartition; out: PartitionAnswer }> = [];
  const response: OffsetCommitResponse = {
    topics: req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => {
        const out = answerFor(p.partition, partitionProblem(image, t.name, p, host.limits));
        if (out.errorCode === 0) writes.push({ topic: t.name, p, out });
        return out;
      }),
    })),
  };
  if (writes.length === 0) {
    host.forgetIfVacant(shard, entry);
    return response;
  }
  const values = writes.map((w) => ({ offset: w.p.committedOffset, leaderEpoch: w.p.committedLeaderEpoch, metadata: w.p.metadata, commitTimestampMs: now }));
  const res = await host.append(shard, writes.map((w, i) => ({ key: offsetKey(req.groupId, w.topic, w.p.partition), value: offsetValue(values[i]!) })), Errors.INVALID_COMMIT_OFFSET_SIZE);
  if (res.error) {
    for (const w of writes) Object.assign(w.out, answerFor(w.p.partition, res.error));
    if (host.isCurrent(shard, entry)) host.forgetIfVacant(shard, entry);
    return response;
  }
  if (host.isCurrent(shard, entry)) writes.forEach((w, i) => store(entry.offsets, w.topic, w.p.partition, { ...values[i]!, logOffset: res.baseOffset + i }));
  return response;
}

export function store(offsets: GroupOffsets, topic: string, partition: number, value: StoredOffset): void {
  let byPartition = offsets.get(topic);
  if (!byPartition) offsets.set(topic, (byPartition = new Map()));
  const have = byPartition.get(partition);
  if (!have || have.logOffset < value.logOffset) byPartition.set(partition, value);
}

const NOTHING_COMMITTED = { committedOffset: -1, committedLeaderEpoch: -1, metadata: null, errorCode: 0, errorMessage: null };
const UNSTABLE = {
  committedOffset: -1, committedLeaderEpoch: -1, metadata: null,
  errorCode: Errors.UNSTABLE_OFFSET_COMMIT.code, errorMessage: errorMessage(Errors.UNSTABLE_OFFSET_COMMIT, 'a transaction has an offset of this partition pending'),
};

export function fetchOffsets(host: OffsetsHost, req: OffsetFetchRequest): OffsetFetchResponse {
  const found = host.lookup(req.groupId);
  if ('error' in found) return { errorCode: found.error.code, errorMessage: errorMessage(found.error, found.message), topics: [] };
  const shard = found.shard;
  const offsets = host.entryFor(shard, req.groupId, false)?.offsets ?? new Map<string, Map<number, StoredOffset>>();
  const answer = (topic: string, partition: number): OffsetFetchPartitionResponse => {
    if (req.requireStable === true && shard.txn.isUnstable(req.groupId, topic, partition)) return { partition, ...UNSTABLE };
    const c = offsets.get(topic)?.get(partition);
    return c ? { partition, committedOffset: c.offset, committedLeaderEpoch: c.leaderEpoch, metadata: c.metadata, errorCode: 0, errorMessage: null } : { partition, ...NOTHING_COMMITTED };
  };
  // Every topic: those with committed offsets, as Kafka (a partition with only a pending offset is not listed).
  const asked = req.topics ?? [...offsets.entries()]
    .filter(([, byPartition]) => byPartition.size > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, byPartition]) => ({ name, partitions: [...byPartition.keys()].sort((a, b) => a - b) }));
  return { errorCode: 0, errorMessage: null, topics: asked.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => answer(t.name, p)) })) };
}

/**
 * OffsetDelete: a group's offsets of partitions it does not consume go
 * (tombstones, acks=all, then forgotten in memory). An Empty group's may all
 * go; a consumer group's only for topics none of its members subscribes to
 * (GROUP_SUBSCRIBED_TO_TOPIC otherwise, and for every topic while the
 * subscriptions cannot be read); a non-empty group of another protocol type
 * keeps them all (NON_EMPTY_GROUP), as in Kafka.
 */
export async function deleteOffsets(host: OffsetsHost, req: OffsetDeleteRequest): Promise<OffsetDeleteResponse> {
  const refused = (problem: Refusal): OffsetDeleteResponse => ({ errorCode: problem.error.code, errorMessage: errorMessage(problem.error, problem.message), topics: [] });
  const found = host.lookup(req.groupId);
  if ('error' in found) return refused(found);
  const entry = host.entryFor(found.shard, req.groupId, false);
  if (!entry || entry.group.state === 'Dead') return refused({ error: Errors.GROUP_ID_NOT_FOUND, message: `group ${req.groupId} does not exist` });
  const g = entry.group;
  const subscribed = g.state === 'Empty' ? new Set<string>() : g.subscribedTopics();
  if (g.state !== 'Empty' && g.protocolType !== CONSUMER_PROTOCOL_TYPE) {
    return refused({ error: Errors.NON_EMPTY_GROUP, message: `group ${req.groupId} of protocol type ${g.protocolType} has members` });
  }
  const deleting: Array<{ topic: string; partition: number }> = [];
  const topics = req.topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((partition) => {
      if (subscribed === null || subscribed.has(t.name)) {
        return { partition, errorCode: Errors.GROUP_SUBSCRIBED_TO_TOPIC.code, errorMessage: errorMessage(Errors.GROUP_SUBSCRIBED_TO_TOPIC, `group ${req.groupId} consumes ${t.name}`) };
      }
      if (entry.offsets.get(t.name)?.has(partition)) deleting.push({ topic: t.name, partition });
      return { partition, errorCode: 0, errorMessage: null };
    }),
  }));
  if (deleting.length > 0) {
    const res = await host.append(found.shard, deleting.map((d) => ({ key: offsetKey(req.groupId, d.topic, d.partition), value: null })), Errors.UNKNOWN_SERVER_ERROR);
    if (res.error) return refused(res.error);
    if (host.isCurrent(found.shard, entry)) {
      for (const d of deleting) entry.offsets.get(d.topic)?.delete(d.partition);
      host.forgetIfVacant(found.shard, entry);
    }
  }
  return { errorCode: 0, errorMessage: null, topics };
}

/** Tombstones for every committed offset of a group (DeleteGroups). */
export function offsetTombstones(groupId: string, offsets: GroupOffsets): RecordInput[] {
  const out: RecordInput[] = [];
  for (const [topic, byPartition] of offsets) for (const partition of byPartition.keys()) out.push({ key: offsetKey(groupId, topic, partition), value: null });
  return out;
}
