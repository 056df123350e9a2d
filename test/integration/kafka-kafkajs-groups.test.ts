// KafkaJS 2.2.4 consumer groups against a real 3-node cluster's Kafka
// listener: two KafkaJS consumers split a topic and get every record once,
// and a KafkaJS consumer and a Sluice consumer (WebSocket) share one group
// through a common assignor name, getting disjoint partitions covering the
// topic.
//
// KafkaJS needs Produce, Fetch and ListOffsets as well as the group APIs; the
// suite skips, saying why, while the listener does not advertise them (or
// when kafkajs is not installed).

import { expect } from 'chai';
import { connect, createTopic, startBrokerCluster } from './broker-kit.js';
import { waitFor, type ProcessCluster } from './harness.js';
import { RawKafkaClient } from '../protocol/kafka/raw-client.js';
import type { Struct } from '../../src/protocol/kafka/message.js';
import { apiVersions } from '../../src/protocol/kafka/apis/api-versions/schema.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import { Client } from '../../src/client/client.js';
import { Consumer as SluiceConsumer } from '../../src/client/consumer.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';

type KafkaJs = typeof import('kafkajs');
type KjsConsumer = import('kafkajs').Consumer;

const NEEDED_APIS: ReadonlyArray<[number, string]> = [[0, 'Produce'], [1, 'Fetch'], [2, 'ListOffsets']];
const WAIT_MS = 60_000;

async function loadKafkaJs(): Promise<KafkaJs | null> {
  try {
    return await import('kafkajs');
  } catch {
    return null;
  }
}

describe('KafkaJS consumer groups on the Kafka listener (real 3-node cluster)', function () {
  this.timeout(180_000);
  let kjs: KafkaJs;
  let cluster: ProcessCluster | undefined;
  let admin: BrokerConnection;
  const stops: Array<() => Promise<void>> = [];

  before(async function () {
    const loaded = await loadKafkaJs();
    if (!loaded) {
      console.log('    skipped: kafkajs is not installed (npm install --save-dev kafkajs@2.2.4)');
      this.skip();
    }
    kjs = loaded;
    cluster = await startBrokerCluster(3, [], { kafka: true });
    const [host, port] = cluster.nodes[0]!.kafkaAddress.split(':');
    const raw = await RawKafkaClient.connect(host!, Number(port));
    const served = new Set(((await raw.request(apiVersions, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' })).apiKeys as Struct[]).map((k) => k.apiKey as number));
    raw.close();
    const missing = NEEDED_APIS.filter(([key]) => !served.has(key)).map(([, name]) => name);
    if (missing.length > 0) {
      console.log(`    skipped: the Kafka listener does not serve ${missing.join(', ')} yet, which KafkaJS needs`);
      this.skip();
    }
    admin = await connect(cluster.brokerUrls[0]!);
    const res = await admin.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 'cluster', resourceName: '', set: { 'offsets.topic.num.partitions': '3' } }] });
    expect(res.resources[0]!.errorCode).to.equal(0);
  });
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  });
  after(async () => {
    admin?.close();
    await cluster?.cleanup();
  });

  const kafka = (clientId: string): import('kafkajs').Kafka => new kjs.Kafka({
    clientId, brokers: cluster!.kafkaBootstrap.split(','), logLevel: kjs.logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100 },
  });

  /** A KafkaJS consumer whose latest assignment (from GROUP_JOIN) is kept in `assigned`. */
  async function kjsMember(groupId: string, topic: string, seen: string[], assigners?: import('kafkajs').PartitionAssigner[]): Promise<{ c: KjsConsumer; assigned: () => string[] }> {
    const c = kafka(`kjs-${groupId}`).consumer({ groupId, sessionTimeout: 6_000, rebalanceTimeout: 10_000, heartbeatInterval: 300, ...(assigners ? { partitionAssigners: assigners } : {}) });
    let assigned: string[] = [];
    c.on(c.events.GROUP_JOIN, (e) => {
      assigned = Object.entries(e.payload.memberAssignment).flatMap(([t, ps]) => ps.map((p) => `${t}-${p}`)).sort();
    });
    await c.connect();
    stops.push(() => c.disconnect());
    await c.subscribe({ topics: [topic], fromBeginning: true });
    await c.run({ eachMessage: async ({ message }) => { seen.push(String(message.value)); } });
    return { c, assigned: () => assigned };
  }

  it('two KafkaJS consumers split a topic and receive every record once', async () => {
    await createTopic(admin, 'kjs-queue', 4, 3);
    const producer = kafka('kjs-producer').producer();
    await producer.connect();
    stops.push(() => producer.disconnect());
    const values = Array.from({ length: 40 }, (_, i) => `v${i}`);
    await producer.send({ topic: 'kjs-queue', messages: values.map((value, i) => ({ value, partition: i % 4 })) });
    const seen: string[] = [];
    const a = await kjsMember('kjs-group', 'kjs-queue', seen);
    const b = await kjsMember('kjs-group', 'kjs-queue', seen);
    await waitFor('two partitions each', () => (a.assigned().length === 2 && b.assigned().length === 2) || undefined, { timeoutMs: WAIT_MS, intervalMs: 50 });
    expect([...a.assigned(), ...b.assigned()].sort()).to.deep.equal(['kjs-queue-0', 'kjs-queue-1', 'kjs-queue-2', 'kjs-queue-3']);
    await waitFor('every record', () => new Set(seen).size === values.length || undefined, { timeoutMs: WAIT_MS, intervalMs: 50 });
    expect([...new Set(seen)].sort()).to.deep.equal([...values].sort());
  });

  it('a KafkaJS consumer and a Sluice consumer share a group with a common assignor name', async () => {
    await createTopic(admin, 'kjs-mixed', 4, 3);
    // KafkaJS names its assignor 'RoundRobinAssigner'; under the name 'range' both clients offer one protocol.
    const range: import('kafkajs').PartitionAssigner = (config) => {
      const rr = kjs.PartitionAssigners.roundRobin(config);
      return {
        name: 'range', version: 0, assign: (group) => rr.assign(group),
        protocol: ({ topics }) => ({ name: 'range', metadata: kjs.AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }) }),
      };
    };
    const client = new Client({ bootstrap: cluster!.brokerUrls, clientId: 'sluice-mixed', webSocketFactory: nodeWebSocketFactory, connectTimeoutMs: 2_000, requestTimeoutMs: 10_000 });
    stops.push(async () => client.close());
    const sluice = new SluiceConsumer(client, { groupId: 'kjs-mixed-group', partitionAssigners: ['range'], sessionTimeoutMs: 6_000, rebalanceTimeoutMs: 10_000, heartbeatIntervalMs: 300 });
    stops.push(() => sluice.stop());
    await sluice.subscribe({ topics: ['kjs-mixed'], fromBeginning: true });
    await sluice.run({ eachMessage: async () => undefined });
    await waitFor('the Sluice consumer to hold the topic', () => sluice.assignment().length === 4 || undefined, { timeoutMs: WAIT_MS, intervalMs: 50 });
    const k = await kjsMember('kjs-mixed-group', 'kjs-mixed', [], [range]);
    await waitFor('two partitions each', () => (sluice.assignment().length === 2 && k.assigned().length === 2) || undefined, { timeoutMs: WAIT_MS, intervalMs: 50 });
    const sluiceParts = sluice.assignment().map((tp) => `${tp.topic}-${tp.partition}`);
    expect([...sluiceParts, ...k.assigned()].sort()).to.deep.equal(['kjs-mixed-0', 'kjs-mixed-1', 'kjs-mixed-2', 'kjs-mixed-3']);
  });
});
