import { strict as assert } from 'node:assert';
import { ManualClock, ManualScheduler } from '../../../src/util/clock.js';
import { SeededRng } from '../../../src/util/rng.js';
import type { AcceptedSocket, MessageSocket, Transport } from '../../../src/net/transport.js';
import { ClientLink } from '../../../src/net/client-link.js';
import { SimNetwork } from './sim-network.js';

const LIMITS = { frameBytesMax: 1024, connectTimeoutMs: 500 };

interface Recorder {
  readonly got: string[];
  closed: { code: number; reason: string } | undefined;
}

function record(s: MessageSocket): Recorder {
  const r: Recorder = { got: [], closed: undefined };
  s.setHandlers({
    message: (data) => r.got.push(Buffer.from(data).toString()),
    close: (code, reason) => { r.closed = { code, reason }; },
  });
  return r;
}

describe('sim network (test/sim/cluster)', () => {
  let scheduler: ManualScheduler;
  let net: SimNetwork;
  let a: Transport;
  let b: Transport;
  let accepted: AcceptedSocket[];

  /** Advances simulated time in 1 ms steps, letting promise callbacks run between them. */
  async function run(ms: number): Promise<void> {
    for (let i = 0; i < ms; i++) {
      scheduler.advance(1);
      await new Promise((r) => setImmediate(r));
    }
  }

  async function connect(): Promise<{ client: MessageSocket; server: AcceptedSocket }> {
    const dialed = a.dial('ws://b:9000', LIMITS);
    await run(20);
    const client = await dialed;
    return { client, server: accepted[accepted.length - 1]! };
  }

  beforeEach(async () => {
    const clock = new ManualClock();
    scheduler = new ManualScheduler(clock);
    net = new SimNetwork({ clock, scheduler, rng: new SeededRng(7), delay: { minMs: 1, maxMs: 9 } });
    a = net.transport('a');
    b = net.transport('b');
    accepted = [];
    await b.listen({ host: 'b', port: 9000 }, { frameBytesMax: 1024 }, (s) => accepted.push(s));
  });

  it('delivers every message of a connection in order despite random delays', async () => {
    const { client, server } = await connect();
    const r = record(server);
    for (let i = 0; i < 200; i++) client.send(Buffer.from(`m${i}`));
    await run(30);
    assert.deepEqual(r.got, Array.from({ length: 200 }, (_, i) => `m${i}`));
  });

  it('holds messages across a partition and delivers them after heal', async () => {
    const { client, server } = await connect();
    const r = record(server);
    net.partition([['a'], ['b']]);
    client.send(Buffer.from('x'));
    client.send(Buffer.from('y'));
    await run(50);
    assert.deepEqual(r.got, []);
    net.heal();
    await run(20);
    assert.deepEqual(r.got, ['x', 'y']);
  });

  it('a one-way block holds one direction only', async () => {
    const { client, server } = await connect();
    const rs = record(server);
    const rc = record(client);
    net.blockOneWay('a', 'b');
    client.send(Buffer.from('to-b'));
    server.send(Buffer.from('to-a'));
    await run(30);
    assert.deepEqual(rs.got, []);
    assert.deepEqual(rc.got, ['to-a']);
  });

  it('a dial across a partition times out; to a closed port it is refused', async () => {
    net.partition([['a'], ['b']]);
    const t0 = scheduler.clock.monotonicMs();
    const timedOut = a.dial('ws://b:9000', LIMITS).then(() => 'open', (e: { code: string }) => e.code);
    await run(600);
    assert.equal(await timedOut, 'ETIMEDOUT');
    assert.ok(scheduler.clock.monotonicMs() - t0 >= LIMITS.connectTimeoutMs);
    net.heal();
    const refused = a.dial('ws://b:9999', LIMITS).then(() => 'open', (e: { code: string }) => e.code);
    await run(30);
    assert.equal(await refused, 'ECONNREFUSED');
  });

  it('a connection break loses what was in flight and closes both ends with 1006', async () => {
    const { client, server } = await connect();
    const rs = record(server);
    const rc = record(client);
    client.send(Buffer.from('lost'));
    assert.equal(net.breakConnections('a', 'b'), 1);
    await run(20);
    assert.deepEqual(rs.got, []);
    assert.deepEqual(rs.closed, { code: 1006, reason: '' });
    assert.deepEqual(rc.closed, { code: 1006, reason: '' });
    assert.equal(net.openConnections, 0);
  });

  it('close is a handshake: messages sent before it arrive, both ends see the code', async () => {
    const { client, server } = await connect();
    const rs = record(server);
    const rc = record(client);
    client.send(Buffer.from('last'));
    client.close(1000, 'bye');
    client.send(Buffer.from('after'));
    await run(30);
    assert.deepEqual(rs.got, ['last']);
    assert.deepEqual(rs.closed, { code: 1000, reason: 'bye' });
    assert.deepEqual(rc.closed, { code: 1000, reason: 'bye' });
  });

  it('a message over the receiver frameBytesMax closes the connection with 1009', async () => {
    const { client, server } = await connect();
    const rs = record(server);
    const rc = record(client);
    client.send(new Uint8Array(2048));
    await run(30);
    assert.deepEqual(rs.got, []);
    assert.equal(rs.closed?.code, 1009);
    assert.equal(rc.closed?.code, 1009);
  });

  it('pause holds delivery (the sender sees bufferedAmount) until resume', async () => {
    const { client, server } = await connect();
    const rs = record(server);
    server.pause();
    client.send(Buffer.from('held'));
    await run(30);
    assert.deepEqual(rs.got, []);
    assert.equal(client.bufferedAmount, 4);
    server.resume();
    await run(20);
    assert.deepEqual(rs.got, ['held']);
    assert.equal(client.bufferedAmount, 0);
  });

  it('ping is answered by the peer socket itself', async () => {
    const { client, server } = await connect();
    let pings = 0;
    let pongs = 0;
    server.setHandlers({ message: () => undefined, close: () => undefined, ping: () => pings++ });
    client.setHandlers({ message: () => undefined, close: () => undefined, pong: () => pongs++ });
    client.ping();
    await run(30);
    assert.equal(pings, 1);
    assert.equal(pongs, 1);
  });

  it('a crash closes the host listeners and connections; peers see 1006', async () => {
    const { client } = await connect();
    const rc = record(client);
    net.crash('b');
    await run(20);
    assert.deepEqual(rc.closed, { code: 1006, reason: '' });
    const refused = a.dial('ws://b:9000', LIMITS).then(() => 'open', (e: { code: string }) => e.code);
    await run(30);
    assert.equal(await refused, 'ECONNREFUSED');
  });

  it('the real ClientLink runs over it through webSocketFactory', async () => {
    accepted = [];
    const linkP = ClientLink.connect('ws://b:9000', { factory: net.webSocketFactory('a') });
    await run(20);
    const link = await linkP;
    assert.ok(link.isOpen);
    assert.equal(accepted.length, 1);
    let closed = false;
    link.onClose(() => { closed = true; });
    net.breakConnections('b');
    await run(20);
    assert.ok(closed);
  });

  it('the same seed gives the same delivery schedule', async () => {
    async function schedule(seed: number): Promise<number[]> {
      const clock = new ManualClock();
      scheduler = new ManualScheduler(clock);
      const n = new SimNetwork({ clock, scheduler, rng: new SeededRng(seed), delay: { minMs: 1, maxMs: 20 } });
      const times: number[] = [];
      await n.transport('b').listen({ host: 'b', port: 1 }, { frameBytesMax: 1024 }, (s) => s.setHandlers({ message: () => times.push(clock.monotonicMs()), close: () => undefined }));
      const p = n.transport('a').dial('ws://b:1', LIMITS);
      await run(50);
      const s = await p;
      for (let i = 0; i < 20; i++) s.send(new Uint8Array(1));
      await run(50);
      return times;
    }
    assert.deepEqual(await schedule(3), await schedule(3));
    assert.notDeepEqual(await schedule(3), await schedule(4));
  });
});
