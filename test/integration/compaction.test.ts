// Log compaction on a real cluster of three combined `sluice server`
// processes: a compacted topic with small segments takes many versions of a
// few keys, and every replica's cleaner (each compacts its own log) shrinks
// it while a read from the beginning still gives the latest value of every
// key; `__consumer_offsets` is compacted the same way, and after the
// coordinator's broker is SIGKILLed the new coordinator loads the group's
// last commits from its compacted log. Waits are on conditions (the cleaner's
// progress through DescribeLogDirs), never fixed sleeps, and nothing asserts
// a duration.

import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ApiKey } from '../../src/protocol/api-keys.js';
import type { LogDirPartition } from '../../src/protocol/apis/log-dirs.js';
import { Client } from '../../src/client/client.js';
import { CoordinatorLink } from '../../src/client/consumer-coordinator.js';
import { GroupAdmin } from '../../src/client/group-admin.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { MAIN_JS, waitFor, type ProcessCluster } from './harness.js';
import { Connections, brokerUrls, connect, createTopic, produceOk, readPartition, startBrokerCluster } from './broker-kit.js';
import type { BrokerConnection } from '../../src/client/broker-connection.js';

const WAIT_MS = 90_000;
const KEYS = 8;
const ROUNDS = 40;
const VALUE_BYTES = 200;

describe('log compaction on a real 3-node cluster', function () {
  this.timeout(300_000);
  let cluster: ProcessCluster;
  let admin: BrokerConnection;
  const conns = new Connections();
  const clients: Client[] = [];

  before(async () => {
    // Small default segments, so __consumer_offsets rolls (and can be cleaned) within a test; a short cleaner backoff.
    cluster = await startBrokerCluster(3, ['--log-config', JSON.stringify({ 'log.segment.bytes': '4096', 'log.cleaner.backoff.ms': '100' })]);
    admin = await connect(cluster.brokerUrls[0]!);
    const res = await admin.admin(ApiKey.AlterConfigs, {
      resources: [{ resourceType: 'cluster', resourceName: '', set: { 'offsets.topic.num.partitions': '1', 'broker.session.timeout.ms': '3000' } }],
    });
    expect(res.resources[0]!.errorCode, JSON.stringify(res.resources[0])).to.equal(0);
  });

  after(async () => {
    for (const c of clients) c.close();
    admin?.close();
    conns.closeAll();
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  /** DescribeLogDirs of one partition from every running broker that holds it. */
  async function logDirs(topic: string, partition: number): Promise<Map<number, LogDirPartition>> {
    const out = new Map<number, LogDirPartition>();
    for (const [id, url] of await brokerUrls(admin)) {
      if (!cluster.node(id).running) continue;
      const res = await (await conns.get(url)).describeLogDirs({ topics: [{ name: topic, partitions: [partition] }] });
      const p = res.topics[0]?.partitions[0];
      if (p && p.errorCode === 0) out.set(id, p);
    }
    return out;
  }

  it('a compacted topic keeps the latest value of every key while every replica shrinks its log', async () => {
    await createTopic(admin, 'table', 1, 3, { 'cleanup.policy': 'compact', 'segment.bytes': '16384', 'min.cleanable.dirty.ratio': '0.1' });
    const latest = new Map<string, string>();
    let bytesWritten = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const messages = Array.from({ length: KEYS }, (_, k) => {
        const value = `${round}/`.padEnd(VALUE_BYTES, String.fromCharCode(97 + k));
        latest.set(`key-${k}`, value);
        bytesWritten += value.length;
        return { key: `key-${k}`, value };
      });
      await produceOk(conns, admin, 'table', 0, messages);
    }
    // The newest segment is active and never cleaned; the rest shrink to about one value per key.
    const cleaned = await waitFor('every replica cleaned table-0 to under half of what was written', async () => {
      const dirs = await logDirs('table', 0);
      if (dirs.size !== 3) return undefined;
      return [...dirs.values()].every((d) => d.lastCleanMs >= 0 && d.sizeBytes < bytesWritten / 2) ? dirs : undefined;
    }, { timeoutMs: WAIT_MS, intervalMs: 200 });
    for (const d of cleaned.values()) expect(d.cleanupPolicy).to.equal('compact');

    const leaderId = (await admin.metadata(['table'])).topics[0]!.partitions[0]!.leader;
    const leader = await conns.get((await brokerUrls(admin)).get(leaderId)!);
    const content = await readPartition(leader, 'table', 0);
    expect(content.records.length).to.be.below(KEYS * ROUNDS);
    const read = new Map<string, string>();
    let previous = -1;
    for (const r of content.records) {
      expect(r.offset).to.be.above(previous);
      previous = r.offset;
      read.set(r.key!.toString(), r.value!.toString());
    }
    expect(read).to.deep.equal(latest);
    expect(content.highWatermark).to.equal(KEYS * ROUNDS);

    // topics describe shows the cleaner's progress.
    const { stdout } = await promisify(execFile)(process.execPath, [MAIN_JS, 'topics', 'describe', '--topic', 'table', '--json', '--bootstrap', cluster.brokerUrls.join(',')]);
    const views = JSON.parse(stdout) as Array<{ partitions: Array<{ cleaner: { dirtyRatio: number; lastCleanMs: number | null } | null }> }>;
    const cleaner = views[0]!.partitions[0]!.cleaner;
    expect(cleaner).to.not.equal(null);
    expect(cleaner!.lastCleanMs).to.be.a('number');
    expect(cleaner!.dirtyRatio).to.be.within(0, 1);
  });

  it('__consumer_offsets is compacted, and a new coordinator loads the last commits from the compacted log', async () => {
    await createTopic(admin, 'events', 2, 3);
    const client = new Client({
      bootstrap: cluster.brokerUrls, clientId: 'compaction-test', webSocketFactory: nodeWebSocketFactory,
      connectTimeoutMs: 2_000, requestTimeoutMs: 10_000, retry: { retries: 30, initialRetryTimeMs: 50, maxRetryTimeMs: 1_000 },
    });
    clients.push(client);
    const groupId = 'compacted-group';
    // The first FindCoordinator creates __consumer_offsets (COORDINATOR_NOT_AVAILABLE until it has a leader).
    const coordinator = await waitFor('a coordinator for the group', () => new CoordinatorLink(client, groupId).nodeId(), { timeoutMs: WAIT_MS, intervalMs: 200 });
    const conn = await client.connection(coordinator);
    const COMMITS = 300;
    for (let i = 1; i <= COMMITS; i++) {
      const res = await conn.offsetCommit({
        groupId, generationId: -1, memberId: '',
        topics: [{ name: 'events', partitions: [{ partition: 0, committedOffset: i, metadata: 'x'.repeat(40) }, { partition: 1, committedOffset: 2 * i }] }],
      });
      expect(res.topics.flatMap((t) => t.partitions.map((p) => p.errorCode))).to.deep.equal([0, 0]);
    }
    // Every replica of __consumer_offsets-0 compacted its log: far fewer bytes than 600 commit records.
    await waitFor('every replica of __consumer_offsets-0 cleaned', async () => {
      const dirs = await logDirs('__consumer_offsets', 0);
      return dirs.size === 3 && [...dirs.values()].every((d) => d.cleanupPolicy === 'compact' && d.lastCleanMs >= 0 && d.segments <= 4) ? dirs : undefined;
    }, { timeoutMs: WAIT_MS, intervalMs: 200 });

    await cluster.node(coordinator).kill('SIGKILL');
    const moved = await waitFor('a new coordinator', async () => {
      const id = await new CoordinatorLink(client, groupId).nodeId();
      return id !== coordinator ? id : undefined;
    }, { timeoutMs: WAIT_MS, intervalMs: 200 });
    expect(moved).to.not.equal(coordinator);
    const offsets = await waitFor('the group loaded on the new coordinator', async () => {
      const got = await new GroupAdmin(client).fetchOffsets({ groupId, topics: ['events'] });
      const ps = got[0]?.partitions ?? [];
      return ps.length === 2 ? ps : undefined;
    }, { timeoutMs: WAIT_MS, intervalMs: 200 });
    expect(offsets.map((p) => p.offset)).to.deep.equal([COMMITS, 2 * COMMITS]);
  });
});
