// The access matrix of issue 16: APIs × {no credentials, wrong password,
// expired token, valid user without ACL, valid user with ACL, super user},
// on both client protocols of one real node (SASL required on the WebSocket
// listener, SASL_PLAINTEXT on the Kafka listener, an authorizer on), each
// cell expecting exactly its error or success, and refused writes checked
// to have written nothing. The cases are generated from one table.
//
// Principals: User:admin (super user, OAUTHBEARER token from the test's own
// JWKS, and SCRAM), User:alice (SCRAM; All on topics t-*, groups g-*, Alter
// on the cluster), User:bob (SCRAM, no ACL). The node reaches its own
// controller listener without TLS, as User:ANONYMOUS, which is therefore a
// super user here — no client can act as it: both client listeners refuse
// every request before authentication.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateKeyPairSync, sign } from 'node:crypto';
import { expect } from 'chai';
import { ProcessCluster, waitFor } from './harness.js';
import { BrokerConnection } from '../../src/client/broker-connection.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import type { SaslOptions } from '../../src/client/sasl.js';
import { Client } from '../../src/index.js';
import { RawKafkaClient } from '../protocol/kafka/raw-client.js';
import type { Struct } from '../../src/protocol/kafka/message.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { saslHandshake } from '../../src/protocol/kafka/apis/sasl-handshake/schema.js';
import { saslAuthenticate } from '../../src/protocol/kafka/apis/sasl-authenticate/schema.js';
import { metadata } from '../../src/protocol/kafka/apis/metadata/schema.js';
import { produce } from '../../src/protocol/kafka/apis/produce/schema.js';
import { createTopics } from '../../src/protocol/kafka/apis/create-topics/schema.js';
import { joinGroup } from '../../src/protocol/kafka/apis/join-group/schema.js';
import { describeAcls } from '../../src/protocol/kafka/apis/describe-acls/schema.js';
import { createAcls } from '../../src/protocol/kafka/apis/create-acls/schema.js';
import { electLeaders } from '../../src/protocol/kafka/apis/elect-leaders/schema.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { AclOperation as Op, AclPermission, MATCH_ALL_FILTER, PatternType, ResourceType, type AclBinding } from '../../src/security/acl.js';
import { Errors, SluiceError } from '../../src/util/errors.js';

const OK = 0;
const TOPIC = Errors.TOPIC_AUTHORIZATION_FAILED.code;
const GROUP = Errors.GROUP_AUTHORIZATION_FAILED.code;
const CLUSTER = Errors.CLUSTER_AUTHORIZATION_FAILED.code;
const SASL_FAILED = Errors.SASL_AUTHENTICATION_FAILED.code;
type Outcome = number;

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

/** The six identities of the matrix, as client login options (null: none). */
type Who = 'none' | 'wrongPassword' | 'expiredToken' | 'bob' | 'alice' | 'admin';
const WHO: readonly Who[] = ['none', 'wrongPassword', 'expiredToken', 'bob', 'alice', 'admin'];
function login(who: Who): SaslOptions | null {
  switch (who) {
    case 'none': return null;
    case 'wrongPassword': return { mechanism: 'SCRAM-SHA-256', username: 'alice', password: 'not-her-password' };
    case 'expiredToken': return { mechanism: 'OAUTHBEARER', token: jwt('alice', -3600) };
    case 'admin': return { mechanism: 'OAUTHBEARER', token: jwt('admin', 3600) };
    default: return { mechanism: 'SCRAM-SHA-256', username: who, password: PASSWORDS[who]! };
  }
}
/** PLAIN on the Kafka side (the raw client speaks it in two frames); the same identities. */
function kafkaLogin(who: Who): { mechanism: string; bytes: Buffer } | null {
  const plain = (u: string, p: string) => ({ mechanism: 'PLAIN', bytes: Buffer.from(`\u0000${u}\u0000${p}`) });
  const bearer = (t: string) => ({ mechanism: 'OAUTHBEARER', bytes: Buffer.from(`n,,\u0001auth=Bearer ${t}\u0001\u0001`) });
  switch (who) {
    case 'none': return null;
    case 'wrongPassword': return plain('alice', 'not-her-password');
    case 'expiredToken': return bearer(jwt('alice', -3600));
    case 'admin': return bearer(jwt('admin', 3600));
    default: return plain(who, PASSWORDS[who]!);
  }
}

/**
 * One row per API: what it does on each protocol, and the outcome per
 * identity. The authentication columns are the same for every API: no
 * credentials → closed, wrong password and expired token → SASL failed.
 */
interface Row {
  readonly api: string;
  readonly bob: Outcome;
  readonly ws?: (c: BrokerConnection, who: Who) => Promise<number>;
  readonly kafka?: (c: RawKafkaClient, who: Who) => Promise<number>;
  /** Checked after bob's refusal: nothing was written. */
  readonly unchanged?: (admin: BrokerConnection) => Promise<unknown>;
}

const wsCode = async (p: Promise<unknown>): Promise<number> => {
  try {
    await p;
    return OK;
  } catch (err) {
    if (err instanceof SluiceError) return err.code;
    throw err;
  }
};

let admin: BrokerConnection;
const endOffset = async (): Promise<number> => (await admin.listOffsets({ topics: [{ name: TOPIC_NAME, partitions: [{ partition: 0, timestamp: -1 }] }] })).topics[0]!.partitions[0]!.offset;
let offsetBefore = 0;

const ROWS: readonly Row[] = [
  {
    api: 'Produce', bob: TOPIC,
    ws: async (c, who) => (await c.produce({ acks: -1, timeoutMs: 5000, topics: [{ name: TOPIC_NAME, partitions: [{ partition: 0, records: batch(who) }] }] })).topics[0]!.partitions[0]!.errorCode,
    kafka: async (c, who) => first(first((await c.request(produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: TOPIC_NAME, partitionData: [{ index: 0, records: batch(who) }] }] })).responses).partitionResponses).errorCode as number,
    unchanged: async () => expect(await endOffset()).to.equal(offsetBefore + 4), // alice and admin, on both protocols
  },
  {
    api: 'Fetch', bob: TOPIC,
    ws: async (c) => (await c.fetch({ maxWaitMs: 0, topics: [{ name: TOPIC_NAME, partitions: [{ partition: 0, fetchOffset: 0 }] }] })).topics[0]!.partitions[0]!.errorCode,
  },
  {
    api: 'ListOffsets', bob: TOPIC,
    ws: async (c) => (await c.listOffsets({ topics: [{ name: TOPIC_NAME, partitions: [{ partition: 0, timestamp: -1 }] }] })).topics[0]!.partitions[0]!.errorCode,
  },
  {
    api: 'Metadata', bob: TOPIC,
    ws: async (c) => (await c.metadata([TOPIC_NAME])).topics[0]!.errorCode,
    kafka: async (c) => first((await c.request(metadata, 12, { topics: [{ topicId: '0'.repeat(32), name: TOPIC_NAME }], allowAutoTopicCreation: false })).topics).errorCode as number,
  },
  {
    api: 'CreateTopics', bob: TOPIC,
    ws: async (c, who) => (await c.admin(ApiKey.CreateTopics, { topics: [{ name: `t-ws-${who}`, numPartitions: 1, replicationFactor: 1 }] })).topics[0]!.errorCode,
    kafka: async (c, who) => first((await c.request(createTopics, 7, { topics: [{ name: `t-k-${who}`, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000 })).topics).errorCode as number,
    unchanged: async () => expect((await admin.metadata(['t-ws-bob', 't-k-bob'])).topics.map((t) => t.errorCode)).to.deep.equal([Errors.UNKNOWN_TOPIC_OR_PARTITION.code, Errors.UNKNOWN_TOPIC_OR_PARTITION.code]),
  },
  {
    api: 'JoinGroup', bob: GROUP,
    // A first join without a member id is MEMBER_ID_REQUIRED (KIP-394): the request was authorized and served.
    ws: async (c) => {
      const code = await wsCode(c.joinGroup({ groupId: 'g-1', sessionTimeoutMs: 6000, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: new Uint8Array(0) }] }));
      return code === Errors.MEMBER_ID_REQUIRED.code ? OK : code;
    },
    kafka: async (c) => {
      const code = (await c.request(joinGroup, 9, { groupId: 'g-1', sessionTimeoutMs: 6000, rebalanceTimeoutMs: 6000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }], reason: null })).errorCode as number;
      return code === Errors.MEMBER_ID_REQUIRED.code ? OK : code;
    },
  },
  {
    api: 'OffsetFetch', bob: GROUP,
    ws: async (c) => wsCode(c.offsetFetch({ groupId: 'g-1', topics: null }).then((r) => { if (r.errorCode !== 0) throw new SluiceError(Errors.GROUP_AUTHORIZATION_FAILED.code === r.errorCode ? Errors.GROUP_AUTHORIZATION_FAILED : Errors.UNKNOWN_SERVER_ERROR); })),
  },
  {
    api: 'DescribeAcls', bob: CLUSTER,
    ws: async (c) => wsCode(c.admin(ApiKey.DescribeAcls, { filter: MATCH_ALL_FILTER })),
    kafka: async (c) => (await c.request(describeAcls, 3, { resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 })).errorCode as number,
  },
  {
    api: 'CreateAcls', bob: CLUSTER,
    // A refusal of the whole request is the answer's error body: the client throws it.
    ws: async (c, who) => wsCode(c.admin(ApiKey.CreateAcls, { creations: [acl(`User:x-ws-${who}`, ResourceType.TOPIC, 'x', PatternType.LITERAL, Op.READ)] })
      .then((res) => { if (res.results[0]!.errorCode !== 0) throw new SluiceError(Errors.UNKNOWN_SERVER_ERROR, String(res.results[0]!.errorMessage)); })),
    kafka: async (c, who) => first((await c.request(createAcls, 3, { creations: [{ resourceType: 2, resourceName: 'x', resourcePatternType: 3, principal: `User:x-k-${who}`, host: '*', operation: 3, permissionType: 3 }] })).results).errorCode as number,
    unchanged: async () => expect((await admin.admin(ApiKey.DescribeAcls, { filter: { ...MATCH_ALL_FILTER, resourceName: 'x' } })).acls.map((a) => a.principal).sort())
      .to.deep.equal(['User:x-k-admin', 'User:x-k-alice', 'User:x-ws-admin', 'User:x-ws-alice']),
  },
  {
    api: 'ElectLeaders', bob: CLUSTER,
    ws: async (c) => wsCode(c.admin(ApiKey.ElectLeaders, { partitions: [{ topic: TOPIC_NAME, partition: 0 }] })),
    kafka: async (c) => (await c.request(electLeaders, 2, { electionType: 0, topicPartitions: [{ topic: TOPIC_NAME, partitions: [0] }], timeoutMs: 5000 })).errorCode as number,
  },
  {
    api: 'DescribeLogDirs', bob: CLUSTER,
    ws: async (c) => wsCode(c.describeLogDirs({ topics: [] })),
  },
  {
    api: 'OffsetForLeaderEpoch', bob: TOPIC,
    ws: async (c) => (await c.offsetForLeaderEpoch({ topics: [{ name: TOPIC_NAME, partitions: [{ partition: 0, leaderEpoch: 0 }] }] })).topics[0]!.partitions[0]!.errorCode,
  },
  {
    api: 'DeleteRecords', bob: TOPIC,
    ws: async (c) => (await c.deleteRecords({ topics: [{ name: TOPIC_NAME, partitions: [{ partition: 0, offset: 0 }] }] })).topics[0]!.partitions[0]!.errorCode,
  },
  {
    // An idempotent producer: IdempotentWrite on the cluster, or Write on some topic (alice has All on t-*).
    api: 'InitProducerId', bob: CLUSTER,
    ws: async (c) => wsCode(c.initProducerId()),
  },
  {
    api: 'FindCoordinator', bob: GROUP,
    ws: async (c) => wsCode(c.findCoordinator('g-1')),
  },
  {
    api: 'DescribeGroups', bob: GROUP,
    ws: async (c) => (await c.describeGroups(['g-1'])).groups[0]!.errorCode,
  },
  {
    // A group that does not exist: GROUP_ID_NOT_FOUND means the request was authorized and served.
    api: 'DeleteGroups', bob: GROUP,
    ws: async (c, who) => {
      const code = (await c.deleteGroups([`g-none-${who}`])).results[0]!.errorCode;
      return code === Errors.GROUP_ID_NOT_FOUND.code ? OK : code;
    },
  },
  {
    api: 'DescribeConfigs', bob: TOPIC,
    ws: async (c) => wsCode(c.admin(ApiKey.DescribeConfigs, { resourceType: 'topic', resourceName: TOPIC_NAME })),
  },
  {
    api: 'AlterConfigs', bob: TOPIC,
    ws: async (c) => (await c.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 'topic', resourceName: TOPIC_NAME, set: { 'retention.ms': '86400000' } }], validateOnly: true })).resources[0]!.errorCode,
  },
  {
    api: 'CreatePartitions', bob: TOPIC,
    ws: async (c) => wsCode(c.admin(ApiKey.CreatePartitions, { topic: TOPIC_NAME, count: 2, validateOnly: true })),
  },
  {
    api: 'DeleteTopics', bob: TOPIC,
    ws: async (c, who) => (await c.admin(ApiKey.DeleteTopics, { names: [`t-ws-${who}`] })).topics[0]!.errorCode,
  },
  {
    api: 'ListPartitionReassignments', bob: CLUSTER,
    ws: async (c) => wsCode(c.admin(ApiKey.ListPartitionReassignments, {})),
  },
  {
    // Open to all, as in Kafka.
    api: 'DescribeCluster', bob: OK,
    ws: async (c) => wsCode(c.describeCluster()),
  },
  {
    // Allowed for all; each principal sees only the groups it may describe.
    api: 'ListGroups', bob: OK,
    ws: async (c, who) => {
      const groups = (await c.listGroups()).groups.map((g) => g.groupId);
      return who === 'bob' && groups.length > 0 ? Errors.UNKNOWN_SERVER_ERROR.code : OK;
    },
  },
];

function acl(principal: string, resourceType: AclBinding['resourceType'], resourceName: string, patternType: AclBinding['patternType'], operation: AclBinding['operation']): AclBinding {
  return { resourceType, resourceName, patternType, principal, host: '*', operation, permissionType: AclPermission.ALLOW };
}

describe('access matrix: APIs × identities on both protocols (real node: SASL and an authorizer)', function () {
  this.timeout(120_000);
  let cluster: ProcessCluster;
  let dir: string;
  const opened: Array<{ close(): void }> = [];

  async function wsAs(who: Who): Promise<BrokerConnection | Outcome> {
    const sasl = login(who);
    try {
      const c = await BrokerConnection.connect(cluster.brokerUrls[0]!, { factory: nodeWebSocketFactory, connectTimeoutMs: 5000, ...(sasl ? { sasl } : {}) });
      opened.push(c);
      return c;
    } catch (err) {
      if (err instanceof SluiceError && err.code === SASL_FAILED) return SASL_FAILED;
      throw err;
    }
  }

  async function kafkaAs(who: Who): Promise<RawKafkaClient | Outcome> {
    const [host, port] = cluster.nodes[0]!.kafkaAddress.split(':');
    const c = await RawKafkaClient.connect(host!, Number(port));
    opened.push(c);
    const l = kafkaLogin(who);
    if (!l) return c;
    const hs = await c.request(saslHandshake, 1, { mechanism: l.mechanism });
    expect(hs.errorCode, `${who}: handshake`).to.equal(0);
    const auth = await c.request(saslAuthenticate, 2, { authBytes: l.bytes });
    return auth.errorCode === 0 ? c : auth.errorCode as number;
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
      const c = new Client({ bootstrap: cluster.brokerUrls, sasl: login('admin')! });
      try {
        if ((await c.admin().describeCluster()).brokers.some((b) => !b.fenced)) return c;
        await c.close();
        return undefined;
      } catch {
        await c.close();
        return undefined;
      }
    }, { timeoutMs: 30_000, intervalMs: 250 });
    try {
      const a = client.admin();
      await a.alterUserScramCredentials({ upsertions: ['alice', 'bob'].map((user) => ({ user, mechanism: 'SCRAM-SHA-256' as const, password: PASSWORDS[user]!, iterations: 4096 })) });
      await a.createTopics({ topics: [{ topic: TOPIC_NAME, numPartitions: 1, replicationFactor: 1 }] });
      await a.createAcls([
        acl('User:alice', ResourceType.TOPIC, 't-', PatternType.PREFIXED, Op.ALL),
        acl('User:alice', ResourceType.GROUP, 'g-', PatternType.PREFIXED, Op.ALL),
        acl('User:alice', ResourceType.CLUSTER, 'kafka-cluster', PatternType.LITERAL, Op.ALTER),
      ]);
    } finally {
      await client.close();
    }
    admin = (await wsAs('admin')) as BrokerConnection;
    offsetBefore = await endOffset();
    // The group coordinator is up once __consumer_offsets has a leader.
    await waitFor('the group coordinator', async () => (await admin.findCoordinator('g-1')).errorCode === 0 || undefined, { timeoutMs: 30_000, intervalMs: 200 });
  });
  after(async () => {
    for (const c of opened.splice(0)) c.close();
    await cluster?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses every request before authentication, and wrong passwords and expired tokens at login, on both protocols', async () => {
    const ws = await wsAs('none') as BrokerConnection;
    expect(await wsCode(ws.metadata([TOPIC_NAME]))).to.not.equal(OK);
    const k = await kafkaAs('none') as RawKafkaClient;
    await k.request(metadata, 12, { topics: null, allowAutoTopicCreation: false }).then(() => expect.fail('served before authentication'), () => undefined);
    for (const who of ['wrongPassword', 'expiredToken'] as const) {
      expect(await wsAs(who), `ws ${who}`).to.equal(SASL_FAILED);
      expect(await kafkaAs(who), `kafka ${who}`).to.equal(SASL_FAILED);
    }
  });

  for (const protocol of ['ws', 'kafka'] as const) {
    for (const row of ROWS) {
      const run = protocol === 'ws' ? row.ws : row.kafka;
      if (!run) continue;
      it(`${protocol} ${row.api}: bob ${row.bob === OK ? 'allowed' : `refused ${row.bob}`}, alice and admin allowed${row.unchanged ? ', nothing written by the refusal' : ''}`, async () => {
        const results: Record<string, Outcome> = {};
        for (const who of WHO.filter((w) => w === 'bob' || w === 'alice' || w === 'admin')) {
          const c = protocol === 'ws' ? await wsAs(who) : await kafkaAs(who);
          expect(typeof c, `${who} logs in`).to.equal('object');
          results[who] = await (run as (c: unknown, who: Who) => Promise<number>)(c, who);
        }
        expect(results).to.deep.equal({ bob: row.bob, alice: OK, admin: OK });
      });
    }
  }

  it('wrote nothing for any refused request', async () => {
    for (const row of ROWS) if (row.unchanged) await row.unchanged(admin);
  });
});
