// SIGTERM of a node is a controlled shutdown: the controller moves the
// leaderships it holds to other in-sync replicas while it still serves, so
// a producer writing with acks=all through it sees no failed send — the
// client follows the new leaders — and every record is there exactly once.
import { expect } from 'chai';
import { Client } from '../../src/index.js';
import { ProcessCluster, waitFor } from './harness.js';
import { DataClient } from './data-client.js';

const RECORDS = 600;

describe('controlled shutdown on SIGTERM', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  let client: Client;
  let data: DataClient;

  before(async () => {
    cluster = await ProcessCluster.create({ size: 3, brokers: true, logLevel: 'info' });
    cluster.startAll();
    data = new DataClient(() => cluster.nodes.filter((n) => n.running).map((n) => n.brokerUrl));
    await waitFor('three unfenced brokers', async () => (await data.metadata(null)).brokers.length === 3, { timeoutMs: 60_000 });
    client = new Client({ bootstrap: cluster.brokerUrls.join(','), retry: { retries: 20, initialRetryTimeMs: 50, maxRetryTimeMs: 500 } });
  });

  after(async () => {
    client?.close();
    await data?.close();
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  it('hands leadership over with no failed acks=all produce, and loses nothing', async () => {
    await data.createTopic('steady', { partitions: 3, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
    const leaders = await Promise.all([0, 1, 2].map((p) => data.partition('steady', p)));
    const victimId = leaders[0]!.leader;
    const victim = cluster.node(victimId);
    const producer = client.producer({ lingerMs: 1 });
    const failures: string[] = [];
    let acknowledged = 0;
    let stopped: Promise<number | null> | undefined;
    for (let i = 0; i < RECORDS; i++) {
      if (i === RECORDS / 3) stopped = victim.kill('SIGTERM');
      await producer.send({ topic: 'steady', messages: [{ key: `k${i % 3}`, value: `v${i}`, partition: i % 3 }] }).then(
        () => void acknowledged++,
        (err: Error) => void failures.push(`v${i}: ${err.message}`),
      );
    }
    await producer.close();
    expect(failures, failures.slice(0, 5).join('\n')).to.deep.equal([]);
    expect(acknowledged).to.equal(RECORDS);
    expect(await stopped, 'the node exits 0 after its controlled shutdown').to.equal(0);
    const after = await Promise.all([0, 1, 2].map((p) => data.partition('steady', p)));
    for (const p of after) expect(p.leader, `partition ${p.partition} led by the stopped node`).to.not.equal(victimId);
    const values: string[] = [];
    for (let p = 0; p < 3; p++) {
      const expected = Array.from({ length: RECORDS }, (_, i) => i).filter((i) => i % 3 === p).map((i) => `v${i}`);
      const read = await data.readAtLeast('steady', p, expected.length);
      expect(read.map((r) => r.value), `partition ${p}: exactly once, in order`).to.deep.equal(expected);
      values.push(...read.map((r) => r.value));
    }
    expect(values).to.have.length(RECORDS);
  });
});
