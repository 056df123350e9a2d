// The remaining cluster controls on real nodes: torn-tail crashes and slow
// disks (the node recovers from what its disk kept), clock jumps on one node,
// one-way and bridge partitions, connection breaks, and KIP-853 controller
// membership changes through the active controller.

import { strict as assert } from 'node:assert';
import { Client } from '../../../src/client/index.js';
import { startCluster, type SimCluster } from './cluster.js';
import './sim-world.js';

const TOPIC = 'ctl';

async function produce(c: SimCluster, host: string, n: number): Promise<void> {
  const env = c.client(host);
  const client = new Client({ bootstrap: env.bootstrap, webSocketFactory: env.webSocketFactory, clock: env.clock, scheduler: env.scheduler, rng: env.rng, clientId: host });
  const producer = client.producer({ clock: env.clock, rng: env.rng.fork() });
  await c.await(producer.send({ topic: TOPIC, messages: Array.from({ length: n }, (_, i) => ({ value: `v${i}` })) }), 60_000);
  await c.await(producer.close());
}

function inIsr(c: SimCluster, id: number): boolean {
  return c.partitionState(TOPIC, 0)?.isr.includes(id) === true;
}

describe('sim/cluster controls', function () {
  this.timeout(180_000);
  let c: SimCluster | undefined;
  afterEach(async () => {
    await c?.stop();
    c = undefined;
  });

  it('a torn-tail crash under a slow disk: the node restarts from what its disk kept and catches up', async () => {
    c = await startCluster({ seed: 11 });
    await c.await(c.createTopic(TOPIC, 1, 3));
    const victim = c.partitionState(TOPIC, 0)!.replicas.find((r) => r !== c!.controllerLeader())!;
    c.slowDisk(victim, 40);
    await produce(c, 'p', 20);
    c.crash(victim, { tornTail: true });
    await c.runFor(500);
    c.slowDisk(victim, null);
    await c.await(c.restart(victim));
    assert.ok(await c.runUntil(() => inIsr(c!, victim), 60_000), 'back in the ISR after recovery');
  });

  it('a clock jump on one node (wall back a minute, monotonic forward) leaves the cluster serving', async () => {
    c = await startCluster({ seed: 12 });
    await c.await(c.createTopic(TOPIC, 1, 3));
    const leader = c.partitionState(TOPIC, 0)!.leader;
    const before = c.node(leader).server!.node.status().term;
    c.clockJump(leader, -60_000, 2_000);
    await produce(c, 'p', 5);
    await c.runFor(5_000);
    assert.ok(c.controllerLeader() !== undefined);
    assert.ok(c.node(leader).server!.node.status().term >= before);
  });

  it('one-way and bridge partitions, then heal; a connection break is survived by reconnecting', async () => {
    c = await startCluster({ seed: 13 });
    await c.await(c.createTopic(TOPIC, 1, 3));
    const leader = c.controllerLeader()!;
    const others = c.nodeIds.filter((n) => n !== leader).map((n) => c!.hostOf(n));
    c.partition({ kind: 'one-way', from: c.hostOf(leader), to: others[0]! });
    await c.runFor(3_000);
    c.heal();
    c.partition({ kind: 'bridge', left: [c.hostOf(1)], right: [c.hostOf(3), c.hostOf(4)], bridge: c.hostOf(2) });
    await c.runFor(3_000);
    c.heal();
    c.breakConnections();
    assert.ok(await c.runUntil(() => c!.controllerLeader() !== undefined, 30_000), 'a controller leads');
    await produce(c, 'p', 3);
  });

  it('adds a spare controller (observer, then voter) and removes a voter, through the active controller', async () => {
    c = await startCluster({
      seed: 14,
      nodes: [
        { id: 1, roles: ['broker', 'controller'] }, { id: 2, roles: ['broker', 'controller'] }, { id: 3, roles: ['broker', 'controller'] },
        { id: 5, roles: ['controller'], spare: true },
      ],
    });
    assert.equal(c.node(5).state, 'stopped');
    assert.deepEqual([...c.voters()].sort(), [1, 2, 3]);
    await c.await(c.addController(5), 120_000);
    assert.ok(await c.runUntil(() => c!.voters().includes(5), 30_000), 'node 5 votes');
    const leaving = c.voters().find((v) => v !== c!.controllerLeader() && v !== 5)!;
    await c.await(c.removeController(leaving), 60_000);
    assert.ok(await c.runUntil(() => !c!.voters().includes(leaving), 30_000), `node ${leaving} no longer votes`);
  });
});
