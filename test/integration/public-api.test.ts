// The package entry as docs/client.md shows it, on a real 3-node cluster:
// `new Client({ bootstrap })` (ws by default), client.admin() creates a
// topic, client.producer() sends keyed records (idempotent by default), two
// groups of client.consumer() each receive every record, in partition order,
// and the admin's group calls show the committed offsets with no lag.
import { expect } from 'chai';
import { Client, type ConsumerMessage } from '../../src/index.js';
import { murmur2Partition } from '../../src/index.js';
import { ProcessCluster, waitFor } from './harness.js';

describe('the sluice package entry, end to end', function () {
  this.timeout(120_000);
  let cluster: ProcessCluster;
  let client: Client;

  before(async () => {
    cluster = await ProcessCluster.create({ size: 3, brokers: true, logLevel: 'warn' });
    cluster.startAll();
    client = new Client({ bootstrap: cluster.brokerUrls.join(','), clientId: 'public-api-test' });
    const admin = client.admin();
    await waitFor('three unfenced brokers', async () => (await admin.describeCluster()).brokers.filter((b) => !b.fenced).length === 3, { timeoutMs: 60_000 });
  });

  after(async () => {
    client?.close();
    await cluster?.cleanup();
  });

  it('admin, producer, two consumer groups and group admin work as documented', async () => {
    const admin = client.admin();
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 3, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } }] });
    expect(await admin.listTopics()).to.include('orders');
    expect(await admin.listGroups()).to.deep.equal([]);

    const producer = client.producer({ lingerMs: 2 });
    const messages = Array.from({ length: 60 }, (_, i) => ({ key: `customer-${i % 7}`, value: `order-${i}` }));
    const sent = await producer.send({ topic: 'orders', messages });
    expect(sent).to.have.length(60);
    sent.forEach((m, i) => expect(m.partition, `order-${i}`).to.equal(murmur2Partition(Buffer.from(`customer-${i % 7}`), 3)));
    await producer.close();

    const readAll = async (groupId: string): Promise<ConsumerMessage[]> => {
      const consumer = client.consumer({ groupId, autoOffsetReset: 'earliest', autoCommitIntervalMs: 100 });
      const got: ConsumerMessage[] = [];
      await consumer.subscribe({ topics: ['orders'], fromBeginning: true });
      await consumer.run({ eachMessage: async ({ topic, partition, message }) => void got.push({ ...message, topic, partition }) });
      await waitFor(`group ${groupId} to read 60 records`, () => got.length >= 60, { timeoutMs: 60_000 });
      await consumer.close();
      return got;
    };
    for (const groupId of ['billing', 'audit']) {
      const got = await readAll(groupId);
      expect(got.map((m) => m.value?.toString()).sort()).to.deep.equal(messages.map((m) => m.value).sort());
      // Within a partition, records arrive in the order they were sent.
      for (let p = 0; p < 3; p++) {
        const inPartition = got.filter((m) => m.partition === p).map((m) => Number(m.value!.toString().slice('order-'.length)));
        expect(inPartition).to.deep.equal([...inPartition].sort((a, b) => a - b));
      }
      const [described] = await client.admin().describeGroups([groupId]);
      expect(described!.offsets.map((o) => o.lag), `lag of ${groupId} after closing`).to.deep.equal([0, 0, 0]);
    }
  });
});
