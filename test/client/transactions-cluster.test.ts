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

  it('lists and describes transactional ids through the admin client', async () => {
    const listed = await client.admin().listTransactions();
    const ids = listed.map((t) => t.transactionalId);
    expect(ids).to.include.members(['tx-commit', 'tx-abort', 'tx-fence']);
    const [d] = await client.admin().describeTransactions(['tx-commit']);
    expect(d!.errorCode).to.equal(0);
    expect(d!.transactionState).to.match(/^Complete(Commit|Abort)$|^Empty$/);
    expect(d!.producerEpoch).to.be.greaterThan(0);
  });
});
