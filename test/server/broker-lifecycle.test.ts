// The broker lifecycle against a real controller: a single-voter Raft node
// with a real data dir, the metadata state machine, the active controller
// and its API handler (called in process instead of over a socket).
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RaftNode } from '../../src/raft-node/node.js';
import { nodeLimits } from '../../src/raft-node/quorum-config.js';
import { MetadataStateMachine } from '../../src/metadata/state-machine.js';
import { QuorumController } from '../../src/controller/service/quorum-controller.js';
import { createControllerApi } from '../../src/controller/service/controller-api.js';
import { createTopics } from '../../src/controller/replication-control.js';
import { BrokerLifecycle, type ControllerCall } from '../../src/server/broker-lifecycle.js';
import { SystemClock, SystemScheduler } from '../../src/util/clock.js';
import { SeededRng } from '../../src/util/rng.js';
import { silentLogger } from '../../src/util/logger.js';

async function waitFor(cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('broker lifecycle against a real controller', function () {
  this.timeout(60_000);
  let dir: string;
  let node: RaftNode;
  let metadata: MetadataStateMachine;
  let controller: QuorumController;
  let call: ControllerCall;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-lifecycle-'));
    metadata = new MetadataStateMachine();
    node = RaftNode.start({
      id: 1, voters: [1], raftDir: dir, stateMachine: metadata, transport: { send() {}, close: async () => {} },
      limits: nodeLimits({ tickMs: 10 }), rng: new SeededRng(1), logger: silentLogger,
    });
    controller = new QuorumController({ quorum: node, metadata, clusterId: 'c1', clock: SystemClock, scheduler: SystemScheduler, rng: new SeededRng(2), logger: silentLogger, fenceCheckIntervalMs: 50 });
    const api = createControllerApi(controller);
    call = <T>(name: string, body: Record<string, unknown>) => api(name, body) as Promise<T>;
    await waitFor(() => controller.isActive && metadata.image.cluster !== null);
  });

  afterEach(async () => {
    controller.stop();
    await node.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const broker = (id: number, offset: () => number = () => metadata.image.offset, seed = 100 + id) => new BrokerLifecycle({
    brokerId: id, clusterId: 'c1', endpoints: [{ name: 'CLIENT', url: `ws://127.0.0.1:${9100 + id}` }], rack: null,
    call, metadataOffset: offset, rng: new SeededRng(seed), scheduler: SystemScheduler, logger: silentLogger, heartbeatIntervalMs: 50, shutdownTimeoutMs: 5_000,
  });

  it('registers fenced, is unfenced only once its metadata caught up, then runs', async () => {
    let caughtUp = false;
    const b = broker(1, () => (caughtUp ? metadata.image.offset : 0));
    b.start();
    await b.when('fenced');
    expect(metadata.image.brokers.get(1)!.fenced).to.equal(true);
    // Behind its own registration: it stays fenced however often it beats.
    await waitFor(() => metadata.image.offset > 0);
    expect(b.state).to.equal('fenced');
    caughtUp = true;
    await b.when('running');
    expect(metadata.image.brokers.get(1)!.fenced).to.equal(false);
    b.stop();
  });

  it('controlled shutdown moves its leaderships away before it stops', async () => {
    const brokers = [broker(1), broker(2), broker(3)];
    for (const b of brokers) b.start();
    await Promise.all(brokers.map((b) => b.when('running')));
    await controller.submit((c) => createTopics(c, [{ name: 't', numPartitions: 6, replicationFactor: 3, configs: {} }]));
    const led = () => [...metadata.image.topic('t')!.partitions.values()].filter((r) => r.leader === 2).length;
    expect(led()).to.be.greaterThan(0);
    await brokers[1]!.shutdown();
    expect(brokers[1]!.state).to.equal('stopped');
    expect(led()).to.equal(0);
    expect(metadata.image.brokers.get(2)!.inControlledShutdown).to.equal(true);
    brokers[0]!.stop();
    brokers[2]!.stop();
  });

  it('a broker that stops heartbeating is fenced; started again it registers anew and runs', async () => {
    await call('alterConfigs', { resources: [{ resourceType: 'cluster', resourceName: '', set: { 'broker.session.timeout.ms': '500' } }] });
    const first = broker(1);
    first.start();
    await first.when('running');
    const epoch = first.epoch;
    first.stop();
    await waitFor(() => metadata.image.brokers.get(1)!.fenced);
    const again = broker(1, () => metadata.image.offset, 999); // a new process: a new incarnation id
    again.start();
    await again.when('running');
    expect(again.epoch).to.be.greaterThan(epoch);
    expect(metadata.image.brokers.get(1)!.fenced).to.equal(false);
    again.stop();
  });
});
