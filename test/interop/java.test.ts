// Apache Kafka's Java client and command-line tools against the Kafka
// listener (issue 14): KafkaProducer with its default settings (idempotence
// on, acks=all), a KafkaConsumer group through a cooperative rebalance, and
// Kafka's own tools by main class (kafka-tools jar, 4.x): kafka-topics
// (create, list, describe), kafka-consumer-groups --describe,
// kafka-reassign-partitions (--execute, then --verify until done), and the
// producer/consumer perf tools with small counts. The Java program is
// test/interop/java/src; jars and classes come from scripts/interop-tools.sh.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { waitFor } from '../integration/harness.js';
import { cooperativeGroup, produceAndCheck } from './client-scenarios.js';
import {
  CLUSTER_UP_MS, KAFKA_TOOL_CLASSES, NEEDS, committedOffsets, requireApis, createTopic, endOffsetTotal, jsonLines, runTool, sluiceOrSkip, spawnTool,
  startOrSkip, toolOrSkip, uniqueName, waitForLeaders, type KafkaTarget, type Tool, type ToolRun,
} from './kafka-kit.js';

function ok(run: ToolRun, what: string): string {
  expect(run.status, `${what}: status ${run.status}${run.timedOut ? ' (timed out)' : ''}\nstdout: ${run.stdout.slice(-3000)}\nstderr: ${run.stderr.slice(-3000)}`).to.equal(0);
  return run.stdout;
}

describe('interop: Java client and Kafka tools', function () {
  this.timeout(240_000);
  let target: KafkaTarget | undefined;
  let java: Tool;
  let tools: Tool;

  before(async function () {
    this.timeout(CLUSTER_UP_MS + 60_000);
    java = toolOrSkip(this, 'java');
    tools = toolOrSkip(this, 'kafka-tools');
    target = await startOrSkip(this);
  });

  after(async () => {
    await target?.stop();
  });

  /** Runs one of Kafka's tools by main class with `--bootstrap-server` first. */
  const kafkaTool = (cls: string, args: readonly string[]): Promise<ToolRun> =>
    runTool(tools, [cls, '--bootstrap-server', target!.bootstrap, ...args]);

  it('kafka-topics creates, lists and describes a topic', async function () {
    requireApis(this, target!, NEEDS.topics, 'CreateTopics', 'DescribeConfigs');
    const topic = uniqueName('java-topics');
    const rf = String(target!.replicationFactor);
    expect(ok(await kafkaTool(KAFKA_TOOL_CLASSES.topics, ['--create', '--topic', topic, '--partitions', '3', '--replication-factor', rf]), 'create'))
      .to.contain(`Created topic ${topic}.`);
    await waitForLeaders(target!, topic, 3);
    const listed = ok(await kafkaTool(KAFKA_TOOL_CLASSES.topics, ['--list']), 'list').split('\n').map((l) => l.trim());
    expect(listed).to.include(topic);
    const described = ok(await kafkaTool(KAFKA_TOOL_CLASSES.topics, ['--describe', '--topic', topic]), 'describe');
    expect(described).to.match(new RegExp(`PartitionCount: 3\\s+ReplicationFactor: ${rf}`));
    const rows = described.split('\n').filter((l) => /\bPartition: \d+/.test(l));
    expect(rows, described).to.have.length(3);
    for (const row of rows) {
      const leader = Number(/Leader: (-?\d+)/.exec(row)?.[1]);
      const replicas = (/Replicas: ([\d,]+)/.exec(row)?.[1] ?? '').split(',').map(Number);
      const isr = (/Isr: ([\d,]+)/.exec(row)?.[1] ?? '').split(',').map(Number);
      expect(replicas, row).to.have.length(target!.replicationFactor);
      expect(replicas, row).to.include(leader);
      expect([...isr].sort(), row).to.deep.equal([...replicas].sort());
    }
  });

  it('produces with KafkaProducer defaults (idempotent, acks=all)', async function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read);
    const topic = uniqueName('java-produce');
    await createTopic(target!, topic, 3);
    const produced = await produceAndCheck(target!, java, topic, 300, 'java');
    // The program stamps record i with 1700000000000 + i; a CreateTime topic keeps it.
    for (const e of produced) expect(e.timestamp, JSON.stringify(e)).to.equal(1_700_000_000_000 + Number(String(e.value).slice('java-'.length)));
  });

  it('runs a consumer group through a cooperative rebalance and commits', async function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group);
    await cooperativeGroup(target!, java, 'java', { consumeArgs: ['--count', '1000000'] });
  });

  it('kafka-consumer-groups --describe shows the group, its offsets and no lag', async function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group, 'DescribeGroups', 'ListGroups');
    const topic = uniqueName('java-cg');
    const group = uniqueName('java-cg-g');
    await createTopic(target!, topic, 2);
    await produceAndCheck(target!, java, topic, 20, 'java');
    // A member stops on stdin EOF, which runTool gives at once: spawn it with stdin open; it stops at --count.
    const member = ok(await spawnTool(java, ['consume', '--bootstrap', target!.bootstrap, '--topic', topic, '--group', group, '--count', '20']).done, 'consume');
    expect(jsonLines(member).filter((e) => e.event === 'record')).to.have.length(20);
    await waitFor('the group committed everything', async () => [...(await committedOffsets(target!, group, topic)).values()].reduce((a, b) => a + b, 0) === 20,
      { timeoutMs: 30_000, intervalMs: 200 });
    const out = ok(await kafkaTool(KAFKA_TOOL_CLASSES.consumerGroups, ['--describe', '--group', group]), 'describe');
    const rows = out.split('\n').map((l) => l.trim().split(/\s+/)).filter((c) => c[0] === group && c[1] === topic);
    expect(rows, out).to.have.length(2);
    for (const [, , partition, current, end, lag] of rows) {
      expect(current, `partition ${partition}: ${out}`).to.equal(end);
      expect(lag, `partition ${partition}`).to.equal('0');
    }
    expect(ok(await kafkaTool(KAFKA_TOOL_CLASSES.consumerGroups, ['--list']), 'list').split('\n').map((l) => l.trim())).to.include(group);
  });

  it('kafka-reassign-partitions moves a replica to another broker', async function () {
    sluiceOrSkip(this, target!, 'moving a replica between brokers');
    requireApis(this, target!, NEEDS.topics, 'CreateTopics', NEEDS.produce, NEEDS.read, 'DescribeConfigs', 'IncrementalAlterConfigs',
      'AlterPartitionReassignments', 'ListPartitionReassignments');
    const topic = uniqueName('java-reassign');
    expect(ok(await kafkaTool(KAFKA_TOOL_CLASSES.topics, ['--create', '--topic', topic, '--partitions', '1', '--replication-factor', '1']), 'create'))
      .to.contain('Created topic');
    const [from] = [...(await waitForLeaders(target!, topic, 1)).values()] as [number];
    await produceAndCheck(target!, java, topic, 10, 'java');
    const to = [...target!.kafkaPorts.keys()].find((id) => id !== from)!;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-reassign-'));
    try {
      const plan = path.join(dir, 'plan.json');
      fs.writeFileSync(plan, JSON.stringify({ version: 1, partitions: [{ topic, partition: 0, replicas: [to] }] }));
      ok(await kafkaTool(KAFKA_TOOL_CLASSES.reassignPartitions, ['--reassignment-json-file', plan, '--execute']), 'execute');
      await waitFor('the reassignment to complete (--verify)', async () => {
        const out = ok(await kafkaTool(KAFKA_TOOL_CLASSES.reassignPartitions, ['--reassignment-json-file', plan, '--verify']), 'verify');
        return out.includes(`Reassignment of partition ${topic}-0 is completed`);
      }, { timeoutMs: 90_000, intervalMs: 500 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    await waitFor(`${topic}-0 on broker ${to} only, led by it`, async () => {
      const p = (await target!.admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions[0];
      return p !== undefined && p.leader === to && p.replicas.length === 1 && p.replicas[0] === to;
    }, { timeoutMs: 30_000, intervalMs: 200 });
    expect(await endOffsetTotal(target!, topic), 'the records moved with the replica').to.equal(10);
  });

  it('kafka-producer-perf-test and kafka-consumer-perf-test run a small load', async function () {
    requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group);
    const topic = uniqueName('java-perf');
    await createTopic(target!, topic, 3);
    const records = 2_000;
    const produced = ok(await runTool(tools, [KAFKA_TOOL_CLASSES.producerPerf, '--topic', topic, '--num-records', String(records), '--record-size', '100',
      '--throughput', '-1', '--command-property', `bootstrap.servers=${target!.bootstrap}`, 'acks=all']), 'producer perf');
    expect(produced).to.match(new RegExp(`^${records} records sent`, 'm'));
    expect(await endOffsetTotal(target!, topic)).to.equal(records);
    const consumed = ok(await kafkaTool(KAFKA_TOOL_CLASSES.consumerPerf, ['--topic', topic, '--num-records', String(records), '--timeout', '30000']), 'consumer perf');
    const lines = consumed.split('\n').map((l) => l.trim()).filter((l) => l.includes(','));
    const header = lines.findIndex((l) => l.startsWith('start.time'));
    expect(header, consumed).to.be.at.least(0);
    const columns = lines[header]!.split(',').map((c) => c.trim());
    const values = lines[header + 1]!.split(',').map((c) => c.trim());
    expect(Number(values[columns.indexOf('data.consumed.in.nMsg')]), consumed).to.equal(records);
  });
});
