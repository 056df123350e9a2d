// Sample request and response bodies of the transaction APIs, one per API,
// with a value in every field of every version of its table (the codec
// writes only the fields of the version at hand). make-txn-fixtures.ts wrote
// the golden frames under fixtures/<api>/ from these once; txn-golden.test.ts
// checks the frames against the tables, against these values, and a few of
// them byte by byte against Kafka's message definitions.

import { addPartitionsToTxn } from '../../../src/protocol/kafka/apis/add-partitions-to-txn/schema.js';
import { addOffsetsToTxn } from '../../../src/protocol/kafka/apis/add-offsets-to-txn/schema.js';
import { endTxn } from '../../../src/protocol/kafka/apis/end-txn/schema.js';
import { txnOffsetCommit } from '../../../src/protocol/kafka/apis/txn-offset-commit/schema.js';
import { describeTransactions } from '../../../src/protocol/kafka/apis/describe-transactions/schema.js';
import { listTransactions } from '../../../src/protocol/kafka/apis/list-transactions/schema.js';
import type { AdminSample } from './admin-samples.js';

const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

/** Here `versions` is every version of the table, which may be more than the listener serves (AddPartitionsToTxn v4-5, EndTxn v5). */
export const TXN_SAMPLES: readonly AdminSample[] = [
  {
    dir: 'add-partitions-to-txn', spec: addPartitionsToTxn, versions: range(0, 5),
    request: {
      transactions: [
        { transactionalId: 'tx-1', producerId: 1000, producerEpoch: 3, verifyOnly: true, topics: [{ name: 'orders', partitions: [0, 2] }] },
        { transactionalId: 'tx-2', producerId: 1001, producerEpoch: 0, verifyOnly: false, topics: [] },
      ],
      v3AndBelowTransactionalId: 'tx-1', v3AndBelowProducerId: 1000, v3AndBelowProducerEpoch: 3,
      v3AndBelowTopics: [{ name: 'orders', partitions: [0, 2] }, { name: 'audit', partitions: [1] }],
    },
    response: {
      throttleTimeMs: 0, errorCode: 0,
      resultsByTransaction: [
        { transactionalId: 'tx-1', topicResults: [{ name: 'orders', resultsByPartition: [{ partitionIndex: 0, partitionErrorCode: 0 }, { partitionIndex: 2, partitionErrorCode: 48 }] }] },
      ],
      resultsByTopicV3AndBelow: [
        { name: 'orders', resultsByPartition: [{ partitionIndex: 0, partitionErrorCode: 0 }, { partitionIndex: 2, partitionErrorCode: 0 }] },
        { name: 'audit', resultsByPartition: [{ partitionIndex: 1, partitionErrorCode: 29 }] },
      ],
    },
  },
  {
    dir: 'add-offsets-to-txn', spec: addOffsetsToTxn, versions: range(0, 4),
    request: { transactionalId: 'tx-1', producerId: 1000, producerEpoch: 3, groupId: 'g1' },
    response: { throttleTimeMs: 0, errorCode: 51 },
  },
  {
    dir: 'end-txn', spec: endTxn, versions: range(0, 5),
    request: { transactionalId: 'tx-1', producerId: 1000, producerEpoch: 3, committed: true },
    response: { throttleTimeMs: 0, errorCode: 0, producerId: 1000, producerEpoch: 4 },
  },
  {
    dir: 'txn-offset-commit', spec: txnOffsetCommit, versions: range(0, 4),
    request: {
      transactionalId: 'tx-1', groupId: 'g1', producerId: 1000, producerEpoch: 3, generationId: 7, memberId: 'c-1', groupInstanceId: null,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 42, committedLeaderEpoch: 2, committedMetadata: 'm' }, { partitionIndex: 1, committedOffset: 7, committedLeaderEpoch: -1, committedMetadata: null }] }],
    },
    response: { throttleTimeMs: 0, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, errorCode: 0 }, { partitionIndex: 1, errorCode: 22 }] }] },
  },
  {
    dir: 'describe-transactions', spec: describeTransactions, versions: [0],
    request: { transactionalIds: ['tx-1', 'tx-2'] },
    response: {
      throttleTimeMs: 0,
      transactionStates: [
        {
          errorCode: 0, transactionalId: 'tx-1', transactionState: 'Ongoing', transactionTimeoutMs: 60000, transactionStartTimeMs: 1_700_000_000_000,
          producerId: 1000, producerEpoch: 3, topics: [{ topic: 'orders', partitions: [0, 2] }],
        },
        { errorCode: 105, transactionalId: 'tx-2', transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1, producerId: -1, producerEpoch: -1, topics: [] },
      ],
    },
  },
  {
    dir: 'list-transactions', spec: listTransactions, versions: range(0, 1),
    request: { stateFilters: ['Ongoing'], producerIdFilters: [1000], durationFilter: 30000 },
    response: {
      throttleTimeMs: 0, errorCode: 0, unknownStateFilters: ['Sleeping'],
      transactionStates: [{ transactionalId: 'tx-1', producerId: 1000, transactionState: 'Ongoing' }],
    },
  },
];
