// OffsetDelete on the Kafka listener, served by the shared group coordinator
// (groups/offsets.ts decides what may go: GROUP_SUBSCRIBED_TO_TOPIC for a
// topic the group consumes, NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND).

import { offsetDelete } from '../../protocol/kafka/apis/offset-delete/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { KafkaApiHandler } from './api.js';
import { coordinatorOf } from './group-kit.js';

export const offsetDeleteHandler: KafkaApiHandler = {
  spec: offsetDelete,
  minVersion: 0,
  maxVersion: 0,
  async handle(req, ctx) {
    const res = await coordinatorOf(ctx.deps).offsetDelete({
      groupId: req.groupId as string,
      topics: (req.topics as Struct[]).map((t) => ({ name: t.name as string, partitions: (t.partitions as Struct[]).map((p) => p.partitionIndex as number) })),
    });
    return {
      errorCode: res.errorCode,
      throttleTimeMs: 0,
      topics: res.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, errorCode: p.errorCode })) })),
    };
  },
  errorResponse(_req, errorCode) {
    return { errorCode, topics: [] };
  },
};
