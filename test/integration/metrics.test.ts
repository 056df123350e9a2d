// Metrics and health endpoints on a real cluster of three combined `sluice
// server` processes, each with --metrics-listen on a port of its own (port 0;
// the bound URL is read from the node's "http listener up" log line):
// /healthz answers at once, /readyz turns 200 once the node is ready,
// /metrics parses as Prometheus text and moves when records flow — produce
// bytes/records in for the topic, the Produce request count, replica and
// consumer fetch bytes out, and the consumer group's lag.
import { expect } from 'chai';
import { Client } from '../../src/index.js';
import { ProcessCluster, waitFor } from './harness.js';
import { parsePrometheusText, sampleValue, type Exposition } from '../server/prom-text.js';

const UP_MS = 60_000;

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}


async function scrape(url: string): Promise<Exposition> {
  const res = await get(`${url}/metrics`);
  expect(res.status).to.equal(200);
  return parsePrometheusText(res.body);
}

/** The sum over every node of a sample (0 where absent). */
async function total(urls: readonly string[], name: string, labels: Record<string, string> = {}): Promise<number> {
  let sum = 0;
  for (const url of urls) sum += sampleValue(await scrape(url), name, labels) ?? 0;
  return sum;
}

describe('metrics and health endpoints on a real 3-node cluster', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  let client: Client;
  let urls: string[];

  before(async () => {
    cluster = await ProcessCluster.create({ size: 3, brokers: true, extraArgs: ['--metrics-listen', 'http://127.0.0.1:0'] });
    cluster.startAll();
    urls = await waitFor('every node\'s metrics listener', () => {
      const found = cluster.nodes.map((n) => n.httpUrl);
      return found.every((u) => u !== undefined) ? (found as string[]) : undefined;
    }, { timeoutMs: UP_MS, intervalMs: 50 });
    client = new Client({ bootstrap: cluster.brokerUrls.join(','), clientId: 'metrics-test' });
  });

  after(async function () {
    if (this.currentTest?.state === 'failed') console.log(cluster?.dumpLogs());
    client?.close();
    await cluster?.cleanup();
  });

  it('answers /healthz, then /readyz once each node is ready', async () => {
    for (const url of urls) expect((await get(`${url}/healthz`)).status).to.equal(200);
    await waitFor('every node ready', async () => {
      for (const url of urls) if ((await get(`${url}/readyz`)).status !== 200) return false;
      return true;
    }, { timeoutMs: UP_MS, intervalMs: 100 });
    const scrapes = await Promise.all(urls.map(scrape));
    expect(scrapes.map((e) => sampleValue(e, 'sluice_active_controller')).reduce((a, b) => a! + b!, 0)).to.equal(1);
    const terms = new Set(scrapes.map((e) => sampleValue(e, 'sluice_raft_term')));
    expect(terms.size).to.equal(1);
    for (const e of scrapes) {
      expect(sampleValue(e, 'sluice_broker_running')).to.equal(1);
      expect(sampleValue(e, 'sluice_process_resident_memory_bytes')).to.be.greaterThan(0);
      expect(e.types.get('sluice_request_duration_seconds')).to.equal('histogram');
      expect(sampleValue(e, 'sluice_transactions_timed_out_total'), 'the transaction coordinator is wired').to.equal(0);
      expect(sampleValue(e, 'sluice_transaction_markers_pending')).to.equal(0);
    }
  });

  it('moves the traffic counters when records flow', async () => {
    const admin = client.admin();
    await admin.createTopics({ topics: [{ topic: 'metered', numPartitions: 1, replicationFactor: 3 }] });
    expect(await total(urls, 'sluice_topic_bytes_in_total', { topic: 'metered' })).to.equal(0);
    const producesBefore = await total(urls, 'sluice_requests_total', { api: 'Produce' });

    const producer = client.producer({ lingerMs: 2 });
    const messages = Array.from({ length: 20 }, (_, i) => ({ value: `record-${i}` }));
    await producer.send({ topic: 'metered', messages });
    await producer.close();

    expect(await total(urls, 'sluice_topic_bytes_in_total', { topic: 'metered' })).to.be.greaterThan(0);
    expect(await total(urls, 'sluice_topic_records_in_total', { topic: 'metered' })).to.equal(20);
    expect(await total(urls, 'sluice_requests_total', { api: 'Produce' })).to.be.greaterThan(producesBefore);
    // acks=all returned, so both followers fetched the records from the leader.
    expect(await total(urls, 'sluice_topic_records_out_total', { topic: 'metered', fetcher: 'replica' })).to.be.at.least(40);

    const consumer = client.consumer({ groupId: 'metered-readers', autoOffsetReset: 'earliest', autoCommitIntervalMs: 100 });
    let got = 0;
    await consumer.subscribe({ topics: ['metered'], fromBeginning: true });
    await consumer.run({ eachMessage: async () => void got++ });
    await waitFor('the consumer to read 20 records', () => got >= 20, { timeoutMs: UP_MS });
    await waitFor('the group\'s lag to reach 0 on its coordinator', async () => {
      for (const url of urls) if (sampleValue(await scrape(url), 'sluice_consumer_group_lag', { group: 'metered-readers' }) === 0) return true;
      return false;
    }, { timeoutMs: UP_MS, intervalMs: 100 });
    await consumer.close();
    expect(await total(urls, 'sluice_topic_records_out_total', { topic: 'metered', fetcher: 'consumer' })).to.be.at.least(20);
    expect(await total(urls, 'sluice_leader_partitions')).to.be.greaterThan(0);
  });
});
