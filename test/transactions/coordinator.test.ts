// The transaction coordinator shell in-process, on real replica managers and
// logs (the replication tests' TestCluster, where the test plays the
// controller): transactions committed and aborted with their markers landing
// in the partitions' logs through the leaders' own replica managers (broker 1
// in-process, broker 2 over the inter-broker call path); an InitProducerId
// over an open transaction; a hung transaction aborted by its timeout; a
// coordinator move that finishes a prepared transaction; the KIP-890
// verifier; Describe/ListTransactions. The coordinators' clocks and timers
// are manual (each broker its own ManualScheduler) so timeouts are exact
// without waiting; the replica managers under them run on real time.

import { expect } from 'chai';
import { TestCluster, waitFor, within } from '../replication/replica-harness.js';
import { TransactionCoordinator } from '../../src/transactions/coordinator.js';
import { markerChannel } from '../../src/transactions/markers.js';
import { txnKey } from '../../src/transactions/records.js';
import { TransactionVerifier } from '../../src/transactions/verifier.js';
import type { InterBrokerCalls } from '../../src/transactions/broker-links.js';
import { coordinatorPartition } from '../../src/groups/placement.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { CONSUMER_OFFSETS_TOPIC } from '../../src/protocol/apis/groups.js';
import { TRANSACTION_STATE_TOPIC, type AddPartitionsToTxnRequest, type WriteTxnMarkersRequest } from '../../src/protocol/apis/transactions.js';
import { CONTROL_FLAG_MASK } from '../../src/record/batch-header.js';
import { decodeRecordBatches, encodeRecordBatch } from '../../src/record/record-batch.js';
import { asBuffer } from '../../src/util/node-bytes.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { Errors } from '../../src/util/errors.js';
import { SeededRng } from '../../src/util/rng.js';
import { silentLogger } from '../../src/util/logger.js';

const STATE_ID = 'txn-state-topic-id';
const ORDERS_ID = 'orders-topic-id';
const TXN = 'payments';
const CLEANUP_INTERVAL_MS = 10_000; // transaction.abort.timed.out.transaction.cleanup.interval.ms (Kafka's default)

interface Created { readonly name: string; readonly numPartitions: number; readonly replicationFactor: number; readonly configs: Record<string, string> }
interface Marker { readonly producerId: number; readonly producerEpoch: number; readonly committed: boolean; readonly coordinatorEpoch: number }

describe('transaction coordinator (in-process, real replica managers)', function () {
  this.timeout(30_000);
  let cluster: TestCluster;
  const coordinators = new Map<number, TransactionCoordinator>();
  const schedulers = new Map<number, ManualScheduler>();
  const createCalls: Created[] = [];
  /** Inter-broker calls served in-process by the callee's real parts (the socket path is the broker's, tested in test/server). */
  const calls: InterBrokerCalls = {
    request: async <T,>(brokerId: number, apiKey: number, body: object): Promise<T> => {
      if (!cluster.node(brokerId).running) throw new Error(`broker ${brokerId} is down`);
      if (apiKey === ApiKey.WriteTxnMarkers) return (await cluster.node(brokerId).rm.writeTxnMarkers(body as WriteTxnMarkersRequest)) as T;
      if (apiKey === ApiKey.AddPartitionsToTxn) return (await coordinators.get(brokerId)!.addPartitionsToTxn(body as AddPartitionsToTxnRequest)) as T;
      throw new Error(`no api ${apiKey} here`);
    },
  };
  let nextProducerId = 1000;
  /** Times a coordinator asked for __consumer_offsets (the group coordinator's creation, in the broker). */
  let offsetsTopicAsks = 0;

  /** Tests whose title starts with this run with the coordinator's wait for a busy id (the default); the rest answer at once, as Kafka does. */
  const WAITING = 'waiting:';

  beforeEach(async function () {
    const concurrentWaitMs = this.currentTest?.title.startsWith(WAITING) ? 5_000 : 0;
    cluster = await TestCluster.start([1, 2], { replicaLagTimeMaxMs: 60_000 });
    createCalls.length = 0;
    offsetsTopicAsks = 0;
    for (const id of [1, 2]) {
      const scheduler = new ManualScheduler();
      schedulers.set(id, scheduler);
      const c = new TransactionCoordinator({
        brokerId: id, replicas: cluster.node(id).rm, image: () => cluster.image, clock: scheduler.clock, scheduler, rng: new SeededRng(id), logger: silentLogger,
        admin: async <T,>(api: string, body: Record<string, unknown>): Promise<T> => {
          expect(api).to.equal('createTopics');
          createCalls.push((body.topics as Created[])[0]!);
          return { topics: [{ errorCode: 0, errorMessage: null }] } as T;
        },
        producerIds: { nextProducerId: async () => nextProducerId++ },
        markers: markerChannel(id, cluster.node(id).rm, calls),
        limits: { writeTimeoutMs: 2_000, concurrentWaitMs },
        ensureOffsetsTopic: () => {
          offsetsTopicAsks++;
        },
      });
      c.start();
      coordinators.set(id, c);
    }
    cluster.createTopic('orders', ORDERS_ID, [{ replicas: [1, 2] }, { replicas: [2, 1] }]);
  });

  afterEach(async () => {
    for (const c of coordinators.values()) c.stop();
    coordinators.clear();
    schedulers.clear();
    await cluster.close();
  });

  const coordinator = (id: number): TransactionCoordinator => coordinators.get(id)!;

  function createStateTopic(leader: number): void {
    cluster.createTopic(TRANSACTION_STATE_TOPIC, STATE_ID, [{ replicas: leader === 1 ? [1, 2] : [2, 1] }]);
  }

  /** Waits for the load, running the loader's steps (zero-delay timers) on the broker's manual scheduler. */
  async function active(id: number): Promise<void> {
    await waitFor(`broker ${id} to load partition 0`, () => {
      schedulers.get(id)!.advance(0);
      return coordinator(id).shardStates.get(0) === 'active';
    });
  }

  /** Waits for `cond`, moving the coordinator's timers (marker back-offs, retries) along. */
  async function until(id: number, what: string, cond: () => boolean, stepMs = 0): Promise<void> {
    await waitFor(what, () => {
      schedulers.get(id)!.advance(stepMs);
      return cond();
    });
  }

  /** The control batches in a partition's log on broker `id`. */
  function markersIn(id: number, topic: string, partition: number): Marker[] {
    const log = cluster.node(id).rm.partition(topic, partition)!.log;
    const r = log.read(log.logStartOffset, 1 << 20, { maxOffset: log.logEndOffset });
    return decodeRecordBatches(r.records).filter((b) => (b.header.attributes & CONTROL_FLAG_MASK) !== 0).map((b) => {
      const key = b.records[0]!.key!;
      const value = b.records[0]!.value!;
      const dv = new DataView(value.buffer, value.byteOffset, value.byteLength);
      return { producerId: Number(b.header.producerId), producerEpoch: b.header.producerEpoch, committed: new DataView(key.buffer, key.byteOffset).getInt16(2) === 1, coordinatorEpoch: dv.getInt32(2) };
    });
  }

  async function init(id: number, timeoutMs = 60_000): Promise<{ producerId: number; producerEpoch: number }> {
    const r = await within('init', coordinator(id).initProducerId({ transactionalId: TXN, transactionTimeoutMs: timeoutMs, producerId: -1, producerEpoch: -1 }));
    expect(r.errorCode, r.errorMessage ?? '').to.equal(0);
    return r;
  }

  function add(id: number, p: { producerId: number; producerEpoch: number }, partitions: number[], verifyOnly = false) {
    return within('add', coordinator(id).addPartitionsToTxn({ transactionalId: TXN, ...p, topics: [{ name: 'orders', partitions }], verifyOnly }));
  }

  it('FindCoordinator creates __transaction_state once (compacted, min ISR capped), then names the leader', async () => {
    const first = coordinator(1).findCoordinator({ key: TXN, keyType: 1 });
    expect(first.errorCode).to.equal(Errors.COORDINATOR_NOT_AVAILABLE.code);
    coordinator(1).findCoordinator({ key: TXN, keyType: 1 });
    await waitFor('the create call', () => createCalls.length > 0);
    expect(createCalls).to.have.length(1);
    expect(createCalls[0]).to.deep.include({ name: TRANSACTION_STATE_TOPIC, numPartitions: 50, replicationFactor: 2 });
    expect(createCalls[0]!.configs).to.include({ 'cleanup.policy': 'compact', 'min.insync.replicas': '2', 'retention.ms': '-1' });
    createStateTopic(2);
    expect(coordinator(1).findCoordinator({ key: TXN, keyType: 1 })).to.deep.equal({ errorCode: 0, errorMessage: null, nodeId: 2, url: cluster.node(2).url });
    expect(coordinator(1).findCoordinator({ key: '', keyType: 1 }).errorCode).to.equal(Errors.INVALID_REQUEST.code);
    const elsewhere = await coordinator(1).initProducerId({ transactionalId: TXN, transactionTimeoutMs: 1_000, producerId: -1, producerEpoch: -1 });
    expect(elsewhere.errorCode).to.equal(Errors.NOT_COORDINATOR.code);
  });

  it('commits: Prepare, the answer at epoch + 1, COMMIT markers on every partition (local and remote leader), then CompleteCommit — which survives a reload', async () => {
    createStateTopic(1);
    expect((await coordinator(1).initProducerId({ transactionalId: TXN, transactionTimeoutMs: 1_000, producerId: -1, producerEpoch: -1 })).errorCode).to.equal(Errors.COORDINATOR_LOAD_IN_PROGRESS.code);
    await active(1);
    const p = await init(1);
    expect(p).to.include({ producerId: 1000, producerEpoch: 0 });
    const added = await add(1, p, [0, 1]);
    expect(added.results[0]!.partitions.map((r) => r.errorCode)).to.deep.equal([0, 0]);
    expect(coordinator(1).transaction(TXN)).to.include({ state: 'Ongoing' });
    const ended = await within('end', coordinator(1).endTxn({ transactionalId: TXN, ...p, committed: true, bumpEpoch: true }));
    expect(ended).to.deep.equal({ errorCode: 0, errorMessage: null, producerId: 1000, producerEpoch: 1 });
    await until(1, 'CompleteCommit', () => coordinator(1).transaction(TXN)?.state === 'CompleteCommit');
    const coordinatorEpoch = cluster.registration(TRANSACTION_STATE_TOPIC).leaderEpoch;
    expect(markersIn(1, 'orders', 0)).to.deep.equal([{ producerId: 1000, producerEpoch: 1, committed: true, coordinatorEpoch }]);
    expect(markersIn(2, 'orders', 1), 'written by broker 2, the leader of orders-1').to.deep.equal([{ producerId: 1000, producerEpoch: 1, committed: true, coordinatorEpoch }]);
    // The answer was lost and EndTxn is retried at the old epoch: the same answer, nothing written again.
    expect(await coordinator(1).endTxn({ transactionalId: TXN, ...p, committed: true, bumpEpoch: true })).to.include({ errorCode: 0, producerEpoch: 1 });
    // The next transaction starts at the new epoch; the old one is fenced.
    expect((await add(1, p, [0])).errorCode).to.equal(Errors.PRODUCER_FENCED.code);
    // Broker 2 takes over __transaction_state-0 and finds the same state in the log.
    cluster.changePartition(STATE_ID, 0, { leader: 2 });
    await active(2);
    expect(coordinator(2).transaction(TXN)).to.include({ state: 'CompleteCommit', producerId: 1000, producerEpoch: 1 });
    expect(coordinator(1).shardStates.size).to.equal(0);
  });

  /** A transactional produce of one record to orders-`partition` on its leader; the partition's error code. */
  async function send(p: { producerId: number; producerEpoch: number }, partition: number, sequence: number, value: string): Promise<number> {
    const leader = cluster.registration('orders', partition).leader;
    const batch = encodeRecordBatch({ records: [{ value: Buffer.from(value), timestamp: 1 }], producerId: BigInt(p.producerId), producerEpoch: p.producerEpoch, baseSequence: sequence, isTransactional: true });
    const res = await cluster.node(leader).rm.produce({ acks: -1, timeoutMs: 5_000, transactionalId: TXN, topics: [{ name: 'orders', partitions: [{ partition, records: asBuffer(batch) }] }] });
    return res.topics[0]!.partitions[0]!.errorCode;
  }

  it('with records on the partitions: the LSO waits for the COMMIT markers, and a late write at the ended epoch is fenced', async () => {
    createStateTopic(1);
    await active(1);
    const p = await init(1);
    await add(1, p, [0, 1]);
    expect(await send(p, 0, 0, 'debit')).to.equal(0);
    expect(await send(p, 1, 0, 'credit')).to.equal(0);
    const rm1 = cluster.node(1).rm;
    expect(rm1.lastStableOffset('orders', 0), 'the open transaction holds the LSO at its first offset').to.equal(0);
    const ended = await within('end', coordinator(1).endTxn({ transactionalId: TXN, ...p, committed: true, bumpEpoch: true }));
    await until(1, 'CompleteCommit', () => coordinator(1).transaction(TXN)?.state === 'CompleteCommit');
    await waitFor('the LSO past the marker', () => rm1.lastStableOffset('orders', 0) === 2 && cluster.node(2).rm.lastStableOffset('orders', 1) === 2);
    expect(await send(p, 0, 1, 'late'), 'the marker raised the epoch: the ended transaction cannot be written to').to.equal(Errors.INVALID_PRODUCER_EPOCH.code);
    // The next transaction, at the epoch EndTxn answered, from sequence 0.
    const next = { producerId: ended.producerId, producerEpoch: ended.producerEpoch };
    await add(1, next, [0]);
    expect(await send(next, 0, 0, 'second')).to.equal(0);
  });

  it('InitProducerId over an open transaction aborts it at epoch + 1 (CONCURRENT_TRANSACTIONS meanwhile), then hands out epoch + 2', async () => {
    createStateTopic(1);
    await active(1);
    const old = await init(1);
    await add(1, old, [0, 1]);
    const fencing = await coordinator(1).initProducerId({ transactionalId: TXN, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
    expect(fencing.errorCode).to.equal(Errors.CONCURRENT_TRANSACTIONS.code);
    await until(1, 'CompleteAbort', () => coordinator(1).transaction(TXN)?.state === 'CompleteAbort');
    expect(markersIn(1, 'orders', 0).map((m) => [m.producerEpoch, m.committed])).to.deep.equal([[1, false]]);
    expect(markersIn(2, 'orders', 1).map((m) => [m.producerEpoch, m.committed])).to.deep.equal([[1, false]]);
    const fresh = await init(1);
    expect(fresh).to.deep.equal({ errorCode: 0, errorMessage: null, producerId: old.producerId, producerEpoch: 2 });
    // The zombie's commit is refused.
    expect((await coordinator(1).endTxn({ transactionalId: TXN, ...old, committed: true, bumpEpoch: true })).errorCode).to.equal(Errors.PRODUCER_FENCED.code);
  });

  it('aborts a hung transaction after transaction.timeout.ms with an epoch bump, fencing its producer', async () => {
    createStateTopic(1);
    await active(1);
    const p = await init(1, 15_000);
    await add(1, p, [0]);
    schedulers.get(1)!.advance(CLEANUP_INTERVAL_MS);
    expect(coordinator(1).transaction(TXN)?.state, 'not yet due at 10 s').to.equal('Ongoing');
    expect(Object.fromEntries(coordinator(1).stats().byState)).to.deep.equal({ Ongoing: 1 });
    expect(coordinator(1).stats().timedOutAborts).to.equal(0);
    schedulers.get(1)!.advance(CLEANUP_INTERVAL_MS);
    await until(1, 'the timeout abort', () => coordinator(1).transaction(TXN)?.state === 'CompleteAbort');
    expect(coordinator(1).transaction(TXN)).to.include({ producerEpoch: 1, coordinatorAborted: true });
    expect(coordinator(1).stats()).to.deep.include({ timedOutAborts: 1, completing: 0, partitions: { loading: 0, active: 1 } });
    expect(Object.fromEntries(coordinator(1).stats().byState)).to.deep.equal({ CompleteAbort: 1 });
    expect(markersIn(1, 'orders', 0)).to.deep.equal([{ producerId: p.producerId, producerEpoch: 1, committed: false, coordinatorEpoch: 0 }]);
    expect((await coordinator(1).endTxn({ transactionalId: TXN, ...p, committed: true, bumpEpoch: true })).errorCode).to.equal(Errors.PRODUCER_FENCED.code);
    expect((await add(1, p, [0])).errorCode).to.equal(Errors.PRODUCER_FENCED.code);
  });

  it('a coordinator move after Prepare: the new coordinator writes the markers (at its epoch) and completes the transaction', async () => {
    createStateTopic(1);
    await active(1);
    const p = await init(1);
    await add(1, p, [0, 1]);
    // orders-1 has no leader: broker 1's markers cannot all be written.
    cluster.changePartition(ORDERS_ID, 1, { leader: -1 });
    const ended = await within('end', coordinator(1).endTxn({ transactionalId: TXN, ...p, committed: true, bumpEpoch: true }));
    expect(ended.errorCode).to.equal(0);
    await until(1, 'the marker on orders-0', () => markersIn(1, 'orders', 0).length === 1, 100);
    expect(coordinator(1).transaction(TXN)?.state).to.equal('PrepareCommit');
    // The coordinator moves; then orders-1 gets its leader back.
    cluster.changePartition(STATE_ID, 0, { leader: 2 });
    await active(2);
    expect(coordinator(2).transaction(TXN)?.state).to.equal('PrepareCommit');
    expect((await coordinator(2).initProducerId({ transactionalId: TXN, transactionTimeoutMs: 1_000, producerId: -1, producerEpoch: -1 })).errorCode).to.equal(Errors.CONCURRENT_TRANSACTIONS.code);
    cluster.changePartition(ORDERS_ID, 1, { leader: 2 });
    await until(2, 'CompleteCommit on the new coordinator', () => coordinator(2).transaction(TXN)?.state === 'CompleteCommit', 100);
    const newEpoch = cluster.registration(TRANSACTION_STATE_TOPIC).leaderEpoch;
    expect(newEpoch).to.be.above(0);
    expect(markersIn(2, 'orders', 1)).to.deep.equal([{ producerId: p.producerId, producerEpoch: 1, committed: true, coordinatorEpoch: newEpoch }]);
    // orders-0 has the marker once per coordinator at most, both COMMIT at epoch 1: the transaction ended one way.
    expect(markersIn(1, 'orders', 0).every((m) => m.committed && m.producerEpoch === 1)).to.equal(true);
    // The old coordinator stopped on its own: it no longer coordinates the id.
    schedulers.get(1)!.advance(1_000);
    expect(coordinator(1).transaction(TXN)).to.equal(undefined);
  });

  it('forgets an id idle past transactional.id.expiration.ms (a tombstone the next coordinator reads too); an open one stays', async () => {
    cluster.publish([{ type: 'config', v: 1, resourceType: 'cluster', resourceName: '', name: 'transactional.id.expiration.ms', value: '15000' }]);
    createStateTopic(1);
    await active(1);
    await init(1);
    const open = await within('init', coordinator(1).initProducerId({ transactionalId: 'open-one', transactionTimeoutMs: 900_000, producerId: -1, producerEpoch: -1 }));
    await within('add', coordinator(1).addPartitionsToTxn({ transactionalId: 'open-one', producerId: open.producerId, producerEpoch: open.producerEpoch, topics: [{ name: 'orders', partitions: [0] }], verifyOnly: false }));
    schedulers.get(1)!.advance(CLEANUP_INTERVAL_MS);
    expect(coordinator(1).transaction(TXN), 'idle for 10 s only').to.not.equal(undefined);
    schedulers.get(1)!.advance(CLEANUP_INTERVAL_MS);
    await until(1, 'the id to expire', () => coordinator(1).transaction(TXN) === undefined);
    expect(coordinator(1).describeTransactions({ transactionalIds: [TXN] }).transactionStates[0]!.errorCode).to.equal(Errors.TRANSACTIONAL_ID_NOT_FOUND.code);
    expect(coordinator(1).transaction('open-one')?.state).to.equal('Ongoing');
    cluster.changePartition(STATE_ID, 0, { leader: 2 });
    await active(2);
    expect(coordinator(2).transaction(TXN)).to.equal(undefined);
    expect(coordinator(2).transaction('open-one')?.state).to.equal('Ongoing');
    // A new InitProducerId starts the id over with a fresh producer id.
    expect((await init(2)).producerEpoch).to.equal(0);
  });

  it('a load skips records it cannot read and keeps the rest', async () => {
    createStateTopic(1);
    await active(1);
    const p = await init(1);
    const junk = encodeRecordBatch({ records: [
      { key: Buffer.from('not msgpack \xc1'), value: Buffer.from('x'), timestamp: 1 },
      { key: txnKey('ghost'), value: Buffer.from([0x93, 1, 2, 3]), timestamp: 1 },
      { key: null, value: Buffer.from('no key'), timestamp: 1 },
    ] });
    const res = await cluster.node(1).rm.produce({ acks: -1, timeoutMs: 5_000, topics: [{ name: TRANSACTION_STATE_TOPIC, partitions: [{ partition: 0, records: asBuffer(junk) }] }] });
    expect(res.topics[0]!.partitions[0]!.errorCode).to.equal(0);
    cluster.changePartition(STATE_ID, 0, { leader: 2 });
    await active(2);
    expect(coordinator(2).transaction(TXN)).to.include({ state: 'Empty', producerId: p.producerId });
    expect(coordinator(2).transaction('ghost')).to.equal(undefined);
  });

  it('AddOffsetsToTxn adds the group\'s __consumer_offsets partition, asking for the topic first when there is none', async () => {
    createStateTopic(1);
    await active(1);
    const p = await init(1);
    const missing = await coordinator(1).addOffsetsToTxn({ transactionalId: TXN, ...p, groupId: 'billing' });
    expect(missing.errorCode, 'retriable while the topic is created').to.equal(Errors.COORDINATOR_NOT_AVAILABLE.code);
    expect(offsetsTopicAsks, 'the coordinator asked for __consumer_offsets').to.equal(1);
    cluster.createTopic(CONSUMER_OFFSETS_TOPIC, 'offsets-id', [{ replicas: [1, 2] }, { replicas: [2, 1] }, { replicas: [1, 2] }]);
    expect(await coordinator(1).addOffsetsToTxn({ transactionalId: TXN, ...p, groupId: 'billing' })).to.deep.equal({ errorCode: 0, errorMessage: null });
    expect(coordinator(1).transaction(TXN)!.partitions).to.deep.equal([{ topic: CONSUMER_OFFSETS_TOPIC, partition: coordinatorPartition('billing', 3) }]);
  });

  it('refuses partitions that do not exist, and answers requests with a write in flight CONCURRENT_TRANSACTIONS', async () => {
    createStateTopic(1);
    await active(1);
    const p = await init(1);
    const res = await coordinator(1).addPartitionsToTxn({ transactionalId: TXN, ...p, topics: [{ name: 'orders', partitions: [0, 9] }, { name: 'nope', partitions: [0] }], verifyOnly: false });
    expect(res.results.map((t) => t.partitions.map((r) => r.errorCode))).to.deep.equal([[Errors.OPERATION_NOT_ATTEMPTED.code, Errors.UNKNOWN_TOPIC_OR_PARTITION.code], [Errors.UNKNOWN_TOPIC_OR_PARTITION.code]]);
    expect(coordinator(1).transaction(TXN)?.state).to.equal('Empty');
    const a = coordinator(1).addPartitionsToTxn({ transactionalId: TXN, ...p, topics: [{ name: 'orders', partitions: [0] }], verifyOnly: false });
    const b = await coordinator(1).endTxn({ transactionalId: TXN, ...p, committed: true, bumpEpoch: true });
    expect(b.errorCode).to.equal(Errors.CONCURRENT_TRANSACTIONS.code);
    expect((await a).errorCode).to.equal(0);
  });

  it(`${WAITING} a request meeting the previous transaction's markers still being written waits for them and is served; past the wait it is refused`, async () => {
    createStateTopic(1);
    await active(1);
    const p = await init(1);
    await add(1, p, [0, 1]);
    // orders-1 has no leader: the completion cannot finish.
    cluster.changePartition(ORDERS_ID, 1, { leader: -1 });
    expect((await within('end', coordinator(1).endTxn({ transactionalId: TXN, ...p, committed: true, bumpEpoch: true }))).errorCode).to.equal(0);
    const next = { producerId: p.producerId, producerEpoch: p.producerEpoch + 1 };
    // Past the wait (5 s of the coordinator's clock): CONCURRENT_TRANSACTIONS, as Kafka answers at once.
    let late: number | undefined;
    void add(1, next, [0]).then((r) => (late = r.results[0]!.partitions[0]!.errorCode));
    await until(1, 'the refusal after the wait', () => late !== undefined, 500);
    expect(late).to.equal(Errors.CONCURRENT_TRANSACTIONS.code);
    expect(coordinator(1).transaction(TXN)?.state).to.equal('PrepareCommit');
    // Within it: the request waits, the leader comes back, the markers land, and the request is served.
    let served: number | undefined;
    void add(1, next, [0]).then((r) => (served = r.results[0]!.partitions[0]!.errorCode));
    schedulers.get(1)!.advance(100);
    expect(served).to.equal(undefined);
    cluster.changePartition(ORDERS_ID, 1, { leader: 1 });
    await until(1, 'the waiting request served', () => served !== undefined, 100);
    expect(served).to.equal(0);
    expect(coordinator(1).transaction(TXN)?.state).to.equal('Ongoing');
    expect(markersIn(1, 'orders', 1)).to.have.length(1);
  });

  it('the KIP-890 verifier: yes only for a partition in the open transaction, asked locally or of the remote coordinator', async () => {
    createStateTopic(2);
    await active(2);
    const p = await init(2);
    await add(2, p, [0]);
    const local = new TransactionVerifier(2, coordinator(2), calls);
    const remote = new TransactionVerifier(1, coordinator(1), calls);
    for (const v of [local, remote]) {
      expect(await v.verify({ transactionalId: TXN, ...p, topic: 'orders', partition: 0 })).to.equal(null);
      expect((await v.verify({ transactionalId: TXN, ...p, topic: 'orders', partition: 1 }))!.error.name).to.equal('INVALID_TXN_STATE');
      expect((await v.verify({ transactionalId: TXN, producerId: p.producerId, producerEpoch: 5, topic: 'orders', partition: 0 }))!.error.name).to.equal('PRODUCER_FENCED');
      expect((await v.verify({ transactionalId: 'other', ...p, topic: 'orders', partition: 0 }))!.error.name).to.equal('INVALID_PRODUCER_ID_MAPPING');
    }
    await cluster.stopNode(2);
    expect((await remote.verify({ transactionalId: TXN, ...p, topic: 'orders', partition: 0 }))!.error.name, 'an unreachable coordinator is a retriable no').to.equal('COORDINATOR_NOT_AVAILABLE');
  });

  it('DescribeTransactions and ListTransactions', async () => {
    createStateTopic(1);
    await active(1);
    const p = await init(1, 30_000);
    await add(1, p, [1, 0]);
    const [d] = coordinator(1).describeTransactions({ transactionalIds: [TXN] }).transactionStates;
    expect(d).to.deep.include({ errorCode: 0, transactionalId: TXN, transactionState: 'Ongoing', transactionTimeoutMs: 30_000, producerId: p.producerId, producerEpoch: 0 });
    expect(d!.topics).to.deep.equal([{ name: 'orders', partitions: [0, 1] }]);
    expect(d!.transactionStartTimeMs).to.equal(Math.floor(schedulers.get(1)!.clock.nowMs()));
    expect(coordinator(1).describeTransactions({ transactionalIds: ['ghost'] }).transactionStates[0]!.errorCode).to.equal(Errors.TRANSACTIONAL_ID_NOT_FOUND.code);
    expect(coordinator(2).describeTransactions({ transactionalIds: [TXN] }).transactionStates[0]!.errorCode).to.equal(Errors.NOT_COORDINATOR.code);
    const all = coordinator(1).listTransactions({ stateFilters: [], producerIdFilters: [], durationFilterMs: -1 });
    expect(all).to.deep.equal({ errorCode: 0, errorMessage: null, unknownStateFilters: [], transactionStates: [{ transactionalId: TXN, producerId: p.producerId, transactionState: 'Ongoing' }] });
    expect(coordinator(1).listTransactions({ stateFilters: ['Empty', 'Bogus'], producerIdFilters: [], durationFilterMs: -1 })).to.deep.include({ unknownStateFilters: ['Bogus'], transactionStates: [] });
    expect(coordinator(1).listTransactions({ stateFilters: [], producerIdFilters: [p.producerId + 1], durationFilterMs: -1 }).transactionStates).to.deep.equal([]);
    expect(coordinator(1).listTransactions({ stateFilters: [], producerIdFilters: [], durationFilterMs: 5_000 }).transactionStates).to.deep.equal([]);
    schedulers.get(1)!.advance(6_000);
    expect(coordinator(1).listTransactions({ stateFilters: [], producerIdFilters: [], durationFilterMs: 5_000 }).transactionStates).to.have.length(1);
  });
});
