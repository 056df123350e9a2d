// Produce on the Kafka listener: the batches go to the replica manager's
// produce (the same append, idempotence check, acks and purgatory as the
// WebSocket protocol's) as the bytes they arrived in — RecordBatch v2 is the
// storage format — and its answer is laid out per topic and partition.
//
// - v3-11 are served: v0-2 carry message sets (magic 0/1), refused as in
//   Kafka 4.0 (not advertised). v12 (KIP-890 transactions) and v13 (topic
//   ids) are not in the spec version this listener was written from.
// - acks 0 gets no response at all; acks other than -1/0/1 is
//   INVALID_REQUIRED_ACKS on every partition, nothing appended.
// - A non-null transactionalId: Sluice has no transaction coordinator, so
//   every partition is answered TRANSACTIONAL_ID_AUTHORIZATION_FAILED (the
//   code Kafka gives a producer that may not use its transactional id: fatal
//   for the client, which reports the message) and nothing is appended.
// - Null records: CORRUPT_MESSAGE for that partition.
// - v10+: partitions answered NOT_LEADER_OR_FOLLOWER carry the current
//   leader, and nodeEndpoints its address (leader-hints.ts).

import { produce } from '../../protocol/kafka/apis/produce/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { ProduceRequest, ProducePartitionResponse } from '../../protocol/apis/produce.js';
import { Errors } from '../../util/errors.js';
import type { MetadataImage } from '../../metadata/image.js';
import { NO_KAFKA_RESPONSE, type KafkaApiHandler } from './api.js';
import { currentLeader, needsLeaderHint, nodeEndpoints } from './leader-hints.js';

interface PartitionData { readonly index: number; readonly records: Buffer | null }
interface TopicData { readonly name: string; readonly partitionData: readonly PartitionData[] }

const TRANSACTIONS_UNSUPPORTED = 'Sluice does not support transactions yet: produce without a transactional.id';

function everyPartition(req: Struct, errorCode: number, errorMessage: string): Struct {
  return {
    responses: (req.topicData as TopicData[]).map((t) => ({
      name: t.name,
      partitionResponses: t.partitionData.map((p) => ({ index: p.index, errorCode, baseOffset: -1, errorMessage })),
    })),
    throttleTimeMs: 0,
  };
}

/** The request for the replica manager: partitions with null records are left out (answered CORRUPT_MESSAGE here). */
function withRecords(topics: readonly TopicData[]): ProduceRequest['topics'] {
  return topics.map((t) => ({
    name: t.name,
    partitions: t.partitionData.flatMap((p) => (p.records === null ? [] : [{ partition: p.index, records: p.records }])),
  }));
}

function answer(image: MetadataImage, version: number, topics: readonly TopicData[], results: Map<string, ProducePartitionResponse>): Struct {
  const leaders = new Set<number>();
  const responses = topics.map((t) => ({
    name: t.name,
    partitionResponses: t.partitionData.map((p) => {
      const r = results.get(`${t.name}\u0000${p.index}`);
      if (!r) return { index: p.index, errorCode: Errors.CORRUPT_MESSAGE.code, baseOffset: -1, errorMessage: 'CORRUPT_MESSAGE: null records' };
      const out: Struct = { index: p.index, errorCode: r.errorCode, baseOffset: r.baseOffset, logStartOffset: r.logStartOffset, errorMessage: r.errorMessage };
      if (version >= 10 && needsLeaderHint(r.errorCode)) {
        const leader = currentLeader(image, t.name, p.index);
        out.currentLeader = leader;
        if (leader.leaderId >= 0) leaders.add(leader.leaderId);
      }
      return out;
    }),
  }));
  return { responses, throttleTimeMs: 0, nodeEndpoints: version >= 10 ? nodeEndpoints(image, leaders) : [] };
}

export const produceHandler: KafkaApiHandler = {
  spec: produce,
  minVersion: 3,
  maxVersion: 11,
  handle(req, ctx) {
    const acks = req.acks as number;
    if (req.transactionalId !== null) {
      return acks === 0 ? NO_KAFKA_RESPONSE : everyPartition(req, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code, TRANSACTIONS_UNSUPPORTED);
    }
    if (acks !== -1 && acks !== 0 && acks !== 1) {
      return everyPartition(req, Errors.INVALID_REQUIRED_ACKS.code, `acks must be 0, 1 or -1 (all), got ${acks}`);
    }
    const topics = req.topicData as TopicData[];
    const result = ctx.deps.replicas.produce({ acks, timeoutMs: Math.max(0, req.timeoutMs as number), topics: withRecords(topics) });
    if (acks === 0) return NO_KAFKA_RESPONSE;
    const build = (res: Awaited<typeof result>): Struct => {
      const results = new Map<string, ProducePartitionResponse>();
      for (const t of res.topics) for (const p of t.partitions) results.set(`${t.name}\u0000${p.partition}`, p);
      return answer(ctx.deps.image(), ctx.version, topics, results);
    };
    return result instanceof Promise ? result.then(build) : build(result);
  },
  errorResponse(req, errorCode, errorMessage) {
    return everyPartition(req, errorCode, errorMessage);
  },
};
