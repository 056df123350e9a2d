// DescribeTransactions (key 65), v0, flexible. The state of transactional ids
// at their coordinator (kafka-transactions.sh describe).
//
//   request  transactionalIds [string]
//   response throttleTimeMs, transactionStates [errorCode, transactionalId, transactionState, transactionTimeoutMs,
//            transactionStartTimeMs int64, producerId int64, producerEpoch int16, topics [topic, partitions [int32]]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const describeTransactions: KafkaApiSpec = {
  apiKey: 65,
  name: 'DescribeTransactions',
  request: message('DescribeTransactionsRequest', 65, '0', '0+', [
    f.array('transactionalIds', '0+', 'string'),
  ]),
  response: message('DescribeTransactionsResponse', 65, '0', '0+', [
    f.int32('throttleTimeMs'),
    f.array('transactionStates', '0+', [
      f.int16('errorCode'),
      f.string('transactionalId'),
      f.string('transactionState'),
      f.int32('transactionTimeoutMs'),
      f.int64('transactionStartTimeMs'),
      f.int64('producerId'),
      f.int16('producerEpoch'),
      f.array('topics', '0+', [f.string('topic'), f.array('partitions', '0+', 'int32')]),
    ]),
  ]),
};
