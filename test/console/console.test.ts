// The web console against a real 3-node cluster (one ProcessCluster, one
// headless Chromium for the whole file). Node 1 runs with --http-listen and
// --console-admin, node 2 with the old name --metrics-listen, node 3 with
// --http-listen alone (read-only console). The cluster holds two topics, an
// idle group with lag, a live group with a member, and a reassignment kept in
// progress by a 1 byte/s throttle (its partition under-replicated meanwhile);
// every number the page shows is checked from its DOM against what the Node
// client's Admin says.
//
// Screenshots of each view go to .tmp/console/; with
// SLUICE_UPDATE_SCREENSHOTS=1 to docs/console/ (the committed ones, linked
// from docs/operations.md), so a test run does not rewrite tracked files.
//
// Needs the browser bundle (dist/browser/sluice.js, `make build`) and
// Debian's chromium; without either the browser tests skip, saying which.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { Client } from '../../src/index.js';
import type { Consumer } from '../../src/index.js';
import { waitFor, type ProcessCluster } from '../integration/harness.js';
import { startBrokerCluster } from '../integration/broker-kit.js';
import { chromiumSkipReason, launchChromium, type Chromium } from '../browser/chromium.js';

const UP_MS = 60_000;
const VIEW_MS = 20_000;
const BUNDLE = path.resolve('dist/browser/sluice.js');
const SHOTS_DIR = process.env.SLUICE_UPDATE_SCREENSHOTS === '1' ? path.resolve('docs/console') : path.resolve('.tmp/console');

/**
 * The page's globals these tests touch. This file is compiled without the
 * DOM's types, and functions (not strings: the page's CSP forbids eval) are
 * what page.evaluate runs there.
 */
interface InPage {
  readonly document: { readonly body: { readonly dataset: Record<string, string | undefined> } };
  readonly location: { hash: string };
}


async function get(url: string): Promise<{ status: number; body: string; type: string | null; location: string | null; csp: string | null }> {
  const res = await fetch(url, { redirect: 'manual' });
  return {
    status: res.status, body: await res.text(), type: res.headers.get('content-type'), location: res.headers.get('location'), csp: res.headers.get('content-security-policy'),
  };
}

/** A raw request line, so the path reaches the server exactly as written (fetch would normalize "..". */
async function rawGet(base: string, rawPath: string): Promise<number> {
  const { hostname, port } = new URL(base);
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), hostname, () => sock.write(`GET ${rawPath} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`));
    let data = '';
    sock.on('data', (d) => { data += d.toString(); });
    sock.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0)));
    sock.on('error', reject);
  });
}

async function shot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SHOTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS_DIR, `${name}.png`), fullPage: true });
}

async function text(page: Page, selector: string): Promise<string> {
  return (await page.textContent(selector, { timeout: VIEW_MS }))?.trim() ?? '';
}

/** Waits until `read` (run in the page) returns what `expected` says, or fails with the last value. */
async function until<T>(page: Page, what: string, read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  let last: T | undefined;
  try {
    return await waitFor(what, async () => {
      last = await read();
      return ok(last) ? last : undefined;
    }, { timeoutMs: VIEW_MS, intervalMs: 200 });
  } catch (err) {
    throw new Error(`${(err as Error).message}; last seen: ${JSON.stringify(last)}`);
  }
}

describe('web console on a real 3-node cluster', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  let client: Client;
  let urls: string[];
  let live: Consumer;
  let chromium: Chromium | undefined;
  let browserSkip: string | null = null;

  before(async () => {
    cluster = await startBrokerCluster(3, [], {
      nodeArgs: (id) => (id === 1 ? ['--http-listen', 'http://127.0.0.1:0', '--console-admin']
        : id === 2 ? ['--metrics-listen', 'http://127.0.0.1:0'] : ['--http-listen', 'http://127.0.0.1:0']),
    });
    urls = await waitFor('every node\'s http listener', () => {
      const found = cluster.nodes.map((n) => n.httpUrl);
      return found.every((u) => u !== undefined) ? (found as string[]) : undefined;
    }, { timeoutMs: UP_MS, intervalMs: 50 });
    client = new Client({ bootstrap: cluster.brokerUrls.join(','), clientId: 'console-test' });
    const admin = client.admin();
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 3, replicationFactor: 3 }, { topic: 'events', numPartitions: 2, replicationFactor: 2 }] });
    const producer = client.producer({ lingerMs: 2 });
    await producer.send({ topic: 'orders', messages: Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: `order-${i}` })) });
    await producer.send({ topic: 'events', messages: Array.from({ length: 10 }, (_, i) => ({ value: `event-${i}`, partition: i % 2 })) });
    // An idle group: it read and committed all 30 orders, then 6 more arrived (lag 6).
    const audit = client.consumer({ groupId: 'audit', autoOffsetReset: 'earliest', autoCommitIntervalMs: 100 });
    let read = 0;
    await audit.subscribe({ topics: ['orders'], fromBeginning: true });
    await audit.run({ eachMessage: async () => void read++ });
    await waitFor('audit read 30', () => read >= 30, { timeoutMs: UP_MS, intervalMs: 50 });
    await audit.close();
    await producer.send({ topic: 'orders', messages: Array.from({ length: 6 }, (_, i) => ({ key: `late${i}`, value: `late-${i}` })) });
    await producer.close();
    // A live group with one member holding both partitions of events.
    live = client.consumer({ groupId: 'live', autoOffsetReset: 'earliest', autoCommitIntervalMs: 100 });
    await live.subscribe({ topics: ['events'], fromBeginning: true });
    await live.run({ eachMessage: async () => undefined });
    await waitFor('live group Stable with its assignment', async () => {
      const [g] = await admin.describeGroups(['live']);
      return g?.state === 'Stable' && g.members[0]?.assignment?.length === 1 && g.offsets.length === 2;
    }, { timeoutMs: UP_MS, intervalMs: 200 });
    // A reassignment that stays in progress: a 1 byte/s throttle on the replica it adds.
    await admin.createTopics({ topics: [{ topic: 'moving', replicaAssignment: [[1]] }] });
    const mover = client.producer();
    for (let i = 0; i < 3; i++) await mover.send({ topic: 'moving', messages: [{ value: `moving-${i}` }] });
    await mover.close();
    await admin.alterConfigs({ resources: [{ resourceType: 'cluster', resourceName: '', set: { 'leader.replication.throttled.rate': '1' } }] });
    await admin.alterPartitionReassignments({ partitions: [{ topic: 'moving', partition: 0, replicas: [1, 2] }] });
    browserSkip = chromiumSkipReason() ?? (fs.existsSync(BUNDLE) ? null : `skipping: ${BUNDLE} is not built (the browser bundle, make build)`);
    if (!browserSkip) chromium = await launchChromium();
  });

  after(async function () {
    if (this.currentTest?.state === 'failed') console.log(cluster?.dumpLogs());
    await chromium?.close();
    await live?.close().catch(() => undefined);
    client?.close();
    await cluster?.cleanup();
  });

  describe('HTTP listener', () => {
    it('serves the page, its config (bootstrap list only) and, under --metrics-listen too, /metrics', async () => {
      const root = await get(`${urls[0]}/`);
      expect([root.status, root.location]).to.deep.equal([302, '/console/']);
      const page = await get(`${urls[0]}/console/`);
      expect(page.status).to.equal(200);
      expect(page.body).to.contain('<script type="module" src="/console/app.js">');
      expect(page.csp).to.contain("script-src 'self'");
      const app = await get(`${urls[0]}/console/app.js`);
      expect([app.status, app.type]).to.deep.equal([200, 'text/javascript; charset=utf-8']);
      const configs = await Promise.all(urls.map(async (u) => JSON.parse((await get(`${u}/console/config.json`)).body) as Record<string, unknown>));
      configs.forEach((c, i) => {
        expect(Object.keys(c).sort()).to.deep.equal(['admin', 'bootstrap', 'nodeId', 'sasl']);
        expect(c.sasl).to.deep.equal({ mechanisms: ['SCRAM-SHA-256', 'SCRAM-SHA-512'], required: false });
        expect(c.nodeId).to.equal(i + 1);
        expect(c.admin).to.equal(i === 0);
        expect((c.bootstrap as string[])[0]).to.equal(cluster.node(i + 1).brokerUrl);
        expect([...(c.bootstrap as string[])].sort()).to.deep.equal([...cluster.brokerUrls].sort());
      });
      const metrics = await get(`${urls[1]}/metrics`);
      expect(metrics.status).to.equal(200);
      expect(metrics.body).to.contain('sluice_raft_term');
      expect((await get(`${urls[1]}/console/`)).status).to.equal(200);
    });

    it('answers 404 for unknown paths and 400 for paths that try to leave the console\'s directories', async () => {
      for (const p of ['/nope', '/console/nope.js', '/console/model.ts', '/console/App.js', '/sluice.mjs', '/consolex']) {
        expect((await get(`${urls[0]}${p}`)).status, p).to.equal(404);
      }
      for (const p of ['/console/../package.json', '/console/..%2f..%2fpackage.json', '/console/%2e%2e/%2e%2e/package.json', '/console//etc/passwd', '/console/..\\package.json']) {
        expect(await rawGet(urls[0]!, p), p).to.equal(400);
      }
      expect((await fetch(`${urls[0]}/console/`, { method: 'POST' })).status).to.equal(405);
    });

    it('DescribeQuorum through any broker names the Raft leader and each voter', async () => {
      const q = await client.admin().describeQuorum();
      const status = await cluster.client().status(cluster.node(q.leaderId).url);
      expect([status.role, status.term]).to.deep.equal(['leader', q.leaderEpoch]);
      expect(q.voters.map((v) => v.nodeId)).to.deep.equal([1, 2, 3]);
      expect(q.highWatermark).to.be.greaterThan(0);
      for (const v of q.voters) expect(v.lag).to.be.at.least(0);
    });
  });

  describe('in Chromium', () => {
    /** Uncaught errors and console errors of the pages a test opened: a view that throws fails its test. */
    let pageErrors: string[] = [];

    beforeEach(function () {
      if (browserSkip) {
        console.log(`      ${browserSkip}`);
        this.skip();
      }
      pageErrors = [];
    });

    afterEach(() => {
      expect(pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    });

    async function open(url: string, route: string): Promise<Page> {
      const page = await chromium!.context.newPage();
      page.on('pageerror', (err) => pageErrors.push(err.message));
      // Console errors too: a Content-Security-Policy violation or a failed load shows only there.
      page.on('console', (msg) => { if (msg.type() === 'error') pageErrors.push(msg.text()); });
      await page.goto(`${url}/console/#${route}`);
      await page.waitForFunction(() => Number((globalThis as unknown as InPage).document.body.dataset.polls ?? 0) >= 1, undefined, { timeout: VIEW_MS });
      return page;
    }

    it('cluster view: quorum leader, term, each voter and every broker running', async () => {
      const page = await open(urls[2]!, 'cluster');
      const q = await client.admin().describeQuorum();
      await until(page, 'quorum leader shown', () => text(page, '#quorum-leader'), (v) => v === String(q.leaderId));
      expect(await text(page, '#quorum-term')).to.equal(String(q.leaderEpoch));
      expect(await page.$$eval('#quorum tbody tr', (rows) => rows.map((r) => Number(r.getAttribute('data-node'))))).to.deep.equal([1, 2, 3]);
      expect(await page.$$eval('#brokers tbody tr .state', (cells) => cells.map((c) => c.textContent))).to.deep.equal(['running', 'running', 'running']);
      expect(await text(page, '#active-controller')).to.equal(String(q.leaderId));
      await shot(page, 'cluster');
      await page.close();
    });

    it('topics view: topic count, every partition\'s leader and high watermark', async () => {
      const page = await open(urls[2]!, 'topics');
      const admin = client.admin();
      const names = await admin.listTopics();
      expect(names).to.include('__consumer_offsets');
      const listed = names.filter((n) => !n.startsWith('__'));
      await until(page, 'topic count', () => text(page, '#topic-count'), (v) => v === String(listed.length));
      expect(await page.$$eval('#topics tbody tr', (rows) => rows.map((r) => r.getAttribute('data-topic')))).to.deep.equal(listed);
      const described = await admin.describeTopics({ topics: ['orders', 'events'] });
      for (const t of described) {
        for (const p of t.partitions) {
          const row = `#view-topics table.partitions tr[data-topic="${t.name}"][data-partition="${p.partition}"]`;
          expect(await text(page, `${row} .leader`), `${t.name}-${p.partition} leader`).to.equal(String(p.leader));
        }
      }
      const hws = await until(page, 'orders high watermarks', () => page.$$eval('#view-topics table.partitions tr[data-topic="orders"] .hw', (c) => c.map((x) => Number(x.textContent))),
        (v) => v.reduce((a, b) => a + b, 0) === 36);
      expect(hws).to.have.length(3);
      // moving-0 gains a replica that the throttle keeps out of the ISR.
      const moving = (await admin.describeTopics({ topics: ['moving'] }))[0]!.partitions[0]!;
      expect([moving.replicas, moving.isr]).to.deep.equal([[1, 2], [1]]);
      expect(await text(page, '#under-replicated-count')).to.equal('1');
      expect(await text(page, '#view-topics table.partitions tr[data-topic="moving"][data-partition="0"] .flag')).to.equal('under-replicated');
      expect(await page.$$eval('#view-topics table.partitions tr.under-replicated', (r) => r.map((x) => x.getAttribute('data-topic')))).to.deep.equal(['moving']);
      expect(await page.$('button.elect')).to.equal(null);
      await shot(page, 'topics');
      await page.check('#show-internal');
      expect(await text(page, '#topic-count')).to.equal(String(names.length));
      await page.close();
    });

    it('topic view: the page tails the topic live as a browser consumer', async () => {
      const page = await open(urls[2]!, 'topic/orders');
      await until(page, 'tail backlog', () => page.$$eval('#tail tbody tr', (r) => r.length), (n) => n > 0);
      const producer = client.producer();
      const marker = `tail-marker-${Date.now()}`;
      const [meta] = await producer.send({ topic: 'orders', messages: [{ key: 'tail', value: marker, partition: 1 }] });
      await producer.close();
      await until(page, 'the new record in the tail', () => page.$$eval('#tail td.value', (c) => c.map((x) => x.textContent)), (v) => v.includes(marker));
      expect(await text(page, `#tail tr[data-partition="1"][data-offset="${meta!.offset}"] td.value`)).to.equal(marker);
      await shot(page, 'topic-tail');
      await page.close();
    });

    it('groups view: state, members, assignment and lag per partition', async () => {
      const page = await open(urls[2]!, 'groups');
      const [audit, liveGroup] = await client.admin().describeGroups(['audit', 'live']);
      // 6 records arrived after the group's commit, and the tail test wrote one more.
      const lag = audit!.offsets.reduce((a, o) => a + (o.lag ?? 0), 0);
      expect(lag).to.be.at.least(6);
      await until(page, 'audit lag', () => text(page, 'article[data-group="audit"] .total-lag'), (v) => v === String(lag));
      expect(await text(page, 'article[data-group="audit"] .state')).to.equal('Empty');
      for (const o of audit!.offsets) {
        expect(await text(page, `article[data-group="audit"] table.offsets tr[data-topic="orders"][data-partition="${o.partition}"] .lag`)).to.equal(String(o.lag));
      }
      await until(page, 'live member', () => text(page, 'article[data-group="live"] .member-count'), (v) => v === '1');
      expect(await text(page, 'article[data-group="live"] .state')).to.equal('Stable');
      expect(await text(page, 'article[data-group="live"] .assignment')).to.equal('events:0 events:1');
      expect(liveGroup!.members).to.have.length(1);
      expect(await page.$('button.delete-group')).to.equal(null);
      await shot(page, 'groups');
      await page.close();
    });

    it('reassignments and charts: what the controller lists, and live throughput and lag series', async () => {
      const page = await open(urls[2]!, 'reassignments');
      const [ongoing] = await client.admin().listPartitionReassignments();
      expect([ongoing?.topic, ongoing?.partition, ongoing?.addingReplicas]).to.deep.equal(['moving', 0, [2]]);
      const row = '#reassignments tr[data-topic="moving"][data-partition="0"]';
      expect(await page.$$eval(`${row} td`, (c) => c.map((x) => x.textContent))).to.deep.equal(['moving', '0', '1, 2', '2', '']);
      await shot(page, 'reassignments');
      await client.admin().alterPartitionReassignments({ partitions: [{ topic: 'moving', partition: 0, replicas: null }] });
      await until(page, 'the cancelled move gone', () => page.$$eval('#reassignments tbody tr', (r) => r.map((x) => x.textContent)), (v) => v.length === 1 && v[0] === 'no reassignment in progress');
      await page.evaluate(() => { (globalThis as unknown as InPage).location.hash = '#charts'; });
      const producer = client.producer({ lingerMs: 2 });
      const series = await until(page, 'an orders throughput series and an audit lag series', async () => {
        await producer.send({ topic: 'orders', messages: Array.from({ length: 5 }, (_, i) => ({ value: `chart-${i}` })) });
        const seriesOf = (id: string) => page.$$eval(`#${id} polyline`, (lines) => lines.map((l) => l.getAttribute('data-series')));
        return { throughput: await seriesOf('chart-throughput'), lag: await seriesOf('chart-lag') };
      }, (v) => v.throughput.includes('orders') && v.lag.includes('audit'));
      await producer.close();
      expect(series.lag).to.include('live');
      await shot(page, 'charts');
      await page.close();
    });

    it('produce form: refused on a read-only console, writes a record with --console-admin', async () => {
      const readOnly = await open(urls[2]!, 'produce');
      expect(await readOnly.$('#nav a[data-route="produce"]')).to.equal(null);
      expect(await text(readOnly, '#produce-refused')).to.contain('--console-admin');
      expect(await readOnly.$('#produce-form')).to.equal(null);
      await readOnly.close();

      const page = await open(urls[0]!, 'produce');
      expect(await page.$('#nav a[data-route="produce"]')).to.not.equal(null);
      await page.waitForSelector('#produce-topic option[value="events"]', { state: 'attached', timeout: VIEW_MS });
      await page.selectOption('#produce-topic', 'events');
      await page.fill('#produce-partition', '0');
      await page.fill('#produce-key', 'from-console');
      await page.fill('#produce-value', 'hello from the console');
      await page.click('#produce-form button[type="submit"]');
      await until(page, 'produce result', () => text(page, '#produce-result'), (v) => v.startsWith('written'));
      const offset = Number(await page.getAttribute('#produce-result', 'data-offset'));
      await shot(page, 'produce');
      await page.close();

      const reader = client.consumer();
      const got: string[] = [];
      reader.assign([{ topic: 'events', partition: 0, offset }]);
      await reader.run({ eachMessage: async ({ message }) => void got.push(`${message.key?.toString()}=${message.value?.toString()}`) });
      await waitFor('the console\'s record', () => got.length > 0, { timeoutMs: VIEW_MS, intervalMs: 50 });
      await reader.close();
      expect(got[0]).to.equal('from-console=hello from the console');
    });

    it('logs in with SCRAM through the browser client: a wrong password is refused, the right one opens a session', async () => {
      await client.admin().alterUserScramCredentials({ upsertions: [{ user: 'alice', mechanism: 'SCRAM-SHA-256', password: 'alice-secret' }] });
      const page = await open(urls[2]!, 'cluster');
      await page.click('#login-button');
      await page.selectOption('#login-mechanism', 'SCRAM-SHA-256');
      await page.fill('#login-user', 'alice');
      await page.fill('#login-password', 'wrong');
      await page.click('#login-form button[type="submit"]');
      await until(page, 'the refusal', () => text(page, '#login-error'), (v) => v.startsWith('not logged in'));
      expect(await text(page, '#login-error')).to.contain('SASL_AUTHENTICATION_FAILED');
      await shot(page, 'login');
      // SCRAM credentials reach every broker through the metadata log: retry until this one has them.
      await page.fill('#login-password', 'alice-secret');
      await until(page, 'a session as alice', async () => {
        if (await page.$('#login-form')) await page.click('#login-form button[type="submit"]');
        return page.$('#principal').then((e) => e?.textContent() ?? null);
      }, (v) => v === 'alice (SCRAM-SHA-256)');
      await page.waitForFunction(() => Number((globalThis as unknown as InPage).document.body.dataset.polls ?? 0) >= 1, undefined, { timeout: VIEW_MS });
      const q = await client.admin().describeQuorum();
      await until(page, 'the cluster view in the new session', () => text(page, '#quorum-leader'), (v) => v === String(q.leaderId));
      await page.close();
    });

    it('admin actions with --console-admin: elect preferred leaders, delete an empty group', async () => {
      const page = await open(urls[0]!, 'topics');
      await page.click('button.elect[data-topic="orders"]', { timeout: VIEW_MS });
      await until(page, 'election result', () => text(page, '#topics-action'), (v) => v.startsWith('orders:'));
      expect(await text(page, '#topics-action')).to.equal('orders: preferred leaders elected');
      const described = await client.admin().describeTopics({ topics: ['orders'] });
      for (const p of described[0]!.partitions) expect(p.leader).to.equal(p.replicas[0]);
      await page.evaluate(() => { (globalThis as unknown as InPage).location.hash = '#groups'; });
      await page.click('button.delete-group[data-group="audit"]', { timeout: VIEW_MS });
      await until(page, 'audit gone from the page', () => page.$$eval('article.group', (a) => a.map((x) => x.getAttribute('data-group'))), (v) => !v.includes('audit'));
      expect(await text(page, '#groups-action')).to.equal('audit deleted');
      expect((await client.admin().listGroups()).map((g) => g.groupId)).to.not.include('audit');
      // A live group offers no delete.
      expect(await page.$('button.delete-group[data-group="live"]')).to.equal(null);
      await page.close();
    });
  });
});
