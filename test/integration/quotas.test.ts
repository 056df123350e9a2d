// Client quotas on a real node (one combined node, both listeners): quotas
// set and listed with `sluice quotas` and with Kafka's own kafka-configs
// (ConfigCommand, when the Java tools are installed); bad input refused with
// Kafka's error codes; a client over its produce quota answered with
// throttle_time_ms > 0 and muted — on the Kafka listener (raw Kafka client)
// and the WebSocket listener — while a client with another client id is not
// throttled. Muting is observed by request order (the muted connection's
// next answer comes after the other client's), and in /metrics; no duration
// is asserted.

import { expect } from 'chai';
import { startBrokerCluster } from './broker-kit.js';
import { waitFor, type ProcessCluster } from './harness.js';
import { sluiceAgainst } from './cli-kit.js';
import { RawKafkaClient } from '../protocol/kafka/raw-client.js';
import { produce } from '../../src/protocol/kafka/apis/produce/schema.js';
import { apiVersions } from '../../src/protocol/kafka/apis/api-versions/schema.js';
import { fetch } from '../../src/protocol/kafka/apis/fetch/schema.js';
import { describeClientQuotas } from '../../src/protocol/kafka/apis/describe-client-quotas/schema.js';
import { alterClientQuotas } from '../../src/protocol/kafka/apis/alter-client-quotas/schema.js';
import type { Struct } from '../../src/protocol/kafka/message.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { ClientLink } from '../../src/net/client-link.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { Errors } from '../../src/util/errors.js';
import { findTool, runTool } from '../interop/kafka-kit.js';

const TOPIC = 'quota-t';
/** One batch of about 13 kB: over a 1000 B/s quota measured over the 10 s minimum span. */
const BIG = encodeRecordBatch({ records: [{ key: null, value: Buffer.alloc(13_000, 7), timestamp: 1_700_000_000_000 }] });


describe('client quotas on a real node (both listeners, CLI, kafka-configs)', function () {
  this.timeout(120_000);
  let cluster: ProcessCluster;
  const raws: RawKafkaClient[] = [];
  const links: ClientLink[] = [];
  const { sluice, ok } = sluiceAgainst(() => cluster.brokerUrls[0]!);

  before(async () => {
    cluster = await startBrokerCluster(1, ['--metrics-listen', 'http://127.0.0.1:0'], { kafka: true });
    await ok('topics', 'create', '--topic', TOPIC, '--partitions', '1', '--replication-factor', '1');
  });
  after(async () => {
    for (const c of raws) c.close();
    for (const l of links) l.close();
    await cluster?.cleanup();
  });

  async function raw(clientId: string): Promise<RawKafkaClient> {
    const [host, port] = cluster.nodes[0]!.kafkaAddress.split(':');
    const c = await RawKafkaClient.connect(host!, Number(port), clientId);
    raws.push(c);
    return c;
  }

  const produceReq = (): Struct => ({ transactionalId: null, acks: 1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: BIG }] }] });

  it('sets, lists and removes quotas with sluice quotas, and refuses bad input', async () => {
    await ok('quotas', 'set', '--user', 'alice', '--client-id-default', '--add-config', 'producer_byte_rate=1048576,request_percentage=25.5');
    const listed = JSON.parse(await ok('quotas', 'list', '--user', 'alice', '--json')) as { quotas: Array<{ entity: unknown; values: Record<string, number> }> };
    expect(listed.quotas).to.deep.equal([{
      entity: [{ entityType: 'user', entityName: 'alice' }, { entityType: 'client-id', entityName: null }],
      values: { producer_byte_rate: 1048576, request_percentage: 25.5 },
    }]);
    const unknownKey = await sluice('quotas', 'set', '--user', 'alice', '--add-config', 'producer_bytes_rate=5');
    expect(unknownKey.status).to.equal(1);
    expect(unknownKey.stderr).to.match(/INVALID_REQUEST.*invalid configuration key producer_bytes_rate/);
    const negative = await sluice('quotas', 'set', '--user', 'alice', '--add-config', 'consumer_byte_rate=-1');
    expect(negative.status).to.equal(1);
    expect(negative.stderr).to.match(/INVALID_REQUEST.*positive/);
    expect(await ok('quotas', 'remove', '--user', 'alice', '--client-id-default', '--delete-config', 'producer_byte_rate,request_percentage'))
      .to.contain('removed producer_byte_rate,request_percentage for user=alice,client-id=<default>');
  });

  it('answers DescribeClientQuotas/AlterClientQuotas on the Kafka listener with Kafka\'s error codes', async () => {
    const c = await raw('admin');
    const bad = await c.request(alterClientQuotas, 1, {
      entries: [
        { entity: [{ entityType: 'ip', entityName: '10.0.0.1' }], ops: [{ key: 'producer_byte_rate', value: 1, remove: false }] },
        { entity: [{ entityType: 'client-id', entityName: 'v' }], ops: [{ key: 'consumer_byte_rate', value: 500, remove: false }] },
      ],
      validateOnly: true,
    });
    expect((bad.entries as Struct[]).map((e) => e.errorCode)).to.deep.equal([Errors.INVALID_REQUEST.code, 0]);
    const none = await c.request(describeClientQuotas, 0, { components: [{ entityType: 'client-id', matchType: 0, match: 'v' }], strict: false });
    expect(none.entries).to.deep.equal([]);
    // The CLI test removed alice's quotas: nothing is left.
    expect((await c.request(describeClientQuotas, 1, { components: [], strict: false })).entries).to.deep.equal([]);
    const custom = await c.request(describeClientQuotas, 1, { components: [{ entityType: 'group', matchType: 2, match: null }], strict: false });
    expect(custom.errorCode).to.equal(Errors.UNSUPPORTED_VERSION.code);
  });

  it('kafka-configs (Kafka\'s ConfigCommand) alters and describes user quotas', async function () {
    const { tool, reason } = findTool('kafka-tools');
    if (!tool) {
      console.log(`      skipping: ${reason}`);
      this.skip();
    }
    const configs = (args: string[]) => runTool(tool, ['org.apache.kafka.tools.ConfigCommand', '--bootstrap-server', cluster.kafkaBootstrap, ...args], { timeoutMs: 60_000 });
    const c = await raw('check');
    const alterRaw = (entity: Struct[], key: string, value: number, remove: boolean) => c.request(alterClientQuotas, 1, { entries: [{ entity, ops: [{ key, value, remove }] }], validateOnly: false });
    // Users: kafka-configs alters them with AlterClientQuotas (its --describe of users also asks for SCRAM
    // credentials, DescribeUserScramCredentials: the SASL work), read back here with DescribeClientQuotas.
    const alter = await configs(['--alter', '--entity-type', 'users', '--entity-name', 'bob', '--add-config', 'consumer_byte_rate=2097152,producer_byte_rate=1024']);
    expect(alter.status, alter.stderr + alter.stdout).to.equal(0);
    const bob = await c.request(describeClientQuotas, 1, { components: [{ entityType: 'user', matchType: 0, match: 'bob' }], strict: true });
    expect(bob.entries).to.deep.equal([{ entity: [{ entityType: 'user', entityName: 'bob' }], values: [{ key: 'consumer_byte_rate', value: 2097152 }, { key: 'producer_byte_rate', value: 1024 }] }]);
    // Client ids: kafka-configs --describe reads them with DescribeClientQuotas.
    await alterRaw([{ entityType: 'client-id', entityName: null }], 'request_percentage', 200, false);
    const described = await configs(['--describe', '--entity-type', 'clients', '--entity-default']);
    expect(described.status, described.stderr).to.equal(0);
    expect(described.stdout).to.match(/request_percentage=200/);
    await alterRaw([{ entityType: 'client-id', entityName: null }], 'request_percentage', 0, true);
    await alterRaw([{ entityType: 'user', entityName: 'bob' }], 'consumer_byte_rate', 0, true);
    await alterRaw([{ entityType: 'user', entityName: 'bob' }], 'producer_byte_rate', 0, true);
    expect((await c.request(describeClientQuotas, 1, { components: [], strict: false })).entries).to.deep.equal([]);
  });

  it('throttles and mutes a Kafka client over its produce quota, not another client id', async () => {
    await ok('quotas', 'set', '--client-id', 'k-slow', '--add-config', 'producer_byte_rate=1000');
    const slow = await raw('k-slow');
    const fast = await raw('k-fast');
    // The broker applies the quota once its image has the record: produce until it throttles.
    let throttle = 0;
    await waitFor('a throttled produce', async () => {
      const res = await slow.request(produce, 9, produceReq());
      throttle = res.throttleTimeMs as number;
      return throttle > 0;
    }, { timeoutMs: 20_000, intervalMs: 50 });
    expect(throttle).to.be.greaterThan(1000);
    // The muted connection's next request is read only after the throttle; the other client is served meanwhile.
    const order: string[] = [];
    const slowNext = slow.request(apiVersions, 3, { clientSoftwareName: 'q', clientSoftwareVersion: '1' }).then((r) => { order.push('slow'); return r; });
    const fastProduce = await fast.request(produce, 9, produceReq());
    order.push('fast');
    expect(fastProduce.throttleTimeMs).to.equal(0);
    await slowNext;
    expect(order).to.deep.equal(['fast', 'slow']);
  });

  it('answers a consumer over its fetch quota empty, with throttle_time_ms, and another client id in full', async () => {
    await ok('quotas', 'set', '--client-id', 'k-reader', '--add-config', 'consumer_byte_rate=1000');
    const fetchReq = (): Struct => ({
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 10_000_000, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: TOPIC, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0, partitionMaxBytes: 1_000_000 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const reader = await raw('k-reader');
    const other = await raw('k-other');
    // Each of the earlier produces left a 13 kB batch, over the reader's 10 kB window budget: the answer
    // that takes a reader over its quota is delivered, and throttled; the next one (read once the
    // connection is unmuted, while still over) is answered empty.
    let answer: Struct = {};
    await waitFor('a throttled fetch', async () => {
      answer = await reader.request(fetch, 12, fetchReq());
      return (answer.throttleTimeMs as number) > 0;
    }, { timeoutMs: 20_000, intervalMs: 50 });
    expect((answer.responses as Struct[])).to.have.length(1);
    const empty = await reader.request(fetch, 12, fetchReq());
    expect(empty.throttleTimeMs).to.be.greaterThan(0);
    expect(empty.responses).to.deep.equal([]);
    const full = await other.request(fetch, 12, fetchReq());
    expect(full.throttleTimeMs).to.equal(0);
    const records = ((full.responses as Struct[])[0]!.partitions as Struct[])[0]!.records as Buffer;
    expect(records.length).to.be.greaterThan(13_000);
  });

  it('throttles and mutes a WebSocket client by its envelope client id, and counts it in /metrics', async () => {
    await ok('quotas', 'set', '--user', 'ANONYMOUS', '--client-id', 'ws-slow', '--add-config', 'producer_byte_rate=1000');
    const link = async (clientId: string): Promise<ClientLink> => {
      const l = await ClientLink.connect(cluster.brokerUrls[0]!, { factory: nodeWebSocketFactory, clientId, connectTimeoutMs: 5000 });
      links.push(l);
      return l;
    };
    const slow = await link('ws-slow');
    const fast = await link('ws-fast');
    const body = { acks: 1, timeoutMs: 10_000, topics: [{ name: TOPIC, partitions: [{ partition: 0, records: BIG }] }] };
    let throttle = 0;
    await waitFor('a throttled WebSocket produce', async () => {
      const res = await slow.request<{ throttleTimeMs?: number }>(ApiKey.Produce, 0, body, 15_000);
      throttle = res.throttleTimeMs ?? 0;
      return throttle > 0;
    }, { timeoutMs: 20_000, intervalMs: 50 });
    const order: string[] = [];
    const slowNext = slow.request(ApiKey.ApiVersions, 0, {}, 30_000).then(() => order.push('slow'));
    const fastRes = await fast.request<{ throttleTimeMs?: number; topics: unknown[] }>(ApiKey.Produce, 0, body, 15_000);
    order.push('fast');
    expect(fastRes.throttleTimeMs).to.equal(undefined);
    await slowNext;
    expect(order).to.deep.equal(['fast', 'slow']);

    const url = cluster.nodes[0]!.httpUrl;
    expect(url, 'metrics listener url in the log').to.be.a('string');
    const text = await (await globalThis.fetch(`${url}/metrics`)).text();
    const series = (user: string, clientId: string) => new RegExp(`sluice_client_quota_throttle_time_ms_total\\{quota="produce",user="${user}",client_id="${clientId}"\\} (\\d+)`).exec(text);
    expect(Number(series('', 'k-slow')?.[1])).to.be.greaterThan(0);
    expect(Number(series('ANONYMOUS', 'ws-slow')?.[1])).to.be.greaterThan(0);
    expect(series('', 'k-fast')).to.equal(null);
  });
});
