// The Admin client on a real cluster of three combined `sluice server`
// processes: topics (create, list, describe, grow, delete), configs
// (describe, alter, delete), the cluster view, and partition reassignment —
// each checked through an independent read (Metadata, DescribeCluster), and
// typed errors for what the controller refuses.
import { expect } from 'chai';
import { Admin } from '../../src/client/admin.js';
import { Client } from '../../src/client/client.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { Errors, SluiceError, isSluiceError } from '../../src/util/errors.js';
import { waitFor, type ProcessCluster } from './harness.js';
import { startBrokerCluster } from './broker-kit.js';

async function rejection(p: Promise<unknown>): Promise<SluiceError> {
  try {
    await p;
  } catch (err) {
    if (isSluiceError(err)) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

describe('admin on a real 3-node cluster', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  let client: Client;
  let admin: Admin;

  before(async () => {
    cluster = await startBrokerCluster(3);
    client = new Client({ bootstrap: cluster.brokerUrls, webSocketFactory: nodeWebSocketFactory });
    admin = new Admin(client);
  });

  after(async () => {
    client?.close();
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  it('creates, lists, describes, grows and deletes topics', async () => {
    const created = await admin.createTopics({
      topics: [
        { topic: 'a', numPartitions: 3, replicationFactor: 2 },
        { topic: 'b', replicaAssignment: [[1, 2, 3], [2, 3, 1]], configs: { 'retention.ms': '3600000' } },
      ],
    });
    expect(created.map((t) => [t.name, t.numPartitions, t.replicationFactor])).to.deep.equal([['a', 3, 2], ['b', 2, 3]]);
    expect(created.every((t) => typeof t.topicId === 'string')).to.equal(true);
    expect(await admin.listTopics()).to.include.members(['a', 'b']);

    const [a, b] = await admin.describeTopics({ topics: ['a', 'b'] });
    expect(a!.partitions.map((p) => p.partition)).to.deep.equal([0, 1, 2]);
    for (const p of a!.partitions) {
      expect(p.replicas).to.have.length(2);
      expect(p.replicas).to.include(p.leader, 'createTopics waited for leaders');
      expect(p.isr.every((r) => p.replicas.includes(r))).to.equal(true);
      expect(p.leaderEpoch).to.be.at.least(0);
      expect(p.offlineReplicas).to.deep.equal([]);
    }
    expect(b!.partitions.map((p) => p.replicas)).to.deep.equal([[1, 2, 3], [2, 3, 1]]);
    expect(b!.topicId).to.equal(created[1]!.topicId);

    await admin.createPartitions({ topicPartitions: [{ topic: 'a', count: 5 }] });
    await waitFor('5 partitions of a with leaders', async () => {
      const [d] = await admin.describeTopics({ topics: ['a'] });
      return d!.partitions.length === 5 && d!.partitions.every((p) => p.leader >= 0);
    }, { timeoutMs: 30_000, intervalMs: 100 });

    await admin.deleteTopics({ topics: ['b'] });
    await waitFor('b gone', async () => !(await admin.listTopics()).includes('b'), { timeoutMs: 30_000, intervalMs: 100 });
    const gone = await rejection(admin.describeTopics({ topics: ['b'] }));
    expect(gone.errorName).to.equal('UNKNOWN_TOPIC_OR_PARTITION');
  });

  it('reports refusals as typed errors with every item\'s result', async () => {
    await admin.createTopics({ topics: [{ topic: 'dup', numPartitions: 1, replicationFactor: 1 }] });
    const err = await rejection(admin.createTopics({ topics: [{ topic: 'fresh', numPartitions: 1, replicationFactor: 1 }, { topic: 'dup', numPartitions: 1 }] }));
    expect(err.is(Errors.TOPIC_ALREADY_EXISTS)).to.equal(true);
    expect(err.details.topic).to.equal('dup');
    expect((err.details.results as Array<{ name: string; errorCode: number }>).map((r) => [r.name, r.errorCode])).to.deep.equal([['fresh', 0], ['dup', Errors.TOPIC_ALREADY_EXISTS.code]]);
    expect((await rejection(admin.createTopics({ topics: [{ topic: 'too-many', numPartitions: 1, replicationFactor: 5 }] }))).is(Errors.INVALID_REPLICATION_FACTOR)).to.equal(true);
    expect((await rejection(admin.createPartitions({ topicPartitions: [{ topic: 'dup', count: 1 }] }))).errorName).to.equal('INVALID_PARTITIONS');
    expect((await rejection(admin.deleteTopics({ topics: ['never-was'] }))).is(Errors.UNKNOWN_TOPIC_OR_PARTITION)).to.equal(true);
    expect((await rejection(admin.alterConfigs({ resources: [{ resourceType: 'topic', resourceName: 'dup', set: { 'retention.ms': 'soon' } }] }))).is(Errors.INVALID_CONFIG)).to.equal(true);
  });

  it('describes and alters topic and cluster configs', async () => {
    await admin.createTopics({ topics: [{ topic: 'conf', numPartitions: 1, replicationFactor: 1, configs: { 'retention.ms': '60000' } }] });
    const before = await admin.describeConfigs({ resourceType: 'topic', resourceName: 'conf' });
    expect(before.find((c) => c.name === 'retention.ms')).to.include({ value: '60000', source: 'topic' });
    expect(before.find((c) => c.name === 'segment.bytes')?.source).to.equal('default');

    await admin.alterConfigs({ resources: [{ resourceType: 'topic', resourceName: 'conf', set: { 'segment.bytes': '1048576' }, delete: ['retention.ms'] }] });
    const after = await admin.describeConfigs({ resourceType: 'topic', resourceName: 'conf' });
    expect(after.find((c) => c.name === 'segment.bytes')).to.include({ value: '1048576', source: 'topic' });
    expect(after.find((c) => c.name === 'retention.ms')?.source).to.not.equal('topic');

    await admin.alterConfigs({ resources: [{ resourceType: 'cluster', resourceName: '', set: { 'log.retention.ms': '7200000' } }] });
    const cluster = await admin.describeConfigs({ resourceType: 'cluster', resourceName: '' });
    expect(cluster.find((c) => c.name === 'log.retention.ms')).to.include({ value: '7200000', source: 'cluster' });
    const inherited = await admin.describeConfigs({ resourceType: 'topic', resourceName: 'conf' });
    expect(inherited.find((c) => c.name === 'retention.ms')).to.include({ value: '7200000', source: 'cluster' });
  });

  it('describes the cluster', async () => {
    const d = await admin.describeCluster();
    expect(d.clusterId).to.be.a('string');
    expect(d.brokers.map((b) => b.nodeId)).to.deep.equal([1, 2, 3]);
    expect(d.brokers.map((b) => b.url)).to.have.members(cluster.brokerUrls);
    expect(d.brokers.every((b) => !b.fenced)).to.equal(true);
    expect([1, 2, 3]).to.include(d.controllerId);
  });

  it('moves a partition to other replicas and lists the move while it runs', async () => {
    await admin.createTopics({ topics: [{ topic: 'moving', replicaAssignment: [[1, 2]] }] });
    await admin.alterPartitionReassignments({ partitions: [{ topic: 'moving', partition: 0, replicas: [3, 2] }] });
    const ongoing = await admin.listPartitionReassignments();
    for (const r of ongoing.filter((x) => x.topic === 'moving')) expect(r.target).to.deep.equal([3, 2]);
    await waitFor('the move to [3, 2] done', async () => {
      const [d] = await admin.describeTopics({ topics: ['moving'] });
      const p = d!.partitions[0]!;
      const listed = (await admin.listPartitionReassignments()).some((x) => x.topic === 'moving');
      return !listed && p.replicas.join() === '3,2' && p.isr.length === 2;
    }, { timeoutMs: 60_000, intervalMs: 200 });
    const bad = await rejection(admin.alterPartitionReassignments({ partitions: [{ topic: 'moving', partition: 0, replicas: [9] }] }));
    expect(bad.code).to.not.equal(Errors.NONE.code);
    expect(bad.details.partition).to.equal(0);
  });
});
