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
// - A non-null transactionalId: a transactional producer's batches. The
//   replica manager applies the transactional rules (the leader asks the
//   transaction coordinator before the producer's first batch on a
//   partition, KIP-890 part 1); with an authorizer the id needs Write, else
//   every partition is TRANSACTIONAL_ID_AUTHORIZATION_FAILED and nothing is
//   appended (access-control.ts). TRANSACTION_ABORTABLE is INVALID_TXN_STATE
//   before v11, and PRODUCER_FENCED (the coordinator's answer to the
//   leader's verification of a fenced producer) INVALID_PRODUCER_EPOCH at
//   every version, as Kafka's leader answers it (txn-kit.ts).
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
import { clientCode } from './txn-kit.js';

interface PartitionData { readonly index: number; readonly records: Buffer | null }
interface TopicData { readonly name: string; readonly partitionData: readonly PartitionData[] }

// No Produce version knows PRODUCER_FENCED: Kafka's leader answers a fenced transactional write INVALID_PRODUCER_EPOCH
// (its AddPartitionsToTxnManager maps the coordinator's verification answer), which every client handles as fencing.
const CODES = { producerFenced: Number.POSITIVE_INFINITY, abortable: 11 };

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
      const out: Struct = { index: p.index, errorCode: clientCode(r.errorCode, version, CODES), baseOffset: r.baseOffset, logStartOffset: r.logStartOffset, errorMessage: r.errorMessage };
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
    if (acks !== -1 && acks !== 0 && acks !== 1) {
      return everyPartition(req, Errors.INVALID_REQUIRED_ACKS.code, `acks must be 0, 1 or -1 (all), got ${acks}`);
    }
    const topics = req.topicData as TopicData[];
    const transactionalId = req.transactionalId as string | null;
    const result = ctx.deps.replicas.produce({ transactionalId, acks, timeoutMs: Math.max(0, req.timeoutMs as number), topics: withRecords(topics) });
    if (acks === 0) return NO_KAFKA_RESPONSE;
    const build = (res: Awaited<typeof result>): Struct => {
      const results = new Map<string, ProducePartitionResponse>();
      for (const t of res.topics) for (const p of t.partitions) results.set(`${t.name}\u0000${p.partition}`, p);
      return answer(ctx.deps.image(), ctx.version, topics, results);
    };
    return result instanceof Promise ? result.then(build) : build(result);
  },
  errorResponse(req, errorCode, errorMessage, version) {
    return everyPartition(req, clientCode(errorCode, version, CODES), errorMessage);
  },
};
