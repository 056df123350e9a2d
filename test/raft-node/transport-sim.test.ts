// RaftTransport and its peer links on the simulation's in-memory network,
// on a manual clock: keepalive, break and reconnect, timed exactly.
import { expect } from 'chai';
import { RaftTransport } from '../../src/raft-node/transport.js';
import { DEFAULT_TRANSPORT_LIMITS } from '../../src/raft-node/quorum-config.js';
import type { Message } from '../../src/raft/types.js';
import { ManualClock, ManualScheduler } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { SeededRng } from '../../src/util/rng.js';
import { SimNetwork } from '../sim/cluster/sim-network.js';

const LIMITS = { ...DEFAULT_TRANSPORT_LIMITS, keepaliveIntervalMs: 100, keepaliveTimeoutMs: 300, reconnectBackoffBaseMs: 10, reconnectBackoffMaxMs: 50, connectTimeoutMs: 200 };

function heartbeat(from: number, to: number, commit: number): Message {
  return { type: 'heartbeat', from, to, term: 1, commit, readRound: 0 } as Message;
}

describe('raft-node transport on the simulated network', () => {
  let scheduler: ManualScheduler;
  let net: SimNetwork;
  const got = new Map<number, number[]>();
  let transports: RaftTransport[];

  async function run(ms: number): Promise<void> {
    for (let i = 0; i < ms; i++) {
      scheduler.advance(1);
      await new Promise((r) => setImmediate(r));
    }
  }

  beforeEach(async () => {
    const clock = new ManualClock();
    scheduler = new ManualScheduler(clock);
    const rng = new SeededRng(3);
    net = new SimNetwork({ clock, scheduler, rng: rng.fork(), delay: { minMs: 1, maxMs: 3 } });
    got.clear();
    transports = [1, 2].map((id) => new RaftTransport({
      nodeId: id, clusterId: 'c', listen: { host: `n${id}`, port: 9093, url: `ws://n${id}:9093` },
      peers: new Map([[3 - id, `ws://n${3 - id}:9093`]]), limits: LIMITS, rng: rng.fork(), logger: silentLogger,
      transport: net.transport(`n${id}`), clock, scheduler,
    }));
    for (const [i, t] of transports.entries()) {
      await t.listen();
      t.start({ onRaftMessage: (m) => got.set(i + 1, [...(got.get(i + 1) ?? []), (m as { commit: number }).commit]), onClientRequest: () => Promise.resolve(null) });
    }
    await run(30);
  });

  afterEach(async () => {
    for (const t of transports) await t.close();
  });

  it('delivers in order; a partition past the keepalive timeout breaks the link, which reconnects after heal', async () => {
    const [t1] = transports as [RaftTransport, RaftTransport];
    t1.send([heartbeat(1, 2, 1), heartbeat(1, 2, 2)]);
    await run(20);
    expect(got.get(2)).to.deep.equal([1, 2]);
    const connectsBefore = t1.stats().peers['2']?.connects ?? 0;

    net.partition([['n1'], ['n2']]);
    t1.send([heartbeat(1, 2, 3)]);
    await run(LIMITS.keepaliveTimeoutMs + 2 * LIMITS.keepaliveIntervalMs);
    expect(got.get(2), 'nothing crosses the partition').to.deep.equal([1, 2]);
    expect(t1.stats().peers['2']?.connected, 'no pong: the link was dropped').to.equal(false);

    net.heal();
    await run(LIMITS.connectTimeoutMs + 100);
    expect(t1.stats().peers['2']?.connected).to.equal(true);
    expect(t1.stats().peers['2']?.connects).to.be.greaterThan(connectsBefore);
    t1.send([heartbeat(1, 2, 4)]);
    await run(20);
    // The frame sent into the partition died with the broken connection (Raft resends); the new one arrives.
    expect(got.get(2)).to.deep.equal([1, 2, 4]);
  });

  it('an inbound connection that never says hello is closed after helloTimeoutMs', async () => {
    const stray = await (async () => {
      const p = net.transport('n9').dial('ws://n1:9093', { frameBytesMax: 1 << 20, connectTimeoutMs: 200 });
      await run(10);
      return p;
    })();
    let closed = false;
    stray.setHandlers({ message: () => undefined, close: () => { closed = true; } });
    await run(LIMITS.helloTimeoutMs + 1_500);
    expect(closed, 'a connection that never says hello is closed').to.equal(true);
  });
});
