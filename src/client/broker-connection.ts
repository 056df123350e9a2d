// A typed connection to one broker: one ClientLink (many requests in flight,
// matched by correlation id) and one method per API, each building the
// request body, choosing its timeout and decoding the answer. The Producer,
// Consumer and Admin of the client (issue 6), the brokers' own tests, the
// fuzz test and the benchmarks all speak to brokers through this class.
//
// Errors: a whole-request failure (a nonzero top-level errorCode) is thrown
// as a SluiceError with that code; per-partition and per-item errors stay in
// the returned data, because one request covers many partitions and the
// caller decides per partition (retry, refresh metadata, give up). A lost
// link is NETWORK_EXCEPTION, a missing answer REQUEST_TIMED_OUT — both
// retriable. Nothing here retries: that policy belongs to the Client.
//
// Timeouts: a request that asks the broker to wait (fetch maxWaitMs, produce
// timeoutMs) gets that wait plus requestTimeoutMs, so a slow-but-correct
// broker answer (an empty long poll, a REQUEST_TIMED_OUT partition error for
// acks=all) arrives before the client gives up on it.
//
// Portability: this module imports no Node-only module; the WebSocket
// implementation is injected (node-websocket.ts for Node, the browser's own).

import type { AclBinding, AclBindingFilter } from '../security/acl.js';
import type { DeleteRecordsRequest, DeleteRecordsResponse } from '../protocol/apis/delete-records.js';
import { ApiKey } from '../protocol/api-keys.js';
import { CONSUMER_REPLICA_ID, READ_UNCOMMITTED, type FetchResponse, type IsolationLevel } from '../protocol/apis/fetch.js';
import type { ApiVersionsResponse, MetadataResponse } from '../protocol/apis/metadata.js';
import type { ProduceResponse } from '../protocol/apis/produce.js';
import type { DescribeLogDirsRequest, DescribeLogDirsResponse } from '../protocol/apis/log-dirs.js';
import type { CreatedTopic, ItemError, OngoingReassignment, TopicPartition } from '../protocol/apis/admin-results.js';
import type { DescribedConfig, ResourceResult } from '../protocol/apis/admin-results.js';
import { ClientLink, type ClientLinkOptions } from '../net/client-link.js';
import { saslClient, type SaslOptions } from './sasl.js';
import { Errors, SluiceError } from '../util/errors.js';
import { assert } from '../util/assert.js';
import { SystemScheduler, type Scheduler } from '../util/clock.js';
import { CLIENT_DEFAULTS, NO_BROKER_EPOCH, NO_LEADER_EPOCH } from './defaults.js';
import { ResponseView } from './response-view.js';
import {
  parseApiVersionsResponse, parseDescribeClusterResponse, parseDescribeLogDirsResponse, parseFetchResponse, parseListOffsetsResponse, parseMetadataResponse,
  parseOffsetForLeaderEpochResponse, parseProduceResponse, throwIfFailed,
  type DescribeClusterResponse, type ListOffsetsResponse, type OffsetForLeaderEpochResponse,
} from './responses.js';
import {
  parseDeleteGroupsResponse, parseDescribeGroupsResponse, parseFindCoordinatorResponse, parseHeartbeatResponse, parseJoinGroupResponse,
  parseLeaveGroupResponse, parseListGroupsResponse, parseOffsetCommitResponse, parseOffsetFetchResponse, parseSyncGroupResponse,
} from './group-responses.js';
import type {
  AddOffsetsToTxnRequest, AddOffsetsToTxnResponse, AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, DescribeTransactionsResponse,
  EndTxnRequest, EndTxnResponse, InitProducerIdTxnResponse, ListTransactionsRequest, ListTransactionsResponse, TxnOffsetCommitRequest,
  TxnOffsetCommitResponse,
} from '../protocol/apis/transactions.js';
import {
  parseAddPartitionsToTxnResponse, parseDescribeTransactionsResponse, parseEndTxnResponse, parseInitProducerIdTxnResponse,
  parseListTransactionsResponse,
} from './transaction-responses.js';
import type {
  DeleteGroupsResponse, DescribeGroupsResponse, FindCoordinatorResponse, HeartbeatResponse, JoinGroupResponse, LeaveGroupResponse,
  ListGroupsResponse, OffsetCommitResponse, OffsetFetchResponse, SyncGroupResponse,
} from '../protocol/apis/groups.js';

/** Every API is spoken at version 0 for now; brokers advertise [0, 0]. */
export const API_VERSION = 0;

/** The part of ClientLink this class uses (tests substitute a recording stub). */
export interface RequestLink {
  readonly url: string;
  readonly isOpen: boolean;
  request<T = unknown>(apiKey: number, apiVersion: number, body: object, timeoutMs: number): Promise<T>;
  send(apiKey: number, apiVersion: number, body: object): Promise<void>;
  onClose(listener: (err: SluiceError) => void): void;
  close(): void;
}

export interface BrokerConnectionOptions extends ClientLinkOptions {
  /** See CLIENT_DEFAULTS.requestTimeoutMs. */
  readonly requestTimeoutMs?: number;
  /** Log in with SASL right after connecting (and again before the broker's session lifetime runs out: KIP-368). */
  readonly sasl?: SaslOptions;
  /**
   * Times the re-authentication (the Client passes its own). Default
   * SystemScheduler (unref'd): a connection made on its own, outside a
   * Client (brokers' SASL links, tools), keeps no process alive by a timer.
   */
  readonly scheduler?: Scheduler;
}

/** Re-authenticate when this share of the broker's session lifetime has passed (Kafka's clients pick 85-95%). */
const REAUTH_AT_SHARE = 0.85;

// ---------------------------------------------------------------- request inputs

export interface ProduceInput {
  /** A transactional producer's id (its batches carry the transactional flag); absent for the others. */
  readonly transactionalId?: string;
  /** -1 = all in-sync replicas, 1 = the leader, 0 = no response at all. */
  readonly acks: -1 | 0 | 1;
  /** How long the broker may wait for acks=all before answering REQUEST_TIMED_OUT. */
  readonly timeoutMs: number;
  readonly topics: ReadonlyArray<{
    readonly name: string;
    /** records: one or more whole RecordBatch v2 (see records.ts encodeMessages). */
    readonly partitions: ReadonlyArray<{ readonly partition: number; readonly records: Uint8Array }>;
  }>;
}

export interface FetchPartitionInput {
  readonly partition: number;
  readonly fetchOffset: number;
  /** Default NO_LEADER_EPOCH (no fencing check). */
  readonly currentLeaderEpoch?: number;
  /** Default CLIENT_DEFAULTS.partitionFetchBytesMax. */
  readonly partitionMaxBytes?: number;
}

export interface FetchInput {
  /** How long the broker may hold the request waiting for minBytes. */
  readonly maxWaitMs: number;
  /** Default CLIENT_DEFAULTS.fetchMinBytes. */
  readonly minBytes?: number;
  /** Default CLIENT_DEFAULTS.fetchMaxBytes. */
  readonly maxBytes?: number;
  /** Default CONSUMER_REPLICA_ID; a follower broker sends its id (and brokerEpoch). */
  readonly replicaId?: number;
  readonly brokerEpoch?: number;
  /** READ_COMMITTED (1): up to the last stable offset, with the aborted transactions. Default READ_UNCOMMITTED (0). */
  readonly isolationLevel?: IsolationLevel;
  readonly topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly FetchPartitionInput[] }>;
}

export interface ListOffsetsInput {
  readonly replicaId?: number;
  /** 1 (read_committed): latest is the last stable offset. Default 0. */
  readonly isolationLevel?: IsolationLevel;
  readonly topics: ReadonlyArray<{
    readonly name: string;
    /** timestamp: LATEST_TIMESTAMP (-1), EARLIEST_TIMESTAMP (-2) or a time in ms. */
    readonly partitions: ReadonlyArray<{ readonly partition: number; readonly timestamp: number; readonly currentLeaderEpoch?: number }>;
  }>;
}

export interface OffsetForLeaderEpochInput {
  readonly replicaId?: number;
  readonly topics: ReadonlyArray<{
    readonly name: string;
    readonly partitions: ReadonlyArray<{ readonly partition: number; readonly leaderEpoch: number; readonly currentLeaderEpoch?: number }>;
  }>;
}

// ---------------------------------------------------------------- groups (src/groups/, docs/groups.md)

export interface JoinGroupInput {
  readonly groupId: string;
  /** '' on the first join: the coordinator answers MEMBER_ID_REQUIRED with the id to rejoin with (thrown; `details.memberId`). */
  readonly memberId: string;
  /** Static membership (KIP-345): a stable id per consumer instance; null for a dynamic member. */
  readonly groupInstanceId?: string | null;
  readonly sessionTimeoutMs: number;
  /** How long the coordinator waits for every member to rejoin; the answer may take this long. Default sessionTimeoutMs. */
  readonly rebalanceTimeoutMs?: number;
  /** 'consumer' for consumers; every member of a group must use the same. */
  readonly protocolType: string;
  /** In order of preference; metadata is opaque to the broker. */
  readonly protocols: ReadonlyArray<{ readonly name: string; readonly metadata: Uint8Array }>;
}

export interface SyncGroupInput {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId?: string | null;
  /** The leader's assignment for every member; omit (or empty) on followers. */
  readonly assignments?: ReadonlyArray<{ readonly memberId: string; readonly assignment: Uint8Array }>;
  /** A follower's answer waits for the leader's SyncGroup: allow this long beyond requestTimeoutMs. Default 0. */
  readonly rebalanceTimeoutMs?: number;
}

export interface GroupMemberInput {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId?: string | null;
}

export interface LeaveGroupInput {
  readonly groupId: string;
  /** A static member leaves by groupInstanceId (memberId '' removes whoever holds it). */
  readonly members: ReadonlyArray<{ readonly memberId: string; readonly groupInstanceId?: string | null }>;
}

export interface OffsetFetchInput {
  readonly groupId: string;
  /** null: every partition the group has committed. */
  readonly topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly number[] }> | null;
  /** KIP-447: a partition with a transactional offset commit pending answers UNSTABLE_OFFSET_COMMIT (retriable) instead of the older offset. */
  readonly requireStable?: boolean;
}

export interface OffsetCommitInput {
  readonly groupId: string;
  /** -1 (with memberId '') commits for a consumer outside group management; accepted only while the group has no members. */
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId?: string | null;
  readonly topics: ReadonlyArray<{
    readonly name: string;
    readonly partitions: ReadonlyArray<{ readonly partition: number; readonly committedOffset: number; readonly committedLeaderEpoch?: number; readonly metadata?: string | null }>;
  }>;
}

// ---------------------------------------------------------------- admin

/**
 * Admin requests the broker forwards to the active controller, with the
 * controller's bodies (src/controller/service/controller-api.ts). Bodies go
 * on the wire as given: leave optional fields out rather than `undefined`.
 */
export interface AdminApis {
  [ApiKey.CreateTopics]: {
    request: {
      topics: Array<{ name: string; numPartitions?: number; replicationFactor?: number; configs?: Record<string, string>; assignments?: number[][] }>;
      validateOnly?: boolean;
    };
    response: { topics: CreatedTopic[] };
  };
  [ApiKey.DeleteTopics]: { request: { names: string[] }; response: { topics: Array<ItemError & { name: string }> } };
  [ApiKey.CreatePartitions]: { request: { topic: string; count: number; validateOnly?: boolean }; response: ItemError };
  [ApiKey.DescribeConfigs]: {
    request: { resourceType: 'topic' | 'cluster'; resourceName: string };
    response: ItemError & { configs: DescribedConfig[] };
  };
  [ApiKey.AlterConfigs]: {
    request: {
      resources: Array<{ resourceType: 'topic' | 'cluster'; resourceName: string; set?: Record<string, string>; delete?: string[] }>;
      validateOnly?: boolean;
    };
    response: { resources: ResourceResult[] };
  };
  [ApiKey.AlterPartitionReassignments]: {
    request: { partitions: Array<TopicPartition & { replicas: number[] | null }> };
    response: { partitions: Array<TopicPartition & ItemError> };
  };
  [ApiKey.ListPartitionReassignments]: { request: Record<string, never>; response: { reassignments: OngoingReassignment[] } };
  [ApiKey.ElectLeaders]: { request: { partitions: TopicPartition[] | null; electionType?: 'preferred' | 'unclean' }; response: { partitions: Array<TopicPartition & ItemError> } };
  /** Checked field by field by its caller (cluster-admin.ts). */
  [ApiKey.DescribeQuorum]: { request: Record<string, never>; response: unknown };
  [ApiKey.DescribeAcls]: { request: { filter: AclBindingFilter }; response: ItemError & { acls: AclBinding[] } };
  [ApiKey.CreateAcls]: { request: { creations: AclBinding[] }; response: { results: ItemError[] } };
  [ApiKey.DeleteAcls]: {
    request: { filters: AclBindingFilter[] };
    response: { results: Array<ItemError & { matchingAcls: Array<ItemError & { acl: AclBinding }> }> };
  };
  [ApiKey.DescribeUserScramCredentials]: {
    request: { users: string[] | null };
    response: { results: Array<{ user: string; errorCode: number; errorMessage: string | null; credentialInfos: Array<{ mechanism: number; iterations: number }> }> };
  };
  [ApiKey.AlterUserScramCredentials]: {
    request: {
      deletions: Array<{ name: string; mechanism: number }>;
      upsertions: Array<{ name: string; mechanism: number; iterations: number; salt: Uint8Array; saltedPassword: Uint8Array }>;
    };
    response: { results: Array<{ user: string; errorCode: number; errorMessage: string | null }> };
  };
  [ApiKey.AlterClientQuotas]: {
    request: { entries: Array<{ entity: QuotaEntityPart[]; ops: Array<{ key: string; value: number; remove: boolean }> }>; validateOnly?: boolean };
    response: { entries: Array<ItemError & { entity: QuotaEntityPart[] }> };
  };
  [ApiKey.DescribeClientQuotas]: {
    request: { components: Array<{ entityType: string; matchType: number; match: string | null }>; strict?: boolean };
    response: ItemError & { entries: Array<{ entity: QuotaEntityPart[]; values: Array<{ key: string; value: number }> }> | null };
  };
}

/** One part of a client quota entity: a user or a client id; a null name is the type's default. */
export interface QuotaEntityPart { readonly entityType: string; readonly entityName: string | null }
export type AdminApiKey = keyof AdminApis;

// ---------------------------------------------------------------- the connection

export class BrokerConnection {
  private readonly requestTimeoutMs: number;
  private readonly scheduler: Scheduler;

  constructor(private readonly link: RequestLink, opts: { readonly requestTimeoutMs?: number; readonly scheduler?: Scheduler } = {}) {
    this.requestTimeoutMs = opts.requestTimeoutMs ?? CLIENT_DEFAULTS.requestTimeoutMs;
    this.scheduler = opts.scheduler ?? SystemScheduler;
    assert(Number.isSafeInteger(this.requestTimeoutMs) && this.requestTimeoutMs > 0, `bad requestTimeoutMs ${this.requestTimeoutMs}`);
    // A lost link needs no new session: drop its timer (a pending one would hold a keep-alive scheduler's process).
    link.onClose(() => {
      this.cancelReauth?.();
      this.cancelReauth = null;
    });
  }

  /** Opens a WebSocket to `url` (rejects with NETWORK_EXCEPTION if it cannot). */
  static async connect(url: string, opts: BrokerConnectionOptions): Promise<BrokerConnection> {
    const link = await ClientLink.connect(url, opts);
    const conn = new BrokerConnection(link, opts);
    if (opts.sasl) {
      try {
        await conn.authenticate(opts.sasl);
      } catch (err) {
        link.close();
        throw err;
      }
    }
    return conn;
  }

  /** The principal the broker named after the last successful login; null before one. */
  principal: string | null = null;
  /** Cancels the scheduled re-authentication; null when none is scheduled. */
  private cancelReauth: (() => void) | null = null;

  /**
   * SaslHandshake + SaslAuthenticate until the mechanism is done. A refusal
   * is SASL_AUTHENTICATION_FAILED (or UNSUPPORTED_SASL_MECHANISM) with the
   * broker's message; the broker closes the connection after it. With a
   * session lifetime, a re-authentication is scheduled before it ends.
   */
  async authenticate(sasl: SaslOptions): Promise<void> {
    const t = this.requestTimeoutMs;
    const hs = await this.link.request<{ errorCode: number; errorMessage?: string | null; mechanisms: string[] }>(ApiKey.SaslHandshake, 0, { mechanism: sasl.mechanism }, t);
    if (hs.errorCode !== 0) {
      throw new SluiceError(hs.errorCode === Errors.UNSUPPORTED_SASL_MECHANISM.code ? Errors.UNSUPPORTED_SASL_MECHANISM : Errors.ILLEGAL_SASL_STATE,
        `${sasl.mechanism} is not enabled on ${this.link.url} (enabled: ${(hs.mechanisms ?? []).join(', ') || 'none'})`);
    }
    const client = saslClient(sasl);
    let out: Uint8Array | null = await client.start();
    let lifetimeMs = 0;
    while (out !== null) {
      const res = await this.link.request<{ errorCode: number; errorMessage: string | null; authBytes: Uint8Array; sessionLifetimeMs: number; principal?: string }>(
        ApiKey.SaslAuthenticate, 0, { authBytes: out }, t);
      if (res.errorCode !== 0) throw new SluiceError(Errors.SASL_AUTHENTICATION_FAILED, res.errorMessage ?? 'authentication failed');
      out = await client.next(new Uint8Array(res.authBytes));
      lifetimeMs = res.sessionLifetimeMs;
      if (res.principal !== undefined) this.principal = res.principal;
    }
    this.cancelReauth?.();
    this.cancelReauth = null;
    if (lifetimeMs > 0) {
      this.cancelReauth = this.scheduler.schedule(Math.max(1, Math.floor(lifetimeMs * REAUTH_AT_SHARE)), () => {
        this.cancelReauth = null;
        if (this.link.isOpen) this.authenticate(sasl).catch(() => this.link.close());
      });
    }
  }

  get url(): string {
    return this.link.url;
  }

  get isOpen(): boolean {
    return this.link.isOpen;
  }

  /** Called once when the link fails or is closed (at once if it already has). */
  onClose(listener: (err: SluiceError) => void): void {
    this.link.onClose(listener);
  }

  close(): void {
    this.cancelReauth?.();
    this.cancelReauth = null;
    this.link.close();
  }

  async apiVersions(): Promise<ApiVersionsResponse> {
    return parseApiVersionsResponse(await this.call(ApiKey.ApiVersions, {}, this.requestTimeoutMs));
  }

  /** topics: null asks for every topic. */
  async metadata(topics: readonly string[] | null): Promise<MetadataResponse> {
    return parseMetadataResponse(await this.call(ApiKey.Metadata, { topics }, this.requestTimeoutMs));
  }

  /** acks=0 resolves with null once the frame is handed to the socket: the broker sends no answer. */
  produce(req: ProduceInput & { readonly acks: 0 }): Promise<null>;
  produce(req: ProduceInput & { readonly acks: -1 | 1 }): Promise<ProduceResponse>;
  produce(req: ProduceInput): Promise<ProduceResponse | null>;
  async produce(req: ProduceInput): Promise<ProduceResponse | null> {
    assert(Number.isSafeInteger(req.timeoutMs) && req.timeoutMs >= 0, `bad produce timeoutMs ${req.timeoutMs}`);
    const body = {
      ...(req.transactionalId === undefined ? {} : { transactionalId: req.transactionalId }),
      acks: req.acks,
      timeoutMs: req.timeoutMs,
      topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partition: p.partition, records: p.records })) })),
    };
    if (req.acks === 0) {
      await this.link.send(ApiKey.Produce, API_VERSION, body);
      return null;
    }
    return parseProduceResponse(await this.call(ApiKey.Produce, body, req.timeoutMs + this.requestTimeoutMs));
  }

  async fetch(req: FetchInput): Promise<FetchResponse> {
    assert(Number.isSafeInteger(req.maxWaitMs) && req.maxWaitMs >= 0, `bad fetch maxWaitMs ${req.maxWaitMs}`);
    const body = {
      replicaId: req.replicaId ?? CONSUMER_REPLICA_ID,
      brokerEpoch: req.brokerEpoch ?? NO_BROKER_EPOCH,
      maxWaitMs: req.maxWaitMs,
      minBytes: req.minBytes ?? CLIENT_DEFAULTS.fetchMinBytes,
      maxBytes: req.maxBytes ?? CLIENT_DEFAULTS.fetchMaxBytes,
      ...(req.isolationLevel === undefined || req.isolationLevel === READ_UNCOMMITTED ? {} : { isolationLevel: req.isolationLevel }),
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partition: p.partition,
          fetchOffset: p.fetchOffset,
          currentLeaderEpoch: p.currentLeaderEpoch ?? NO_LEADER_EPOCH,
          partitionMaxBytes: p.partitionMaxBytes ?? CLIENT_DEFAULTS.partitionFetchBytesMax,
        })),
      })),
    };
    return parseFetchResponse(await this.call(ApiKey.Fetch, body, req.maxWaitMs + this.requestTimeoutMs));
  }

  async listOffsets(req: ListOffsetsInput): Promise<ListOffsetsResponse> {
    const body = {
      replicaId: req.replicaId ?? CONSUMER_REPLICA_ID,
      ...(req.isolationLevel === undefined || req.isolationLevel === READ_UNCOMMITTED ? {} : { isolationLevel: req.isolationLevel }),
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partition: p.partition, currentLeaderEpoch: p.currentLeaderEpoch ?? NO_LEADER_EPOCH, timestamp: p.timestamp })),
      })),
    };
    return parseListOffsetsResponse(await this.call(ApiKey.ListOffsets, body, this.requestTimeoutMs));
  }

  /** Moves partitions' log start offsets up (offset -1: the high watermark); send it to each partition's leader. */
  async deleteRecords(req: DeleteRecordsRequest): Promise<DeleteRecordsResponse> {
    return (await this.call(ApiKey.DeleteRecords, req, this.requestTimeoutMs)) as DeleteRecordsResponse;
  }

  /** This broker's replicas of the given partitions on disk, with the log cleaner's progress (log-dirs.ts). */
  async describeLogDirs(req: DescribeLogDirsRequest): Promise<DescribeLogDirsResponse> {
    const body = { topics: req.topics.map((t) => ({ name: t.name, partitions: [...t.partitions] })) };
    return parseDescribeLogDirsResponse(await this.call(ApiKey.DescribeLogDirs, body, this.requestTimeoutMs));
  }

  async offsetForLeaderEpoch(req: OffsetForLeaderEpochInput): Promise<OffsetForLeaderEpochResponse> {
    const body = {
      replicaId: req.replicaId ?? CONSUMER_REPLICA_ID,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partition: p.partition, currentLeaderEpoch: p.currentLeaderEpoch ?? NO_LEADER_EPOCH, leaderEpoch: p.leaderEpoch })),
      })),
    };
    return parseOffsetForLeaderEpochResponse(await this.call(ApiKey.OffsetForLeaderEpoch, body, this.requestTimeoutMs));
  }

  /** The broker's metadata image summary: every registered broker (fenced ones too) and the controller id. */
  async describeCluster(): Promise<DescribeClusterResponse> {
    return parseDescribeClusterResponse(await this.call(ApiKey.DescribeCluster, {}, this.requestTimeoutMs));
  }

  /**
   * InitProducerId (idempotent producer, docs/idempotence.md): a fresh
   * producer id at epoch 0, or, given the current id and epoch, the same id
   * at the next epoch (a fresh id once the epoch would pass int16 max).
   * Failures throw (COORDINATOR_NOT_AVAILABLE is retriable).
   */
  async initProducerId(current?: { readonly producerId: number; readonly producerEpoch: number }): Promise<{ producerId: number; producerEpoch: number }> {
    const body = { transactionalId: null, producerId: current?.producerId ?? -1, producerEpoch: current?.producerEpoch ?? -1 };
    const v = ResponseView.of('InitProducerId', await this.call(ApiKey.InitProducerId, body, this.requestTimeoutMs));
    return { producerId: v.int('producerId'), producerEpoch: v.int('producerEpoch') };
  }

  // ---- groups: send these to the group's coordinator (findCoordinator), except findCoordinator and listGroups.
  // A whole-request failure throws: NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS
  // (find the coordinator again, retry), REBALANCE_IN_PROGRESS (rejoin), ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID
  // (rejoin, as a new member for the latter), FENCED_INSTANCE_ID (another instance took this static id: stop).

  /**
   * The broker coordinating `key` (any broker answers): a group (keyType 0,
   * the default) or a transactional id (keyType 1). COORDINATOR_NOT_AVAILABLE
   * (thrown) while there is none yet.
   */
  async findCoordinator(key: string, keyType: 0 | 1 = 0): Promise<FindCoordinatorResponse> {
    const body = keyType === 0 ? { key } : { key, keyType };
    return parseFindCoordinatorResponse(await this.call(ApiKey.FindCoordinator, body, this.requestTimeoutMs));
  }

  // ---- transactions: send these to the transactional id's coordinator (findCoordinator keyType 1), except
  // TxnOffsetCommit (the group's coordinator) and ListTransactions (every broker answers for what it coordinates).
  // A whole-request failure throws (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS,
  // PRODUCER_FENCED, INVALID_PRODUCER_EPOCH, ...); per-partition errors stay in the answer.

  /** InitProducerId for a transactional id: fences older producers of the id, finishes their open transaction. */
  async initTransactionalProducerId(req: {
    readonly transactionalId: string; readonly transactionTimeoutMs: number; readonly producerId?: number; readonly producerEpoch?: number;
  }): Promise<InitProducerIdTxnResponse> {
    const body = { transactionalId: req.transactionalId, transactionTimeoutMs: req.transactionTimeoutMs, producerId: req.producerId ?? -1, producerEpoch: req.producerEpoch ?? -1 };
    return parseInitProducerIdTxnResponse(await this.call(ApiKey.InitProducerId, body, this.requestTimeoutMs));
  }

  async addPartitionsToTxn(req: Omit<AddPartitionsToTxnRequest, 'verifyOnly'>): Promise<AddPartitionsToTxnResponse> {
    const body = {
      transactionalId: req.transactionalId, producerId: req.producerId, producerEpoch: req.producerEpoch, verifyOnly: false,
      topics: req.topics.map((t) => ({ name: t.name, partitions: [...t.partitions] })),
    };
    return parseAddPartitionsToTxnResponse(await this.call(ApiKey.AddPartitionsToTxn, body, this.requestTimeoutMs));
  }

  async addOffsetsToTxn(req: AddOffsetsToTxnRequest): Promise<AddOffsetsToTxnResponse> {
    const body = { transactionalId: req.transactionalId, producerId: req.producerId, producerEpoch: req.producerEpoch, groupId: req.groupId };
    const v = ResponseView.of('AddOffsetsToTxn', await this.call(ApiKey.AddOffsetsToTxn, body, this.requestTimeoutMs));
    return { errorCode: v.optInt('errorCode') ?? 0, errorMessage: v.strOrNull('errorMessage') };
  }

  /** Ends the open transaction; with bumpEpoch the answer carries the epoch the next transaction uses. */
  async endTxn(req: EndTxnRequest): Promise<EndTxnResponse> {
    const body = {
      transactionalId: req.transactionalId, producerId: req.producerId, producerEpoch: req.producerEpoch, committed: req.committed, bumpEpoch: req.bumpEpoch,
    };
    return parseEndTxnResponse(await this.call(ApiKey.EndTxn, body, this.requestTimeoutMs));
  }

  /** To the GROUP's coordinator: offsets written as part of the producer's transaction. Errors per partition. */
  async txnOffsetCommit(req: TxnOffsetCommitRequest): Promise<TxnOffsetCommitResponse> {
    const body = {
      transactionalId: req.transactionalId, groupId: req.groupId, producerId: req.producerId, producerEpoch: req.producerEpoch,
      generationId: req.generationId, memberId: req.memberId, groupInstanceId: req.groupInstanceId,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partition: p.partition, committedOffset: p.committedOffset, committedLeaderEpoch: p.committedLeaderEpoch, metadata: p.metadata,
        })),
      })),
    };
    return parseOffsetCommitResponse(await this.call(ApiKey.TxnOffsetCommit, body, this.requestTimeoutMs));
  }

  async describeTransactions(transactionalIds: readonly string[]): Promise<DescribeTransactionsResponse> {
    return parseDescribeTransactionsResponse(await this.call(ApiKey.DescribeTransactions, { transactionalIds: [...transactionalIds] }, this.requestTimeoutMs));
  }

  /** The transactions this broker coordinates (ask every broker for all of them). */
  async listTransactions(req: Partial<ListTransactionsRequest> = {}): Promise<ListTransactionsResponse> {
    const body = { stateFilters: [...(req.stateFilters ?? [])], producerIdFilters: [...(req.producerIdFilters ?? [])], durationFilterMs: req.durationFilterMs ?? -1 };
    return parseListTransactionsResponse(await this.call(ApiKey.ListTransactions, body, this.requestTimeoutMs));
  }

  /** Answers once the group's join barrier closes (up to rebalanceTimeoutMs). MEMBER_ID_REQUIRED throws with `details.memberId`. */
  async joinGroup(req: JoinGroupInput): Promise<JoinGroupResponse> {
    const rebalanceTimeoutMs = req.rebalanceTimeoutMs ?? req.sessionTimeoutMs;
    const body = {
      groupId: req.groupId, sessionTimeoutMs: req.sessionTimeoutMs, rebalanceTimeoutMs, memberId: req.memberId,
      groupInstanceId: req.groupInstanceId ?? null, protocolType: req.protocolType,
      protocols: req.protocols.map((p) => ({ name: p.name, metadata: p.metadata })),
    };
    return parseJoinGroupResponse(await this.call(ApiKey.JoinGroup, body, rebalanceTimeoutMs + this.requestTimeoutMs));
  }

  /** The member's assignment for the generation; a follower's answer waits for the leader's SyncGroup. */
  async syncGroup(req: SyncGroupInput): Promise<SyncGroupResponse> {
    const body = {
      groupId: req.groupId, generationId: req.generationId, memberId: req.memberId, groupInstanceId: req.groupInstanceId ?? null,
      assignments: (req.assignments ?? []).map((a) => ({ memberId: a.memberId, assignment: a.assignment })),
    };
    return parseSyncGroupResponse(await this.call(ApiKey.SyncGroup, body, (req.rebalanceTimeoutMs ?? 0) + this.requestTimeoutMs));
  }

  /** Keeps the member's session alive; REBALANCE_IN_PROGRESS (thrown) says rejoin. */
  async heartbeat(req: GroupMemberInput): Promise<HeartbeatResponse> {
    const body = { groupId: req.groupId, generationId: req.generationId, memberId: req.memberId, groupInstanceId: req.groupInstanceId ?? null };
    return parseHeartbeatResponse(await this.call(ApiKey.Heartbeat, body, this.requestTimeoutMs));
  }

  /** Members leave at once (no session timeout to wait for); per-member errors are in the answer. */
  async leaveGroup(req: LeaveGroupInput): Promise<LeaveGroupResponse> {
    const body = { groupId: req.groupId, members: req.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId ?? null })) };
    return parseLeaveGroupResponse(await this.call(ApiKey.LeaveGroup, body, this.requestTimeoutMs));
  }

  /** Answered once the commit is replicated (acks=all on __consumer_offsets); errors are per partition. */
  async offsetCommit(req: OffsetCommitInput): Promise<OffsetCommitResponse> {
    const body = {
      groupId: req.groupId, generationId: req.generationId, memberId: req.memberId, groupInstanceId: req.groupInstanceId ?? null,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partition: p.partition, committedOffset: p.committedOffset, committedLeaderEpoch: p.committedLeaderEpoch ?? NO_LEADER_EPOCH, metadata: p.metadata ?? null,
        })),
      })),
    };
    return parseOffsetCommitResponse(await this.call(ApiKey.OffsetCommit, body, this.requestTimeoutMs));
  }

  /** Committed offsets (-1: none); topics null asks for every partition the group committed. */
  async offsetFetch(req: OffsetFetchInput): Promise<OffsetFetchResponse> {
    const body = {
      groupId: req.groupId, topics: req.topics === null ? null : req.topics.map((t) => ({ name: t.name, partitions: [...t.partitions] })),
      ...(req.requireStable ? { requireStable: true } : {}),
    };
    return parseOffsetFetchResponse(await this.call(ApiKey.OffsetFetch, body, this.requestTimeoutMs));
  }

  /** The groups this broker coordinates (ask every broker for all of them). */
  async listGroups(): Promise<ListGroupsResponse> {
    return parseListGroupsResponse(await this.call(ApiKey.ListGroups, {}, this.requestTimeoutMs));
  }

  /** Per group: state, protocol, members (metadata and assignment while Stable); an unknown group is 'Dead'. */
  async describeGroups(groupIds: readonly string[]): Promise<DescribeGroupsResponse> {
    return parseDescribeGroupsResponse(await this.call(ApiKey.DescribeGroups, { groups: [...groupIds] }, this.requestTimeoutMs));
  }

  /** Deletes Empty groups and their offsets (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND per group). */
  async deleteGroups(groupIds: readonly string[]): Promise<DeleteGroupsResponse> {
    return parseDeleteGroupsResponse(await this.call(ApiKey.DeleteGroups, { groups: [...groupIds] }, this.requestTimeoutMs));
  }

  /**
   * An admin request, forwarded by the broker to the active controller. A
   * top-level error (NOT_CONTROLLER, INVALID_REQUEST, CreatePartitions' and
   * DescribeConfigs' own errors) throws; per-item errors are in the answer,
   * which is passed on as the controller wrote it (not field-checked).
   */
  async admin<K extends AdminApiKey>(apiKey: K, body: AdminApis[K]['request']): Promise<AdminApis[K]['response']> {
    return (await this.call(apiKey, body, this.requestTimeoutMs)) as AdminApis[K]['response'];
  }

  /** Sends one request and throws its whole-request failure, if any. */
  private async call(apiKey: ApiKey, body: object, timeoutMs: number): Promise<unknown> {
    const response = await this.link.request(apiKey, API_VERSION, body, timeoutMs);
    throwIfFailed(ApiKey[apiKey], this.link.url, response);
    return response;
  }
}
