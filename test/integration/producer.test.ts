// The Producer on a real cluster of three combined `sluice server` processes
// on loopback, read back with plain BrokerConnection fetches: every record
// once, in per-partition send order, keys on their murmur2 partition; gzip
// and lz4 batches; a SIGKILLed partition leader during a send loop loses,
// duplicates and reorders no acknowledged record; and produce answers dropped
// at the client's connection (after the broker appended) are retried into
// exactly one copy of every record, in order; batches a topic with a small
// max.message.bytes refuses are split (plain and gzip) into ones it takes.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Admin } from '../../src/client/admin.js';
import { Client } from '../../src/client/client.js';
import { murmur2Partition } from '../../src/client/murmur2.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { Producer, type RecordMetadata } from '../../src/client/producer.js';
import type { WebSocketFactory, WebSocketLike } from '../../src/net/client-link.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { decodeRequest, decodeResponse } from '../../src/protocol/envelope.js';
import { COMPRESSION_CODEC_MASK, CompressionType, readBatchHeader } from '../../src/record/batch-header.js';
import { isSluiceError } from '../../src/util/errors.js';
import { waitFor, type ProcessCluster } from './harness.js';
import { Connections, readPartition, startBrokerCluster, type PartitionContent } from './broker-kit.js';

// Short enough for quick failovers, long enough that a controller election under a loaded
// 2-core test run does not fence every broker before heartbeats find the new controller.
const SESSION_MS = 6000;

/**
 * A WebSocket that drops the answers to some produce requests after the
 * broker handled them: the client sees a timeout and retries. It learns each
 * request's API from the outgoing frame and matches answers by correlation id.
 */
class AnswerDroppingSocket implements WebSocketLike {
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  private readonly apis = new Map<number, number>();

  constructor(private readonly inner: WebSocketLike, private readonly dropProduceAnswer: () => boolean) {
    inner.onopen = (ev) => this.onopen?.(ev);
    inner.onclose = (ev) => this.onclose?.(ev);
    inner.onerror = (ev) => this.onerror?.(ev);
    inner.onmessage = (ev) => {
      const bytes = ev.data instanceof ArrayBuffer ? new Uint8Array(ev.data) : (ev.data as Uint8Array);
      const res = decodeResponse(bytes);
      const id = res.ok ? res.value.correlationId : null;
      const api = id === null ? undefined : this.apis.get(id);
      if (id !== null) this.apis.delete(id);
      if (api === ApiKey.Produce && this.dropProduceAnswer()) return;
      this.onmessage?.(ev);
    };
  }

  get binaryType(): string {
    return this.inner.binaryType;
  }

  set binaryType(v: string) {
    this.inner.binaryType = v;
  }

  get readyState(): number {
    return this.inner.readyState;
  }

  get bufferedAmount(): number {
    return this.inner.bufferedAmount;
  }

  send(data: Uint8Array): void {
    const req = decodeRequest(data);
    if (req.ok) this.apis.set(req.value.correlationId, req.value.apiKey);
    this.inner.send(data);
  }

  close(code?: number, reason?: string): void {
    this.inner.close(code, reason);
  }
}

describe('producer on a real 3-node cluster', function () {
  this.timeout(240_000);
  let cluster: ProcessCluster;
  let client: Client;
  let admin: Admin;
  const conns = new Connections();

  before(async () => {
    cluster = await startBrokerCluster(3);
    client = new Client({ bootstrap: cluster.brokerUrls, webSocketFactory: nodeWebSocketFactory, requestTimeoutMs: 10_000 });
    admin = new Admin(client);
    await admin.alterConfigs({ resources: [{ resourceType: 'cluster', resourceName: '', set: { 'broker.session.timeout.ms': String(SESSION_MS) } }] });
  });

  after(async () => {
    client?.close();
    conns.closeAll();
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  /** Every record of a partition, read from its current leader. */
  async function read(topic: string, partition: number): Promise<PartitionContent> {
    return waitFor(`a read of ${topic}-${partition}`, async () => {
      const [p] = (await admin.describeTopics({ topics: [topic] }))[0]!.partitions.filter((x) => x.partition === partition);
      const url = (await admin.describeCluster()).brokers.find((b) => b.nodeId === p!.leader)?.url;
      if (!url) return undefined;
      return readPartition(await conns.get(url), topic, partition);
    }, { timeoutMs: 30_000, intervalMs: 100 });
  }

  const text = (b: Buffer | null): string => b?.toString('utf8') ?? '';

  it('writes every record once, in send order per partition, keys on their murmur2 partition', async () => {
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 6, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } }] });
    // Small batches: keyless records fill the sticky partition's batch and move on, whatever the timing
    // (200 of them would otherwise all fit the first batch if they were appended within one linger).
    const producer = new Producer(client, { lingerMs: 2, batchBytes: 1024 });
    const sends: Array<Promise<RecordMetadata[]>> = [];
    const sent: Array<{ key: string | null; value: string }> = [];
    for (let i = 0; i < 60; i++) {
      const messages = Array.from({ length: 10 }, (_, j) => {
        const n = i * 10 + j;
        return { key: n % 3 === 0 ? null : `customer-${n % 37}`, value: `order-${n}` };
      });
      sent.push(...messages);
      sends.push(producer.send({ topic: 'orders', messages }));
    }
    const results = (await Promise.all(sends)).flat();
    await producer.close();
    expect(results).to.have.length(600);

    const byPartition = await Promise.all([0, 1, 2, 3, 4, 5].map((p) => read('orders', p)));
    const seen = new Set<string>();
    byPartition.forEach((content, p) => {
      const vals = content.records.map((r) => text(r.value));
      const indices = vals.map((v) => Number(v.slice('order-'.length)));
      expect(indices, `partition ${p} is in send order`).to.deep.equal([...indices].sort((a, b) => a - b));
      for (const r of content.records) {
        const v = text(r.value);
        expect(seen.has(v), `${v} stored once`).to.equal(false);
        seen.add(v);
        if (r.key !== null) expect(murmur2Partition(r.key, 6), `key ${text(r.key)}`).to.equal(p);
      }
    });
    expect(seen.size).to.equal(600);
    results.forEach((r, i) => {
      const stored = byPartition[r.partition]!.records.find((x) => x.offset === r.offset);
      expect(text(stored?.value ?? null), `record ${i} at ${r.partition}@${r.offset}`).to.equal(sent[i]!.value);
    });
    const keyless = results.filter((_, i) => sent[i]!.key === null).map((r) => r.partition);
    expect(new Set(keyless).size, 'sticky partitioning still spreads keyless records').to.be.greaterThan(1);
  });

  for (const [name, codec] of [['gzip', CompressionType.Gzip], ['lz4', CompressionType.Lz4]] as const) {
    it(`stores ${name} batches that read back whole`, async () => {
      const topic = `compressed-${name}`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 3 }] });
      const producer = new Producer(client, { compression: name, lingerMs: 20 });
      const values = Array.from({ length: 500 }, (_, i) => `${name} record ${i} `.repeat(1 + (i % 5)));
      await Promise.all([0, 100, 200, 300, 400].map((at) => producer.send({ topic, messages: values.slice(at, at + 100).map((value) => ({ value, headers: { at: String(at) } })) })));
      await producer.close();
      const content = await read(topic, 0);
      expect(content.records.map((r) => text(r.value))).to.deep.equal(values);
      expect(content.batches.length).to.be.greaterThan(0);
      for (const b of content.batches) expect(readBatchHeader(b).attributes & COMPRESSION_CODEC_MASK).to.equal(codec);
    });
  }

  it('splits batches a topic with a small max.message.bytes refuses, delivering every record once, in order, keys and headers intact', async () => {
    await admin.createTopics({ topics: [{ topic: 'tight', numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2', 'max.message.bytes': '2048' } }] });
    const producer = new Producer(client, { lingerMs: 20 }); // default batchBytes: far above the topic's limit
    const sent = Array.from({ length: 400 }, (_, i) => ({ key: `k${i % 7}`, value: `tight-${i}-${'v'.repeat(60 + (i % 40))}`, headers: { n: String(i) } }));
    const results = (await Promise.all(Array.from({ length: 8 }, (_, c) => producer.send({ topic: 'tight', messages: sent.slice(c * 50, c * 50 + 50).map((m) => ({ ...m, partition: 0 })) })))).flat();
    await producer.close();
    expect(results.map((r) => r.offset)).to.deep.equal(sent.map((_, i) => i));
    const content = await read('tight', 0);
    expect(content.records.map((r) => text(r.value))).to.deep.equal(sent.map((m) => m.value));
    expect(content.records.map((r) => text(r.key))).to.deep.equal(sent.map((m) => m.key));
    expect(content.records.map((r) => r.headers.map((h) => `${h.key}=${h.value ? Buffer.from(h.value).toString() : ""}`).join())).to.deep.equal(sent.map((m) => `n=${m.headers.n}`));
    expect(content.batches.length).to.be.greaterThan(20);
    for (const b of content.batches) expect(b.length).to.be.at.most(2048);
  });

  it('splits refused compressed batches too (the limit is on the compressed bytes)', async () => {
    await admin.createTopics({ topics: [{ topic: 'tight-gzip', numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2', 'max.message.bytes': '4096' } }] });
    const producer = new Producer(client, { lingerMs: 20, compression: 'gzip' });
    // Random hex barely compresses: a default-sized batch of them is far above the limit even gzipped.
    const sent = Array.from({ length: 300 }, (_, i) => `${i}:${randomBytes(60).toString('hex')}`);
    const results = (await Promise.all([0, 100, 200].map((at) => producer.send({ topic: 'tight-gzip', messages: sent.slice(at, at + 100).map((value) => ({ value, partition: 0 })) })))).flat();
    await producer.close();
    expect(results.map((r) => r.offset)).to.deep.equal(sent.map((_, i) => i));
    const content = await read('tight-gzip', 0);
    expect(content.records.map((r) => text(r.value))).to.deep.equal(sent);
    expect(content.batches.length).to.be.greaterThan(10);
    for (const b of content.batches) {
      expect(b.length).to.be.at.most(4096);
      expect(readBatchHeader(b).attributes & COMPRESSION_CODEC_MASK).to.equal(CompressionType.Gzip);
    }
  });

  it('writes each record once when produce answers are dropped after the append (retries are duplicates)', async () => {
    await admin.createTopics({ topics: [{ topic: 'dropped', numPartitions: 2, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } }] });
    let produceAnswers = 0;
    let dropped = 0;
    const dropEveryFourth = (): boolean => {
      produceAnswers++;
      if (produceAnswers % 4 !== 2 || dropped >= 6) return false;
      dropped++;
      return true;
    };
    const factory: WebSocketFactory = (url) => new AnswerDroppingSocket(nodeWebSocketFactory(url), dropEveryFourth);
    const lossy = new Client({ bootstrap: cluster.brokerUrls, webSocketFactory: factory, requestTimeoutMs: 1000 });
    try {
      const producer = new Producer(lossy, { lingerMs: 1, ackTimeoutMs: 500 });
      const expected: string[][] = [[], []];
      const results: RecordMetadata[] = [];
      // Waves of concurrent sends, so there are many produce requests (and answers to drop).
      for (let wave = 0; wave < 25; wave++) {
        const sends: Array<Promise<RecordMetadata[]>> = [];
        for (let j = 0; j < 8; j++) {
          const i = wave * 8 + j;
          const partition = i % 2;
          expected[partition]!.push(`d-${i}`);
          sends.push(producer.send({ topic: 'dropped', messages: [{ value: `d-${i}`, partition }] }));
        }
        results.push(...(await Promise.all(sends)).flat());
      }
      await producer.close();
      expect(dropped, 'answers were dropped').to.be.greaterThan(2);
      for (const p of [0, 1]) {
        const content = await read('dropped', p);
        expect(content.records.map((r) => text(r.value)), `partition ${p}: once each, in order`).to.deep.equal(expected[p]);
        expect(results.filter((r) => r.partition === p).map((r) => r.offset)).to.deep.equal(content.records.map((r) => r.offset));
      }
    } finally {
      lossy.close();
    }
  });

  it('loses, duplicates and reorders no acknowledged record when the partition leader is SIGKILLed mid-stream', async () => {
    await admin.createTopics({ topics: [{ topic: 'failover', numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } }] });
    const producer = new Producer(client, { lingerMs: 1, batchBytes: 1024 });
    const acked: number[] = [];
    const failed: unknown[] = [];
    let next = 0;
    let stop = false;
    /** One writer keeps several sends in flight, in order. */
    const loop = (async () => {
      const inFlight: Array<Promise<void>> = [];
      while (!stop && next < 5000) {
        const n = next++;
        inFlight.push(producer.send({ topic: 'failover', messages: [{ value: `f-${n}` }] }).then(() => { acked.push(n); }, (err: unknown) => { failed.push(err); }));
        if (inFlight.length >= 20) await inFlight.shift();
      }
      await Promise.all(inFlight);
    })();
    await waitFor('some acknowledged records', () => acked.length >= 200, { timeoutMs: 60_000 });
    const leader = (await admin.describeTopics({ topics: ['failover'] }))[0]!.partitions[0]!.leader;
    await cluster.node(leader).kill('SIGKILL');
    const ackedAtKill = acked.length;
    await waitFor('records acknowledged by the new leader', () => acked.length >= ackedAtKill + 300, { timeoutMs: 90_000 });
    stop = true;
    await loop;
    await producer.close();
    expect(failed.filter((e) => !isSluiceError(e)), 'only typed errors').to.deep.equal([]);

    const newLeader = (await admin.describeTopics({ topics: ['failover'] }))[0]!.partitions[0]!.leader;
    expect(newLeader).to.not.equal(leader);
    const stored = (await read('failover', 0)).records.map((r) => Number(text(r.value).slice(2)));
    expect(new Set(stored).size, 'no record stored twice').to.equal(stored.length);
    expect(stored, 'stored in send order').to.deep.equal([...stored].sort((a, b) => a - b));
    const storedSet = new Set(stored);
    expect(acked.filter((n) => !storedSet.has(n)), 'every acknowledged record is stored').to.deep.equal([]);
    cluster.node(leader).start();
  });
});
