// DescribeCluster (key 60), v0-1, flexible in every version. The brokers (by
// their Kafka endpoint), the controller id and the cluster id; v1 lets the
// client ask for controllers instead (endpointType 2).
//
//   request  includeClusterAuthorizedOperations bool, v1+: endpointType int8 (default 1 = brokers)
//   response throttleTimeMs, errorCode, errorMessage (nullable, default null), v1+: endpointType int8 (1),
//            clusterId, controllerId int32 (-1), brokers [brokerId, host, port, rack (nullable, default null)],
//            clusterAuthorizedOperations int32 (default -2^31: not asked)
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const describeCluster: KafkaApiSpec = {
  apiKey: 60,
  name: 'DescribeCluster',
  request: message('DescribeClusterRequest', 60, '0-1', '0+', [
    f.bool('includeClusterAuthorizedOperations'),
    f.int8('endpointType', '1+', { default: 1 }),
  ]),
  response: message('DescribeClusterResponse', 60, '0-1', '0+', [
    f.int32('throttleTimeMs'),
    f.int16('errorCode'),
    f.string('errorMessage', '0+', { nullable: '0+', default: null }),
    f.int8('endpointType', '1+', { default: 1 }),
    f.string('clusterId'),
    f.int32('controllerId', '0+', { default: -1 }),
    f.array('brokers', '0+', [
      f.int32('brokerId'), f.string('host'), f.int32('port'), f.string('rack', '0+', { nullable: '0+', default: null }),
    ]),
    f.int32('clusterAuthorizedOperations', '0+', { default: -2147483648 }),
  ]),
};
