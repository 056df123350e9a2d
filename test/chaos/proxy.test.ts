// The chaos proxy with plain sockets: forwarding both ways, who is dialing
// (source address → node or client), cuts both ways and one way (bytes held,
// the connection open, delivered in order on heal), reset cuts (existing and
// new connections), delays, and the partition helpers' rules. Never-arriving
// bytes are proved by the proxy's own count of what it holds, not by waiting.
import net from 'node:net';
import { expect } from 'chai';
import { ChaosProxy, nodeAddress, peerOfAddress } from './proxy.js';
import { waitFor } from '../integration/harness.js';

const WAIT = { timeoutMs: 5_000, intervalMs: 5 };

/** A TCP server standing in for node `id`'s endpoint: remembers what each connection received. */
class Target {
  readonly received: Buffer[] = [];
  readonly sockets: net.Socket[] = [];
  readonly server = net.createServer((s) => {
    this.sockets.push(s);
    s.on('data', (c: Buffer) => this.received.push(c));
    s.on('error', () => undefined);
  });

  listen(): Promise<number> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => resolve((this.server.address() as net.AddressInfo).port)));
  }

  text(): string {
    return Buffer.concat(this.received).toString('utf8');
  }

  close(): void {
    for (const s of this.sockets) s.destroy();
    this.server.close();
  }
}

/** A client socket that remembers what it received and whether it closed. */
async function dial(port: number, from?: string): Promise<{ socket: net.Socket; text: () => string; closed: Promise<void> }> {
  const chunks: Buffer[] = [];
  const socket = net.connect({ host: '127.0.0.1', port, ...(from ? { localAddress: from } : {}) });
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return { socket, text: () => Buffer.concat(chunks).toString('utf8'), closed };
}

describe('chaos proxy', function () {
  this.timeout(20_000);
  let proxy: ChaosProxy;
  let target: Target;
  let port: number;
  const open: net.Socket[] = [];

  beforeEach(async () => {
    proxy = new ChaosProxy();
    target = new Target();
    // The target is node 2's endpoint; node 1 dials from 127.0.0.11.
    port = (await proxy.addRoute('n2-broker', 2, await target.listen())).port;
  });

  afterEach(async () => {
    for (const s of open.splice(0)) s.destroy();
    await proxy.close();
    target.close();
  });

  async function connectAs(from?: string) {
    const c = await dial(port, from);
    open.push(c.socket);
    await waitFor('the target to accept', () => target.sockets.length > 0 && proxy.connectionCount > 0, WAIT);
    return c;
  }

  it('maps source addresses to nodes and everything else to client', () => {
    expect(peerOfAddress('127.0.0.11')).to.equal(1);
    expect(peerOfAddress('::ffff:127.0.0.15')).to.equal(5);
    expect(peerOfAddress('127.0.0.1')).to.equal('client');
    expect(peerOfAddress('10.0.0.11')).to.equal('client');
    expect(peerOfAddress(undefined)).to.equal('client');
    expect(nodeAddress(3)).to.equal('127.0.0.13');
  });

  it('forwards bytes both ways', async () => {
    const c = await connectAs();
    c.socket.write('hello');
    await waitFor('hello at the target', () => target.text() === 'hello', WAIT);
    target.sockets[0]!.write('world');
    await waitFor('world at the client', () => c.text() === 'world', WAIT);
  });

  it('cuts both ways: bytes are held with the connection open, and delivered in order on heal', async () => {
    const c = await connectAs(nodeAddress(1));
    c.socket.write('a');
    await waitFor('a at the target', () => target.text() === 'a', WAIT);
    proxy.cutBoth(1, 2);
    c.socket.write('b');
    target.sockets[0]!.write('x');
    await waitFor('both directions held', () => proxy.queuedBytes(1, 2) === 1 && proxy.queuedBytes(2, 1) === 1, WAIT);
    expect(target.text()).to.equal('a');
    expect(c.text()).to.equal('');
    // A client (another source) is not cut from node 2.
    const other = await dial(port);
    open.push(other.socket);
    other.socket.write('z');
    await waitFor('the client reaches node 2', () => target.text() === 'az', WAIT);
    c.socket.write('c');
    await waitFor('c held too', () => proxy.queuedBytes(1, 2) === 2, WAIT);
    proxy.heal();
    await waitFor('held bytes delivered in order', () => target.text() === 'azbc' && c.text() === 'x', WAIT);
    expect(proxy.queuedBytes(1, 2)).to.equal(0);
  });

  it('cuts one way: only bytes from src to dst are held', async () => {
    const c = await connectAs(nodeAddress(1));
    proxy.oneWay(1, 2);
    c.socket.write('up');
    target.sockets[0]!.write('down');
    await waitFor('down delivered', () => c.text() === 'down', WAIT);
    await waitFor('up held', () => proxy.queuedBytes(1, 2) === 2, WAIT);
    expect(target.text()).to.equal('');
    proxy.heal(1, 2);
    await waitFor('up delivered', () => target.text() === 'up', WAIT);
  });

  it('cuts one way against the dialing direction too (bytes of the endpoint owner held)', async () => {
    const c = await connectAs(nodeAddress(1));
    proxy.oneWay(2, 1);
    c.socket.write('up');
    target.sockets[0]!.write('down');
    await waitFor('up delivered', () => target.text() === 'up', WAIT);
    await waitFor('down held', () => proxy.queuedBytes(2, 1) === 4, WAIT);
    expect(c.text()).to.equal('');
    proxy.heal();
    await waitFor('down delivered', () => c.text() === 'down', WAIT);
  });

  it('a reset cut closes existing connections and refuses new ones until healed', async () => {
    const c = await connectAs(nodeAddress(1));
    proxy.cut(1, 2, 'reset');
    await c.closed;
    // A new connection is reset: refused at connect, or closed right after.
    await dial(port, nodeAddress(1)).then((d) => {
      open.push(d.socket);
      return d.closed;
    }, () => undefined);
    expect(proxy.connectionCount).to.equal(0);
    proxy.heal(1, 2);
    const again = await connectAs(nodeAddress(1));
    again.socket.write('back');
    await waitFor('bytes after the heal', () => target.text() === 'back', WAIT);
  });

  it('a new connection over a blackholed link is accepted and held', async () => {
    proxy.cutBoth(1, 2);
    const c = await dial(port, nodeAddress(1));
    open.push(c.socket);
    c.socket.write('early');
    await waitFor('held', () => proxy.queuedBytes(1, 2) === 5, WAIT);
    expect(target.text()).to.equal('');
    proxy.heal();
    await waitFor('delivered', () => target.text() === 'early', WAIT);
  });

  it('delays bytes, keeps them in order, and a heal removes the delay', async () => {
    const c = await connectAs();
    proxy.delay('client', 2, 60_000);
    c.socket.write('1');
    c.socket.write('2');
    await waitFor('both delayed', () => proxy.queuedBytes('client', 2) === 2, WAIT);
    expect(target.text()).to.equal('');
    proxy.delay('client', 2, 30_000);
    c.socket.write('3');
    await waitFor('3 delayed too', () => proxy.queuedBytes('client', 2) === 3, WAIT);
    expect(target.text()).to.equal('');
    proxy.heal();
    await waitFor('delivered in order', () => target.text() === '123', WAIT);
  });

  it('a short delay delivers by itself', async () => {
    const c = await connectAs();
    proxy.delay('client', 2, 20);
    c.socket.write('late');
    await waitFor('delivered after the delay', () => target.text() === 'late', WAIT);
  });

  it('the partition helpers set the rules they name', async () => {
    await proxy.addRoute('n1-broker', 1, port);
    await proxy.addRoute('n3-broker', 3, port);
    proxy.isolate(2);
    expect(proxy.describe().sort()).to.deep.equal(['n1->n2 cut blackhole', 'n2->n1 cut blackhole', 'n2->n3 cut blackhole', 'n3->n2 cut blackhole']);
    proxy.heal();
    proxy.isolate(2, { clients: true });
    expect(proxy.describe()).to.include('client->n2 cut blackhole');
    proxy.heal();
    proxy.split([1], [2, 3], 'reset');
    expect(proxy.describe().sort()).to.deep.equal(['n1->n2 cut reset', 'n1->n3 cut reset', 'n2->n1 cut reset', 'n3->n1 cut reset']);
    proxy.heal();
    proxy.oneWay(3, 1);
    expect(proxy.describe()).to.deep.equal(['n3->n1 cut blackhole']);
    proxy.cut(2, 2);
    expect(proxy.rule(2, 2).cut).to.equal(null);
  });
});
