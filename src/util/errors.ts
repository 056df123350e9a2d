// The one error table of Sluice. Every operating error — on the wire, in the
// client, in storage — is a SluiceError carrying one of these codes. Numeric
// codes are Kafka's where Kafka has the same error, so operators and tools
// recognise them; `retriable` tells clients whether a retry can succeed.
// docs/protocol.md lists the table; keep it in step with this file.
//
// It lives in util/ (not protocol/) because storage, which sits below the
// protocol layer, raises these errors too; protocol/ re-exports it.

export interface ErrorInfo {
  readonly code: number;
  readonly name: string;
  readonly retriable: boolean;
  readonly message: string;
}

function e(code: number, name: string, retriable: boolean, message: string): ErrorInfo {
  return { code, name, retriable, message };
}

export const Errors = {
  UNKNOWN_SERVER_ERROR: e(-1, 'UNKNOWN_SERVER_ERROR', false, 'The server experienced an unexpected error'),
  NONE: e(0, 'NONE', false, 'No error'),
  OFFSET_OUT_OF_RANGE: e(1, 'OFFSET_OUT_OF_RANGE', false, 'The requested offset is outside the range of offsets held by the partition'),
  CORRUPT_MESSAGE: e(2, 'CORRUPT_MESSAGE', true, 'The record batch failed its CRC check or is otherwise malformed'),
  UNKNOWN_TOPIC_OR_PARTITION: e(3, 'UNKNOWN_TOPIC_OR_PARTITION', true, 'This server does not host this topic-partition'),
  LEADER_NOT_AVAILABLE: e(5, 'LEADER_NOT_AVAILABLE', true, 'There is no leader for this topic-partition (an election is in progress)'),
  NOT_LEADER_OR_FOLLOWER: e(6, 'NOT_LEADER_OR_FOLLOWER', true, 'This server is not the leader or a follower of this partition'),
  REQUEST_TIMED_OUT: e(7, 'REQUEST_TIMED_OUT', true, 'The request timed out'),
  MESSAGE_TOO_LARGE: e(10, 'MESSAGE_TOO_LARGE', false, 'The record batch is larger than the maximum the server accepts'),
  NETWORK_EXCEPTION: e(13, 'NETWORK_EXCEPTION', true, 'The connection to the server was lost before a response arrived'),
  COORDINATOR_LOAD_IN_PROGRESS: e(14, 'COORDINATOR_LOAD_IN_PROGRESS', true, 'The coordinator is loading group state'),
  COORDINATOR_NOT_AVAILABLE: e(15, 'COORDINATOR_NOT_AVAILABLE', true, 'The group coordinator is not available'),
  NOT_COORDINATOR: e(16, 'NOT_COORDINATOR', true, 'This server is not the coordinator for this group'),
  INVALID_TOPIC: e(17, 'INVALID_TOPIC', false, 'The topic name is invalid'),
  RECORD_LIST_TOO_LARGE: e(18, 'RECORD_LIST_TOO_LARGE', false, 'The request contains more record data than the server accepts'),
  NOT_ENOUGH_REPLICAS: e(19, 'NOT_ENOUGH_REPLICAS', true, 'Fewer in-sync replicas than min.insync.replicas; the batch was not appended'),
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: e(20, 'NOT_ENOUGH_REPLICAS_AFTER_APPEND', true, 'The batch was appended but the in-sync replica set shrank below min.insync.replicas'),
  INVALID_REQUIRED_ACKS: e(21, 'INVALID_REQUIRED_ACKS', false, 'acks must be 0, 1 or -1 (all)'),
  ILLEGAL_GENERATION: e(22, 'ILLEGAL_GENERATION', false, 'The generation id is not the current one of the group'),
  INCONSISTENT_GROUP_PROTOCOL: e(23, 'INCONSISTENT_GROUP_PROTOCOL', false, 'The member protocol does not match the group'),
  INVALID_GROUP_ID: e(24, 'INVALID_GROUP_ID', false, 'The group id is invalid'),
  UNKNOWN_MEMBER_ID: e(25, 'UNKNOWN_MEMBER_ID', false, 'The member id is not known to the coordinator'),
  INVALID_SESSION_TIMEOUT: e(26, 'INVALID_SESSION_TIMEOUT', false, 'The session timeout is outside the allowed range'),
  REBALANCE_IN_PROGRESS: e(27, 'REBALANCE_IN_PROGRESS', false, 'The group is rebalancing; rejoin'),
  INVALID_COMMIT_OFFSET_SIZE: e(28, 'INVALID_COMMIT_OFFSET_SIZE', false, 'The committed offset metadata is too large'),
  TOPIC_AUTHORIZATION_FAILED: e(29, 'TOPIC_AUTHORIZATION_FAILED', false, 'The principal is not authorized to access this topic'),
  GROUP_AUTHORIZATION_FAILED: e(30, 'GROUP_AUTHORIZATION_FAILED', false, 'The principal is not authorized to access this group'),
  CLUSTER_AUTHORIZATION_FAILED: e(31, 'CLUSTER_AUTHORIZATION_FAILED', false, 'The principal is not authorized for this cluster operation'),
  INVALID_TIMESTAMP: e(32, 'INVALID_TIMESTAMP', false, 'The timestamp of a record is out of the acceptable range'),
  UNSUPPORTED_SASL_MECHANISM: e(33, 'UNSUPPORTED_SASL_MECHANISM', false, 'The SASL mechanism is not enabled on this listener'),
  ILLEGAL_SASL_STATE: e(34, 'ILLEGAL_SASL_STATE', false, 'The request is not valid in the current state of the SASL exchange'),
  UNSUPPORTED_VERSION: e(35, 'UNSUPPORTED_VERSION', false, 'The API or API version is not supported'),
  TOPIC_ALREADY_EXISTS: e(36, 'TOPIC_ALREADY_EXISTS', false, 'The topic already exists'),
  INVALID_PARTITIONS: e(37, 'INVALID_PARTITIONS', false, 'The number of partitions is invalid'),
  INVALID_REPLICATION_FACTOR: e(38, 'INVALID_REPLICATION_FACTOR', false, 'The replication factor is invalid or exceeds the available brokers'),
  INVALID_REPLICA_ASSIGNMENT: e(39, 'INVALID_REPLICA_ASSIGNMENT', false, 'The replica assignment is invalid'),
  INVALID_CONFIG: e(40, 'INVALID_CONFIG', false, 'The configuration is invalid'),
  NOT_CONTROLLER: e(41, 'NOT_CONTROLLER', true, 'This node is not the active controller'),
  INVALID_REQUEST: e(42, 'INVALID_REQUEST', false, 'The request is malformed or violates the protocol'),
  POLICY_VIOLATION: e(44, 'POLICY_VIOLATION', false, 'The request violates a configured policy'),
  OUT_OF_ORDER_SEQUENCE_NUMBER: e(45, 'OUT_OF_ORDER_SEQUENCE_NUMBER', false, 'The producer sequence number is out of order'),
  DUPLICATE_SEQUENCE_NUMBER: e(46, 'DUPLICATE_SEQUENCE_NUMBER', false, 'The producer sequence number is a duplicate'),
  INVALID_PRODUCER_EPOCH: e(47, 'INVALID_PRODUCER_EPOCH', false, 'The producer epoch is stale (another producer with the same id is newer)'),
  INVALID_TXN_STATE: e(48, 'INVALID_TXN_STATE', false, 'The producer attempted a transactional operation in an invalid state'),
  INVALID_PRODUCER_ID_MAPPING: e(49, 'INVALID_PRODUCER_ID_MAPPING', false, 'The producer id is not the one the coordinator holds for this transactional id'),
  INVALID_TRANSACTION_TIMEOUT: e(50, 'INVALID_TRANSACTION_TIMEOUT', false, 'The transaction timeout is larger than transaction.max.timeout.ms'),
  CONCURRENT_TRANSACTIONS: e(51, 'CONCURRENT_TRANSACTIONS', true, 'The previous transaction of this producer is still being completed'),
  TRANSACTION_COORDINATOR_FENCED: e(52, 'TRANSACTION_COORDINATOR_FENCED', false, 'A newer transaction coordinator has taken over this transactional id'),
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: e(53, 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED', false, 'The principal may not use this transactional id'),
  SECURITY_DISABLED: e(54, 'SECURITY_DISABLED', false, 'No authorizer is configured on this cluster'),
  OPERATION_NOT_ATTEMPTED: e(55, 'OPERATION_NOT_ATTEMPTED', false, 'The operation was not attempted because another part of the request failed'),
  KAFKA_STORAGE_ERROR: e(56, 'KAFKA_STORAGE_ERROR', true, 'The server hit a disk error serving this partition'),
  SASL_AUTHENTICATION_FAILED: e(58, 'SASL_AUTHENTICATION_FAILED', false, 'SASL authentication failed (wrong credentials, an invalid token or a malformed exchange)'),
  UNKNOWN_PRODUCER_ID: e(59, 'UNKNOWN_PRODUCER_ID', false, 'The partition has no state for this producer id'),
  NON_EMPTY_GROUP: e(68, 'NON_EMPTY_GROUP', false, 'The group still has members'),
  GROUP_ID_NOT_FOUND: e(69, 'GROUP_ID_NOT_FOUND', false, 'The group does not exist'),
  FETCH_SESSION_ID_NOT_FOUND: e(70, 'FETCH_SESSION_ID_NOT_FOUND', true, 'The fetch session is not known to this broker (start a new one)'),
  INVALID_FETCH_SESSION_EPOCH: e(71, 'INVALID_FETCH_SESSION_EPOCH', true, 'The fetch session epoch is not the next one (start a new session)'),
  FENCED_LEADER_EPOCH: e(74, 'FENCED_LEADER_EPOCH', true, 'The leader epoch in the request is older than the broker\'s'),
  UNKNOWN_LEADER_EPOCH: e(75, 'UNKNOWN_LEADER_EPOCH', true, 'The leader epoch in the request is newer than the broker\'s'),
  UNSUPPORTED_COMPRESSION_TYPE: e(76, 'UNSUPPORTED_COMPRESSION_TYPE', false, 'The batch uses a compression codec this cluster does not support'),
  OFFSET_NOT_AVAILABLE: e(78, 'OFFSET_NOT_AVAILABLE', true, 'The leader high watermark has not caught up yet'),
  MEMBER_ID_REQUIRED: e(79, 'MEMBER_ID_REQUIRED', false, 'Rejoin with the member id the coordinator assigned'),
  PREFERRED_LEADER_NOT_AVAILABLE: e(80, 'PREFERRED_LEADER_NOT_AVAILABLE', true, 'The preferred leader is not available'),
  GROUP_MAX_SIZE_REACHED: e(81, 'GROUP_MAX_SIZE_REACHED', false, 'The group has reached its maximum number of members'),
  FENCED_INSTANCE_ID: e(82, 'FENCED_INSTANCE_ID', false, 'Another member with the same group instance id joined'),
  ELIGIBLE_LEADERS_NOT_AVAILABLE: e(83, 'ELIGIBLE_LEADERS_NOT_AVAILABLE', true, 'No replica of the partition is eligible to lead'),
  ELECTION_NOT_NEEDED: e(84, 'ELECTION_NOT_NEEDED', false, 'The partition already has the leader the election asks for'),
  NO_REASSIGNMENT_IN_PROGRESS: e(85, 'NO_REASSIGNMENT_IN_PROGRESS', false, 'No reassignment is in progress for this partition'),
  GROUP_SUBSCRIBED_TO_TOPIC: e(86, 'GROUP_SUBSCRIBED_TO_TOPIC', false, 'The group is subscribed to the topic: its offsets cannot be deleted'),
  INVALID_RECORD: e(87, 'INVALID_RECORD', false, 'A record in the batch is not allowed (e.g. a control record from a client)'),
  UNSTABLE_OFFSET_COMMIT: e(88, 'UNSTABLE_OFFSET_COMMIT', true, 'The partition has an offset commit of an open transaction pending'),
  PRODUCER_FENCED: e(90, 'PRODUCER_FENCED', false, 'A newer producer with the same transactional id has fenced this one'),
  TRANSACTIONAL_ID_NOT_FOUND: e(105, 'TRANSACTIONAL_ID_NOT_FOUND', false, 'The transactional id is not known to its coordinator'),
  TRANSACTION_ABORTABLE: e(120, 'TRANSACTION_ABORTABLE', false, 'The transaction hit an error it cannot recover from: abort it'),
  UNKNOWN_TOPIC_ID: e(100, 'UNKNOWN_TOPIC_ID', true, 'This server does not know this topic id'),
  INCONSISTENT_CLUSTER_ID: e(104, 'INCONSISTENT_CLUSTER_ID', false, 'The cluster id in the request does not match this cluster'),
  STALE_BROKER_EPOCH: e(77, 'STALE_BROKER_EPOCH', false, 'The broker epoch is stale'),
  INVALID_UPDATE_VERSION: e(108, 'INVALID_UPDATE_VERSION', false, 'The partition epoch in the request is stale'),
  NEW_LEADER_ELECTED: e(112, 'NEW_LEADER_ELECTED', false, 'A new leader was elected while the request was in flight'),
  MISMATCHED_ENDPOINT_TYPE: e(118, 'MISMATCHED_ENDPOINT_TYPE', false, 'The request was sent to an endpoint of the wrong type'),
  UNSUPPORTED_ENDPOINT_TYPE: e(119, 'UNSUPPORTED_ENDPOINT_TYPE', false, 'This endpoint type is not supported'),
  RESOURCE_NOT_FOUND: e(91, 'RESOURCE_NOT_FOUND', false, 'The resource does not exist'),
  DUPLICATE_RESOURCE: e(92, 'DUPLICATE_RESOURCE', false, 'The request names the same resource twice'),
  UNACCEPTABLE_CREDENTIAL: e(93, 'UNACCEPTABLE_CREDENTIAL', false, 'The credential is not acceptable (iterations, salt or user name)'),
  INELIGIBLE_REPLICA: e(107, 'INELIGIBLE_REPLICA', false, 'The replica is not eligible to join the ISR'),
} as const satisfies Record<string, ErrorInfo>;

export type ErrorName = keyof typeof Errors;

const byCode = new Map<number, ErrorInfo>(Object.values(Errors).map((info) => [info.code, info]));

/** The table entry for a numeric code; unknown codes map to UNKNOWN_SERVER_ERROR. */
export function errorForCode(code: number): ErrorInfo {
  return byCode.get(code) ?? Errors.UNKNOWN_SERVER_ERROR;
}

/** An operating error with a stable code. `details` carries structured context. */
export class SluiceError extends Error {
  override name = 'SluiceError';
  readonly code: number;
  readonly errorName: string;
  readonly retriable: boolean;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(info: ErrorInfo, message?: string, details: Record<string, unknown> = {}) {
    super(message ? `${info.name}: ${message}` : `${info.name}: ${info.message}`);
    this.code = info.code;
    this.errorName = info.name;
    this.retriable = info.retriable;
    this.details = details;
  }

  is(info: ErrorInfo): boolean {
    return this.code === info.code;
  }
}

export function isSluiceError(err: unknown, info?: ErrorInfo): err is SluiceError {
  return err instanceof SluiceError && (info === undefined || err.code === info.code);
}
