// The transactional producer and read_committed consumer of the Sluice
// client against a real cluster: three combined `sluice server` processes on
// loopback (free ports, temp dirs, stopped by PID). What is checked is what
// an application relies on:
// - records of a committed transaction, written to several partitions,
//   become visible to read_committed readers together, and only after the
//   commit (the last stable offset holds them back while it is open);
// - an aborted transaction's records are never delivered to read_committed
//   readers (read_uncommitted ones do see them), markers are never
//   delivered, and positions move past them;
// - each transaction ends with an epoch bump (KIP-890): the next one runs at
//   the answered epoch;
// - a second producer with the same transactional id fences the first: the
//   old one's commit fails PRODUCER_FENCED (fatal) and none of its records is
//   ever read committed;
// - sendOffsets commits a consumer group's offsets with the transaction, and
//   an aborted transaction leaves them where they were;
// - a transactional producer refuses to send outside a transaction.
import '../../src/node.js';
import { expect } from 'chai';
import { Client } from '../../src/client/index.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import type { Consumer, IsolationLevelName } from '../../src/client/consumer.js';
import type { Producer } from '../../src/client/producer.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { LATEST_TIMESTAMP } from '../../src/protocol/apis/offsets.js';
import { READ_COMMITTED } from '../../src/protocol/apis/fetch.js';
import { Errors, isSluiceError, SluiceError } from '../../src/util/errors.js';
import { ProcessCluster, waitFor } from '../integration/harness.js';
import { DataClient } from '../integration/data-client.js';
import { runSluice } from '../integration/cli-kit.js';

const TOPIC = 'accounts';
const PARTITIONS = 3;

describe('client: transactions on a real 3-node cluster', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  let data: DataClient;
  let client: Client;
  const opened: Array<{ close(): Promise<void> | void }> = [];

  before(async () => {
    cluster = await ProcessCluster.create({ size: 3, brokers: true, logLevel: 'warn' });
    cluster.startAll();
    data = new DataClient(() => cluster.nodes.filter((n) => n.running).map((n) => n.brokerUrl));
    await waitFor('three unfenced brokers', async () => (await data.metadata(null)).brokers.length === 3, { timeoutMs: 60_000 });
    const conn = await data.connection(cluster.nodes[0]!.brokerUrl);
    // Few coordinator partitions: the test creates __transaction_state on a loaded machine.
    const res = await conn.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 'cluster', resourceName: '', set: { 'transaction.state.log.num.partitions': '3' } }] });
    expect(res.resources.every((r) => r.errorCode === 0), JSON.stringify(res)).to.equal(true);
    client = new Client({ bootstrap: cluster.brokerUrls, webSocketFactory: nodeWebSocketFactory, retry: { initialRetryTimeMs: 20, maxRetryTimeMs: 500, retries: 60 } });
    await data.createTopic(TOPIC, { partitions: PARTITIONS, replicationFactor: 3 });
    await data.createTopic('input', { partitions: 1, replicationFactor: 3 });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  after(async () => {
    for (const c of opened.reverse()) await Promise.resolve(c.close()).catch(() => undefined);
    client?.close();
    await data?.close();
    await cluster?.cleanup();
  });

  function producer(transactionalId: string, extra: { transactionTimeoutMs?: number } = {}): Producer {
    const p = client.producer({ transactionalId, lingerMs: 1, retryBackoffMs: 20, ...extra });
    opened.push(p);
    return p;
  }

  /** The latest offset a read_committed (LSO) or read_uncommitted (HW) reader may read to, on a partition. */
  async function latest(partition: number, committed: boolean): Promise<number> {
    const { conn } = await client.leaderFor(TOPIC, partition);
    const res = await conn.listOffsets({ ...(committed ? { isolationLevel: READ_COMMITTED } : {}), topics: [{ name: TOPIC, partitions: [{ partition, timestamp: LATEST_TIMESTAMP }] }] });
    return res.topics[0]!.partitions[0]!.offset;
  }

  /** Values read from every partition from offset 0 until `until` says stop (bounded by a deadline). */
  async function read(isolationLevel: IsolationLevelName, until: (values: string[]) => boolean, topic = TOPIC, partitions = PARTITIONS): Promise<string[]> {
    const consumer: Consumer = client.consumer({ isolationLevel, maxWaitMs: 100 });
    consumer.assign(Array.from({ length: partitions }, (_, p) => ({ topic, partition: p, offset: 0 })));
    const it = consumer[Symbol.asyncIterator]();
    const seen: string[] = [];
    const deadline = Date.now() + 60_000;
    let pending: Promise<IteratorResult<{ value: Buffer | null }>> | null = null;
    try {
      while (!until(seen)) {
        if (Date.now() > deadline) throw new Error(`timed out: the ${isolationLevel} reader saw only ${seen.join(', ')}`);
        pending ??= it.next();
        const next = await Promise.race([pending, new Promise<null>((r) => setTimeout(() => r(null), 200))]);
        if (next === null) continue; // nothing yet: check the deadline, wait again
        pending = null;
        if (next.done) break;
        seen.push(next.value.value?.toString() ?? '');
      }
    } finally {
      await consumer.close();
    }
    return seen;
  }

  it('refuses to send outside a transaction, and allows one transaction at a time', async () => {
    const p = producer('tx-rules');
    const err = await p.send({ topic: TOPIC, messages: [{ value: 'x' }] }).catch((e: unknown) => e);
    expect(isSluiceError(err, Errors.INVALID_TXN_STATE), String(err)).to.equal(true);
    const tx = await p.transaction();
    const second = await p.transaction().catch((e: unknown) => e);
    expect(isSluiceError(second, Errors.INVALID_TXN_STATE), String(second)).to.equal(true);
    expect(tx.isActive()).to.equal(true);
    await tx.commit(); // nothing sent: ends without EndTxn
    expect(tx.isActive()).to.equal(false);
    const again = await tx.send({ topic: TOPIC, messages: [{ value: 'late' }] }).catch((e: unknown) => e);
    expect(isSluiceError(again, Errors.INVALID_TXN_STATE), String(again)).to.equal(true);
  });

  it('makes a committed transaction visible at once on every partition, only after the commit, at a bumped epoch', async () => {
    const p = producer('tx-commit');
    await p.initTransactions();
    const epoch0 = p.transactionStatus!.producerEpoch;
    const tx = await p.transaction();
    const before = await Promise.all([0, 1, 2].map((q) => latest(q, true)));
    await tx.send({ topic: TOPIC, messages: [0, 1, 2].map((q) => ({ value: `c1-${q}`, partition: q })) });
    // Written (read_uncommitted sees them) but not stable: read_committed's end has not moved.
    for (const q of [0, 1, 2]) {
      expect(await latest(q, false)).to.be.greaterThan(before[q]!);
      expect(await latest(q, true)).to.equal(before[q]);
    }
    await tx.commit();
    expect(p.transactionStatus!.producerEpoch).to.equal(epoch0 + 1);
    const seen = await read('read_committed', (vs) => ['c1-0', 'c1-1', 'c1-2'].every((v) => vs.includes(v)));
    expect(seen).to.include.members(['c1-0', 'c1-1', 'c1-2']);
    // The next transaction runs at the new epoch and commits too.
    const tx2 = await p.transaction();
    await tx2.send({ topic: TOPIC, messages: [{ value: 'c2-0', partition: 0 }] });
    await tx2.commit();
    expect(p.transactionStatus!.producerEpoch).to.equal(epoch0 + 2);
    await read('read_committed', (vs) => vs.includes('c2-0'));
  });

  it('never delivers an aborted transaction to read_committed readers, and reads on past its marker', async () => {
    const p = producer('tx-abort');
    const tx = await p.transaction();
    await tx.send({ topic: TOPIC, messages: [0, 1, 2].map((q) => ({ value: `aborted-${q}`, partition: q })) });
    await tx.abort();
    expect(tx.isActive()).to.equal(false);
    const tx2 = await p.transaction();
    await tx2.send({ topic: TOPIC, messages: [0, 1, 2].map((q) => ({ value: `after-abort-${q}`, partition: q })) });
    await tx2.commit();
    const committed = await read('read_committed', (vs) => [0, 1, 2].every((q) => vs.includes(`after-abort-${q}`)));
    expect(committed.filter((v) => v.startsWith('aborted-'))).to.deep.equal([]);
    const uncommitted = await read('read_uncommitted', (vs) => [0, 1, 2].every((q) => vs.includes(`after-abort-${q}`)));
    expect(uncommitted).to.include.members(['aborted-0', 'aborted-1', 'aborted-2']);
    expect(uncommitted.every((v) => v.length > 0), 'no marker delivered as a record').to.equal(true);
  });

  it('fences a zombie: the older producer of an id cannot commit, and its records are never read committed', async () => {
    const zombie = producer('tx-fence');
    const ztx = await zombie.transaction();
    await ztx.send({ topic: TOPIC, messages: [{ value: 'zombie-0', partition: 0 }] });
    const successor = producer('tx-fence');
    await successor.initTransactions(); // aborts the zombie's open transaction, bumps the epoch
    const err = await ztx.commit().catch((e: unknown) => e);
    expect(isSluiceError(err), String(err)).to.equal(true);
    expect(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH']).to.include((err as SluiceError).errorName);
    expect(zombie.transactionStatus!.state).to.equal('fatal-error');
    const afterwards = await zombie.transaction().catch((e: unknown) => e);
    expect((afterwards as SluiceError).errorName).to.equal((err as SluiceError).errorName);
    const tx = await successor.transaction();
    await tx.send({ topic: TOPIC, messages: [{ value: 'successor-0', partition: 0 }] });
    await tx.commit();
    const seen = await read('read_committed', (vs) => vs.includes('successor-0'));
    expect(seen).to.not.include('zombie-0');
  });

  it('commits a group\'s offsets with the transaction (sendOffsets), and an abort leaves them', async () => {
    const group = 'tx-offsets-group';
    const p = producer('tx-offsets');
    const consumer = client.consumer({ groupId: group, autoCommit: false });
    opened.push(consumer);
    const committedOffset = async (): Promise<number> => {
      const [d] = await client.groupAdmin().describeGroups([group]);
      return d?.offsets.find((o) => o.topic === 'input' && o.partition === 0)?.committedOffset ?? -1;
    };
    const tx = await p.transaction();
    await tx.send({ topic: TOPIC, messages: [{ value: 'rpw-1', partition: 1 }] });
    await tx.sendOffsets({ consumerGroupId: group, topics: [{ topic: 'input', partitions: [{ partition: 0, offset: 7 }] }] });
    await tx.commit();
    await waitFor('offset 7 committed', async () => (await committedOffset()) === 7, { timeoutMs: 30_000 });
    const tx2 = await p.transaction();
    await tx2.sendOffsets({ consumer: { groupMetadata: () => consumer.groupMetadata() }, topics: [{ topic: 'input', partitions: [{ partition: 0, offset: 9 }] }] });
    await tx2.abort();
    // A later committed transaction shows the abort was settled: the group still reads 7 until it commits 11.
    expect(await committedOffset()).to.equal(7);
    const tx3 = await p.transaction();
    await tx3.sendOffsets({ consumerGroupId: group, topics: [{ topic: 'input', partitions: [{ partition: 0, offset: 11 }] }] });
    await tx3.commit();
    await waitFor('offset 11 committed', async () => (await committedOffset()) === 11, { timeoutMs: 30_000 });
  });

  it('an abortable error (a record the topic refuses) makes commit throw; abort() then clears the way for the next transaction', async () => {
    await data.createTopic('small', { partitions: 1, replicationFactor: 3, configs: { 'max.message.bytes': '200' } });
    const p = producer('tx-abortable');
    const tx = await p.transaction();
    await tx.send({ topic: TOPIC, messages: [{ value: 'ok-before-failure', partition: 2 }] });
    const big = await tx.send({ topic: 'small', messages: [{ value: 'x'.repeat(1000) }] }).catch((e: unknown) => e);
    expect(isSluiceError(big), String(big)).to.equal(true);
    expect(p.transactionStatus!.state).to.equal('abortable-error');
    const commit = await tx.commit().catch((e: unknown) => e);
    expect((commit as SluiceError).errorName).to.equal((big as SluiceError).errorName);
    const more = await tx.send({ topic: TOPIC, messages: [{ value: 'refused' }] }).catch((e: unknown) => e);
    expect((more as SluiceError).errorName).to.equal((big as SluiceError).errorName);
    expect(tx.isActive()).to.equal(true);
    await tx.abort();
    expect(p.transactionStatus!.state).to.equal('ready');
    const tx2 = await p.transaction();
    await tx2.send({ topic: TOPIC, messages: [{ value: 'after-abortable', partition: 2 }] });
    await tx2.commit();
    const seen = await read('read_committed', (vs) => vs.includes('after-abortable'));
    expect(seen).to.not.include('ok-before-failure');
  });

  it('a send refused before it reached the broker (too large for requestBytesMax) also makes the transaction abortable', async () => {
    const p = client.producer({ transactionalId: 'tx-local-refusal', requestBytesMax: 1000, lingerMs: 1 });
    opened.push(p);
    const tx = await p.transaction();
    await tx.send({ topic: TOPIC, messages: [{ value: 'local-ok', partition: 1 }] });
    const err = await tx.send({ topic: TOPIC, messages: [{ value: 'y'.repeat(5000), partition: 1 }] }).catch((e: unknown) => e);
    expect((err as SluiceError).errorName).to.equal('MESSAGE_TOO_LARGE');
    expect(p.transactionStatus!.state).to.equal('abortable-error');
    expect(((await tx.commit().catch((e: unknown) => e)) as SluiceError).errorName).to.equal('MESSAGE_TOO_LARGE');
    await tx.abort();
    expect(p.transactionStatus!.state).to.equal('ready');
  });

  it('a transaction left open past transactionTimeoutMs is aborted by the coordinator, which fences its producer', async () => {
    const conn = await data.connection(cluster.nodes[0]!.brokerUrl);
    await conn.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 'cluster', resourceName: '', set: { 'transaction.abort.timed.out.transaction.cleanup.interval.ms': '100' } }] });
    const p = producer('tx-timeout', { transactionTimeoutMs: 1000 });
    const tx = await p.transaction();
    await tx.send({ topic: TOPIC, messages: [{ value: 'timed-out-0', partition: 0 }] });
    await waitFor('the coordinator to abort the hung transaction', async () => {
      const [d] = await client.admin().describeTransactions(['tx-timeout']);
      return d !== undefined && (d.transactionState === 'CompleteAbort' || d.transactionState === 'PrepareAbort');
    }, { timeoutMs: 60_000, intervalMs: 100 });
    const err = await tx.commit().catch((e: unknown) => e);
    expect(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH']).to.include((err as SluiceError).errorName);
    expect(p.transactionStatus!.state).to.equal('fatal-error');
    const next = producer('tx-timeout');
    const tx2 = await next.transaction();
    await tx2.send({ topic: TOPIC, messages: [{ value: 'after-timeout-0', partition: 0 }] });
    await tx2.commit();
    expect(await read('read_committed', (vs) => vs.includes('after-timeout-0'))).to.not.include('timed-out-0');
  });

  it('sluice produce --transactional-id, consume --isolation-level, transactions list|describe', async () => {
    const bootstrap = cluster.brokerUrls.join(',');
    await data.createTopic('cli-tx', { partitions: 1, replicationFactor: 3 });
    const lines = Array.from({ length: 7 }, (_, i) => `line-${i}`).join('\n') + '\n';
    const produced = await runSluice(['produce', '--topic', 'cli-tx', '--transactional-id', 'cli-loader', '--transaction-records', '3', '--bootstrap', bootstrap], lines);
    expect(produced.status, produced.stderr).to.equal(0);
    expect(produced.stderr).to.contain('sent 7 record(s)');
    expect(produced.stderr).to.contain('in 3 committed transaction(s)');
    const consumed = await runSluice(['consume', '--topic', 'cli-tx', '--from-beginning', '--isolation-level', 'read_committed', '--max-messages', '7',
      '--timeout-ms', '20000', '--bootstrap', bootstrap]);
    expect(consumed.status, consumed.stderr).to.equal(0);
    expect(consumed.stdout.trim().split('\n')).to.deep.equal(Array.from({ length: 7 }, (_, i) => `line-${i}`));
    const listed = await runSluice(['transactions', 'list', '--json', '--bootstrap', bootstrap]);
    expect(listed.status, listed.stderr).to.equal(0);
    expect((JSON.parse(listed.stdout) as Array<{ transactionalId: string }>).map((t) => t.transactionalId)).to.include('cli-loader');
    const described = await runSluice(['transactions', 'describe', '--transactional-id', 'cli-loader', '--bootstrap', bootstrap]);
    expect(described.status, described.stderr).to.equal(0);
    expect(described.stdout).to.match(/^cli-loader\s+\d+\s+(CompleteCommit|Empty)\s/m);
    const unknown = await runSluice(['transactions', 'describe', '--transactional-id', 'never-used', '--bootstrap', bootstrap]);
    expect(unknown.status).to.equal(1);
    expect(unknown.stderr).to.contain('TRANSACTIONAL_ID_NOT_FOUND');
  });

  it('read-process-write: a subscribed consumer\'s offsets go with each transaction, checked against its generation', async () => {
    await data.createTopic('rpw-in', { partitions: 1, replicationFactor: 3 });
    await data.createTopic('rpw-out', { partitions: 1, replicationFactor: 3 });
    const plain = client.producer({});
    opened.push(plain);
    await plain.send({ topic: 'rpw-in', messages: Array.from({ length: 5 }, (_, i) => ({ value: `in-${i}` })) });
    const consumer = client.consumer({ groupId: 'rpw', autoCommit: false, isolationLevel: 'read_committed', autoOffsetReset: 'earliest', sessionTimeoutMs: 10_000 });
    opened.push(consumer);
    await consumer.subscribe({ topics: ['rpw-in'], fromBeginning: true });
    const p = producer('tx-rpw');
    let processed = 0;
    let generation = -1;
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        generation = consumer.groupMetadata().generationId;
        const tx = await p.transaction();
        await tx.send({ topic: 'rpw-out', messages: [{ value: `out-${message.value?.toString() ?? ''}` }] });
        await tx.sendOffsets({ consumer, topics: [{ topic, partitions: [{ partition, offset: message.offset + 1 }] }] });
        await tx.commit();
        processed++;
      },
    });
    await waitFor('5 records processed', () => processed === 5, { timeoutMs: 60_000 });
    expect(generation).to.be.greaterThan(0);
    await consumer.stop();
    const [d] = await client.groupAdmin().describeGroups(['rpw']);
    expect(d?.offsets.find((o) => o.topic === 'rpw-in')?.committedOffset).to.equal(5);
    const out = await read('read_committed', (vs) => vs.length >= 5, 'rpw-out', 1);
    expect(out).to.deep.equal(Array.from({ length: 5 }, (_, i) => `out-in-${i}`));
    // A member the group does not know (a zombie's stale generation) cannot commit: abortable, then abort.
    const tx = await p.transaction();
    await tx.send({ topic: 'rpw-out', messages: [{ value: 'zombie-output' }] });
    const stale = { groupMetadata: () => ({ groupId: 'rpw', generationId: generation + 100, memberId: 'ghost-member', groupInstanceId: null }) };
    const err = await tx.sendOffsets({ consumer: stale, topics: [{ topic: 'rpw-in', partitions: [{ partition: 0, offset: 99 }] }] }).catch((e: unknown) => e);
    expect(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION']).to.include((err as SluiceError).errorName);
    expect(p.transactionStatus!.state).to.equal('abortable-error');
    await tx.abort();
    const [after] = await client.groupAdmin().describeGroups(['rpw']);
    expect(after?.offsets.find((o) => o.topic === 'rpw-in')?.committedOffset).to.equal(5);
  });

  it('a read_committed consumer starts at a pending transactional offset only once it is committed (OffsetFetch requireStable)', async () => {
    await data.createTopic('stable-in', { partitions: 1, replicationFactor: 3 });
    const plain = client.producer({});
    opened.push(plain);
    await plain.send({ topic: 'stable-in', messages: Array.from({ length: 6 }, (_, i) => ({ value: `s-${i}` })) });
    const p = producer('tx-stable');
    const tx1 = await p.transaction();
    await tx1.sendOffsets({ consumerGroupId: 'stable-g', topics: [{ topic: 'stable-in', partitions: [{ partition: 0, offset: 1 }] }] });
    await tx1.commit();
    const tx2 = await p.transaction();
    await tx2.sendOffsets({ consumerGroupId: 'stable-g', topics: [{ topic: 'stable-in', partitions: [{ partition: 0, offset: 4 }] }] });
    // A consumer of the group, on its own client so its retries can be watched.
    const refused: string[] = [];
    const logger = { debug: (o: object) => refused.push(JSON.stringify(o)), info: () => undefined, warn: () => undefined, error: () => undefined };
    const watched = new Client({ bootstrap: cluster.brokerUrls, webSocketFactory: nodeWebSocketFactory, logger, retry: { initialRetryTimeMs: 20, maxRetryTimeMs: 200, retries: 200 } });
    opened.push({ close: () => watched.close() });
    const consumer = watched.consumer({ groupId: 'stable-g', isolationLevel: 'read_committed', autoCommit: false, maxWaitMs: 100 });
    consumer.assign([{ topic: 'stable-in', partition: 0 }]);
    const first = consumer[Symbol.asyncIterator]().next();
    await waitFor('OffsetFetch refused UNSTABLE_OFFSET_COMMIT', () => refused.some((l) => l.includes('UNSTABLE_OFFSET_COMMIT')), { timeoutMs: 30_000 });
    await tx2.commit();
    const m = await first;
    expect(m.done).to.equal(false);
    expect(m.done ? -1 : m.value.offset).to.equal(4);
    await consumer.close();
  });

  it('lists and describes transactional ids through the admin client', async () => {
    const listed = await client.admin().listTransactions();
    const ids = listed.map((t) => t.transactionalId);
    expect(ids).to.include.members(['tx-commit', 'tx-abort', 'tx-fence']);
    const [d] = await client.admin().describeTransactions(['tx-commit']);
    expect(d!.errorCode).to.equal(0);
    expect(d!.transactionState).to.match(/^Complete(Commit|Abort)$|^Empty$/);
    expect(d!.producerEpoch).to.be.greaterThan(0);
  });

  // Last: it kills a node.
  it('commits through a coordinator killed mid-transaction: the client finds the new one and the transaction completes', async () => {
    const conn = await data.connection(cluster.nodes[0]!.brokerUrl);
    await conn.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 'cluster', resourceName: '', set: { 'broker.session.timeout.ms': '6000' } }] });
    const p = producer('tx-failover');
    const tx = await p.transaction();
    await tx.send({ topic: TOPIC, messages: [0, 1, 2].map((q) => ({ value: `failover-${q}`, partition: q })) });
    const found = await (await client.anyConnection()).findCoordinator('tx-failover', 1);
    expect(found.nodeId).to.be.greaterThan(0);
    await cluster.node(found.nodeId).kill('SIGKILL');
    await tx.commit();
    const seen = await read('read_committed', (vs) => [0, 1, 2].every((q) => vs.includes(`failover-${q}`)));
    expect(seen).to.include.members(['failover-0', 'failover-1', 'failover-2']);
    const moved = await (await client.anyConnection()).findCoordinator('tx-failover', 1);
    expect(moved.nodeId).to.not.equal(found.nodeId);
  });
});
