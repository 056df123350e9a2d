// BrokerConnection against a real WsServer on loopback whose handler plays a
// small broker: it parses every request with the broker's own validators
// (src/protocol/apis/*), so a body the client builds wrongly fails here as
// INVALID_REQUEST. End-to-end tests against real brokers live elsewhere.

import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, resolve as resolvePath } from 'node:path';
import { WsServer } from '../../src/net/ws-server.js';
import { ClientLink } from '../../src/net/client-link.js';
import type { RequestEnvelope } from '../../src/protocol/envelope.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { parseFetchRequest } from '../../src/protocol/apis/fetch.js';
import { parseMetadataRequest } from '../../src/protocol/apis/metadata.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, parseListOffsetsRequest, parseOffsetForLeaderEpochRequest } from '../../src/protocol/apis/offsets.js';
import { parseProduceRequest } from '../../src/protocol/apis/produce.js';
import type { Body } from '../../src/protocol/body.js';
import { lastOffsetOf, recordCountOf, stampBatch, validateBatch } from '../../src/record/batch-header.js';
import { BrokerConnection, type RequestLink } from '../../src/client/broker-connection.js';
import { CLIENT_DEFAULTS } from '../../src/client/defaults.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { decodeFetchedRecords, encodeMessages } from '../../src/client/records.js';
import { Errors, SluiceError, isSluiceError } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';
import { ManualScheduler } from '../../src/util/clock.js';

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const T0 = 1_700_000_000_000;
const TOPIC = 'orders';
const PARTITIONS = 2;

/** A one-node "broker" with in-memory partitions: just enough to answer like the real one. */
class FakeBroker {
  readonly received: RequestEnvelope[] = [];
  /** Produce values in arrival order (first record of each batch), across acks modes. */
  readonly produceOrder: string[] = [];
  /** Answers for an API key that replace the normal handling (a raw body, an error to throw, or 'hang'). */
  readonly override = new Map<number, Body | SluiceError | 'hang'>();
  /** Produce requests to this topic wait until release() is called. */
  readonly held: Array<() => void> = [];
  private readonly logs = new Map<string, Buffer[]>();
  url = '';

  handle(req: RequestEnvelope): unknown {
    this.received.push(req);
    const over = this.override.get(req.apiKey);
    if (over === 'hang') return new Promise(() => {});
    if (over instanceof SluiceError) throw over;
    if (over !== undefined) return over;
    const body = req.body as Body;
    switch (req.apiKey) {
      case ApiKey.ApiVersions:
        return { errorCode: 0, apiKeys: [ApiKey.Produce, ApiKey.Fetch, ApiKey.Metadata].map((apiKey) => ({ apiKey, minVersion: 0, maxVersion: 0 })) };
      case ApiKey.Metadata: return this.metadata(body);
      case ApiKey.Produce: return this.produce(body);
      case ApiKey.Fetch: return this.fetch(body);
      case ApiKey.ListOffsets: return this.listOffsets(body);
      case ApiKey.OffsetForLeaderEpoch: {
        const r = parseOffsetForLeaderEpochRequest(body);
        return { topics: r.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode: 0, errorMessage: null, leaderEpoch: p.leaderEpoch - 1, endOffset: 42 })) })) };
      }
      case ApiKey.DescribeCluster:
        return {
          errorCode: 0, clusterId: 'c1', controllerId: 3, metadataOffset: 7,
          brokers: [{ nodeId: 1, fenced: false, inControlledShutdown: false, rack: null, endpoints: [{ name: 'broker', url: this.url }] }],
        };
      case ApiKey.CreateTopics: {
        const topics = body.topics as Array<{ name: string; numPartitions: number; replicationFactor: number }>;
        return { topics: topics.map((t) => ({ name: t.name, topicId: `id-${t.name}`, numPartitions: t.numPartitions, replicationFactor: t.replicationFactor, errorCode: 0, errorMessage: null })) };
      }
      default:
        throw new SluiceError(Errors.UNSUPPORTED_VERSION, `no api ${req.apiKey}`);
    }
  }

  private metadata(body: Body): unknown {
    const names = parseMetadataRequest(body).topics ?? [TOPIC];
    return {
      clusterId: 'c1', controllerId: 3, brokers: [{ nodeId: 1, url: this.url, rack: null }],
      topics: names.map((name) => name === TOPIC
        ? { errorCode: 0, errorMessage: null, name, topicId: 'tid', partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, errorCode: 0, leader: 1, leaderEpoch: 4, replicas: [1], isr: [1], offlineReplicas: [] })) }
        : { errorCode: Errors.UNKNOWN_TOPIC_OR_PARTITION.code, errorMessage: 'no such topic', name, topicId: null, partitions: [] }),
    };
  }

  private log(topic: string, partition: number): Buffer[] | undefined {
    if (topic !== TOPIC && topic !== 'slow') return undefined;
    if (partition < 0 || partition >= PARTITIONS) return undefined;
    const key = `${topic}/${partition}`;
    if (!this.logs.has(key)) this.logs.set(key, []);
    return this.logs.get(key)!;
  }

  private endOffset(log: Buffer[]): number {
    const last = log.at(-1);
    return last ? lastOffsetOf(last) + 1 : 0;
  }

  private produce(body: Body): unknown {
    const req = parseProduceRequest(body);
    const topics = req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => {
        const log = this.log(t.name, p.partition);
        if (!log) return { partition: p.partition, errorCode: Errors.UNKNOWN_TOPIC_OR_PARTITION.code, errorMessage: 'unknown', baseOffset: -1, logStartOffset: -1 };
        const batch = Buffer.from(p.records);
        validateBatch(batch);
        const baseOffset = this.endOffset(log);
        stampBatch(batch, 0, baseOffset, 4);
        log.push(batch);
        this.produceOrder.push(decodeFetchedRecords(batch, 0)[0]!.value!.toString());
        return { partition: p.partition, errorCode: 0, errorMessage: null, baseOffset, logStartOffset: 0 };
      }),
    }));
    if (req.acks === 0) return new Promise(() => {}); // a real broker sends nothing back
    if (req.topics.some((t) => t.name === 'slow')) return new Promise((resolve) => this.held.push(() => resolve({ topics })));
    return { topics };
  }

  private fetch(body: Body): unknown {
    const req = parseFetchRequest(body);
    return {
      errorCode: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          const log = this.log(t.name, p.partition) ?? [];
          // Whole batches, starting with the one that contains fetchOffset.
          const batches = log.filter((b) => lastOffsetOf(b) >= p.fetchOffset);
          return { partition: p.partition, errorCode: 0, errorMessage: null, highWatermark: this.endOffset(log), logStartOffset: 0, records: Buffer.concat(batches) };
        }),
      })),
    };
  }

  private listOffsets(body: Body): unknown {
    const req = parseListOffsetsRequest(body);
    return {
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          const log = this.log(t.name, p.partition) ?? [];
          const offset = p.timestamp === EARLIEST_TIMESTAMP ? 0 : this.endOffset(log);
          return { partition: p.partition, errorCode: 0, errorMessage: null, timestamp: -1, offset, leaderEpoch: 4 };
        }),
      })),
    };
  }
}

describe('client: BrokerConnection', () => {
  let server: WsServer;
  let broker: FakeBroker;
  let conn: BrokerConnection;

  async function start(opts: { requestTimeoutMs?: number; requestsInFlightMax?: number } = {}): Promise<void> {
    broker = new FakeBroker();
    server = new WsServer((req) => broker.handle(req), silentLogger);
    const addr = await server.listen({ host: '127.0.0.1', port: 0 });
    broker.url = `ws://127.0.0.1:${addr.port}`;
    conn = await BrokerConnection.connect(broker.url, { factory: nodeWebSocketFactory, clientId: 'test-client', ...opts });
  }

  afterEach(async () => {
    conn?.close();
    await server?.close();
  });

  function producePartition(partition: number, values: string[], acks: -1 | 0 | 1 = -1, topic = TOPIC) {
    const records = encodeMessages(values.map((value, i) => ({ key: `k${i}`, value, headers: { n: String(i) } })), { timestampMs: T0 });
    return conn.produce({ acks, timeoutMs: 1000, topics: [{ name: topic, partitions: [{ partition, records }] }] });
  }

  it('answers ApiVersions and Metadata with typed data; per-topic errors stay in the data', async () => {
    await start();
    const versions = await conn.apiVersions();
    expect(versions.apiKeys).to.deep.include({ apiKey: ApiKey.Fetch, minVersion: 0, maxVersion: 0 });
    expect(broker.received[0]!.clientId).to.equal('test-client');
    expect(broker.received[0]!.apiVersion).to.equal(0);

    const all = await conn.metadata(null);
    expect(all.controllerId).to.equal(3);
    expect(all.brokers).to.deep.equal([{ nodeId: 1, url: broker.url, rack: null }]);
    expect(all.topics.map((t) => t.name)).to.deep.equal([TOPIC]);
    expect(all.topics[0]!.partitions[1]).to.deep.equal({ partition: 1, errorCode: 0, leader: 1, leaderEpoch: 4, replicas: [1], isr: [1], offlineReplicas: [] });

    const some = await conn.metadata([TOPIC, 'nope']);
    expect(some.topics[1]).to.include({ name: 'nope', errorCode: Errors.UNKNOWN_TOPIC_OR_PARTITION.code, topicId: null });
  });

  it('produces batches and fetches them back, skipping records below the fetch offset', async () => {
    await start();
    const first = (await producePartition(0, ['a', 'b', 'c']))!;
    const second = (await producePartition(0, ['d', 'e']))!;
    expect(first.topics[0]!.partitions[0]).to.deep.equal({ partition: 0, errorCode: 0, errorMessage: null, baseOffset: 0, logStartOffset: 0 });
    expect(second.topics[0]!.partitions[0]!.baseOffset).to.equal(3);

    const res = await conn.fetch({ maxWaitMs: 0, topics: [{ name: TOPIC, partitions: [{ partition: 0, fetchOffset: 4 }] }] });
    const part = res.topics[0]!.partitions[0]!;
    expect(part).to.include({ partition: 0, errorCode: 0, highWatermark: 5, logStartOffset: 0 });
    expect(recordCountOf(Buffer.from(part.records))).to.equal(2); // the whole batch came back, from offset 3
    const records = decodeFetchedRecords(part.records, 4);
    expect(records).to.have.length(1);
    expect(records[0]).to.include({ offset: 4, timestamp: T0 });
    expect(records[0]!.key!.toString()).to.equal('k1');
    expect(records[0]!.value!.toString()).to.equal('e');
    expect(records[0]!.headers.map((h) => [h.key, h.value!.toString()])).to.deep.equal([['n', '1']]);

    const fromOne = await conn.fetch({ maxWaitMs: 0, topics: [{ name: TOPIC, partitions: [{ partition: 0, fetchOffset: 1 }] }] });
    const values = decodeFetchedRecords(fromOne.topics[0]!.partitions[0]!.records, 1).map((r) => `${r.offset}:${r.value!.toString()}`);
    expect(values).to.deep.equal(['1:b', '2:c', '3:d', '4:e']);
  });

  it('fills in fetch defaults explicitly (no undefined fields on the wire)', async () => {
    await start();
    await conn.fetch({ maxWaitMs: 5, topics: [{ name: TOPIC, partitions: [{ partition: 1, fetchOffset: 0 }] }] });
    const body = broker.received.at(-1)!.body as Body;
    expect(body).to.deep.equal({
      replicaId: -1, brokerEpoch: -1, maxWaitMs: 5, minBytes: CLIENT_DEFAULTS.fetchMinBytes, maxBytes: CLIENT_DEFAULTS.fetchMaxBytes,
      topics: [{ name: TOPIC, partitions: [{ partition: 1, fetchOffset: 0, currentLeaderEpoch: -1, partitionMaxBytes: CLIENT_DEFAULTS.partitionFetchBytesMax }] }],
    });
  });

  it('keeps per-partition produce errors in the returned data', async () => {
    await start();
    const res = (await producePartition(7, ['x']))!;
    expect(res.topics[0]!.partitions[0]).to.include({ partition: 7, errorCode: Errors.UNKNOWN_TOPIC_OR_PARTITION.code, baseOffset: -1 });
  });

  it('answers ListOffsets and OffsetForLeaderEpoch', async () => {
    await start();
    await producePartition(1, ['a', 'b']);
    const offsets = await conn.listOffsets({
      topics: [{ name: TOPIC, partitions: [{ partition: 1, timestamp: LATEST_TIMESTAMP }, { partition: 0, timestamp: EARLIEST_TIMESTAMP }] }],
    });
    expect(offsets.topics[0]!.partitions.map((p) => [p.partition, p.offset, p.leaderEpoch])).to.deep.equal([[1, 2, 4], [0, 0, 4]]);
    const epochs = await conn.offsetForLeaderEpoch({ replicaId: 2, topics: [{ name: TOPIC, partitions: [{ partition: 0, leaderEpoch: 5, currentLeaderEpoch: 5 }] }] });
    expect(epochs.topics[0]!.partitions[0]).to.deep.equal({ partition: 0, errorCode: 0, errorMessage: null, leaderEpoch: 4, endOffset: 42 });
    expect((broker.received.at(-1)!.body as Body).replicaId).to.equal(2);
  });

  it('sends acks=0 produce without waiting for an answer, in order with queued requests', async () => {
    await start({ requestsInFlightMax: 1 });
    expect(await producePartition(0, ['fire'], 0)).to.equal(null);
    await waitFor(() => broker.produceOrder.length === 1);

    // 'held' takes the only in-flight slot; 'queued' waits for it, and the
    // acks=0 frame must wait behind 'queued' rather than overtake it.
    const held = producePartition(0, ['held'], 1, 'slow');
    await waitFor(() => broker.held.length === 1);
    const queued = producePartition(1, ['queued'], 1);
    let oneWaySent = false;
    const oneWay = producePartition(1, ['after'], 0).then(() => (oneWaySent = true));
    await new Promise((r) => setImmediate(r));
    expect(oneWaySent).to.equal(false);
    broker.held.shift()!();
    await Promise.all([held, queued, oneWay]);
    await waitFor(() => broker.produceOrder.length === 4);
    expect(broker.produceOrder).to.deep.equal(['fire', 'held', 'queued', 'after']);
  });

  it('fails an acks=0 produce on a closed connection with NETWORK_EXCEPTION', async () => {
    await start();
    conn.close();
    const err = await producePartition(0, ['x'], 0).catch((e: unknown) => e);
    expect(isSluiceError(err, Errors.NETWORK_EXCEPTION)).to.equal(true);
  });

  it('throws a nonzero top-level errorCode as a typed SluiceError', async () => {
    await start();
    broker.override.set(ApiKey.ElectLeaders, { errorCode: Errors.NOT_CONTROLLER.code, errorMessage: 'NOT_CONTROLLER: controller moved', controllerId: 2 });
    const err = (await conn.admin(ApiKey.ElectLeaders, { partitions: null }).catch((e: unknown) => e)) as SluiceError;
    expect(isSluiceError(err, Errors.NOT_CONTROLLER)).to.equal(true);
    expect(err.retriable).to.equal(true);
    expect(err.message).to.equal('NOT_CONTROLLER: controller moved');
    expect(err.details).to.deep.equal({ controllerId: 2, api: 'ElectLeaders', url: broker.url });

    // The same through the server's own error path (a handler throwing).
    broker.override.set(ApiKey.DeleteTopics, new SluiceError(Errors.POLICY_VIOLATION, 'deletion disabled'));
    const thrown = (await conn.admin(ApiKey.DeleteTopics, { names: ['x'] }).catch((e: unknown) => e)) as SluiceError;
    expect(isSluiceError(thrown, Errors.POLICY_VIOLATION)).to.equal(true);
    expect(thrown.message).to.equal('POLICY_VIOLATION: deletion disabled');

    broker.override.set(ApiKey.Fetch, { errorCode: Errors.UNSUPPORTED_VERSION.code, errorMessage: null });
    const fetchErr = await conn.fetch({ maxWaitMs: 0, topics: [] }).catch((e: unknown) => e);
    expect(isSluiceError(fetchErr, Errors.UNSUPPORTED_VERSION)).to.equal(true);

    broker.override.set(ApiKey.Metadata, { errorCode: 9999, errorMessage: 'from the future' });
    const unknown = (await conn.metadata(null).catch((e: unknown) => e)) as SluiceError;
    expect(unknown).to.be.instanceOf(SluiceError);
    expect(unknown.code).to.equal(9999);
    expect(unknown.retriable).to.equal(false);
  });

  it('rejects a malformed answer with the field path, not a TypeError later', async () => {
    await start();
    broker.override.set(ApiKey.Fetch, { errorCode: 0, topics: [{ name: TOPIC, partitions: [{ partition: 0, errorCode: 0, errorMessage: null, highWatermark: 'x' }] }] });
    const err = (await conn.fetch({ maxWaitMs: 0, topics: [] }).catch((e: unknown) => e)) as SluiceError;
    expect(isSluiceError(err, Errors.UNKNOWN_SERVER_ERROR)).to.equal(true);
    expect(err.message).to.contain('topics[0].partitions[0].highWatermark must be an integer');
  });

  it('turns a missing answer into REQUEST_TIMED_OUT', async () => {
    await start({ requestTimeoutMs: 50 });
    broker.override.set(ApiKey.Metadata, 'hang');
    const err = (await conn.metadata(null).catch((e: unknown) => e)) as SluiceError;
    expect(isSluiceError(err, Errors.REQUEST_TIMED_OUT)).to.equal(true);
    expect(err.retriable).to.equal(true);
    broker.override.delete(ApiKey.Metadata);
    expect((await conn.metadata(null)).controllerId).to.equal(3); // the connection is still usable
  });

  it('passes admin requests and answers through, and describes the cluster', async () => {
    await start();
    const created = await conn.admin(ApiKey.CreateTopics, { topics: [{ name: 'new', numPartitions: 3, replicationFactor: 1, configs: { 'cleanup.policy': 'delete' } }] });
    expect(created.topics[0]).to.include({ name: 'new', topicId: 'id-new', numPartitions: 3, errorCode: 0 });
    const sent = broker.received.at(-1)!;
    expect(sent.apiKey).to.equal(ApiKey.CreateTopics);
    expect(sent.body).to.deep.equal({ topics: [{ name: 'new', numPartitions: 3, replicationFactor: 1, configs: { 'cleanup.policy': 'delete' } }] });

    broker.override.set(ApiKey.CreatePartitions, new SluiceError(Errors.INVALID_PARTITIONS, 'cannot shrink'));
    const err = await conn.admin(ApiKey.CreatePartitions, { topic: 'new', count: 1 }).catch((e: unknown) => e);
    expect(isSluiceError(err, Errors.INVALID_PARTITIONS)).to.equal(true);

    const cluster = await conn.describeCluster();
    expect(cluster).to.deep.equal({
      clusterId: 'c1', controllerId: 3, metadataOffset: 7,
      brokers: [{ nodeId: 1, fenced: false, inControlledShutdown: false, rack: null, endpoints: [{ name: 'broker', url: broker.url }] }],
    });
  });
});

describe('client: BrokerConnection timeouts', () => {
  /** Records what the connection asks of its link; answers with an empty map. */
  function stubLink(): RequestLink & { calls: Array<{ apiKey: number; timeoutMs: number | null }> } {
    const calls: Array<{ apiKey: number; timeoutMs: number | null }> = [];
    const empty = { topics: [], apiKeys: [] };
    return {
      url: 'ws://stub', isOpen: true, calls,
      request: <T>(apiKey: number, _v: number, _b: object, timeoutMs: number) => {
        calls.push({ apiKey, timeoutMs });
        return Promise.resolve(empty as T);
      },
      send: (apiKey: number) => {
        calls.push({ apiKey, timeoutMs: null });
        return Promise.resolve();
      },
      onClose: () => {},
      close: () => {},
    };
  }

  it('gives fetch and produce their broker-side wait plus requestTimeoutMs; acks=0 has no timeout', async () => {
    const link = stubLink();
    const conn = new BrokerConnection(link, { requestTimeoutMs: 1000 });
    await conn.fetch({ maxWaitMs: 5000, topics: [] });
    await conn.produce({ acks: -1, timeoutMs: 3000, topics: [] });
    await conn.produce({ acks: 0, timeoutMs: 3000, topics: [] });
    await conn.listOffsets({ topics: [] });
    expect(link.calls).to.deep.equal([
      { apiKey: ApiKey.Fetch, timeoutMs: 6000 },
      { apiKey: ApiKey.Produce, timeoutMs: 4000 },
      { apiKey: ApiKey.Produce, timeoutMs: null },
      { apiKey: ApiKey.ListOffsets, timeoutMs: 1000 },
    ]);
    expect(new BrokerConnection(stubLink()).url).to.equal('ws://stub');
  });
});

describe('client: portability of the connection core', () => {
  /** Bare module specifiers reachable from a compiled module through relative imports. */
  function externalImports(entry: string): Set<string> {
    const seen = new Set<string>();
    const external = new Set<string>();
    const pending = [entry];
    while (pending.length > 0) {
      const file = pending.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      const source = readFileSync(file, 'utf8');
      for (const m of source.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)) {
        const spec = m[1] ?? m[2]!;
        if (spec.startsWith('.')) pending.push(resolvePath(dirname(file), spec));
        else external.add(spec);
      }
    }
    return external;
  }

  it('broker-connection imports no Node-only module (the WebSocket is injected)', () => {
    const entry = fileURLToPath(new URL('../../src/client/broker-connection.js', import.meta.url));
    const external = [...externalImports(entry)];
    expect(external.length).to.be.greaterThan(0); // the scan sees imports at all (msgpackr)
    expect(external.filter((spec) => spec !== 'msgpackr')).to.deep.equal([]);
    // and the Node factory really is Node-specific: the scan would catch it
    const factoryFile = fileURLToPath(new URL('../../src/client/node-websocket.js', import.meta.url));
    expect([...externalImports(factoryFile)]).to.include('ws');
  });
});

// ClientLink.send is exercised above through produce(acks=0); this checks the
// raw link keeps request/response behaviour alongside one-way frames.
describe('client: ClientLink one-way frames', () => {
  it('do not occupy an in-flight slot', async () => {
    const broker = new FakeBroker();
    const server = new WsServer((req) => broker.handle(req), silentLogger);
    const addr = await server.listen({ host: '127.0.0.1', port: 0 });
    const link = await ClientLink.connect(`ws://127.0.0.1:${addr.port}`, { factory: nodeWebSocketFactory });
    try {
      broker.override.set(ApiKey.Metadata, 'hang');
      await link.send(ApiKey.Metadata, 0, { topics: null });
      expect(link.inFlight).to.equal(0);
      await waitFor(() => broker.received.length === 1);
      expect(await link.request(ApiKey.ApiVersions, 0, {}, 5000)).to.have.property('apiKeys');
    } finally {
      link.close();
      await server.close();
    }
  });
});

describe('client: BrokerConnection re-authentication timer', () => {
  /** A link that logs in with PLAIN and a session lifetime, counting handshakes; close() reports to the listeners. */
  function saslLink(sessionLifetimeMs: number): RequestLink & { handshakes: number; drop(): void } {
    const listeners: Array<(err: SluiceError) => void> = [];
    let open = true;
    const link = {
      url: 'ws://sasl', handshakes: 0,
      get isOpen() { return open; },
      request: <T>(apiKey: number) => {
        if (apiKey === ApiKey.SaslHandshake) {
          link.handshakes++;
          return Promise.resolve({ errorCode: 0, errorMessage: null, mechanisms: ['PLAIN'] } as T);
        }
        return Promise.resolve({ errorCode: 0, errorMessage: null, authBytes: new Uint8Array(0), sessionLifetimeMs, principal: 'User:alice' } as T);
      },
      send: () => Promise.resolve(),
      onClose: (l: (err: SluiceError) => void) => { listeners.push(l); },
      close: () => link.drop(),
      drop: () => {
        open = false;
        for (const l of listeners.splice(0)) l(new SluiceError(Errors.NETWORK_EXCEPTION, 'closed'));
      },
    };
    return link;
  }

  it('logs in again at 85% of the session lifetime on the injected scheduler, and forgets the timer when the link goes', async () => {
    const scheduler = new ManualScheduler();
    const link = saslLink(10_000);
    const conn = new BrokerConnection(link, { scheduler });
    await conn.authenticate({ mechanism: 'PLAIN', username: 'alice', password: 'secret' });
    expect([link.handshakes, scheduler.size, conn.principal]).to.deep.equal([1, 1, 'User:alice']);
    scheduler.advance(8_499);
    expect(link.handshakes, 'not before 85%').to.equal(1);
    scheduler.advance(1);
    for (let i = 0; i < 5; i++) await Promise.resolve();
    await new Promise((r) => setImmediate(r));
    expect(link.handshakes, 're-authenticated').to.equal(2);
    expect(scheduler.size, 'the next one is scheduled').to.equal(1);
    link.drop();
    expect(scheduler.size, 'a lost link keeps no timer (a keep-alive scheduler would hold the process)').to.equal(0);
  });
});
