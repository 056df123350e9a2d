// KafkaJS 2.2.4 (a devDependency, in-process) against the Kafka listener
// (issue 14): admin create/describe/delete, the idempotent producer with
// binary keys, repeated binary headers and explicit timestamps read back
// byte for byte, and consumer.run in a group of two through a rebalance, with
// the committed offsets read back through the admin client.

import { expect } from 'chai';
import { Kafka, logLevel, Partitioners, type Consumer, type EachMessagePayload, type IHeaders } from 'kafkajs';
import { waitFor } from '../integration/harness.js';
import { CLUSTER_UP_MS, NEEDS, committedOffsets, createTopic, requireApis, startOrSkip, uniqueName, waitForLeaders, type KafkaTarget } from './kafka-kit.js';

/** Every byte value, so nothing is lost to a text encoding on the way. */
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

interface Seen {
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly timestamp: string;
  readonly headers: IHeaders;
}

describe('interop: KafkaJS', function () {
  this.timeout(240_000);
  let target: KafkaTarget | undefined;
  let kafka: Kafka;
  const consumers: Consumer[] = [];

  before(async function () {
    this.timeout(CLUSTER_UP_MS + 60_000);
    target = await startOrSkip(this);
    kafka = new Kafka({ clientId: 'sluice-interop-kafkajs', brokers: target.bootstrap.split(','), logLevel: logLevel.NOTHING });
  });

  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((c) => c.disconnect().catch(() => {})));
  });

  after(async () => {
    await target?.stop();
  });

  /** A consumer in `groupId` that collects what it reads (committing after every message) and its latest assignment. */
  async function member(groupId: string, topic: string): Promise<{ seen: Seen[]; assignment: () => number[] }> {
    const consumer = kafka.consumer({ groupId, heartbeatInterval: 500, sessionTimeout: 10_000, rebalanceTimeout: 20_000 });
    consumers.push(consumer);
    let assigned: number[] = [];
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      assigned = [...(e.payload.memberAssignment[topic] ?? [])];
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const seen: Seen[] = [];
    await consumer.run({
      autoCommitThreshold: 1,
      eachMessage: async ({ partition, message }: EachMessagePayload) => {
        seen.push({ partition, offset: message.offset, key: message.key, value: message.value, timestamp: message.timestamp, headers: message.headers ?? {} });
      },
    });
    return { seen, assignment: () => assigned };
  }

  it('admin: creates, describes and deletes a topic', async function () {
    requireApis(this, target!, NEEDS.topics, 'CreateTopics', NEEDS.deleteTopics, 'DescribeConfigs');
    const admin = target!.admin;
    const topic = uniqueName('kafkajs-admin');
    const cluster = await admin.describeCluster();
    expect(cluster.brokers.map((x) => `${x.host}:${x.port}`).sort()).to.deep.equal([...target!.kafkaPorts.values()].map((p) => `127.0.0.1:${p}`).sort());
    expect(await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: target!.replicationFactor, configEntries: [{ name: 'retention.ms', value: '3600000' }] }] }))
      .to.equal(true);
    await waitForLeaders(target!, topic, 3);
    const md = await admin.fetchTopicMetadata({ topics: [topic] });
    expect(md.topics[0]!.partitions.map((p) => p.partitionId).sort()).to.deep.equal([0, 1, 2]);
    for (const p of md.topics[0]!.partitions) {
      expect(p.replicas).to.have.length(target!.replicationFactor);
      expect(p.isr).to.have.length(target!.replicationFactor);
    }
    const configs = await admin.describeConfigs({ resources: [{ type: 2 /* TOPIC */, name: topic, configNames: ['retention.ms'] }], includeSynonyms: false });
    const entry = configs.resources[0]!.configEntries.find((c) => c.configName === 'retention.ms');
    expect(entry?.configValue, JSON.stringify(configs.resources[0])).to.equal('3600000');
    expect(await admin.listTopics()).to.include(topic);
    await admin.deleteTopics({ topics: [topic], timeout: 30_000 });
    await waitFor(`${topic} gone`, async () => !(await admin.listTopics()).includes(topic), { timeoutMs: 30_000, intervalMs: 200 });
  });

  it('idempotent producer: each record once, binary keys, repeated headers and timestamps kept byte for byte', async function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group);
    const topic = uniqueName('kafkajs-produce');
    await createTopic(target!, topic, 2);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    const count = 60;
    const sent = Array.from({ length: count }, (_, i) => ({
      key: i % 10 === 0 ? null : Buffer.concat([Buffer.from(`k${i}-`), ALL_BYTES.subarray(i, i + 8)]),
      value: i === 7 ? null : Buffer.concat([Buffer.from(`v${i}-`), ALL_BYTES]),
      timestamp: String(1_700_000_000_000 + i),
      headers: { i: String(i), bin: ALL_BYTES.subarray(0, i + 1), multi: [Buffer.from('one'), Buffer.from('two')] },
      partition: i % 2,
    }));
    try {
      // In three sends, so the producer's sequence numbers run across requests.
      for (let from = 0; from < count; from += 20) {
        const res = await producer.send({ topic, acks: -1, messages: sent.slice(from, from + 20) });
        for (const r of res) expect(r.errorCode, JSON.stringify(r)).to.equal(0);
      }
    } finally {
      await producer.disconnect();
    }
    const ends = await target!.admin.fetchTopicOffsets(topic);
    expect(ends.map((o) => Number(o.high)).sort(), 'nothing written twice').to.deep.equal([30, 30]);

    const reader = await member(uniqueName('kafkajs-read'), topic);
    await waitFor(`${count} records read back`, () => reader.seen.length >= count, { timeoutMs: 60_000, intervalMs: 100 });
    expect(reader.seen).to.have.length(count);
    for (const got of reader.seen) {
      const i = Number(got.headers.i?.toString());
      const want = sent[i]!;
      expect(got.partition, `record ${i}`).to.equal(want.partition);
      expect(got.key === null ? null : Buffer.from(got.key).toString('hex'), `key of ${i}`).to.equal(want.key?.toString('hex') ?? null);
      expect(got.value === null ? null : Buffer.from(got.value).toString('hex'), `value of ${i}`).to.equal(want.value?.toString('hex') ?? null);
      expect(got.timestamp, `timestamp of ${i}`).to.equal(want.timestamp);
      expect(Buffer.from(got.headers.bin as Buffer).toString('hex'), `header bin of ${i}`).to.equal(want.headers.bin.toString('hex'));
      const multi = got.headers.multi as Buffer[];
      expect(Array.isArray(multi) ? multi.map((b) => b.toString()) : multi, `repeated header of ${i}`).to.deep.equal(['one', 'two']);
    }
    const offsets = (p: number) => reader.seen.filter((r) => r.partition === p).map((r) => Number(r.offset)).sort((x, y) => x - y);
    for (const p of [0, 1]) expect(offsets(p), `partition ${p}`).to.deep.equal(Array.from({ length: 30 }, (_, k) => k));
  });

  it('consumer.run: a group of two rebalances, reads each record once and commits it', async function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group, 'DescribeGroups');
    const topic = uniqueName('kafkajs-group');
    const groupId = uniqueName('kafkajs-g');
    await createTopic(target!, topic, 4);
    const a = await member(groupId, topic);
    await waitFor('member A holds all 4 partitions', () => a.assignment().length === 4, { timeoutMs: 60_000, intervalMs: 100 });
    const b = await member(groupId, topic);
    await waitFor('the rebalance split the partitions between A and B', () => {
      const [x, y] = [a.assignment(), b.assignment()];
      return x.length > 0 && y.length > 0 && new Set([...x, ...y]).size === 4 && x.length + y.length === 4;
    }, { timeoutMs: 90_000, intervalMs: 100 });

    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    const count = 80;
    try {
      await producer.send({ topic, acks: -1, messages: Array.from({ length: count }, (_, i) => ({ key: `key-${i}`, value: `value-${i}`, headers: { i: String(i) } })) });
    } finally {
      await producer.disconnect();
    }
    await waitFor(`${count} records read by the group`, () => a.seen.length + b.seen.length >= count, { timeoutMs: 60_000, intervalMs: 100 });
    const all = [...a.seen, ...b.seen];
    expect(new Set(all.map((r) => r.value?.toString())).size, 'each record once').to.equal(count);
    expect(all).to.have.length(count);
    for (const r of all) expect(r.key?.toString()).to.equal(`key-${r.headers.i?.toString()}`);
    expect(a.seen.length, 'A read some').to.be.greaterThan(0);
    expect(b.seen.length, 'B read some').to.be.greaterThan(0);

    const ends = new Map((await target!.admin.fetchTopicOffsets(topic)).map((o) => [o.partition, Number(o.high)]));
    await waitFor('committed offsets = log end offsets', async () => {
      const committed = await committedOffsets(target!, groupId, topic);
      return [...ends].every(([p, end]) => end === 0 || committed.get(p) === end);
    }, { timeoutMs: 30_000, intervalMs: 200 });
    const described = await target!.admin.describeGroups([groupId]);
    expect(described.groups[0]!.members, 'two members').to.have.length(2);
  });
});
