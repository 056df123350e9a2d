// Fast leader failover (issue 19; docs/replication.md, "Failover") on real
// `sluice server` processes on loopback. The broker session is set to ten
// minutes, far beyond every wait here, so the SIGKILLed leader can be fenced
// within the test only by the corroborated-death rule: its followers'
// fetches fail, their heartbeats report it, and the controller — which has
// also stopped hearing from it — fences it after broker.suspect.timeout.ms.
// What is asserted is correctness: the leadership moves to an ISR member at
// a higher epoch, the victim is fenced and out of the ISR, and every record
// acknowledged with acks=all before the kill, and the first one after it, is
// on the new leader in order — and on the victim once it returns and leads
// again. How fast
// that happens is bench/failover.bench.ts's business, not this test's.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/api-keys.js';
import type { ClusterDescription } from '../../src/controller/service/describe.js';
import { waitFor, type ProcessCluster } from './harness.js';
import { startDataCluster, type DataClient } from './data-client.js';

/** Longer than any wait below: a session expiry cannot be what moves the leadership. */
const SESSION_MS = 600_000;
const WAIT_MS = 60_000;
const TOPIC = 'fast-failover';

describe('fast leader failover on a real 3-node cluster', function () {
  this.timeout(240_000);
  let cluster: ProcessCluster;
  let client: DataClient;

  before(async () => {
    ({ cluster, client } = await startDataCluster({ size: 3, sessionTimeoutMs: SESSION_MS }));
  });

  after(async () => {
    await client?.close();
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  async function produceAcked(tag: string, n: number): Promise<string[]> {
    const acked: string[] = [];
    for (let i = 0; i < n; i++) {
      const values = Array.from({ length: 10 }, (_, j) => `${tag}-${i}-${j}`);
      const r = await client.produce(TOPIC, 0, values, -1);
      expect(r.errorCode, r.errorMessage ?? '').to.equal(0);
      acked.push(...values);
    }
    return acked;
  }

  function fencedIn(d: ClusterDescription, id: number): boolean | undefined {
    return d.brokers.find((b) => b.id === id)?.fenced;
  }

  it('a SIGKILLed leader is fenced on its followers\' word within its session; no acknowledged record is lost', async () => {
    const quorum = cluster.client();
    const controllerId = (await cluster.waitForLeader(quorum, { timeoutMs: WAIT_MS })).id;
    // A leader that is not the active controller: the controller keeps its view of every session.
    const victimId = cluster.nodes.map((n) => n.id).find((id) => id !== controllerId)!;
    const others = cluster.nodes.map((n) => n.id).filter((id) => id !== victimId);
    await client.createTopic(TOPIC, { assignments: [[victimId, ...others]], configs: { 'min.insync.replicas': '2' } });
    const before = await client.waitForPartition(TOPIC, 0, 'led by the victim with a full ISR', (p) => p.leader === victimId && p.isr.length === 3, WAIT_MS);
    const acked = await produceAcked('before', 10);

    await cluster.node(victimId).kill('SIGKILL');
    let attempt = 0;
    const first = await waitFor('an acks=all write acknowledged after the kill', async () => {
      const value = `after-${attempt++}`;
      try {
        const r = await client.produce(TOPIC, 0, [value], -1);
        return r.errorCode === 0 ? value : undefined;
      } catch {
        return undefined; // the dead leader's connection, or no leader yet: retry
      }
    }, { timeoutMs: WAIT_MS, intervalMs: 20 });

    const after = await client.partition(TOPIC, 0);
    expect(others, 'the new leader was in the ISR').to.include(after.leader);
    expect(after.leaderEpoch).to.be.greaterThan(before.leaderEpoch);
    expect(after.isr).to.not.include(victimId);
    const d = await quorum.controller<ClusterDescription>('describeCluster', {});
    expect(fencedIn(d, victimId), 'the victim is fenced though its session has minutes left').to.equal(true);
    for (const id of others) expect(fencedIn(d, id), `broker ${id} (alive) stays unfenced`).to.equal(false);

    const onNewLeader = (await client.readAtLeast(TOPIC, 0, acked.length + 1)).map((r) => r.value);
    expect(onNewLeader.slice(0, acked.length), 'every record acknowledged before the kill, in order').to.deep.equal(acked);
    // Writes refused after the kill may or may not be in the log (a timed-out one may be); only ours, and the acknowledged one.
    const tail = onNewLeader.slice(acked.length);
    expect(tail.every((v) => v.startsWith('after-')), `unexpected records: ${tail.join()}`).to.equal(true);
    expect(tail).to.include(first);

    cluster.node(victimId).start();
    await client.waitForPartition(TOPIC, 0, 'the victim back in the ISR', (p) => p.isr.includes(victimId), WAIT_MS);
    const more = await produceAcked('rejoined', 2);
    // Its preferred leadership back (reads are served by leaders only), then read what it holds.
    const conn = await client.connection(cluster.node(others[0]!).brokerUrl);
    await waitFor('the victim leading again', async () => {
      await conn.admin(ApiKey.ElectLeaders, { partitions: [{ topic: TOPIC, partition: 0 }] });
      return (await client.partition(TOPIC, 0)).leader === victimId;
    }, { timeoutMs: WAIT_MS, intervalMs: 200 });
    const victimUrl = cluster.node(victimId).brokerUrl;
    const onVictim = (await client.readAtLeast(TOPIC, 0, onNewLeader.length + more.length, victimUrl)).map((r) => r.value);
    expect(onVictim.slice(0, onNewLeader.length), 'the returned victim holds what the new leader holds').to.deep.equal(onNewLeader);
    expect(onVictim.slice(-more.length)).to.deep.equal(more);
  });
});
