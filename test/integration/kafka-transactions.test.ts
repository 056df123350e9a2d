// Transactions on the Kafka listener of a real 3-node cluster, through the raw
// Kafka client playing a Kafka producer and consumer with "transaction
// version 1" (no epoch bump per transaction, as Kafka clients do when the
// broker advertises no transaction.version feature): FindCoordinator key type
// 1 (one at a time and batched, the wrong broker NOT_COORDINATOR),
// InitProducerId with a transactional id, AddPartitionsToTxn, Produce with the
// id, EndTxn commit and abort, Fetch read_committed (the last stable offset,
// the aborted transactions), ListOffsets by isolation level, AddOffsetsToTxn +
// TxnOffsetCommit + OffsetFetch requireStable, Describe/ListTransactions, and
// the fencing of an older producer. Waits are on conditions with bounds.

import { expect } from 'chai';
import { connect, createTopic, startBrokerCluster } from './broker-kit.js';
import { waitFor, type ProcessCluster } from './harness.js';
import { RawKafkaClient } from '../protocol/kafka/raw-client.js';
import { connectToCoordinator } from '../protocol/kafka/raw-group-member.js';
import type { Struct } from '../../src/protocol/kafka/message.js';
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { findCoordinator } from '../../src/protocol/kafka/apis/find-coordinator/schema.js';
import { initProducerId } from '../../src/protocol/kafka/apis/init-producer-id/schema.js';
import { addPartitionsToTxn } from '../../src/protocol/kafka/apis/add-partitions-to-txn/schema.js';
import { addOffsetsToTxn } from '../../src/protocol/kafka/apis/add-offsets-to-txn/schema.js';
import { endTxn } from '../../src/protocol/kafka/apis/end-txn/schema.js';
import { txnOffsetCommit } from '../../src/protocol/kafka/apis/txn-offset-commit/schema.js';
import { describeTransactions } from '../../src/protocol/kafka/apis/describe-transactions/schema.js';
import { listTransactions } from '../../src/protocol/kafka/apis/list-transactions/schema.js';
import { produce } from '../../src/protocol/kafka/apis/produce/schema.js';
import { fetch } from '../../src/protocol/kafka/apis/fetch/schema.js';
import { listOffsets } from '../../src/protocol/kafka/apis/list-offsets/schema.js';
import { offsetFetch } from '../../src/protocol/kafka/apis/offset-fetch/schema.js';
import { apiVersions } from '../../src/protocol/kafka/apis/api-versions/schema.js';
import { decodeRecordBatches, encodeRecordBatch } from '../../src/record/record-batch.js';
import { CONTROL_FLAG_MASK } from '../../src/record/batch-header.js';
import { asBuffer } from '../../src/util/node-bytes.js';
import { Errors } from '../../src/util/errors.js';
import { coordinatorPartition } from '../../src/groups/placement.js';

const WAIT_MS = 30_000;
const TOPIC = 'kt-data';
/** Coordinator errors a client retries (the coordinator loading, a transaction still completing). */
const RETRIABLE: readonly number[] = [Errors.COORDINATOR_NOT_AVAILABLE.code, Errors.COORDINATOR_LOAD_IN_PROGRESS.code, Errors.NOT_COORDINATOR.code, Errors.CONCURRENT_TRANSACTIONS.code];

const isControl = (h: { attributes: number }): boolean => (h.attributes & CONTROL_FLAG_MASK) !== 0;
const first = (x: unknown): Struct => (x as Struct[])[0]!;
const hostPort = (addr: string): [string, number] => {
  const [h, p] = addr.split(':');
  return [h!, Number(p)];
};

interface Producer { readonly id: string; producerId: number; producerEpoch: number; sequence: number }

const txnBatch = (p: Producer, values: readonly string[]): Buffer => {
  const b = asBuffer(encodeRecordBatch({
    records: values.map((v) => ({ value: Buffer.from(v), timestamp: 1_700_000_000_000 })),
    producerId: BigInt(p.producerId), producerEpoch: p.producerEpoch, baseSequence: p.sequence, isTransactional: true,
  }));
  p.sequence += values.length;
  return b;
};

describe('Kafka listener: transactions, transaction version 1 (real 3-node cluster)', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  let admin: BrokerConnection;
  const clients: RawKafkaClient[] = [];
  const open = async (addr: string): Promise<RawKafkaClient> => {
    const c = await RawKafkaClient.connect(...hostPort(addr));
    clients.push(c);
    return c;
  };

  /** Retries a request while the coordinator answers a retriable code (the Java client's behaviour). */
  async function untilServed(what: string, send: () => Promise<Struct>, codeOf: (r: Struct) => number = (r) => r.errorCode as number): Promise<Struct> {
    let last: Struct | null = null;
    try {
      return await waitFor(what, async () => {
        last = await send();
        return RETRIABLE.includes(codeOf(last)) ? undefined : last;
      }, { timeoutMs: WAIT_MS, intervalMs: 100 });
    } catch (err) {
      throw new Error(`${(err as Error).message}; last answer ${JSON.stringify(last)}`);
    }
  }

  /** FindCoordinator key type 1 until the coordinator is up; a client on it. */
  async function coordinatorOf(transactionalId: string): Promise<{ c: RawKafkaClient; nodeId: number }> {
    const boot = await open(cluster.nodes[0]!.kafkaAddress);
    const found = await untilServed(`a coordinator for ${transactionalId}`, () => boot.request(findCoordinator, 3, { key: transactionalId, keyType: 1 }));
    expect(found.errorCode, String(found.errorMessage)).to.equal(0);
    return { c: await open(`${String(found.host)}:${String(found.port)}`), nodeId: found.nodeId as number };
  }

  async function leaderClient(topic: string, partition = 0): Promise<RawKafkaClient> {
    const p = (await admin.metadata([topic])).topics[0]!.partitions.find((x) => x.partition === partition)!;
    return open(cluster.nodes.find((n) => n.id === p.leader)!.kafkaAddress);
  }

  async function initProducer(c: RawKafkaClient, id: string, version = 4): Promise<Producer> {
    const res = await untilServed(`InitProducerId ${id}`, () => c.request(initProducerId, version, { transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 }));
    expect(res.errorCode).to.equal(0);
    return { id, producerId: res.producerId as number, producerEpoch: res.producerEpoch as number, sequence: 0 };
  }

  const addPartitions = (c: RawKafkaClient, p: Producer, partitions: number[], version = 3): Promise<Struct> => untilServed('AddPartitionsToTxn', () => c.request(addPartitionsToTxn, version, {
    v3AndBelowTransactionalId: p.id, v3AndBelowProducerId: p.producerId, v3AndBelowProducerEpoch: p.producerEpoch,
    v3AndBelowTopics: [{ name: TOPIC, partitions }],
  }), (r) => first(first(r.resultsByTopicV3AndBelow).resultsByPartition).partitionErrorCode as number);

  const end = (c: RawKafkaClient, p: Producer, committed: boolean, version = 3): Promise<Struct> => untilServed('EndTxn', () => c.request(endTxn, version, {
    transactionalId: p.id, producerId: p.producerId, producerEpoch: p.producerEpoch, committed,
  }));

  const produceTxn = async (c: RawKafkaClient, p: Producer, values: string[]): Promise<Struct> => first(first((await c.request(produce, 9, {
    transactionalId: p.id, acks: -1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: txnBatch(p, values) }] }],
  })).responses).partitionResponses);

  const fetchFrom = async (c: RawKafkaClient, fetchOffset: number, isolationLevel: 0 | 1): Promise<Struct> => first(first((await c.request(fetch, 11, {
    replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 10_000_000, isolationLevel, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic: TOPIC, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset, partitionMaxBytes: 1_000_000 }] }],
    forgottenTopicsData: [], rackId: '',
  })).responses).partitions);

  const latest = async (c: RawKafkaClient, isolationLevel: 0 | 1): Promise<number> => first(first((await c.request(listOffsets, 7, {
    replicaId: -1, isolationLevel, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1 }] }],
  })).topics).partitions).offset as number;

  /**
   * What a read_committed consumer delivers from a fetch answer (Kafka's
   * CompletedFetch): no control batch, and no record of a listed aborted
   * transaction — that producer's batches from its firstOffset up to its
   * ABORT marker.
   */
  const committedValues = (p: Struct): string[] => {
    const pending = [...(p.abortedTransactions as Array<{ producerId: number; firstOffset: number }>)].sort((a, b) => a.firstOffset - b.firstOffset);
    const aborting = new Set<bigint>();
    const out: string[] = [];
    for (const b of decodeRecordBatches(p.records as Uint8Array)) {
      while (pending.length > 0 && pending[0]!.firstOffset <= b.header.baseOffset + b.header.lastOffsetDelta) aborting.add(BigInt(pending.shift()!.producerId));
      if (isControl(b.header)) {
        aborting.delete(b.header.producerId);
        continue;
      }
      if (!aborting.has(b.header.producerId)) out.push(...b.records.map((r) => Buffer.from(r.value!).toString()));
    }
    return out;
  };

  /** The data records (not control batches) of a fetch answer. */
  const values = (p: Struct): string[] => decodeRecordBatches(p.records as Uint8Array).filter((b) => !isControl(b.header)).flatMap((b) => b.records.map((r) => Buffer.from(r.value!).toString()));

  before(async () => {
    cluster = await startBrokerCluster(3, [], { kafka: true });
    admin = await connect(cluster.brokerUrls[0]!);
    const res = await admin.admin(ApiKey.AlterConfigs, {
      resources: [{ resourceType: 'cluster', resourceName: '', set: { 'offsets.topic.num.partitions': '3', 'transaction.state.log.num.partitions': '3' } }],
    });
    expect(res.resources[0]!.errorCode).to.equal(0);
    await createTopic(admin, TOPIC, 1, 3);
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  after(async () => {
    admin?.close();
    await cluster?.cleanup();
  });

  it('advertises no transaction.version feature and the client versions of the transaction APIs', async () => {
    const c = await open(cluster.nodes[0]!.kafkaAddress);
    const res = await c.request(apiVersions, 3, { clientSoftwareName: 'kt', clientSoftwareVersion: '1' });
    const range = (key: number): number[] => {
      const k = (res.apiKeys as Struct[]).find((a) => a.apiKey === key);
      return k ? [k.minVersion as number, k.maxVersion as number] : [];
    };
    expect(range(24)).to.deep.equal([0, 3]);
    expect(range(26)).to.deep.equal([0, 4]);
    expect(range(27), 'WriteTxnMarkers is inter-broker').to.deep.equal([]);
    expect((res.supportedFeatures as Struct[] | undefined ?? []).map((f) => f.name)).to.not.include('transaction.version');
    expect((res.finalizedFeatures as Struct[] | undefined ?? []).map((f) => f.name)).to.not.include('transaction.version');
  });

  it('finds a transactional id\'s coordinator one at a time and batched; other brokers answer NOT_COORDINATOR', async () => {
    const { nodeId } = await coordinatorOf('kt-find');
    const c = await open(cluster.nodes[1]!.kafkaAddress);
    // Another broker may not have learnt the partition's leader yet (its metadata follows the controller's): it
    // answers COORDINATOR_NOT_AVAILABLE meanwhile, which a client retries.
    const batched = await untilServed('the batched lookup', () => c.request(findCoordinator, 4, { keyType: 1, coordinatorKeys: ['kt-find', 'kt-find-2'] }), (r) => first(r.coordinators).errorCode as number);
    const [a, b] = batched.coordinators as Struct[];
    expect([a!.key, a!.errorCode, a!.nodeId]).to.deep.equal(['kt-find', 0, nodeId]);
    expect([RETRIABLE[0], 0]).to.include(b!.errorCode);
    const wrong = cluster.nodes.find((n) => n.id !== nodeId)!;
    const other = await open(wrong.kafkaAddress);
    const refused = await other.request(initProducerId, 4, { transactionalId: 'kt-find', transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
    expect([refused.errorCode, refused.producerId]).to.deep.equal([Errors.NOT_COORDINATOR.code, -1]);
  });

  it('commits and aborts: read_committed stops at the last stable offset, lists the aborted transaction, and ListOffsets follows it', async () => {
    const { c } = await coordinatorOf('kt-flow');
    const p = await initProducer(c, 'kt-flow');
    const leader = await leaderClient(TOPIC);
    const hw0 = await latest(leader, 0);

    // Transaction 1: added, written, then committed.
    expect((await addPartitions(c, p, [0])).throttleTimeMs).to.equal(0);
    const w1 = await produceTxn(leader, p, ['c0', 'c1']);
    expect([w1.errorCode, w1.baseOffset], String(w1.errorMessage)).to.deep.equal([0, hw0]);
    const open1 = await fetchFrom(leader, hw0, 1);
    expect([open1.highWatermark, open1.lastStableOffset], 'the open transaction holds the LSO at its first offset').to.deep.equal([hw0 + 2, hw0]);
    expect(values(open1), 'read_committed reads nothing of it').to.deep.equal([]);
    expect(open1.abortedTransactions).to.deep.equal([]);
    const uncommitted = await fetchFrom(leader, hw0, 0);
    expect(values(uncommitted)).to.deep.equal(['c0', 'c1']);
    expect(uncommitted.abortedTransactions, 'read_uncommitted: null').to.equal(null);
    expect(await latest(leader, 1)).to.equal(hw0);
    expect(await latest(leader, 0)).to.equal(hw0 + 2);
    expect((await end(c, p, true)).errorCode).to.equal(0);
    const committed = await waitFor('the COMMIT marker', async () => {
      const r = await fetchFrom(leader, hw0, 1);
      return r.lastStableOffset === hw0 + 3 ? r : undefined;
    }, { timeoutMs: WAIT_MS, intervalMs: 50 });
    expect(values(committed)).to.deep.equal(['c0', 'c1']);
    expect(decodeRecordBatches(committed.records as Uint8Array).some((b) => isControl(b.header)), 'the marker comes back as a control batch').to.equal(true);
    expect(await latest(leader, 1)).to.equal(hw0 + 3);

    // Transaction 2, same epoch (transaction version 1): written, then aborted.
    await addPartitions(c, p, [0]);
    const w2 = await produceTxn(leader, p, ['a0']);
    expect([w2.errorCode, w2.baseOffset]).to.deep.equal([0, hw0 + 3]);
    expect((await end(c, p, false)).errorCode).to.equal(0);
    const aborted = await waitFor('the ABORT marker', async () => {
      const r = await fetchFrom(leader, hw0, 1);
      return r.lastStableOffset === hw0 + 5 ? r : undefined;
    }, { timeoutMs: WAIT_MS, intervalMs: 50 });
    expect(aborted.abortedTransactions).to.deep.equal([{ producerId: p.producerId, firstOffset: hw0 + 3 }]);
    expect(committedValues(aborted), 'what a read_committed consumer delivers').to.deep.equal(['c0', 'c1']);
    expect(values(await fetchFrom(leader, hw0, 0)), 'read_uncommitted reads the aborted records too').to.deep.equal(['c0', 'c1', 'a0']);

    // The coordinator's view, as kafka-transactions.sh describe / list show it.
    // An id this coordinator would hold (the same __transaction_state partition) that never began.
    const never = Array.from({ length: 100 }, (_, i) => `kt-never-${i}`).find((id) => coordinatorPartition(id, 3) === coordinatorPartition('kt-flow', 3))!;
    const described = await c.request(describeTransactions, 0, { transactionalIds: ['kt-flow', never] });
    const [mine, unknown0] = described.transactionStates as Struct[];
    expect([mine!.errorCode, mine!.transactionState, mine!.producerId, mine!.producerEpoch]).to.deep.equal([0, 'CompleteAbort', p.producerId, p.producerEpoch]);
    expect([unknown0!.transactionalId, unknown0!.errorCode]).to.deep.equal([never, Errors.TRANSACTIONAL_ID_NOT_FOUND.code]);
    const listed = await c.request(listTransactions, 1, { stateFilters: [], producerIdFilters: [p.producerId], durationFilter: -1 });
    expect((listed.transactionStates as Struct[]).map((t) => [t.transactionalId, t.transactionState])).to.deep.equal([['kt-flow', 'CompleteAbort']]);
    const unknown = await c.request(listTransactions, 0, { stateFilters: ['Sleeping'], producerIdFilters: [] });
    expect(unknown.unknownStateFilters).to.deep.equal(['Sleeping']);
  });

  it('refuses a transactional write to a partition not in the transaction, and fences the older producer of an id', async () => {
    const { c } = await coordinatorOf('kt-fence');
    const old = await initProducer(c, 'kt-fence');
    const leader = await leaderClient(TOPIC);
    const hw = await latest(leader, 0);
    const early = await produceTxn(leader, old, ['x']);
    expect(early.errorCode, 'no AddPartitionsToTxn first (KIP-890 verification)').to.equal(Errors.INVALID_TXN_STATE.code);
    old.sequence = 0;
    await addPartitions(c, old, [0]);
    expect((await produceTxn(leader, old, ['o0'])).errorCode).to.equal(0);
    // A new producer of the id: the open transaction is aborted with a bumped epoch (PrepareEpochFence) and the
    // new producer gets a newer one still; the old producer is fenced.
    const next = await initProducer(c, 'kt-fence');
    expect(next.producerId).to.equal(old.producerId);
    expect(next.producerEpoch).to.be.greaterThan(old.producerEpoch);
    const stale = await c.request(endTxn, 3, { transactionalId: old.id, producerId: old.producerId, producerEpoch: old.producerEpoch, committed: true });
    expect(stale.errorCode).to.equal(Errors.PRODUCER_FENCED.code);
    const staleV1 = await c.request(endTxn, 1, { transactionalId: old.id, producerId: old.producerId, producerEpoch: old.producerEpoch, committed: true });
    expect(staleV1.errorCode, 'before v2 the client knows INVALID_PRODUCER_EPOCH').to.equal(Errors.INVALID_PRODUCER_EPOCH.code);
    const r = await waitFor('the fenced transaction aborted', async () => {
      const f = await fetchFrom(leader, hw, 1);
      return f.lastStableOffset === f.highWatermark ? f : undefined;
    }, { timeoutMs: WAIT_MS, intervalMs: 50 });
    expect(r.abortedTransactions).to.deep.equal([{ producerId: old.producerId, firstOffset: hw }]);
    expect(values(r), 'the aborted record is there, for the consumer to drop').to.deep.equal(['o0']);
    expect(committedValues(r)).to.deep.equal([]);
  });

  it('commits offsets in a transaction: pending (UNSTABLE_OFFSET_COMMIT with requireStable) until the COMMIT marker', async () => {
    const { c } = await coordinatorOf('kt-offsets');
    const p = await initProducer(c, 'kt-offsets');
    const group = 'kt-group';
    // In the Java producer's order: AddOffsetsToTxn before any FindCoordinator for the group, on a cluster
    // that has no __consumer_offsets yet — the transaction coordinator has it created (retriable meanwhile).
    expect((await admin.metadata(null)).topics.map((t) => t.name), 'no group has been used on this cluster').to.not.include('__consumer_offsets');
    expect((await untilServed('AddOffsetsToTxn', () => c.request(addOffsetsToTxn, 3, { transactionalId: p.id, producerId: p.producerId, producerEpoch: p.producerEpoch, groupId: group }))).errorCode).to.equal(0);
    const gc = await connectToCoordinator(await open(cluster.nodes[0]!.kafkaAddress), group);
    clients.push(gc);
    const commit = await untilServed('TxnOffsetCommit', () => gc.request(txnOffsetCommit, 3, {
      transactionalId: p.id, groupId: group, producerId: p.producerId, producerEpoch: p.producerEpoch, generationId: -1, memberId: '', groupInstanceId: null,
      topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: 5, committedLeaderEpoch: -1, committedMetadata: 'txn' }] }],
    }), (r) => first(first(r.topics).partitions).errorCode as number);
    expect(first(first(commit.topics).partitions).errorCode).to.equal(0);
    const fetchOffset = async (requireStable: boolean): Promise<Struct> => first(first((await gc.request(offsetFetch, 7, {
      groupId: group, topics: [{ name: TOPIC, partitionIndexes: [0] }], requireStable,
    })).topics).partitions);
    expect((await fetchOffset(true)).errorCode).to.equal(Errors.UNSTABLE_OFFSET_COMMIT.code);
    expect((await fetchOffset(false)).committedOffset, 'not committed yet').to.equal(-1);
    expect((await end(c, p, true)).errorCode).to.equal(0);
    const stable = await waitFor('the offsets committed', async () => {
      const r = await fetchOffset(true);
      return r.errorCode === 0 ? r : undefined;
    }, { timeoutMs: WAIT_MS, intervalMs: 50 });
    expect([stable.committedOffset, stable.metadata]).to.deep.equal([5, 'txn']);
  });
});
