// Three real `sluice server --roles controller` processes on 127.0.0.1 with
// real data dirs: replication through the quorum client, SIGKILL of the
// leader, re-election, restart and catch-up (by snapshot install: the
// snapshot interval is small), hostile input on a listener, and identity
// checks on the data dir.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { WebSocket } from 'ws';
import type { QuorumClient } from '../../src/raft-node/quorum-client.js';
import { digestStep } from '../../src/raft-node/log-digest-state-machine.js';
import { WIRE_VERSION, encodeFrame } from '../../src/raft-node/wire.js';
import { MAIN_JS, ProcessCluster, freePorts, waitFor } from './harness.js';

interface Acked {
  readonly index: number;
  readonly data: Buffer;
}

async function proposeMany(client: QuorumClient, count: number, tag: string, into: Acked[]): Promise<void> {
  const datas = Array.from({ length: count }, (_, i) => Buffer.from(`${tag}-${i}-${'x'.repeat(i % 50)}`));
  const acks = await Promise.all(datas.map((d) => client.propose(d)));
  acks.forEach((a, i) => into.push({ index: a.index, data: datas[i] ?? Buffer.alloc(0) }));
}

function expectedDigest(acked: readonly Acked[]): number {
  return [...acked].sort((a, b) => a.index - b.index).reduce((d, e) => digestStep(d, e.index, e.data), 0);
}

/** Resolves with the close code a node sends after it got `frames` on a fresh connection. */
async function closeCodeAfter(url: string, frames: Buffer[]): Promise<number> {
  const ws = new WebSocket(url);
  ws.on('error', () => undefined);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('close', reject);
  });
  for (const f of frames) ws.send(f);
  return new Promise((resolve) => ws.once('close', (code) => resolve(code)));
}

describe('raft quorum of three real processes', function () {
  this.timeout(90_000);
  let cluster: ProcessCluster;
  let client: QuorumClient;
  const acked: Acked[] = [];

  before(async () => {
    cluster = await ProcessCluster.create({ size: 3, extraArgs: ['--raft-only', '--snapshot-interval-entries', '100'] });
    cluster.startAll();
    client = cluster.client();
  });

  after(async () => {
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(`--- last output of the nodes ---\n${cluster.dumpLogs()}`);
  });

  it('keeps every acknowledged entry through a leader SIGKILL, re-election and restart', async () => {
    const first = await cluster.waitForLeader(client, { timeoutMs: 20_000 });
    await proposeMany(client, 300, 'a', acked);
    expect(acked).to.have.length(300);

    const victim = cluster.node(first.id);
    await victim.kill('SIGKILL');
    const second = await cluster.waitForLeader(client, { timeoutMs: 20_000, notId: first.id, minTerm: first.term + 1 });
    expect(second.id).to.not.equal(first.id);

    await proposeMany(client, 200, 'b', acked);
    victim.start();
    const want = { count: acked.length, digest: expectedDigest(acked), index: Math.max(...acked.map((a) => a.index)) };
    const converged = await waitFor('all three nodes at the same applied index and digest', async () => {
      const all = await cluster.statuses(client);
      if (all.size !== 3) return undefined;
      const views = [...all.values()].map((s) => s.stateMachine as { appliedIndex: number; appliedCount: number; digest: number });
      const v0 = views[0];
      const same = v0 !== undefined && v0.appliedIndex >= want.index
        && views.every((v) => v.appliedIndex === v0.appliedIndex && v.digest === v0.digest);
      return same ? { views, statuses: [...all.values()] } : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100 });

    for (const v of converged.views) {
      expect(v.appliedCount, 'no acknowledged entry lost, none invented').to.equal(want.count);
      expect(v.digest, 'the applied sequence is exactly the acknowledged one').to.equal(want.digest);
    }
    // The restarted node caught up past a compacted log.
    const restarted = converged.statuses.find((s) => s.nodeId === first.id);
    expect(restarted?.snapshotIndex).to.be.greaterThan(0);
    // A linearizable read through the leader sees every acknowledged write.
    const read = await client.read();
    expect(read.readIndex).to.be.at.least(want.index);
    expect((read.stateMachine as { appliedCount: number }).appliedCount).to.equal(want.count);
  });

  it('drops garbage frames and unknown node ids, and keeps serving', async () => {
    const target = cluster.nodes[0];
    if (!target) throw new Error('no node');
    const nodeHello = (nodeId: number, clusterId: string) => encodeFrame({ k: 'hello', role: 'node', version: WIRE_VERSION, nodeId, clusterId });
    const status = await client.status(target.url);
    expect(await closeCodeAfter(target.url, [Buffer.from([0xc1, 0xff, 0x00, 0x13, 0x37])])).to.equal(1008);
    expect(await closeCodeAfter(target.url, [nodeHello(99, 'whatever')])).to.equal(1008);
    expect(await closeCodeAfter(target.url, [Buffer.from('{"k":"hello"}')])).to.equal(1008);
    expect(target.running).to.equal(true);
    expect((await client.status(target.url)).nodeId).to.equal(status.nodeId);
    await proposeMany(client, 20, 'c', acked);
    expect(acked).to.have.length(520);
  });

  it('refuses to start on an existing data dir with a wrong --node-id', async () => {
    const [port] = await freePorts(1);
    const dir = cluster.node(1).dataDir;
    const r = spawnSync(process.execPath, [MAIN_JS, 'server', '--node-id', '2', '--roles', 'controller',
      '--controller-listen', `ws://127.0.0.1:${port}`, '--controller-quorum', cluster.quorum, '--data-dir', dir], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status).to.equal(1);
    expect(r.stderr.trim().split('\n')).to.have.length(1);
    expect(r.stderr).to.match(/belongs to node\.id=1.*not node 2/);
  });
});
