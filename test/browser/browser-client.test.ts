// The browser bundle (dist/browser/sluice.js) in headless Chromium against a
// real 3-node cluster: pages produce and consume as group members, share
// partitions, take over a closed page's partitions within the session
// timeout, and ride through a broker SIGKILLed mid-stream without losing an
// acknowledged record. Plus the static check that the bundle imports nothing
// from Node. One cluster and one browser for the whole file.

/* eslint-disable @typescript-eslint/no-explicit-any -- page-side code drives the bundle as an untyped module */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { build } from 'esbuild';
import { Client } from '../../src/index.js';
import { chromiumSkipReason, launchChromium, type Chromium } from './chromium.js';
import { connect, createTopic, startBrokerCluster } from '../integration/broker-kit.js';
import { waitFor, type ProcessCluster } from '../integration/harness.js';

const BUNDLE = 'dist/browser/sluice.js';
const TOPIC = 'browser-events';
const PARTITIONS = 4;
const GROUP = 'browser-group';
const SESSION_TIMEOUT_MS = 6_000;

describe('browser bundle: imports nothing from Node', () => {
  it('has no node: import, require( or Buffer in its own code, and no node: import or require( at all', async () => {
    const full = readFileSync(BUNDLE, 'utf8');
    expect(full).not.to.match(/["'`]node:[a-z_]+["'`]/);
    expect(full).not.to.match(/\brequire\(/);
    // Our own modules, with the two libraries left out: msgpackr feature-detects Buffer (typeof guard) and
    // falls back to Uint8Array, which is what runs in a browser; nothing of ours may name Buffer at all.
    const own = await build({
      entryPoints: ['dist/src/browser.js'], bundle: true, format: 'esm', platform: 'browser', write: false,
      external: ['msgpackr', 'fflate'], logLevel: 'silent',
    });
    const text = own.outputFiles[0]!.text;
    expect(text.match(/\bBuffer\b/g) ?? [], 'Buffer in the bundle').to.deep.equal([]);
    expect(text).not.to.match(/from\s*["']node:/);
  });
});

/** Script run in each page: loads the bundle as a module and keeps state on window. */
const PAGE_API = `
window.state = { seen: [], acked: [], errors: [], assignment: [], joins: 0, log: [] };
`;

describe('browser client in Chromium against a 3-node cluster', function () {
  this.timeout(120_000);
  let cluster: ProcessCluster;
  let chromium: Chromium;
  let server: Server;
  let baseUrl: string;
  let bootstrap: string[];
  const pages: Page[] = [];

  before(async function () {
    const reason = chromiumSkipReason();
    if (reason) {
      console.log(`      ${reason}`);
      this.skip();
    }
    const bundle = readFileSync(BUNDLE);
    server = createServer((req, res) => {
      if (req.url === '/sluice.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end(bundle);
      } else {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html><title>sluice</title>');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    cluster = await startBrokerCluster(3);
    bootstrap = cluster.brokerUrls;
    const conn = await connect(bootstrap[0]!);
    try {
      await createTopic(conn, TOPIC, PARTITIONS, 3);
    } finally {
      conn.close();
    }
    chromium = await launchChromium();
  });

  after(async () => {
    for (const p of pages) await p.close().catch(() => undefined);
    await chromium?.close();
    await cluster?.cleanup();
    await new Promise((resolve) => server?.close(resolve));
  });

  async function openPage(): Promise<Page> {
    const page = await chromium.context.newPage();
    page.on('pageerror', (err) => console.log(`      page error: ${err.message}`));
    await page.goto(baseUrl);
    await page.evaluate(PAGE_API);
    await page.evaluate(async (url) => {
      (globalThis as unknown as { sluice: unknown }).sluice = await import(url);
    }, `${baseUrl}/sluice.js`);
    pages.push(page);
    return page;
  }

  /** Starts a group consumer in `page`, recording every value it sees and its assignment. */
  async function startConsumer(page: Page): Promise<void> {
    await page.evaluate(async ({ bootstrap, topic, group, sessionTimeoutMs }) => {
      const w = globalThis as unknown as { sluice: any; state: any; consumer: any };
      const note = (level: string) => (obj: object, msg?: string) => w.state.log.push(`${level} ${msg ?? ''} ${JSON.stringify(obj)}`);
      const logger = { debug() {}, info: note('info'), warn: note('warn'), error: note('error') };
      const client = new w.sluice.Client({ bootstrap, logger, clientId: 'page-consumer', retry: { initialRetryTimeMs: 100, maxRetryTimeMs: 1000 } });
      const consumer = client.consumer({ groupId: group, sessionTimeoutMs, heartbeatIntervalMs: 500, autoCommitIntervalMs: 300, maxWaitMs: 200 });
      w.consumer = consumer;
      consumer.on('group.join', () => { w.state.joins++; w.state.assignment = consumer.assignment(); });
      consumer.on('crash', (e: any) => w.state.errors.push(String(e.error?.message ?? e.error)));
      await consumer.subscribe({ topics: topic, fromBeginning: true });
      void consumer.run({
        eachMessage: async ({ message }: any) => {
          w.state.seen.push(new TextDecoder().decode(message.value));
          w.state.assignment = consumer.assignment();
        },
      });
    }, { bootstrap, topic: TOPIC, group: GROUP, sessionTimeoutMs: SESSION_TIMEOUT_MS });
  }

  async function produce(page: Page, from: number, count: number): Promise<void> {
    await page.evaluate(async ({ bootstrap, topic, from, count }) => {
      const w = globalThis as unknown as { sluice: any; state: any; producer: any };
      if (!w.producer) {
        const client = new w.sluice.Client({ bootstrap, clientId: 'page-producer', retry: { initialRetryTimeMs: 100, maxRetryTimeMs: 1000, retries: 30 } });
        w.producer = client.producer({ lingerMs: 5 });
      }
      for (let i = from; i < from + count; i += 50) {
        const messages = [];
        for (let j = i; j < Math.min(i + 50, from + count); j++) messages.push({ key: `k${j}`, value: `v${j}` });
        try {
          await w.producer.send({ topic, messages });
          for (const m of messages) w.state.acked.push(m.value);
        } catch (err) {
          w.state.errors.push(String((err as Error).message));
        }
      }
    }, { bootstrap, topic: TOPIC, from, count });
  }

  const stateOf = (page: Page): Promise<{ seen: string[]; acked: string[]; errors: string[]; assignment: Array<{ topic: string; partition: number }> }> =>
    page.evaluate(() => (globalThis as unknown as { state: any }).state);

  async function committedTotal(): Promise<number> {
    const client = new Client({ bootstrap });
    try {
      const topics = await client.groupAdmin().fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
      return topics.flatMap((t) => t.partitions).reduce((sum, p) => sum + Math.max(0, p.offset), 0);
    } finally {
      await client.close();
    }
  }

  let producerPage: Page;
  let consumerB: Page;
  let consumerC: Page;

  it('a page produces 1,000 records and a second page reads them as a group member and commits', async () => {
    producerPage = await openPage();
    await produce(producerPage, 0, 1000);
    const produced = await stateOf(producerPage);
    expect(produced.errors).to.deep.equal([]);
    expect(produced.acked).to.have.length(1000);
    consumerB = await openPage();
    await startConsumer(consumerB);
    await waitFor('page B to read all 1,000 records', async () => (await stateOf(consumerB)).seen.length >= 1000, { timeoutMs: 30_000, intervalMs: 200 });
    const b = await stateOf(consumerB);
    expect(new Set(b.seen)).to.deep.equal(new Set(produced.acked));
    expect(b.assignment.map((tp) => tp.partition).sort()).to.deep.equal([0, 1, 2, 3]);
    await waitFor('page B to commit all 1,000', async () => (await committedTotal()) === 1000, { timeoutMs: 20_000, intervalMs: 300 });
  });

  it('a third page joins the group and the partitions are shared', async () => {
    consumerC = await openPage();
    await startConsumer(consumerC);
    await waitFor('B and C to share the four partitions', async () => {
      const [b, c] = [await stateOf(consumerB), await stateOf(consumerC)];
      const all = [...b.assignment, ...c.assignment].map((tp) => tp.partition).sort();
      return b.assignment.length > 0 && c.assignment.length > 0 && JSON.stringify(all) === '[0,1,2,3]';
    }, { timeoutMs: 30_000, intervalMs: 200 });
  });

  it('a closed page\'s partitions go to the other within the session timeout', async () => {
    await consumerC.close(); // no LeaveGroup: the tab is simply gone
    pages.splice(pages.indexOf(consumerC), 1);
    const closedAt = Date.now();
    await waitFor('B to own all four partitions again', async () => (await stateOf(consumerB)).assignment.length === PARTITIONS,
      { timeoutMs: SESSION_TIMEOUT_MS + 15_000, intervalMs: 200 });
    console.log(`      B took over ${Date.now() - closedAt} ms after the tab closed (session timeout ${SESSION_TIMEOUT_MS} ms)`);
  });

  it('a broker SIGKILLed mid-stream: the pages go on and no acknowledged record is lost', async () => {
    const producing = produce(producerPage, 1000, 600);
    await waitFor('some of the second stream acknowledged', async () => (await stateOf(producerPage)).acked.length > 1100, { timeoutMs: 20_000, intervalMs: 50 });
    await cluster.node(2).kill('SIGKILL');
    await producing;
    const p = await stateOf(producerPage);
    try {
      await waitFor('page B to read every acknowledged record', async () => {
        const seen = new Set((await stateOf(consumerB)).seen);
        return p.acked.every((v) => seen.has(v));
      }, { timeoutMs: 30_000, intervalMs: 300 });
    } catch (err) {
      const b = await stateOf(consumerB);
      const seen = new Set(b.seen);
      const missing = p.acked.filter((v) => !seen.has(v));
      console.log(`      acked ${p.acked.length}, seen ${b.seen.length}, missing ${missing.length} (${missing.slice(0, 5).join(',')}), assignment ${JSON.stringify(b.assignment)}`);
      console.log(`      producer errors: ${p.errors.slice(0, 3).join('; ')}; consumer errors: ${b.errors.slice(0, 3).join('; ')}`);
      console.log(`      consumer log: ${(b as unknown as { log: string[] }).log.slice(-8).join('\n        ')}`);
      throw err;
    }
    console.log(`      ${p.acked.length} acknowledged, ${p.errors.length} send errors: ${p.errors.slice(0, 2).join('; ')}`);
    expect(p.acked.length).to.be.greaterThan(1100);
  });
});
