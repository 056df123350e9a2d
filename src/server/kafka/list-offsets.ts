// ListOffsets on the Kafka listener: the replica manager's listOffsets (the
// same lookups as the WebSocket protocol's), laid out per topic and partition.
//
// - v1-10 are served (v0's list of old-style offsets is not).
// - isolationLevel (v2+) goes to the replica manager: read_committed's latest
//   (-1) is the last stable offset, read_uncommitted's the high watermark.
// - Timestamps: -1 latest, -2 earliest,
//   -3 (v7+) the record with the largest timestamp, -4 (v8+, earliest local)
//   = earliest since every segment is local, -5 (v9+, latest tiered) has no
//   tiered segments to name and answers offset -1 as Kafka does without
//   remote storage; else the first offset with a timestamp at or after it.
// - Every request is a consumer's: replicaId is not used to look past the
//   high watermark (followers do not use this listener).

import { listOffsets } from '../../protocol/kafka/apis/list-offsets/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import { CONSUMER_REPLICA_ID } from '../../protocol/apis/fetch.js';
import { EARLIEST_TIMESTAMP } from '../../protocol/apis/offsets.js';
import type { KafkaApiHandler } from './api.js';

interface PartitionIn { readonly partitionIndex: number; readonly currentLeaderEpoch: number; readonly timestamp: number }
interface TopicIn { readonly name: string; readonly partitions: readonly PartitionIn[] }

const EARLIEST_LOCAL_TIMESTAMP = -4;
const LATEST_TIERED_TIMESTAMP = -5;

export const listOffsetsHandler: KafkaApiHandler = {
  spec: listOffsets,
  minVersion: 1,
  maxVersion: 10,
  handle(req, ctx) {
    const topics = req.topics as TopicIn[];
    const res = ctx.deps.replicas.listOffsets({
      replicaId: CONSUMER_REPLICA_ID,
      isolationLevel: req.isolationLevel === 1 ? 1 : 0,
      topics: topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partition: p.partitionIndex, currentLeaderEpoch: p.currentLeaderEpoch,
          timestamp: p.timestamp === EARLIEST_LOCAL_TIMESTAMP || p.timestamp === LATEST_TIERED_TIMESTAMP ? EARLIEST_TIMESTAMP : p.timestamp,
        })),
      })),
    });
    return {
      throttleTimeMs: 0,
      topics: res.topics.map((t, ti) => ({
        name: t.name,
        partitions: t.partitions.map((p, pi): Struct => {
          const tiered = topics[ti]!.partitions[pi]!.timestamp === LATEST_TIERED_TIMESTAMP && p.errorCode === 0;
          return { partitionIndex: p.partition, errorCode: p.errorCode, timestamp: tiered ? -1 : p.timestamp, offset: tiered ? -1 : p.offset, leaderEpoch: p.leaderEpoch };
        }),
      })),
    };
  },
  errorResponse(req, errorCode) {
    return {
      throttleTimeMs: 0,
      topics: (req.topics as TopicIn[]).map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
    };
  },
};
