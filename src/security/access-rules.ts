// THE table of what each API needs once an authorizer is on: API key →
// the operations it must be allowed, on which resources (Kafka's rules, from
// KafkaApis and the Kafka docs' "operations and resources on protocols"
// table). Both client protocols use the same API numbers for the same
// operations, and both enforce through src/server/access-control.ts, which
// reads only this table: a rule holds whichever protocol a client speaks.
// docs/security.md prints it.
//
// How the fields combine, per request:
//   cluster   needed on the cluster for the whole request (else the request
//             fails with CLUSTER_AUTHORIZATION_FAILED in the API's own shape);
//             `orAnyTopic` also satisfies it (Kafka's authorizeByResourceType);
//   topic     needed on each topic the request names: refused topics are
//             answered TOPIC_AUTHORIZATION_FAILED (or left out of "every
//             topic" listings), the others are served; `clusterCovers`,
//             when allowed on the cluster, stands in for it on every topic;
//   group     needed on the group(s) named: GROUP_AUTHORIZATION_FAILED;
//   transactionalId  needed on a transactional id the request carries
//             (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED); listings
//             (ListTransactions) leave out the ids it does not hold on;
//   clusterUnlessTransactional  `cluster` is asked only of a request
//             without a transactional id; one with an id needs
//             `transactionalId` on it instead (InitProducerId: an idempotent
//             producer needs IdempotentWrite, a transactional one Write on
//             its id — Kafka's handleInitProducerIdRequest);
//   replica   what a broker's own form of the request needs on the cluster
//             instead of the rest: a follower's fetch (replicaId >= 0), a
//             partition leader's AddPartitionsToTxn verifyOnly (KIP-890);
//   configResource  needed on a config resource: on the topic for a topic
//             resource, on the cluster for a broker or cluster resource;
//   create    Metadata's auto-creation: needed on the cluster or the topic.
// An API with no entry is refused outright (fail closed); a test checks
// every served API has one.

import { AclOperation as Op, type AclOperationCode } from './acl.js';

export interface AccessRule {
  readonly api: string;
  readonly cluster?: AclOperationCode;
  readonly orAnyTopic?: AclOperationCode;
  readonly topic?: AclOperationCode;
  readonly clusterCovers?: AclOperationCode;
  readonly group?: AclOperationCode;
  readonly transactionalId?: AclOperationCode;
  readonly clusterUnlessTransactional?: boolean;
  readonly replica?: AclOperationCode;
  readonly configResource?: AclOperationCode;
  readonly create?: AclOperationCode;
}

const rule = (api: string, r: Omit<AccessRule, 'api'> = {}): AccessRule => Object.freeze({ api, ...r });

export const ACCESS_RULES: ReadonlyMap<number, AccessRule> = new Map([
  [0, rule('Produce', { topic: Op.WRITE, transactionalId: Op.WRITE })],
  [1, rule('Fetch', { topic: Op.READ, replica: Op.CLUSTER_ACTION })],
  [2, rule('ListOffsets', { topic: Op.DESCRIBE })],
  [3, rule('Metadata', { topic: Op.DESCRIBE, create: Op.CREATE })],
  [7, rule('ControlledShutdown', { cluster: Op.CLUSTER_ACTION })],
  [8, rule('OffsetCommit', { group: Op.READ, topic: Op.READ })],
  [9, rule('OffsetFetch', { group: Op.DESCRIBE, topic: Op.DESCRIBE })],
  [10, rule('FindCoordinator', { group: Op.DESCRIBE, transactionalId: Op.DESCRIBE })],
  [11, rule('JoinGroup', { group: Op.READ })],
  [12, rule('Heartbeat', { group: Op.READ })],
  [13, rule('LeaveGroup', { group: Op.READ })],
  [14, rule('SyncGroup', { group: Op.READ })],
  [15, rule('DescribeGroups', { group: Op.DESCRIBE })],
  // Describe on the cluster lists every group; without it, the groups the principal may describe.
  [16, rule('ListGroups', { group: Op.DESCRIBE, clusterCovers: Op.DESCRIBE })],
  [17, rule('SaslHandshake')],
  [18, rule('ApiVersions')],
  [19, rule('CreateTopics', { topic: Op.CREATE, clusterCovers: Op.CREATE })],
  [20, rule('DeleteTopics', { topic: Op.DELETE })],
  [21, rule('DeleteRecords', { topic: Op.DELETE })],
  [22, rule('InitProducerId', { cluster: Op.IDEMPOTENT_WRITE, orAnyTopic: Op.WRITE, transactionalId: Op.WRITE, clusterUnlessTransactional: true })],
  [23, rule('OffsetForLeaderEpoch', { topic: Op.DESCRIBE, replica: Op.CLUSTER_ACTION })],
  // Transactions (KIP-98), as Kafka's KafkaApis: a refused topic fails the whole AddPartitionsToTxn (the others OPERATION_NOT_ATTEMPTED).
  [24, rule('AddPartitionsToTxn', { transactionalId: Op.WRITE, topic: Op.WRITE, replica: Op.CLUSTER_ACTION })],
  [25, rule('AddOffsetsToTxn', { transactionalId: Op.WRITE, group: Op.READ })],
  [26, rule('EndTxn', { transactionalId: Op.WRITE })],
  // Coordinator → partition leader: only nodes write markers.
  [27, rule('WriteTxnMarkers', { cluster: Op.CLUSTER_ACTION })],
  [28, rule('TxnOffsetCommit', { transactionalId: Op.WRITE, group: Op.READ, topic: Op.READ })],
  [29, rule('DescribeAcls', { cluster: Op.DESCRIBE })],
  [30, rule('CreateAcls', { cluster: Op.ALTER })],
  [31, rule('DeleteAcls', { cluster: Op.ALTER })],
  [32, rule('DescribeConfigs', { configResource: Op.DESCRIBE_CONFIGS })],
  [33, rule('AlterConfigs', { configResource: Op.ALTER_CONFIGS })],
  [35, rule('DescribeLogDirs', { cluster: Op.DESCRIBE })],
  [36, rule('SaslAuthenticate')],
  [37, rule('CreatePartitions', { topic: Op.ALTER })],
  [42, rule('DeleteGroups', { group: Op.DELETE })],
  [43, rule('ElectLeaders', { cluster: Op.ALTER })],
  [44, rule('IncrementalAlterConfigs', { configResource: Op.ALTER_CONFIGS })],
  [45, rule('AlterPartitionReassignments', { cluster: Op.ALTER })],
  [46, rule('ListPartitionReassignments', { cluster: Op.DESCRIBE })],
  [47, rule('OffsetDelete', { group: Op.DELETE, topic: Op.READ })],
  [48, rule('DescribeClientQuotas', { cluster: Op.DESCRIBE_CONFIGS })],
  [49, rule('AlterClientQuotas', { cluster: Op.ALTER_CONFIGS })],
  [50, rule('DescribeUserScramCredentials', { cluster: Op.DESCRIBE })],
  [51, rule('AlterUserScramCredentials', { cluster: Op.ALTER })],
  // Kafka's DescribeQuorum needs Describe on the cluster (the web console's cluster view).
  [55, rule('DescribeQuorum', { cluster: Op.DESCRIBE })],
  [56, rule('AlterPartition', { cluster: Op.CLUSTER_ACTION })],
  // Open to every principal, as in Kafka: the answer's clusterAuthorizedOperations says what it may do.
  [60, rule('DescribeCluster')],
  [62, rule('BrokerRegistration', { cluster: Op.CLUSTER_ACTION })],
  [63, rule('BrokerHeartbeat', { cluster: Op.CLUSTER_ACTION })],
  // kafka-transactions.sh: a described transaction lists only the topics the principal may describe.
  [65, rule('DescribeTransactions', { transactionalId: Op.DESCRIBE, topic: Op.DESCRIBE })],
  [66, rule('ListTransactions', { transactionalId: Op.DESCRIBE })],
]);

/**
 * The controller listener's calls (the quorum wire's op 'controller', by
 * controller API name): a node's own business needs ClusterAction; the admin
 * calls a broker forwards for its clients were authorized on that broker and
 * arrive under the broker's principal, so they need ClusterAction too — as
 * Kafka's controller requires of forwarded (Envelope) requests.
 */
export const CONTROLLER_CALL_OPERATION: AclOperationCode = Op.CLUSTER_ACTION;
