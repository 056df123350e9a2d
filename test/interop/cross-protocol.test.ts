// One broker, two protocols (issue 14): what a Kafka client writes through
// the Kafka listener, Sluice's own client reads over WebSocket, and the other
// way round, byte for byte — keys, values, headers (repeated, binary) and
// timestamps, at the same partitions and offsets.
//
// - Kafka → WebSocket: the Java client's default producer (KafkaJS's when
//   Java is missing) writes records with fixed timestamps; `sluice consume
//   --json` prints them. Then KafkaJS writes every byte value in keys, values
//   and headers, and Sluice's TypeScript client (src/index.ts) reads them.
// - WebSocket → Kafka: `sluice produce --json` writes lines with keys and
//   headers; the Java consumer (or KafkaJS) reads them, and both protocols
//   report the same timestamp per record. Then Sluice's client writes binary
//   records with explicit timestamps and KafkaJS reads them.

import { expect } from 'chai';
import { Kafka, logLevel, Partitioners, type IHeaders } from 'kafkajs';
import { waitFor } from '../integration/harness.js';
import { runSluice } from '../integration/cli-kit.js';
import { Client } from '../../src/index.js';
import {
  CLUSTER_UP_MS, NEEDS, createTopic, requireApis, findTool, jsonLines, runTool, spawnTool, startOrSkip, targetKind, uniqueName,
  type KafkaTarget, type Tool,
} from './kafka-kit.js';

const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const BASE_TS = 1_700_000_000_000;

/** One record as either side sees it, in one comparable shape (bytes as hex). */
interface Rec {
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: string | null;
  readonly value: string | null;
  readonly headers: Array<{ key: string; value: string | null }>;
}

const hex = (b: Uint8Array | string | null | undefined): string | null => (b == null ? null : Buffer.from(b).toString('hex'));
const byPosition = (rs: readonly Rec[]): Rec[] => [...rs].sort((x, y) => x.partition - y.partition || x.offset - y.offset);

/** KafkaJS's headers object as a list in record order (a repeated key is an array). */
function kafkajsHeaders(h: IHeaders | undefined): Array<{ key: string; value: string | null }> {
  const out: Array<{ key: string; value: string | null }> = [];
  for (const [key, v] of Object.entries(h ?? {})) {
    for (const one of Array.isArray(v) ? v : [v]) out.push({ key, value: hex(one as Buffer | string | undefined) });
  }
  return out;
}

describe('interop: cross-protocol (Kafka listener ↔ WebSocket)', function () {
  this.timeout(240_000);
  let target: KafkaTarget | undefined;
  let kafka: Kafka;
  let sluiceClient: Client | undefined;
  let java: Tool | null;

  before(async function () {
    this.timeout(CLUSTER_UP_MS + 60_000);
    if (targetKind() !== 'sluice') {
      console.log(`      skipping: the WebSocket side needs the Sluice cluster (target is ${targetKind()})`);
      this.skip();
    }
    target = await startOrSkip(this);
    kafka = new Kafka({ clientId: 'sluice-interop-cross', brokers: target.bootstrap.split(','), logLevel: logLevel.NOTHING });
    sluiceClient = new Client({ bootstrap: target.cluster!.brokerUrls });
    const located = findTool('java');
    java = located.tool;
    if (java === null) console.log(`      note: ${located.reason}; KafkaJS stands in for the Java client`);
  });

  after(async () => {
    sluiceClient?.close();
    await target?.stop();
  });

  beforeEach(function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group);
  });

  const wsBootstrap = () => target!.cluster!.brokerUrls.join(',');

  /** Records of `topic` through Sluice's own client over WebSocket (every partition from offset 0). */
  async function readOverWebSocket(topic: string, partitions: number, count: number): Promise<Rec[]> {
    const consumer = sluiceClient!.consumer({});
    consumer.assign(Array.from({ length: partitions }, (_, p) => ({ topic, partition: p, offset: 0 })));
    const out: Rec[] = [];
    const deadline = setTimeout(() => void consumer.close(), 60_000);
    try {
      for await (const m of consumer) {
        out.push({
          partition: m.partition, offset: m.offset, timestamp: m.timestamp, key: hex(m.key), value: hex(m.value),
          headers: m.headers.map((h) => ({ key: h.key, value: hex(h.value) })),
        });
        if (out.length >= count) break;
      }
    } finally {
      clearTimeout(deadline);
      await consumer.close();
    }
    expect(out, `records of ${topic} over WebSocket`).to.have.length(count);
    return byPosition(out);
  }

  /** Records of `topic` through KafkaJS (a fresh group, from the beginning). */
  async function readOverKafka(topic: string, count: number): Promise<Rec[]> {
    const consumer = kafka.consumer({ groupId: uniqueName('cross-read'), heartbeatInterval: 500 });
    const out: Rec[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ partition, message: m }) => {
          out.push({ partition, offset: Number(m.offset), timestamp: Number(m.timestamp), key: hex(m.key), value: hex(m.value), headers: kafkajsHeaders(m.headers) });
        },
      });
      await waitFor(`${count} records of ${topic} over the Kafka listener`, () => out.length >= count, { timeoutMs: 60_000, intervalMs: 100 });
    } finally {
      await consumer.disconnect();
    }
    expect(out).to.have.length(count);
    return byPosition(out);
  }

  it('Kafka client → sluice consume --json: keys, values, headers, timestamps, offsets', async () => {
    const topic = uniqueName('cross-k2w');
    await createTopic(target!, topic, 2);
    const count = 30;
    let produced: Rec[];
    if (java !== null) {
      const run = await runTool(java, ['produce', '--bootstrap', target!.bootstrap, '--topic', topic, '--count', String(count), '--prefix', 'java']);
      expect(run.status, run.stderr.slice(-3000)).to.equal(0);
      produced = jsonLines(run.stdout).filter((e) => e.event === 'produced').map((e) => {
        const i = String(e.value).slice('java-'.length);
        return {
          partition: e.partition as number, offset: e.offset as number, timestamp: e.timestamp as number, key: e.key as string, value: e.value as string,
          headers: [{ key: 'src', value: 'java' }, { key: 'i', value: i }],
        };
      });
    } else {
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
      await producer.connect();
      try {
        const msgs = Array.from({ length: count }, (_, i) => ({ key: `key-${i}`, value: `kafkajs-${i}`, timestamp: String(BASE_TS + i), headers: { src: 'kafkajs', i: String(i) } }));
        const res = await producer.send({ topic, acks: -1, messages: msgs });
        expect(res.every((r) => r.errorCode === 0)).to.equal(true);
      } finally {
        await producer.disconnect();
      }
      // KafkaJS reports base offsets per partition only: take positions from a read over the Kafka listener.
      produced = (await readOverKafka(topic, count)).map((r) => ({
        ...r, key: Buffer.from(r.key!, 'hex').toString(), value: Buffer.from(r.value!, 'hex').toString(),
        headers: r.headers.map((h) => ({ key: h.key, value: Buffer.from(h.value!, 'hex').toString() })),
      }));
    }
    expect(produced).to.have.length(count);
    const r = await runSluice(['consume', '--topic', topic, '--from-beginning', '--max-messages', String(count), '--timeout-ms', '30000', '--json', '--bootstrap', wsBootstrap()]);
    expect(r.status, r.stderr).to.equal(0);
    const consumed = jsonLines(r.stdout).map((e) => ({
      partition: e.partition as number, offset: e.offset as number, timestamp: e.timestamp as number, key: e.key as string, value: e.value as string,
      headers: e.headers as Array<{ key: string; value: string }>,
    }));
    expect(byPosition(consumed)).to.deep.equal(byPosition(produced));
  });

  it('KafkaJS binary records → Sluice client over WebSocket, byte for byte', async () => {
    const topic = uniqueName('cross-k2w-bin');
    await createTopic(target!, topic, 2);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    const count = 20;
    try {
      await producer.send({
        topic, acks: -1, messages: Array.from({ length: count }, (_, i) => ({
          partition: i % 2, key: i === 3 ? null : ALL_BYTES.subarray(i), value: i === 5 ? null : Buffer.concat([ALL_BYTES, Buffer.from([i])]),
          timestamp: String(BASE_TS + 1000 * i), headers: { h: [ALL_BYTES.subarray(0, i), Buffer.from('second')], i: String(i) },
        })),
      });
    } finally {
      await producer.disconnect();
    }
    const overKafka = await readOverKafka(topic, count);
    const overWs = await readOverWebSocket(topic, 2, count);
    expect(overWs).to.deep.equal(overKafka);
    expect(overWs.find((x) => x.headers.some((h) => h.key === 'i' && h.value === hex('3')))?.key, 'a null key stays null').to.equal(null);
  });

  it('sluice produce → Kafka client: keys, values, headers; both protocols see the same timestamps', async () => {
    const topic = uniqueName('cross-w2k');
    await createTopic(target!, topic, 2);
    const count = 30;
    const lines = Array.from({ length: count }, (_, i) => `key-${i}:sluice-${i}\n`).join('');
    const p = await runSluice(['produce', '--topic', topic, '--key-separator', ':', '--headers', 'src=sluice,kind=cli', '--json', '--bootstrap', wsBootstrap()], lines);
    expect(p.status, p.stderr).to.equal(0);
    const acks = jsonLines(p.stdout);
    expect(acks).to.have.length(count);

    let overKafka: Rec[];
    if (java !== null) {
      const member = spawnTool(java, ['consume', '--bootstrap', target!.bootstrap, '--topic', topic, '--group', uniqueName('cross-w2k-g'), '--count', String(count)]);
      const run = await member.done;
      expect(run.status, run.stderr.slice(-3000)).to.equal(0);
      overKafka = byPosition(jsonLines(run.stdout).filter((e) => e.event === 'record').map((e) => ({
        partition: e.partition as number, offset: e.offset as number, timestamp: e.timestamp as number, key: e.key as string, value: e.value as string,
        headers: e.headers as Array<{ key: string; value: string }>,
      })));
    } else {
      overKafka = (await readOverKafka(topic, count)).map((r) => ({
        ...r, key: Buffer.from(r.key!, 'hex').toString(), value: Buffer.from(r.value!, 'hex').toString(),
        headers: r.headers.map((h) => ({ key: h.key, value: Buffer.from(h.value!, 'hex').toString() })),
      }));
    }
    expect(overKafka).to.have.length(count);
    const positions = byPosition(acks.map((a) => ({ partition: a.partition as number, offset: a.offset as number }) as Rec));
    expect(overKafka.map((r) => [r.partition, r.offset])).to.deep.equal(positions.map((r) => [r.partition, r.offset]));
    for (const r of overKafka) {
      const i = r.value!.slice('sluice-'.length);
      expect(r.key).to.equal(`key-${i}`);
      expect(r.headers).to.deep.equal([{ key: 'src', value: 'sluice' }, { key: 'kind', value: 'cli' }]);
    }
    const c = await runSluice(['consume', '--topic', topic, '--from-beginning', '--max-messages', String(count), '--timeout-ms', '30000', '--json', '--bootstrap', wsBootstrap()]);
    expect(c.status, c.stderr).to.equal(0);
    const overWs = byPosition(jsonLines(c.stdout) as unknown as Rec[]);
    expect(overKafka.map((r) => r.timestamp), 'the same timestamps over both protocols').to.deep.equal(overWs.map((r) => r.timestamp));
  });

  it('Sluice client binary records with explicit timestamps → KafkaJS, byte for byte', async () => {
    const topic = uniqueName('cross-w2k-bin');
    await createTopic(target!, topic, 2);
    const producer = sluiceClient!.producer({});
    const count = 20;
    try {
      await producer.send({
        topic, messages: Array.from({ length: count }, (_, i) => ({
          partition: i % 2, key: i === 4 ? null : ALL_BYTES.subarray(255 - i), value: i === 6 ? null : Buffer.concat([Buffer.from([i]), ALL_BYTES]),
          timestamp: BASE_TS + 7 * i, headers: [{ key: 'h', value: ALL_BYTES.subarray(i) }, { key: 'h', value: null }, { key: 'i', value: String(i) }],
        })),
      });
    } finally {
      await producer.close();
    }
    const overWs = await readOverWebSocket(topic, 2, count);
    const overKafka = await readOverKafka(topic, count);
    expect(overKafka).to.deep.equal(overWs);
    expect(overKafka.map((r) => r.timestamp).sort((x, y) => x - y)).to.deep.equal(Array.from({ length: count }, (_, i) => BASE_TS + 7 * i));
  });
});
