// The controller shell on a real single-voter Raft node with a real data dir:
// commands commit through Raft before they answer, batches group-commit, and
// a restarted node rebuilds the same image from its log.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RaftNode } from '../../../src/raft-node/node.js';
import { nodeLimits } from '../../../src/raft-node/quorum-config.js';
import { MetadataStateMachine } from '../../../src/metadata/state-machine.js';
import { QuorumController } from '../../../src/controller/service/quorum-controller.js';
import { registerBroker, brokerHeartbeat } from '../../../src/controller/cluster-control.js';
import { createTopics } from '../../../src/controller/replication-control.js';
import { ManualScheduler, SystemClock, SystemScheduler } from '../../../src/util/clock.js';
import { SeededRng } from '../../../src/util/rng.js';
import { silentLogger } from '../../../src/util/logger.js';
import { Errors, SluiceError, isSluiceError } from '../../../src/util/errors.js';

async function waitFor(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

function startNode(dir: string) {
  const metadata = new MetadataStateMachine();
  const node = RaftNode.start({
    id: 1, voters: [1], raftDir: dir, stateMachine: metadata,
    transport: { send() {}, close: async () => {} },
    limits: nodeLimits({ tickMs: 10 }), rng: new SeededRng(1), logger: silentLogger,
  });
  const controller = new QuorumController({ quorum: node, metadata, clusterId: 'test-cluster', clock: SystemClock, scheduler: SystemScheduler, rng: new SeededRng(2), logger: silentLogger });
  return { node, metadata, controller };
}

describe('QuorumController on a real Raft node', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-ctl-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('activates, writes the cluster record, and answers commands after they commit', async () => {
    const { node, metadata, controller } = startNode(dir);
    try {
      await waitFor(() => controller.isActive && metadata.image.cluster !== null);
      expect(metadata.image.cluster!.clusterId).to.equal('test-cluster');
      const regs = await Promise.all([1, 2, 3].map((id) => controller.submit((c) => registerBroker(c, {
        brokerId: id, incarnationId: `i${id}`, clusterId: 'test-cluster', endpoints: [], rack: null,
      }))));
      for (const r of regs) expect(r.error).to.equal(null);
      expect(metadata.image.brokers.size, 'visible in the committed image once answered').to.equal(3);
      for (const [i, r] of regs.entries()) {
        if (r.error) throw new Error('unreachable');
        await controller.submit((c) => brokerHeartbeat(c, { brokerId: i + 1, brokerEpoch: r.brokerEpoch, currentMetadataOffset: metadata.image.offset, wantShutdown: false }));
      }
      const [created] = await controller.submit((c) => createTopics(c, [{ name: 'orders', numPartitions: 3, replicationFactor: 3, configs: {} }]));
      expect(created!.errorCode).to.equal(0);
      expect(metadata.image.topic('orders')!.partitions.size).to.equal(3);
    } finally {
      controller.stop();
      await node.stop();
    }
    const again = startNode(dir);
    try {
      await waitFor(() => again.controller.isActive);
      expect(again.metadata.image.topic('orders')!.partitions.size, 'rebuilt from the log').to.equal(3);
      expect(again.metadata.image.unfencedBrokers()).to.have.length(3);
    } finally {
      again.controller.stop();
      await again.node.stop();
    }
  });

  it('a standby answers NOT_CONTROLLER', async () => {
    const metadata = new MetadataStateMachine();
    const quorum = {
      propose: () => Promise.reject(new Error('not used')),
      readIndex: () => Promise.reject(new Error('not used')),
      status: () => ({ role: 'follower', leader: 3, term: 4, lastIndex: 0 }),
      on: () => undefined,
    };
    const controller = new QuorumController({ quorum, metadata, clusterId: 'c', clock: SystemClock, scheduler: SystemScheduler, rng: new SeededRng(1), logger: silentLogger });
    const err = await controller.submit(() => ({ records: [], response: 1 })).catch((e) => e);
    expect(isSluiceError(err, Errors.NOT_CONTROLLER)).to.equal(true);
    expect(err.details).to.deep.equal({ leader: 3 });
  });

  it('after a proposal with an unknown outcome, applies a barrier entry before running more commands', async () => {
    const metadata = new MetadataStateMachine();
    const proposed: number[] = [];
    let fail = true;
    let index = 0;
    const quorum = {
      propose: (data: Uint8Array) => {
        proposed.push(data.length);
        if (fail) {
          fail = false;
          return Promise.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, 'outcome unknown'));
        }
        return Promise.resolve({ index: ++index, term: 1 });
      },
      readIndex: () => Promise.resolve(0),
      status: () => ({ role: 'leader', leader: 1, term: 1, lastIndex: index }),
      on: () => undefined,
    };
    const scheduler = new ManualScheduler();
    const controller = new QuorumController({ quorum, metadata, clusterId: 'c', clock: scheduler.clock, scheduler, rng: new SeededRng(1), logger: silentLogger });
    await new Promise((resolve) => setImmediate(resolve));
    expect(controller.isActive).to.equal(true);
    const record = { type: 'config', v: 1, resourceType: 'cluster', resourceName: '', name: 'num.partitions', value: '3' } as const;
    // (the cluster record proposal at activation takes the simulated timeout)
    expect(proposed.length).to.equal(1);
    await controller.submit(() => ({ records: [record], response: 'ok' }));
    expect(proposed[0]).to.be.greaterThan(0);
    expect(proposed[1], 'a barrier (empty entry) comes first').to.equal(0);
    expect(proposed[2]).to.be.greaterThan(0);
    controller.stop();
  });
});
