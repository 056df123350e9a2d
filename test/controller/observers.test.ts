// Brokers as Raft observers, end to end in one process: three voters (RaftNode
// + RaftTransport + MetadataStateMachine + QuorumController, real loopback
// sockets, temp data dirs) and one broker-only node that is not a voter. The
// broker registers through the controller API with a CONTROLLER endpoint (as
// BrokerLifecycle does in a server); the active controller adds it as an
// observer, the voters add it as a transport peer, and its image follows the
// voters' — through a snapshot, across a leader change — until it is
// unregistered and removed again. The observer never campaigns.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RaftNode, type RoleChange } from '../../src/raft-node/node.js';
import { RaftTransport } from '../../src/raft-node/transport.js';
import { DEFAULT_TRANSPORT_LIMITS, nodeLimits } from '../../src/raft-node/quorum-config.js';
import { createClientService } from '../../src/raft-node/client-service.js';
import { QuorumClient } from '../../src/raft-node/quorum-client.js';
import { METADATA_ENDPOINT } from '../../src/raft-node/observers.js';
import { MetadataStateMachine } from '../../src/metadata/state-machine.js';
import type { MetadataImage } from '../../src/metadata/image.js';
import { QuorumController } from '../../src/controller/service/quorum-controller.js';
import { createControllerApi } from '../../src/controller/service/controller-api.js';
import { syncObserverPeers } from '../../src/server/observer-peers.js';
import { BrokerLifecycle } from '../../src/server/broker-lifecycle.js';
import { SystemClock, SystemScheduler } from '../../src/util/clock.js';
import { SeededRng } from '../../src/util/rng.js';
import { silentLogger } from '../../src/util/logger.js';
import { freePorts, waitFor } from '../integration/harness.js';

const CLUSTER = 'observer-cluster';
const VOTERS = [1, 2, 3];
const OBSERVER = 4;
const WAIT = { timeoutMs: 20_000, intervalMs: 10 };
const limits = nodeLimits({ tickMs: 20, electionTimeoutTicks: 10, snapshotIntervalEntries: 16, transferTimeoutMs: 1_000 });
const transportLimits = { ...DEFAULT_TRANSPORT_LIMITS, reconnectBackoffBaseMs: 10, reconnectBackoffMaxMs: 50 };

interface TestNode {
  readonly id: number;
  readonly url: string;
  readonly metadata: MetadataStateMachine;
  readonly node: RaftNode;
  readonly transport: RaftTransport;
  readonly controller: QuorumController | undefined;
  stop(): Promise<void>;
}

class InProcessCluster {
  readonly root = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-observers-'));
  readonly nodes = new Map<number, TestNode>();

  constructor(readonly urls: ReadonlyMap<number, string>) {}

  url(id: number): string {
    const url = this.urls.get(id);
    if (!url) throw new Error(`no port for node ${id}`);
    return url;
  }

  /** A voter (voters.includes(id)) runs the controller and syncs observer peers; anyone else only follows. */
  async start(id: number): Promise<TestNode> {
    const voter = VOTERS.includes(id);
    const url = this.url(id);
    const port = Number(new URL(url).port);
    const voterUrls = new Map(VOTERS.map((v) => [v, this.url(v)] as const));
    const transport = new RaftTransport({
      nodeId: id, clusterId: CLUSTER, listen: { host: '127.0.0.1', port, url },
      peers: new Map([...voterUrls].filter(([v]) => v !== id)), limits: transportLimits, rng: new SeededRng(10 + id), logger: silentLogger,
    });
    await transport.listen();
    const metadata = new MetadataStateMachine();
    const node = RaftNode.start({
      id, voters: VOTERS, raftDir: path.join(this.root, `n${id}`), stateMachine: metadata, transport,
      limits, rng: new SeededRng(20 + id), logger: silentLogger, endpoints: voterUrls,
    });
    let controller: QuorumController | undefined;
    let unsync = (): void => undefined;
    if (voter) {
      controller = new QuorumController({
        quorum: node, metadata, clusterId: CLUSTER, clock: SystemClock, scheduler: SystemScheduler, rng: new SeededRng(30 + id), logger: silentLogger,
        endpoints: voterUrls, observerRetryDelayMs: 20,
      });
      unsync = syncObserverPeers({ metadata, transport, nodeId: id, voters: VOTERS, logger: silentLogger });
    }
    const api = controller ? createControllerApi(controller) : undefined;
    transport.start({ onRaftMessage: (m) => node.receive(m), onClientRequest: createClientService(node, metadata, api) });
    const t: TestNode = {
      id, url, metadata, node, transport, controller,
      stop: async () => {
        this.nodes.delete(id);
        controller?.stop();
        unsync();
        await node.stop({ transferLeadership: false });
      },
    };
    this.nodes.set(id, t);
    return t;
  }

  get(id: number): TestNode {
    const t = this.nodes.get(id);
    if (!t) throw new Error(`node ${id} is not running`);
    return t;
  }

  /** The running voter whose controller is active. */
  async activeController(): Promise<TestNode> {
    return waitFor('an active controller', () => [...this.nodes.values()].find((t) => t.controller?.isActive === true), WAIT);
  }

  async cleanup(): Promise<void> {
    await Promise.all([...this.nodes.values()].map((t) => t.stop()));
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/** Waits until `a` and `b` applied the same metadata offset, and returns both images taken at that moment. */
async function sameOffset(a: TestNode, b: TestNode, atLeast: number): Promise<[MetadataImage, MetadataImage]> {
  return waitFor(`nodes ${a.id} and ${b.id} at the same metadata offset ≥ ${atLeast}`, () => {
    const x = a.metadata.image;
    const y = b.metadata.image;
    return x.offset >= atLeast && x.offset === y.offset ? [x, y] as [MetadataImage, MetadataImage] : undefined;
  }, WAIT);
}

async function expectFollows(observer: TestNode, leader: TestNode): Promise<void> {
  const [o, l] = await sameOffset(observer, leader, leader.metadata.image.offset);
  expect(o.toRecords(), 'same offset ⇒ identical image').to.deep.equal(l.toRecords());
  const s = observer.node.status();
  expect(s.role).to.equal('observer');
  expect(s.leader, 'the observer knows the leader').to.equal(leader.id);
  expect(s.applied).to.be.at.least(o.offset);
}

describe('brokers as Raft observers of the metadata log (in process, loopback)', function () {
  this.timeout(90_000);
  let cluster: InProcessCluster;
  let client: QuorumClient;
  let broker: BrokerLifecycle | undefined;

  beforeEach(async () => {
    const ports = await freePorts(4);
    cluster = new InProcessCluster(new Map([1, 2, 3, 4].map((id, i) => [id, `ws://127.0.0.1:${ports[i]}`] as const)));
    client = new QuorumClient({ endpoints: VOTERS.map((v) => cluster.url(v)), clusterId: CLUSTER, rng: new SeededRng(5) });
  });

  afterEach(async () => {
    broker?.stop();
    broker = undefined;
    client.close();
    await cluster.cleanup();
  });

  it('a registered broker follows the log as an observer, across a leader change, until unregistered', async () => {
    for (const id of VOTERS) await cluster.start(id);
    let leader = await cluster.activeController();
    await waitFor('the cluster record', () => leader.metadata.image.cluster !== null, WAIT);
    // Enough entries for the voters to snapshot and compact: the observer must catch up from a snapshot.
    for (let i = 0; i < 40; i++) {
      const res = await client.controller<{ resources: Array<{ errorCode: number }> }>('alterConfigs', {
        resources: [{ resourceType: 'cluster', resourceName: '', set: { 'num.partitions': String(1 + (i % 5)) } }],
      });
      expect(res.resources[0]!.errorCode).to.equal(0);
    }
    await waitFor('a compacted leader log', () => leader.node.status().snapshotIndex > 0, WAIT);

    const observer = await cluster.start(OBSERVER);
    const roles: RoleChange[] = [];
    observer.node.on('roleChange', (c) => roles.push(c));
    let restoredFromSnapshot = false;
    observer.metadata.subscribe((_image, changes) => { if (changes === null) restoredFromSnapshot = true; });
    expect(observer.node.status().role, 'outside the voters from the start').to.equal('observer');

    // Register as brokers do; unfencing needs the observer's own image to reach the registration.
    broker = new BrokerLifecycle({
      brokerId: OBSERVER, clusterId: CLUSTER, rack: null, rng: new SeededRng(6), scheduler: SystemScheduler, logger: silentLogger, heartbeatIntervalMs: 50,
      endpoints: [{ name: 'CLIENT', url: 'ws://127.0.0.1:1' }, { name: METADATA_ENDPOINT, url: observer.url }],
      call: (api, body) => client.controller(api, body),
      metadataOffset: () => observer.metadata.image.offset,
    });
    broker.start();
    await waitFor('the broker unfenced (its observer image reached its registration)', () => broker?.state === 'running', WAIT);
    expect(leader.node.membership()).to.deep.equal({ voters: VOTERS, observers: [OBSERVER] });
    // Every voter knows it as an observer and can reach it (any of them may lead next).
    await waitFor('the observer known to every voter', () => VOTERS.every((v) => {
      const t = cluster.get(v);
      return t.node.membership().observers.join() === String(OBSERVER) && t.transport.peers().get(OBSERVER) === observer.url;
    }), WAIT);
    expect(restoredFromSnapshot, 'caught up through an installed snapshot').to.equal(true);

    const created = await client.controller<{ topics: Array<{ errorCode: number }> }>('createTopics', {
      topics: [{ name: 'after-join', numPartitions: 2, replicationFactor: 1 }],
    });
    expect(created.topics[0]!.errorCode).to.equal(0);
    await expectFollows(observer, leader);
    expect(observer.metadata.image.topic('after-join')!.partitions.size).to.equal(2);
    const progress = leader.node.raftStatus().progress?.get(OBSERVER);
    expect(progress, 'the leader replicates to the observer').to.not.equal(undefined);

    // The leader goes away; a new one is elected and the observer keeps following it.
    const oldLeader = leader.id;
    await leader.stop();
    leader = await cluster.activeController();
    expect(leader.id).to.not.equal(oldLeader);
    const again = await client.controller<{ topics: Array<{ errorCode: number }> }>('createTopics', {
      topics: [{ name: 'after-failover', numPartitions: 1, replicationFactor: 1 }],
    });
    expect(again.topics[0]!.errorCode).to.equal(0);
    await expectFollows(observer, leader);
    expect(observer.metadata.image.topic('after-failover')).to.not.equal(undefined);

    // Unregistered: no longer an observer, and no longer a peer of the voters.
    broker.stop();
    const un = await client.controller<{ errorCode: number }>('unregisterBroker', { brokerId: OBSERVER });
    expect(un.errorCode).to.equal(0);
    await waitFor('the observer removed', () => leader.node.membership().observers.length === 0, WAIT);
    const remaining = VOTERS.filter((v) => v !== oldLeader);
    await waitFor('voters forget the observer', () => remaining.every((v) => cluster.get(v).node.membership().observers.length === 0
      && !cluster.get(v).transport.peers().has(OBSERVER)), WAIT);

    expect(roles.length, 'role changes were seen').to.be.greaterThan(0);
    for (const c of roles) expect(c.role, JSON.stringify(c)).to.equal('observer');
  });
});
