// The broker listener (WsServer, ServerConnection) and the client link on the
// simulation's in-memory network: the same code as over WebSockets, with
// time and delivery in the test's hands (no sleeps, no sockets).
import { expect } from 'chai';
import { WsServer } from '../../src/net/ws-server.js';
import { ClientLink } from '../../src/net/client-link.js';
import type { RequestHandler } from '../../src/net/server-connection.js';
import { brokerResponseEncoder } from '../../src/server/broker-api.js';
import { ManualClock, ManualScheduler } from '../../src/util/clock.js';
import { isSluiceError } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';
import { SeededRng } from '../../src/util/rng.js';
import { SimNetwork } from '../sim/cluster/sim-network.js';
import { DEFAULT_CONNECTION_LIMITS } from '../../src/net/limits.js';

describe('net on the simulated network (Transport seam)', () => {
  let scheduler: ManualScheduler;
  let net: SimNetwork;
  let server: WsServer;
  let handler: RequestHandler;

  /** Moves simulated time in 1 ms steps, letting promise callbacks run between them. */
  async function run(ms: number): Promise<void> {
    for (let i = 0; i < ms; i++) {
      scheduler.advance(1);
      await new Promise((r) => setImmediate(r));
    }
  }

  async function connect(): Promise<ClientLink> {
    const p = ClientLink.connect('ws://broker:9092', { factory: net.webSocketFactory('client'), scheduler });
    await run(20);
    return p;
  }

  beforeEach(async () => {
    const clock = new ManualClock();
    scheduler = new ManualScheduler(clock);
    net = new SimNetwork({ clock, scheduler, rng: new SeededRng(11), delay: { minMs: 1, maxMs: 4 } });
    server = new WsServer((req, conn) => handler(req, conn), silentLogger, DEFAULT_CONNECTION_LIMITS, brokerResponseEncoder, undefined, undefined, scheduler, net.transport('broker'));
    await server.listen({ host: 'broker', port: 9092 });
  });

  afterEach(() => server.close());

  it('answers requests, chunked fetch answers included, in order per connection', async () => {
    handler = (req) => {
      const n = (req.body as { n: number }).n;
      return req.apiKey === 1 ? { errorCode: 0, records: Buffer.alloc(100 + n, n & 0xff), tail: n } : { plain: n };
    };
    const link = await connect();
    const answers = Array.from({ length: 20 }, (_, n) => link.request<{ plain?: number; tail?: number; records?: Uint8Array }>(n % 2, 0, { n }, 5_000));
    await run(20);
    const got = await Promise.all(answers);
    got.forEach((a, n) => {
      if (n % 2 === 1) {
        expect(a.tail).to.equal(n);
        expect(a.records?.length).to.equal(100 + n);
      } else {
        expect(a.plain).to.equal(n);
      }
    });
    expect(server.connections.size).to.equal(1);
    link.close();
    await run(20);
    expect(server.connections.size).to.equal(0);
  });

  it('a throttled connection is muted until its timer runs on the injected scheduler', async () => {
    handler = (req, conn) => {
      if ((req.body as { n: number }).n === 0) (conn as unknown as { throttle(ms: number): void }).throttle(500);
      return { n: (req.body as { n: number }).n };
    };
    const link = await connect();
    const first = link.request(3, 0, { n: 0 }, 10_000);
    await run(20);
    expect(await first).to.deep.equal({ n: 0 });
    let second: unknown;
    void link.request(3, 0, { n: 1 }, 10_000).then((b) => { second = b; });
    await run(400);
    expect(second, 'muted for 500 ms').to.equal(undefined);
    await run(150);
    expect(second).to.deep.equal({ n: 1 });
    link.close();
  });

  it('a partition times requests out on the scheduler; a break fails them as retriable network errors', async () => {
    handler = (req) => ({ n: (req.body as { n: number }).n });
    const link = await connect();
    net.partition([['client'], ['broker']]);
    const timedOut = link.request(3, 0, { n: 1 }, 300).then(() => 'answered', (e: unknown) => (isSluiceError(e) ? e.errorName : 'other'));
    await run(320);
    expect(await timedOut).to.equal('REQUEST_TIMED_OUT');
    const broken = link.request(3, 0, { n: 2 }, 5_000).then(() => 'answered', (e: unknown) => (isSluiceError(e) ? e.errorName : 'other'));
    net.breakConnections('client');
    await run(20);
    expect(await broken).to.equal('NETWORK_EXCEPTION');
    expect(link.isOpen).to.equal(false);
  });
});
