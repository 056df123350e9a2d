// The access matrix of issue 16: every API each client listener serves ×
// {no credentials, wrong password, expired token, valid user without ACL,
// valid user with ACL, super user}, on both client protocols of one real
// node (SASL required on the WebSocket listener, SASL_PLAINTEXT on the Kafka
// listener, an authorizer on), each cell expecting exactly its error code in
// the API's own answer shape (or the connection closed unanswered), and every
// API that writes checked to have written nothing for a refused request.
// The cases come from one table; a test fails when an API the registries
// (or the node's own ApiVersions answers) serve has no row.
//
// Principals: User:admin (super user, OAUTHBEARER token from the test's own
// JWKS), User:alice (SCRAM on the WebSocket, PLAIN on the Kafka listener;
// All on topics t-*, groups g-*, Alter on the cluster — which implies
// Describe), User:bob (same mechanisms, no ACL). The node reaches its own
// controller listener without TLS, as User:ANONYMOUS, which is therefore a
// super user here — no client can act as it: both client listeners refuse
// every request before authentication.
//
// Cell order per row: admin, alice, bob, then the three unauthenticated
// cases, so that a refused write that got through would show in the state
// the privileged writes left (the checks compare against that state).

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { expect } from 'chai';
import { ProcessCluster, waitFor } from './harness.js';
import { BrokerConnection } from '../../src/client/broker-connection.js';
import { ClientLink } from '../../src/net/client-link.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import type { SaslOptions } from '../../src/client/sasl.js';
import { Client } from '../../src/index.js';
import { RawKafkaClient } from '../protocol/kafka/raw-client.js';
import type { Struct } from '../../src/protocol/kafka/message.js';
import { ApiKey, apiName } from '../../src/protocol/api-keys.js';
import { SUPPORTED_APIS } from '../../src/server/broker-api.js';
import { KAFKA_HANDLERS } from '../../src/server/kafka/handlers.js';
import { apiVersions } from '../../src/protocol/kafka/apis/api-versions/schema.js';
import { saslHandshake } from '../../src/protocol/kafka/apis/sasl-handshake/schema.js';
import { saslAuthenticate } from '../../src/protocol/kafka/apis/sasl-authenticate/schema.js';
import { metadata } from '../../src/protocol/kafka/apis/metadata/schema.js';
import { produce } from '../../src/protocol/kafka/apis/produce/schema.js';
import { fetch as fetchSpec } from '../../src/protocol/kafka/apis/fetch/schema.js';
import { listOffsets } from '../../src/protocol/kafka/apis/list-offsets/schema.js';
import { offsetForLeaderEpoch } from '../../src/protocol/kafka/apis/offset-for-leader-epoch/schema.js';
import { deleteRecords } from '../../src/protocol/kafka/apis/delete-records/schema.js';
import { createTopics } from '../../src/protocol/kafka/apis/create-topics/schema.js';
import { deleteTopics } from '../../src/protocol/kafka/apis/delete-topics/schema.js';
import { createPartitions } from '../../src/protocol/kafka/apis/create-partitions/schema.js';
import { describeConfigs } from '../../src/protocol/kafka/apis/describe-configs/schema.js';
import { alterConfigs } from '../../src/protocol/kafka/apis/alter-configs/schema.js';
import { incrementalAlterConfigs } from '../../src/protocol/kafka/apis/incremental-alter-configs/schema.js';
import { describeLogDirs } from '../../src/protocol/kafka/apis/describe-log-dirs/schema.js';
import { electLeaders } from '../../src/protocol/kafka/apis/elect-leaders/schema.js';
import { alterPartitionReassignments } from '../../src/protocol/kafka/apis/alter-partition-reassignments/schema.js';
import { listPartitionReassignments } from '../../src/protocol/kafka/apis/list-partition-reassignments/schema.js';
import { describeCluster } from '../../src/protocol/kafka/apis/describe-cluster/schema.js';
import { findCoordinator } from '../../src/protocol/kafka/apis/find-coordinator/schema.js';
import { joinGroup } from '../../src/protocol/kafka/apis/join-group/schema.js';
import { syncGroup } from '../../src/protocol/kafka/apis/sync-group/schema.js';
import { heartbeat } from '../../src/protocol/kafka/apis/heartbeat/schema.js';
import { leaveGroup } from '../../src/protocol/kafka/apis/leave-group/schema.js';
import { offsetCommit } from '../../src/protocol/kafka/apis/offset-commit/schema.js';
import { offsetFetch } from '../../src/protocol/kafka/apis/offset-fetch/schema.js';
import { offsetDelete } from '../../src/protocol/kafka/apis/offset-delete/schema.js';
import { listGroups } from '../../src/protocol/kafka/apis/list-groups/schema.js';
import { describeGroups } from '../../src/protocol/kafka/apis/describe-groups/schema.js';
import { deleteGroups } from '../../src/protocol/kafka/apis/delete-groups/schema.js';
import { initProducerId } from '../../src/protocol/kafka/apis/init-producer-id/schema.js';
import { describeAcls } from '../../src/protocol/kafka/apis/describe-acls/schema.js';
import { createAcls } from '../../src/protocol/kafka/apis/create-acls/schema.js';
import { deleteAcls } from '../../src/protocol/kafka/apis/delete-acls/schema.js';
import { describeClientQuotas } from '../../src/protocol/kafka/apis/describe-client-quotas/schema.js';
import { alterClientQuotas } from '../../src/protocol/kafka/apis/alter-client-quotas/schema.js';
import { describeUserScramCredentials } from '../../src/protocol/kafka/apis/describe-user-scram-credentials/schema.js';
import { alterUserScramCredentials } from '../../src/protocol/kafka/apis/alter-user-scram-credentials/schema.js';
import { addPartitionsToTxn } from '../../src/protocol/kafka/apis/add-partitions-to-txn/schema.js';
import { addOffsetsToTxn } from '../../src/protocol/kafka/apis/add-offsets-to-txn/schema.js';
import { endTxn } from '../../src/protocol/kafka/apis/end-txn/schema.js';
import { txnOffsetCommit } from '../../src/protocol/kafka/apis/txn-offset-commit/schema.js';
import { describeTransactions } from '../../src/protocol/kafka/apis/describe-transactions/schema.js';
import { listTransactions } from '../../src/protocol/kafka/apis/list-transactions/schema.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { AclOperation as Op, AclPermission, MATCH_ALL_FILTER, PatternType, ResourceType, type AclBinding } from '../../src/security/acl.js';
import { Errors, SluiceError } from '../../src/util/errors.js';

const OK = 0;
const TOPIC = Errors.TOPIC_AUTHORIZATION_FAILED.code;
const GROUP = Errors.GROUP_AUTHORIZATION_FAILED.code;
const CLUSTER = Errors.CLUSTER_AUTHORIZATION_FAILED.code;
const TXN = Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code;
const SASL_FAILED = Errors.SASL_AUTHENTICATION_FAILED.code;
const ILLEGAL_SASL = Errors.ILLEGAL_SASL_STATE.code;
const UNKNOWN_MEMBER = Errors.UNKNOWN_MEMBER_ID.code;
/** The connection was closed and the request never answered (Kafka's rule before authentication). */
const CLOSED = 'closed';
/** A code, CLOSED, or (only in a failing cell) a description of what happened instead. */
type Outcome = number | string;

const PASSWORDS: Record<string, string> = { admin: 'admin-secret', alice: 'alice-secret', bob: 'bob-secret' };
const TOPIC_NAME = 't-data';
const batch = (v: string): Buffer => Buffer.from(encodeRecordBatch({ records: [{ value: Buffer.from(v), timestamp: Date.now() }] }));
const first = (x: unknown): Struct => (x as Struct[])[0]!;

// ---- the token issuer the node trusts (its JWKS file)
const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...pair.publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'RS256' };
function jwt(sub: string, expSeconds: number): string {
  const h = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: 'k1' })).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const p = Buffer.from(JSON.stringify({ sub, iat: now - 10, exp: now + expSeconds })).toString('base64url');
  return `${h}.${p}.${sign('sha256', Buffer.from(`${h}.${p}`), pair.privateKey).toString('base64url')}`;
}

/** The six identities of the matrix, in the order each row runs them. */
type Who = 'admin' | 'alice' | 'bob' | 'none' | 'wrongPassword' | 'expiredToken';
const WHO: readonly Who[] = ['admin', 'alice', 'bob', 'none', 'wrongPassword', 'expiredToken'];
type Authenticated = 'admin' | 'alice' | 'bob';
const isAuthenticated = (w: Who): w is Authenticated => w === 'admin' || w === 'alice' || w === 'bob';
/** Who may write: the cases whose writes the checks expect to find. */
const refusedWho = (w: Who): boolean => w !== 'admin' && w !== 'alice';

/** WebSocket logins of the authenticated identities (the Sluice client's own SASL code). */
function wsLogin(who: Authenticated): SaslOptions {
  return who === 'admin'
    ? { mechanism: 'OAUTHBEARER', token: jwt('admin', 3600) }
    : { mechanism: 'SCRAM-SHA-256', username: who, password: PASSWORDS[who]! };
}
/** One-message logins (PLAIN, OAUTHBEARER), as raw SaslAuthenticate bytes: Kafka-side logins and the failing cases on both protocols. */
function oneStepLogin(who: Exclude<Who, 'none'>): { mechanism: string; bytes: Buffer } {
  const plain = (u: string, p: string) => ({ mechanism: 'PLAIN', bytes: Buffer.from(`\u0000${u}\u0000${p}`) });
  const bearer = (t: string) => ({ mechanism: 'OAUTHBEARER', bytes: Buffer.from(`n,,\u0001auth=Bearer ${t}\u0001\u0001`) });
  switch (who) {
    case 'wrongPassword': return plain('alice', 'not-her-password');
    case 'expiredToken': return bearer(jwt('alice', -3600));
    case 'admin': return bearer(jwt('admin', 3600));
    default: return plain(who, PASSWORDS[who]!);
  }
}

/** A WebSocket connection: the typed client and its raw link (for APIs the client has no method for). */
interface Ws {
  readonly c: BrokerConnection;
  readonly link: ClientLink;
  readonly raw: (apiKey: number, body: object) => Promise<Struct>;
}
type Proto = 'ws' | 'kafka';

interface Cell<C> {
  readonly run: (c: C, who: Who) => Promise<Outcome>;
  /** The cell changes the connection's SASL state: it gets a connection of its own. */
  readonly fresh?: boolean;
}

/**
 * One row per API. Outcomes of the authenticated identities (alice and
 * admin default to OK); `none` defaults to CLOSED; the wrong password and
 * the expired token always fail at login with SASL_AUTHENTICATION_FAILED,
 * and the request pipelined behind the failed login is never answered.
 */
interface Row {
  readonly key: number;
  readonly bob: Outcome;
  readonly alice?: Outcome;
  readonly admin?: Outcome;
  readonly none?: Outcome;
  readonly ws?: Cell<Ws> | ((c: Ws, who: Who) => Promise<Outcome>);
  readonly kafka?: Cell<RawKafkaClient> | ((c: RawKafkaClient, who: Who) => Promise<Outcome>);
  /** Checked after the row's six cells on a protocol: refused requests wrote nothing. */
  readonly unchanged?: (proto: Proto) => Promise<unknown>;
}

const cellOf = <C>(x: Cell<C> | ((c: C, who: Who) => Promise<Outcome>) | undefined): Cell<C> | undefined => (typeof x === 'function' ? { run: x } : x);

/** A typed client call's outcome: OK, its thrown error code, or CLOSED. */
const wsCode = async (p: Promise<unknown>): Promise<Outcome> => {
  try {
    await p;
    return OK;
  } catch (err) {
    if (err instanceof SluiceError) return err.code === Errors.NETWORK_EXCEPTION.code ? CLOSED : err.code;
    throw err;
  }
};
const code = (x: unknown): number => (x as { errorCode: number }).errorCode;
/** `served` (an answer that proves the request was authorized and served, like UNKNOWN_MEMBER_ID for a stranger) counts as OK. */
const servedAs = (served: number) => (c: Outcome): Outcome => (c === served ? OK : c);

let admin: BrokerConnection;
const endOffset = async (topic: string, timestamp = -1): Promise<number> => (await admin.listOffsets({ topics: [{ name: topic, partitions: [{ partition: 0, timestamp }] }] })).topics[0]!.partitions[0]!.offset;
const partitionCount = async (topic: string): Promise<number> => (await admin.metadata([topic])).topics[0]!.partitions.length;
const topicCode = async (topic: string): Promise<number> => (await admin.metadata([topic])).topics[0]!.errorCode;
const committed = async (group: string): Promise<number> => {
  const r = await admin.offsetFetch({ groupId: group, topics: [{ name: TOPIC_NAME, partitions: [0] }] });
  return r.topics[0]?.partitions[0]?.committedOffset ?? -1;
};
const topicConfig = async (topic: string, name: string): Promise<string | null> => {
  const r = await admin.admin(ApiKey.DescribeConfigs, { resourceType: 'topic', resourceName: topic });
  return r.configs.find((c) => c.name === name)?.value ?? null;
};
const P = (proto: Proto): string => (proto === 'ws' ? 'ws' : 'k');
const others = (proto: Proto, prefix: string): string[] => WHO.filter(refusedWho).map((w) => `${prefix}-${P(proto)}-${w}`);
const allowedNames = (proto: Proto, prefix: string): string[] => [`${prefix}-${P(proto)}-admin`, `${prefix}-${P(proto)}-alice`];

function acl(principal: string, resourceType: AclBinding['resourceType'], resourceName: string, patternType: AclBinding['patternType'], operation: AclBinding['operation']): AclBinding {
  return { resourceType, resourceName, patternType, principal, host: '*', operation, permissionType: AclPermission.ALLOW };
}
const aclPrincipals = async (resourceName: string): Promise<string[]> => (await admin.admin(ApiKey.DescribeAcls, { filter: { ...MATCH_ALL_FILTER, resourceName } })).acls.map((a) => a.principal).sort();
const quotaUsers = async (): Promise<string[]> => {
  const r = await admin.admin(ApiKey.DescribeClientQuotas, { components: [{ entityType: 'user', matchType: 2, match: null }] });
  return (r.entries ?? []).map((e) => String(e.entity.find((p) => p.entityType === 'user')?.entityName)).sort();
};
const scramUsers = async (): Promise<string[]> => (await admin.admin(ApiKey.DescribeUserScramCredentials, { users: null })).results.map((r) => r.user).sort();

/** DeleteRecords: the privileged cells delete up to offset 1, the refused ones ask for 2 (the topic holds 3 records). */
const deleteUpTo = (who: Who): number => (refusedWho(who) ? 2 : 1);
/** CreatePartitions: admin raises to 2, alice to 3, the refused ones ask for 9. */
const partitionsFor = (who: Who): number => (who === 'admin' ? 2 : who === 'alice' ? 3 : 9);
/** Config values: the refused ones would set 111111. */
const retentionFor = (who: Who): string => (who === 'admin' ? '222222' : who === 'alice' ? '333333' : '111111');
/** Each protocol's own objects for the write checks. */
const own = (proto: Proto, prefix: string, who: Who | 'keep'): string => `${prefix}-${P(proto)}-${who}`;
/** What a refused delete names: a resource kept for the check. */
const target = (proto: Proto, prefix: string, who: Who): string => own(proto, prefix, refusedWho(who) ? 'keep' : who);

// ---- transactions: alice holds All on the transactional ids x-*; each identity uses its own id per row
const TXN_TOPIC = 't-txn';
const txnId = (proto: Proto, who: Who, row: string): string => `x-${P(proto)}-${who}-${row}`;
/** Coordinator answers a client retries: the coordinator loading, an earlier transaction of the id still completing. */
const TXN_RETRIABLE: readonly number[] = [Errors.COORDINATOR_LOAD_IN_PROGRESS.code, Errors.CONCURRENT_TRANSACTIONS.code, Errors.COORDINATOR_NOT_AVAILABLE.code];
const TXN_RETRY_MS = 20_000;
/**
 * A request retried (bounded, on the harness's waitFor) while it answers a
 * retriable coordinator code; then its last answer. A failed request (the
 * connection closed) fails at once, not retried.
 */
async function retried(send: () => Promise<Struct>, codeOf: (r: Struct) => number = code): Promise<Struct> {
  let last: Struct | undefined;
  let failed: { err: unknown } | undefined;
  try {
    await waitFor('a coordinator answer that is not retriable', async () => {
      try {
        last = await send();
      } catch (err) {
        failed = { err };
        return true;
      }
      return TXN_RETRIABLE.includes(codeOf(last)) ? undefined : true;
    }, { timeoutMs: TXN_RETRY_MS, intervalMs: 50 });
  } catch (err) {
    if (last === undefined) throw err;
  }
  if (failed) throw failed.err;
  return last!;
}
interface TxnProducer { readonly producerId: number; readonly producerEpoch: number }
/** The privileged identities start a producer of their id first; the refused ones name an arbitrary producer (never reached). */
async function txnProducer(who: Who, init: () => Promise<Struct>): Promise<TxnProducer | number> {
  if (refusedWho(who)) return { producerId: 0, producerEpoch: 0 };
  const r = await retried(init);
  return code(r) !== OK ? code(r) : { producerId: r.producerId as number, producerEpoch: r.producerEpoch as number };
}
const wholeCode = (r: Struct): number => (r.errorCode as number | undefined) ?? OK;
const wsInit = (raw: Ws['raw'], id: string) => () => raw(ApiKey.InitProducerId, { transactionalId: id, transactionTimeoutMs: 60_000 });
const kInit = (c: RawKafkaClient, id: string) => () => c.request(initProducerId, 4, { transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
const wsAdd = (raw: Ws['raw'], id: string, p: TxnProducer): Promise<Struct> => retried(() => raw(ApiKey.AddPartitionsToTxn, { transactionalId: id, ...p, topics: [{ name: TXN_TOPIC, partitions: [0] }] }),
  (r) => (wholeCode(r) !== OK ? wholeCode(r) : code(first(first(r.results).partitions))));
const wsAddCode = (r: Struct): number => (wholeCode(r) !== OK ? wholeCode(r) : code(first(first(r.results).partitions)));
const kAdd = (c: RawKafkaClient, id: string, p: TxnProducer): Promise<Struct> => retried(() => c.request(addPartitionsToTxn, 3, {
  v3AndBelowTransactionalId: id, v3AndBelowProducerId: p.producerId, v3AndBelowProducerEpoch: p.producerEpoch, v3AndBelowTopics: [{ name: TXN_TOPIC, partitions: [0] }],
}), (r) => first(first(r.resultsByTopicV3AndBelow).resultsByPartition).partitionErrorCode as number);
const kAddCode = (r: Struct): number => first(first(r.resultsByTopicV3AndBelow).resultsByPartition).partitionErrorCode as number;
/** Each identity's group for its transactional offsets. */
const txnGroup = (proto: Proto, who: Who): string => `g-txn-${P(proto)}-${who}`;

const ROWS: readonly Row[] = [
  // ------------------------------------------------------------ data plane
  {
    key: ApiKey.Produce, bob: TOPIC,
    ws: async ({ c }, who) => code((await c.produce({ acks: -1, timeoutMs: 5000, topics: [{ name: 't-p-ws', partitions: [{ partition: 0, records: batch(who) }] }] }))!.topics[0]!.partitions[0]),
    kafka: async (c, who) => code(first(first((await c.request(produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 't-p-k', partitionData: [{ index: 0, records: batch(who) }] }] })).responses).partitionResponses)),
    unchanged: async (proto) => expect(await endOffset(`t-p-${P(proto)}`)).to.equal(2), // alice's and admin's records
  },
  {
    key: ApiKey.Fetch, bob: TOPIC,
    ws: async ({ c }) => code((await c.fetch({ maxWaitMs: 0, topics: [{ name: TOPIC_NAME, partitions: [{ partition: 0, fetchOffset: 0 }] }] })).topics[0]!.partitions[0]),
    kafka: async (c) => code(first(first((await c.request(fetchSpec, 11, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: TOPIC_NAME, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }], forgottenTopicsData: [], rackId: '',
    })).responses).partitions)),
  },
  {
    key: ApiKey.ListOffsets, bob: TOPIC,
    ws: async ({ c }) => code((await c.listOffsets({ topics: [{ name: TOPIC_NAME, partitions: [{ partition: 0, timestamp: -1 }] }] })).topics[0]!.partitions[0]),
    kafka: async (c) => code(first(first((await c.request(listOffsets, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: TOPIC_NAME, partitions: [{ partitionIndex: 0, timestamp: -1 }] }] })).topics).partitions)),
  },
  {
    key: ApiKey.Metadata, bob: TOPIC,
    ws: async ({ c }) => code((await c.metadata([TOPIC_NAME])).topics[0]),
    kafka: async (c) => code(first((await c.request(metadata, 12, { topics: [{ topicId: '0'.repeat(32), name: TOPIC_NAME }], allowAutoTopicCreation: false })).topics)),
  },
  {
    key: ApiKey.OffsetForLeaderEpoch, bob: TOPIC,
    ws: async ({ c }) => code((await c.offsetForLeaderEpoch({ topics: [{ name: TOPIC_NAME, partitions: [{ partition: 0, leaderEpoch: 0 }] }] })).topics[0]!.partitions[0]),
    kafka: async (c) => code(first(first((await c.request(offsetForLeaderEpoch, 4, { replicaId: -2, topics: [{ topic: TOPIC_NAME, partitions: [{ partition: 0, leaderEpoch: 0 }] }] })).topics).partitions)),
  },
  {
    key: ApiKey.DeleteRecords, bob: TOPIC,
    ws: async ({ c }, who) => code((await c.deleteRecords({ topics: [{ name: 't-del-ws', partitions: [{ partition: 0, offset: deleteUpTo(who) }] }] })).topics[0]!.partitions[0]),
    kafka: async (c, who) => code(first(first((await c.request(deleteRecords, 2, { topics: [{ name: 't-del-k', partitions: [{ partitionIndex: 0, offset: deleteUpTo(who) }] }], timeoutMs: 5000 })).topics).partitions)),
    unchanged: async (proto) => expect(await endOffset(`t-del-${P(proto)}`, -2), 'log start offset').to.equal(1),
  },
  {
    // An idempotent producer: IdempotentWrite on the cluster, or Write on some topic (alice has All on t-*).
    key: ApiKey.InitProducerId, bob: CLUSTER,
    ws: async ({ c }) => wsCode(c.initProducerId()),
    kafka: async (c) => code(await c.request(initProducerId, 4, { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1, producerEpoch: -1 })),
  },
  // ------------------------------------------------------------ cluster, open to every authenticated principal
  {
    key: ApiKey.ApiVersions, bob: OK, none: OK,
    ws: async ({ c }) => wsCode(c.apiVersions()),
    kafka: async (c) => code(await c.request(apiVersions, 3, { clientSoftwareName: 'matrix', clientSoftwareVersion: '1' })),
  },
  {
    key: ApiKey.DescribeCluster, bob: OK,
    ws: async ({ c }) => wsCode(c.describeCluster()),
    kafka: async (c) => code(await c.request(describeCluster, 0, { includeClusterAuthorizedOperations: false })),
  },
  {
    // A re-authentication's first step (KIP-368), with the mechanism the connection logged in with; before any login, a first handshake.
    key: ApiKey.SaslHandshake, bob: OK, none: OK,
    ws: { fresh: true, run: async ({ raw }, who) => code(await raw(ApiKey.SaslHandshake, { mechanism: who === 'admin' ? 'OAUTHBEARER' : 'SCRAM-SHA-256' })) },
    kafka: { fresh: true, run: async (c, who) => code(await c.request(saslHandshake, 1, { mechanism: who === 'admin' ? 'OAUTHBEARER' : 'PLAIN' })) },
  },
  {
    // A re-authentication: handshake, then the mechanism's first message (served: OK, or SCRAM's challenge).
    // Without a handshake first (the unauthenticated case): ILLEGAL_SASL_STATE, and the connection closes.
    key: ApiKey.SaslAuthenticate, bob: OK, none: ILLEGAL_SASL,
    ws: {
      fresh: true,
      run: async ({ raw }, who) => {
        if (!isAuthenticated(who)) return code(await raw(ApiKey.SaslAuthenticate, { authBytes: new Uint8Array(0) }));
        const mechanism = who === 'admin' ? 'OAUTHBEARER' : 'SCRAM-SHA-256';
        expect(code(await raw(ApiKey.SaslHandshake, { mechanism }))).to.equal(0);
        const bytes = who === 'admin' ? oneStepLogin('admin').bytes : Buffer.from(`n,,n=${who},r=${randomBytes(12).toString('base64url')}`);
        return code(await raw(ApiKey.SaslAuthenticate, { authBytes: bytes }));
      },
    },
    kafka: {
      fresh: true,
      run: async (c, who) => {
        if (!isAuthenticated(who)) return code(await c.request(saslAuthenticate, 2, { authBytes: Buffer.alloc(0) }));
        const l = oneStepLogin(who);
        expect(code(await c.request(saslHandshake, 1, { mechanism: l.mechanism }))).to.equal(0);
        return code(await c.request(saslAuthenticate, 2, { authBytes: l.bytes }));
      },
    },
  },
  // ------------------------------------------------------------ groups
  {
    key: ApiKey.FindCoordinator, bob: GROUP,
    ws: async ({ c }) => wsCode(c.findCoordinator('g-1')),
    kafka: async (c) => code(first((await c.request(findCoordinator, 4, { keyType: 0, coordinatorKeys: ['g-1'] })).coordinators)),
  },
  {
    // A first join without a member id is MEMBER_ID_REQUIRED (KIP-394): the request was authorized and served.
    key: ApiKey.JoinGroup, bob: GROUP,
    ws: async ({ c }) => servedAs(Errors.MEMBER_ID_REQUIRED.code)(await wsCode(c.joinGroup({ groupId: 'g-1', sessionTimeoutMs: 6000, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: new Uint8Array(0) }] }))),
    kafka: async (c) => servedAs(Errors.MEMBER_ID_REQUIRED.code)(code(await c.request(joinGroup, 9, { groupId: 'g-1', sessionTimeoutMs: 6000, rebalanceTimeoutMs: 6000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }], reason: null }))),
  },
  {
    // A member the group does not know: UNKNOWN_MEMBER_ID, served (checked before the protocol it names, as in Kafka).
    key: ApiKey.SyncGroup, bob: GROUP, alice: UNKNOWN_MEMBER, admin: UNKNOWN_MEMBER,
    ws: async ({ c }) => wsCode(c.syncGroup({ groupId: 'g-1', generationId: 1, memberId: 'stranger' })),
    kafka: async (c) => code(await c.request(syncGroup, 5, { groupId: 'g-1', generationId: 1, memberId: 'stranger', groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] })),
  },
  {
    key: ApiKey.Heartbeat, bob: GROUP, alice: UNKNOWN_MEMBER, admin: UNKNOWN_MEMBER,
    ws: async ({ c }) => wsCode(c.heartbeat({ groupId: 'g-1', generationId: 1, memberId: 'stranger' })),
    kafka: async (c) => code(await c.request(heartbeat, 4, { groupId: 'g-1', generationId: 1, memberId: 'stranger', groupInstanceId: null })),
  },
  {
    // The whole request's code (GROUP_AUTHORIZATION_FAILED for bob), then the member's own (UNKNOWN_MEMBER_ID: served).
    key: ApiKey.LeaveGroup, bob: GROUP, alice: UNKNOWN_MEMBER, admin: UNKNOWN_MEMBER,
    ws: async ({ c }) => {
      const r = c.leaveGroup({ groupId: 'g-1', members: [{ memberId: 'stranger' }] });
      const whole = await wsCode(r);
      return whole !== OK ? whole : code((await r).members[0]);
    },
    kafka: async (c) => {
      const r = await c.request(leaveGroup, 5, { groupId: 'g-1', members: [{ memberId: 'stranger', groupInstanceId: null, reason: null }] });
      return code(r) !== OK ? code(r) : code(first(r.members));
    },
  },
  {
    // A commit outside group management, into each identity's own group; refused ones must leave their groups without offsets.
    key: ApiKey.OffsetCommit, bob: GROUP,
    ws: async ({ c }, who) => code((await c.offsetCommit({ groupId: own('ws', 'g-oc', who), generationId: -1, memberId: '', topics: [{ name: TOPIC_NAME, partitions: [{ partition: 0, committedOffset: 1 }] }] })).topics[0]!.partitions[0]),
    kafka: async (c, who) => code(first(first((await c.request(offsetCommit, 8, {
      groupId: own('kafka', 'g-oc', who), generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
      topics: [{ name: TOPIC_NAME, partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null }] }],
    })).topics).partitions)),
    unchanged: async (proto) => {
      for (const g of allowedNames(proto, 'g-oc')) expect(await committed(g), g).to.equal(1);
      for (const g of others(proto, 'g-oc')) expect(await committed(g), g).to.equal(-1);
    },
  },
  {
    key: ApiKey.OffsetFetch, bob: GROUP,
    ws: async ({ c }) => wsCode(c.offsetFetch({ groupId: 'g-1', topics: null })),
    kafka: async (c) => code(await c.request(offsetFetch, 7, { groupId: 'g-1', topics: null, requireStable: false })),
  },
  {
    // Bob gets an empty list (he may describe no group); the others see the test's groups.
    key: ApiKey.ListGroups, bob: OK,
    ws: async ({ c }, who) => {
      const groups = (await c.listGroups()).groups.map((g) => g.groupId);
      return (who === 'bob') === (groups.length === 0) ? OK : Errors.UNKNOWN_SERVER_ERROR.code;
    },
    kafka: async (c, who) => {
      const r = await c.request(listGroups, 4, { statesFilter: [] });
      return code(r) !== OK ? code(r) : (who === 'bob') === ((r.groups as Struct[]).length === 0) ? OK : Errors.UNKNOWN_SERVER_ERROR.code;
    },
  },
  {
    key: ApiKey.DescribeGroups, bob: GROUP,
    ws: async ({ c }) => code((await c.describeGroups(['g-1'])).groups[0]),
    kafka: async (c) => code(first((await c.request(describeGroups, 5, { groups: ['g-1'], includeAuthorizedOperations: false })).groups)),
  },
  {
    // Each privileged cell deletes its own group (it has offsets); the refused ones name g-dg-*-keep, which must stay.
    key: ApiKey.DeleteGroups, bob: GROUP,
    ws: async ({ c }, who) => code((await c.deleteGroups([target('ws', 'g-dg', who)])).results[0]),
    kafka: async (c, who) => code(first((await c.request(deleteGroups, 2, { groupsNames: [target('kafka', 'g-dg', who)] })).results)),
    unchanged: async (proto) => {
      expect(await committed(own(proto, 'g-dg', 'keep'))).to.equal(0);
      for (const g of allowedNames(proto, 'g-dg')) expect(await committed(g), g).to.equal(-1);
    },
  },
  {
    key: ApiKey.OffsetDelete, bob: GROUP,
    ws: async ({ raw }, who) => {
      const r = await raw(ApiKey.OffsetDelete, { groupId: target('ws', 'g-od', who), topics: [{ name: TOPIC_NAME, partitions: [0] }] });
      return code(r) !== OK ? code(r) : code(first(first(r.topics).partitions));
    },
    kafka: async (c, who) => {
      const r = await c.request(offsetDelete, 0, { groupId: target('kafka', 'g-od', who), topics: [{ name: TOPIC_NAME, partitions: [{ partitionIndex: 0 }] }] });
      return code(r) !== OK ? code(r) : code(first(first(r.topics).partitions));
    },
    unchanged: async (proto) => {
      expect(await committed(own(proto, 'g-od', 'keep'))).to.equal(0);
      for (const g of allowedNames(proto, 'g-od')) expect(await committed(g), g).to.equal(-1);
    },
  },
  // ------------------------------------------------------------ topics and configs
  {
    key: ApiKey.CreateTopics, bob: TOPIC,
    ws: async ({ c }, who) => code((await c.admin(ApiKey.CreateTopics, { topics: [{ name: own('ws', 't-ct', who), numPartitions: 1, replicationFactor: 1 }] })).topics[0]),
    kafka: async (c, who) => code(first((await c.request(createTopics, 7, { topics: [{ name: own('kafka', 't-ct', who), numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000 })).topics)),
    unchanged: async (proto) => {
      for (const t of allowedNames(proto, 't-ct')) expect(await topicCode(t), t).to.equal(OK);
      for (const t of others(proto, 't-ct')) expect(await topicCode(t), t).to.equal(Errors.UNKNOWN_TOPIC_OR_PARTITION.code);
    },
  },
  {
    key: ApiKey.DeleteTopics, bob: TOPIC,
    ws: async ({ c }, who) => code((await c.admin(ApiKey.DeleteTopics, { names: [target('ws', 't-dt', who)] })).topics[0]),
    kafka: async (c, who) => code(first((await c.request(deleteTopics, 4, { topicNames: [target('kafka', 't-dt', who)], timeoutMs: 5000 })).responses)),
    unchanged: async (proto) => {
      expect(await topicCode(own(proto, 't-dt', 'keep'))).to.equal(OK);
      for (const t of allowedNames(proto, 't-dt')) await waitFor(`${t} deleted`, async () => (await topicCode(t)) === Errors.UNKNOWN_TOPIC_OR_PARTITION.code || undefined, { timeoutMs: 10_000, intervalMs: 100 });
    },
  },
  {
    key: ApiKey.CreatePartitions, bob: TOPIC,
    ws: async ({ c }, who) => wsCode(c.admin(ApiKey.CreatePartitions, { topic: 't-cp-ws', count: partitionsFor(who) }).then((r) => { if (r.errorCode !== 0) throw new SluiceError(Errors.UNKNOWN_SERVER_ERROR, `code ${r.errorCode}`); })),
    kafka: async (c, who) => code(first((await c.request(createPartitions, 2, { topics: [{ name: 't-cp-k', count: partitionsFor(who), assignments: null }], timeoutMs: 5000, validateOnly: false })).results)),
    unchanged: async (proto) => expect(await partitionCount(`t-cp-${P(proto)}`)).to.equal(3),
  },
  {
    key: ApiKey.DescribeConfigs, bob: TOPIC,
    ws: async ({ c }) => wsCode(c.admin(ApiKey.DescribeConfigs, { resourceType: 'topic', resourceName: TOPIC_NAME })),
    kafka: async (c) => code(first((await c.request(describeConfigs, 4, { resources: [{ resourceType: 2, resourceName: TOPIC_NAME, configurationKeys: null }], includeSynonyms: false, includeDocumentation: false })).results)),
  },
  {
    key: ApiKey.AlterConfigs, bob: TOPIC,
    ws: async ({ c }, who) => code((await c.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 'topic', resourceName: 't-ac-ws', set: { 'retention.ms': retentionFor(who) } }] })).resources[0]),
    kafka: async (c, who) => code(first((await c.request(alterConfigs, 1, { resources: [{ resourceType: 2, resourceName: 't-ac-k', configs: [{ name: 'retention.ms', value: retentionFor(who) }] }], validateOnly: false })).responses)),
    unchanged: async (proto) => expect(await topicConfig(`t-ac-${P(proto)}`, 'retention.ms')).to.equal(retentionFor('alice')),
  },
  {
    key: 44 /* IncrementalAlterConfigs: the Kafka listener's only */, bob: TOPIC,
    kafka: async (c, who) => code(first((await c.request(incrementalAlterConfigs, 1, { resources: [{ resourceType: 2, resourceName: 't-iac-k', configs: [{ name: 'retention.ms', configOperation: 0, value: retentionFor(who) }] }], validateOnly: false })).responses)),
    unchanged: async () => expect(await topicConfig('t-iac-k', 'retention.ms')).to.equal(retentionFor('alice')),
  },
  // ------------------------------------------------------------ cluster administration
  {
    key: ApiKey.DescribeLogDirs, bob: CLUSTER,
    ws: async ({ c }) => wsCode(c.describeLogDirs({ topics: [] })),
    kafka: async (c) => code(await c.request(describeLogDirs, 4, { topics: null })),
  },
  {
    key: ApiKey.ElectLeaders, bob: CLUSTER,
    ws: async ({ c }) => wsCode(c.admin(ApiKey.ElectLeaders, { partitions: [{ topic: TOPIC_NAME, partition: 0 }] })),
    kafka: async (c) => code(await c.request(electLeaders, 2, { electionType: 0, topicPartitions: [{ topic: TOPIC_NAME, partitions: [0] }], timeoutMs: 5000 })),
  },
  {
    // Cancelling a move that is not happening: NO_REASSIGNMENT_IN_PROGRESS on the partition, served.
    key: ApiKey.AlterPartitionReassignments, bob: CLUSTER,
    ws: async ({ c }) => {
      const r = c.admin(ApiKey.AlterPartitionReassignments, { partitions: [{ topic: TOPIC_NAME, partition: 0, replicas: null }] });
      const whole = await wsCode(r);
      return whole !== OK ? whole : servedAs(Errors.NO_REASSIGNMENT_IN_PROGRESS.code)(code((await r).partitions[0]));
    },
    kafka: async (c) => {
      const r = await c.request(alterPartitionReassignments, 0, { timeoutMs: 5000, topics: [{ name: TOPIC_NAME, partitions: [{ partitionIndex: 0, replicas: null }] }] });
      return code(r) !== OK ? code(r) : servedAs(Errors.NO_REASSIGNMENT_IN_PROGRESS.code)(code(first(first(r.responses).partitions)));
    },
  },
  {
    key: ApiKey.ListPartitionReassignments, bob: CLUSTER,
    ws: async ({ c }) => wsCode(c.admin(ApiKey.ListPartitionReassignments, {})),
    kafka: async (c) => code(await c.request(listPartitionReassignments, 0, { timeoutMs: 5000, topics: null })),
  },
  {
    key: ApiKey.DescribeQuorum, bob: CLUSTER,
    ws: async ({ c }) => wsCode(c.admin(ApiKey.DescribeQuorum, {})),
  },
  {
    key: ApiKey.DescribeAcls, bob: CLUSTER,
    ws: async ({ c }) => wsCode(c.admin(ApiKey.DescribeAcls, { filter: MATCH_ALL_FILTER })),
    kafka: async (c) => code(await c.request(describeAcls, 3, { resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 })),
  },
  {
    key: ApiKey.CreateAcls, bob: CLUSTER,
    // A refusal of the whole request is the answer's error body: the client throws it.
    ws: async ({ c }, who) => {
      const r = c.admin(ApiKey.CreateAcls, { creations: [acl(`User:${own('ws', 'x', who)}`, ResourceType.TOPIC, 'x', PatternType.LITERAL, Op.READ)] });
      const whole = await wsCode(r);
      return whole !== OK ? whole : code((await r).results[0]);
    },
    kafka: async (c, who) => code(first((await c.request(createAcls, 3, { creations: [{ resourceType: 2, resourceName: 'x', resourcePatternType: 3, principal: `User:${own('kafka', 'x', who)}`, host: '*', operation: 3, permissionType: 3 }] })).results)),
    unchanged: async (proto) => expect((await aclPrincipals('x')).filter((p) => p.startsWith(`User:x-${P(proto)}-`))).to.deep.equal(allowedNames(proto, 'x').map((n) => `User:${n}`).sort()),
  },
  {
    // Each privileged cell removes its own ACL (on resource y); the refused ones name User:y-*-keep's, which must stay.
    key: ApiKey.DeleteAcls, bob: CLUSTER,
    ws: async ({ c }, who) => {
      const r = c.admin(ApiKey.DeleteAcls, { filters: [{ ...MATCH_ALL_FILTER, resourceName: 'y', principal: `User:${target('ws', 'y', who)}` }] });
      const whole = await wsCode(r);
      return whole !== OK ? whole : code((await r).results[0]);
    },
    kafka: async (c, who) => code(first((await c.request(deleteAcls, 3, {
      filters: [{ resourceTypeFilter: 1, resourceNameFilter: 'y', patternTypeFilter: 1, principalFilter: `User:${target('kafka', 'y', who)}`, hostFilter: null, operation: 1, permissionType: 1 }],
    })).filterResults)),
    unchanged: async (proto) => expect((await aclPrincipals('y')).filter((p) => p.startsWith(`User:y-${P(proto)}-`))).to.deep.equal([`User:${own(proto, 'y', 'keep')}`]),
  },
  {
    // Alice may alter the cluster but not describe its configs: quotas need DescribeConfigs/AlterConfigs on the cluster.
    key: ApiKey.DescribeClientQuotas, bob: CLUSTER, alice: CLUSTER,
    ws: async ({ c }) => wsCode(c.admin(ApiKey.DescribeClientQuotas, { components: [{ entityType: 'user', matchType: 2, match: null }] })),
    kafka: async (c) => code(await c.request(describeClientQuotas, 1, { components: [{ entityType: 'user', matchType: 2, match: null }], strict: false })),
  },
  {
    key: ApiKey.AlterClientQuotas, bob: CLUSTER, alice: CLUSTER,
    ws: async ({ c }, who) => {
      const r = c.admin(ApiKey.AlterClientQuotas, { entries: [{ entity: [{ entityType: 'user', entityName: own('ws', 'q', who) }], ops: [{ key: 'producer_byte_rate', value: 1_000_000, remove: false }] }] });
      const whole = await wsCode(r);
      return whole !== OK ? whole : code((await r).entries[0]);
    },
    kafka: async (c, who) => code(first((await c.request(alterClientQuotas, 1, {
      entries: [{ entity: [{ entityType: 'user', entityName: own('kafka', 'q', who) }], ops: [{ key: 'producer_byte_rate', value: 1_000_000, remove: false }] }], validateOnly: false,
    })).entries)),
    unchanged: async (proto) => expect((await quotaUsers()).filter((u) => u.startsWith(`q-${P(proto)}-`))).to.deep.equal([own(proto, 'q', 'admin')]),
  },
  {
    key: ApiKey.DescribeUserScramCredentials, bob: CLUSTER,
    ws: async ({ c }) => wsCode(c.admin(ApiKey.DescribeUserScramCredentials, { users: null })),
    kafka: async (c) => code(await c.request(describeUserScramCredentials, 0, { users: null })),
  },
  {
    key: ApiKey.AlterUserScramCredentials, bob: CLUSTER,
    ws: async ({ c }, who) => {
      const r = c.admin(ApiKey.AlterUserScramCredentials, { deletions: [], upsertions: [{ name: own('ws', 'u', who), mechanism: 1, iterations: 4096, salt: randomBytes(16), saltedPassword: randomBytes(32) }] });
      const whole = await wsCode(r);
      return whole !== OK ? whole : code((await r).results[0]);
    },
    kafka: async (c, who) => code(first((await c.request(alterUserScramCredentials, 0, {
      deletions: [], upsertions: [{ name: own('kafka', 'u', who), mechanism: 1, iterations: 4096, salt: randomBytes(16), saltedPassword: randomBytes(32) }],
    })).results)),
    unchanged: async (proto) => expect((await scramUsers()).filter((u) => u.startsWith(`u-${P(proto)}-`))).to.deep.equal(allowedNames(proto, 'u').sort()),
  },
  // ------------------------------------------------------------ transactions (Kafka's rules: Write on the transactional id, then the group and topics)
  {
    key: ApiKey.AddPartitionsToTxn, bob: TXN,
    ws: async ({ raw }, who) => {
      const id = txnId('ws', who, 'ap');
      const p = await txnProducer(who, wsInit(raw, id));
      return typeof p === 'number' ? p : wsAddCode(await wsAdd(raw, id, p));
    },
    kafka: async (c, who) => {
      const id = txnId('kafka', who, 'ap');
      const p = await txnProducer(who, kInit(c, id));
      return typeof p === 'number' ? p : kAddCode(await kAdd(c, id, p));
    },
  },
  {
    key: ApiKey.AddOffsetsToTxn, bob: TXN,
    ws: async ({ raw }, who) => {
      const id = txnId('ws', who, 'ao');
      const p = await txnProducer(who, wsInit(raw, id));
      return typeof p === 'number' ? p : wholeCode(await retried(() => raw(ApiKey.AddOffsetsToTxn, { transactionalId: id, ...p, groupId: txnGroup('ws', who) })));
    },
    kafka: async (c, who) => {
      const id = txnId('kafka', who, 'ao');
      const p = await txnProducer(who, kInit(c, id));
      return typeof p === 'number' ? p : code(await retried(() => c.request(addOffsetsToTxn, 3, { transactionalId: id, ...p, groupId: txnGroup('kafka', who) })));
    },
  },
  {
    // The privileged cells open a transaction on t-txn and abort it.
    key: ApiKey.EndTxn, bob: TXN,
    ws: async ({ raw }, who) => {
      const id = txnId('ws', who, 'end');
      const p = await txnProducer(who, wsInit(raw, id));
      if (typeof p === 'number') return p;
      if (!refusedWho(who) && wsAddCode(await wsAdd(raw, id, p)) !== OK) return 'AddPartitionsToTxn failed';
      return wholeCode(await retried(() => raw(ApiKey.EndTxn, { transactionalId: id, ...p, committed: false, bumpEpoch: true })));
    },
    kafka: async (c, who) => {
      const id = txnId('kafka', who, 'end');
      const p = await txnProducer(who, kInit(c, id));
      if (typeof p === 'number') return p;
      if (!refusedWho(who) && kAddCode(await kAdd(c, id, p)) !== OK) return 'AddPartitionsToTxn failed';
      return code(await retried(() => c.request(endTxn, 3, { transactionalId: id, ...p, committed: false })));
    },
  },
  {
    // A coordinator's request to a partition leader: ClusterAction (alice's Alter on the cluster is not it). An empty request is served.
    key: ApiKey.WriteTxnMarkers, bob: CLUSTER, alice: CLUSTER,
    ws: async ({ raw }) => wholeCode(await raw(ApiKey.WriteTxnMarkers, { markers: [] })),
  },
  {
    // The privileged cells add their group's offsets to a transaction and commit an offset in it (pending until EndTxn).
    key: ApiKey.TxnOffsetCommit, bob: TXN,
    ws: async ({ raw }, who) => {
      const id = txnId('ws', who, 'toc');
      const group = txnGroup('ws', who);
      const p = await txnProducer(who, wsInit(raw, id));
      if (typeof p === 'number') return p;
      if (!refusedWho(who) && wholeCode(await retried(() => raw(ApiKey.AddOffsetsToTxn, { transactionalId: id, ...p, groupId: group }))) !== OK) return 'AddOffsetsToTxn failed';
      const r = await retried(() => raw(ApiKey.TxnOffsetCommit, {
        transactionalId: id, groupId: group, ...p, generationId: -1, memberId: '', groupInstanceId: null,
        topics: [{ name: TOPIC_NAME, partitions: [{ partition: 0, committedOffset: 1, committedLeaderEpoch: -1, metadata: null }] }],
      }), (x) => (wholeCode(x) !== OK ? wholeCode(x) : code(first(first(x.topics).partitions))));
      return wholeCode(r) !== OK ? wholeCode(r) : code(first(first(r.topics).partitions));
    },
    kafka: async (c, who) => {
      const id = txnId('kafka', who, 'toc');
      const group = txnGroup('kafka', who);
      const p = await txnProducer(who, kInit(c, id));
      if (typeof p === 'number') return p;
      if (!refusedWho(who) && code(await retried(() => c.request(addOffsetsToTxn, 3, { transactionalId: id, ...p, groupId: group }))) !== OK) return 'AddOffsetsToTxn failed';
      const r = await retried(() => c.request(txnOffsetCommit, 3, {
        transactionalId: id, groupId: group, ...p, generationId: -1, memberId: '', groupInstanceId: null,
        topics: [{ name: TOPIC_NAME, partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null }] }],
      }), (x) => code(first(first(x.topics).partitions)));
      return code(first(first(r.topics).partitions));
    },
    unchanged: async (proto) => {
      for (const w of WHO.filter(refusedWho)) expect(await committed(txnGroup(proto, w)), txnGroup(proto, w)).to.equal(-1);
    },
  },
  {
    // The ids the AddPartitionsToTxn row began (Ongoing); bob may not describe his.
    key: ApiKey.DescribeTransactions, bob: TXN,
    ws: async ({ raw }, who) => servedAs(Errors.TRANSACTIONAL_ID_NOT_FOUND.code)(code(first((await raw(ApiKey.DescribeTransactions, { transactionalIds: [txnId('ws', who, 'ap')] })).transactionStates))),
    kafka: async (c, who) => servedAs(Errors.TRANSACTIONAL_ID_NOT_FOUND.code)(code(first((await c.request(describeTransactions, 0, { transactionalIds: [txnId('kafka', who, 'ap')] })).transactionStates))),
  },
  {
    // Bob's listing is empty (he may describe no id); alice's holds only x-* ids, and some.
    key: ApiKey.ListTransactions, bob: OK,
    ws: async ({ raw }, who) => {
      const r = await raw(ApiKey.ListTransactions, {});
      const ids = (r.transactionStates as Struct[] | undefined ?? []).map((t) => t.transactionalId as string);
      return wholeCode(r) !== OK ? wholeCode(r) : (who === 'bob') === (ids.length === 0) && ids.every((id) => id.startsWith('x-')) ? OK : `listed ${ids.join(',')}`;
    },
    kafka: async (c, who) => {
      const r = await c.request(listTransactions, 1, { stateFilters: [], producerIdFilters: [], durationFilter: -1 });
      const ids = (r.transactionStates as Struct[]).map((t) => t.transactionalId as string);
      return code(r) !== OK ? code(r) : (who === 'bob') === (ids.length === 0) && ids.every((id) => id.startsWith('x-')) ? OK : `listed ${ids.join(',')}`;
    },
  },
  // ------------------------------------------------------------ the nodes' own APIs: ClusterAction, then NOT_CONTROLLER (a broker listener does not serve them)
  ...[ApiKey.ControlledShutdown, ApiKey.AlterPartition, ApiKey.BrokerRegistration, ApiKey.BrokerHeartbeat].map((key): Row => ({
    key, bob: CLUSTER, alice: CLUSTER, admin: Errors.NOT_CONTROLLER.code,
    ws: async ({ raw }) => code(await raw(key, {})),
  })),
];

/**
 * A principal refused a resource learns nothing about it: a topic or group
 * that does not exist is refused exactly like one that does (bob, on every
 * API that names one; Kafka's rule — authorize first, then look up).
 */
const NOPE = 't-nope';
const UNKNOWN_NAMES: ReadonlyArray<{ readonly api: string; readonly want: number; readonly ws?: (c: Ws) => Promise<Outcome>; readonly kafka?: (c: RawKafkaClient) => Promise<Outcome> }> = [
  {
    api: 'Produce', want: TOPIC,
    ws: async ({ c }) => code((await c.produce({ acks: -1, timeoutMs: 5000, topics: [{ name: NOPE, partitions: [{ partition: 0, records: batch('x') }] }] }))!.topics[0]!.partitions[0]),
    kafka: async (c) => code(first(first((await c.request(produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: NOPE, partitionData: [{ index: 0, records: batch('x') }] }] })).responses).partitionResponses)),
  },
  {
    api: 'Fetch', want: TOPIC,
    ws: async ({ c }) => code((await c.fetch({ maxWaitMs: 0, topics: [{ name: NOPE, partitions: [{ partition: 0, fetchOffset: 0 }] }] })).topics[0]!.partitions[0]),
    kafka: async (c) => code(first(first((await c.request(fetchSpec, 11, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: NOPE, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }], forgottenTopicsData: [], rackId: '',
    })).responses).partitions)),
  },
  {
    api: 'ListOffsets', want: TOPIC,
    ws: async ({ c }) => code((await c.listOffsets({ topics: [{ name: NOPE, partitions: [{ partition: 0, timestamp: -1 }] }] })).topics[0]!.partitions[0]),
    kafka: async (c) => code(first(first((await c.request(listOffsets, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: NOPE, partitions: [{ partitionIndex: 0, timestamp: -1 }] }] })).topics).partitions)),
  },
  {
    api: 'Metadata', want: TOPIC,
    ws: async ({ c }) => code((await c.metadata([NOPE])).topics[0]),
    kafka: async (c) => code(first((await c.request(metadata, 12, { topics: [{ topicId: '0'.repeat(32), name: NOPE }], allowAutoTopicCreation: true })).topics)),
  },
  {
    api: 'OffsetForLeaderEpoch', want: TOPIC,
    ws: async ({ c }) => code((await c.offsetForLeaderEpoch({ topics: [{ name: NOPE, partitions: [{ partition: 0, leaderEpoch: 0 }] }] })).topics[0]!.partitions[0]),
    kafka: async (c) => code(first(first((await c.request(offsetForLeaderEpoch, 4, { replicaId: -2, topics: [{ topic: NOPE, partitions: [{ partition: 0, leaderEpoch: 0 }] }] })).topics).partitions)),
  },
  {
    api: 'DeleteRecords', want: TOPIC,
    ws: async ({ c }) => code((await c.deleteRecords({ topics: [{ name: NOPE, partitions: [{ partition: 0, offset: 0 }] }] })).topics[0]!.partitions[0]),
    kafka: async (c) => code(first(first((await c.request(deleteRecords, 2, { topics: [{ name: NOPE, partitions: [{ partitionIndex: 0, offset: 0 }] }], timeoutMs: 5000 })).topics).partitions)),
  },
  {
    api: 'CreatePartitions', want: TOPIC,
    ws: async ({ c }) => wsCode(c.admin(ApiKey.CreatePartitions, { topic: NOPE, count: 2 })),
    kafka: async (c) => code(first((await c.request(createPartitions, 2, { topics: [{ name: NOPE, count: 2, assignments: null }], timeoutMs: 5000, validateOnly: false })).results)),
  },
  {
    api: 'DeleteTopics', want: TOPIC,
    ws: async ({ c }) => code((await c.admin(ApiKey.DeleteTopics, { names: [NOPE] })).topics[0]),
    kafka: async (c) => code(first((await c.request(deleteTopics, 4, { topicNames: [NOPE], timeoutMs: 5000 })).responses)),
  },
  {
    api: 'DescribeConfigs', want: TOPIC,
    ws: async ({ c }) => wsCode(c.admin(ApiKey.DescribeConfigs, { resourceType: 'topic', resourceName: NOPE })),
    kafka: async (c) => code(first((await c.request(describeConfigs, 4, { resources: [{ resourceType: 2, resourceName: NOPE, configurationKeys: null }], includeSynonyms: false, includeDocumentation: false })).results)),
  },
  {
    api: 'AlterConfigs', want: TOPIC,
    ws: async ({ c }) => code((await c.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 'topic', resourceName: NOPE, set: { 'retention.ms': '1000' } }] })).resources[0]),
    kafka: async (c) => code(first((await c.request(alterConfigs, 1, { resources: [{ resourceType: 2, resourceName: NOPE, configs: [{ name: 'retention.ms', value: '1000' }] }], validateOnly: false })).responses)),
  },
  {
    api: 'IncrementalAlterConfigs', want: TOPIC,
    kafka: async (c) => code(first((await c.request(incrementalAlterConfigs, 1, { resources: [{ resourceType: 2, resourceName: NOPE, configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] }], validateOnly: false })).responses)),
  },
  {
    api: 'DescribeConfigs (broker)', want: CLUSTER,
    ws: async ({ c }) => wsCode(c.admin(ApiKey.DescribeConfigs, { resourceType: 'cluster', resourceName: '' })),
    kafka: async (c) => code(first((await c.request(describeConfigs, 4, { resources: [{ resourceType: 4, resourceName: '', configurationKeys: null }], includeSynonyms: false, includeDocumentation: false })).results)),
  },
  {
    api: 'DescribeGroups', want: GROUP,
    ws: async ({ c }) => code((await c.describeGroups(['g-nope'])).groups[0]),
    kafka: async (c) => code(first((await c.request(describeGroups, 5, { groups: ['g-nope'], includeAuthorizedOperations: false })).groups)),
  },
  {
    api: 'DeleteGroups', want: GROUP,
    ws: async ({ c }) => code((await c.deleteGroups(['g-nope'])).results[0]),
    kafka: async (c) => code(first((await c.request(deleteGroups, 2, { groupsNames: ['g-nope'] })).results)),
  },
  {
    api: 'OffsetDelete', want: GROUP,
    ws: async ({ raw }) => code(await raw(ApiKey.OffsetDelete, { groupId: 'g-nope', topics: [{ name: TOPIC_NAME, partitions: [0] }] })),
    kafka: async (c) => code(await c.request(offsetDelete, 0, { groupId: 'g-nope', topics: [{ name: TOPIC_NAME, partitions: [{ partitionIndex: 0 }] }] })),
  },
];

/**
 * The transactional forms of APIs whose rows test their other form: bob
 * (no ACL on any transactional id) is refused TRANSACTIONAL_ID_AUTHORIZATION_FAILED
 * and writes nothing; alice (All on x-*) is served.
 */
const TXN_FORMS: ReadonlyArray<{ readonly api: string; readonly ws: (c: Ws, who: 'alice' | 'bob') => Promise<Outcome>; readonly kafka: (c: RawKafkaClient, who: 'alice' | 'bob') => Promise<Outcome> }> = [
  {
    api: 'FindCoordinator key type 1',
    ws: async ({ raw }, who) => code(await raw(ApiKey.FindCoordinator, { key: txnId('ws', who, 'fc'), keyType: 1 })),
    kafka: async (c, who) => code(first((await c.request(findCoordinator, 4, { keyType: 1, coordinatorKeys: [txnId('kafka', who, 'fc')] })).coordinators)),
  },
  {
    api: 'InitProducerId with a transactional id',
    ws: async ({ raw }, who) => code(await retried(wsInit(raw, txnId('ws', who, 'init')))),
    kafka: async (c, who) => code(await retried(kInit(c, txnId('kafka', who, 'init')))),
  },
  {
    // A plain batch naming a transactional id: the id's Write is checked before anything (bob: every partition refused, nothing appended).
    api: 'Produce with a transactional id',
    ws: async ({ raw }, who) => (who === 'alice' ? OK : code(first(first((await raw(ApiKey.Produce, { transactionalId: txnId('ws', who, 'p'), acks: -1, timeoutMs: 5000, topics: [{ name: TXN_TOPIC, partitions: [{ partition: 0, records: batch(who) }] }] })).topics).partitions))),
    kafka: async (c, who) => (who === 'alice' ? OK : code(first(first((await c.request(produce, 9, { transactionalId: txnId('kafka', who, 'p'), acks: -1, timeoutMs: 5000, topicData: [{ name: TXN_TOPIC, partitionData: [{ index: 0, records: batch(who) }] }] })).responses).partitionResponses))),
  },
];

const rowName = (key: number): string => (key === 44 ? 'IncrementalAlterConfigs' : apiName(key));

describe('access matrix: every API × six identities on both protocols (real node: SASL and an authorizer)', function () {
  this.timeout(120_000);
  let cluster: ProcessCluster;
  let dir: string;
  const opened: Array<{ close(): void }> = [];
  const cached = new Map<string, Ws | RawKafkaClient>();

  async function openWs(): Promise<Ws> {
    const link = await ClientLink.connect(cluster.brokerUrls[0]!, { factory: nodeWebSocketFactory, connectTimeoutMs: 5000 });
    const c = new BrokerConnection(link, { requestTimeoutMs: 15_000 });
    opened.push(c);
    return { c, link, raw: (apiKey, body) => link.request<Struct>(apiKey, 0, body, 15_000) };
  }
  async function openKafka(): Promise<RawKafkaClient> {
    const [host, port] = cluster.nodes[0]!.kafkaAddress.split(':');
    const c = await RawKafkaClient.connect(host!, Number(port));
    opened.push(c);
    return c;
  }
  async function login(proto: Proto, who: Authenticated): Promise<Ws | RawKafkaClient> {
    if (proto === 'ws') {
      const ws = await openWs();
      await ws.c.authenticate(wsLogin(who));
      return ws;
    }
    const c = await openKafka();
    const l = oneStepLogin(who);
    expect(code(await c.request(saslHandshake, 1, { mechanism: l.mechanism })), `${who}: handshake`).to.equal(0);
    expect(code(await c.request(saslAuthenticate, 2, { authBytes: l.bytes })), `${who}: login`).to.equal(0);
    return c;
  }
  /** One logged-in connection per protocol and identity, reused across rows (a new one if the last was closed). */
  async function connectionOf(proto: Proto, who: Authenticated, fresh: boolean): Promise<Ws | RawKafkaClient> {
    if (fresh) return login(proto, who);
    const k = `${proto}/${who}`;
    const c = cached.get(k);
    const open = c && (proto === 'ws' ? (c as Ws).link.isOpen : !(c as RawKafkaClient).closed);
    if (open) return c;
    const n = await login(proto, who);
    cached.set(k, n);
    return n;
  }

  /** Runs one cell: the identity's connection, or for the failing logins the failed login with the request pipelined behind it. */
  async function cell(proto: Proto, run: Cell<Ws> | Cell<RawKafkaClient>, who: Who): Promise<Outcome> {
    const closedToo = (err: unknown): Outcome => {
      if (err instanceof SluiceError && err.code === Errors.NETWORK_EXCEPTION.code) return CLOSED;
      if (err instanceof Error && /connection closed by the broker|ECONNRESET|EPIPE/.test(err.message)) return CLOSED;
      throw err;
    };
    const go = (c: Ws | RawKafkaClient): Promise<Outcome> => (run.run as (c: unknown, who: Who) => Promise<Outcome>)(c, who).catch(closedToo);
    if (isAuthenticated(who)) return go(await connectionOf(proto, who, run.fresh === true));
    const c = proto === 'ws' ? await openWs() : await openKafka();
    if (who === 'none') return go(c);
    // A failing login with the cell's request right behind it: the login's answer, then the request never served.
    const l = oneStepLogin(who);
    const hs = proto === 'ws' ? (c as Ws).raw(ApiKey.SaslHandshake, { mechanism: l.mechanism }) : (c as RawKafkaClient).request(saslHandshake, 1, { mechanism: l.mechanism });
    const auth = proto === 'ws' ? (c as Ws).raw(ApiKey.SaslAuthenticate, { authBytes: l.bytes }) : (c as RawKafkaClient).request(saslAuthenticate, 2, { authBytes: l.bytes });
    const request = go(c);
    expect(code(await hs), `${who}: handshake`).to.equal(0);
    const loginCode = code(await auth);
    const after = await request;
    return loginCode === SASL_FAILED && after === CLOSED ? SASL_FAILED : `login ${loginCode}, then ${after}`;
  }

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-matrix-'));
    const jwks = path.join(dir, 'jwks.json');
    fs.writeFileSync(jwks, JSON.stringify({ keys: [jwk] }));
    cluster = await ProcessCluster.create({
      size: 1, brokers: true, kafka: true, kafkaProtocol: 'SASL_PLAINTEXT',
      extraArgs: [
        '--authorizer', 'acl', '--super-users', 'User:admin;User:ANONYMOUS', '--ws-sasl-required',
        '--sasl-enabled-mechanisms', 'SCRAM-SHA-256,PLAIN,OAUTHBEARER', '--sasl-plain-allow-plaintext', '--sasl-oauthbearer-jwks-file', jwks,
      ],
    });
    cluster.startAll();
    const client = await waitFor('an unfenced broker, seen by the admin', async () => {
      const c = new Client({ bootstrap: cluster.brokerUrls, sasl: wsLogin('admin') });
      try {
        if ((await c.admin().describeCluster()).brokers.some((b) => !b.fenced)) return c;
        await c.close();
        return undefined;
      } catch {
        await c.close();
        return undefined;
      }
    }, { timeoutMs: 60_000, intervalMs: 250 });
    const topics = [
      TOPIC_NAME, TXN_TOPIC, 't-p-ws', 't-p-k', 't-del-ws', 't-del-k', 't-cp-ws', 't-cp-k', 't-ac-ws', 't-ac-k', 't-iac-k',
      ...(['ws', 'kafka'] as const).flatMap((p) => ['keep', 'admin', 'alice'].map((w) => `t-dt-${P(p)}-${w}`)),
    ];
    try {
      const a = client.admin();
      await a.alterUserScramCredentials({ upsertions: ['alice', 'bob'].map((user) => ({ user, mechanism: 'SCRAM-SHA-256' as const, password: PASSWORDS[user]!, iterations: 4096 })) });
      await a.createTopics({ topics: topics.map((topic) => ({ topic, numPartitions: 1, replicationFactor: 1 })) });
      await a.createAcls([
        acl('User:alice', ResourceType.TOPIC, 't-', PatternType.PREFIXED, Op.ALL),
        acl('User:alice', ResourceType.GROUP, 'g-', PatternType.PREFIXED, Op.ALL),
        acl('User:alice', ResourceType.CLUSTER, 'kafka-cluster', PatternType.LITERAL, Op.ALTER),
        acl('User:alice', ResourceType.TRANSACTIONAL_ID, 'x-', PatternType.PREFIXED, Op.ALL),
        ...(['ws', 'kafka'] as const).flatMap((p) => ['keep', 'admin', 'alice'].map((w) => acl(`User:${own(p, 'y', w as Who | 'keep')}`, ResourceType.TOPIC, 'y', PatternType.LITERAL, Op.READ))),
      ]);
    } finally {
      await client.close();
    }
    admin = ((await login('ws', 'admin')) as Ws).c;
    // One __transaction_state partition on this one node, before the first FindCoordinator of a transactional id creates it.
    const conf = await admin.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 'cluster', resourceName: '', set: { 'transaction.state.log.num.partitions': '1' } }] });
    expect(code(conf.resources[0])).to.equal(OK);
    // The group coordinator is up once __consumer_offsets has a leader.
    await waitFor('the group coordinator', async () => (await admin.findCoordinator('g-1').catch(() => ({ errorCode: -1 }))).errorCode === 0 || undefined, { timeoutMs: 30_000, intervalMs: 200 });
    const adminLink = ((await connectionOf('ws', 'admin', false)) as Ws).raw;
    await waitFor('the transaction coordinator', async () => code(await adminLink(ApiKey.FindCoordinator, { key: 'x-probe', keyType: 1 })) === OK || undefined, { timeoutMs: 30_000, intervalMs: 200 });
    await waitFor('leaders of the test topics', async () => (await admin.metadata(topics)).topics.every((t) => t.errorCode === 0 && t.partitions.every((p) => p.leader >= 0)) || undefined, { timeoutMs: 30_000, intervalMs: 100 });
    // Three records to delete from, committed offsets for the groups to delete (and to keep).
    for (const t of ['t-del-ws', 't-del-k']) {
      for (let i = 0; i < 3; i++) expect(code((await admin.produce({ acks: -1, timeoutMs: 5000, topics: [{ name: t, partitions: [{ partition: 0, records: batch(`r${i}`) }] }] }))!.topics[0]!.partitions[0])).to.equal(0);
    }
    for (const p of ['ws', 'kafka'] as const) {
      for (const g of ['g-dg', 'g-od'].flatMap((prefix) => ['keep', 'admin', 'alice'].map((w) => own(p, prefix, w as Who | 'keep')))) {
        const r = await admin.offsetCommit({ groupId: g, generationId: -1, memberId: '', topics: [{ name: TOPIC_NAME, partitions: [{ partition: 0, committedOffset: 0 }] }] });
        expect(code(r.topics[0]!.partitions[0]), g).to.equal(0);
      }
    }
  });
  after(async () => {
    for (const c of opened.splice(0)) c.close();
    await cluster?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('has a row for every API each listener serves (the registries, and what the node answers in ApiVersions)', async () => {
    const wsRows = ROWS.filter((r) => r.ws).map((r) => r.key).sort((a, b) => a - b);
    const kafkaRows = ROWS.filter((r) => r.kafka).map((r) => r.key).sort((a, b) => a - b);
    expect(new Set(ROWS.map((r) => r.key)).size, 'one row per API').to.equal(ROWS.length);
    expect(wsRows.map(rowName), 'WebSocket API').to.deep.equal(SUPPORTED_APIS.map((v) => v.apiKey).sort((a, b) => a - b).map(rowName));
    expect(kafkaRows.map(rowName), 'Kafka listener').to.deep.equal([...KAFKA_HANDLERS.keys()].sort((a, b) => a - b).map(rowName));
    const ws = (await connectionOf('ws', 'bob', false)) as Ws;
    expect((await ws.c.apiVersions()).apiKeys.map((v) => v.apiKey).sort((a, b) => a - b), 'WebSocket ApiVersions').to.deep.equal(wsRows);
    const k = (await connectionOf('kafka', 'bob', false)) as RawKafkaClient;
    const served = (await k.request(apiVersions, 3, { clientSoftwareName: 'matrix', clientSoftwareVersion: '1' })).apiKeys as Struct[];
    expect(served.map((v) => v.apiKey as number).sort((a, b) => a - b), 'Kafka ApiVersions').to.deep.equal(kafkaRows);
  });

  it('refuses a SCRAM login with a wrong password and an expired token on the WebSocket client, and closes the connection', async () => {
    for (const sasl of [{ mechanism: 'SCRAM-SHA-256', username: 'alice', password: 'not-her-password' }, { mechanism: 'OAUTHBEARER', token: jwt('alice', -3600) }] as SaslOptions[]) {
      const ws = await openWs();
      expect(await wsCode(ws.c.authenticate(sasl)), sasl.mechanism).to.equal(SASL_FAILED);
      await waitFor('the connection closed', async () => !ws.link.isOpen || undefined, { timeoutMs: 5000, intervalMs: 20 });
    }
  });

  it('refuses a re-authentication as another principal (KIP-368) and closes the connection, on both protocols', async () => {
    const ws = (await login('ws', 'bob')) as Ws;
    expect(await wsCode(ws.c.authenticate(wsLogin('alice'))), 'ws: bob re-authenticating as alice').to.equal(SASL_FAILED);
    await waitFor('the WebSocket closed', async () => !ws.link.isOpen || undefined, { timeoutMs: 5000, intervalMs: 20 });
    const k = (await login('kafka', 'bob')) as RawKafkaClient;
    const l = oneStepLogin('alice');
    expect(code(await k.request(saslHandshake, 1, { mechanism: l.mechanism }))).to.equal(0);
    expect(code(await k.request(saslAuthenticate, 2, { authBytes: l.bytes })), 'kafka: bob re-authenticating as alice').to.equal(SASL_FAILED);
    expect(await k.request(apiVersions, 3, { clientSoftwareName: 'matrix', clientSoftwareVersion: '1' }).then(() => 'answered', () => CLOSED)).to.equal(CLOSED);
  });

  for (const proto of ['ws', 'kafka'] as const) {
    it(`${proto}: names bob may not touch are refused alike whether they exist or not (${UNKNOWN_NAMES.filter((p) => p[proto]).map((p) => p.api).join(', ')})`, async () => {
      const c = await connectionOf(proto, 'bob', false);
      const got: Record<string, Outcome> = {};
      const want: Record<string, Outcome> = {};
      for (const p of UNKNOWN_NAMES) {
        const run = p[proto] as ((c: unknown) => Promise<Outcome>) | undefined;
        if (!run) continue;
        got[p.api] = await run(c);
        want[p.api] = p.want;
      }
      expect(got).to.deep.equal(want);
      expect(await topicCode(NOPE), 'nothing created').to.equal(Errors.UNKNOWN_TOPIC_OR_PARTITION.code);
    });
  }

  for (const proto of ['ws', 'kafka'] as const) {
    it(`${proto}: the transactional forms need the transactional id (${TXN_FORMS.map((f) => f.api).join(', ')}): bob refused, alice served`, async () => {
      const before = await endOffset(TXN_TOPIC);
      const got: Record<string, Outcome> = {};
      const want: Record<string, Outcome> = {};
      for (const who of ['alice', 'bob'] as const) {
        const c = await connectionOf(proto, who, false);
        for (const f of TXN_FORMS) {
          got[`${who} ${f.api}`] = await (proto === 'ws' ? f.ws(c as Ws, who) : f.kafka(c as RawKafkaClient, who));
          want[`${who} ${f.api}`] = who === 'alice' ? OK : TXN;
        }
      }
      expect(got).to.deep.equal(want);
      expect(await endOffset(TXN_TOPIC), 'bob\'s produce wrote nothing').to.equal(before);
    });
  }

  for (const proto of ['ws', 'kafka'] as const) {
    for (const row of ROWS) {
      const run = proto === 'ws' ? cellOf(row.ws) : cellOf(row.kafka);
      if (!run) continue;
      const want: Record<Who, Outcome> = {
        admin: row.admin ?? OK, alice: row.alice ?? OK, bob: row.bob, none: row.none ?? CLOSED, wrongPassword: SASL_FAILED, expiredToken: SASL_FAILED,
      };
      const label = (o: Outcome): string => (typeof o === 'string' ? o : o === 0 ? 'OK' : (Object.values(Errors).find((e) => e.code === o)?.name ?? String(o)));
      it(`${proto} ${rowName(row.key)}: ${WHO.map((w) => `${w} ${label(want[w])}`).join(', ')}${row.unchanged ? '; refused requests wrote nothing' : ''}`, async () => {
        const got = {} as Record<Who, Outcome>;
        for (const who of WHO) got[who] = await cell(proto, run, who);
        expect(got).to.deep.equal(want);
        if (row.unchanged) await row.unchanged(proto);
      });
    }
  }
});
