// DescribeTransactions and ListTransactions on the Kafka listener (what
// kafka-transactions.sh describe / list / find-hanging send): the
// transaction coordinator's view of the transactional ids whose
// __transaction_state partitions this broker leads. An id another broker
// coordinates is answered NOT_COORDINATOR by the coordinator (the tool asks
// FindCoordinator first); ListTransactions lists this broker's only, as
// Kafka's does (the tool asks every broker). v0 / v0-1 are served.

import { describeTransactions } from '../../protocol/kafka/apis/describe-transactions/schema.js';
import { listTransactions } from '../../protocol/kafka/apis/list-transactions/schema.js';
import { parseDescribeTransactionsRequest, parseListTransactionsRequest } from '../../protocol/apis/transactions.js';
import { transactionsOf } from '../txn-api.js';
import type { KafkaApiHandler } from './api.js';

export const describeTransactionsHandler: KafkaApiHandler = {
  spec: describeTransactions,
  minVersion: 0,
  maxVersion: 0,
  handle(req, ctx) {
    const res = transactionsOf(ctx.deps).describeTransactions(parseDescribeTransactionsRequest(req));
    return {
      throttleTimeMs: 0,
      transactionStates: res.transactionStates.map((t) => ({
        errorCode: t.errorCode, transactionalId: t.transactionalId, transactionState: t.transactionState,
        transactionTimeoutMs: t.transactionTimeoutMs, transactionStartTimeMs: t.transactionStartTimeMs,
        producerId: t.producerId, producerEpoch: t.producerEpoch,
        topics: t.topics.map((x) => ({ topic: x.name, partitions: x.partitions })),
      })),
    };
  },
  errorResponse(req, errorCode) {
    return {
      throttleTimeMs: 0,
      transactionStates: (req.transactionalIds as string[]).map((transactionalId) => ({
        errorCode, transactionalId, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1, producerId: -1, producerEpoch: -1, topics: [],
      })),
    };
  },
};

export const listTransactionsHandler: KafkaApiHandler = {
  spec: listTransactions,
  minVersion: 0,
  maxVersion: 1,
  handle(req, ctx) {
    const res = transactionsOf(ctx.deps).listTransactions(parseListTransactionsRequest({
      stateFilters: req.stateFilters, producerIdFilters: req.producerIdFilters, durationFilterMs: req.durationFilter,
    }));
    return {
      throttleTimeMs: 0, errorCode: res.errorCode, unknownStateFilters: res.unknownStateFilters,
      transactionStates: res.transactionStates.map((t) => ({ transactionalId: t.transactionalId, producerId: t.producerId, transactionState: t.transactionState })),
    };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, unknownStateFilters: [], transactionStates: [] };
  },
};
