// OffsetCommit on the Kafka listener, served by the shared group coordinator
// (the same __consumer_offsets the WebSocket protocol commits to). v0 has no
// generation or member: a commit outside group management (generation -1).
// v1's commitTimestamp and v2-4's retentionTimeMs are accepted and not
// used: Sluice stamps commits with the broker's time and keeps offsets until
// the group is deleted.

import { offsetCommit } from '../../protocol/kafka/apis/offset-commit/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { KafkaApiHandler } from './api.js';
import { coordinatorOf } from './group-kit.js';

export const offsetCommitHandler: KafkaApiHandler = {
  spec: offsetCommit,
  minVersion: 0,
  maxVersion: 9,
  async handle(req, ctx) {
    const res = await coordinatorOf(ctx.deps).offsetCommit({
      groupId: req.groupId as string,
      generationId: req.generationIdOrMemberEpoch as number,
      memberId: req.memberId as string,
      groupInstanceId: req.groupInstanceId as string | null,
      topics: (req.topics as Struct[]).map((t) => ({
        name: t.name as string,
        partitions: (t.partitions as Struct[]).map((p) => ({
          partition: p.partitionIndex as number,
          committedOffset: p.committedOffset as number,
          committedLeaderEpoch: p.committedLeaderEpoch as number,
          metadata: p.committedMetadata as string | null,
        })),
      })),
    });
    return {
      throttleTimeMs: 0,
      topics: res.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, errorCode: p.errorCode })) })),
    };
  },
  errorResponse(req, errorCode) {
    return {
      topics: (req.topics as Struct[]).map((t) => ({
        name: t.name, partitions: (t.partitions as Struct[]).map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
      })),
    };
  },
};
