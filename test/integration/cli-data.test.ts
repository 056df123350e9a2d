// `sluice produce`, `sluice consume` and `sluice groups` as a user runs them,
// against one real cluster of three combined `sluice server` processes:
// lines piped in come back out (all of them, per-key order, keys and
// headers), a group's second run gets only what is new (offsets committed),
// `groups describe` shows lag 0, a dry-run reset changes nothing and an
// executed one makes the group read everything again; operating errors are
// one line and exit 1.
import { expect } from 'chai';
import { Client } from '../../src/index.js';
import type { ProcessCluster } from './harness.js';
import { runSluice } from './cli-kit.js';
import { startBrokerCluster } from './broker-kit.js';

/** Bound on one CLI run (a consume waiting for a group join included). */
const TOPIC = 'lines';
const PARTITIONS = 3;

function lines(s: string): string[] {
  return s.split('\n').filter((l) => l.length > 0);
}

interface JsonRecord {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  value: string | null;
  headers: Array<{ key: string; value: string | null }>;
}

describe('sluice produce / consume / groups on a real 3-node cluster', function () {
  this.timeout(300_000);
  let cluster: ProcessCluster;
  let client: Client;
  let bootstrap: string[];
  const input = Array.from({ length: 30 }, (_, i) => `key-${i % 5}:value-${i}`);

  before(async () => {
    cluster = await startBrokerCluster(3);
    bootstrap = ['--bootstrap', cluster.brokerUrls.join(',')];
    client = new Client({ bootstrap: cluster.brokerUrls });
    await client.admin().createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3 }] });
  });

  after(async () => {
    client?.close();
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  it('produces stdin lines and reads every one back, keys and per-key order included', async () => {
    const p = await runSluice(['produce', '--topic', TOPIC, '--key-separator', ':', '--headers', 'src=cli,run=1', '--json', ...bootstrap], `${input.join('\n')}\n`);
    expect(p.status, p.stderr).to.equal(0);
    expect(p.stderr).to.match(/sent 30 record\(s\) to lines \(per partition /);
    const acked = lines(p.stdout).map((l) => JSON.parse(l) as { partition: number; offset: number });
    expect(acked).to.have.length(30);

    const kv = await runSluice(['consume', '--topic', TOPIC, '--from-beginning', '--max-messages', '30', '--format', 'key-value', '--timeout-ms', '30000', ...bootstrap]);
    expect(kv.status, kv.stderr).to.equal(0);
    expect(kv.stderr).to.contain('processed 30 record(s)');
    const got = lines(kv.stdout);
    expect([...got].sort()).to.deep.equal(input.map((l) => l.replace(':', '\t')).sort());
    for (let k = 0; k < 5; k++) {
      const ofKey = (ls: string[], sep: string) => ls.filter((l) => l.startsWith(`key-${k}${sep}`));
      expect(ofKey(got, '\t'), `order of key-${k}`).to.deep.equal(ofKey(input, ':').map((l) => l.replace(':', '\t')));
    }

    const js = await runSluice(['consume', '--topic', TOPIC, '--from-beginning', '--max-messages', '30', '--json', '--timeout-ms', '30000', ...bootstrap]);
    expect(js.status, js.stderr).to.equal(0);
    const records = lines(js.stdout).map((l) => JSON.parse(l) as JsonRecord);
    const where = (r: { partition: number; offset: number }) => `${r.partition}/${r.offset}`;
    expect(records.map(where).sort()).to.deep.equal(acked.map(where).sort(), 'consumed = acknowledged positions');
    for (const [i, a] of acked.entries()) {
      const r = records.find((x) => where(x) === where(a))!;
      expect([r.key, r.value]).to.deep.equal([`key-${i % 5}`, `value-${i}`]);
      expect(r.headers).to.deep.equal([{ key: 'src', value: 'cli' }, { key: 'run', value: '1' }]);
    }
    for (let part = 0; part < PARTITIONS; part++) {
      const offs = records.filter((r) => r.partition === part).map((r) => r.offset);
      expect(offs, `partition ${part} in offset order`).to.deep.equal([...offs].sort((a, b) => a - b));
    }

    const one = await runSluice(['consume', '--topic', TOPIC, '--partition', String(acked[0]!.partition), '--offset', String(acked[0]!.offset), '--max-messages', '1', '--timeout-ms', '30000', ...bootstrap]);
    expect(one.status, one.stderr).to.equal(0);
    expect(one.stdout).to.equal('value-0\n');
  });

  it('commits group offsets: a second run reads only what is new, lag 0, reset to earliest reads everything again', async () => {
    const group = ['--group', 'cli-g1', ...bootstrap];
    const first = await runSluice(['consume', '--topic', TOPIC, '--from-beginning', '--max-messages', '30', '--timeout-ms', '30000', ...group]);
    expect(first.status, first.stderr).to.equal(0);
    expect(lines(first.stdout)).to.have.length(30);

    const more = ['k:new-1', 'k:new-2', 'k:new-3'];
    const p = await runSluice(['produce', '--topic', TOPIC, '--key-separator', ':', '--acks', '1', ...bootstrap], more.join('\n'));
    expect(p.status, p.stderr).to.equal(0);
    const second = await runSluice(['consume', '--topic', TOPIC, '--from-beginning', '--max-messages', '3', '--timeout-ms', '30000', ...group]);
    expect(second.status, second.stderr).to.equal(0);
    expect(lines(second.stdout), 'only the records produced after the first run').to.deep.equal(['new-1', 'new-2', 'new-3']);

    const third = await runSluice(['consume', '--topic', TOPIC, '--timeout-ms', '3000', ...group]);
    expect(third.status, third.stderr).to.equal(0);
    expect(third.stdout).to.equal('');

    const described = await runSluice(['groups', 'describe', '--json', ...group]);
    expect(described.status, described.stderr).to.equal(0);
    const d = JSON.parse(described.stdout) as { state: string; members: unknown[]; offsets: Array<{ committedOffset: number; lag: number | null }> };
    expect(d.state).to.equal('Empty');
    expect(d.offsets).to.have.length(PARTITIONS);
    expect(d.offsets.map((o) => o.lag)).to.deep.equal([0, 0, 0]);
    expect(d.offsets.reduce((s, o) => s + o.committedOffset, 0)).to.equal(33);
    const text = await runSluice(['groups', 'describe', ...group]);
    expect(text.stdout).to.match(/group cli-g1: Empty/);
    const listed = await runSluice(['groups', 'list', '--json', ...bootstrap]);
    expect((JSON.parse(listed.stdout) as Array<{ groupId: string }>).map((g) => g.groupId)).to.include('cli-g1');

    const reset = ['groups', 'reset-offsets', '--topic', TOPIC, '--to-earliest', ...group];
    const dry = await runSluice(reset);
    expect(dry.status, dry.stderr).to.equal(0);
    expect(dry.stderr).to.contain('dry run');
    expect(lines(dry.stdout).slice(1).map((l) => l.split(/\s+/)[3])).to.deep.equal(['0', '0', '0']);
    const still = JSON.parse((await runSluice(['groups', 'describe', '--json', ...group])).stdout) as typeof d;
    expect(still.offsets.map((o) => o.lag), 'a dry run commits nothing').to.deep.equal([0, 0, 0]);

    const exec = await runSluice([...reset, '--execute', '--json']);
    expect(exec.status, exec.stderr).to.equal(0);
    expect((JSON.parse(exec.stdout) as { rows: Array<{ newOffset: number }> }).rows.map((r) => r.newOffset)).to.deep.equal([0, 0, 0]);
    const again = await runSluice(['consume', '--topic', TOPIC, '--max-messages', '33', '--timeout-ms', '30000', ...group]);
    expect(again.status, again.stderr).to.equal(0);
    expect(lines(again.stdout).sort()).to.deep.equal([...input.map((l) => l.split(':')[1]!), 'new-1', 'new-2', 'new-3'].sort());

    const del = await runSluice(['groups', 'delete', ...group]);
    expect(del.status, del.stderr).to.equal(0);
    const after = JSON.parse((await runSluice(['groups', 'list', '--json', ...bootstrap])).stdout) as Array<{ groupId: string }>;
    expect(after.map((g) => g.groupId)).not.to.include('cli-g1');
  });

  it('reports operating errors in one line with exit 1', async () => {
    const unknownTopic = await runSluice(['produce', '--topic', 'no-such-topic', ...bootstrap], 'x\n');
    expect(unknownTopic.status).to.equal(1);
    expect(unknownTopic.stderr.trim().split('\n')).to.have.length(1);
    expect(unknownTopic.stderr).to.contain('UNKNOWN_TOPIC_OR_PARTITION');
    const unknownGroup = await runSluice(['groups', 'describe', '--group', 'no-such-group', ...bootstrap]);
    expect(unknownGroup.status).to.equal(1);
    expect(unknownGroup.stderr).to.match(/^sluice: GROUP_ID_NOT_FOUND: group no-such-group does not exist/);
    const badPartition = await runSluice(['consume', '--topic', TOPIC, '--partition', '9', '--max-messages', '1', ...bootstrap]);
    expect(badPartition.status).to.equal(1);
    expect(badPartition.stderr).to.contain('has no partition 9');
    const badFlag = await runSluice(['consume', '--topic', TOPIC, '--bogus', ...bootstrap]);
    expect(badFlag.status).to.equal(2);
  });
});
