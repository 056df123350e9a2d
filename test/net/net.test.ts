import net from 'node:net';
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { WsServer, parseListenUrl } from '../../src/net/ws-server.js';
import { ClientLink, type WebSocketLike } from '../../src/net/client-link.js';
import type { RequestHandler, ResponseEncoder } from '../../src/net/server-connection.js';
import { encodeRequest, encodeResponse } from '../../src/protocol/envelope.js';
import { brokerResponseEncoder } from '../../src/server/broker-api.js';
import { Errors, SluiceError, isSluiceError } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';

const factory = (url: string) => new WebSocket(url) as unknown as WebSocketLike;

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Opens a raw ws and resolves with the close code the server sends. */
function closeCodeAfter(url: string, send: (ws: WebSocket) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('open', () => send(ws));
    ws.on('close', (code) => resolve(code));
    ws.on('error', reject);
  });
}

describe('net: server connections and client links', () => {
  let server: WsServer;
  let url: string;
  let handler: RequestHandler;

  async function start(limits?: ConstructorParameters<typeof WsServer>[2], encoder?: ResponseEncoder) {
    server = new WsServer((req, conn) => handler(req, conn), silentLogger, limits, encoder);
    const addr = await server.listen({ host: '127.0.0.1', port: 0 });
    url = `ws://127.0.0.1:${addr.port}`;
  }

  afterEach(async () => {
    await server?.close();
  });

  it('matches responses to requests by correlation id, out of order', async () => {
    const releases: Array<() => void> = [];
    handler = (req) => {
      const body = req.body as { n: number };
      if (body.n === 1) return new Promise((resolve) => releases.push(() => resolve({ echo: 1 })));
      return { echo: body.n };
    };
    await start();
    const link = await ClientLink.connect(url, { factory });
    const first = link.request<{ echo: number }>(3, 0, { n: 1 }, 5000);
    const second = await link.request<{ echo: number }>(3, 0, { n: 2 }, 5000);
    expect(second.echo).to.equal(2);
    releases[0]!();
    expect((await first).echo).to.equal(1);
    link.close();
  });

  it('carries binary payloads without re-encoding them', async () => {
    handler = (req) => ({ size: (req.body as { batch: Uint8Array }).batch.length, back: (req.body as { batch: Uint8Array }).batch });
    await start();
    const link = await ClientLink.connect(url, { factory });
    const batch = Buffer.from(Array.from({ length: 1000 }, (_, i) => i & 0xff));
    const res = await link.request<{ size: number; back: Uint8Array }>(0, 0, { batch }, 5000);
    expect(res.size).to.equal(1000);
    expect(Buffer.from(res.back).equals(batch)).to.equal(true);
    link.close();
  });

  it('sends a chunked answer as one message in fragments, in order with the others on the connection', async () => {
    // Fetch (api key 1) answers go out chunked: their batches are fragments of their own.
    handler = (req) => {
      const n = (req.body as { n: number }).n;
      return req.apiKey === 1 ? { errorCode: 0, records: Buffer.alloc(1000 + n, n & 0xff), tail: n } : { plain: n };
    };
    await start(undefined, brokerResponseEncoder);
    const raw = new WebSocket(url);
    const messages: Buffer[] = [];
    raw.on('message', (data) => messages.push(data as Buffer));
    await new Promise((resolve) => raw.once('open', resolve));
    for (let n = 0; n < 20; n++) raw.send(encodeRequest({ apiKey: n % 2, apiVersion: 0, correlationId: n, clientId: null, body: { n } }));
    await waitFor(() => messages.length === 20);
    for (let n = 0; n < 20; n++) {
      const expected = n % 2 === 1 ? { errorCode: 0, records: Buffer.alloc(1000 + n, n & 0xff), tail: n } : { plain: n };
      expect(messages[n]!.equals(encodeResponse({ correlationId: n, body: expected })), `message ${n}`).to.equal(true);
    }
    raw.close();
    const link = await ClientLink.connect(url, { factory });
    const res = await link.request<{ records: Uint8Array; tail: number }>(1, 0, { n: 7 }, 5000);
    expect(Buffer.from(res.records).equals(Buffer.alloc(1007, 7))).to.equal(true);
    expect(res.tail).to.equal(7);
    link.close();
  });

  it('turns handler errors into error bodies and keeps serving', async () => {
    handler = (req) => {
      if ((req.body as { kind: string }).kind === 'typed') throw new SluiceError(Errors.UNKNOWN_TOPIC_OR_PARTITION, 'no topic x');
      if ((req.body as { kind: string }).kind === 'bug') throw new TypeError('oops');
      return { ok: true };
    };
    await start();
    const link = await ClientLink.connect(url, { factory });
    expect(await link.request(3, 0, { kind: 'typed' }, 5000)).to.deep.equal({ errorCode: 3, errorMessage: 'UNKNOWN_TOPIC_OR_PARTITION: no topic x' });
    expect(await link.request(3, 0, { kind: 'bug' }, 5000)).to.include({ errorCode: -1 });
    expect(await link.request(3, 0, { kind: 'fine' }, 5000)).to.deep.equal({ ok: true });
    link.close();
  });

  it('closes connections that send garbage, text or oversized frames; others keep working', async () => {
    handler = () => ({ ok: true });
    await start({ frameBytesMax: 1024, requestsInFlightMax: 16, sendBufferBytesMax: 1 << 20 });
    expect(await closeCodeAfter(url, (ws) => ws.send(Buffer.from([0xc1, 0x00, 0xff])))).to.equal(1007);
    expect(await closeCodeAfter(url, (ws) => ws.send(encodeRequest({ apiKey: 3, apiVersion: 0, correlationId: 1, clientId: null, body: [] as never })))).to.equal(1007);
    expect(await closeCodeAfter(url, (ws) => ws.send('hello'))).to.equal(1003);
    expect(await closeCodeAfter(url, (ws) => ws.send(Buffer.alloc(4096)))).to.equal(1009);
    const link = await ClientLink.connect(url, { factory });
    expect(await link.request(3, 0, {}, 5000)).to.deep.equal({ ok: true });
    link.close();
  });

  it('bounds requests in flight per connection', async () => {
    let current = 0;
    let maxConcurrent = 0;
    let started = 0;
    const releases: Array<() => void> = [];
    handler = () => {
      started++;
      current++;
      maxConcurrent = Math.max(maxConcurrent, current);
      return new Promise((resolve) => releases.push(() => {
        current--;
        resolve({ ok: true });
      }));
    };
    await start({ frameBytesMax: 1 << 20, requestsInFlightMax: 3, sendBufferBytesMax: 1 << 20 });
    const link = await ClientLink.connect(url, { factory });
    const all = Array.from({ length: 20 }, (_, i) => link.request(3, 0, { i }, 10_000));
    let released = 0;
    while (released < 20) {
      await waitFor(() => releases.length > 0);
      releases.shift()!();
      released++;
    }
    await Promise.all(all);
    expect(started).to.equal(20);
    expect(maxConcurrent).to.equal(3);
    link.close();
  });

  it('rejects pending requests on disconnect and on timeout, with retriable codes', async () => {
    handler = (req) => ((req.body as { hang?: boolean }).hang ? new Promise(() => {}) : { ok: true });
    await start();
    const link = await ClientLink.connect(url, { factory });
    const timedOut = await link.request(3, 0, { hang: true }, 50).catch((e) => e);
    expect(isSluiceError(timedOut, Errors.REQUEST_TIMED_OUT)).to.equal(true);
    const hanging = link.request(3, 0, { hang: true }, 10_000).catch((e) => e);
    await server.close();
    const lost = (await hanging) as SluiceError;
    expect(isSluiceError(lost, Errors.NETWORK_EXCEPTION)).to.equal(true);
    expect(lost.retriable).to.equal(true);
  });

  it('reports an unreachable address and a busy port clearly', async () => {
    handler = () => ({});
    await start();
    const port = Number(new URL(url).port);
    const busy = new WsServer(handler, silentLogger);
    const err = await busy.listen({ host: '127.0.0.1', port }).catch((e) => e);
    expect(String(err.message)).to.equal(`address 127.0.0.1:${port} is already in use`);
    await server.close();
    const refused = await ClientLink.connect(url, { factory, connectTimeoutMs: 2000 }).catch((e) => e);
    expect(isSluiceError(refused, Errors.NETWORK_EXCEPTION)).to.equal(true);
    expect(refused.message).to.contain(url);
  });

  // Found by the scale bench: a timed-out connect closed a socket still in its
  // handshake with no error listener left, and `ws` threw from the event loop.
  it('gives up on a handshake that never completes without an uncaught error', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      // Before the fix ws.close() threw from the timer: mocha reports that as an uncaught error.
      const err = await ClientLink.connect(`ws://127.0.0.1:${port}`, { factory, connectTimeoutMs: 200 }).catch((e) => e);
      expect(isSluiceError(err, Errors.NETWORK_EXCEPTION)).to.equal(true);
      expect(err.message).to.contain('timed out');
    } finally {
      silent.close();
    }
  });

  it('parses listener URLs', () => {
    expect(parseListenUrl('ws://127.0.0.1:9092')).to.deep.equal({ host: '127.0.0.1', port: 9092 });
    expect(() => parseListenUrl('http://x:1')).to.throw(/expected ws:\/\/host:port/);
    expect(() => parseListenUrl('nonsense')).to.throw(/expected ws:\/\/host:port/);
  });
});
