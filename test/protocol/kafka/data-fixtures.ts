// The values the golden frames of Produce, Fetch, ListOffsets and
// OffsetForLeaderEpoch were written from, one request and one response per
// served version, with every field of that version set to a non-default value
// where the spec allows it (so a field read from the wrong place, or left
// out, changes the bytes). Run this module directly to rewrite the fixtures:
//   node dist/test/protocol/kafka/data-fixtures.js
// and review the hex against the spec before committing it.

import { encodeRecordBatch } from '../../../src/record/record-batch.js';
import type { Struct } from '../../../src/protocol/kafka/message.js';
import type { KafkaApiSpec } from '../../../src/protocol/kafka/schema.js';
import { produce } from '../../../src/protocol/kafka/apis/produce/schema.js';
import { fetch } from '../../../src/protocol/kafka/apis/fetch/schema.js';
import { listOffsets } from '../../../src/protocol/kafka/apis/list-offsets/schema.js';
import { offsetForLeaderEpoch } from '../../../src/protocol/kafka/apis/offset-for-leader-epoch/schema.js';
import { writeGolden } from './golden.js';

/** One small uncompressed batch: key "k", value "v", at a fixed time. */
export const BATCH = encodeRecordBatch({ records: [{ key: Buffer.from('k'), value: Buffer.from('v'), timestamp: 1_700_000_000_000 }] });
const TOPIC_ID = '0123456789abcdef0123456789abcdef';

export interface DataApi {
  readonly dir: string;
  readonly spec: KafkaApiSpec;
  readonly versions: readonly number[];
  request(v: number): Struct;
  response(v: number): Struct;
}

const range = (min: number, max: number): number[] => Array.from({ length: max - min + 1 }, (_, i) => min + i);

export const DATA_APIS: readonly DataApi[] = [
  {
    dir: 'produce', spec: produce, versions: range(3, 11),
    request: () => ({ transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: 'orders', partitionData: [{ index: 2, records: BATCH }] }] }),
    response: (v) => ({
      responses: [{
        name: 'orders',
        partitionResponses: [
          { index: 2, errorCode: 0, baseOffset: 41, logAppendTimeMs: -1, logStartOffset: 7, recordErrors: [], errorMessage: null },
          { index: 3, errorCode: 6, baseOffset: -1, logAppendTimeMs: -1, logStartOffset: -1, recordErrors: [{ batchIndex: 0, batchIndexErrorMessage: 'moved' }], errorMessage: 'not the leader', ...(v >= 10 ? { currentLeader: { leaderId: 2, leaderEpoch: 5 } } : {}) },
        ],
      }],
      throttleTimeMs: 0,
      ...(v >= 10 ? { nodeEndpoints: [{ nodeId: 2, host: 'b2', port: 9093, rack: null }] } : {}),
    }),
  },
  {
    dir: 'fetch', spec: fetch, versions: range(4, 17),
    request: (v) => ({
      ...(v >= 12 ? { clusterId: 'c1' } : {}),
      replicaId: -1,
      // v15+: a consumer leaves the tagged replicaState out (its default, as Kafka's classes write it).
      maxWaitMs: 500, minBytes: 1, maxBytes: 52_428_800, isolationLevel: 1, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'orders', topicId: TOPIC_ID, partitions: [{ partition: 2, currentLeaderEpoch: 4, fetchOffset: 41, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 1_048_576 }] }],
      forgottenTopicsData: [{ topic: 'old', topicId: TOPIC_ID, partitions: [0, 1] }],
      rackId: 'r1',
    }),
    response: (v) => ({
      throttleTimeMs: 0, errorCode: 0, sessionId: 0,
      responses: [{
        topic: 'orders', topicId: TOPIC_ID,
        partitions: [
          { partitionIndex: 2, errorCode: 0, highWatermark: 42, lastStableOffset: 42, logStartOffset: 7, abortedTransactions: [], preferredReadReplica: -1, records: BATCH },
          { partitionIndex: 3, errorCode: 74, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, abortedTransactions: null, preferredReadReplica: -1, records: Buffer.alloc(0), ...(v >= 12 ? { currentLeader: { leaderId: 2, leaderEpoch: 5 } } : {}) },
        ],
      }],
      ...(v >= 16 ? { nodeEndpoints: [{ nodeId: 2, host: 'b2', port: 9093, rack: 'r1' }] } : {}),
    }),
  },
  {
    dir: 'list-offsets', spec: listOffsets, versions: range(1, 10),
    request: (v) => ({
      replicaId: -1, isolationLevel: 1,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 2, currentLeaderEpoch: 4, timestamp: v >= 7 ? -3 : -1 }, { partitionIndex: 3, currentLeaderEpoch: -1, timestamp: 1_700_000_000_000 }] }],
      timeoutMs: 5_000,
    }),
    response: () => ({
      throttleTimeMs: 0,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 2, errorCode: 0, timestamp: 1_700_000_000_000, offset: 41, leaderEpoch: 4 }, { partitionIndex: 3, errorCode: 6, timestamp: -1, offset: -1, leaderEpoch: -1 }] }],
    }),
  },
  {
    dir: 'offset-for-leader-epoch', spec: offsetForLeaderEpoch, versions: range(2, 4),
    request: () => ({ replicaId: -2, topics: [{ topic: 'orders', partitions: [{ partition: 2, currentLeaderEpoch: 5, leaderEpoch: 3 }] }] }),
    response: () => ({ throttleTimeMs: 0, topics: [{ topic: 'orders', partitions: [{ errorCode: 0, partition: 2, leaderEpoch: 3, endOffset: 40 }, { errorCode: 74, partition: 3, leaderEpoch: -1, endOffset: -1 }] }] }),
  },
];

if (process.argv[1]?.endsWith('data-fixtures.js')) {
  for (const api of DATA_APIS) {
    for (const v of api.versions) {
      writeGolden(api.spec, api.dir, v, 'request', api.request(v), `${api.spec.name} v${v} request`);
      writeGolden(api.spec, api.dir, v, 'response', api.response(v), `${api.spec.name} v${v} response`);
    }
  }
}
