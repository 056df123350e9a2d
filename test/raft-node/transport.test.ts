import { expect } from 'chai';
import { WebSocket } from 'ws';
import { pack } from 'msgpackr';
import { Errors, SluiceError, isSluiceError } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';
import { SeededRng } from '../../src/util/rng.js';
import type { Message } from '../../src/raft/types.js';
import { DEFAULT_TRANSPORT_LIMITS, type TransportLimits } from '../../src/raft-node/quorum-config.js';
import { QuorumClient } from '../../src/raft-node/quorum-client.js';
import { RaftTransport } from '../../src/raft-node/transport.js';
import { WIRE_VERSION, encodeFrame, type ClientRequest } from '../../src/raft-node/wire.js';
import { freePorts, waitFor } from '../integration/harness.js';

const CLUSTER = 'test-cluster';
const limits: TransportLimits = {
  ...DEFAULT_TRANSPORT_LIMITS,
  frameBytesMax: 64 * 1024,
  frameBatchBytesTarget: 16 * 1024,
  sendQueueFramesMax: 8,
  sendQueueBytesMax: 64 * 1024,
  reconnectBackoffBaseMs: 10,
  reconnectBackoffMaxMs: 50,
};

interface Node {
  transport: RaftTransport;
  received: Message[];
  requests: ClientRequest[];
}

function heartbeat(from: number, to: number, commit: number): Message {
  return { type: 'heartbeat', from, to, term: 1, commit, readRound: 0 };
}

async function startNode(id: number, ports: Map<number, number>, seed = id): Promise<Node> {
  const peers = new Map([...ports].filter(([p]) => p !== id).map(([p, port]) => [p, `ws://127.0.0.1:${port}`] as const));
  const port = ports.get(id) ?? 0;
  const transport = new RaftTransport({
    nodeId: id, clusterId: CLUSTER, listen: { host: '127.0.0.1', port, url: `ws://127.0.0.1:${port}` },
    peers, limits, rng: new SeededRng(seed), logger: silentLogger,
  });
  const node: Node = { transport, received: [], requests: [] };
  await transport.listen();
  transport.start({
    onRaftMessage: (m) => node.received.push(m),
    onClientRequest: async (req) => {
      node.requests.push(req);
      if (req.op === 'propose') throw new SluiceError(Errors.NOT_CONTROLLER, 'ask node 2', { leader: 2, leaderEndpoint: `ws://127.0.0.1:${ports.get(2)}` });
      return { nodeId: id, op: req.op };
    },
  });
  return node;
}

/** Opens a raw client socket and resolves with the close code the server sends after `frames`. */
async function closeCodeAfter(port: number, frames: (Buffer | string)[]): Promise<number> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}`);
  ws.on('error', () => undefined);
  await new Promise((resolve) => ws.once('open', resolve));
  for (const f of frames) ws.send(f);
  return new Promise((resolve) => ws.once('close', (code) => resolve(code)));
}

describe('raft-node transport (WebSocket, loopback)', function () {
  this.timeout(30_000);
  let ports: Map<number, number>;
  const nodes: Node[] = [];

  beforeEach(async () => {
    const [p1, p2] = await freePorts(2);
    ports = new Map([[1, p1 ?? 0], [2, p2 ?? 0]]);
  });

  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.transport.close()));
  });

  it('delivers raft messages both ways, in order, batched into frames', async () => {
    const [a, b] = [await startNode(1, ports), await startNode(2, ports)];
    nodes.push(a, b);
    const count = 500;
    const batch: Message[] = [];
    for (let i = 1; i <= count; i++) batch.push(heartbeat(1, 2, i));
    a.transport.send(batch);
    b.transport.send([heartbeat(2, 1, 7)]);
    await waitFor('all heartbeats at node 2', () => b.received.length === count, { timeoutMs: 10_000 });
    await waitFor('the heartbeat at node 1', () => a.received.length === 1, { timeoutMs: 10_000 });
    expect(b.received.map((m) => (m.type === 'heartbeat' ? m.commit : -1))).to.deep.equal(batch.map((_, i) => i + 1));
    expect(a.received[0]).to.deep.include({ from: 2, to: 1, commit: 7 });
  });

  it('serves client requests and carries leader hints in errors', async () => {
    const a = await startNode(1, ports);
    nodes.push(a);
    const client = new QuorumClient({ endpoints: [`ws://127.0.0.1:${ports.get(1)}`], clusterId: CLUSTER, limits: { leaderSearchTimeoutMs: 0 } });
    try {
      const status = await client.status(`ws://127.0.0.1:${ports.get(1)}`);
      expect(status).to.deep.equal({ nodeId: 1, op: 'status' });
      const err = await client.propose(Buffer.from('x')).then(() => undefined, (e: unknown) => e);
      expect(isSluiceError(err, Errors.NOT_CONTROLLER), String(err)).to.equal(true);
      expect((err as SluiceError).details).to.deep.include({ leader: 2 });
    } finally {
      client.close();
    }
  });

  it('drops bad input, closes the offending connection and keeps serving', async () => {
    const [a, b] = [await startNode(1, ports), await startNode(2, ports)];
    nodes.push(a, b);
    const port = ports.get(1) ?? 0;
    const nodeHello = (nodeId: number, clusterId = CLUSTER) => encodeFrame({ k: 'hello', role: 'node', version: WIRE_VERSION, nodeId, clusterId });
    expect(await closeCodeAfter(port, [Buffer.from('garbage that is not msgpack')])).to.equal(1008);
    expect(await closeCodeAfter(port, ['text frame'])).to.equal(1008);
    expect(await closeCodeAfter(port, [nodeHello(99)])).to.equal(1008);
    expect(await closeCodeAfter(port, [nodeHello(2, 'other-cluster')])).to.equal(1008);
    expect(await closeCodeAfter(port, [encodeFrame({ k: 'raft', msgs: [heartbeat(2, 1, 1)] })])).to.equal(1008);
    expect(await closeCodeAfter(port, [Buffer.alloc(limits.frameBytesMax + 1)])).to.equal(1009);
    expect(await closeCodeAfter(port, [nodeHello(2), pack({ k: 'raft', msgs: 3 })])).to.equal(1008);
    // Spoofed or misaddressed messages after a valid hello are dropped, the link stays up.
    const spoof = new WebSocket(`ws://127.0.0.1:${port}`);
    spoof.on('error', () => undefined);
    await new Promise((resolve) => spoof.once('open', resolve));
    spoof.send(nodeHello(2));
    spoof.send(encodeFrame({ k: 'raft', msgs: [heartbeat(3, 1, 1), heartbeat(2, 5, 1), heartbeat(2, 1, 42)] }));
    await waitFor('the one well-addressed message', () => a.received.some((m) => m.type === 'heartbeat' && m.commit === 42), { timeoutMs: 5_000 });
    expect(a.received).to.have.length(1);
    expect(spoof.readyState).to.equal(WebSocket.OPEN);
    spoof.close();
    const stats = a.transport.stats();
    // The oversized frame is refused by ws itself (close 1009) before it is a frame: 6, not 7.
    expect(stats.rejectedFrames).to.equal(6);
    expect(stats.droppedMessages).to.equal(2);
    // The real peer still gets through.
    b.transport.send([heartbeat(2, 1, 99)]);
    await waitFor('a message from the real peer', () => a.received.some((m) => m.type === 'heartbeat' && m.commit === 99), { timeoutMs: 5_000 });
  });

  it('bounds the send queue of a peer that is down, then delivers after it comes up', async () => {
    const a = await startNode(1, ports);
    nodes.push(a);
    for (let i = 1; i <= 100; i++) a.transport.send([heartbeat(1, 2, i)]);
    const peer = a.transport.stats().peers['2'];
    expect(peer?.connected).to.equal(false);
    expect(peer?.queuedFrames).to.be.at.most(limits.sendQueueFramesMax);
    expect(peer?.droppedFrames).to.be.at.least(100 - limits.sendQueueFramesMax);
    const b = await startNode(2, ports);
    nodes.push(b);
    await waitFor('the queued messages after reconnect', () => b.received.length === limits.sendQueueFramesMax, { timeoutMs: 10_000 });
    // The newest messages survived: the oldest were dropped.
    expect(b.received.map((m) => (m.type === 'heartbeat' ? m.commit : 0))).to.deep.equal([93, 94, 95, 96, 97, 98, 99, 100]);
  });

  it('reconnects when a peer restarts', async () => {
    const a = await startNode(1, ports);
    let b = await startNode(2, ports);
    nodes.push(a);
    a.transport.send([heartbeat(1, 2, 1)]);
    await waitFor('first delivery', () => b.received.length === 1, { timeoutMs: 5_000 });
    await b.transport.close();
    await waitFor('link down', () => a.transport.stats().peers['2']?.connected === false, { timeoutMs: 5_000 });
    b = await startNode(2, ports);
    nodes.push(b);
    await waitFor('link up again', () => a.transport.stats().peers['2']?.connected === true, { timeoutMs: 5_000 });
    a.transport.send([heartbeat(1, 2, 2)]);
    await waitFor('delivery after restart', () => b.received.some((m) => m.type === 'heartbeat' && m.commit === 2), { timeoutMs: 5_000 });
  });

  it('refuses to listen on a port in use with a one-line reason', async () => {
    const a = await startNode(1, ports);
    nodes.push(a);
    const port = ports.get(1) ?? 0;
    const clash = new RaftTransport({
      nodeId: 3, clusterId: CLUSTER, listen: { host: '127.0.0.1', port, url: `ws://127.0.0.1:${port}` },
      peers: new Map(), limits, rng: new SeededRng(3), logger: silentLogger,
    });
    const err = await clash.listen().then(() => undefined, (e: unknown) => e);
    expect(String(err)).to.match(/address in use/);
  });
});
