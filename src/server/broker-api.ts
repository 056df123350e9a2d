// The broker's request API: what a client connection on the broker listener
// can ask (docs/protocol.md). Each request is checked against the supported
// API versions (UNSUPPORTED_VERSION otherwise), its body parsed by its API's
// validator (INVALID_REQUEST names the bad field), then served:
//   - data plane (Produce, Fetch, ListOffsets, OffsetForLeaderEpoch,
//     DeleteRecords) by the replica manager;
//   - Metadata, DescribeCluster, ApiVersions from this node's metadata image;
//   - InitProducerId from a block of producer ids the controller allocated
//     (producer-ids.ts); with a transactional id, by its transaction
//     coordinator (txn-api.ts);
//   - group APIs (FindCoordinator, JoinGroup, ..., OffsetCommit) by the group
//     coordinator (src/groups/group-api.ts), FindCoordinator of a
//     transactional id (keyType 1) by the transaction coordinator;
//   - transaction APIs (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
//     TxnOffsetCommit, WriteTxnMarkers, Describe/ListTransactions) by the
//     transaction coordinator, the group coordinator and the replica manager
//     (txn-api.ts);
//   - admin requests (CreateTopics, DeleteTopics, ...) forwarded to the active
//     controller, whose answer comes back unchanged;
//   - controller-only requests (registration, heartbeats, AlterPartition)
//     answered NOT_CONTROLLER with the current controller id: brokers send
//     those to the controller quorum, never to a broker listener.

import { Errors, SluiceError } from '../util/errors.js';
import { ApiKey, apiName } from '../protocol/api-keys.js';
import { encodeResponse, encodeResponseChunks, type RequestEnvelope } from '../protocol/envelope.js';
import type { Body } from '../protocol/body.js';
import { parseProduceRequest } from '../protocol/apis/produce.js';
import { parseFetchRequest } from '../protocol/apis/fetch.js';
import { parseListOffsetsRequest, parseOffsetForLeaderEpochRequest } from '../protocol/apis/offsets.js';
import { parseDeleteRecordsRequest } from '../protocol/apis/delete-records.js';
import { parseDescribeLogDirsRequest, type DescribeLogDirsRequest, type DescribeLogDirsResponse } from '../protocol/apis/log-dirs.js';
import {
  parseMetadataRequest,
  type ApiVersionRange, type MetadataBroker, type MetadataResponse, type MetadataTopic,
} from '../protocol/apis/metadata.js';
import { NO_RESPONSE, type ConnectionInfo, type RequestHandler, type ResponseEncoder } from '../net/server-connection.js';
import type { MetadataImage } from '../metadata/image.js';
import type { ReplicaOps } from '../replication/replica-manager.js';
import { BROKER_ENDPOINT } from '../replication/replica-fetcher.js';
import { parseInitProducerIdRequest } from '../protocol/apis/groups.js';
import { initProducerId, type ProducerIdSource } from './producer-ids.js';
import type { GroupOps } from '../groups/coordinator.js';
import type {
  TransactionOps, TxnOffsetCommitRequest, TxnOffsetCommitResponse, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
} from '../protocol/apis/transactions.js';
import { GROUP_APIS, serveGroupApi } from '../groups/group-api.js';
import { TXN_APIS, initTransactionalProducer, serveTxnApi } from './txn-api.js';
import type { Authorizer } from '../security/authorizer.js';
import { guardedDeps, requestAccess, type RequestAccess } from './access-control.js';
import { serveAclApi, ACL_APIS } from './acl-api.js';
import type { SaslGate } from './sasl-gate.js';
import { serveSaslAuthenticate, serveSaslHandshake, serveAlterUserScramCredentials, serveDescribeUserScramCredentials } from './ws-sasl.js';

export type ControllerCall = <T>(api: string, body: Record<string, unknown>) => Promise<T>;

export interface BrokerApiDeps {
  readonly image: () => MetadataImage;
  readonly controllerId: () => number;
  readonly replicas: ReplicaOps;
  readonly controller: ControllerCall;
  /** Fresh producer ids for InitProducerId (producer-ids.ts); without it, InitProducerId answers COORDINATOR_NOT_AVAILABLE. */
  readonly producerIds?: ProducerIdSource;
  /** The group coordinator; without it, group APIs answer COORDINATOR_NOT_AVAILABLE. */
  readonly groups?: GroupOps;
  /** The transaction coordinator (src/transactions/); without it, transactional APIs answer COORDINATOR_NOT_AVAILABLE. */
  readonly transactions?: TransactionOps;
  /** TxnOffsetCommit: the group coordinator's transactional offset commits. */
  readonly txnOffsets?: { txnOffsetCommit(req: TxnOffsetCommitRequest): Promise<TxnOffsetCommitResponse> };
  /** WriteTxnMarkers (coordinator → partition leader): the replica manager appends the markers. */
  readonly txnMarkers?: { writeTxnMarkers(req: WriteTxnMarkersRequest): Promise<WriteTxnMarkersResponse> };
  /** DescribeLogDirs: this broker's replicas on disk and the cleaner's progress (log-dirs.ts). */
  readonly logDirs?: (req: DescribeLogDirsRequest) => DescribeLogDirsResponse;
  /** The authorizer over the current image's ACLs; absent or null: no authorizer configured, every request allowed. */
  readonly authorizer?: () => Authorizer | null;
  /**
   * The listener's SASL layer (sasl-gate.ts): on the WebSocket listener
   * always (authentication optional unless ws.sasl.required), on the Kafka
   * listener with SASL_PLAINTEXT/SASL_SSL; absent, SaslHandshake and
   * SaslAuthenticate answer ILLEGAL_SASL_STATE.
   */
  readonly sasl?: SaslGate;
}

/** Admin APIs a broker forwards to the active controller, by the controller API's name. */
const FORWARDED: ReadonlyMap<number, string> = new Map([
  [ApiKey.CreateTopics, 'createTopics'],
  [ApiKey.DeleteTopics, 'deleteTopics'],
  [ApiKey.CreatePartitions, 'createPartitions'],
  [ApiKey.DescribeConfigs, 'describeConfigs'],
  [ApiKey.AlterConfigs, 'alterConfigs'],
  [ApiKey.ElectLeaders, 'electLeaders'],
  [ApiKey.AlterPartitionReassignments, 'alterReassignments'],
  [ApiKey.ListPartitionReassignments, 'listReassignments'],
  [ApiKey.DescribeClientQuotas, 'describeClientQuotas'],
  [ApiKey.AlterClientQuotas, 'alterClientQuotas'],
  [ApiKey.DescribeQuorum, 'describeQuorum'],
]);

const CONTROLLER_ONLY: ReadonlySet<number> = new Set([
  ApiKey.BrokerRegistration, ApiKey.BrokerHeartbeat, ApiKey.AlterPartition, ApiKey.ControlledShutdown,
]);

const SERVED: readonly number[] = [
  ApiKey.Produce, ApiKey.Fetch, ApiKey.ListOffsets, ApiKey.Metadata, ApiKey.ApiVersions,
  ApiKey.OffsetForLeaderEpoch, ApiKey.DeleteRecords, ApiKey.DescribeCluster, ApiKey.DescribeLogDirs, ...FORWARDED.keys(),
  ApiKey.InitProducerId,
  ApiKey.SaslHandshake, ApiKey.SaslAuthenticate, ApiKey.DescribeUserScramCredentials, ApiKey.AlterUserScramCredentials,
  ...GROUP_APIS,
  ...ACL_APIS,
  ...TXN_APIS,
];

/** Every API this broker answers, with its versions (all 0 for now). */
export const SUPPORTED_APIS: readonly ApiVersionRange[] = [...SERVED, ...CONTROLLER_ONLY]
  .sort((a, b) => a - b)
  .map((apiKey) => ({ apiKey, minVersion: 0, maxVersion: 0 }));

const VERSIONS = new Map(SUPPORTED_APIS.map((v) => [v.apiKey, v] as const));

/**
 * Fetch answers carry the record batches as they lie in the log (or its tail
 * cache): they are framed without copying them (chunked-msgpack.ts). Every
 * other answer is one msgpack buffer.
 */
export const brokerResponseEncoder: ResponseEncoder = (req, body) => (req.apiKey === ApiKey.Fetch
  ? encodeResponseChunks({ correlationId: req.correlationId, body })
  : [encodeResponse({ correlationId: req.correlationId, body })]);

export function createBrokerApi(brokerDeps: BrokerApiDeps): RequestHandler {
  return (req: RequestEnvelope, conn: ConnectionInfo) => {
    // Before authentication (ws.sasl.required) only ApiVersions and the SASL APIs are served; anything else closes the connection.
    if (brokerDeps.sasl?.refuse(conn, req.apiKey)) return NO_RESPONSE;
    const range = VERSIONS.get(req.apiKey);
    if (!range || req.apiVersion < range.minVersion || req.apiVersion > range.maxVersion) {
      throw new SluiceError(Errors.UNSUPPORTED_VERSION, `${apiName(req.apiKey)} v${req.apiVersion} is not supported`);
    }
    // With an authorizer: the API's request-wide rule first, then operations that check each topic and group.
    const access = requestAccess(brokerDeps, conn);
    const body = req.body as Body;
    access?.checkRequest(req.apiKey, apiName(req.apiKey), typeof body?.transactionalId === 'string' ? body.transactionalId : null);
    const deps = guardedDeps(brokerDeps, access);
    switch (req.apiKey) {
      case ApiKey.ApiVersions:
        return { errorCode: 0, apiKeys: SUPPORTED_APIS };
      case ApiKey.Metadata:
        return metadataResponse(deps.image(), deps.controllerId(), parseMetadataRequest(body).topics, access);
      case ApiKey.DescribeCluster:
        return describeCluster(deps.image(), deps.controllerId());
      case ApiKey.Produce: {
        const produce = parseProduceRequest(body);
        const result = deps.replicas.produce(produce);
        return produce.acks === 0 ? NO_RESPONSE : result;
      }
      case ApiKey.Fetch:
        return deps.replicas.fetch(parseFetchRequest(body), () => conn.closed);
      case ApiKey.ListOffsets:
        return deps.replicas.listOffsets(parseListOffsetsRequest(body));
      case ApiKey.OffsetForLeaderEpoch:
        return deps.replicas.offsetForLeaderEpoch(parseOffsetForLeaderEpochRequest(body));
      case ApiKey.DeleteRecords:
        return deps.replicas.deleteRecords(parseDeleteRecordsRequest(body));
      case ApiKey.DescribeLogDirs:
        if (!deps.logDirs) throw new SluiceError(Errors.UNKNOWN_SERVER_ERROR, 'this broker does not describe its logs');
        return deps.logDirs(parseDescribeLogDirsRequest(body));
      case ApiKey.InitProducerId: {
        const init = parseInitProducerIdRequest(body);
        if (typeof init.transactionalId === 'string') return initTransactionalProducer(deps, { ...init, transactionalId: init.transactionalId });
        if (!deps.producerIds) throw new SluiceError(Errors.COORDINATOR_NOT_AVAILABLE, 'this broker hands out no producer ids');
        return initProducerId(init, deps.producerIds);
      }
      case ApiKey.SaslHandshake:
        return serveSaslHandshake(deps.sasl, conn, body);
      case ApiKey.SaslAuthenticate:
        return serveSaslAuthenticate(deps.sasl, conn, body);
      case ApiKey.DescribeUserScramCredentials:
        return serveDescribeUserScramCredentials(deps.image(), body);
      case ApiKey.AlterUserScramCredentials:
        return serveAlterUserScramCredentials(deps.controller, body);
      default:
        break;
    }
    if (GROUP_APIS.has(req.apiKey)) return serveGroupApi(deps.groups, req, conn.remoteAddress, deps);
    if (TXN_APIS.has(req.apiKey)) return serveTxnApi(deps, req.apiKey, body);
    if (ACL_APIS.has(req.apiKey)) return serveAclApi(deps, req.apiKey, body);
    const forwarded = FORWARDED.get(req.apiKey);
    if (forwarded) return deps.controller(forwarded, body);
    const controllerId = deps.controllerId();
    throw new SluiceError(Errors.NOT_CONTROLLER, `broker listeners do not serve ${apiName(req.apiKey)}; send it to the controller quorum (active controller: ${controllerId})`, { controllerId });
  };
}

function brokersOf(image: MetadataImage): MetadataBroker[] {
  const out: MetadataBroker[] = [];
  for (const b of image.unfencedBrokers()) {
    const url = b.endpoints.find((e) => e.name === BROKER_ENDPOINT)?.url;
    if (url) out.push({ nodeId: b.brokerId, url, rack: b.rack });
  }
  return out;
}

/**
 * Metadata from the image. With an authorizer, a listing of every topic
 * leaves out those the principal may not describe, and a topic asked for by
 * name is answered TOPIC_AUTHORIZATION_FAILED (whether or not it exists).
 */
export function metadataResponse(image: MetadataImage, controllerId: number, names: readonly string[] | null, access: RequestAccess | null = null): MetadataResponse {
  const live = (id: number) => image.brokers.get(id)?.fenced === false;
  const all = [...image.topicsByName.keys()].sort();
  const topicNames = names ?? (access ? all.filter((n) => access.topicAllowed(ApiKey.Metadata, n)) : all);
  const topics: MetadataTopic[] = topicNames.map((name) => {
    if (access && !access.topicAllowed(ApiKey.Metadata, name)) {
      return { ...access.topicRefusal(ApiKey.Metadata, name), name, topicId: null, partitions: [] };
    }
    const t = image.topic(name);
    if (!t) return { errorCode: Errors.UNKNOWN_TOPIC_OR_PARTITION.code, errorMessage: `topic ${name} does not exist`, name, topicId: null, partitions: [] };
    return {
      errorCode: 0, errorMessage: null, name, topicId: t.topicId,
      partitions: [...t.partitions.entries()].sort((a, b) => a[0] - b[0]).map(([partition, r]) => ({
        partition,
        errorCode: r.leader < 0 ? Errors.LEADER_NOT_AVAILABLE.code : 0,
        leader: r.leader,
        leaderEpoch: r.leaderEpoch,
        replicas: [...r.replicas],
        isr: [...r.isr],
        offlineReplicas: r.replicas.filter((id) => !live(id)),
      })),
    };
  });
  return { clusterId: image.cluster?.clusterId ?? null, controllerId, brokers: brokersOf(image), topics };
}

function describeCluster(image: MetadataImage, controllerId: number): Record<string, unknown> {
  return {
    errorCode: 0,
    clusterId: image.cluster?.clusterId ?? null,
    controllerId,
    metadataOffset: image.offset,
    brokers: [...image.brokers.values()].sort((a, b) => a.brokerId - b.brokerId).map((b) => ({
      nodeId: b.brokerId, fenced: b.fenced, inControlledShutdown: b.inControlledShutdown, rack: b.rack,
      endpoints: b.endpoints.map((e) => ({ ...e })),
    })),
  };
}
