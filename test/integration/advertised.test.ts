// Advertised listeners and the outbound address on real processes: three
// combined nodes whose broker and controller listeners are reached only
// through TCP forwarders (a stand-in for a proxy or NAT), each node dialing
// from its own loopback address. Metadata must hand out the advertised URLs,
// acks=all must commit through the forwarders, and every node-to-node
// connection must arrive from the dialing node's --outbound-address.
import net from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { NodeProcess, freePorts, waitFor } from './harness.js';
import { connect, createTopic, produceOk, readPartition, Connections } from './broker-kit.js';
import fs from 'node:fs';
import os from 'node:os';

/** Forwards every connection on `port` to `target`, remembering where each came from. */
class Forwarder {
  readonly sources = new Set<string>();
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();

  constructor(readonly port: number, target: number) {
    this.server = net.createServer((inbound) => {
      this.sources.add(inbound.remoteAddress ?? '?');
      const outbound = net.connect(target, '127.0.0.1');
      for (const s of [inbound, outbound]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => { inbound.destroy(); outbound.destroy(); });
      }
      inbound.pipe(outbound).pipe(inbound);
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(this.port, '127.0.0.1', resolve));
  }

  close(): void {
    for (const s of this.sockets) s.destroy();
    this.server.close();
  }
}

const outbound = (id: number): string => `127.0.0.${10 + id}`;

describe('advertised listeners and --outbound-address on a live cluster', function () {
  this.timeout(120_000);
  const forwarders: Forwarder[] = [];
  const nodes: NodeProcess[] = [];
  const conns = new Connections();
  let root: string;
  let advertisedBroker: string[];

  before(async () => {
    // Per node: real controller port, real broker port, forwarded controller port, forwarded broker port.
    const ports = await freePorts(12);
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-adv-'));
    const at = (id: number, k: number): number => ports[(id - 1) * 4 + k]!;
    const quorum = [1, 2, 3].map((id) => `${id}@127.0.0.1:${at(id, 2)}`).join(',');
    advertisedBroker = [1, 2, 3].map((id) => `ws://127.0.0.1:${at(id, 3)}`);
    for (const id of [1, 2, 3]) {
      forwarders.push(new Forwarder(at(id, 2), at(id, 0)), new Forwarder(at(id, 3), at(id, 1)));
      const dataDir = path.join(root, `node-${id}`);
      nodes.push(new NodeProcess(id, at(id, 0), dataDir, () => [
        '--node-id', String(id), '--roles', 'broker,controller',
        '--controller-listen', `ws://127.0.0.1:${at(id, 0)}`, '--listen', `ws://127.0.0.1:${at(id, 1)}`,
        '--advertised-listen', advertisedBroker[id - 1]!, '--outbound-address', outbound(id),
        '--controller-quorum', quorum, '--data-dir', dataDir, '--log-level', 'warn', '--replica-lag-time-max-ms', '10000',
      ], at(id, 1)));
    }
    await Promise.all(forwarders.map((f) => f.listen()));
    for (const n of nodes) n.start();
  });

  after(async () => {
    conns.closeAll();
    await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
    for (const f of forwarders) f.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('hands out the advertised URLs, replicates through them, and dials from the outbound addresses', async () => {
    const bootstrap = await waitFor('node 1\'s broker listener', async () => connect(nodes[0]!.brokerUrl).catch(() => undefined), { timeoutMs: 30_000, intervalMs: 200 });
    try {
      await waitFor('three brokers with their advertised URLs', async () => {
        const urls = (await bootstrap.metadata([])).brokers.map((b) => b.url).sort();
        return urls.length === 3 && urls.join() === [...advertisedBroker].sort().join() ? true : undefined;
      }, { timeoutMs: 60_000, intervalMs: 200 });
      await createTopic(bootstrap, 'through-proxy', 1, 3);
      const base = await produceOk(conns, bootstrap, 'through-proxy', 0, [{ value: 'a' }, { value: 'b' }]);
      expect(base).to.equal(0);
      const md = await bootstrap.metadata(['through-proxy']);
      const leader = md.topics[0]!.partitions[0]!.leader;
      const content = await readPartition(await conns.get(advertisedBroker[leader - 1]!), 'through-proxy', 0);
      expect(content.records.map((r) => r.value?.toString())).to.deep.equal(['a', 'b']);
      expect(content.highWatermark).to.equal(2);
    } finally {
      bootstrap.close();
    }
    // Raft links and quorum clients reach each node's controller port through its forwarder; the
    // followers' fetches reach the leader's broker port through its forwarder.
    const nodeSources = new Set([1, 2, 3].map(outbound));
    for (const [i, f] of forwarders.entries()) {
      const fromNodes = [...f.sources].filter((s) => s !== '127.0.0.1');
      expect(fromNodes.every((s) => nodeSources.has(s)), `forwarder ${i} sources ${[...f.sources].join()}`).to.equal(true);
    }
    const controllerSources = new Set(forwarders.filter((_, i) => i % 2 === 0).flatMap((f) => [...f.sources]));
    expect([...controllerSources].sort()).to.deep.equal([...nodeSources].sort());
    const brokerSources = new Set(forwarders.filter((_, i) => i % 2 === 1).flatMap((f) => [...f.sources]));
    expect([...brokerSources].filter((s) => nodeSources.has(s)).length, 'followers fetched through the advertised URL').to.be.greaterThan(0);
  });
});
