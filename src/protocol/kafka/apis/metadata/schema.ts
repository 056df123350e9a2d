// Metadata (key 3), v0-12, flexible from v9. Brokers (their Kafka endpoints),
// the controller id, and topics with their partitions' leader, epochs,
// replicas and ISR.
//
//   request  topics [v10+: topicId uuid, name string (nullable v10+)] (nullable v1+: null = all topics),
//            v4+: allowAutoTopicCreation bool, v8-10: includeClusterAuthorizedOperations bool,
//            v8+: includeTopicAuthorizedOperations bool
//   response v3+: throttleTimeMs, brokers [nodeId, host, port, v1+: rack (nullable)],
//            v2+: clusterId (nullable), v1+: controllerId,
//            topics [errorCode, name (nullable v12+), v10+: topicId, v1+: isInternal,
//                    partitions [errorCode, partitionIndex, leaderId, v7+: leaderEpoch, replicaNodes [int32],
//                                isrNodes [int32], v5+: offlineReplicas [int32]],
//                    v8+: topicAuthorizedOperations int32],
//            v8-10: clusterAuthorizedOperations int32
import { f, message, type KafkaApiSpec } from '../../schema.js';

const UNKNOWN_OPERATIONS = -2147483648;

export const metadata: KafkaApiSpec = {
  apiKey: 3,
  name: 'Metadata',
  request: message('MetadataRequest', 3, '0-12', '9+', [
    f.array('topics', '0+', [f.uuid('topicId', '10+'), f.string('name', '0+', { nullable: '10+' })], { nullable: '1+' }),
    f.bool('allowAutoTopicCreation', '4+', { default: true }),
    f.bool('includeClusterAuthorizedOperations', '8-10'),
    f.bool('includeTopicAuthorizedOperations', '8+'),
  ]),
  response: message('MetadataResponse', 3, '0-12', '9+', [
    f.int32('throttleTimeMs', '3+'),
    f.array('brokers', '0+', [
      f.int32('nodeId'), f.string('host'), f.int32('port'), f.string('rack', '1+', { nullable: '1+' }),
    ]),
    f.string('clusterId', '2+', { nullable: '2+' }),
    f.int32('controllerId', '1+', { default: -1 }),
    f.array('topics', '0+', [
      f.int16('errorCode'),
      f.string('name', '0+', { nullable: '12+' }),
      f.uuid('topicId', '10+'),
      f.bool('isInternal', '1+'),
      f.array('partitions', '0+', [
        f.int16('errorCode'),
        f.int32('partitionIndex'),
        f.int32('leaderId'),
        f.int32('leaderEpoch', '7+', { default: -1 }),
        f.array('replicaNodes', '0+', 'int32'),
        f.array('isrNodes', '0+', 'int32'),
        f.array('offlineReplicas', '5+', 'int32'),
      ]),
      f.int32('topicAuthorizedOperations', '8+', { default: UNKNOWN_OPERATIONS }),
    ]),
    f.int32('clusterAuthorizedOperations', '8-10', { default: UNKNOWN_OPERATIONS }),
  ]),
};
