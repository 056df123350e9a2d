// The Client core against a real 3-node cluster on loopback: bootstrap
// parsing, the metadata cache and its refresh, leader lookup that follows a
// leader change, typed errors, and the retry rule (retriable errors only,
// bounded, with jittered exponential backoff).
import { expect } from 'chai';
import { Client, DEFAULT_RETRY, backoffMs, parseBootstrap } from '../../src/client/client.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { encodeMessages } from '../../src/client/records.js';
import { Errors, SluiceError, isSluiceError } from '../../src/util/errors.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { SeededRng } from '../../src/util/rng.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { ProcessCluster, waitFor } from '../integration/harness.js';
import { DataClient } from '../integration/data-client.js';

describe('client core', () => {
  describe('options', () => {
    it('parses bootstrap lists and refuses what is not ws://host:port', () => {
      expect(parseBootstrap('ws://a:1, ws://b:2')).to.deep.equal(['ws://a:1', 'ws://b:2']);
      expect(parseBootstrap(['ws://a:1'])).to.deep.equal(['ws://a:1']);
      for (const bad of ['', ' , ', 'http://a:1', 'a:1']) {
        expect(() => parseBootstrap(bad), bad).to.throw(SluiceError).with.property('code', Errors.INVALID_CONFIG.code);
      }
      expect(() => new Client({ bootstrap: 'ws://a:1', webSocketFactory: nodeWebSocketFactory, retry: { retries: -1 } })).to.throw(/retry/);
    });

    it('backs off exponentially with full jitter, capped', () => {
      const r = { retries: 5, initialRetryTimeMs: 100, maxRetryTimeMs: 1000 };
      expect(backoffMs(0, r, () => 1)).to.equal(100);
      expect(backoffMs(3, r, () => 1)).to.equal(800);
      expect(backoffMs(10, r, () => 1)).to.equal(1000);
      expect(backoffMs(10, r, () => 0)).to.equal(1);
      expect(backoffMs(2, r, () => 0.5)).to.equal(200);
    });

    it('retries only retriable errors, at most `retries` times', async () => {
      const client = new Client({ bootstrap: 'ws://127.0.0.1:1', webSocketFactory: nodeWebSocketFactory, retry: { retries: 2, initialRetryTimeMs: 1, maxRetryTimeMs: 2 } });
      let calls = 0;
      const retriable = await client.retry('t', async () => {
        calls++;
        throw new SluiceError(Errors.LEADER_NOT_AVAILABLE);
      }).catch((e: unknown) => e);
      expect(calls).to.equal(3);
      expect(isSluiceError(retriable) && retriable.is(Errors.LEADER_NOT_AVAILABLE)).to.equal(true);
      calls = 0;
      const fatal = await client.retry('t', async () => {
        calls++;
        throw new SluiceError(Errors.INVALID_TOPIC);
      }).catch((e: unknown) => e);
      expect(calls).to.equal(1);
      expect(isSluiceError(fatal) && fatal.is(Errors.INVALID_TOPIC)).to.equal(true);
      expect(await client.retry('t', async (n) => {
        if (n < 1) throw new SluiceError(Errors.NOT_LEADER_OR_FOLLOWER);
        return 'ok';
      })).to.equal('ok');
      expect(DEFAULT_RETRY.retries).to.be.greaterThan(0);
      client.close();
    });

    it('waits out capped, jittered backoff on the injected scheduler and RNG', async () => {
      const manual = new ManualScheduler();
      const delays: number[] = [];
      const scheduler = { schedule: (ms: number, fn: () => void) => { delays.push(ms); return manual.schedule(ms, fn); } };
      const rng = new SeededRng(1);
      rng.next = () => 0.999;
      const client = new Client({
        bootstrap: 'ws://127.0.0.1:1', webSocketFactory: nodeWebSocketFactory, scheduler, rng,
        retry: { retries: 5, initialRetryTimeMs: 100, maxRetryTimeMs: 300 },
      });
      const done = client.retry('t', async (n) => {
        if (n < 4) throw new SluiceError(Errors.NETWORK_EXCEPTION, 'connection lost');
        return n;
      });
      for (let i = 0; i < 4; i++) {
        await waitFor('the next backoff to be scheduled', () => delays.length > i, { timeoutMs: 2_000, intervalMs: 1 });
        manual.advance(300);
      }
      expect(await done).to.equal(4);
      // 100, 200, then capped at 300, each times the RNG's 0.999 (rounded); no real timer ran.
      expect(delays).to.deep.equal([100, 200, 300, 300]);
      client.close();
    });
  });

  describe('on a real cluster', function () {
    this.timeout(120_000);
    let cluster: ProcessCluster;
    let client: Client;
    let data: DataClient;

    before(async () => {
      cluster = await ProcessCluster.create({ size: 3, brokers: true, logLevel: 'warn' });
      cluster.startAll();
      data = new DataClient(() => cluster.nodes.filter((n) => n.running).map((n) => n.brokerUrl));
      await waitFor('three unfenced brokers', async () => (await data.metadata(null)).brokers.length === 3, { timeoutMs: 60_000 });
      client = new Client({ bootstrap: cluster.brokerUrls, webSocketFactory: nodeWebSocketFactory, retry: { initialRetryTimeMs: 20, maxRetryTimeMs: 200, retries: 50 } });
    });

    after(async () => {
      client?.close();
      await data?.close();
      await cluster?.cleanup();
    });

    it('knows the brokers and a topic\'s partitions; an unknown topic is a typed retriable error', async () => {
      await data.createTopic('known', { partitions: 3, replicationFactor: 3 });
      const t = await client.topic('known');
      expect(t.partitions).to.have.length(3);
      expect(client.clusterInfo.brokers.size).to.equal(3);
      const err = await client.topic('nope').catch((e: unknown) => e);
      expect(isSluiceError(err) && err.is(Errors.UNKNOWN_TOPIC_OR_PARTITION)).to.equal(true);
      expect((err as SluiceError).retriable).to.equal(true);
      expect((await client.listTopics()).map((x) => x.name)).to.include('known');
    });

    it('follows a leader change after a NOT_LEADER_OR_FOLLOWER', async () => {
      await data.createTopic('moving', { assignments: [[1, 2, 3]] });
      const first = await client.leaderFor('moving', 0);
      expect(first.brokerId).to.equal(1);
      // Move leadership to broker 2 by reassigning the preferred order and electing it.
      const conn = await client.anyConnection();
      await conn.admin(ApiKey.AlterPartitionReassignments, { partitions: [{ topic: 'moving', partition: 0, replicas: [2, 3, 1] }] });
      await waitFor('broker 2 to lead moving-0', async () => {
        await conn.admin(ApiKey.ElectLeaders, { partitions: [{ topic: 'moving', partition: 0 }] });
        return (await data.partition('moving', 0)).leader === 2;
      }, { timeoutMs: 30_000, intervalMs: 100 });
      // The cache still says broker 1; a produce there fails retriably and the retry finds broker 2.
      const leaders: number[] = [];
      await client.retry('produce', async () => {
        const l = await client.leaderFor('moving', 0);
        leaders.push(l.brokerId);
        const res = await l.conn.produce({ acks: -1, timeoutMs: 5000, topics: [{ name: 'moving', partitions: [{ partition: 0, records: encodeMessages([{ value: 'v' }], { timestampMs: Date.now() }) }] }] });
        const p = res.topics[0]!.partitions[0]!;
        if (p.errorCode !== 0) throw new SluiceError(Errors.NOT_LEADER_OR_FOLLOWER, p.errorMessage ?? undefined);
        return p.baseOffset;
      });
      expect(leaders[0]).to.equal(1);
      expect(leaders.at(-1)).to.equal(2);
    });
  });
});
