// Sample request and response bodies of the admin APIs, one per API, with a
// value in every field of every version (the codec writes only the fields of
// the version at hand). make-admin-fixtures.ts wrote the golden frames under
// fixtures/<api>/ from these once; admin-golden.test.ts checks the frames
// against the tables and against the values here.

import type { Struct } from '../../../src/protocol/kafka/message.js';
import type { KafkaApiSpec } from '../../../src/protocol/kafka/schema.js';
import { createTopics } from '../../../src/protocol/kafka/apis/create-topics/schema.js';
import { deleteTopics } from '../../../src/protocol/kafka/apis/delete-topics/schema.js';
import { deleteRecords } from '../../../src/protocol/kafka/apis/delete-records/schema.js';
import { describeConfigs } from '../../../src/protocol/kafka/apis/describe-configs/schema.js';
import { alterConfigs } from '../../../src/protocol/kafka/apis/alter-configs/schema.js';
import { describeLogDirs } from '../../../src/protocol/kafka/apis/describe-log-dirs/schema.js';
import { createPartitions } from '../../../src/protocol/kafka/apis/create-partitions/schema.js';
import { electLeaders } from '../../../src/protocol/kafka/apis/elect-leaders/schema.js';
import { incrementalAlterConfigs } from '../../../src/protocol/kafka/apis/incremental-alter-configs/schema.js';
import { alterPartitionReassignments } from '../../../src/protocol/kafka/apis/alter-partition-reassignments/schema.js';
import { listPartitionReassignments } from '../../../src/protocol/kafka/apis/list-partition-reassignments/schema.js';
import { describeCluster } from '../../../src/protocol/kafka/apis/describe-cluster/schema.js';
import { describeAcls } from '../../../src/protocol/kafka/apis/describe-acls/schema.js';
import { createAcls } from '../../../src/protocol/kafka/apis/create-acls/schema.js';
import { deleteAcls } from '../../../src/protocol/kafka/apis/delete-acls/schema.js';
import { describeClientQuotas } from '../../../src/protocol/kafka/apis/describe-client-quotas/schema.js';
import { alterClientQuotas } from '../../../src/protocol/kafka/apis/alter-client-quotas/schema.js';

export interface AdminSample {
  readonly dir: string;
  readonly spec: KafkaApiSpec;
  /** The versions the listener serves. */
  readonly versions: readonly number[];
  readonly request: Struct;
  readonly response: Struct;
}

const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const TOPIC_ID = '0123456789abcdef0123456789abcdef';

export const ADMIN_SAMPLES: readonly AdminSample[] = [
  {
    dir: 'create-topics', spec: createTopics, versions: range(2, 7),
    request: {
      topics: [
        { name: 'orders', numPartitions: 3, replicationFactor: 2, assignments: [], configs: [{ name: 'retention.ms', value: '60000' }, { name: 'cleanup.policy', value: null }] },
        { name: 'placed', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [1, 2] }], configs: [] },
      ],
      timeoutMs: 30000, validateOnly: true,
    },
    response: {
      throttleTimeMs: 0,
      topics: [
        {
          name: 'orders', topicId: TOPIC_ID, errorCode: 0, errorMessage: null, topicConfigErrorCode: 40, numPartitions: 3, replicationFactor: 2,
          configs: [{ name: 'retention.ms', value: '60000', readOnly: false, configSource: 1, isSensitive: false }],
        },
        { name: 'taken', errorCode: 36, errorMessage: 'TOPIC_ALREADY_EXISTS: topic taken already exists', configs: null },
      ],
    },
  },
  {
    dir: 'delete-topics', spec: deleteTopics, versions: range(1, 6),
    request: { topics: [{ name: 'orders', topicId: '00000000000000000000000000000000' }, { name: null, topicId: TOPIC_ID }], topicNames: ['orders', 'gone'], timeoutMs: 30000 },
    response: {
      throttleTimeMs: 5,
      responses: [{ name: 'orders', topicId: TOPIC_ID, errorCode: 0, errorMessage: null }, { name: 'gone', errorCode: 3, errorMessage: 'UNKNOWN_TOPIC_OR_PARTITION: topic gone does not exist' }],
    },
  },
  {
    dir: 'delete-records', spec: deleteRecords, versions: range(0, 2),
    request: { topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, offset: 42 }, { partitionIndex: 1, offset: -1 }] }], timeoutMs: 30000 },
    response: { throttleTimeMs: 0, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, lowWatermark: 42, errorCode: 0 }, { partitionIndex: 1, lowWatermark: -1, errorCode: 6 }] }] },
  },
  {
    dir: 'describe-configs', spec: describeConfigs, versions: range(1, 4),
    request: {
      resources: [{ resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms'] }, { resourceType: 4, resourceName: '', configurationKeys: null }],
      includeSynonyms: true, includeDocumentation: true,
    },
    response: {
      throttleTimeMs: 0,
      results: [{
        errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 'orders',
        configs: [{
          name: 'retention.ms', value: '60000', readOnly: false, isDefault: false, configSource: 1, isSensitive: false,
          synonyms: [{ name: 'retention.ms', value: '60000', source: 1 }, { name: 'log.retention.ms', value: '604800000', source: 5 }],
          configType: 5, documentation: 'Delete closed segments older than this',
        }],
      }, { errorCode: 42, errorMessage: 'INVALID_REQUEST: no broker 9', resourceType: 4, resourceName: '9', configs: [] }],
    },
  },
  {
    dir: 'alter-configs', spec: alterConfigs, versions: range(0, 2),
    request: { resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', value: '1000' }, { name: 'segment.bytes', value: null }] }], validateOnly: false },
    response: { throttleTimeMs: 0, responses: [{ errorCode: 40, errorMessage: 'INVALID_CONFIG: unknown topic config x', resourceType: 2, resourceName: 'orders' }] },
  },
  {
    dir: 'describe-log-dirs', spec: describeLogDirs, versions: range(1, 4),
    request: { topics: [{ topic: 'orders', partitions: [0, 1] }] },
    response: {
      throttleTimeMs: 0, errorCode: 0,
      results: [{
        errorCode: 0, logDir: '/var/sluice/node-1',
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, partitionSize: 1048576, offsetLag: 0, isFutureKey: false }] }],
        totalBytes: 107374182400, usableBytes: 53687091200,
      }],
    },
  },
  {
    dir: 'create-partitions', spec: createPartitions, versions: range(0, 3),
    request: { topics: [{ name: 'orders', count: 6, assignments: [{ brokerIds: [1, 2] }, { brokerIds: [2, 3] }] }, { name: 'events', count: 4, assignments: null }], timeoutMs: 30000, validateOnly: true },
    response: { throttleTimeMs: 0, results: [{ name: 'orders', errorCode: 0, errorMessage: null }, { name: 'events', errorCode: 37, errorMessage: 'INVALID_PARTITIONS: too few' }] },
  },
  {
    dir: 'elect-leaders', spec: electLeaders, versions: range(0, 2),
    request: { electionType: 1, topicPartitions: [{ topic: 'orders', partitions: [0, 2] }], timeoutMs: 30000 },
    response: {
      throttleTimeMs: 0, errorCode: 0,
      replicaElectionResults: [{ topic: 'orders', partitionResult: [{ partitionId: 0, errorCode: 0, errorMessage: null }, { partitionId: 2, errorCode: 84, errorMessage: 'ELECTION_NOT_NEEDED: has a leader' }] }],
    },
  },
  {
    dir: 'incremental-alter-configs', spec: incrementalAlterConfigs, versions: range(0, 1),
    request: {
      resources: [{ resourceType: 4, resourceName: '', configs: [{ name: 'log.retention.ms', configOperation: 0, value: '3600000' }, { name: 'num.partitions', configOperation: 1, value: null }] }],
      validateOnly: true,
    },
    response: { throttleTimeMs: 0, responses: [{ errorCode: 0, errorMessage: null, resourceType: 4, resourceName: '' }] },
  },
  {
    dir: 'alter-partition-reassignments', spec: alterPartitionReassignments, versions: [0],
    request: { timeoutMs: 60000, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, replicas: [3, 1] }, { partitionIndex: 1, replicas: null }] }] },
    response: {
      throttleTimeMs: 0, errorCode: 0, errorMessage: null,
      responses: [{ name: 'orders', partitions: [{ partitionIndex: 0, errorCode: 0, errorMessage: null }, { partitionIndex: 1, errorCode: 85, errorMessage: 'NO_REASSIGNMENT_IN_PROGRESS: none' }] }],
    },
  },
  {
    dir: 'list-partition-reassignments', spec: listPartitionReassignments, versions: [0],
    request: { timeoutMs: 60000, topics: [{ name: 'orders', partitionIndexes: [0] }] },
    response: {
      throttleTimeMs: 0, errorCode: 0, errorMessage: null,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, replicas: [3, 1, 2], addingReplicas: [3], removingReplicas: [2] }] }],
    },
  },
  {
    dir: 'describe-cluster', spec: describeCluster, versions: range(0, 1),
    request: { includeClusterAuthorizedOperations: true, endpointType: 1 },
    response: {
      throttleTimeMs: 0, errorCode: 0, errorMessage: null, endpointType: 1, clusterId: 'q1Sh-9_ISia_zwGINzRvyQ', controllerId: 2,
      brokers: [{ brokerId: 1, host: '127.0.0.1', port: 9192, rack: null }, { brokerId: 2, host: 'b2.local', port: 9193, rack: 'r2' }],
      clusterAuthorizedOperations: 8096,
    },
  },
  {
    dir: 'describe-acls', spec: describeAcls, versions: range(1, 3),
    request: { resourceTypeFilter: 2, resourceNameFilter: 'orders', patternTypeFilter: 2, principalFilter: null, hostFilter: '*', operation: 1, permissionType: 3 },
    response: {
      throttleTimeMs: 0, errorCode: 0, errorMessage: null,
      resources: [
        { resourceType: 2, resourceName: 'orders', patternType: 3, acls: [{ principal: 'User:alice', host: '*', operation: 3, permissionType: 3 }] },
        { resourceType: 2, resourceName: 'ord', patternType: 4, acls: [{ principal: 'User:*', host: '10.0.0.1', operation: 8, permissionType: 2 }] },
      ],
    },
  },
  {
    dir: 'create-acls', spec: createAcls, versions: range(1, 3),
    request: {
      creations: [
        { resourceType: 2, resourceName: 'orders', resourcePatternType: 3, principal: 'User:alice', host: '*', operation: 3, permissionType: 3 },
        { resourceType: 4, resourceName: 'kafka-cluster', resourcePatternType: 3, principal: 'User:ops', host: '*', operation: 7, permissionType: 3 },
      ],
    },
    response: { throttleTimeMs: 0, results: [{ errorCode: 0, errorMessage: null }, { errorCode: 42, errorMessage: 'INVALID_REQUEST: bad' }] },
  },
  {
    dir: 'delete-acls', spec: deleteAcls, versions: range(1, 3),
    request: { filters: [{ resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: 'User:alice', hostFilter: null, operation: 1, permissionType: 1 }] },
    response: {
      throttleTimeMs: 0,
      filterResults: [{
        errorCode: 0, errorMessage: null,
        matchingAcls: [{ errorCode: 0, errorMessage: null, resourceType: 3, resourceName: 'billing', patternType: 4, principal: 'User:alice', host: '*', operation: 3, permissionType: 3 }],
      }],
    },
  },
  {
    dir: 'describe-client-quotas', spec: describeClientQuotas, versions: range(0, 1),
    request: { components: [{ entityType: 'user', matchType: 0, match: 'alice' }, { entityType: 'client-id', matchType: 1, match: null }], strict: true },
    response: {
      throttleTimeMs: 7, errorCode: 0, errorMessage: null,
      entries: [{ entity: [{ entityType: 'user', entityName: 'alice' }, { entityType: 'client-id', entityName: null }], values: [{ key: 'producer_byte_rate', value: 1048576 }, { key: 'request_percentage', value: 12.5 }] }],
    },
  },
  {
    dir: 'alter-client-quotas', spec: alterClientQuotas, versions: range(0, 1),
    request: {
      entries: [{ entity: [{ entityType: 'user', entityName: null }], ops: [{ key: 'consumer_byte_rate', value: 2097152, remove: false }, { key: 'producer_byte_rate', value: 0, remove: true }] }],
      validateOnly: false,
    },
    response: { throttleTimeMs: 0, entries: [{ errorCode: 42, errorMessage: 'INVALID_REQUEST: invalid configuration key x', entity: [{ entityType: 'user', entityName: null }] }] },
  },
];
