// Fast failover through the real shells, in one process: broker lifecycles
// heartbeating to a real QuorumController on a single-voter Raft node (the
// API handler called in process instead of over a socket). What a replica
// fetcher would tell its lifecycle (leaderLink) travels in the heartbeats;
// the controller fences a stopped broker on a peer's report long before its
// session could expire, and never a broker that still heartbeats.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RaftNode } from '../../../src/raft-node/node.js';
import { nodeLimits } from '../../../src/raft-node/quorum-config.js';
import { MetadataStateMachine } from '../../../src/metadata/state-machine.js';
import { QuorumController } from '../../../src/controller/service/quorum-controller.js';
import { createControllerApi } from '../../../src/controller/service/controller-api.js';
import { BrokerLifecycle, type ControllerCall } from '../../../src/server/broker-lifecycle.js';
import { SystemClock, SystemScheduler } from '../../../src/util/clock.js';
import { SeededRng } from '../../../src/util/rng.js';
import { silentLogger } from '../../../src/util/logger.js';
import { waitFor } from '../../integration/harness.js';

const WAIT = { timeoutMs: 15_000, intervalMs: 10 };

describe('fast failover: lifecycles reporting to a real controller', function () {
  this.timeout(60_000);
  let dir: string;
  let node: RaftNode;
  let metadata: MetadataStateMachine;
  let controller: QuorumController;
  let call: ControllerCall;
  const brokers: BrokerLifecycle[] = [];

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-fast-failover-'));
    metadata = new MetadataStateMachine();
    node = RaftNode.start({
      id: 1, voters: [1], raftDir: dir, stateMachine: metadata, transport: { send() {}, close: async () => {} },
      limits: nodeLimits({ tickMs: 10 }), rng: new SeededRng(1), logger: silentLogger,
    });
    controller = new QuorumController({ quorum: node, metadata, clusterId: 'c1', clock: SystemClock, scheduler: SystemScheduler, rng: new SeededRng(2), logger: silentLogger });
    const api = createControllerApi(controller);
    call = <T>(name: string, body: Record<string, unknown>) => api(name, body) as Promise<T>;
    await waitFor('an active controller', () => controller.isActive && metadata.image.cluster !== null, WAIT);
  });

  afterEach(async () => {
    for (const b of brokers.splice(0)) b.stop();
    controller.stop();
    await node.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const broker = (id: number): BrokerLifecycle => {
    const b = new BrokerLifecycle({
      brokerId: id, clusterId: 'c1', endpoints: [{ name: 'BROKER', url: `ws://127.0.0.1:${9100 + id}` }], rack: null,
      call, metadataOffset: () => metadata.image.offset, rng: new SeededRng(100 + id), scheduler: SystemScheduler, logger: silentLogger, heartbeatIntervalMs: 50,
    });
    brokers.push(b);
    return b;
  };

  it('a stopped broker a peer reports unreachable is fenced within its session; a reported broker that heartbeats is not', async () => {
    // A ten-minute session: only the corroborated rule can fence within this test.
    await call('alterConfigs', { resources: [{ resourceType: 'cluster', resourceName: '', set: { 'broker.session.timeout.ms': '600000' } }] });
    const [b1, b2, b3] = [broker(1), broker(2), broker(3)];
    for (const b of [b1, b2, b3]) b.start();
    await Promise.all([b1, b2, b3].map((b) => b.when('running')));
    const early = controller.counters.corroboratedFences;

    // Broker 1's fetchers lose both leaders; broker 2 is merely cut off from broker 1, broker 3 is dead.
    b1.leaderLink(2, false);
    b1.leaderLink(3, false);
    expect(b1.unreachableBrokers).to.deep.equal([2, 3]);
    b3.stop();
    await waitFor('broker 3 fenced', () => metadata.image.brokers.get(3)!.fenced, WAIT);
    expect(controller.brokerHeartbeats.isAlive(3), 'inside its session').to.equal(true);
    expect(controller.brokerHeartbeats.reportersOf(2), 'broker 2 is reported as long as broker 3 was').to.deep.equal([1]);
    expect(metadata.image.brokers.get(2)!.fenced, 'broker 2 heartbeats: a peer\'s word alone fences nobody').to.equal(false);
    expect(controller.counters.corroboratedFences).to.equal(early + 1);

    // The links work again: the reports are withdrawn with the next heartbeat.
    b1.leaderLink(2, true);
    b1.leaderLink(3, true);
    expect(b1.unreachableBrokers).to.deep.equal([]);
    await waitFor('the reports withdrawn', () => controller.brokerHeartbeats.reportersOf(2).length === 0, WAIT);
  });

  it('counts the reports of fetchers replaced for a new URL: the leader stays reported until the last one withdraws', () => {
    const b = broker(1);
    b.leaderLink(4, false); // the old fetcher
    b.leaderLink(4, false); // its successor, before the old one stopped
    b.leaderLink(4, true); // the old one stops and withdraws
    expect(b.unreachableBrokers).to.deep.equal([4]);
    b.leaderLink(4, true);
    expect(b.unreachableBrokers).to.deep.equal([]);
  });
});
