// `sluice topics`, `sluice configs` and `sluice cluster status` as an operator
// runs them, against one real cluster of three combined `sluice server`
// processes: each command is a child process of the built main.js; results
// are read back through --json (and, for offsets, records produced with the
// client library), and refusals carry the broker's error code on one line
// with exit 1.
import { expect } from 'chai';
import { Client } from '../../src/index.js';
import { waitFor, type ProcessCluster } from './harness.js';
import { sluiceAgainst } from './cli-kit.js';
import { startBrokerCluster } from './broker-kit.js';
import type { TopicView } from '../../src/cli/commands/topics.js';
import type { ClusterStatus } from '../../src/cli/commands/cluster.js';
import type { DescribedConfig } from '../../src/client/admin.js';


describe('sluice topics/configs/cluster on a real 3-node cluster', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  let bootstrap: string;

  const { sluice, ok } = sluiceAgainst(() => bootstrap);

  async function json<T>(...args: string[]): Promise<T> {
    return JSON.parse(await ok(...args, '--json')) as T;
  }

  /** Exit 1 and exactly one stderr line carrying the broker's error code. */
  async function refused(code: string, ...args: string[]): Promise<string> {
    const r = await sluice(...args);
    expect(r.status, `sluice ${args.join(' ')}: ${r.stderr}`).to.equal(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).to.have.length(1);
    expect(lines[0]).to.match(new RegExp(`^sluice: ${code}: `));
    return lines[0]!;
  }

  before(async () => {
    cluster = await startBrokerCluster(3, [], { kafka: true });
    bootstrap = cluster.brokerUrls.join(',');
  });

  after(async () => {
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  it('creates, lists, describes (with offsets), grows and deletes a topic', async () => {
    expect(await ok('topics', 'create', '--topic', 'orders', '--partitions', '2', '--replication-factor', '3', '--config', 'retention.ms=3600000'))
      .to.match(/Created topic orders \(2 partitions, replication factor 3/);
    expect(await json<string[]>('topics', 'list')).to.include('orders');

    const client = new Client({ bootstrap: cluster.brokerUrls });
    try {
      await client.producer().send({ topic: 'orders', acks: -1, messages: [0, 1, 2].map((i) => ({ value: `v${i}`, partition: 0 })) });
    } finally {
      client.close();
    }
    const [orders] = await json<TopicView[]>('topics', 'describe', '--topic', 'orders');
    expect(orders!.name).to.equal('orders');
    expect(orders!.partitions.map((p) => p.partition)).to.deep.equal([0, 1]);
    for (const p of orders!.partitions) {
      expect(p.replicas).to.have.members([1, 2, 3]);
      expect(p.replicas).to.include(p.leader);
      expect(p.isr).to.include(p.leader);
      expect(p.offlineReplicas).to.deep.equal([]);
      expect(p.error).to.equal(null);
      expect(p.logStartOffset).to.equal(0);
    }
    // acks=all: the three records are below the high watermark, and the leader's log ends there.
    expect([orders!.partitions[0]!.highWatermark, orders!.partitions[0]!.logEndOffset]).to.deep.equal([3, 3]);
    expect([orders!.partitions[1]!.highWatermark, orders!.partitions[1]!.logEndOffset]).to.deep.equal([0, 0]);

    const text = await ok('topics', 'describe', '--topic', 'orders');
    expect(text).to.match(/^Topic orders {2}id \S+ {2}partitions 2\nPARTITION +LEADER +EPOCH +REPLICAS +ISR/);

    expect(await ok('topics', 'alter', '--topic', 'orders', '--partitions', '3')).to.contain('partitions=3');
    const grown = await waitFor('the third partition to have a leader', async () => {
      const [t] = await json<TopicView[]>('topics', 'describe', '--topic', 'orders');
      return t!.partitions.length === 3 && t!.partitions.every((p) => p.leader > 0 && p.error === null) ? t : undefined;
    }, { timeoutMs: 30_000, intervalMs: 200 });
    expect(grown.partitions[2]!.highWatermark).to.equal(0);

    expect(await ok('topics', 'delete', '--topic', 'orders')).to.contain('Deleted topic orders');
    await waitFor('orders to be gone from the list', async () => !(await json<string[]>('topics', 'list')).includes('orders'), { timeoutMs: 30_000, intervalMs: 200 });
  });

  it('describes and alters topic and cluster configs', async () => {
    await ok('topics', 'create', '--topic', 'conf', '--partitions', '1', '--replication-factor', '1', '--config', 'retention.ms=3600000');
    const value = async (name: string) => {
      const d = await json<{ configs: DescribedConfig[] }>('configs', 'describe', '--topic', 'conf');
      return d.configs.find((c) => c.name === name);
    };
    expect(await value('retention.ms')).to.include({ value: '3600000', source: 'topic' });

    await ok('configs', 'alter', '--topic', 'conf', '--set', 'retention.ms=7200000', '--set', 'segment.bytes=1048576');
    expect(await value('retention.ms')).to.include({ value: '7200000', source: 'topic' });
    expect(await value('segment.bytes')).to.include({ value: '1048576', source: 'topic' });

    await ok('topics', 'alter', '--topic', 'conf', '--delete-config', 'segment.bytes');
    expect((await value('segment.bytes'))!.source).to.not.equal('topic');
    await ok('configs', 'alter', '--topic', 'conf', '--delete', 'retention.ms');
    expect((await value('retention.ms'))!.source).to.not.equal('topic');

    const clusterConfigs = await json<{ resourceType: string; configs: DescribedConfig[] }>('configs', 'describe', '--cluster');
    expect(clusterConfigs.resourceType).to.equal('cluster');
    expect(clusterConfigs.configs.length).to.be.greaterThan(0);
    expect(await ok('configs', 'describe', '--topic', 'conf')).to.match(/^NAME +VALUE +SOURCE\n/);
  });

  it('shows the quorum with a leader, three running brokers and partition health', async () => {
    const s = await json<ClusterStatus>('cluster', 'status');
    expect(s.quorum.leaderId).to.be.oneOf([1, 2, 3]);
    expect(s.quorum.term).to.be.greaterThan(0);
    expect(s.quorum.highWatermark).to.be.greaterThan(0);
    const voters = s.quorum.nodes.filter((n) => n.kind === 'voter');
    expect(voters.map((n) => n.nodeId)).to.deep.equal([1, 2, 3]);
    expect(voters.every((n) => n.reachable && n.leader === s.quorum.leaderId && n.lag !== null && n.lag >= 0)).to.equal(true, JSON.stringify(voters));
    expect(s.quorum.nodes.find((n) => n.nodeId === s.quorum.leaderId)!.role).to.equal('leader');
    expect(voters.map((n) => n.recentContact), 'the leader heard from every voter lately').to.deep.equal([true, true, true]);
    expect(s.brokers.map((b) => [b.nodeId, b.state])).to.deep.equal([[1, 'running'], [2, 'running'], [3, 'running']]);
    expect(s.brokers.every((b) => b.endpoints.some((e) => e.name === 'BROKER') && b.metadataOffset !== null)).to.equal(true);
    expect(s.brokers.map((b) => b.url), 'each broker\'s WebSocket listener').to.deep.equal(cluster.nodes.map((n) => n.brokerUrl));
    expect(s.brokers.map((b) => b.kafka), 'and its Kafka listener').to.deep.equal(cluster.nodes.map((n) => n.kafkaAddress));
    expect(s.partitions.offline).to.equal(0);
    expect(s.partitions.total).to.be.greaterThanOrEqual(s.partitions.underReplicated);

    const text = await ok('cluster', 'status');
    expect(text).to.match(new RegExp(`Quorum: leader ${s.quorum.leaderId} `));
    expect(text).to.match(/Partitions: \d+ total, \d+ under-replicated, 0 offline/);
    for (const n of cluster.nodes) expect(text).to.contain(`${n.brokerUrl}  ${n.kafkaAddress}`);
  });

  it('reports the broker\'s error code and message on one line, exit 1', async () => {
    expect(await refused('INVALID_TOPIC', 'topics', 'create', '--topic', 'bad/name')).to.contain('bad/name');
    await refused('INVALID_PARTITIONS', 'topics', 'create', '--topic', 'zero', '--partitions', '0');
    await refused('INVALID_REPLICATION_FACTOR', 'topics', 'create', '--topic', 'wide', '--replication-factor', '5');
    await refused('INVALID_CONFIG', 'topics', 'create', '--topic', 'cfg', '--config', 'no.such.config=1');
    await refused('UNKNOWN_TOPIC_OR_PARTITION', 'topics', 'describe', '--topic', 'missing');
    await refused('UNKNOWN_TOPIC_OR_PARTITION', 'topics', 'delete', '--topic', 'missing');
    await ok('topics', 'create', '--topic', 'small', '--partitions', '2', '--replication-factor', '1');
    await refused('INVALID_PARTITIONS', 'topics', 'alter', '--topic', 'small', '--partitions', '1');
    await refused('INVALID_CONFIG', 'configs', 'alter', '--cluster', '--set', 'no.such.config=1');
    // Nothing half-created by the refusals.
    const names = await json<string[]>('topics', 'list');
    expect(names).to.not.include.members(['bad/name']);
    for (const n of ['zero', 'wide', 'cfg']) expect(names).to.not.include(n);
  });
});
