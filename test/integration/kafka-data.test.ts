// The Kafka listener's data plane on a real 3-node cluster, through the raw
// Kafka client: Produce with acks 0/1/all and an idempotent duplicate, Fetch
// long poll and min bytes, offsets out of range, ListOffsets by each kind,
// OffsetForLeaderEpoch, every codec produced through one protocol and read
// through the other, compression.type recompression, the refusals (unknown
// topic, a transactional batch outside any transaction, unknown topic id),
// and a KafkaJS smoke test.
// Waits are on conditions with bounds; no durations are asserted.

import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { startBrokerCluster, connect, createTopic, readPartition } from './broker-kit.js';
import { waitFor, type ProcessCluster } from './harness.js';
import { RawKafkaClient } from '../protocol/kafka/raw-client.js';
import { produce } from '../../src/protocol/kafka/apis/produce/schema.js';
import { fetch } from '../../src/protocol/kafka/apis/fetch/schema.js';
import { listOffsets } from '../../src/protocol/kafka/apis/list-offsets/schema.js';
import { offsetForLeaderEpoch } from '../../src/protocol/kafka/apis/offset-for-leader-epoch/schema.js';
import { metadata } from '../../src/protocol/kafka/apis/metadata/schema.js';
import type { Struct } from '../../src/protocol/kafka/message.js';
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import { Client } from '../../src/client/client.js';
import { Producer } from '../../src/client/producer.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { decodeFetchedRecords } from '../../src/client/records.js';
import { CompressionType, COMPRESSION_CODEC_MASK, batchSizeAt } from '../../src/record/batch-header.js';
import { decodeRecordBatches, encodeRecordBatch } from '../../src/record/record-batch.js';
import { Errors } from '../../src/util/errors.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { asBuffer } from '../../src/util/node-bytes.js';

const CODECS = [['none', CompressionType.None], ['gzip', CompressionType.Gzip], ['snappy', CompressionType.Snappy], ['lz4', CompressionType.Lz4], ['zstd', CompressionType.Zstd]] as const;
const TS = 1_700_000_000_000;

const batchOf = (values: readonly string[], opts: { compression?: CompressionType; producerId?: bigint; baseSequence?: number; t0?: number; transactional?: boolean } = {}): Buffer => asBuffer(encodeRecordBatch({
  records: values.map((v, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(v), timestamp: (opts.t0 ?? TS) + i })),
  compression: opts.compression,
  ...(opts.transactional ? { isTransactional: true } : {}),
  ...(opts.producerId !== undefined ? { producerId: opts.producerId, producerEpoch: 0, baseSequence: opts.baseSequence ?? 0 } : {}),
}));

const first = (x: unknown): Struct => (x as Struct[])[0]!;
const onlyPartition = (res: Struct, topics = 'responses', parts = 'partitionResponses'): Struct => first(first(res[topics])[parts]);

describe('Kafka listener: Produce, Fetch, ListOffsets, OffsetForLeaderEpoch (real 3-node cluster)', function () {
  this.timeout(120_000);
  let cluster: ProcessCluster;
  let conn: BrokerConnection;
  const clients: RawKafkaClient[] = [];

  before(async () => {
    cluster = await startBrokerCluster(3, [], { kafka: true });
    conn = await connect(cluster.brokerUrls[0]!);
  });
  after(async () => {
    for (const c of clients.splice(0)) c.close();
    conn?.close();
    await cluster?.cleanup();
  });

  /** A raw Kafka client on the leader of `topic`-0 (and the leader's epoch). */
  async function leaderOf(topic: string): Promise<{ c: RawKafkaClient; epoch: number; leader: number }> {
    const p = (await conn.metadata([topic])).topics[0]!.partitions.find((x) => x.partition === 0)!;
    const node = cluster.nodes.find((n) => n.id === p.leader)!;
    const [host, port] = node.kafkaAddress.split(':');
    const c = await RawKafkaClient.connect(host!, Number(port));
    clients.push(c);
    return { c, epoch: p.leaderEpoch, leader: p.leader };
  }

  /** Every record of `topic`-0 read as a consumer through the Sluice protocol, from its leader. */
  async function readViaSluice(topic: string): Promise<string[]> {
    const p = (await conn.metadata([topic])).topics[0]!.partitions.find((x) => x.partition === 0)!;
    const leaderConn = await connect(cluster.nodes.find((n) => n.id === p.leader)!.brokerUrl);
    try {
      return (await readPartition(leaderConn, topic, 0)).records.map((r) => r.value!.toString());
    } finally {
      leaderConn.close();
    }
  }

  const produceReq = (topic: string, records: Buffer, acks = -1, transactionalId: string | null = null): Struct => ({
    transactionalId, acks, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
  });
  const fetchReq = (topic: string, fetchOffset: number, o: { maxWaitMs?: number; minBytes?: number; currentLeaderEpoch?: number } = {}): Struct => ({
    replicaId: -1, maxWaitMs: o.maxWaitMs ?? 0, minBytes: o.minBytes ?? 1, maxBytes: 10_000_000, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: o.currentLeaderEpoch ?? -1, fetchOffset, partitionMaxBytes: 1_000_000 }] }],
    forgottenTopicsData: [], rackId: '',
  });
  const listReq = (topic: string, timestamp: number): Struct => ({ replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp }] }] });

  it('produces with acks all, 1 and 0 (no answer), at v3 and v9-11, and reads it all back', async () => {
    await createTopic(conn, 'k-acks', 1, 3);
    const { c } = await leaderOf('k-acks');
    const all = onlyPartition(await c.request(produce, 9, produceReq('k-acks', batchOf(['a0', 'a1']), -1)));
    expect([all.errorCode, all.baseOffset, all.logStartOffset]).to.deep.equal([0, 0, 0]);
    const one = onlyPartition(await c.request(produce, 3, produceReq('k-acks', batchOf(['b0']), 1)));
    expect([one.errorCode, one.baseOffset]).to.deep.equal([0, 2]);
    c.send(produce, 11, produceReq('k-acks', batchOf(['c0']), 0));
    // The acks=0 request has no answer; the next request's answer comes in order after it.
    const after = onlyPartition(await c.request(produce, 10, produceReq('k-acks', batchOf(['d0']), 1)));
    expect([after.errorCode, after.baseOffset]).to.deep.equal([0, 4]);
    const values = await readViaSluice('k-acks');
    expect(values).to.deep.equal(['a0', 'a1', 'b0', 'c0', 'd0']);
  });

  it('answers an idempotent retry with its first offsets and a sequence gap with OUT_OF_ORDER_SEQUENCE_NUMBER', async () => {
    await createTopic(conn, 'k-idem', 1, 3);
    const { c } = await leaderOf('k-idem');
    const pid = 777_001n;
    const batch = batchOf(['x0', 'x1'], { producerId: pid, baseSequence: 0 });
    const firstTry = onlyPartition(await c.request(produce, 9, produceReq('k-idem', Buffer.from(batch))));
    const retry = onlyPartition(await c.request(produce, 9, produceReq('k-idem', Buffer.from(batch))));
    expect([firstTry.errorCode, firstTry.baseOffset]).to.deep.equal([0, 0]);
    expect([retry.errorCode, retry.baseOffset]).to.deep.equal([0, 0]);
    const gap = onlyPartition(await c.request(produce, 9, produceReq('k-idem', batchOf(['x5'], { producerId: pid, baseSequence: 5 }))));
    expect(gap.errorCode).to.equal(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code);
    // A retried batch and a new one in one partition's records: one base offset cannot answer both.
    const mixed = Buffer.concat([Buffer.from(batch), batchOf(['x2'], { producerId: pid, baseSequence: 2 })]);
    expect(onlyPartition(await c.request(produce, 9, produceReq('k-idem', mixed))).errorCode).to.equal(Errors.DUPLICATE_SEQUENCE_NUMBER.code);
    expect(await readViaSluice('k-idem')).to.deep.equal(['x0', 'x1']);
  });

  it('refuses per partition: unknown topic, a transactional batch outside a transaction, null records, bad acks; and loses nothing', async () => {
    await createTopic(conn, 'k-refuse', 1, 3);
    const { c } = await leaderOf('k-refuse');
    expect(onlyPartition(await c.request(produce, 9, produceReq('k-no-such-topic', batchOf(['u'])))).errorCode).to.equal(Errors.UNKNOWN_TOPIC_OR_PARTITION.code);
    // A transactional batch of an id that never began a transaction: the leader asks its coordinator (KIP-890),
    // which knows no such producer; the batch is not written. (The transaction flow: kafka-transactions.test.ts.)
    const outside = batchOf(['t'], { producerId: 777_002n, baseSequence: 0, transactional: true });
    const txn = onlyPartition(await c.request(produce, 9, produceReq('k-refuse', outside, -1, 'my-txn')));
    expect(txn.errorCode, String(txn.errorMessage)).to.not.equal(0);
    const nul = await c.request(produce, 9, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 'k-refuse', partitionData: [{ index: 0, records: null }] }] });
    expect(onlyPartition(nul).errorCode).to.equal(Errors.CORRUPT_MESSAGE.code);
    expect(onlyPartition(await c.request(produce, 9, produceReq('k-refuse', batchOf(['q']), 2))).errorCode).to.equal(Errors.INVALID_REQUIRED_ACKS.code);
    const corrupt = batchOf(['z']);
    corrupt.writeUInt8(corrupt.readUInt8(corrupt.length - 1) ^ 0xff, corrupt.length - 1);
    expect(onlyPartition(await c.request(produce, 9, produceReq('k-refuse', corrupt))).errorCode).to.equal(Errors.CORRUPT_MESSAGE.code);
    expect(await readViaSluice('k-refuse')).to.deep.equal([]);
    await createTopic(conn, 'k-small', 1, 3, { 'max.message.bytes': '2000' });
    const { c: small } = await leaderOf('k-small');
    expect(onlyPartition(await small.request(produce, 9, produceReq('k-small', batchOf(['y'.repeat(5000)])))).errorCode).to.equal(Errors.MESSAGE_TOO_LARGE.code);
    expect(await readViaSluice('k-small')).to.deep.equal([]);
  });

  it('answers a produce to a follower NOT_LEADER_OR_FOLLOWER with the current leader and its endpoint (v10+)', async () => {
    await createTopic(conn, 'k-hint', 1, 3);
    const { leader } = await leaderOf('k-hint');
    const follower = cluster.nodes.find((n) => n.id !== leader)!;
    const [host, port] = follower.kafkaAddress.split(':');
    const c = await RawKafkaClient.connect(host!, Number(port));
    clients.push(c);
    const res = await c.request(produce, 10, produceReq('k-hint', batchOf(['h'])));
    const p = onlyPartition(res);
    expect(p.errorCode).to.equal(Errors.NOT_LEADER_OR_FOLLOWER.code);
    expect((p.currentLeader as Struct).leaderId).to.equal(leader);
    const leaderNode = cluster.nodes.find((n) => n.id === leader)!;
    expect((res.nodeEndpoints as Struct[]).map((e) => `${String(e.host)}:${String(e.port)}`)).to.deep.equal([leaderNode.kafkaAddress]);
  });

  it('long-polls a fetch until a record arrives; honours min bytes up to max wait; OFFSET_OUT_OF_RANGE; epochs', async () => {
    await createTopic(conn, 'k-fetch', 1, 3);
    const { c, epoch } = await leaderOf('k-fetch');
    const { c: c2 } = await leaderOf('k-fetch');
    const waiting = c.request(fetch, 12, fetchReq('k-fetch', 0, { maxWaitMs: 30_000 }));
    await c2.request(produce, 9, produceReq('k-fetch', batchOf(['late'])));
    const got = first(first((await waiting).responses).partitions);
    expect(got.errorCode).to.equal(0);
    expect(decodeFetchedRecords(got.records as Buffer, 0).map((r) => r.value!.toString())).to.deep.equal(['late']);
    expect([got.highWatermark, got.lastStableOffset, got.preferredReadReplica]).to.deep.equal([1, 1, -1]);
    // min bytes above what the log holds: answered at max wait with what there is.
    const some = first(first((await c.request(fetch, 11, fetchReq('k-fetch', 0, { maxWaitMs: 300, minBytes: 10_000_000 }))).responses).partitions);
    expect(some.errorCode).to.equal(0);
    expect((some.records as Buffer).length).to.be.greaterThan(0);
    // min bytes 0 at the log end: answered at once with nothing (a long poll would outlast the raw client's 15 s patience).
    const empty = first(first((await c.request(fetch, 12, fetchReq('k-fetch', 1, { maxWaitMs: 60_000, minBytes: 0 }))).responses).partitions);
    expect([empty.errorCode, (empty.records as Buffer).length]).to.deep.equal([0, 0]);
    const oor = first(first((await c.request(fetch, 4, fetchReq('k-fetch', 1_000_000))).responses).partitions);
    expect(oor.errorCode).to.equal(Errors.OFFSET_OUT_OF_RANGE.code);
    const unknownEpoch = first(first((await c.request(fetch, 12, fetchReq('k-fetch', 0, { currentLeaderEpoch: epoch + 5 }))).responses).partitions);
    expect(unknownEpoch.errorCode).to.equal(Errors.UNKNOWN_LEADER_EPOCH.code);
    const session = await c.request(fetch, 12, { ...fetchReq('k-fetch', 0), sessionId: 12345, sessionEpoch: 3 });
    expect(session.errorCode).to.equal(Errors.FETCH_SESSION_ID_NOT_FOUND.code);
    const opened = await c.request(fetch, 12, { ...fetchReq('k-fetch', 0), sessionEpoch: 0 });
    expect([opened.errorCode, opened.sessionId]).to.deep.equal([0, 0]);
  });

  it('fetches by topic id at v13-17 and answers an unknown id UNKNOWN_TOPIC_ID', async () => {
    await createTopic(conn, 'k-ids', 1, 3);
    const { c } = await leaderOf('k-ids');
    await c.request(produce, 9, produceReq('k-ids', batchOf(['by-id'])));
    const md = await c.request(metadata, 12, { topics: [{ topicId: '0'.repeat(32), name: 'k-ids' }], allowAutoTopicCreation: false });
    const topicId = String(first(md.topics).topicId);
    for (const v of [13, 15, 17]) {
      const req = fetchReq('k-ids', 0);
      (req.topics as Struct[])[0]!.topicId = topicId;
      const t = first((await c.request(fetch, v, req)).responses);
      expect(t.topicId, `v${v}`).to.equal(topicId);
      expect(decodeFetchedRecords(first(t.partitions).records as Buffer, 0).map((r) => r.value!.toString())).to.deep.equal(['by-id']);
    }
    const bad = fetchReq('k-ids', 0);
    (bad.topics as Struct[])[0]!.topicId = 'ab'.repeat(16);
    expect(first(first((await c.request(fetch, 13, bad)).responses).partitions).errorCode).to.equal(Errors.UNKNOWN_TOPIC_ID.code);
  });

  it('lists offsets: earliest, latest, by timestamp, max timestamp, earliest local, latest tiered', async () => {
    await createTopic(conn, 'k-list', 1, 3);
    const { c, epoch } = await leaderOf('k-list');
    await c.request(produce, 9, produceReq('k-list', batchOf(['t0', 't1', 't2'], { t0: TS })));
    await c.request(produce, 9, produceReq('k-list', batchOf(['u0', 'u1'], { t0: TS - 1000 })));
    const ask = async (v: number, ts: number): Promise<[number, number, number]> => {
      const p = onlyPartition(await c.request(listOffsets, v, listReq('k-list', ts)), 'topics', 'partitions');
      return [p.errorCode as number, p.offset as number, p.timestamp as number];
    };
    expect(await ask(1, -2)).to.deep.equal([0, 0, -1]);
    expect(await ask(6, -1)).to.deep.equal([0, 5, -1]);
    expect(await ask(4, TS + 1), 'the first record at or after the time, with its own timestamp').to.deep.equal([0, 1, TS + 1]);
    expect(await ask(5, TS - 1500)).to.deep.equal([0, 0, TS]);
    expect(await ask(7, -3)).to.deep.equal([0, 2, TS + 2]);
    expect(await ask(8, -4)).to.deep.equal([0, 0, -1]);
    expect(await ask(9, -5)).to.deep.equal([0, -1, -1]);
    expect(await ask(10, TS + 10_000)).to.deep.equal([0, -1, -1]);
    const p = onlyPartition(await c.request(listOffsets, 4, listReq('k-list', -1)), 'topics', 'partitions');
    expect(p.leaderEpoch).to.equal(epoch);
    expect(onlyPartition(await c.request(listOffsets, 5, listReq('k-nope', -1)), 'topics', 'partitions').errorCode).to.equal(Errors.UNKNOWN_TOPIC_OR_PARTITION.code);
  });

  it('answers OffsetForLeaderEpoch v2-4 from the leader epoch cache, with epoch checks', async () => {
    await createTopic(conn, 'k-epoch', 1, 3);
    const { c, epoch } = await leaderOf('k-epoch');
    await c.request(produce, 9, produceReq('k-epoch', batchOf(['e0', 'e1'])));
    for (const v of [2, 3, 4]) {
      const res = await c.request(offsetForLeaderEpoch, v, { replicaId: -2, topics: [{ topic: 'k-epoch', partitions: [{ partition: 0, currentLeaderEpoch: epoch, leaderEpoch: epoch }] }] });
      const p = first(first(res.topics).partitions);
      expect([p.errorCode, p.leaderEpoch, p.endOffset], `v${v}`).to.deep.equal([0, epoch, 2]);
    }
    const future = await c.request(offsetForLeaderEpoch, 4, { topics: [{ topic: 'k-epoch', partitions: [{ partition: 0, currentLeaderEpoch: epoch + 3, leaderEpoch: epoch }] }] });
    expect(first(first(future.topics).partitions).errorCode).to.equal(Errors.UNKNOWN_LEADER_EPOCH.code);
  });

  it('stores every codec produced through Kafka and reads it back through the Sluice client, and the reverse', async () => {
    await createTopic(conn, 'k-codecs', 1, 3);
    const { c } = await leaderOf('k-codecs');
    for (const [name, type] of CODECS) {
      const p = onlyPartition(await c.request(produce, 9, produceReq('k-codecs', batchOf([`kafka-${name}-0`, `kafka-${name}-1`], { compression: type }))));
      expect(p.errorCode, name).to.equal(0);
    }
    const viaSluice = await readViaSluice('k-codecs');
    expect(viaSluice).to.deep.equal(CODECS.flatMap(([name]) => [`kafka-${name}-0`, `kafka-${name}-1`]));

    await createTopic(conn, 'k-codecs-back', 1, 3);
    const client = new Client({ bootstrap: cluster.brokerUrls, webSocketFactory: nodeWebSocketFactory, requestTimeoutMs: 10_000 });
    try {
      for (const [name] of CODECS) {
        const producer = new Producer(client, { compression: name });
        await producer.send({ topic: 'k-codecs-back', messages: [{ value: `sluice-${name}`, partition: 0 }] });
        await producer.close();
      }
    } finally {
      await client.close();
    }
    const { c: c2 } = await leaderOf('k-codecs-back');
    const got = first(first((await c2.request(fetch, 12, fetchReq('k-codecs-back', 0))).responses).partitions);
    const batches = decodeRecordBatches(Buffer.from(got.records as Buffer));
    expect(batches.map((b) => b.header.attributes & COMPRESSION_CODEC_MASK)).to.deep.equal(CODECS.map(([, t]) => t));
    expect(batches.flatMap((b) => b.records.map((r) => r.value!.toString()))).to.deep.equal(CODECS.map(([name]) => `sluice-${name}`));
  });

  it('recompresses batches to the topic\'s compression.type, keeping records and offsets', async () => {
    await createTopic(conn, 'k-recompress', 1, 3, { 'compression.type': 'zstd' });
    const { c } = await leaderOf('k-recompress');
    const gz = onlyPartition(await c.request(produce, 9, produceReq('k-recompress', batchOf(['g0', 'g1', 'g2'], { compression: CompressionType.Gzip }))));
    const zs = onlyPartition(await c.request(produce, 9, produceReq('k-recompress', batchOf(['z0'], { compression: CompressionType.Zstd }))));
    expect([gz.baseOffset, zs.baseOffset]).to.deep.equal([0, 3]);
    const got = first(first((await c.request(fetch, 12, fetchReq('k-recompress', 0))).responses).partitions);
    const buf = Buffer.from(got.records as Buffer);
    const batches = decodeRecordBatches(buf);
    expect(batches.map((b) => b.header.attributes & COMPRESSION_CODEC_MASK)).to.deep.equal([CompressionType.Zstd, CompressionType.Zstd]);
    expect(batches.flatMap((b) => b.records.map((r) => [r.offset, r.value!.toString(), r.timestamp]))).to.deep.equal([
      [0, 'g0', TS], [1, 'g1', TS + 1], [2, 'g2', TS + 2], [3, 'z0', TS],
    ]);
    expect(batchSizeAt(buf, 0)).to.be.greaterThan(0);
    const bad = await conn.admin(ApiKey.CreateTopics, { topics: [{ name: 'k-brotli', numPartitions: 1, replicationFactor: 1, configs: { 'compression.type': 'brotli' } }] });
    expect(bad.topics[0]!.errorCode).to.equal(Errors.INVALID_CONFIG.code);
  });

  it('KafkaJS 2.2.4 produces (gzip too) and reads the end offsets with admin.fetchTopicOffsets', async () => {
    await createTopic(conn, 'k-kafkajs', 1, 3);
    const kafka = new Kafka({ clientId: 'kafkajs-smoke', brokers: [cluster.nodes[0]!.kafkaAddress], logLevel: logLevel.NOTHING, retry: { retries: 5 } });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    const admin = kafka.admin();
    await producer.connect();
    await admin.connect();
    try {
      const sent = await producer.send({ topic: 'k-kafkajs', acks: -1, messages: [{ key: 'a', value: 'one', partition: 0 }, { key: 'b', value: 'two', partition: 0 }] });
      expect(sent[0]!.errorCode).to.equal(0);
      await producer.send({ topic: 'k-kafkajs', compression: 1, messages: [{ value: 'three', partition: 0 }] });
      const offsets = await waitFor('KafkaJS end offset 3', async () => {
        const o = await admin.fetchTopicOffsets('k-kafkajs');
        return o[0]?.high === '3' ? o : undefined;
      }, { timeoutMs: 10_000, intervalMs: 100 });
      expect(offsets[0]!.low).to.equal('0');
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
    expect(await readViaSluice('k-kafkajs')).to.deep.equal(['one', 'two', 'three']);
  });
});
