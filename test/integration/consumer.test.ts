// Consumer groups as users rely on them, on a real cluster of three combined
// `sluice server` processes: in one group each partition is read by exactly
// one member (a queue) and six partitions split two per member; a member
// SIGKILLed (a consumer in a child process) is expired, the group rebalances
// and every record is still processed (at-least-once) while, with
// cooperative-sticky, the survivors keep their partitions; two groups each
// get every record (publish-subscribe); a restarted consumer resumes from its
// committed offset; members beyond the partition count stay idle; and when
// the coordinator's broker is SIGKILLed the
// commits survive on the new coordinator while a running consumer follows the
// partitions' new leaders.
import { expect } from 'chai';
import type { Client } from '../../src/client/client.js';
import { Consumer, type ConsumerOptions } from '../../src/client/consumer.js';
import { CoordinatorLink } from '../../src/client/consumer-coordinator.js';
import { GroupAdmin } from '../../src/client/group-admin.js';
import { waitFor } from './harness.js';
import {
  ChildConsumer, Collector, GROUP_TIMEOUTS, labels, makeTopic, newClient, produceTo, startConsumerCluster, WAIT_MS, type ConsumerCluster,
} from './consumer-kit.js';

describe('consumer groups on a real 3-node cluster', function () {
  this.timeout(300_000);
  let cc: ConsumerCluster;
  const clients: Client[] = [];
  const consumers: Consumer[] = [];
  const children: ChildConsumer[] = [];

  before(async () => {
    cc = await startConsumerCluster();
  });

  after(async () => {
    await Promise.all(consumers.map((c) => c.close().catch(() => undefined)));
    await Promise.all(children.map((c) => c.kill()));
    for (const c of clients) c.close();
    cc?.admin.close();
    cc?.conns.closeAll();
    await cc?.cluster.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') {
      console.log(cc.cluster.dumpLogs());
      for (const c of children) console.log(`[${c.name}] ${c.stderr.join('')}`);
    }
  });

  function client(who: string): Client {
    const c = newClient(cc.cluster, who);
    clients.push(c);
    return c;
  }

  /** A group member in this process that records what it processes in `col`. */
  async function member(groupId: string, topic: string, who: string, col: Collector, extra: ConsumerOptions = {}): Promise<Consumer> {
    const c = new Consumer(client(who), { groupId, ...GROUP_TIMEOUTS, autoCommitIntervalMs: 300, ...extra });
    consumers.push(c);
    await c.subscribe({ topics: [topic], fromBeginning: true });
    await c.run({ eachMessage: async ({ topic: t, partition, message }) => col.add(who, t, partition, message) });
    return c;
  }

  function waitForAssignments(what: string, sizes: () => number[], want: number[]): Promise<true> {
    return waitFor(what, () => JSON.stringify(sizes()) === JSON.stringify(want) || undefined, { timeoutMs: WAIT_MS, intervalMs: 50 });
  }

  it('three members over six partitions get two each, and each record goes to exactly one of them', async () => {
    await makeTopic(cc, 'queue', 6);
    const first = await produceTo(cc, 'queue', 6, 10, 'a');
    const col = new Collector();
    const cs = [await member('queue-group', 'queue', 'q1', col), await member('queue-group', 'queue', 'q2', col), await member('queue-group', 'queue', 'q3', col)];
    await waitForAssignments('two partitions per member', () => cs.map((c) => c.assignment().length), [2, 2, 2]);
    const all = cs.flatMap((c) => labels(c.assignment()));
    expect(new Set(all).size, all.join()).to.equal(6);
    await col.waitForAll(first, 'every record of the first batch');
    // Stable now: every new record is read once, by its partition's owner.
    const owner = new Map(cs.flatMap((c, i) => c.assignment().map((tp) => [tp.partition, `q${i + 1}`] as const)));
    const second = await produceTo(cc, 'queue', 6, 10, 'b');
    await col.waitForAll(second, 'every record of the second batch');
    for (const v of second) {
      const reads = col.seen.filter((s) => s.value === v);
      expect(reads.length, `${v} read ${reads.length} times`).to.equal(1);
      expect(reads[0]!.who).to.equal(owner.get(reads[0]!.partition));
    }
    expect(col.disorder).to.deep.equal([]);
    await Promise.all(cs.map((c) => c.close()));
  });

  it('a SIGKILLed member is expired; every record is still processed and the survivors keep their partitions', async () => {
    await makeTopic(cc, 'kill', 6);
    const col = new Collector();
    const a = await member('kill-group', 'kill', 'a', col);
    const b = await member('kill-group', 'kill', 'b', col);
    const child = new ChildConsumer('c', {
      bootstrap: cc.cluster.brokerUrls, groupId: 'kill-group', topic: 'kill', options: { ...GROUP_TIMEOUTS, autoCommitIntervalMs: 300 },
    }, col);
    children.push(child);
    await waitForAssignments('two partitions per member', () => [a.assignment().length, b.assignment().length, child.assignment().length], [2, 2, 2]);
    const first = await produceTo(cc, 'kill', 6, 20, 'a');
    await col.waitForAll(first, 'the first batch');
    const [keptA, keptB, lostC] = [labels(a.assignment()), labels(b.assignment()), child.assignment()];
    expect(col.values('c').size, 'the child consumed before it died').to.be.greaterThan(0);
    await child.kill();
    const second = await produceTo(cc, 'kill', 6, 20, 'b');
    await waitForAssignments('the survivors share the dead member\'s partitions', () => [a.assignment().length, b.assignment().length], [3, 3]);
    await col.waitForAll([...first, ...second], 'every record of both batches');
    expect(labels(a.assignment())).to.include.members(keptA);
    expect(labels(b.assignment())).to.include.members(keptB);
    expect([...labels(a.assignment()), ...labels(b.assignment())]).to.include.members(lostC);
    // Records of the dead member's partitions produced after its death were read by a survivor.
    const lostPartitions = new Set(lostC.map((l) => Number(l.slice(l.lastIndexOf('-') + 1))));
    for (const s of col.seen.filter((x) => x.value.startsWith('b/') && lostPartitions.has(x.partition))) expect(s.who).to.not.equal('c');
    expect(col.disorder).to.deep.equal([]);
    await Promise.all([a.close(), b.close()]);
  });

  it('members beyond the partition count stay idle', async () => {
    await makeTopic(cc, 'narrow', 2);
    const col = new Collector();
    const cs = [await member('narrow-group', 'narrow', 'n1', col), await member('narrow-group', 'narrow', 'n2', col), await member('narrow-group', 'narrow', 'n3', col)];
    await waitForAssignments('two busy members and one idle', () => cs.map((c) => c.assignment().length).sort(), [0, 1, 1]);
    const values = await produceTo(cc, 'narrow', 2, 5, 'n');
    await col.waitForAll(values, 'every record');
    const idle = cs.findIndex((c) => c.assignment().length === 0);
    expect(col.values(`n${idle + 1}`).size).to.equal(0);
    await Promise.all(cs.map((c) => c.close()));
  });

  it('two groups each receive every record', async () => {
    await makeTopic(cc, 'fanout', 3);
    const values = await produceTo(cc, 'fanout', 3, 15, 'f');
    const [one, two] = [new Collector(), new Collector()];
    const cs = [await member('fan-1', 'fanout', 'x1', one), await member('fan-1', 'fanout', 'x2', one), await member('fan-2', 'fanout', 'y1', two)];
    await one.waitForAll(values, 'group fan-1 to read everything');
    await two.waitForAll(values, 'group fan-2 to read everything');
    expect(two.values('y1').size).to.equal(values.length);
    await Promise.all(cs.map((c) => c.close()));
  });

  it('a restarted consumer resumes from its committed offset', async () => {
    await makeTopic(cc, 'resume', 3);
    const first = await produceTo(cc, 'resume', 3, 10, 'a');
    const col = new Collector();
    const r1 = await member('resume-group', 'resume', 'r1', col);
    await col.waitForAll(first, 'the first consumer to read the first batch');
    await r1.close(); // commits what it processed, leaves the group
    const admin = new GroupAdmin(client('admin'));
    const committed = await admin.fetchOffsets({ groupId: 'resume-group', topics: ['resume'] });
    expect(committed).to.deep.equal([{ topic: 'resume', partitions: [0, 1, 2].map((partition) => ({ partition, offset: 10, metadata: null })) }]);
    const second = await produceTo(cc, 'resume', 3, 10, 'b');
    const r2 = await member('resume-group', 'resume', 'r2', col);
    await col.waitForAll(second, 'the restarted consumer to read the second batch', 'r2');
    expect([...col.values('r2')].sort()).to.deep.equal([...second].sort());
    await r2.close();
  });

  it('a static member that restarts quickly gets its partitions back without a rebalance', async () => {
    await makeTopic(cc, 'static', 4);
    const col = new Collector();
    const a = await member('static-group', 'static', 'sa', col, { groupInstanceId: 'instance-a' });
    // a owns everything before b arrives, so its rejoins carry the partitions it owns: the metadata
    // its restarted self (owning nothing yet) sends differs, and only the selected protocol is the same.
    await waitForAssignments('a alone holds all four', () => [a.assignment().length], [4]);
    const b = await member('static-group', 'static', 'sb', col, { groupInstanceId: 'instance-b' });
    await waitForAssignments('two partitions each', () => [a.assignment().length, b.assignment().length], [2, 2]);
    const before = labels(a.assignment()).sort();
    const generations: number[] = [];
    b.on('group.join', (e) => generations.push(e.generationId));
    await a.close(); // a static member does not leave the group on close
    const a2 = await member('static-group', 'static', 'sa2', col, { groupInstanceId: 'instance-a' });
    await waitFor('the restarted member to hold partitions', () => a2.assignment().length === 2 || undefined, { timeoutMs: WAIT_MS, intervalMs: 50 });
    expect(labels(a2.assignment()).sort()).to.deep.equal(before);
    expect(generations, 'the other member saw no rebalance').to.deep.equal([]);
    const more = await produceTo(cc, 'static', 4, 5, 's');
    await col.waitForAll(more, 'records after the restart');
  });

  it('commits survive the SIGKILL of the coordinator\'s broker, and a running consumer follows the new leaders', async () => {
    await makeTopic(cc, 'survive', 3);
    const first = await produceTo(cc, 'survive', 3, 10, 'a');
    const col = new Collector();
    const s1 = await member('survive-group', 'survive', 's1', col);
    await col.waitForAll(first, 'the first batch');
    await s1.close();
    const adminClient = client('admin-2');
    const admin = new GroupAdmin(adminClient);
    const committed = await admin.fetchOffsets({ groupId: 'survive-group', topics: ['survive'] });
    expect(committed[0]!.partitions.map((p) => p.offset)).to.deep.equal([10, 10, 10]);
    const s2 = await member('survive-group', 'survive', 's2', col);
    await waitForAssignments('s2 owns every partition', () => [s2.assignment().length], [3]);
    const coordinator = await new CoordinatorLink(adminClient, 'survive-group').nodeId();
    await cc.cluster.node(coordinator).kill('SIGKILL');
    const moved = await waitFor('a new coordinator', async () => {
      const id = await new CoordinatorLink(adminClient, 'survive-group').nodeId();
      return id !== coordinator ? id : undefined;
    }, { timeoutMs: WAIT_MS, intervalMs: 200 });
    expect(moved).to.not.equal(coordinator);
    const after = await admin.fetchOffsets({ groupId: 'survive-group', topics: ['survive'] });
    expect(after[0]!.partitions.map((p) => p.offset)).to.deep.equal([10, 10, 10]);
    const second = await produceTo(cc, 'survive', 3, 10, 'b');
    await col.waitForAll(second, 'the running consumer to read what was produced after the kill', 's2');
    expect([...col.values('s2')].filter((v) => v.startsWith('a/'))).to.deep.equal([]);
    await s2.close();
  });
});
