// ListTransactions (key 66), v0-1, flexible. The transactions a broker's
// coordinator holds, filtered by state and producer id; v1 also by how long
// they have been open (kafka-transactions.sh list / find-hanging).
//
//   request  stateFilters [string], producerIdFilters [int64], v1+: durationFilter int64 (default -1)
//   response throttleTimeMs, errorCode, unknownStateFilters [string],
//            transactionStates [transactionalId, producerId int64, transactionState]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const listTransactions: KafkaApiSpec = {
  apiKey: 66,
  name: 'ListTransactions',
  request: message('ListTransactionsRequest', 66, '0-1', '0+', [
    f.array('stateFilters', '0+', 'string'),
    f.array('producerIdFilters', '0+', 'int64'),
    f.int64('durationFilter', '1+', { default: -1 }),
  ]),
  response: message('ListTransactionsResponse', 66, '0-1', '0+', [
    f.int32('throttleTimeMs'),
    f.int16('errorCode'),
    f.array('unknownStateFilters', '0+', 'string'),
    f.array('transactionStates', '0+', [
      f.string('transactionalId'),
      f.int64('producerId'),
      f.string('transactionState'),
    ]),
  ]),
};
