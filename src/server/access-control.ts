// Enforcement of the ACLs on the broker's request layer, shared by both
// client protocols. The WebSocket API (broker-api.ts) and the Kafka
// dispatcher (kafka/dispatch.ts) both:
//   1. make a RequestAccess for the connection's principal and address
//      (none when no authorizer is configured: then nothing here runs);
//   2. call checkRequest(apiKey) before the handler: the request-wide
//      requirements of the API's rule (src/security/access-rules.ts), a
//      refusal being CLUSTER_AUTHORIZATION_FAILED in the API's error shape;
//   3. hand the handler guardedDeps(): the same broker operations (replica
//      manager, group coordinator, controller calls) with each request's
//      topics and groups checked against the same rule first. Refused items
//      get TOPIC_/GROUP_AUTHORIZATION_FAILED in the operation's own answer
//      and never reach the operation, so a refused request writes nothing;
//      allowed items are served as before, in the request's order. The
//      transaction coordinator's operations check the transactional id
//      (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) before their groups and topics.
// Listings (Metadata, ListGroups, OffsetFetch of every topic) leave out what
// the principal may not describe.

import { Errors, SluiceError, type ErrorInfo } from '../util/errors.js';
import { ApiKey } from '../protocol/api-keys.js';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType, type AclOperationCode, type ResourceTypeCode } from '../security/acl.js';
import { ACCESS_RULES, type AccessRule } from '../security/access-rules.js';
import type { Authorizer } from '../security/authorizer.js';
import { principalString, type Principal } from '../security/principal.js';
import type { ConnectionInfo } from '../net/server-connection.js';
import type { ReplicaOps } from '../replication/replica-manager.js';
import type { AbortedTransaction } from '../protocol/apis/fetch.js';
import type { GroupOps } from '../groups/coordinator.js';
import type { TransactionOps, TxnOffsetCommitRequest, TxnOffsetCommitResponse, WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../protocol/apis/transactions.js';
import type { BrokerApiDeps, ControllerCall } from './broker-api.js';
import type { ControllerCallHandler } from '../raft-node/client-service.js';
import { ANONYMOUS } from '../security/principal.js';
import { CONTROLLER_CALL_OPERATION } from '../security/access-rules.js';

/** IPv4 clients on a dual-stack socket show up as ::ffff:a.b.c.d; ACL hosts name a.b.c.d. */
export function aclHost(remoteAddress: string): string {
  return remoteAddress.startsWith('::ffff:') && remoteAddress.includes('.') ? remoteAddress.slice(7) : remoteAddress;
}

type Item = { errorCode: number; errorMessage: string | null };

function refusal(info: ErrorInfo, message: string): Item {
  return { errorCode: info.code, errorMessage: `${info.name}: ${message}` };
}

/** One request's view of the authorizer: who asks, from where. */
export class RequestAccess {
  readonly host: string;

  constructor(readonly authorizer: Authorizer, readonly principal: Principal, remoteAddress: string) {
    this.host = aclHost(remoteAddress);
  }

  allowed(op: AclOperationCode, type: ResourceTypeCode, name: string): boolean {
    return this.authorizer.authorize(this.principal, this.host, op, type, name);
  }

  onCluster(op: AclOperationCode): boolean {
    return this.allowed(op, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME);
  }

  rule(apiKey: number): AccessRule | undefined {
    return ACCESS_RULES.get(apiKey);
  }

  /** Whether the API's topic requirement holds for `topic` (or its cluster-wide stand-in). */
  topicAllowed(apiKey: number, topic: string): boolean {
    const r = this.rule(apiKey);
    if (!r?.topic) return r !== undefined;
    if (r.clusterCovers !== undefined && this.onCluster(r.clusterCovers)) return true;
    return this.allowed(r.topic, ResourceType.TOPIC, topic);
  }

  groupAllowed(apiKey: number, group: string): boolean {
    const r = this.rule(apiKey);
    if (!r?.group) return r !== undefined;
    if (r.clusterCovers !== undefined && this.onCluster(r.clusterCovers)) return true;
    return this.allowed(r.group, ResourceType.GROUP, group);
  }

  /** Whether the API's transactional id requirement holds for `id`. */
  transactionalIdAllowed(apiKey: number, id: string): boolean {
    const r = this.rule(apiKey);
    if (!r?.transactionalId) return r !== undefined;
    return this.allowed(r.transactionalId, ResourceType.TRANSACTIONAL_ID, id);
  }

  who(): string {
    return principalString(this.principal);
  }

  transactionalIdRefusal(apiKey: number, id: string): Item {
    return refusal(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, `${this.who()} may not ${opName(this.rule(apiKey)?.transactionalId)} transactional id ${id}`);
  }

  /** Throws TRANSACTIONAL_ID_AUTHORIZATION_FAILED unless the API's transactional id requirement holds. */
  requireTransactionalId(apiKey: number, id: string): void {
    if (!this.transactionalIdAllowed(apiKey, id)) {
      throw new SluiceError(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, `${this.who()} may not ${opName(this.rule(apiKey)?.transactionalId)} transactional id ${id}`);
    }
  }

  topicRefusal(apiKey: number, topic: string): Item {
    return refusal(Errors.TOPIC_AUTHORIZATION_FAILED, `${this.who()} may not ${opName(this.rule(apiKey)?.topic)} topic ${topic}`);
  }

  groupRefusal(apiKey: number, group: string): Item {
    return refusal(Errors.GROUP_AUTHORIZATION_FAILED, `${this.who()} may not ${opName(this.rule(apiKey)?.group)} group ${group}`);
  }

  /** Throws GROUP_AUTHORIZATION_FAILED unless the API's group requirement holds. */
  requireGroup(apiKey: number, group: string): void {
    if (!this.groupAllowed(apiKey, group)) throw new SluiceError(Errors.GROUP_AUTHORIZATION_FAILED, `${this.who()} may not ${opName(this.rule(apiKey)?.group)} group ${group}`);
  }

  requireCluster(op: AclOperationCode, what: string): void {
    if (!this.onCluster(op)) throw new SluiceError(Errors.CLUSTER_AUTHORIZATION_FAILED, `${this.who()} may not ${opName(op)} the cluster (${what})`);
  }

  /**
   * The request-wide part of the API's rule, checked before the handler
   * runs: an API without a rule is refused (fail closed), a cluster
   * requirement must hold (or its any-topic alternative) — for an API whose
   * cluster requirement is clusterUnlessTransactional, only when the request
   * names no transactional id (the operation then checks the id).
   */
  checkRequest(apiKey: number, apiName: string, transactionalId: string | null = null): void {
    const r = this.rule(apiKey);
    if (!r) throw new SluiceError(Errors.CLUSTER_AUTHORIZATION_FAILED, `${apiName} has no access rule`);
    if (r.cluster === undefined || this.onCluster(r.cluster)) return;
    if (r.clusterUnlessTransactional === true && transactionalId !== null) return;
    if (r.orAnyTopic !== undefined && this.authorizer.authorizeAny(this.principal, this.host, r.orAnyTopic, ResourceType.TOPIC)) return;
    this.requireCluster(r.cluster, apiName);
  }
}

function opName(op: AclOperationCode | undefined): string {
  switch (op) {
    case AclOperation.READ: return 'read';
    case AclOperation.WRITE: return 'write to';
    case AclOperation.CREATE: return 'create';
    case AclOperation.DELETE: return 'delete';
    case AclOperation.ALTER: return 'alter';
    case AclOperation.DESCRIBE: return 'describe';
    case AclOperation.CLUSTER_ACTION: return 'act as a node of';
    case AclOperation.DESCRIBE_CONFIGS: return 'describe the configs of';
    case AclOperation.ALTER_CONFIGS: return 'alter the configs of';
    case AclOperation.IDEMPOTENT_WRITE: return 'write idempotently to';
    default: return 'access';
  }
}

/** The RequestAccess of a request on `conn`, or null when no authorizer is configured. */
export function requestAccess(deps: BrokerApiDeps, conn: ConnectionInfo): RequestAccess | null {
  const authorizer = deps.authorizer?.() ?? null;
  return authorizer ? new RequestAccess(authorizer, conn.security.principal, conn.remoteAddress) : null;
}

interface TopicsOf<P> { readonly name: string; readonly partitions: readonly P[] }

/**
 * Splits a request's topics into those the API may touch and those it may
 * not, and puts the refused ones back into the answer at their place: the
 * operation answers the allowed topics in order, and the merged answer
 * keeps the request's order (some handlers zip answers with requests).
 */
function splitTopics<P, R>(
  access: RequestAccess, apiKey: number, topics: readonly TopicsOf<P>[], refused: (p: P, e: Item) => R,
): { allowed: TopicsOf<P>[]; merge: (answered: ReadonlyArray<{ name: string; partitions: R[] }>) => Array<{ name: string; partitions: R[] }> } {
  const ok = topics.map((t) => access.topicAllowed(apiKey, t.name));
  const allowed = topics.filter((_, i) => ok[i]);
  const merge = (answered: ReadonlyArray<{ name: string; partitions: R[] }>): Array<{ name: string; partitions: R[] }> => {
    let next = 0;
    return topics.map((t, i) => {
      if (ok[i]) return answered[next++]!;
      const e = access.topicRefusal(apiKey, t.name);
      return { name: t.name, partitions: t.partitions.map((p) => refused(p, e)) };
    });
  };
  return { allowed, merge };
}

function then<T, U>(v: T | Promise<T>, f: (x: T) => U): U | Promise<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}

const NO_BYTES: Uint8Array = new Uint8Array(0);

function guardedReplicas(r: ReplicaOps, a: RequestAccess): ReplicaOps {
  return {
    produce(req) {
      const id = req.transactionalId ?? null;
      if (id !== null && !a.transactionalIdAllowed(0, id)) {
        // Kafka refuses the whole request: every partition answered, nothing appended.
        const e = a.transactionalIdRefusal(0, id);
        return { topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partition: p.partition, ...e, baseOffset: -1, logStartOffset: -1 })) })) };
      }
      const s = splitTopics(a, 0, req.topics, (p, e) => ({ partition: p.partition, ...e, baseOffset: -1, logStartOffset: -1 }));
      if (s.allowed.length === 0) return { topics: s.merge([]) };
      return then(r.produce({ ...req, topics: s.allowed }), (res) => ({ ...res, topics: s.merge(res.topics) }));
    },
    fetch(req, isClosed) {
      if (req.replicaId >= 0) {
        a.requireCluster(a.rule(1)!.replica!, 'follower fetch');
        return r.fetch(req, isClosed);
      }
      const s = splitTopics(a, 1, req.topics, (p, e) => ({ partition: p.partition, ...e, highWatermark: -1, logStartOffset: -1, lastStableOffset: -1, abortedTransactions: null as AbortedTransaction[] | null, records: NO_BYTES }));
      if (s.allowed.length === 0 && req.topics.length > 0) return { errorCode: 0, topics: s.merge([]) };
      return then(r.fetch({ ...req, topics: s.allowed }, isClosed), (res) => ({ ...res, topics: s.merge(res.topics) }));
    },
    listOffsets(req) {
      const s = splitTopics(a, 2, req.topics, (p, e) => ({ partition: p.partition, ...e, timestamp: -1, offset: -1, leaderEpoch: -1 }));
      return { topics: s.merge(r.listOffsets({ ...req, topics: s.allowed }).topics) };
    },
    offsetForLeaderEpoch(req) {
      if (req.replicaId >= 0) {
        a.requireCluster(a.rule(23)!.replica!, 'follower epoch query');
        return r.offsetForLeaderEpoch(req);
      }
      const s = splitTopics(a, 23, req.topics, (p, e) => ({ partition: p.partition, ...e, leaderEpoch: -1, endOffset: -1 }));
      return { topics: s.merge(r.offsetForLeaderEpoch({ ...req, topics: s.allowed }).topics) };
    },
    deleteRecords(req) {
      const s = splitTopics(a, 21, req.topics, (p, e) => ({ partition: p.partition, ...e, lowWatermark: -1 }));
      return { topics: s.merge(r.deleteRecords({ ...req, topics: s.allowed }).topics) };
    },
  };
}

function guardedGroups(g: GroupOps, a: RequestAccess): GroupOps {
  return {
    findCoordinator(req) {
      if (!a.groupAllowed(10, req.key)) return { ...a.groupRefusal(10, req.key), nodeId: -1, url: null };
      return g.findCoordinator(req);
    },
    joinGroup(req, client) {
      a.requireGroup(11, req.groupId);
      return g.joinGroup(req, client);
    },
    heartbeat(req) {
      a.requireGroup(12, req.groupId);
      return g.heartbeat(req);
    },
    leaveGroup(req) {
      a.requireGroup(13, req.groupId);
      return g.leaveGroup(req);
    },
    syncGroup(req) {
      a.requireGroup(14, req.groupId);
      return g.syncGroup(req);
    },
    offsetCommit(req) {
      if (!a.groupAllowed(8, req.groupId)) {
        const e = a.groupRefusal(8, req.groupId);
        return { topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partition: p.partition, ...e })) })) };
      }
      const s = splitTopics(a, 8, req.topics, (p, e) => ({ partition: p.partition, ...e }));
      if (s.allowed.length === 0) return { topics: s.merge([]) };
      return then(g.offsetCommit({ ...req, topics: s.allowed }), (res) => ({ ...res, topics: s.merge(res.topics) }));
    },
    // The same checks as the txnOffsets path (transactional id, group, topics), whichever way a caller reaches it.
    txnOffsetCommit: (req) => guardedTxnOffsets(g, a).txnOffsetCommit(req),
    offsetFetch(req) {
      if (!a.groupAllowed(9, req.groupId)) return { ...a.groupRefusal(9, req.groupId), topics: [] };
      if (req.topics === null) {
        // Every topic the group has offsets for: those the principal may not describe are left out.
        const res = g.offsetFetch(req);
        return { ...res, topics: res.topics.filter((t) => a.topicAllowed(9, t.name)) };
      }
      const s = splitTopics(a, 9, req.topics, (partition, e) => ({ partition, committedOffset: -1, committedLeaderEpoch: -1, metadata: null as string | null, ...e }));
      const res = s.allowed.length === 0 ? { errorCode: 0, errorMessage: null, topics: [] } : g.offsetFetch({ ...req, topics: s.allowed });
      return res.errorCode !== 0 ? res : { ...res, topics: s.merge(res.topics) };
    },
    listGroups() {
      const res = g.listGroups();
      return { ...res, groups: res.groups.filter((x) => a.groupAllowed(16, x.groupId)) };
    },
    describeGroups(req) {
      const allowed = req.groups.filter((id) => a.groupAllowed(15, id));
      const described = allowed.length > 0 ? g.describeGroups({ groups: allowed }).groups : [];
      let next = 0;
      return {
        groups: req.groups.map((id) => (a.groupAllowed(15, id) ? described[next++]! : {
          ...a.groupRefusal(15, id), groupId: id, groupState: 'Dead' as const, protocolType: '', protocolName: '', members: [],
        })),
      };
    },
    async deleteGroups(req) {
      const allowed = req.groups.filter((id) => a.groupAllowed(42, id));
      const results = allowed.length > 0 ? (await g.deleteGroups({ groups: allowed })).results : [];
      let next = 0;
      return { results: req.groups.map((id) => (a.groupAllowed(42, id) ? results[next++]! : { groupId: id, ...a.groupRefusal(42, id) })) };
    },
    async offsetDelete(req) {
      a.requireGroup(47, req.groupId);
      const s = splitTopics(a, 47, req.topics, (partition, e) => ({ partition, ...e }));
      if (s.allowed.length === 0) return { errorCode: 0, errorMessage: null, topics: s.merge([]) };
      const res = await g.offsetDelete({ ...req, topics: s.allowed });
      return res.errorCode !== 0 ? res : { ...res, topics: s.merge(res.topics) };
    },
  };
}

/**
 * The transaction coordinator's operations. Every one checks the
 * transactional id first (Write; Describe for FindCoordinator and the
 * describing APIs), then its group and topics, in Kafka's order. A refused
 * AddPartitionsToTxn topic fails the whole request: nothing is added, the
 * refused topics' partitions are answered TOPIC_AUTHORIZATION_FAILED and the
 * others OPERATION_NOT_ATTEMPTED (KafkaApis.handleAddPartitionsToTxnRequest).
 * A partition leader's verifyOnly check is a node's request: ClusterAction.
 */
function guardedTransactions(t: TransactionOps, a: RequestAccess): TransactionOps {
  const add = ApiKey.AddPartitionsToTxn;
  return {
    findCoordinator(req) {
      if (!a.transactionalIdAllowed(ApiKey.FindCoordinator, req.key)) return { ...a.transactionalIdRefusal(ApiKey.FindCoordinator, req.key), nodeId: -1, url: null };
      return t.findCoordinator(req);
    },
    initProducerId(req) {
      a.requireTransactionalId(ApiKey.InitProducerId, req.transactionalId);
      return t.initProducerId(req);
    },
    async addPartitionsToTxn(req) {
      if (req.verifyOnly) {
        a.requireCluster(a.rule(add)!.replica!, 'transaction verification');
        return t.addPartitionsToTxn(req);
      }
      a.requireTransactionalId(add, req.transactionalId);
      const ok = req.topics.map((x) => a.topicAllowed(add, x.name));
      if (ok.every(Boolean)) return t.addPartitionsToTxn(req);
      const notAttempted = refusal(Errors.OPERATION_NOT_ATTEMPTED, 'another topic of the request was refused');
      return {
        errorCode: 0, errorMessage: null,
        results: req.topics.map((x, i) => {
          const e = ok[i] ? notAttempted : a.topicRefusal(add, x.name);
          return { name: x.name, partitions: x.partitions.map((partition) => ({ partition, ...e })) };
        }),
      };
    },
    addOffsetsToTxn(req) {
      a.requireTransactionalId(ApiKey.AddOffsetsToTxn, req.transactionalId);
      a.requireGroup(ApiKey.AddOffsetsToTxn, req.groupId);
      return t.addOffsetsToTxn(req);
    },
    endTxn(req) {
      a.requireTransactionalId(ApiKey.EndTxn, req.transactionalId);
      return t.endTxn(req);
    },
    describeTransactions(req) {
      const key = ApiKey.DescribeTransactions;
      const allowed = req.transactionalIds.filter((id) => a.transactionalIdAllowed(key, id));
      const described = allowed.length > 0 ? t.describeTransactions({ transactionalIds: allowed }).transactionStates : [];
      let next = 0;
      return {
        transactionStates: req.transactionalIds.map((id) => {
          if (!a.transactionalIdAllowed(key, id)) {
            return {
              ...a.transactionalIdRefusal(key, id), transactionalId: id, transactionState: '' as const, transactionTimeoutMs: 0,
              transactionStartTimeMs: -1, producerId: -1, producerEpoch: -1, topics: [],
            };
          }
          const d = described[next++]!;
          return { ...d, topics: d.topics.filter((x) => a.topicAllowed(key, x.name)) };
        }),
      };
    },
    listTransactions(req) {
      const res = t.listTransactions(req);
      return { ...res, transactionStates: res.transactionStates.filter((x) => a.transactionalIdAllowed(ApiKey.ListTransactions, x.transactionalId)) };
    },
  };
}

type TxnOffsets = { txnOffsetCommit(req: TxnOffsetCommitRequest): Promise<TxnOffsetCommitResponse> };

/** TxnOffsetCommit: Write on the transactional id, Read on the group, then Read on each topic (refused ones TOPIC_AUTHORIZATION_FAILED). */
function guardedTxnOffsets(o: TxnOffsets, a: RequestAccess): TxnOffsets {
  const key = ApiKey.TxnOffsetCommit;
  return {
    async txnOffsetCommit(req) {
      a.requireTransactionalId(key, req.transactionalId);
      a.requireGroup(key, req.groupId);
      const s = splitTopics(a, key, req.topics, (p, e) => ({ partition: p.partition, ...e }));
      if (s.allowed.length === 0) return { topics: s.merge([]) };
      const res = await o.txnOffsetCommit({ ...req, topics: s.allowed });
      return { ...res, topics: s.merge(res.topics) };
    },
  };
}

type TxnMarkers = { writeTxnMarkers(req: WriteTxnMarkersRequest): Promise<WriteTxnMarkersResponse> };

/** WriteTxnMarkers: ClusterAction, held here for every path as checkRequest holds it for requests. */
function guardedTxnMarkers(m: TxnMarkers, a: RequestAccess): TxnMarkers {
  return {
    writeTxnMarkers(req) {
      a.requireCluster(a.rule(ApiKey.WriteTxnMarkers)!.cluster!, 'WriteTxnMarkers');
      return m.writeTxnMarkers(req);
    },
  };
}

/** Positional merge for controller answers that list one result per asked item. */
function mergeItems<T, R>(items: readonly T[], ok: readonly boolean[], answered: readonly R[], refused: (item: T) => R): R[] {
  let next = 0;
  return items.map((item, i) => (ok[i] ? answered[next++]! : refused(item)));
}

/**
 * Controller calls whose whole request needs one operation on the cluster: the
 * API (key) whose ACCESS_RULES entry says which. The broker's checkRequest
 * already applied it for requests from a client; this guard holds it for
 * every path that reaches the controller call.
 */
const CLUSTER_CALLS: ReadonlyMap<string, number> = new Map([
  ['electLeaders', ApiKey.ElectLeaders],
  ['alterReassignments', ApiKey.AlterPartitionReassignments],
  ['generateReassignmentPlan', ApiKey.AlterPartitionReassignments],
  ['listReassignments', ApiKey.ListPartitionReassignments],
  ['describeQuorum', ApiKey.DescribeQuorum],
  ['describeClientQuotas', ApiKey.DescribeClientQuotas],
  ['alterClientQuotas', ApiKey.AlterClientQuotas],
  ['createAcls', ApiKey.CreateAcls],
  ['deleteAcls', ApiKey.DeleteAcls],
  ['alterUserScramCredentials', ApiKey.AlterUserScramCredentials],
]);

function guardedController(call: ControllerCall, a: RequestAccess): ControllerCall {
  const configOk = (type: string, name: string, op: AclOperationCode): boolean => (type === 'topic'
    ? a.allowed(op, ResourceType.TOPIC, name)
    : a.onCluster(op));
  const configRefusal = (type: string, name: string, op: AclOperationCode): Item => (type === 'topic'
    ? refusal(Errors.TOPIC_AUTHORIZATION_FAILED, `${a.who()} may not ${opName(op)} topic ${name}`)
    : refusal(Errors.CLUSTER_AUTHORIZATION_FAILED, `${a.who()} may not ${opName(op)} the cluster`));
  // The operations come from the one table (access-rules.ts), never written again here.
  const describeOp = a.rule(ApiKey.DescribeConfigs)!.configResource!;
  const alterOp = a.rule(ApiKey.AlterConfigs)!.configResource!;
  const guarded = async (api: string, body: Record<string, unknown>): Promise<unknown> => {
    switch (api) {
      case 'createTopics': {
        const topics = (body.topics ?? []) as Array<{ name: string }>;
        const ok = topics.map((t) => a.topicAllowed(19, t.name));
        const allowed = topics.filter((_, i) => ok[i]);
        const res = allowed.length > 0 ? await call<{ topics: unknown[] }>(api, { ...body, topics: allowed }) : { topics: [] };
        return { ...res, topics: mergeItems(topics, ok, res.topics, (t) => ({ name: t.name, topicId: null, numPartitions: -1, replicationFactor: -1, ...a.topicRefusal(19, t.name) })) };
      }
      case 'deleteTopics': {
        const names = (body.names ?? []) as string[];
        const ok = names.map((n) => a.topicAllowed(20, n));
        const allowed = names.filter((_, i) => ok[i]);
        const res = allowed.length > 0 ? await call<{ topics: unknown[] }>(api, { ...body, names: allowed }) : { topics: [] };
        return { ...res, topics: mergeItems(names, ok, res.topics, (n) => ({ name: n, ...a.topicRefusal(20, n) })) };
      }
      case 'createPartitions': {
        const topic = String(body.topic);
        return a.topicAllowed(37, topic) ? call(api, body) : a.topicRefusal(37, topic);
      }
      case 'describeConfigs': {
        const type = String(body.resourceType);
        const name = String(body.resourceName);
        return configOk(type, name, describeOp) ? call(api, body) : configRefusal(type, name, describeOp);
      }
      case 'alterConfigs': {
        const resources = (body.resources ?? []) as Array<{ resourceType: string; resourceName: string }>;
        const ok = resources.map((r) => configOk(r.resourceType, r.resourceName, alterOp));
        const allowed = resources.filter((_, i) => ok[i]);
        const res = allowed.length > 0 ? await call<{ resources: unknown[] }>(api, { ...body, resources: allowed }) : { resources: [] };
        return {
          ...res,
          resources: mergeItems(resources, ok, res.resources, (r) => ({ resourceType: r.resourceType, resourceName: r.resourceName, ...configRefusal(r.resourceType, r.resourceName, alterOp) })),
        };
      }
      case 'electLeaders':
      case 'alterReassignments':
      case 'generateReassignmentPlan':
      case 'listReassignments':
      case 'describeQuorum':
      case 'describeClientQuotas':
      case 'alterClientQuotas':
      case 'createAcls':
      case 'deleteAcls':
      case 'alterUserScramCredentials': {
        const key = CLUSTER_CALLS.get(api)!;
        a.requireCluster(a.rule(key)!.cluster!, ACCESS_RULES.get(key)!.api);
        return call(api, body);
      }
      default:
        // A controller call this layer has no rule for: refused, never passed through unchecked.
        throw new SluiceError(Errors.CLUSTER_AUTHORIZATION_FAILED, `no access rule for controller call ${api}`);
    }
  };
  return guarded as ControllerCall;
}

/** The broker operations for one request, each checked against the access rules first. */
export function guardedDeps<D extends BrokerApiDeps>(deps: D, access: RequestAccess | null): D {
  if (!access) return deps;
  return {
    ...deps,
    replicas: guardedReplicas(deps.replicas, access),
    controller: guardedController(deps.controller, access),
    ...(deps.groups ? { groups: guardedGroups(deps.groups, access) } : {}),
    ...(deps.transactions ? { transactions: guardedTransactions(deps.transactions, access) } : {}),
    ...(deps.txnOffsets ? { txnOffsets: guardedTxnOffsets(deps.txnOffsets, access) } : {}),
    ...(deps.txnMarkers ? { txnMarkers: guardedTxnMarkers(deps.txnMarkers, access) } : {}),
  };
}

/**
 * The controller listener's calls (brokers' registration, heartbeats,
 * AlterPartition, producer id blocks, and the admin requests brokers forward
 * after authorizing them): every one needs ClusterAction on the cluster, as
 * Kafka's controller requires of the nodes and of forwarded requests. The
 * caller is the controller connection's principal (a node's mTLS or SCRAM
 * identity: make it a super user).
 */
export function authorizeControllerCalls(call: ControllerCallHandler, authorizer: () => Authorizer): ControllerCallHandler {
  return (api, body, caller) => {
    const access = new RequestAccess(authorizer(), caller?.security.principal ?? ANONYMOUS, caller?.remoteAddress ?? '');
    if (!access.onCluster(CONTROLLER_CALL_OPERATION)) {
      return Promise.reject(new SluiceError(Errors.CLUSTER_AUTHORIZATION_FAILED, `${access.who()} may not ${opName(CONTROLLER_CALL_OPERATION)} the cluster (controller call ${api.slice(0, 40)})`));
    }
    return call(api, body, caller);
  };
}
