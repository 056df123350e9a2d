// DescribeCluster on the Kafka listener, from this broker's image: the live
// brokers by their Kafka endpoint, the controller id clients may send admin
// requests to (cluster-view.ts), the cluster id. A v1 request for the
// controllers (endpointType 2) is MISMATCHED_ENDPOINT_TYPE, as a Kafka broker
// answers: Sluice's controllers speak its own quorum protocol, not Kafka's.
// The authorized operations asked for are those the authorizer allows the
// principal on the cluster (every one of Kafka's without an authorizer).

import { describeCluster } from '../../protocol/kafka/apis/describe-cluster/schema.js';
import { Errors } from '../../util/errors.js';
import type { KafkaApiHandler } from './api.js';
import type { RequestAccess } from '../access-control.js';
import type { AclOperationCode } from '../../security/acl.js';
import { kafkaBrokers, kafkaControllerId } from './cluster-view.js';

const ENDPOINT_BROKER = 1;
const ENDPOINT_CONTROLLER = 2;

/** Kafka's AclOperation codes that apply to the cluster resource. */
const CLUSTER_OPERATIONS = { CREATE: 5, ALTER: 7, DESCRIBE: 8, CLUSTER_ACTION: 9, DESCRIBE_CONFIGS: 10, ALTER_CONFIGS: 11, IDEMPOTENT_WRITE: 12 };
export const ALL_CLUSTER_OPERATIONS = Object.values(CLUSTER_OPERATIONS).reduce((bits, op) => bits | (1 << op), 0);
const NOT_ASKED = -2147483648;

/** The cluster operations the principal may do, as Kafka's bit set (every one without an authorizer). */
function authorizedOperations(access: RequestAccess | null): number {
  if (!access) return ALL_CLUSTER_OPERATIONS;
  return Object.values(CLUSTER_OPERATIONS).reduce((bits, op) => (access.onCluster(op as AclOperationCode) ? bits | (1 << op) : bits), 0);
}

export const describeClusterHandler: KafkaApiHandler = {
  spec: describeCluster,
  minVersion: 0,
  maxVersion: 1,
  handle(req, ctx) {
    const endpointType = req.endpointType as number;
    const image = ctx.deps.image();
    const clusterId = image.cluster?.clusterId ?? '';
    if (endpointType !== ENDPOINT_BROKER) {
      const error = endpointType === ENDPOINT_CONTROLLER ? Errors.MISMATCHED_ENDPOINT_TYPE : Errors.UNSUPPORTED_ENDPOINT_TYPE;
      return { errorCode: error.code, errorMessage: `${error.name}: this is a broker endpoint; endpoint type ${endpointType} is not served here`, endpointType, clusterId };
    }
    const brokers = kafkaBrokers(image);
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      endpointType,
      clusterId,
      controllerId: kafkaControllerId(image, ctx.deps.controllerId(), brokers),
      brokers: brokers.map((b) => ({ brokerId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
      clusterAuthorizedOperations: req.includeClusterAuthorizedOperations === true ? authorizedOperations(ctx.access) : NOT_ASKED,
    };
  },
  errorResponse(req, errorCode, errorMessage) {
    return { errorCode, errorMessage, endpointType: req.endpointType, clusterId: '' };
  },
};
