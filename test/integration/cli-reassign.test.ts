// `sluice reassign` as an operator runs it when adding a broker: three
// combined nodes hold a topic with records; a fourth, broker-only node joins
// later; --generate proposes moving replicas onto it, --execute starts the
// moves, --verify is polled until it exits 0, and then `topics describe`
// shows broker 4 among the replicas and in the ISR of the moved partitions
// while every record is still readable. --throttle sets the cluster's
// reassignment rate for the moves and the completing --verify removes it.
// Flag misuse exits 2; bad plan files or unknown brokers/topics are one-line
// errors with exit 1.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '../../src/index.js';
import { ProcessCluster, waitFor } from './harness.js';
import { sluiceAgainst } from './cli-kit.js';
import type { TopicView } from '../../src/cli/commands/topics.js';
import type { ReassignmentPlan, VerifyResult } from '../../src/cli/commands/reassign.js';


const TOPIC = 't';
const RECORDS = 40;
const UP_MS = 60_000;

describe('sluice reassign onto a broker added to a running cluster', function () {
  this.timeout(240_000);
  let cluster: ProcessCluster;
  let bootstrap: string;
  let tmp: string;

  const { sluice, ok } = sluiceAgainst(() => bootstrap);

  /** Exit `status` with a last stderr line matching `line`. */
  async function fails(status: number, line: RegExp, ...args: string[]): Promise<void> {
    const r = await sluice(...args);
    expect(r.status, `sluice ${args.join(' ')}: ${r.stderr}`).to.equal(status);
    const lines = r.stderr.trim().split('\n');
    expect(lines[lines.length - 1]).to.match(line);
  }

  function writePlan(name: string, plan: unknown): string {
    const file = path.join(tmp, name);
    fs.writeFileSync(file, typeof plan === 'string' ? plan : JSON.stringify(plan));
    return file;
  }

  async function brokerCount(client: Client): Promise<number> {
    try {
      return (await client.admin().describeCluster()).brokers.filter((b) => !b.fenced).length;
    } catch {
      return 0;
    }
  }

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-reassign-'));
    cluster = await ProcessCluster.create({ size: 3, brokers: true, brokerOnly: 1, extraArgs: ['--replica-lag-time-max-ms', '10000'] });
    for (const id of [1, 2, 3]) cluster.node(id).start();
    bootstrap = cluster.brokerUrls.slice(0, 3).join(',');
    const client = new Client({ bootstrap: cluster.brokerUrls.slice(0, 3) });
    try {
      await waitFor('three unfenced brokers', async () => (await brokerCount(client)) === 3, { timeoutMs: UP_MS, intervalMs: 200 });
      await client.admin().createTopics({ topics: [{ topic: TOPIC, numPartitions: 4, replicationFactor: 2 }] });
      const messages = Array.from({ length: RECORDS }, (_, i) => ({ value: `r-${i}`, partition: i % 4 }));
      await client.producer().send({ topic: TOPIC, acks: -1, messages });
      cluster.node(4).start();
      await waitFor('four unfenced brokers', async () => (await brokerCount(client)) === 4, { timeoutMs: UP_MS, intervalMs: 200 });
    } finally {
      client.close();
    }
  });

  after(async () => {
    await cluster?.cleanup();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  it('generates, executes and verifies a plan that moves replicas onto broker 4; every record stays readable', async () => {
    const gen = await sluice('reassign', '--generate', '--brokers', '1,2,3,4', '--topics', TOPIC);
    expect(gen.status, gen.stderr).to.equal(0);
    const plan = JSON.parse(gen.stdout) as ReassignmentPlan;
    expect(plan.version).to.equal(1);
    expect(plan.partitions.length).to.be.greaterThan(0);
    // Four partitions × two replicas over four brokers: two replicas land on broker 4.
    expect(plan.partitions.flatMap((p) => p.replicas).filter((b) => b === 4)).to.have.length(2);
    expect(plan.current!.map((p) => p.partition)).to.deep.equal(plan.partitions.map((p) => p.partition));
    expect(plan.current!.every((p) => !p.replicas.includes(4))).to.equal(true);
    expect(gen.stderr).to.match(/Current assignment \(save it to roll back\): \{/);
    const file = writePlan('plan.json', gen.stdout);

    expect(await ok('reassign', '--execute', file, '--throttle', '100000')).to.match(/^Started \d+ reassignment\(s\):/);
    const throttle = async (): Promise<{ value: string; source: string } | undefined> => {
      const described = JSON.parse(await ok('configs', 'describe', '--cluster', '--json')) as { configs: Array<{ name: string; value: string; source: string }> };
      return described.configs.find((c) => c.name === 'leader.replication.throttled.rate');
    };
    expect(await throttle()).to.include({ value: '100000', source: 'cluster' });

    const done = await waitFor('reassign --verify to exit 0', async () => {
      const r = await sluice('reassign', '--verify', file, '--json');
      const result = JSON.parse(r.stdout) as VerifyResult;
      expect(result.failed, r.stdout).to.equal(0);
      expect(r.status).to.equal(result.complete === result.total ? 0 : 1);
      return r.status === 0 ? result : undefined;
    }, { timeoutMs: 90_000, intervalMs: 500 });
    expect(done.complete).to.equal(plan.partitions.length);
    expect((await throttle())?.source, 'the completing --verify removed the throttle').to.equal('default');
    expect(await ok('reassign', '--verify', file)).to.match(new RegExp(`Reassignment: ${plan.partitions.length}/${plan.partitions.length} complete, 0 in progress, 0 failed\\n$`));

    const [t] = JSON.parse(await ok('topics', 'describe', '--topic', TOPIC, '--json')) as TopicView[];
    for (const target of plan.partitions) {
      const p = t!.partitions.find((x) => x.partition === target.partition)!;
      expect(p.replicas, `partition ${p.partition}`).to.deep.equal(target.replicas);
      expect(p.isr, `partition ${p.partition}`).to.have.members([...target.replicas]);
      expect(p.replicas).to.include(p.leader);
    }
    const onFour = t!.partitions.filter((p) => p.replicas.includes(4));
    expect(onFour).to.have.length(2);
    expect(onFour.every((p) => p.isr.includes(4))).to.equal(true);

    const read = await ok('consume', '--topic', TOPIC, '--from-beginning', '--max-messages', String(RECORDS), '--timeout-ms', '30000');
    const values = read.trim().split('\n').sort();
    expect(values).to.deep.equal(Array.from({ length: RECORDS }, (_, i) => `r-${i}`).sort());

    // Nothing is running any more, so cancel has nothing to do.
    expect(await ok('reassign', '--cancel', file)).to.match(/^Cancelled 0 reassignment\(s\)\nNot in progress/);
  });

  it('refuses misuse: mode flags and --throttle misuse (exit 2), bad plans and unknown brokers or topics (exit 1)', async () => {
    const plan = writePlan('one.json', { version: 1, partitions: [{ topic: TOPIC, partition: 0, replicas: [1, 2] }] });
    await fails(2, /^sluice: Give exactly one of --generate, --execute, --verify, --cancel$/, 'reassign');
    await fails(2, /^sluice: Give exactly one of .*\(got --execute, --verify\)$/, 'reassign', '--execute', plan, '--verify', plan);
    await fails(2, /^sluice: --generate needs --brokers/, 'reassign', '--generate', '--topics', TOPIC);
    await fails(2, /^sluice: --brokers needs broker ids/, 'reassign', '--generate', '--brokers', '1,x', '--topics', TOPIC);
    await fails(2, /^sluice: Unknown argument/, 'reassign', '--verify', plan, '--bogus');
    await fails(2, /^sluice: --throttle goes with --execute$/, 'reassign', '--verify', plan, '--throttle', '1000');
    await fails(2, /^sluice: --throttle needs a positive whole number/, 'reassign', '--execute', plan, '--throttle', '0');

    await fails(1, /^sluice: INVALID_REQUEST: bad plan file .*: not valid JSON$/, 'reassign', '--verify', writePlan('junk.json', '{nope'));
    await fails(1, /^sluice: INVALID_REQUEST: bad plan file .*: "version" must be 1$/, 'reassign', '--execute', writePlan('v2.json', { version: 2, partitions: [] }));
    await fails(1, /replicas lists a broker twice$/, 'reassign', '--execute', writePlan('dup.json', { version: 1, partitions: [{ topic: TOPIC, partition: 0, replicas: [1, 1] }] }));
    await fails(1, /^sluice: INVALID_REQUEST: cannot read plan file/, 'reassign', '--cancel', path.join(tmp, 'missing.json'));
    await fails(1, /^sluice: INVALID_REPLICA_ASSIGNMENT: unknown broker ids 9 /, 'reassign', '--generate', '--brokers', '1,2,9', '--topics', TOPIC);
    await fails(1, /^sluice: UNKNOWN_TOPIC_OR_PARTITION: /, 'reassign', '--generate', '--brokers', '1,2,3,4', '--topics', 'no-such-topic');
    await fails(1, /^sluice: UNKNOWN_TOPIC_OR_PARTITION: no partition t-7 /, 'reassign', '--execute', writePlan('p7.json', { version: 1, partitions: [{ topic: TOPIC, partition: 7, replicas: [1, 2] }] }));
  });
});
