// The Kafka listener end to end on a real cluster: ApiVersions (its quirks),
// Metadata listing every broker's Kafka endpoint, and malformed frames
// closing only their own connection.

import { expect } from 'chai';
import { startBrokerCluster } from '../../integration/broker-kit.js';
import type { ProcessCluster } from '../../integration/harness.js';
import { waitFor } from '../../integration/harness.js';
import { RawKafkaClient } from './raw-client.js';
import { apiVersions } from '../../../src/protocol/kafka/apis/api-versions/schema.js';
import { metadata } from '../../../src/protocol/kafka/apis/metadata/schema.js';
import type { Struct } from '../../../src/protocol/kafka/message.js';

function hostPort(addr: string): [string, number] {
  const [h, p] = addr.split(':');
  return [h!, Number(p)];
}

describe('Kafka listener (real 3-node cluster)', function () {
  this.timeout(90_000);
  let cluster: ProcessCluster;
  const clients: RawKafkaClient[] = [];
  const open = async (i = 0): Promise<RawKafkaClient> => {
    const c = await RawKafkaClient.connect(...hostPort(cluster.nodes[i]!.kafkaAddress));
    clients.push(c);
    return c;
  };

  before(async () => {
    cluster = await startBrokerCluster(3, [], { kafka: true });
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  after(async () => {
    await cluster?.cleanup();
  });

  it('answers ApiVersions v0-v4 and, for an unknown version, v0 with UNSUPPORTED_VERSION and the list', async () => {
    const c = await open();
    for (let v = 0; v <= 4; v++) {
      const res = await c.request(apiVersions, v, { clientSoftwareName: 'raw', clientSoftwareVersion: '1' });
      expect(res.errorCode, `v${v}`).to.equal(0);
      const keys = (res.apiKeys as Struct[]).map((k) => k.apiKey);
      expect(keys).to.include.members([3, 18]);
    }
    const frame = await c.requestFrame({ ...apiVersions, request: { ...apiVersions.request, valid: { min: 0, max: 99 } } }, 99, {});
    // v0 body after the v0 header: errorCode int16 first.
    expect(frame.readInt16BE(4)).to.equal(35);
    expect(frame.readInt32BE(6)).to.be.greaterThan(1);
  });

  it('lists every broker by its Kafka endpoint in Metadata, at every version', async () => {
    const c = await open(1);
    const addresses = cluster.nodes.map((n) => n.kafkaAddress).sort();
    await waitFor('three brokers in Metadata', async () => ((await c.request(metadata, 12, { topics: null })).brokers as Struct[]).length === 3, { timeoutMs: 20_000, intervalMs: 100 });
    for (let v = 0; v <= 12; v++) {
      const res = await c.request(metadata, v, { topics: v === 0 ? [] : null, allowAutoTopicCreation: false });
      const brokers = (res.brokers as Struct[]).map((b) => `${String(b.host)}:${String(b.port)}`).sort();
      expect(brokers, `v${v}`).to.deep.equal(addresses);
      if (v >= 1) expect(res.controllerId, `v${v}`).to.be.within(1, 3);
    }
  });

  it('answers a missing topic UNKNOWN_TOPIC_OR_PARTITION without auto-creation, and an invalid name INVALID_TOPIC', async () => {
    const c = await open();
    const res = await c.request(metadata, 9, { topics: [{ name: 'no-such-topic' }, { name: 'bad name!' }], allowAutoTopicCreation: false });
    const [missing, bad] = res.topics as Struct[];
    expect(missing!.errorCode).to.equal(3);
    expect(bad!.errorCode).to.equal(17);
  });

  it('auto-creates a topic a client asks for, answering LEADER_NOT_AVAILABLE until it has leaders', async () => {
    const c = await open();
    const first = await c.request(metadata, 9, { topics: [{ name: 'auto-made' }], allowAutoTopicCreation: true });
    expect([0, 5]).to.include((first.topics as Struct[])[0]!.errorCode);
    await waitFor('auto-created topic with leaders', async () => {
      const t = ((await c.request(metadata, 9, { topics: [{ name: 'auto-made' }], allowAutoTopicCreation: true })).topics as Struct[])[0]!;
      return t.errorCode === 0 && (t.partitions as Struct[]).length > 0 && (t.partitions as Struct[]).every((p) => (p.leaderId as number) >= 0);
    }, { timeoutMs: 20_000, intervalMs: 100 });
  });

  it('closes a connection that sends a malformed frame, and only that one', async () => {
    const good = await open();
    const bad = await open();
    bad.writeRaw(Buffer.from([0, 0, 0, 12, 0, 3, 0, 9, 0, 0, 0, 1, 0x7f, 0x7f, 0, 0]));
    await waitFor('malformed connection closed', () => bad.closed, { timeoutMs: 5_000, intervalMs: 20 });
    const huge = await open();
    huge.writeRaw(Buffer.from([0x7f, 0xff, 0xff, 0xff]));
    await waitFor('oversized frame closed', () => huge.closed, { timeoutMs: 5_000, intervalMs: 20 });
    const unknownApi = await open();
    unknownApi.writeRaw(Buffer.from([0, 0, 0, 10, 0x03, 0xe7, 0, 0, 0, 0, 0, 1, 0xff, 0xff]));
    await waitFor('unknown api closed', () => unknownApi.closed, { timeoutMs: 5_000, intervalMs: 20 });
    const res = await good.request(apiVersions, 3, {});
    expect(res.errorCode).to.equal(0);
  });

  it('answers pipelined requests in order', async () => {
    const c = await open();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? c.request(apiVersions, 2, {}) : c.request(metadata, 4, { topics: [] }))));
    expect(answers).to.have.length(50);
  });
});
