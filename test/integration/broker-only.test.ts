// Broker-only nodes, as an operator adds them to a running cluster: they
// follow the metadata log as Raft observers (never voting), register, get
// unfenced once caught up, host replicas and lead partitions; a controller
// call that reaches one is answered NOT_CONTROLLER and followed to the active
// controller; a SIGKILLed broker-only leader is replaced without losing
// acknowledged records.
import { expect } from 'chai';
import { QuorumClient } from '../../src/raft-node/quorum-client.js';
import { ProcessCluster, waitFor } from './harness.js';
import { DataClient, startDataCluster } from './data-client.js';

describe('broker-only nodes (metadata observers) on a real cluster', function () {
  this.timeout(120_000);
  let cluster: ProcessCluster;
  let client: DataClient;

  before(async () => {
    ({ cluster, client } = await startDataCluster({ size: 3, brokerOnly: 2, extraArgs: ['--replica-lag-time-max-ms', '1500'] }));
  });

  after(async () => {
    await client?.close();
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  it('follow the metadata log as observers and never vote', async () => {
    const quorum = cluster.client();
    const leader = await cluster.waitForLeader(quorum, { timeoutMs: 30_000 });
    await waitFor('both broker-only nodes observing with the leader\'s view', async () => {
      const statuses = await cluster.statuses(quorum);
      const lead = statuses.get(leader.id);
      if (!lead) return undefined;
      expect(lead.voters).to.have.members([1, 2, 3]);
      return [4, 5].every((id) => {
        const s = statuses.get(id);
        return s !== undefined && s.role === 'observer' && s.leader === leader.id && lead.observers.includes(id) && s.applied > 0;
      });
    }, { timeoutMs: 30_000 });
  });

  it('answer controller calls with NOT_CONTROLLER, which the quorum client follows to the active controller', async () => {
    const onlyObserver = new QuorumClient({ endpoints: [cluster.node(4).url], limits: { requestTimeoutMs: 5_000 } });
    try {
      const described = await onlyObserver.controller<{ brokers: unknown[] }>('describeCluster', {});
      expect(described.brokers).to.have.length(5);
    } finally {
      onlyObserver.close();
    }
  });

  it('lead and follow partitions; a SIGKILLed broker-only leader loses no acknowledged record', async () => {
    await client.createTopic('edge', { assignments: [[4, 5, 1]], configs: { 'min.insync.replicas': '2' } });
    const acked: string[] = [];
    for (let i = 0; i < 20; i++) {
      const values = Array.from({ length: 5 }, (_, j) => `e-${i}-${j}`);
      const r = await client.produce('edge', 0, values, -1);
      expect(r.errorCode, r.errorMessage ?? '').to.equal(0);
      acked.push(...values);
    }
    await cluster.node(4).kill('SIGKILL');
    const after = await client.waitForPartition('edge', 0, 'a new leader', (p) => p.leader !== 4 && p.leader >= 0, 60_000);
    expect(after.leader).to.equal(5);
    const read = await client.readAtLeast('edge', 0, acked.length);
    expect(read.map((r) => r.value)).to.deep.equal(acked);
    cluster.node(4).start();
    await client.waitForPartition('edge', 0, 'node 4 back in the ISR', (p) => p.isr.includes(4), 60_000);
  });
});
