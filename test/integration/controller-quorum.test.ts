// The controller on three real `sluice server --roles controller` processes:
// broker registration and heartbeats over the controller API, topic creation,
// fencing after the session timeout, and controller failover after SIGKILL of
// the active controller — with every node ending on the same metadata.
// (Brokers are played by this test through the controller API until the
// broker role exists; what is under test is the controller.)
import { expect } from 'chai';
import { ProcessCluster, waitFor } from './harness.js';
import type { QuorumClient } from '../../src/raft-node/quorum-client.js';
import type { ClusterDescription } from '../../src/controller/service/describe.js';
import type { SluiceError } from '../../src/util/errors.js';

interface Registered {
  readonly brokerId: number;
  brokerEpoch: number;
}

describe('controller quorum of three real processes', function () {
  this.timeout(120_000);
  let cluster: ProcessCluster;
  let client: QuorumClient;
  const brokers: Registered[] = [];
  let heartbeating = new Set<number>();
  let heartbeatLoop: Promise<void> | undefined;
  let stopped = false;

  const describe_ = () => client.controller<ClusterDescription>('describeCluster', {});

  async function heartbeat(b: Registered): Promise<{ errorCode: number; isFenced: boolean }> {
    const desc = await describe_();
    return client.controller('brokerHeartbeat', { brokerId: b.brokerId, brokerEpoch: b.brokerEpoch, currentMetadataOffset: desc.metadataOffset });
  }

  before(async () => {
    cluster = await ProcessCluster.create({ size: 3 });
    cluster.startAll();
    client = cluster.client();
    await cluster.waitForLeader(client, { timeoutMs: 20_000 });
  });

  after(async () => {
    stopped = true;
    await heartbeatLoop?.catch(() => undefined);
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(`--- last output of the nodes ---\n${cluster.dumpLogs()}`);
  });

  it('registers brokers fenced, unfences them once caught up, and creates topics', async () => {
    const set = await client.controller<{ resources: Array<{ errorCode: number }> }>('alterConfigs', {
      resources: [{ resourceType: 'cluster', resourceName: '', set: { 'broker.session.timeout.ms': '3000' } }],
    });
    expect(set.resources[0]!.errorCode).to.equal(0);
    const clusterId = (await describe_()).clusterId;
    expect(clusterId).to.be.a('string');
    for (const brokerId of [1, 2, 3]) {
      const res = await client.controller<{ errorCode: number; brokerEpoch: number }>('registerBroker', {
        brokerId, incarnationId: `it-${brokerId}`, clusterId, endpoints: [{ name: 'CLIENT', url: `ws://127.0.0.1:${19090 + brokerId}` }],
      });
      expect(res.errorCode).to.equal(0);
      brokers.push({ brokerId, brokerEpoch: res.brokerEpoch });
    }
    expect((await describe_()).brokers.every((b) => b.fenced)).to.equal(true);
    for (const b of brokers) expect((await heartbeat(b)).isFenced).to.equal(false);
    heartbeating = new Set([1, 2, 3]);
    heartbeatLoop = (async () => {
      while (!stopped) {
        for (const b of brokers) if (heartbeating.has(b.brokerId)) await heartbeat(b).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 300));
      }
    })();

    const created = await client.controller<{ topics: Array<{ name: string; errorCode: number }> }>('createTopics', {
      topics: [{ name: 'orders', numPartitions: 6, replicationFactor: 3 }, { name: 'bad topic!', numPartitions: 1, replicationFactor: 1 }],
    });
    expect(created.topics.map((t) => t.errorCode)).to.deep.equal([0, 17]);
    const desc = await describe_();
    const orders = desc.topics.find((t) => t.name === 'orders')!;
    expect(orders.partitions).to.have.length(6);
    for (const p of orders.partitions) expect(p.isr).to.have.length(3);
    const plan = await client.controller<{ errorCode: number; partitions: Array<{ moved: boolean }> }>('generateReassignmentPlan', { topics: ['orders'], brokers: [1, 2, 3] });
    expect(plan.errorCode).to.equal(0);
    expect(plan.partitions.filter((p) => p.moved), 'a balanced topic needs no moves').to.deep.equal([]);
    const unknown = await client.controller<{ errorCode: number }>('generateReassignmentPlan', { topics: ['orders'], brokers: [1, 2, 9] });
    expect(unknown.errorCode).to.equal(39);
  });

  it('rejects malformed controller calls and raw proposals with INVALID_REQUEST and keeps serving', async () => {
    const bad = (await client.controller('createTopics', { topics: 'nope' }).catch((e) => e)) as SluiceError;
    expect(bad.errorName).to.equal('INVALID_REQUEST');
    const unknown = (await client.controller('noSuchApi', {}).catch((e) => e)) as SluiceError;
    expect(unknown.errorName).to.equal('INVALID_REQUEST');
    // Only controller commands write the metadata log: a raw entry would not decode.
    const raw = (await client.propose(Buffer.from('not a metadata record')).catch((e) => e)) as SluiceError;
    expect(raw.errorName).to.equal('INVALID_REQUEST');
    expect((await describe_()).topics.length).to.be.greaterThan(0);
  });

  it('fences a broker whose heartbeats stop and moves its leaderships away', async () => {
    heartbeating.delete(3);
    const fenced = await waitFor('broker 3 fenced with no leaderships or ISR places', async () => {
      const d = await describe_();
      const b3 = d.brokers.find((b) => b.id === 3)!;
      const clean = d.topics.every((t) => t.partitions.every((p) => p.leader !== 3 && !p.isr.includes(3)));
      return b3.fenced && clean ? d : undefined;
    }, { timeoutMs: 20_000, intervalMs: 200 });
    expect(fenced.brokers.filter((b) => !b.fenced).map((b) => b.id)).to.deep.equal([1, 2]);
  });

  it('fails over the active controller after SIGKILL; the new one accepts CreateTopics and nodes converge', async () => {
    const leader = await cluster.waitForLeader(client, { timeoutMs: 20_000 });
    await cluster.node(leader.id).kill('SIGKILL');
    const created = await waitFor('CreateTopics accepted by a new controller', async () => {
      try {
        return await client.controller<{ topics: Array<{ errorCode: number }> }>('createTopics', { topics: [{ name: 'after-failover', numPartitions: 2, replicationFactor: 2 }] });
      } catch {
        return undefined;
      }
    }, { timeoutMs: 20_000, intervalMs: 100 });
    expect(created.topics[0]!.errorCode).to.equal(0);
    const desc = await describe_();
    expect(desc.topics.map((t) => t.name).sort()).to.deep.equal(['after-failover', 'orders']);
    expect(desc.brokers.filter((b) => !b.fenced).map((b) => b.id), 'failover does not fence live brokers').to.deep.equal([1, 2]);

    cluster.node(leader.id).start();
    await waitFor('the restarted node holds the same metadata', async () => {
      const statuses = await cluster.statuses(client);
      const sms = [...statuses.values()].map((s) => JSON.stringify({ topics: s.stateMachine.topics, brokers: s.stateMachine.brokers, offset: s.stateMachine.imageOffset }));
      return statuses.size === 3 && new Set(sms).size === 1 ? true : undefined;
    }, { timeoutMs: 30_000, intervalMs: 200 });
  });
});
