// KIP-853 for operators, on real processes: a fourth controller started with
// --join-quorum follows the metadata log, `sluice cluster add-controller`
// promotes it to voter once it caught up, the quorum keeps working with it
// when a voter dies and after its own restart, and `sluice cluster
// remove-controller` takes it out again. Refusals answer with one line and
// exit 1.
import { expect } from 'chai';
import path from 'node:path';
import { NodeProcess, ProcessCluster, freePorts, waitFor } from './harness.js';
import { runSluice } from './cli-kit.js';
import type { QuorumClient } from '../../src/raft-node/quorum-client.js';

describe('sluice cluster add-controller / remove-controller on real processes', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  let client: QuorumClient;
  let joining: NodeProcess;

  const sluice = (...args: string[]) => runSluice([...args, '--bootstrap', cluster.brokerUrls.join(',')]);

  before(async () => {
    cluster = await ProcessCluster.create({ size: 3, brokers: true });
    cluster.startAll();
    client = cluster.client();
    await cluster.waitForLeader(client, { timeoutMs: 30_000 });
    const [port] = await freePorts(1);
    const dataDir = path.join(cluster.root, 'node-4');
    joining = new NodeProcess(4, port!, dataDir, () => [
      '--node-id', '4', '--roles', 'controller', '--join-quorum', '--controller-listen', `ws://127.0.0.1:${port}`,
      '--controller-quorum', cluster.quorum, '--data-dir', dataDir, '--log-level', 'info',
    ]);
    joining.start();
  });

  after(async () => {
    await joining?.kill();
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(`--- last output of the nodes ---\n${cluster.dumpLogs()}\n${joining.output.slice(-60).join('\n')}`);
  });

  it('refuses a controller start that is not in --controller-quorum without --join-quorum', async () => {
    const r = await runSluice(['server', '--node-id', '9', '--roles', 'controller', '--controller-listen', 'ws://127.0.0.1:1',
      '--controller-quorum', cluster.quorum, '--data-dir', path.join(cluster.root, 'node-9')]);
    expect(r.status).to.equal(2);
    expect(r.stderr).to.match(/not in --controller-quorum.*--join-quorum/);
  });

  it('adds a running controller: observer, caught up, then voter', async () => {
    const added = await sluice('cluster', 'add-controller', '--node-id', '4', '--controller-listen', joining.url, '--json');
    expect(added.status, added.stderr).to.equal(0);
    expect(JSON.parse(added.stdout)).to.deep.include({ nodeId: 4, voters: [1, 2, 3, 4] });
    const own = await waitFor('node 4 a voter in its own view', async () => {
      const s = await client.status(joining.url).catch(() => undefined);
      return s && s.voters.includes(4) ? s : undefined;
    }, { timeoutMs: 20_000 });
    expect(own.role).to.be.oneOf(['follower', 'leader']);
    const text = await sluice('cluster', 'add-controller', '--node-id', '4', '--controller-listen', joining.url);
    expect(text.status).to.equal(1);
    expect(text.stderr.trim().split('\n')).to.have.length(1);
    expect(text.stderr).to.match(/already a controller/);
    const broker = await sluice('cluster', 'add-controller', '--node-id', '2', '--controller-listen', 'ws://127.0.0.1:1');
    expect(broker.status).to.equal(1);
    expect(broker.stderr).to.match(/already a controller/);
  });

  it('keeps a working quorum with the new voter when an old one dies', async () => {
    const leader = await cluster.waitForLeader(client, { timeoutMs: 20_000 });
    const victim = cluster.nodes.find((n) => n.id !== leader.id)!;
    await victim.kill();
    // 3 of 4 voters are up: the metadata log still commits (a topic is created and seen by node 4).
    const created = await sluice('topics', 'create', '--topic', 'after-join', '--partitions', '1', '--replication-factor', '2');
    expect(created.status, created.stderr).to.equal(0);
    await waitFor('node 4 applied the topic', async () => {
      const s = await client.status(joining.url).catch(() => undefined);
      const l = await client.status(cluster.node(leader.id).url).catch(() => undefined);
      return s && l && s.applied >= l.commit ? true : undefined;
    }, { timeoutMs: 20_000 });
    victim.start();
    // A restarted added controller is a voter from its log, though still in no --controller-quorum.
    await joining.kill();
    joining.start();
    await waitFor('node 4 back as a voter', async () => {
      const s = await client.status(joining.url).catch(() => undefined);
      return s && s.voters.includes(4) && (s.role === 'follower' || s.role === 'leader') ? true : undefined;
    }, { timeoutMs: 30_000 });
  });

  it('removes the controller again, and refuses to remove a node that is no voter', async () => {
    const removed = await sluice('cluster', 'remove-controller', '--node-id', '4');
    expect(removed.status, removed.stderr).to.equal(0);
    expect(removed.stdout).to.match(/removed controller 4: voters 1,2,3\b/);
    const again = await sluice('cluster', 'remove-controller', '--node-id', '4');
    expect(again.status).to.equal(1);
    expect(again.stderr).to.match(/not a controller/);
  });
});
