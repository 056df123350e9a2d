// KafkaJS 2.2.4's admin client against the Kafka listener of a real 3-node
// cluster: createTopics (waiting for leaders), fetchTopicMetadata,
// describeConfigs, createPartitions, describeCluster and deleteTopics, with
// its own version negotiation. Skipped when kafkajs is not installed.
// (deleteTopicRecords asks ListOffsets first, which this listener does not
// serve yet; DeleteRecords is covered by kafka-admin.test.ts.)

import { expect } from 'chai';
import type { Admin, Kafka as KafkaType } from 'kafkajs';
import { startBrokerCluster } from './broker-kit.js';
import { waitFor, type ProcessCluster } from './harness.js';

const RESOURCE_TOPIC = 2;

describe('KafkaJS admin client on the Kafka listener (real 3-node cluster)', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster | undefined;
  let admin: Admin;

  before(async function () {
    let kafkajs: { Kafka: typeof KafkaType; logLevel: { NOTHING: number } };
    try {
      kafkajs = await import('kafkajs') as unknown as typeof kafkajs;
    } catch {
      this.skip();
      return;
    }
    cluster = await startBrokerCluster(3, [], { kafka: true });
    const kafka = new kafkajs.Kafka({ clientId: 'kafkajs-admin-test', brokers: cluster.nodes.map((n) => n.kafkaAddress), logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 8 } });
    admin = kafka.admin();
    await admin.connect();
  });
  after(async () => {
    await admin?.disconnect();
    await cluster?.cleanup();
  });

  it('creates topics and reads them back in metadata, refusing one that exists', async () => {
    const created = await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic: 'js-orders', numPartitions: 3, replicationFactor: 2, configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
    });
    expect(created).to.equal(true);
    expect(await admin.createTopics({ topics: [{ topic: 'js-orders', numPartitions: 1 }] }), 'exists already').to.equal(false);
    const md = await admin.fetchTopicMetadata({ topics: ['js-orders'] });
    const parts = md.topics[0]!.partitions;
    expect(parts).to.have.length(3);
    for (const p of parts) {
      expect(p.replicas).to.have.length(2);
      expect(p.leader).to.be.oneOf(p.replicas);
    }
    expect(await admin.listTopics()).to.include('js-orders');
  });

  it('describes a topic\'s configs', async () => {
    const res = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: RESOURCE_TOPIC, name: 'js-orders' }] });
    const entries = res.resources[0]!.configEntries;
    expect(entries.find((e) => e.configName === 'retention.ms')).to.include({ configValue: '3600000', isDefault: false });
    expect(entries.find((e) => e.configName === 'cleanup.policy')).to.include({ configValue: 'delete' });
  });

  it('adds partitions, and refuses fewer than there are', async () => {
    await admin.createPartitions({ topicPartitions: [{ topic: 'js-orders', count: 4 }] });
    await waitFor('four partitions', async () => (await admin.fetchTopicMetadata({ topics: ['js-orders'] })).topics[0]!.partitions.length === 4, { timeoutMs: 20_000, intervalMs: 200 });
    const refused = await admin.createPartitions({ topicPartitions: [{ topic: 'js-orders', count: 2 }] }).then(() => null, (err: { type?: string }) => err);
    expect(refused?.type).to.equal('INVALID_PARTITIONS');
  });

  it('describes the cluster and deletes topics', async () => {
    const c = await admin.describeCluster();
    expect(c.brokers.map((b) => `${b.host}:${b.port}`).sort()).to.deep.equal(cluster!.nodes.map((n) => n.kafkaAddress).sort());
    expect(c.controller).to.be.oneOf([1, 2, 3]);
    await admin.deleteTopics({ topics: ['js-orders'] });
    await waitFor('topic gone', async () => !(await admin.listTopics()).includes('js-orders'), { timeoutMs: 20_000, intervalMs: 200 });
  });
});
