// NodeMetrics and the metrics listener with fakes: the handler wrapper counts
// requests per API and per-topic produce/fetch traffic, scrape-time gauges
// read their sources, the exposition parses as Prometheus text, and the HTTP
// listener answers /healthz, /readyz (200 or 503 with a reason) and /metrics.
import { expect } from 'chai';
import http from 'node:http';
import { NodeMetrics, consumerGroupLags, partitionHealth, recordCount, type MetricsSources } from '../../src/server/metrics.js';
import { readiness, startMetricsServer, type MetricsServer, type Readiness } from '../../src/server/metrics-http.js';
import { parseMetricsListen } from '../../src/server/config.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { NO_RESPONSE, type ConnectionInfo, type RequestHandler } from '../../src/net/server-connection.js';
import type { RequestEnvelope } from '../../src/protocol/envelope.js';
import type { MetadataImage } from '../../src/metadata/image.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { SluiceError, Errors } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';
import { parsePrometheusText, sampleValue } from './prom-text.js';
import { anonymousSession } from '../../src/security/principal.js';
import { asBuffer } from '../../src/util/node-bytes.js';

const conn: ConnectionInfo = { id: 1, remoteAddress: '127.0.0.1', closed: false, security: anonymousSession() };

function batch(n: number): Buffer {
  return asBuffer(encodeRecordBatch({ records: Array.from({ length: n }, (_, i) => ({ value: Buffer.from(`v${i}`) })) }));
}

function envelope(apiKey: number, body: unknown): RequestEnvelope {
  return { apiKey, apiVersion: 0, correlationId: 1, clientId: null, body };
}

function imageOf(partitions: Array<{ leader: number; replicas: number[]; isr: number[] }>): MetadataImage {
  const topic = { name: 't', topicId: 'id', partitions: new Map(partitions.map((p, i) => [i, p] as const)) };
  return { topicsByName: new Map([['t', topic]]) } as unknown as MetadataImage;
}

async function scrape(m: NodeMetrics) {
  return parsePrometheusText(await m.text());
}

describe('metrics', () => {
  describe('helpers', () => {
    it('counts the records of whole batches and ignores a partial tail', () => {
      const two = Buffer.concat([batch(3), batch(4)]);
      expect(recordCount(two)).to.equal(7);
      expect(recordCount(two.subarray(0, two.length - 5))).to.equal(3);
      expect(recordCount(new Uint8Array(0))).to.equal(0);
      expect(recordCount(new Uint8Array(two))).to.equal(7);
    });

    it('finds under-replicated and offline partitions in an image', () => {
      const image = imageOf([
        { leader: 1, replicas: [1, 2, 3], isr: [1, 2, 3] },
        { leader: 1, replicas: [1, 2, 3], isr: [1, 2] },
        { leader: -1, replicas: [1, 2, 3], isr: [3] },
      ]);
      expect(partitionHealth(image)).to.deep.equal({ underReplicated: 2, offline: 1 });
      expect(partitionHealth(undefined)).to.deep.equal({ underReplicated: 0, offline: 0 });
    });

    it('sums consumer lag per group over partitions with a known high watermark', () => {
      const offsets = new Map([['a', new Map([[0, { offset: 5 }], [1, { offset: 10 }]])], ['b', new Map([[0, { offset: 1 }]])]]);
      const hw = (t: string, p: number) => (t === 'a' ? [8, 10][p] : undefined);
      expect(consumerGroupLags([{ groupId: 'g', offsets }], hw)).to.deep.equal([{ groupId: 'g', lag: 3 }]);
    });

    it('decides readiness with a one-line reason', () => {
      const ok: Readiness = { ready: true };
      expect(readiness({ leader: 0, commit: 5, applied: 5 })).to.deep.include({ ready: false });
      expect(readiness({ leader: 1, commit: 6, applied: 5 })).to.deep.equal({ ready: false, reason: 'metadata applied to 5, behind the commit index 6' });
      expect(readiness({ leader: 1, commit: 5, applied: 5 })).to.deep.equal(ok);
      expect(readiness({ leader: 1, commit: 5, applied: 5, brokerState: 'fenced' })).to.deep.equal({ ready: false, reason: 'the broker is fenced, not running' });
      expect(readiness({ leader: 1, commit: 5, applied: 5, brokerState: 'running' })).to.deep.equal(ok);
    });

    it('parses --metrics-listen', () => {
      expect(parseMetricsListen('http://127.0.0.1:9100')).to.deep.include({ host: '127.0.0.1', port: 9100 });
      expect(parseMetricsListen('http://127.0.0.1:0').port).to.equal(0);
      for (const bad of ['ws://127.0.0.1:9100', 'http://127.0.0.1', 'nonsense', 'http://127.0.0.1:9100/metrics']) {
        expect(() => parseMetricsListen(bad), bad).to.throw(/--metrics-listen/);
      }
    });
  });

  describe('NodeMetrics', () => {
    it('counts requests per API and produce bytes/records per topic (only partitions without errors)', async () => {
      const m = new NodeMetrics({ defaultMetrics: false });
      const ok = batch(3);
      const refused = batch(2);
      const handler: RequestHandler = () => Promise.resolve({
        topics: [{ name: 't', partitions: [{ partition: 0, errorCode: 0 }, { partition: 1, errorCode: 6 }] }],
      });
      const wrapped = m.wrapHandler(handler);
      await wrapped(envelope(ApiKey.Produce, { acks: -1, timeoutMs: 1, topics: [{ name: 't', partitions: [{ partition: 0, records: ok }, { partition: 1, records: refused }] }] }), conn);
      const e = await scrape(m);
      expect(sampleValue(e, 'sluice_requests_total', { api: 'Produce' })).to.equal(1);
      expect(sampleValue(e, 'sluice_topic_bytes_in_total', { topic: 't' })).to.equal(ok.length);
      expect(sampleValue(e, 'sluice_topic_records_in_total', { topic: 't' })).to.equal(3);
      expect(sampleValue(e, 'sluice_request_duration_seconds_count', { api: 'Produce' })).to.equal(1);
    });

    it('counts acks=0 produce (no response) in full', async () => {
      const m = new NodeMetrics({ defaultMetrics: false });
      const wrapped = m.wrapHandler(() => NO_RESPONSE);
      expect(wrapped(envelope(ApiKey.Produce, { acks: 0, timeoutMs: 1, topics: [{ name: 'x', partitions: [{ partition: 0, records: batch(2) }] }] }), conn)).to.equal(NO_RESPONSE);
      expect(sampleValue(await scrape(m), 'sluice_topic_records_in_total', { topic: 'x' })).to.equal(2);
    });

    it('splits fetch traffic into consumer and replica fetches', async () => {
      const m = new NodeMetrics({ defaultMetrics: false });
      const records = batch(4);
      const wrapped = m.wrapHandler(() => ({ errorCode: 0, topics: [{ name: 't', partitions: [{ partition: 0, errorCode: 0, records }] }] }));
      wrapped(envelope(ApiKey.Fetch, { replicaId: -1 }), conn);
      wrapped(envelope(ApiKey.Fetch, { replicaId: 2 }), conn);
      wrapped(envelope(ApiKey.Fetch, { replicaId: 3 }), conn);
      const e = await scrape(m);
      expect(sampleValue(e, 'sluice_topic_bytes_out_total', { topic: 't', fetcher: 'consumer' })).to.equal(records.length);
      expect(sampleValue(e, 'sluice_topic_records_out_total', { topic: 't', fetcher: 'replica' })).to.equal(8);
      expect(sampleValue(e, 'sluice_requests_total', { api: 'Fetch' })).to.equal(3);
    });

    it('counts failed requests, rethrows their errors, and labels unknown APIs "unknown"', async () => {
      const m = new NodeMetrics({ defaultMetrics: false });
      const err = new SluiceError(Errors.UNSUPPORTED_VERSION, 'no');
      const wrapped = m.wrapHandler(() => {
        throw err;
      });
      expect(() => wrapped(envelope(9999, {}), conn)).to.throw(err);
      const rejecting = m.wrapHandler(() => Promise.reject(err));
      let caught: unknown;
      await (rejecting(envelope(ApiKey.Metadata, {}), conn) as Promise<unknown>).catch((e: unknown) => { caught = e; });
      expect(caught).to.equal(err);
      const e = await scrape(m);
      expect(sampleValue(e, 'sluice_request_errors_total', { api: 'unknown' })).to.equal(1);
      expect(sampleValue(e, 'sluice_request_errors_total', { api: 'Metadata' })).to.equal(1);
      expect(e.samples.some((s) => s.labels.api === 'Unknown(9999)')).to.equal(false);
    });

    it('counts ISR shrinks and expands', async () => {
      const m = new NodeMetrics({ defaultMetrics: false });
      m.onIsrChange(3, 2);
      m.onIsrChange(2, 3);
      m.onIsrChange(2, 3);
      const e = await scrape(m);
      expect(sampleValue(e, 'sluice_isr_shrinks_total')).to.equal(1);
      expect(sampleValue(e, 'sluice_isr_expands_total')).to.equal(2);
    });

    it('times committed proposals only, and leaves the quorum otherwise unchanged', async () => {
      const m = new NodeMetrics({ defaultMetrics: false });
      let fail = false;
      const quorum = {
        term: 7,
        propose: (_d: Uint8Array) => (fail ? Promise.reject(new Error('not leader')) : Promise.resolve({ index: 1, term: 7 })),
        status() { return { term: this.term }; },
      };
      const timed = m.timeProposals(quorum);
      expect(await timed.propose(new Uint8Array(1))).to.deep.equal({ index: 1, term: 7 });
      fail = true;
      await timed.propose(new Uint8Array(1)).catch(() => undefined);
      expect(timed.status()).to.deep.equal({ term: 7 });
      expect(sampleValue(await scrape(m), 'sluice_raft_commit_latency_seconds_count')).to.equal(1);
    });

    it('computes gauges from its sources on scrape', async () => {
      const m = new NodeMetrics({ defaultMetrics: false });
      let term = 3;
      const sources: MetricsSources = {
        raft: () => ({ role: 'leader', term, leader: 1, commit: 20, applied: 18, peerMatch: new Map([[2, 20], [3, 15]]) }),
        image: () => imageOf([{ leader: -1, replicas: [1, 2], isr: [2] }]),
        activeController: () => true,
        broker: {
          state: () => 'running', leaderCount: () => 4, purgatorySizes: () => ({ produce: 1, fetch: 2 }),
          groupLags: () => [{ groupId: 'g1', lag: 12 }],
          transactions: () => ({ byState: new Map([['Ongoing', 2], ['CompleteCommit', 5]]), partitions: { loading: 1, active: 3 }, completing: 1, timedOutAborts: 4 }),
        },
      };
      m.attach(sources);
      let e = await scrape(m);
      expect(sampleValue(e, 'sluice_raft_term')).to.equal(3);
      expect(sampleValue(e, 'sluice_metadata_offset_lag')).to.equal(2);
      expect(sampleValue(e, 'sluice_metadata_peer_offset_lag', { peer: '3' })).to.equal(5);
      expect(sampleValue(e, 'sluice_offline_partitions')).to.equal(1);
      expect(sampleValue(e, 'sluice_under_replicated_partitions')).to.equal(1);
      expect(sampleValue(e, 'sluice_active_controller')).to.equal(1);
      expect(sampleValue(e, 'sluice_broker_running')).to.equal(1);
      expect(sampleValue(e, 'sluice_leader_partitions')).to.equal(4);
      expect(sampleValue(e, 'sluice_purgatory_size', { purgatory: 'fetch' })).to.equal(2);
      expect(sampleValue(e, 'sluice_consumer_group_lag', { group: 'g1' })).to.equal(12);
      expect(sampleValue(e, 'sluice_transactions', { state: 'Ongoing' })).to.equal(2);
      expect(sampleValue(e, 'sluice_transactions', { state: 'CompleteCommit' })).to.equal(5);
      expect(sampleValue(e, 'sluice_transaction_coordinator_partitions', { state: 'active' })).to.equal(3);
      expect(sampleValue(e, 'sluice_transaction_markers_pending')).to.equal(1);
      expect(sampleValue(e, 'sluice_transactions_timed_out_total')).to.equal(4);
      term = 4;
      e = await scrape(m);
      expect(sampleValue(e, 'sluice_raft_term')).to.equal(4);
    });

    it('includes process metrics under the sluice_ prefix by default', async () => {
      const e = await scrape(new NodeMetrics());
      expect(sampleValue(e, 'sluice_process_resident_memory_bytes')).to.be.greaterThan(0);
      expect(e.types.get('sluice_process_cpu_seconds_total')).to.equal('counter');
    });
  });

  describe('metrics listener', () => {
    let server: MetricsServer | undefined;
    let ready: Readiness = { ready: false, reason: 'the metadata quorum has no leader' };

    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    function get(url: string, method = 'GET'): Promise<{ status: number; body: string; type: string }> {
      return new Promise((resolve, reject) => {
        const req = http.request(url, { method }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => { body += c; });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }));
        });
        req.on('error', reject);
        req.end();
      });
    }

    it('serves /healthz, /readyz and /metrics', async () => {
      const metrics = new NodeMetrics({ defaultMetrics: false });
      server = await startMetricsServer({ host: '127.0.0.1', port: 0, metrics, readiness: () => ready, logger: silentLogger });
      expect(server.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await get(`${server.url}/healthz`)).status).to.equal(200);
      const notReady = await get(`${server.url}/readyz`);
      expect(notReady.status).to.equal(503);
      expect(notReady.body).to.equal('not ready: the metadata quorum has no leader\n');
      ready = { ready: true };
      expect((await get(`${server.url}/readyz`)).status).to.equal(200);
      const res = await get(`${server.url}/metrics`);
      expect(res.status).to.equal(200);
      expect(res.type).to.match(/^text\/plain/);
      expect(parsePrometheusText(res.body).types.get('sluice_requests_total')).to.equal('counter');
      expect((await get(`${server.url}/nope`)).status).to.equal(404);
      expect((await get(`${server.url}/metrics`, 'POST')).status).to.equal(405);
    });

    it('refuses a port in use with a clear message', async () => {
      const metrics = new NodeMetrics({ defaultMetrics: false });
      server = await startMetricsServer({ host: '127.0.0.1', port: 0, metrics, readiness: () => ready, logger: silentLogger });
      const port = Number(new URL(server.url).port);
      let err: Error | undefined;
      await startMetricsServer({ host: '127.0.0.1', port, metrics, readiness: () => ready, logger: silentLogger }).catch((e: Error) => { err = e; });
      expect(err?.message).to.equal(`http address 127.0.0.1:${port} is already in use`);
    });
  });

  describe('prometheus text reader', () => {
    it('rejects malformed expositions', () => {
      expect(() => parsePrometheusText('# TYPE a counter\na_total 1\n')).to.not.throw();
      expect(() => parsePrometheusText('b 1\n')).to.throw(/undeclared/);
      expect(() => parsePrometheusText('# TYPE a gauge\na{x="1" 1\n')).to.throw(/bad/);
      expect(() => parsePrometheusText('# TYPE a gauge\na one\n')).to.throw(/bad sample value/);
    });
  });
});
