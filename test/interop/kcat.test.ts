// kcat (librdkafka) against the Kafka listener (issue 14): -L metadata, -P
// with idempotence, -C from an offset, -G as a member of a balanced group,
// and an idempotent -P stream across a SIGKILL of the partition leader with
// no acknowledged record lost. kcat comes from Debian's package
// (scripts/interop-tools.sh).
//
// kcat -P -v -v prints one "% Message delivered to partition P (offset O)"
// line on stderr per acknowledged record: those are the records that must
// survive. -G members run with -u: kcat's stdout is block-buffered on a pipe.

import { expect } from 'chai';
import { waitFor } from '../integration/harness.js';
import {
  CLUSTER_UP_MS, NEEDS, committedOffsets, requireApis, createTopic, jsonLines, runTool, sluiceOrSkip, spawnTool, startOrSkip, toolOrSkip,
  uniqueName, waitForLeaders, type KafkaTarget, type LiveTool, type Tool, type ToolRun,
} from './kafka-kit.js';

/** What `kcat -C -J` prints per record. */
interface KcatRecord {
  readonly partition: number;
  readonly offset: number;
  readonly key: string | null;
  readonly payload: string | null;
  /** Flat: name, value, name, value, ... */
  readonly headers?: string[];
}

const IDEMPOTENT = ['-X', 'enable.idempotence=true', '-X', 'acks=all'];
/** Verbosity 3: delivery reports on stderr. */
const DELIVERY_REPORTS = ['-v', '-v'];
const DELIVERED = /Message delivered to partition (\d+) \(offset (\d+)\)/g;

function ok(run: ToolRun, what: string): string {
  expect(run.status, `${what}: status ${run.status}${run.timedOut ? ' (timed out)' : ''}\nstdout: ${run.stdout.slice(-3000)}\nstderr: ${run.stderr.slice(-3000)}`).to.equal(0);
  return run.stdout;
}

/** The acknowledged (partition, offset) pairs in kcat -P -v's stderr. */
function delivered(stderr: string): Array<{ partition: number; offset: number }> {
  return [...stderr.matchAll(DELIVERED)].map((m) => ({ partition: Number(m[1]), offset: Number(m[2]) }));
}

describe('interop: kcat', function () {
  this.timeout(240_000);
  let target: KafkaTarget | undefined;
  let kcat: Tool;

  before(async function () {
    this.timeout(CLUSTER_UP_MS + 60_000);
    kcat = toolOrSkip(this, 'kcat');
    target = await startOrSkip(this);
  });

  after(async () => {
    await target?.stop();
  });

  const b = () => ['-b', target!.bootstrap];

  /** The records of `topic` that kcat -C reads to the end of each partition (from the beginning unless `from` says otherwise). */
  async function readAll(topic: string, from: readonly string[] = ['-o', 'beginning']): Promise<KcatRecord[]> {
    const out = ok(await runTool(kcat, [...b(), '-C', '-t', topic, ...from, '-e', '-J', '-q']), 'kcat -C');
    return jsonLines(out) as unknown as KcatRecord[];
  }

  /** Sends "key-i:<prefix>-i" lines with kcat -P (idempotent); returns the acknowledged records. */
  async function produce(topic: string, count: number, prefix: string): Promise<Array<{ partition: number; offset: number }>> {
    const lines = Array.from({ length: count }, (_, i) => `key-${i}:${prefix}-${i}\n`).join('');
    const run = await runTool(kcat, [...b(), '-P', '-t', topic, '-K', ':', '-H', 'src=kcat', ...DELIVERY_REPORTS, ...IDEMPOTENT], { input: lines });
    ok(run, 'kcat -P');
    return delivered(run.stderr);
  }

  it('-L lists every broker\'s Kafka endpoint and the topic\'s partitions', async function () {
    requireApis(this, target!, NEEDS.topics);
    const topic = uniqueName('kcat-meta');
    await createTopic(target!, topic, 3);
    const md = JSON.parse(ok(await runTool(kcat, [...b(), '-L', '-J']), 'kcat -L')) as {
      brokers: Array<{ id: number; name: string }>;
      topics: Array<{ topic: string; partitions: Array<{ partition: number; leader: number; replicas: Array<{ id: number }>; isrs: Array<{ id: number }> }> }>;
    };
    const endpoints = md.brokers.map((x) => [x.id, x.name] as const).sort((x, y) => x[0] - y[0]);
    expect(endpoints).to.deep.equal([...target!.kafkaPorts].sort((x, y) => x[0] - y[0]).map(([id, port]) => [id, `127.0.0.1:${port}`]));
    const t = md.topics.find((x) => x.topic === topic);
    expect(t, JSON.stringify(md.topics.map((x) => x.topic))).to.not.equal(undefined);
    expect(t!.partitions.map((p) => p.partition).sort()).to.deep.equal([0, 1, 2]);
    for (const p of t!.partitions) {
      expect(p.replicas, `partition ${p.partition}`).to.have.length(target!.replicationFactor);
      expect(p.replicas.map((r) => r.id)).to.include(p.leader);
      expect(p.isrs, `partition ${p.partition} ISR`).to.have.length(target!.replicationFactor);
    }
  });

  it('-P with enable.idempotence=true acks=all: every line once, keys and headers kept', async function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read);
    const topic = uniqueName('kcat-produce');
    await createTopic(target!, topic, 3);
    const acks = await produce(topic, 100, 'kcat');
    expect(acks, 'one delivery report per line').to.have.length(100);
    const records = await readAll(topic);
    expect(records).to.have.length(100);
    expect(new Set(records.map((r) => r.payload)).size, 'no duplicates').to.equal(100);
    for (const r of records) {
      expect(r.key, `key of ${r.payload}`).to.equal(`key-${String(r.payload).slice('kcat-'.length)}`);
      expect(r.headers).to.deep.equal(['src', 'kcat']);
    }
    const acked = new Set(acks.map((a) => `${a.partition}@${a.offset}`));
    expect(new Set(records.map((r) => `${r.partition}@${r.offset}`))).to.deep.equal(acked);
  });

  it('-C reads a partition from a given offset', async function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read);
    const topic = uniqueName('kcat-offset');
    await createTopic(target!, topic, 1);
    await produce(topic, 10, 'kcat');
    const all = await readAll(topic);
    const some = await readAll(topic, ['-p', '0', '-o', '4', '-c', '3']);
    expect(some.map((r) => r.offset)).to.deep.equal([4, 5, 6]);
    expect(some.map((r) => r.payload)).to.deep.equal(all.slice(4, 7).map((r) => r.payload));
  });

  it('-G: two members of a balanced group split the partitions, read each record once and commit', async function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group);
    const topic = uniqueName('kcat-group');
    const group = uniqueName('kcat-g');
    await createTopic(target!, topic, 4);
    const args = [...b(), '-G', group, '-J', '-u', '-X', 'auto.offset.reset=earliest', '-X', 'auto.commit.interval.ms=500', topic];
    const members: LiveTool[] = [spawnTool(kcat, args, { timeoutMs: 180_000 }), spawnTool(kcat, args, { timeoutMs: 180_000 })];
    try {
      // kcat prints "% Group G rebalanced (memberid M): assigned: T [0], T [1]" (or "revoked: ...") on stderr.
      const holding = (m: LiveTool): number[] => {
        const last = [...m.stderr.matchAll(/rebalanced \(memberid [^)]*\): (assigned|revoked): ([^\n]*)/g)].pop();
        if (!last || last[1] !== 'assigned') return [];
        return [...last[2]!.matchAll(/\[(\d+)\]/g)].map((x) => Number(x[1]));
      };
      await waitFor('both members hold partitions, together all 4, none twice', () => {
        const [x, y] = members.map(holding) as [number[], number[]];
        return x.length > 0 && y.length > 0 && x.length + y.length === 4 && new Set([...x, ...y]).size === 4;
      }, { timeoutMs: 90_000, intervalMs: 100 });
      await produce(topic, 40, 'kcat');
      const read = () => members.flatMap((m) => jsonLines(m.stdout) as unknown as KcatRecord[]);
      await waitFor('40 records read by the group', () => read().length >= 40, { timeoutMs: 60_000, intervalMs: 100 });
      const ends = new Map((await target!.admin.fetchTopicOffsets(topic)).map((o) => [o.partition, Number(o.high)]));
      await waitFor('committed offsets = log end offsets', async () => {
        const committed = await committedOffsets(target!, group, topic);
        return [...ends].every(([p, end]) => end === 0 || committed.get(p) === end);
      }, { timeoutMs: 30_000, intervalMs: 200 });
      const records = read();
      expect(records).to.have.length(40);
      expect(new Set(records.map((r) => r.payload)).size, 'each record once').to.equal(40);
      for (const m of members) expect((jsonLines(m.stdout)).length, 'each member read some').to.be.greaterThan(0);
    } finally {
      await Promise.all(members.map((m) => m.kill()));
    }
  });

  const LINES_BEFORE_KILL_MAX = 2_000;

  it('-P idempotent across a SIGKILL of the leader: no acknowledged record lost, none doubled', async function () {
    const cluster = sluiceOrSkip(this, target!, 'killing a partition leader');
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read);
    const topic = uniqueName('kcat-failover');
    await createTopic(target!, topic, 1);
    const leader = (await waitForLeaders(target!, topic, 1)).get(0)!;
    const producer = spawnTool(kcat, [...b(), '-P', '-t', topic, '-K', ':', ...DELIVERY_REPORTS, ...IDEMPOTENT, '-X', 'message.timeout.ms=60000'], { timeoutMs: 120_000 });
    const line = (i: number) => `key-${i}:kcat-${i}\n`;
    try {
      // kcat serves delivery reports only between reads of stdin, so lines are fed
      // one per poll until enough are acknowledged (bounded), not all at once.
      let sent = 0;
      await waitFor('50 records acknowledged before the kill', () => {
        if (sent < LINES_BEFORE_KILL_MAX) producer.write(line(sent++));
        return delivered(producer.stderr).length >= 50;
      }, { timeoutMs: 60_000, intervalMs: 10 });
      await cluster.node(leader).kill('SIGKILL');
      const after = sent + 100;
      await waitFor('100 more lines fed after the kill', () => {
        producer.write(line(sent++));
        return sent >= after;
      }, { timeoutMs: 60_000, intervalMs: 10 });
      producer.closeStdin();
      const run = await producer.done;
      expect(run.timedOut, run.stderr.slice(-3000)).to.equal(false);
    } finally {
      await producer.kill();
    }
    const acks = delivered(producer.stderr);
    expect(acks.length, 'records acknowledged after the kill too').to.be.greaterThan(100);
    const newLeader = await waitFor('a new leader', async () => {
      const l = (await waitForLeaders(target!, topic, 1)).get(0);
      return l !== undefined && l !== leader ? l : undefined;
    }, { timeoutMs: 60_000, intervalMs: 200 });
    expect(newLeader).to.not.equal(leader);
    const records = await readAll(topic);
    const byOffset = new Map(records.map((r) => [r.offset, r.payload]));
    for (const a of acks) expect(byOffset.has(a.offset), `acknowledged offset ${a.offset} is in the log`).to.equal(true);
    const values = records.map((r) => r.payload);
    expect(new Set(values).size, 'no record written twice').to.equal(values.length);
    // One partition, one idempotent producer: the log keeps the order the lines were sent in.
    const order = values.map((v) => Number(String(v).slice('kcat-'.length)));
    expect(order, 'send order kept').to.deep.equal([...order].sort((x, y) => x - y));
  });
});
