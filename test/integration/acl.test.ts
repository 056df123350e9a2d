// ACLs on a real node with an authorizer (`--authorizer acl`), through both
// client protocols and the CLI. Until a client can authenticate, every
// connection is User:ANONYMOUS; allow.everyone.if.no.acl.found lets it
// bootstrap (nothing is named by an ACL yet), then the ACLs it creates bind
// it like any principal: a named resource is open only as far as its ACLs
// say, a deny wins, and refused requests write nothing. ACLs are metadata
// records: they survive a restart. One node (followers would fetch as
// ANONYMOUS too, and a follower fetch needs ClusterAction; node principals
// come with mTLS), so the whole file runs in a few seconds.

import { expect } from 'chai';
import { startBrokerCluster, connect, createTopic } from './broker-kit.js';
import { waitFor, type ProcessCluster } from './harness.js';
import { sluiceAgainst } from './cli-kit.js';
import { runTool, toolOrSkip, TOOL_TIMEOUT_MS } from '../interop/kafka-kit.js';
import { RawKafkaClient } from '../protocol/kafka/raw-client.js';
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import type { Struct } from '../../src/protocol/kafka/message.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { metadata } from '../../src/protocol/kafka/apis/metadata/schema.js';
import { produce } from '../../src/protocol/kafka/apis/produce/schema.js';
import { deleteTopics } from '../../src/protocol/kafka/apis/delete-topics/schema.js';
import { joinGroup } from '../../src/protocol/kafka/apis/join-group/schema.js';
import { electLeaders } from '../../src/protocol/kafka/apis/elect-leaders/schema.js';
import { createAcls } from '../../src/protocol/kafka/apis/create-acls/schema.js';
import { describeAcls } from '../../src/protocol/kafka/apis/describe-acls/schema.js';
import { deleteAcls } from '../../src/protocol/kafka/apis/delete-acls/schema.js';
import { describeCluster } from '../../src/protocol/kafka/apis/describe-cluster/schema.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { AclOperation as Op, AclPermission, PatternType, ResourceType, MATCH_ALL_FILTER } from '../../src/security/acl.js';
import { Errors, SluiceError } from '../../src/util/errors.js';

const E = { TOPIC: Errors.TOPIC_AUTHORIZATION_FAILED.code, GROUP: Errors.GROUP_AUTHORIZATION_FAILED.code, CLUSTER: Errors.CLUSTER_AUTHORIZATION_FAILED.code };
const WAIT = { timeoutMs: 20_000, intervalMs: 100 };
const batch = (...values: string[]): Buffer => Buffer.from(encodeRecordBatch({ records: values.map((v) => ({ value: Buffer.from(v), timestamp: Date.now() })) }));
const first = (x: unknown): Struct => (x as Struct[])[0]!;

const kafkaAcl = (over: Struct): Struct => ({
  resourceType: ResourceType.TOPIC, resourceName: 'x', resourcePatternType: PatternType.LITERAL,
  principal: 'User:ANONYMOUS', host: '*', operation: Op.READ, permissionType: AclPermission.ALLOW, ...over,
});

describe('ACLs enforced on both protocols (real node with an authorizer)', function () {
  this.timeout(120_000);
  let cluster: ProcessCluster;
  let ws: BrokerConnection;
  let kafka: RawKafkaClient;
  const { ok } = sluiceAgainst(() => cluster.brokerUrls[0]!);

  const latest = async (topic: string): Promise<number> => (await ws.listOffsets({ topics: [{ name: topic, partitions: [{ partition: 0, timestamp: -1 }] }] })).topics[0]!.partitions[0]!.offset;
  const wsProduce = async (topic: string, value: string) => (await ws.produce({ acks: -1, timeoutMs: 5000, topics: [{ name: topic, partitions: [{ partition: 0, records: batch(value) }] }] })).topics[0]!.partitions[0]!;
  const kafkaProduce = async (topic: string, value: string): Promise<Struct> => first(first((await kafka.request(produce, 9, {
    transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch(value) }] }],
  })).responses).partitionResponses);
  const wsError = async (p: Promise<unknown>): Promise<number> => {
    try {
      await p;
    } catch (err) {
      if (err instanceof SluiceError) return err.code;
      throw err;
    }
    return 0;
  };

  before(async () => {
    cluster = await startBrokerCluster(1, ['--authorizer', 'acl', '--allow-everyone-if-no-acl-found', '--super-users', 'User:admin'], { kafka: true });
    ws = await connect(cluster.brokerUrls[0]!);
    const [host, port] = cluster.nodes[0]!.kafkaAddress.split(':');
    kafka = await RawKafkaClient.connect(host!, Number(port));
    for (const t of ['open', 'secret', 'hidden']) await createTopic(ws, t, 1, 1);
    expect((await wsProduce('hidden', 'h0')).errorCode).to.equal(0);
  });
  after(async () => {
    kafka?.close();
    ws?.close();
    await cluster?.cleanup();
  });

  it('creates ACLs with Kafka\'s CreateAcls and reads them back with DescribeAcls on both protocols', async () => {
    const res = await kafka.request(createAcls, 3, {
      creations: [
        kafkaAcl({ resourceName: 'secret' }), // secret: Read (and so Describe), nothing else
        kafkaAcl({ resourceName: 'hidden', operation: Op.ALL, permissionType: AclPermission.DENY }),
        kafkaAcl({ resourceType: ResourceType.GROUP, resourceName: 'g-denied', operation: Op.READ, permissionType: AclPermission.DENY }),
        kafkaAcl({ resourceType: ResourceType.CLUSTER, resourceName: 'kafka-cluster', principal: 'User:*', operation: Op.ALTER }),
        // The node itself is ANONYMOUS on its controller listener (no mTLS here): it needs ClusterAction once the cluster is named.
        kafkaAcl({ resourceType: ResourceType.CLUSTER, resourceName: 'kafka-cluster', operation: Op.CLUSTER_ACTION }),
        kafkaAcl({ resourceName: 'x', resourceType: 9 }), // an unknown resource type: refused, the rest created
      ],
    });
    expect((res.results as Struct[]).map((r) => r.errorCode)).to.deep.equal([0, 0, 0, 0, 0, Errors.INVALID_REQUEST.code]);
    await waitFor('the ACLs in the broker image', async () => (await ws.admin(ApiKey.DescribeAcls, { filter: MATCH_ALL_FILTER })).acls.length === 5 || undefined, WAIT);
    const described = await kafka.request(describeAcls, 3, {
      resourceTypeFilter: ResourceType.TOPIC, resourceNameFilter: 'secret', patternTypeFilter: PatternType.MATCH,
      principalFilter: null, hostFilter: null, operation: Op.ANY, permissionType: AclPermission.ANY,
    });
    expect(described.errorCode).to.equal(0);
    expect(described.resources).to.deep.equal([{
      resourceType: ResourceType.TOPIC, resourceName: 'secret', patternType: PatternType.LITERAL,
      acls: [{ principal: 'User:ANONYMOUS', host: '*', operation: Op.READ, permissionType: AclPermission.ALLOW }],
    }]);
  });

  it('refuses writes a principal may not make, on both protocols, and writes nothing', async () => {
    const before = await latest('secret');
    expect((await wsProduce('secret', 's1')).errorCode).to.equal(E.TOPIC);
    expect((await kafkaProduce('secret', 's2')).errorCode).to.equal(E.TOPIC);
    expect(await latest('secret')).to.equal(before);
    // A topic no ACL names stays open (allow.everyone.if.no.acl.found).
    expect((await wsProduce('open', 'o1')).errorCode).to.equal(0);
    expect((await kafkaProduce('open', 'o2')).errorCode).to.equal(0);
    // Read implies Describe: the consumer side of secret works.
    const fetched = await ws.fetch({ maxWaitMs: 0, topics: [{ name: 'secret', partitions: [{ partition: 0, fetchOffset: 0 }] }] });
    expect(fetched.topics[0]!.partitions[0]!.errorCode).to.equal(0);
  });

  it('leaves out of Metadata the topics a principal may not describe, and refuses them by name', async () => {
    expect((await ws.metadata(null)).topics.map((t) => t.name)).to.include.members(['open', 'secret']).and.not.include('hidden');
    expect((await ws.metadata(['hidden'])).topics[0]!.errorCode).to.equal(E.TOPIC);
    const all = await kafka.request(metadata, 12, { topics: null, allowAutoTopicCreation: false });
    expect((all.topics as Struct[]).map((t) => t.name)).to.include.members(['open', 'secret']).and.not.include('hidden');
    const named = await kafka.request(metadata, 12, { topics: [{ topicId: '0'.repeat(32), name: 'hidden' }], allowAutoTopicCreation: true });
    expect(first(named.topics).errorCode).to.equal(E.TOPIC);
  });

  it('refuses admin and group requests per item, with Kafka\'s error codes', async () => {
    const del = await ws.admin(ApiKey.DeleteTopics, { names: ['hidden'] });
    expect(del.topics[0]!.errorCode).to.equal(E.TOPIC);
    const kdel = await kafka.request(deleteTopics, 6, { topics: [{ name: 'hidden', topicId: '0'.repeat(32) }], timeoutMs: 5000 });
    expect(first(kdel.responses).errorCode).to.equal(E.TOPIC);
    const join = { groupId: 'g-denied', sessionTimeoutMs: 6000, rebalanceTimeoutMs: 6000, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }] };
    expect(await wsError(ws.joinGroup(join))).to.equal(E.GROUP);
    expect((await kafka.request(joinGroup, 9, { ...join, groupInstanceId: null, reason: null })).errorCode).to.equal(E.GROUP);
    // DescribeCluster is open to all; its authorized operations say what the principal may do (Alter, the Describe it implies, ClusterAction).
    const dc = await kafka.request(describeCluster, 1, { includeClusterAuthorizedOperations: true, endpointType: 1 });
    expect(dc.clusterAuthorizedOperations).to.equal((1 << Op.ALTER) | (1 << Op.DESCRIBE) | (1 << Op.CLUSTER_ACTION));
    // ElectLeaders needs Alter on the cluster, which User:* has.
    const elect = await kafka.request(electLeaders, 2, { electionType: 0, topicPartitions: null, timeoutMs: 5000 });
    expect(elect.errorCode).to.equal(0);
  });

  it('manages ACLs with `sluice acls add|list|remove`', async () => {
    await ok('acls', 'add', '--allow-principal', 'User:ANONYMOUS', '--operation', 'Write', '--topic', 'sec', '--resource-pattern-type', 'prefixed');
    const listed = JSON.parse(await ok('acls', 'list', '--topic', 'secret', '--resource-pattern-type', 'match', '--json')) as { acls: Array<Record<string, string>> };
    expect(listed.acls.map((a) => `${a.patternType}:${a.resourceName}:${a.operation}`).sort()).to.deep.equal(['Literal:secret:Read', 'Prefixed:sec:Write']);
    await waitFor('the prefixed Write ACL to apply', async () => (await wsProduce('secret', 's3')).errorCode === 0 || undefined, WAIT);
    const removed = JSON.parse(await ok('acls', 'remove', '--topic', 'sec', '--resource-pattern-type', 'prefixed', '--json')) as { removed: unknown[] };
    expect(removed.removed).to.have.length(1);
  });

  it('serves Kafka\'s own kafka-acls.sh (AclCommand): --add, then --remove', async function () {
    const tool = toolOrSkip(this, 'kafka-tools');
    const acl = (...args: string[]) => runTool(tool, ['org.apache.kafka.tools.AclCommand', '--bootstrap-server', cluster.nodes[0]!.kafkaAddress, ...args], { timeoutMs: TOOL_TIMEOUT_MS });
    const who = ['--allow-principal', 'User:carol', '--operation', 'Read', '--operation', 'Describe', '--topic', 'orders', '--group', 'billing'];
    // --add creates the ACLs (CreateAcls), then prints the resources' ACLs (DescribeAcls).
    const added = await acl('--add', ...who);
    expect(added.status, added.stderr + added.stdout).to.equal(0);
    expect(added.stdout).to.match(/User:carol.*READ/i).and.match(/billing/);
    const mine = { ...MATCH_ALL_FILTER, principal: 'User:carol' };
    expect((await ws.admin(ApiKey.DescribeAcls, { filter: mine })).acls).to.have.length(4);
    const removed = await acl('--remove', '--force', ...who);
    expect(removed.status, removed.stderr + removed.stdout).to.equal(0);
    expect((await ws.admin(ApiKey.DescribeAcls, { filter: mine })).acls).to.have.length(0);
  });

  it('keeps ACLs across a restart (metadata records, replayed)', async () => {
    const before = (await ws.admin(ApiKey.DescribeAcls, { filter: MATCH_ALL_FILTER })).acls;
    ws.close();
    kafka.close();
    const node = cluster.nodes[0]!;
    await node.kill('SIGTERM');
    node.start();
    ws = await waitFor('the restarted broker', async () => {
      try {
        const c = await connect(cluster.brokerUrls[0]!);
        if ((await c.metadata(['open'])).topics[0]?.partitions[0]?.leader === node.id) return c;
        c.close();
      } catch { /* not up yet */ }
      return undefined;
    }, { timeoutMs: 30_000, intervalMs: 200 });
    const after = (await ws.admin(ApiKey.DescribeAcls, { filter: MATCH_ALL_FILTER })).acls;
    expect(after).to.have.deep.members(before);
    expect((await wsProduce('secret', 's4')).errorCode).to.equal(E.TOPIC);
  });

  it('DeleteAcls removes what its filters match; then ACL changes, elections and controller calls are refused (CLUSTER_AUTHORIZATION_FAILED)', async () => {
    const [host, port] = cluster.nodes[0]!.kafkaAddress.split(':');
    kafka = await RawKafkaClient.connect(host!, Number(port));
    const onCluster = { resourceTypeFilter: ResourceType.CLUSTER, resourceNameFilter: 'kafka-cluster', patternTypeFilter: PatternType.LITERAL, hostFilter: '*', permissionType: AclPermission.ALLOW };
    // Some other principal's ACL keeps the cluster named, so allow.everyone.if.no.acl.found does not reopen it.
    const keep = await kafka.request(createAcls, 3, { creations: [kafkaAcl({ resourceType: ResourceType.CLUSTER, resourceName: 'kafka-cluster', principal: 'User:ops', operation: Op.DESCRIBE })] });
    expect(first(keep.results).errorCode).to.equal(0);
    const del = await kafka.request(deleteAcls, 3, {
      filters: [{ ...onCluster, principalFilter: 'User:*', operation: Op.ALTER }, { ...onCluster, principalFilter: 'User:ANONYMOUS', operation: Op.CLUSTER_ACTION }],
    });
    expect((del.filterResults as Struct[]).map((r) => [r.errorCode, (r.matchingAcls as Struct[]).length])).to.deep.equal([[0, 1], [0, 1]]);
    // ANONYMOUS has nothing on the cluster any more.
    await waitFor('the removal to apply', async () => first((await kafka.request(createAcls, 3, { creations: [kafkaAcl({})] })).results).errorCode === E.CLUSTER || undefined, WAIT);
    expect(await wsError(ws.admin(ApiKey.CreateAcls, { creations: [] }))).to.equal(E.CLUSTER);
    const elect = await kafka.request(electLeaders, 2, { electionType: 0, topicPartitions: null, timeoutMs: 5000 });
    expect(elect.errorCode).to.equal(E.CLUSTER);
    // The controller listener: every call needs ClusterAction, which ANONYMOUS (this node's own principal too) lost.
    const quorum = cluster.client();
    try {
      expect(await wsError(quorum.controller('listReassignments', {}))).to.equal(E.CLUSTER);
    } finally {
      quorum.close();
    }
  });
});
