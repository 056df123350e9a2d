// OffsetForLeaderEpoch on the Kafka listener: the replica manager's
// offsetForLeaderEpoch (the leader's epoch cache: the largest epoch <= the
// one asked for and the offset where it ends), as consumers use it to detect
// log truncation after a leader change (KIP-320). v2-4 are served: Kafka
// 4.x's range starts at v2. currentLeaderEpoch is checked
// (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH); replicaId is not used
// (followers do not use this listener).

import { offsetForLeaderEpoch } from '../../protocol/kafka/apis/offset-for-leader-epoch/schema.js';
import { CONSUMER_REPLICA_ID } from '../../protocol/apis/fetch.js';
import type { KafkaApiHandler } from './api.js';

interface PartitionIn { readonly partition: number; readonly currentLeaderEpoch: number; readonly leaderEpoch: number }
interface TopicIn { readonly topic: string; readonly partitions: readonly PartitionIn[] }

export const offsetForLeaderEpochHandler: KafkaApiHandler = {
  spec: offsetForLeaderEpoch,
  minVersion: 2,
  maxVersion: 4,
  handle(req, ctx) {
    const res = ctx.deps.replicas.offsetForLeaderEpoch({
      replicaId: CONSUMER_REPLICA_ID,
      topics: (req.topics as TopicIn[]).map((t) => ({ name: t.topic, partitions: t.partitions })),
    });
    return {
      throttleTimeMs: 0,
      topics: res.topics.map((t) => ({
        topic: t.name,
        partitions: t.partitions.map((p) => ({ errorCode: p.errorCode, partition: p.partition, leaderEpoch: p.leaderEpoch, endOffset: p.endOffset })),
      })),
    };
  },
  errorResponse(req, errorCode) {
    return {
      throttleTimeMs: 0,
      topics: (req.topics as TopicIn[]).map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => ({ errorCode, partition: p.partition })) })),
    };
  },
};
