// AddPartitionsToTxn (key 24), v0-5, flexible from v3. A transactional
// producer adds partitions to its open transaction before it writes to them.
// v0-3 are the client's form (one transaction); v4+ is the broker's batched
// form (many transactions, verifyOnly: KIP-890's "is this partition in the
// transaction?" check by a partition leader). v2 adds PRODUCER_FENCED, v5
// TRANSACTION_ABORTABLE (error codes only).
//
//   request  v4+: transactions [transactionalId, producerId int64, producerEpoch int16, verifyOnly bool (false),
//                               topics [name, partitions [int32]]],
//            v0-3: v3AndBelowTransactionalId, v3AndBelowProducerId int64, v3AndBelowProducerEpoch int16,
//                  v3AndBelowTopics [name, partitions [int32]]
//   response throttleTimeMs, v4+: errorCode,
//            v4+: resultsByTransaction [transactionalId, topicResults [Result]],
//            v0-3: resultsByTopicV3AndBelow [Result]
//            Result = name, resultsByPartition [partitionIndex int32, partitionErrorCode int16]
import { f, message, type FieldSpec, type KafkaApiSpec } from '../../schema.js';

const topics = (name: string, v: string): FieldSpec => f.array(name, v, [f.string('name'), f.array('partitions', '0+', 'int32')]);
const topicResults = (name: string, v: string): FieldSpec => f.array(name, v, [
  f.string('name'),
  f.array('resultsByPartition', '0+', [f.int32('partitionIndex'), f.int16('partitionErrorCode')]),
]);

export const addPartitionsToTxn: KafkaApiSpec = {
  apiKey: 24,
  name: 'AddPartitionsToTxn',
  request: message('AddPartitionsToTxnRequest', 24, '0-5', '3+', [
    f.array('transactions', '4+', [
      f.string('transactionalId', '4+'),
      f.int64('producerId', '4+'),
      f.int16('producerEpoch', '4+'),
      f.bool('verifyOnly', '4+', { default: false }),
      topics('topics', '4+'),
    ]),
    f.string('v3AndBelowTransactionalId', '0-3'),
    f.int64('v3AndBelowProducerId', '0-3'),
    f.int16('v3AndBelowProducerEpoch', '0-3'),
    topics('v3AndBelowTopics', '0-3'),
  ]),
  response: message('AddPartitionsToTxnResponse', 24, '0-5', '3+', [
    f.int32('throttleTimeMs'),
    f.int16('errorCode', '4+'),
    f.array('resultsByTransaction', '4+', [f.string('transactionalId', '4+'), topicResults('topicResults', '4+')]),
    topicResults('resultsByTopicV3AndBelow', '0-3'),
  ]),
};
