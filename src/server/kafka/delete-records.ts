// DeleteRecords on the Kafka listener: the replica manager moves each led
// partition's log start offset (the same operation as the WebSocket API's
// DeleteRecords); lowWatermark is the leader's new log start offset.
// Partitions this broker does not lead answer NOT_LEADER_OR_FOLLOWER (the
// client sends each partition to its leader), offsets past the high
// watermark OFFSET_OUT_OF_RANGE.

import { deleteRecords } from '../../protocol/kafka/apis/delete-records/schema.js';
import type { KafkaApiHandler } from './api.js';

interface Topic { readonly name: string; readonly partitions: Array<{ partitionIndex: number; offset: number }> }

export const deleteRecordsHandler: KafkaApiHandler = {
  spec: deleteRecords,
  minVersion: 0,
  maxVersion: 2,
  handle(req, ctx) {
    const topics = req.topics as Topic[];
    const res = ctx.deps.replicas.deleteRecords({
      topics: topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partition: p.partitionIndex, offset: p.offset })) })),
    });
    return {
      throttleTimeMs: 0,
      topics: res.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, lowWatermark: p.lowWatermark, errorCode: p.errorCode })),
      })),
    };
  },
  errorResponse(req, errorCode) {
    return {
      topics: (req.topics as Topic[]).map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, lowWatermark: -1, errorCode })) })),
    };
  },
};
