// AddPartitionsToTxn on the Kafka listener: the transaction coordinator adds
// the partitions to the producer's open transaction (the same coordinator
// the WebSocket protocol's AddPartitionsToTxn reaches).
//
// - v0-3 are served: the client's form, one transaction per request. v4-5 are
//   the broker's batched form (a partition leader's KIP-890 verifyOnly
//   check); Sluice's brokers send that check over Sluice's own protocol, never
//   this listener, so they are not advertised (Kafka's clients send v0-3).
// - v0-3 have no request-level error code: a whole-request error (the
//   coordinator's, or a refused transactional id) goes on every partition.
// - PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2 (txn-kit.ts).

import { addPartitionsToTxn } from '../../protocol/kafka/apis/add-partitions-to-txn/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import { parseAddPartitionsToTxnRequest, type AddPartitionsToTxnResponse, type TopicPartitions } from '../../protocol/apis/transactions.js';
import { transactionsOf } from '../txn-api.js';
import type { KafkaApiHandler } from './api.js';
import { clientCode } from './txn-kit.js';

const CODES = { producerFenced: 2, abortable: 5 };

function everyPartition(topics: readonly TopicPartitions[], errorCode: number): Struct[] {
  return topics.map((t) => ({ name: t.name, resultsByPartition: t.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode: errorCode })) }));
}

function results(res: AddPartitionsToTxnResponse, asked: readonly TopicPartitions[], version: number): Struct[] {
  if (res.errorCode !== 0) return everyPartition(asked, clientCode(res.errorCode, version, CODES));
  return res.results.map((t) => ({
    name: t.name,
    resultsByPartition: t.partitions.map((p) => ({ partitionIndex: p.partition, partitionErrorCode: clientCode(p.errorCode, version, CODES) })),
  }));
}

export const addPartitionsToTxnHandler: KafkaApiHandler = {
  spec: addPartitionsToTxn,
  minVersion: 0,
  maxVersion: 3,
  async handle(req, ctx) {
    const parsed = parseAddPartitionsToTxnRequest({
      transactionalId: req.v3AndBelowTransactionalId, producerId: req.v3AndBelowProducerId, producerEpoch: req.v3AndBelowProducerEpoch,
      topics: req.v3AndBelowTopics, verifyOnly: false,
    });
    const res = await transactionsOf(ctx.deps).addPartitionsToTxn(parsed);
    return { throttleTimeMs: 0, resultsByTopicV3AndBelow: results(res, parsed.topics, ctx.version) };
  },
  errorResponse(req, errorCode, _message, version) {
    return { throttleTimeMs: 0, resultsByTopicV3AndBelow: everyPartition(req.v3AndBelowTopics as TopicPartitions[], clientCode(errorCode, version, CODES)) };
  },
};
