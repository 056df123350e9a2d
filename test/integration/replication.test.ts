// Replication as users rely on it, on a real cluster of five combined
// `sluice server` processes on loopback (five voters, so the metadata quorum
// survives two stopped nodes): acks=all to RF=3 reads back whole and in
// order; a SIGSTOPped follower leaves the ISR and acks=all goes on with
// min.insync.replicas=2; a second one makes acks=all refuse with
// NOT_ENOUGH_REPLICAS and nothing unreplicated is acknowledged; SIGCONT brings
// both back into the ISR; a SIGKILLed leader is replaced, loses no
// acknowledged record, and on return truncates the tail it wrote alone
// (unacknowledged by acks=all) that the new leader never had.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { Errors } from '../../src/util/errors.js';
import { ProcessCluster, waitFor } from './harness.js';
import { DataClient, startDataCluster } from './data-client.js';

const LAG_MS = 1500;
// Short enough for quick failovers, long enough that a controller election under a loaded
// 2-core test run does not fence every broker before heartbeats find the new controller.
const SESSION_MS = 6000;

describe('replication on a real 5-node cluster', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  let client: DataClient;

  before(async () => {
    ({ cluster, client } = await startDataCluster({ size: 5, extraArgs: ['--replica-lag-time-max-ms', String(LAG_MS)], sessionTimeoutMs: SESSION_MS }));
  });

  after(async () => {
    await client?.close();
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  /** Produces `n` batches of `size` values named `${tag}-i-j` with acks=all; returns the values acknowledged. */
  async function produceAcked(topic: string, tag: string, n: number, size = 10): Promise<string[]> {
    const acked: string[] = [];
    for (let i = 0; i < n; i++) {
      const values = Array.from({ length: size }, (_, j) => `${tag}-${i}-${j}`);
      const r = await client.produce(topic, 0, values, -1);
      expect(r.errorCode, r.errorMessage ?? '').to.equal(0);
      acked.push(...values);
    }
    return acked;
  }

  function values(records: Array<{ offset: number; value: string }>): string[] {
    records.forEach((r, i) => expect(r.offset).to.equal(i));
    return records.map((r) => r.value);
  }

  it('reads back everything produced with acks=all to RF=3, in order', async () => {
    await client.createTopic('whole', { partitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
    const acked = await produceAcked('whole', 'w', 50, 20);
    expect(values(await client.readAll('whole', 0))).to.deep.equal(acked);
  });

  it('SIGSTOPped followers leave the ISR; acks=all needs min.insync.replicas; SIGCONT brings them back', async () => {
    await client.createTopic('isr', { assignments: [[1, 2, 3]], configs: { 'min.insync.replicas': '2' } });
    const acked = await produceAcked('isr', 'a', 5);
    const [f1, f2] = [cluster.node(2), cluster.node(3)];
    process.kill(f1.pid!, 'SIGSTOP');
    try {
      await client.waitForPartition('isr', 0, 'the ISR without node 2', (p) => p.isr.length === 2 && !p.isr.includes(2));
      acked.push(...(await produceAcked('isr', 'b', 5)));
      process.kill(f2.pid!, 'SIGSTOP');
      try {
        await client.waitForPartition('isr', 0, 'the ISR down to the leader', (p) => p.isr.length === 1);
        const refused = await client.produce('isr', 0, ['refused'], -1);
        expect(refused.errorCode).to.equal(Errors.NOT_ENOUGH_REPLICAS.code);
        const one = await client.produce('isr', 0, ['acks-one'], 1);
        expect(one.errorCode).to.equal(0);
        acked.push('acks-one');
      } finally {
        process.kill(f2.pid!, 'SIGCONT');
      }
    } finally {
      process.kill(f1.pid!, 'SIGCONT');
    }
    await client.waitForPartition('isr', 0, 'all three replicas back in the ISR', (p) => p.isr.length === 3, 60_000);
    acked.push(...(await produceAcked('isr', 'c', 5)));
    expect(values(await client.readAtLeast('isr', 0, acked.length))).to.deep.equal(acked);
  });

  it('SIGKILL of the leader loses no acknowledged record; the old leader truncates its unreplicated tail on return', async () => {
    await client.createTopic('failover', { assignments: [[3, 4, 5]], configs: { 'min.insync.replicas': '2' } });
    const before = await client.partition('failover', 0);
    expect(before.leader).to.equal(3);
    const acked = await produceAcked('failover', 'x', 10);
    const [leader, f1, f2] = [cluster.node(3), cluster.node(4), cluster.node(5)];
    // The followers pause (staying in the ISR: far shorter than the lag
    // time). A first acks=1 batch answers the fetches they had in flight;
    // after it no fetch of theirs is waiting, so the second batch stays on
    // the leader alone — which then dies before it can shrink the ISR.
    process.kill(f1.pid!, 'SIGSTOP');
    process.kill(f2.pid!, 'SIGSTOP');
    const flush = Array.from({ length: 10 }, (_, i) => `flush-${i}`);
    const lonelyValues = Array.from({ length: 10 }, (_, i) => `lonely-${i}`);
    try {
      expect((await client.produce('failover', 0, flush, 1)).errorCode).to.equal(0);
      // As many records as the new leader's batches hold, so batch boundaries
      // line up and only leader-epoch truncation can remove them.
      expect((await client.produce('failover', 0, lonelyValues, 1)).errorCode).to.equal(0);
      await leader.kill('SIGKILL');
    } finally {
      process.kill(f1.pid!, 'SIGCONT');
      process.kill(f2.pid!, 'SIGCONT');
    }
    const after = await client.waitForPartition('failover', 0, 'a new leader', (p) => p.leader !== 3 && p.leader >= 0 && p.leaderEpoch > before.leaderEpoch, 60_000);
    expect([4, 5]).to.include(after.leader);
    // acks=all batches on the new leader move its high watermark past whatever it holds.
    const more = await produceAcked('failover', 'y', 10);
    const onNewLeader = values(await client.readAtLeast('failover', 0, acked.length + more.length));
    expect(onNewLeader.slice(0, acked.length)).to.deep.equal(acked);
    expect(onNewLeader.slice(-more.length)).to.deep.equal(more);
    // The acks=1 batch the followers may have fetched before pausing survives whole or not at all.
    const between = onNewLeader.slice(acked.length, -more.length);
    expect(between.length === 0 || between.join() === flush.join(), `unexpected records: ${between.join()}`).to.equal(true);
    expect(onNewLeader).to.not.include('lonely-0');
    leader.start();
    await client.waitForPartition('failover', 0, 'node 3 back in the ISR', (p) => p.isr.includes(3), 60_000);
    const conn = await client.connection(cluster.node(4).brokerUrl);
    await waitFor('node 3 leading again', async () => {
      await conn.admin(ApiKey.ElectLeaders, { partitions: [{ topic: 'failover', partition: 0 }] });
      return (await client.partition('failover', 0)).leader === 3;
    }, { timeoutMs: 30_000, intervalMs: 200 });
    const onOldLeader = values(await client.readAtLeast('failover', 0, onNewLeader.length, cluster.node(3).brokerUrl));
    expect(onOldLeader).to.deep.equal(onNewLeader);
  });
});
