// Runtime peers of the Raft transport (addPeer/removePeer) on loopback with
// real sockets: hellos from a node id are accepted only while it is a peer,
// removal closes its connections, a new url replaces the link.
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { silentLogger } from '../../src/util/logger.js';
import { SeededRng } from '../../src/util/rng.js';
import type { Message } from '../../src/raft/types.js';
import { DEFAULT_TRANSPORT_LIMITS, type TransportLimits } from '../../src/raft-node/quorum-config.js';
import { RaftTransport } from '../../src/raft-node/transport.js';
import { WIRE_VERSION, encodeFrame } from '../../src/raft-node/wire.js';
import { freePorts, waitFor } from '../integration/harness.js';

const CLUSTER = 'peers-cluster';
const WAIT = { timeoutMs: 10_000, intervalMs: 5 };
const limits: TransportLimits = { ...DEFAULT_TRANSPORT_LIMITS, reconnectBackoffBaseMs: 10, reconnectBackoffMaxMs: 50 };

interface Node {
  transport: RaftTransport;
  received: Message[];
  url: string;
}

function heartbeat(from: number, to: number, commit: number): Message {
  return { type: 'heartbeat', from, to, term: 1, commit, readRound: 0 };
}

async function startNode(id: number, port: number, peers: Map<number, string>, start = true): Promise<Node> {
  const url = `ws://127.0.0.1:${port}`;
  const transport = new RaftTransport({
    nodeId: id, clusterId: CLUSTER, listen: { host: '127.0.0.1', port, url }, peers, limits, rng: new SeededRng(id), logger: silentLogger,
  });
  const node: Node = { transport, received: [], url };
  await transport.listen();
  if (start) startHandlers(node);
  return node;
}

function startHandlers(node: Node): void {
  node.transport.start({ onRaftMessage: (m) => node.received.push(m), onClientRequest: async () => null });
}

/** A raw socket that says hello as node `nodeId`; resolves once open (the hello is sent). */
async function rawNode(url: string, nodeId: number): Promise<{ ws: WebSocket; closed: Promise<number> }> {
  const ws = new WebSocket(url);
  ws.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  await new Promise((resolve) => ws.once('open', resolve));
  ws.send(encodeFrame({ k: 'hello', role: 'node', version: WIRE_VERSION, nodeId, clusterId: CLUSTER }));
  return { ws, closed };
}

describe('raft-node transport: runtime peers', function () {
  this.timeout(30_000);
  const nodes: Node[] = [];
  const sockets: WebSocket[] = [];
  let p1: number;
  let p2: number;
  let dead: number;

  beforeEach(async () => {
    [p1, p2, dead] = (await freePorts(3)) as [number, number, number];
  });

  afterEach(async () => {
    for (const ws of sockets.splice(0)) ws.terminate();
    await Promise.all(nodes.splice(0).map((n) => n.transport.close()));
  });

  it('refuses a hello from an unknown node id until addPeer, then delivers its messages', async () => {
    const a = await startNode(1, p1, new Map());
    nodes.push(a);
    const refused = await rawNode(a.url, 2);
    sockets.push(refused.ws);
    expect(await refused.closed, 'unknown node id').to.equal(1008);

    a.transport.addPeer(2, `ws://127.0.0.1:${p2}`);
    const accepted = await rawNode(a.url, 2);
    sockets.push(accepted.ws);
    accepted.ws.send(encodeFrame({ k: 'raft', msgs: [heartbeat(2, 1, 7)] }));
    await waitFor('the message from the added peer', () => a.received.length === 1, WAIT);
    expect(a.received[0]).to.deep.include({ from: 2, commit: 7 });
  });

  it('sends to a peer added at runtime, before or after start()', async () => {
    const b = await startNode(2, p2, new Map([[1, `ws://127.0.0.1:${p1}`]]));
    nodes.push(b);
    const a = await startNode(1, p1, new Map(), false);
    nodes.push(a);
    a.transport.addPeer(2, b.url); // before start: dialed once started
    a.transport.addPeer(1, 'ws://127.0.0.1:1'); // our own id: ignored
    expect([...a.transport.peers()]).to.deep.equal([[2, b.url]]);
    startHandlers(a);
    a.transport.send([heartbeat(1, 2, 1)]);
    await waitFor('delivery to the added peer', () => b.received.length === 1, WAIT);
    // The added peer's own link to us was accepted all along (we were its static peer).
    b.transport.send([heartbeat(2, 1, 2)]);
    await waitFor('delivery from the added peer', () => a.received.length === 1, WAIT);
  });

  it('is idempotent for the same url and replaces the link for a new url', async () => {
    const b = await startNode(2, p2, new Map([[1, `ws://127.0.0.1:${p1}`]]));
    nodes.push(b);
    const a = await startNode(1, p1, new Map());
    nodes.push(a);
    // A wrong address first: the message queued for it goes with the old link.
    a.transport.addPeer(2, `ws://127.0.0.1:${dead}`);
    a.transport.send([heartbeat(1, 2, 1)]);
    a.transport.addPeer(2, b.url);
    a.transport.send([heartbeat(1, 2, 2)]);
    await waitFor('delivery over the new link', () => b.received.length === 1, WAIT);
    expect(b.received[0], 'nothing from the replaced link').to.deep.include({ commit: 2 });
    const connects = a.transport.stats().peers['2']?.connects;
    a.transport.addPeer(2, b.url);
    a.transport.send([heartbeat(1, 2, 3)]);
    await waitFor('delivery after a repeated addPeer', () => b.received.length === 2, WAIT);
    expect(a.transport.stats().peers['2']?.connects, 'same link, no redial').to.equal(connects);
    expect(a.transport.peers().size).to.equal(1);
  });

  it('removePeer closes the peer connections, refuses its hellos and drops messages to it', async () => {
    const a = await startNode(1, p1, new Map());
    nodes.push(a);
    a.transport.addPeer(2, `ws://127.0.0.1:${dead}`);
    const conn = await rawNode(a.url, 2);
    sockets.push(conn.ws);
    conn.ws.send(encodeFrame({ k: 'raft', msgs: [heartbeat(2, 1, 1)] }));
    await waitFor('the peer is connected', () => a.received.length === 1, WAIT);

    a.transport.removePeer(2);
    a.transport.removePeer(2); // idempotent
    await conn.closed; // its inbound connection is closed
    expect(a.transport.peers().size).to.equal(0);
    expect(a.transport.stats().peers).to.not.have.property('2');
    const again = await rawNode(a.url, 2);
    sockets.push(again.ws);
    expect(await again.closed, 'hello of a removed peer').to.equal(1008);
    a.transport.send([heartbeat(1, 2, 5)]); // no link: dropped, no throw
    expect(a.received).to.have.length(1);
  });

  it('ignores addPeer after close', async () => {
    const a = await startNode(1, p1, new Map());
    await a.transport.close();
    a.transport.addPeer(2, `ws://127.0.0.1:${p2}`);
    expect(a.transport.peers().size).to.equal(0);
  });
});
