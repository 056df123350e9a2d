// OffsetFetch on the Kafka listener, served by the shared group coordinator.
// v0-7 ask about one group, v8+ about many (one answer per group). Topics
// null (v2+) means every topic the group has offsets for. v0-1 have no
// group-level error code: a group error goes on every partition asked
// about, as Kafka does. requireStable (v7+; per request, also for every
// group of v8+) goes to the coordinator: a partition with a transactional
// commit still open answers UNSTABLE_OFFSET_COMMIT (retriable) instead of the
// last committed offset (KIP-447). v9's memberId/memberEpoch belong to
// KIP-848 groups; classic groups ignore them.

import { offsetFetch } from '../../protocol/kafka/apis/offset-fetch/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { OffsetFetchResponse } from '../../protocol/apis/groups.js';
import type { GroupOps as GroupCoordinator } from '../../groups/coordinator.js';
import type { KafkaApiHandler } from './api.js';
import { coordinatorOf } from './group-kit.js';

const BATCHED_VERSION = 8;
const GROUP_ERROR_VERSION = 2;

type AskedTopics = Array<{ name: string; partitionIndexes: number[] }> | null;

function fetchGroup(groups: GroupCoordinator, groupId: string, asked: AskedTopics, requireStable: boolean): OffsetFetchResponse {
  return groups.offsetFetch({ groupId, topics: asked === null ? null : asked.map((t) => ({ name: t.name, partitions: t.partitionIndexes })), requireStable });
}

function kafkaTopics(res: OffsetFetchResponse, asked: AskedTopics, partitionError: boolean): Struct[] {
  if (partitionError && res.errorCode !== 0) {
    return (asked ?? []).map((t) => ({
      name: t.name,
      partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, committedOffset: -1, metadata: '', errorCode: res.errorCode })),
    }));
  }
  return res.topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({
      partitionIndex: p.partition, committedOffset: p.committedOffset, committedLeaderEpoch: p.committedLeaderEpoch,
      metadata: p.metadata ?? '', errorCode: p.errorCode,
    })),
  }));
}

export const offsetFetchHandler: KafkaApiHandler = {
  spec: offsetFetch,
  minVersion: 0,
  maxVersion: 9,
  handle(req, ctx) {
    const groups = coordinatorOf(ctx.deps);
    const requireStable = req.requireStable === true;
    if (ctx.version >= BATCHED_VERSION) {
      return {
        throttleTimeMs: 0,
        groups: (req.groups as Struct[]).map((g) => {
          const asked = g.topics as AskedTopics;
          const res = fetchGroup(groups, g.groupId as string, asked, requireStable);
          return { groupId: g.groupId, topics: kafkaTopics(res, asked, false), errorCode: res.errorCode };
        }),
      };
    }
    const asked = req.topics as AskedTopics;
    const res = fetchGroup(groups, req.groupId as string, asked, requireStable);
    return { throttleTimeMs: 0, topics: kafkaTopics(res, asked, ctx.version < GROUP_ERROR_VERSION), errorCode: res.errorCode };
  },
  errorResponse(req, errorCode) {
    const onPartitions = (asked: AskedTopics): Struct[] => (asked ?? []).map((t) => ({
      name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, committedOffset: -1, metadata: '', errorCode })),
    }));
    return {
      topics: onPartitions(req.topics as AskedTopics),
      errorCode,
      groups: (req.groups as Struct[]).map((g) => ({ groupId: g.groupId, topics: [], errorCode })),
    };
  },
};
