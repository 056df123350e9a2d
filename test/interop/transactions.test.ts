// Kafka's own clients' transactions against the Kafka listener (issue 18):
// Apache Kafka's Java client (KafkaProducer with transactional.id, a
// read_committed KafkaConsumer, sendOffsetsToTransaction) through the
// test/interop/java program, and KafkaJS' producer.transaction() in-process.
// The same tests run against a real Kafka with SLUICE_INTEROP_TARGET=kafka
// (docs/development.md), which is how the programs themselves were checked.
//
// What each test proves:
// - commit/abort: a read_committed reader sees exactly the committed
//   transactions' records, a read_uncommitted one sees every record, and the
//   log holds one marker per partition per transaction (Kafka's layout).
// - fencing: once a second producer initialises the transactional id, the
//   first one's writes and commit fail, its open transaction is aborted, and
//   its late write never reaches the log.
// - exactly-once copy: a copier killed with SIGKILL mid-stream and restarted
//   with the same transactional id leaves every input record copied exactly
//   once, and the group's committed offsets at the input's end.

import { expect } from 'chai';
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import { waitFor } from '../integration/harness.js';
import {
  CLUSTER_UP_MS, NEEDS, committedOffsets, createTopic, endOffsetTotal, jsonLines, requireApis, runTool, spawnTool, startOrSkip, toolOrSkip,
  uniqueName, type ApiName, type KafkaTarget, type Tool, type ToolRun,
} from './kafka-kit.js';

/** What a transactional producer needs beyond an idempotent one's APIs. */
const TXN: readonly ApiName[] = ['FindCoordinator', 'InitProducerId', 'AddPartitionsToTxn', 'EndTxn'];
const TXN_OFFSETS: readonly ApiName[] = ['AddOffsetsToTxn', 'TxnOffsetCommit'];

type Event = Record<string, unknown>;

function ok(run: ToolRun, what: string): Event[] {
  expect(run.status, `${what}: status ${run.status}${run.timedOut ? ' (timed out)' : ''}\nstdout: ${run.stdout.slice(-3000)}\nstderr: ${run.stderr.slice(-3000)}`).to.equal(0);
  return jsonLines(run.stdout);
}

const values = (events: readonly Event[]): string[] => events.filter((e) => e.event === 'record').map((e) => e.value as string);

describe('interop: transactions (Java client and KafkaJS)', function () {
  this.timeout(240_000);
  let target: KafkaTarget | undefined;
  let kafka: Kafka;
  const open: Array<Producer | Consumer> = [];

  before(async function () {
    this.timeout(CLUSTER_UP_MS + 60_000);
    target = await startOrSkip(this);
    kafka = new Kafka({ clientId: 'sluice-interop-txn', brokers: target.bootstrap.split(','), logLevel: logLevel.NOTHING });
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.disconnect().catch(() => {})));
  });

  after(async () => {
    await target?.stop();
  });

  /** Reads `topic` from the start in a fresh group until `count` records arrived; the values in the order read per partition. */
  async function readWithKafkaJs(topic: string, count: number, readUncommitted: boolean): Promise<string[]> {
    const consumer = kafka.consumer({ groupId: uniqueName('txn-reader'), readUncommitted, heartbeatInterval: 500, sessionTimeout: 10_000 });
    open.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const seen: string[] = [];
    await consumer.run({ eachMessage: async ({ message }) => { seen.push(message.value?.toString() ?? '<null>'); } });
    await waitFor(`${count} records of ${topic} (${readUncommitted ? 'read_uncommitted' : 'read_committed'})`, () => seen.length >= count, { timeoutMs: 60_000, intervalMs: 100 });
    await consumer.disconnect();
    return seen;
  }

  describe('the Java client', () => {
    let java: Tool;
    before(function () {
      java = toolOrSkip(this, 'java');
    });

    const javaArgs = (cmd: string, topic: string, ...rest: string[]): string[] => [cmd, '--bootstrap', target!.bootstrap, '--topic', topic, ...rest];

    it('commits and aborts transactions; read_committed sees only the committed ones', async function () {
      requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group, TXN);
      const topic = uniqueName('java-txn');
      await createTopic(target!, topic, 3);
      // 7 transactions of 3 records, one per partition; transactions 2 and 5 are aborted, the last one is committed.
      const events = ok(await runTool(java, javaArgs('txn-produce', topic, '--txn-id', uniqueName('java-tx'), '--count', '7', '--per', '3',
        '--abort-every', '3', '--partitions', '3', '--prefix', 'jt')), 'txn-produce');
      const txns = events.filter((e) => e.event === 'txn');
      expect(txns.map((t) => t.committed)).to.deep.equal([true, true, false, true, true, false, true]);
      const committed = txns.filter((t) => t.committed).flatMap((t) => t.values as string[]);
      const aborted = txns.filter((t) => !t.committed).flatMap((t) => t.values as string[]);

      // The last transaction spans every partition, so reading all 15 committed records reads past every aborted one.
      const readCommitted = values(ok(await spawnTool(java, javaArgs('consume', topic, '--group', uniqueName('java-rc'), '--isolation', 'read_committed',
        '--count', String(committed.length))).done, 'read_committed consume'));
      expect([...readCommitted].sort(), 'read_committed: exactly the committed records').to.deep.equal([...committed].sort());
      const readAll = await readWithKafkaJs(topic, committed.length + aborted.length, true);
      expect([...readAll].sort(), 'read_uncommitted: every record').to.deep.equal([...committed, ...aborted].sort());
      // 21 records and a COMMIT or ABORT marker in each of the 3 partitions for each of the 7 transactions.
      expect(await endOffsetTotal(target!, topic), 'records + one marker per partition per transaction').to.equal(21 + 21);
    });

    it('a second producer with the same transactional.id fences the first; its late write never lands', async function () {
      requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group, TXN);
      const topic = uniqueName('java-fence');
      await createTopic(target!, topic, 1);
      const events = ok(await runTool(java, javaArgs('txn-fence', topic, '--txn-id', uniqueName('java-fence-tx'))), 'txn-fence');
      const kinds = events.map((e) => e.event);
      expect(kinds, JSON.stringify(events)).to.deep.equal(['zombie-wrote', 'fresh-initialised', 'fenced', 'fresh-committed', 'done']);
      const fenced = events.find((e) => e.event === 'fenced')!;
      expect(fenced.error).to.match(/ProducerFencedException|InvalidProducerEpochException/);

      const readCommitted = values(ok(await spawnTool(java, javaArgs('consume', topic, '--group', uniqueName('java-fence-rc'), '--isolation', 'read_committed',
        '--count', '1')).done, 'read_committed consume'));
      expect(readCommitted).to.deep.equal(['fresh-0']);
      // zombie-0 (aborted by the fence), its ABORT marker, fresh-0 and its COMMIT marker: zombie-1 was refused.
      expect(await readWithKafkaJs(topic, 2, true)).to.deep.equal(['zombie-0', 'fresh-0']);
      expect(await endOffsetTotal(target!, topic)).to.equal(4);
    });

    it('copies a topic exactly once through a SIGKILL of the copier (sendOffsetsToTransaction)', async function () {
      requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group, TXN, TXN_OFFSETS);
      const input = uniqueName('java-eos-in');
      const output = uniqueName('java-eos-out');
      const group = uniqueName('java-eos-g');
      const txnId = uniqueName('java-eos-tx');
      await createTopic(target!, input, 2);
      await createTopic(target!, output, 2);
      const count = 60;
      ok(await runTool(java, ['produce', '--bootstrap', target!.bootstrap, '--topic', input, '--count', String(count), '--prefix', 'in']), 'produce input');
      const copyArgs = javaArgs('txn-copy', input, '--to', output, '--group', group, '--txn-id', txnId, '--count', '1000000');

      const first = spawnTool(java, copyArgs, { timeoutMs: 120_000 });
      try {
        await first.waitForEvents('the first copier committed a transaction', (evs) => evs.some((e) => e.event === 'copied'));
      } finally {
        await first.kill(); // SIGKILL, by PID: whatever transaction it had open stays open until the next instance fences it
      }
      const second = spawnTool(java, copyArgs, { timeoutMs: 120_000 });
      try {
        const ends = new Map((await target!.admin.fetchTopicOffsets(input)).map((o) => [o.partition, Number(o.high)]));
        await waitFor('the group committed the input\'s end offsets', async () => {
          const done = await committedOffsets(target!, group, input);
          return [...ends].every(([p, end]) => done.get(p) === end);
        }, { timeoutMs: 90_000, intervalMs: 200 });
        second.closeStdin();
        ok(await second.done, 'second copier');
      } finally {
        await second.kill();
      }
      const copies = await readWithKafkaJs(output, count, false);
      expect(copies, 'each input record copied once').to.have.length(count);
      expect(new Set(copies)).to.deep.equal(new Set(Array.from({ length: count }, (_, i) => `copy-in-${i}`)));
    });
  });

  describe('KafkaJS producer.transaction()', () => {
    async function txnProducer(transactionalId: string): Promise<Producer> {
      const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
      open.push(producer);
      await producer.connect();
      return producer;
    }

    it('commits, aborts and commits offsets in a transaction (sendOffsets)', async function () {
      requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group, TXN, TXN_OFFSETS);
      const topic = uniqueName('kafkajs-txn');
      const source = uniqueName('kafkajs-txn-src');
      const group = uniqueName('kafkajs-txn-g');
      await createTopic(target!, topic, 2);
      await createTopic(target!, source, 1);
      const producer = await txnProducer(uniqueName('kafkajs-tx'));

      const t1 = await producer.transaction();
      await t1.send({ topic, messages: [{ key: 'a', value: 'one', partition: 0 }, { key: 'b', value: 'two', partition: 1 }] });
      await t1.commit();
      const t2 = await producer.transaction();
      await t2.send({ topic, messages: [{ key: 'c', value: 'aborted-1', partition: 0 }, { key: 'd', value: 'aborted-2', partition: 1 }] });
      await t2.sendOffsets({ consumerGroupId: group, topics: [{ topic: source, partitions: [{ partition: 0, offset: '7' }] }] });
      await t2.abort();
      const t3 = await producer.transaction();
      await t3.send({ topic, messages: [{ key: 'e', value: 'three', partition: 0 }, { key: 'f', value: 'four', partition: 1 }] });
      await t3.sendOffsets({ consumerGroupId: group, topics: [{ topic: source, partitions: [{ partition: 0, offset: '5' }] }] });
      await t3.commit();

      expect(await readWithKafkaJs(topic, 4, false), 'read_committed').to.have.members(['one', 'two', 'three', 'four']);
      expect(await readWithKafkaJs(topic, 6, true), 'read_uncommitted').to.have.members(['one', 'two', 'aborted-1', 'aborted-2', 'three', 'four']);
      await waitFor('the committed transaction\'s offset', async () => (await committedOffsets(target!, group, source)).get(0) === 5,
        { timeoutMs: 30_000, intervalMs: 200 });
    });

    it('a newer producer with the same transactionalId fences the older one', async function () {
      requireApis(this, target!, NEEDS.topics, NEEDS.produce, NEEDS.read, NEEDS.group, TXN);
      const topic = uniqueName('kafkajs-fence');
      await createTopic(target!, topic, 1);
      const id = uniqueName('kafkajs-fence-tx');
      const zombie = await txnProducer(id);
      const zt = await zombie.transaction();
      await zt.send({ topic, messages: [{ value: 'zombie-0' }] });
      const fresh = await txnProducer(id);
      // KafkaJS initialises a transactional producer on its first transaction(): InitProducerId bumps the epoch and aborts the zombie's transaction.
      const ft = await fresh.transaction();
      let refusal: unknown = null;
      try {
        await zt.send({ topic, messages: [{ value: 'zombie-1' }] });
        await zt.commit();
      } catch (err) {
        refusal = err;
      }
      expect(refusal, 'the zombie\'s write or commit is refused').to.be.instanceOf(Error);
      expect(String((refusal as { type?: string }).type ?? (refusal as Error).message)).to.match(/PRODUCER_FENCED|INVALID_PRODUCER_EPOCH|fenced|epoch/i);
      await ft.send({ topic, messages: [{ value: 'fresh-0' }] });
      await ft.commit();
      expect(await readWithKafkaJs(topic, 1, false)).to.deep.equal(['fresh-0']);
      expect(await readWithKafkaJs(topic, 2, true)).to.deep.equal(['zombie-0', 'fresh-0']);
      expect(await endOffsetTotal(target!, topic), 'zombie-1 never reached the log').to.equal(4);
    });
  });
});
