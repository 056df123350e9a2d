// TxnOffsetCommit on the group coordinator over real replica managers and
// logs (the replication tests' TestCluster; the test plays the controller and
// the transaction coordinator: it knows which partitions each producer's open
// transaction holds, answers the coordinator's verification from that, and
// ends a transaction by asking the offsets partition's leader to write the
// marker, as a transaction coordinator does). Covered: offsets pending until
// the COMMIT marker and dropped by ABORT; OffsetFetch requireStable; the
// verification and KIP-447 group checks refusing before anything is written;
// a late write of an ended transaction fenced by the epoch its marker raised;
// a marker landing during the verification making the client confirm again;
// and a reload — after a restart of the leader and after failover — that
// finds committed, aborted and still open transactions as they were; and how
// the WebSocket API reads OffsetFetch's requireStable.

import { expect } from 'chai';
import { TestCluster, waitFor, within } from '../replication/replica-harness.js';
import { GroupCoordinator } from '../../src/groups/coordinator.js';
import { CONSUMER_OFFSETS_TOPIC, parseOffsetFetchRequest, type JoinGroupResponse, type OffsetFetchPartitionResponse } from '../../src/protocol/apis/groups.js';
import type { TxnOffsetCommitRequest } from '../../src/protocol/apis/transactions.js';
import type { TxnRefusal, TxnVerifier, TxnVerifyRequest } from '../../src/replication/txn-seams.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { Errors } from '../../src/util/errors.js';
import { SeededRng } from '../../src/util/rng.js';
import { silentLogger } from '../../src/util/logger.js';

const OFFSETS_ID = 'offsets-topic-id';
const ORDERS_ID = 'orders-topic-id';
const GROUP = 'billing';
const CLIENT = { clientId: 'test', clientHost: '/127.0.0.1' };
const COMMIT_TIMEOUT_MS = 2_000;

/** The transaction coordinator as this test plays it: each producer's open transaction and its epoch. */
class TestTransactions implements TxnVerifier {
  readonly open = new Map<number, { transactionalId: string; epoch: number; partitions: Set<string> }>();
  readonly epochs = new Map<number, number>();
  readonly asked: TxnVerifyRequest[] = [];
  /** While set, verify() answers only once it resolves (a slow or remote coordinator). */
  gate: Promise<void> | null = null;

  begin(producerId: number, epoch: number, partitions: Array<[string, number]>): void {
    this.epochs.set(producerId, epoch);
    this.open.set(producerId, { transactionalId: `tx-${producerId}`, epoch, partitions: new Set(partitions.map(([t, p]) => `${t}-${p}`)) });
  }

  async verify(req: TxnVerifyRequest): Promise<TxnRefusal | null> {
    this.asked.push(req);
    const answer = this.answer(req);
    if (this.gate) await this.gate;
    return answer;
  }

  private answer(req: TxnVerifyRequest): Promise<TxnRefusal | null> {
    const epoch = this.epochs.get(req.producerId);
    if (epoch !== undefined && req.producerEpoch < epoch) return Promise.resolve({ error: Errors.PRODUCER_FENCED, message: `epoch ${req.producerEpoch} < ${epoch}` });
    const t = this.open.get(req.producerId);
    if (!t || t.transactionalId !== req.transactionalId || !t.partitions.has(`${req.topic}-${req.partition}`)) {
      return Promise.resolve({ error: Errors.INVALID_TXN_STATE, message: `${req.topic}-${req.partition} is not in an open transaction of ${req.producerId}` });
    }
    return Promise.resolve(null);
  }
}

describe('transactional offset commits (in-process, real replica managers)', function () {
  this.timeout(60_000);
  let cluster: TestCluster;
  let txns: TestTransactions;
  const coordinators = new Map<number, GroupCoordinator>();
  const schedulers = new Map<number, ManualScheduler>();

  function startCoordinator(id: number): GroupCoordinator {
    const scheduler = new ManualScheduler();
    schedulers.set(id, scheduler);
    const c = new GroupCoordinator({
      brokerId: id, replicas: cluster.node(id).rm, image: () => cluster.image, clock: scheduler.clock, scheduler, rng: new SeededRng(id), logger: silentLogger,
      admin: () => Promise.reject(new Error('the test creates the topics')),
      limits: { commitTimeoutMs: COMMIT_TIMEOUT_MS },
      txnVerifier: () => txns,
    });
    c.start();
    coordinators.set(id, c);
    return c;
  }

  beforeEach(async () => {
    txns = new TestTransactions();
    cluster = await TestCluster.start([1, 2], { replicaLagTimeMaxMs: 60_000 });
    for (const id of [1, 2]) startCoordinator(id);
    cluster.createTopic('orders', ORDERS_ID, [{ replicas: [1, 2] }, { replicas: [2, 1] }]);
    cluster.createTopic(CONSUMER_OFFSETS_TOPIC, OFFSETS_ID, [{ replicas: [1, 2] }]);
    await active(1);
  });

  afterEach(async () => {
    for (const c of coordinators.values()) c.stop();
    coordinators.clear();
    schedulers.clear();
    await cluster.close();
  });

  const coordinator = (id: number): GroupCoordinator => coordinators.get(id)!;

  async function active(id: number): Promise<void> {
    await waitFor(`broker ${id} to load ${CONSUMER_OFFSETS_TOPIC}-0`, () => {
      schedulers.get(id)!.advance(0);
      return coordinator(id).shardStates.get(0) === 'active';
    });
  }

  async function stableMember(id: number): Promise<{ memberId: string; generationId: number }> {
    const c = coordinator(id);
    const join = { groupId: GROUP, sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 10_000, groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.from('sub') }] };
    const first = (await c.joinGroup({ ...join, memberId: '' }, CLIENT)) as JoinGroupResponse;
    const j = await within('join', Promise.resolve(c.joinGroup({ ...join, memberId: first.memberId }, CLIENT)));
    const s = await within('sync', Promise.resolve(c.syncGroup({ groupId: GROUP, generationId: j.generationId, memberId: j.memberId, groupInstanceId: null, assignments: [{ memberId: j.memberId, assignment: Buffer.from('orders:0,1') }] })));
    expect(s.errorCode, s.errorMessage ?? '').to.equal(0);
    return { memberId: j.memberId, generationId: j.generationId };
  }

  function txnCommit(producerId: number, epoch: number, offsets: Array<[number, number]>, member: { memberId: string; generationId: number } = { memberId: '', generationId: -1 }): TxnOffsetCommitRequest {
    return {
      transactionalId: `tx-${producerId}`, groupId: GROUP, producerId, producerEpoch: epoch, generationId: member.generationId, memberId: member.memberId, groupInstanceId: null,
      topics: [{ name: 'orders', partitions: offsets.map(([partition, committedOffset]) => ({ partition, committedOffset, committedLeaderEpoch: 0, metadata: `txn ${producerId}` })) }],
    };
  }

  async function commitTxn(id: number, req: TxnOffsetCommitRequest): Promise<number[]> {
    const res = await within('TxnOffsetCommit', coordinator(id).txnOffsetCommit(req));
    return res.topics.flatMap((t) => t.partitions.map((p) => p.errorCode));
  }

  /**
   * Ends producer `producerId`'s transaction as its coordinator does: the marker on the offsets
   * partition's leader, at epoch + 1 with bumpEpoch (the Sluice client), at the same epoch without.
   */
  async function endTxn(leader: number, producerId: number, committed: boolean, bumpEpoch = true): Promise<void> {
    const t = txns.open.get(producerId)!;
    txns.open.delete(producerId);
    const epoch = bumpEpoch ? t.epoch + 1 : t.epoch;
    txns.epochs.set(producerId, epoch);
    const res = await within('WriteTxnMarkers', Promise.resolve(cluster.node(leader).rm.writeTxnMarkers({
      markers: [{ producerId, producerEpoch: epoch, transactionResult: committed, coordinatorEpoch: 0, topics: [{ name: CONSUMER_OFFSETS_TOPIC, partitions: [0] }] }],
    })));
    expect(res.markers[0]!.topics[0]!.partitions[0]!.errorCode, res.markers[0]!.topics[0]!.partitions[0]!.errorMessage ?? '').to.equal(0);
  }

  function fetched(id: number, requireStable: boolean): Array<[number, number]> {
    const res = coordinator(id).offsetFetch({ groupId: GROUP, topics: [{ name: 'orders', partitions: [0, 1] }], requireStable });
    expect(res.errorCode).to.equal(0);
    return res.topics[0]!.partitions.map((p: OffsetFetchPartitionResponse) => [p.committedOffset, p.errorCode]);
  }

  const UNSTABLE = Errors.UNSTABLE_OFFSET_COMMIT.code;
  const logEnd = (id: number): number => cluster.node(id).rm.hostedPartitions.find((p) => p.topic === CONSUMER_OFFSETS_TOPIC)!.log.logEndOffset;

  it('keeps a transaction\'s offsets pending until its COMMIT marker, then makes them committed', async () => {
    const member = await stableMember(1);
    const plain = await coordinator(1).offsetCommit({ groupId: GROUP, ...member, groupInstanceId: null, topics: [{ name: 'orders', partitions: [{ partition: 0, committedOffset: 5, committedLeaderEpoch: 0, metadata: null }] }] });
    expect(plain.topics[0]!.partitions[0]!.errorCode).to.equal(0);
    txns.begin(1000, 0, [[CONSUMER_OFFSETS_TOPIC, 0]]);
    expect(await commitTxn(1, txnCommit(1000, 0, [[0, 10], [1, 20]], member))).to.deep.equal([0, 0]);
    expect(txns.asked.map((a) => [a.topic, a.partition, a.producerId, a.producerEpoch])).to.deep.equal([[CONSUMER_OFFSETS_TOPIC, 0, 1000, 0]]);
    expect(fetched(1, false), 'the last committed offsets meanwhile').to.deep.equal([[5, 0], [-1, 0]]);
    expect(fetched(1, true)).to.deep.equal([[-1, UNSTABLE], [-1, UNSTABLE]]);
    // The group cannot be deleted under the open transaction (its offsets would come back).
    expect(coordinator(1).leaveGroup({ groupId: GROUP, members: [{ memberId: member.memberId, groupInstanceId: null }] }).members[0]!.errorCode).to.equal(0);
    expect((await coordinator(1).deleteGroups({ groups: [GROUP] })).results[0]!.errorCode).to.equal(Errors.NON_EMPTY_GROUP.code);

    await endTxn(1, 1000, true);
    await waitFor('the COMMIT marker to make the offsets committed', () => fetched(1, true)[0]![0] === 10);
    expect(fetched(1, true)).to.deep.equal([[10, 0], [20, 0]]);
    const meta = coordinator(1).offsetFetch({ groupId: GROUP, topics: null }).topics[0]!.partitions.map((p) => p.metadata);
    expect(meta).to.deep.equal(['txn 1000', 'txn 1000']);
  });

  it('drops an aborted transaction\'s offsets, and fences a late write of it by the epoch the marker raised', async () => {
    txns.begin(2000, 3, [[CONSUMER_OFFSETS_TOPIC, 0]]);
    expect(await commitTxn(1, txnCommit(2000, 3, [[0, 7]]))).to.deep.equal([0]);
    expect(fetched(1, true)[0]).to.deep.equal([-1, UNSTABLE]);
    await endTxn(1, 2000, false);
    await waitFor('the ABORT marker to end the transaction', () => fetched(1, true)[0]![1] === 0);
    expect(fetched(1, true)).to.deep.equal([[-1, 0], [-1, 0]]);
    expect(coordinator(1).listGroups().groups, 'nothing is left of a group only the aborted transaction wrote').to.deep.equal([]);

    // A zombie of the ended transaction that the (lagging) verifier still lets through: the log refuses its epoch.
    txns.begin(2000, 3, [[CONSUMER_OFFSETS_TOPIC, 0]]);
    txns.epochs.set(2000, 3);
    const end = logEnd(1);
    expect(await commitTxn(1, txnCommit(2000, 3, [[0, 8]]))).to.deep.equal([Errors.INVALID_PRODUCER_EPOCH.code]);
    expect(logEnd(1)).to.equal(end);
    expect(fetched(1, true)).to.deep.equal([[-1, 0], [-1, 0]]);
  });

  it('has the client confirm again when a marker of its producer lands while its transaction is being confirmed', async () => {
    txns.begin(4000, 0, [[CONSUMER_OFFSETS_TOPIC, 0]]);
    let release = (): void => undefined;
    txns.gate = new Promise<void>((resolve) => { release = resolve; });
    const racing = coordinator(1).txnOffsetCommit(txnCommit(4000, 0, [[0, 44]]));
    await waitFor('the verification to start', () => txns.asked.length === 1);
    expect(fetched(1, true)[0], 'unstable from the verification on').to.deep.equal([-1, UNSTABLE]);
    // A client without bumpEpoch (transaction version 1) ends the transaction at once: the marker keeps the epoch.
    const heard = new Promise<void>((resolve) => {
      const off = cluster.node(1).rm.onTxnMarker(() => { off(); resolve(); });
    });
    await endTxn(1, 4000, true, false);
    await within('the marker reported', heard);
    const end = logEnd(1);
    release();
    const res = await within('the racing TxnOffsetCommit', racing);
    expect(res.topics[0]!.partitions[0]!.errorCode, 'retriable: confirm again').to.equal(Errors.COORDINATOR_NOT_AVAILABLE.code);
    expect(logEnd(1), 'nothing written into the ended transaction').to.equal(end);
    expect(fetched(1, true)).to.deep.equal([[-1, 0], [-1, 0]]);
    txns.gate = null;
    expect(await commitTxn(1, txnCommit(4000, 0, [[0, 44]])), 'confirmed again: the transaction is over').to.deep.equal([Errors.INVALID_TXN_STATE.code]);
  });

  it('refuses before writing: no transaction, a fenced producer, no transaction coordinator, stale group metadata', async () => {
    const member = await stableMember(1);
    const end = logEnd(1);
    expect(await commitTxn(1, txnCommit(3000, 0, [[0, 1]], member)), 'the partition is not in a transaction').to.deep.equal([Errors.INVALID_TXN_STATE.code]);
    txns.begin(3000, 2, [[CONSUMER_OFFSETS_TOPIC, 0]]);
    expect(await commitTxn(1, txnCommit(3000, 1, [[0, 1]], member)), 'an older epoch').to.deep.equal([Errors.PRODUCER_FENCED.code]);
    expect(await commitTxn(1, txnCommit(3000, 2, [[0, 1]], { memberId: member.memberId, generationId: member.generationId + 1 }))).to.deep.equal([Errors.ILLEGAL_GENERATION.code]);
    expect(await commitTxn(1, txnCommit(3000, 2, [[0, 1]], { memberId: 'stranger', generationId: member.generationId }))).to.deep.equal([Errors.UNKNOWN_MEMBER_ID.code]);
    expect(await commitTxn(1, { ...txnCommit(3000, 2, [[0, 1]]), groupId: 'no-such-group', generationId: 4, memberId: 'm' })).to.deep.equal([Errors.ILLEGAL_GENERATION.code]);
    expect(await commitTxn(2, txnCommit(3000, 2, [[0, 1]], member)), 'broker 2 does not lead the partition').to.deep.equal([Errors.NOT_COORDINATOR.code]);
    const mixed = await commitTxn(1, txnCommit(3000, 2, [[9, 1], [0, -4]], member));
    expect(mixed, 'no such partition; a negative offset').to.deep.equal([Errors.UNKNOWN_TOPIC_OR_PARTITION.code, Errors.INVALID_REQUEST.code]);
    expect(logEnd(1), 'nothing was written').to.equal(end);
    expect(fetched(1, true), 'nothing is pending').to.deep.equal([[-1, 0], [-1, 0]]);

    const without = new GroupCoordinator({
      brokerId: 1, replicas: cluster.node(1).rm, image: () => cluster.image, clock: schedulers.get(1)!.clock, scheduler: schedulers.get(1)!,
      rng: new SeededRng(9), logger: silentLogger, admin: () => Promise.reject(new Error('none')),
    });
    without.start();
    try {
      await waitFor('the second coordinator to load', () => {
        schedulers.get(1)!.advance(0);
        return without.shardStates.get(0) === 'active';
      });
      expect((await without.txnOffsetCommit(txnCommit(3000, 2, [[0, 1]]))).topics[0]!.partitions[0]!.errorCode).to.equal(Errors.COORDINATOR_NOT_AVAILABLE.code);
    } finally {
      without.stop();
    }
    // A producer that names no member (pre-KIP-447) is taken even though the group has one.
    expect(await commitTxn(1, txnCommit(3000, 2, [[0, 1]]))).to.deep.equal([0]);
  });

  /** Producer 7 committed, 8 aborted, 9 still open — plus a plain commit after 7's record for partition 1. */
  async function threeTransactions(): Promise<void> {
    txns.begin(7, 0, [[CONSUMER_OFFSETS_TOPIC, 0]]);
    txns.begin(8, 0, [[CONSUMER_OFFSETS_TOPIC, 0]]);
    txns.begin(9, 0, [[CONSUMER_OFFSETS_TOPIC, 0]]);
    expect(await commitTxn(1, txnCommit(7, 0, [[0, 70], [1, 71]]))).to.deep.equal([0, 0]);
    expect(await commitTxn(1, txnCommit(8, 0, [[0, 80]]))).to.deep.equal([0]);
    const plain = await coordinator(1).offsetCommit({ groupId: GROUP, generationId: -1, memberId: '', groupInstanceId: null, topics: [{ name: 'orders', partitions: [{ partition: 1, committedOffset: 3, committedLeaderEpoch: 0, metadata: null }] }] });
    expect(plain.topics[0]!.partitions[0]!.errorCode).to.equal(0);
    await endTxn(1, 7, true);
    await endTxn(1, 8, false);
    expect(await commitTxn(1, { ...txnCommit(9, 0, [[0, 90]]), groupId: 'only-open' })).to.deep.equal([0]);
    expect(await commitTxn(1, txnCommit(9, 0, [[0, 90]]))).to.deep.equal([0]);
    await waitFor('both markers applied', () => fetched(1, false)[0]![0] === 70);
  }

  function expectThreeTransactions(id: number): void {
    expect(fetched(id, false), 'committed 7 (partition 0), the later plain commit (partition 1)').to.deep.equal([[70, 0], [3, 0]]);
    expect(fetched(id, true), 'partition 0 has 9\'s open transaction').to.deep.equal([[-1, UNSTABLE], [3, 0]]);
    expect(coordinator(id).listGroups().groups.map((g) => [g.groupId, g.groupState]), 'a group only the open transaction wrote to').to.deep.equal([[GROUP, 'Empty'], ['only-open', 'Empty']]);
  }

  it('reloads committed, aborted and open transactions after the leader restarts, and the open one then ends', async () => {
    await threeTransactions();
    expectThreeTransactions(1);
    coordinator(1).stop();
    await cluster.stopNode(1);
    await cluster.startNode(1);
    startCoordinator(1);
    await active(1);
    expectThreeTransactions(1);
    await endTxn(1, 9, true);
    await waitFor('the open transaction to commit after the reload', () => fetched(1, true)[0]![0] === 90);
    expect(fetched(1, true)).to.deep.equal([[90, 0], [3, 0]]);
    expect(coordinator(1).offsetFetch({ groupId: 'only-open', topics: null, requireStable: true }).topics[0]!.partitions[0]!.committedOffset).to.equal(90);
  });

  it('a new leader loads the open transaction pending and ends it by the marker it writes', async () => {
    await threeTransactions();
    await waitFor('broker 2 to replicate the offsets partition', () => logEnd(2) === logEnd(1));
    cluster.changePartition(OFFSETS_ID, 0, { leader: 2 });
    await active(2);
    expectThreeTransactions(2);
    await endTxn(2, 9, false);
    await waitFor('the open transaction to abort on the new leader', () => fetched(2, true)[0]![1] === 0);
    expect(fetched(2, true)).to.deep.equal([[70, 0], [3, 0]]);
    expect(coordinator(2).listGroups().groups.map((g) => g.groupId), 'the aborted transaction leaves nothing of the group it alone wrote to').to.deep.equal([GROUP]);
  });
});

describe('OffsetFetch requireStable on the WebSocket API', () => {
  it('is false unless the body says true, and must be a boolean', () => {
    expect(parseOffsetFetchRequest({ groupId: 'g', topics: null }).requireStable).to.equal(false);
    expect(parseOffsetFetchRequest({ groupId: 'g', topics: null, requireStable: null }).requireStable).to.equal(false);
    expect(parseOffsetFetchRequest({ groupId: 'g', topics: null, requireStable: true }).requireStable).to.equal(true);
    expect(() => parseOffsetFetchRequest({ groupId: 'g', topics: null, requireStable: 1 })).to.throw(/requireStable must be a boolean/);
  });
});
