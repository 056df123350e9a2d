// The coordinator shell in-process, on real replica managers and logs (the
// replication tests' TestCluster, where the test plays the controller): a
// group joins, syncs and commits through broker 1; leadership of its
// __consumer_offsets partition moves to broker 2, which loads the group and
// its offsets from the replicated log while broker 1 lets go. Also: commits
// are answered only once replicated, pending joins are released on unload,
// deletion writes tombstones, and FindCoordinator's answers. The
// coordinators' clocks and timers are manual (each broker its own
// ManualScheduler), so session expiry is tested to the millisecond without
// waiting; the replica managers under them run on real time.

import { expect } from 'chai';
import { TestCluster, waitFor, within } from '../replication/replica-harness.js';
import { GroupCoordinator } from '../../src/groups/coordinator.js';
import { coordinatorPartition } from '../../src/groups/placement.js';
import { CONSUMER_OFFSETS_TOPIC, type JoinGroupResponse, type OffsetCommitRequest } from '../../src/protocol/apis/groups.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { Errors } from '../../src/util/errors.js';
import { SeededRng } from '../../src/util/rng.js';
import { silentLogger } from '../../src/util/logger.js';

const OFFSETS_ID = 'offsets-topic-id';
const ORDERS_ID = 'orders-topic-id';
const GROUP = 'billing';
const CLIENT = { clientId: 'test', clientHost: '/127.0.0.1' };
const COMMIT_TIMEOUT_MS = 500;

interface Created { readonly name: string; readonly numPartitions: number; readonly replicationFactor: number }

describe('group coordinator (in-process, real replica managers)', function () {
  this.timeout(30_000);
  let cluster: TestCluster;
  const coordinators = new Map<number, GroupCoordinator>();
  const schedulers = new Map<number, ManualScheduler>();
  const createCalls: Created[] = [];

  beforeEach(async () => {
    cluster = await TestCluster.start([1, 2], { replicaLagTimeMaxMs: 60_000 });
    createCalls.length = 0;
    for (const id of [1, 2]) {
      const scheduler = new ManualScheduler();
      schedulers.set(id, scheduler);
      const c = new GroupCoordinator({
        brokerId: id, replicas: cluster.node(id).rm, image: () => cluster.image, clock: scheduler.clock, scheduler, rng: new SeededRng(id), logger: silentLogger,
        admin: async <T,>(api: string, body: Record<string, unknown>): Promise<T> => {
          expect(api).to.equal('createTopics');
          createCalls.push((body.topics as Created[])[0]!);
          return { topics: [{ errorCode: 0, errorMessage: null }] } as T;
        },
        limits: { commitTimeoutMs: COMMIT_TIMEOUT_MS },
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

  const coordinator = (id: number): GroupCoordinator => coordinators.get(id)!;

  function createOffsetsTopic(leader: number): void {
    cluster.createTopic(CONSUMER_OFFSETS_TOPIC, OFFSETS_ID, [{ replicas: leader === 1 ? [1, 2] : [2, 1] }]);
  }

  /** Waits for the load, running the loader's steps (zero-delay timers) on the broker's manual scheduler. */
  async function active(id: number): Promise<void> {
    await waitFor(`broker ${id} to load partition 0`, () => {
      schedulers.get(id)!.advance(0);
      return coordinator(id).shardStates.get(0) === 'active';
    });
  }

  /** A one-member generation through the coordinator on `id`, committed and Stable. */
  async function stableMember(id: number): Promise<{ memberId: string; generationId: number }> {
    const c = coordinator(id);
    const join = { groupId: GROUP, sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 10_000, groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.from('sub') }] };
    const first = (await c.joinGroup({ ...join, memberId: '' }, CLIENT)) as JoinGroupResponse;
    expect(first.errorCode).to.equal(Errors.MEMBER_ID_REQUIRED.code);
    const j = await within('join', Promise.resolve(c.joinGroup({ ...join, memberId: first.memberId }, CLIENT)));
    expect(j).to.include({ errorCode: 0, generationId: 1, leader: first.memberId });
    const s = await within('sync', Promise.resolve(c.syncGroup({ groupId: GROUP, generationId: 1, memberId: j.memberId, groupInstanceId: null, assignments: [{ memberId: j.memberId, assignment: Buffer.from('orders:0,1') }] })));
    expect(s.errorCode, s.errorMessage ?? '').to.equal(0);
    return { memberId: j.memberId, generationId: 1 };
  }

  function commit(memberId: string, generationId: number, offsets: Array<[number, number]>): OffsetCommitRequest {
    return {
      groupId: GROUP, generationId, memberId, groupInstanceId: null,
      topics: [{ name: 'orders', partitions: offsets.map(([partition, committedOffset]) => ({ partition, committedOffset, committedLeaderEpoch: 0, metadata: `at ${committedOffset}` })) }],
    };
  }

  it('FindCoordinator creates __consumer_offsets once, then names the leader of the group\'s partition', async () => {
    const first = coordinator(1).findCoordinator({ key: GROUP });
    expect(first.errorCode).to.equal(Errors.COORDINATOR_NOT_AVAILABLE.code);
    expect(createCalls).to.have.length(1);
    expect(createCalls[0]).to.include({ name: CONSUMER_OFFSETS_TOPIC, numPartitions: 50, replicationFactor: 2 });
    createOffsetsTopic(2);
    expect(coordinatorPartition(GROUP, 1)).to.equal(0);
    const found = coordinator(1).findCoordinator({ key: GROUP });
    expect(found).to.deep.equal({ errorCode: 0, errorMessage: null, nodeId: 2, url: cluster.node(2).url });
    expect(coordinator(1).findCoordinator({ key: '' }).errorCode).to.equal(Errors.INVALID_GROUP_ID.code);
  });

  it('serves a group, and after failover the new leader has its members and committed offsets', async () => {
    createOffsetsTopic(1);
    await active(1);
    expect(coordinator(2).heartbeat({ groupId: GROUP, generationId: 1, memberId: 'x', groupInstanceId: null }).errorCode).to.equal(Errors.NOT_COORDINATOR.code);
    const { memberId, generationId } = await stableMember(1);
    const res = await coordinator(1).offsetCommit(commit(memberId, generationId, [[0, 10], [1, 20]]));
    expect(res.topics[0]!.partitions.map((p) => p.errorCode)).to.deep.equal([0, 0]);
    // Stale generations and unknown partitions are refused per partition.
    const stale = await coordinator(1).offsetCommit(commit(memberId, 0, [[0, 99]]));
    expect(stale.topics[0]!.partitions[0]!.errorCode).to.equal(Errors.ILLEGAL_GENERATION.code);
    const unknown = await coordinator(1).offsetCommit(commit(memberId, generationId, [[7, 1]]));
    expect(unknown.topics[0]!.partitions[0]!.errorCode).to.equal(Errors.UNKNOWN_TOPIC_OR_PARTITION.code);

    cluster.changePartition(OFFSETS_ID, 0, { leader: 2 });
    expect(coordinator(2).heartbeat({ groupId: GROUP, generationId, memberId, groupInstanceId: null }).errorCode).to.equal(Errors.COORDINATOR_LOAD_IN_PROGRESS.code);
    expect(coordinator(1).heartbeat({ groupId: GROUP, generationId, memberId, groupInstanceId: null }).errorCode).to.equal(Errors.NOT_COORDINATOR.code);
    await active(2);
    expect(coordinator(2).heartbeat({ groupId: GROUP, generationId, memberId, groupInstanceId: null }).errorCode, 'same member, same generation').to.equal(0);
    const fetched = coordinator(2).offsetFetch({ groupId: GROUP, topics: null });
    expect(fetched.topics).to.deep.equal([{
      name: 'orders',
      partitions: [
        { partition: 0, committedOffset: 10, committedLeaderEpoch: 0, metadata: 'at 10', errorCode: 0, errorMessage: null },
        { partition: 1, committedOffset: 20, committedLeaderEpoch: 0, metadata: 'at 20', errorCode: 0, errorMessage: null },
      ],
    }]);
    const described = coordinator(2).describeGroups({ groups: [GROUP] }).groups[0]!;
    expect(described).to.include({ groupState: 'Stable', protocolName: 'range' });
    expect(Buffer.from(described.members[0]!.assignment).toString()).to.equal('orders:0,1');
  });

  it('expires a member whose heartbeats stop at its session deadline on the coordinator clock; the other rejoins alone', async () => {
    createOffsetsTopic(1);
    await active(1);
    const c = coordinator(1);
    const scheduler = schedulers.get(1)!;
    const SESSION_A_MS = 30_000;
    const SESSION_B_MS = 6_000;
    const join = (memberId: string, sessionTimeoutMs: number) => ({
      groupId: GROUP, memberId, sessionTimeoutMs, rebalanceTimeoutMs: 10_000, groupInstanceId: null, protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.from('sub') }],
    });
    const idA = ((await c.joinGroup(join('', SESSION_A_MS), CLIENT)) as JoinGroupResponse).memberId;
    const idB = ((await c.joinGroup(join('', SESSION_B_MS), CLIENT)) as JoinGroupResponse).memberId;
    const [ja, jb] = await within('both joins', Promise.all([c.joinGroup(join(idA, SESSION_A_MS), CLIENT), c.joinGroup(join(idB, SESSION_B_MS), CLIENT)]));
    expect([ja.generationId, jb.generationId]).to.deep.equal([1, 1]);
    const leader = ja.leader === idA ? idA : idB;
    const follower = leader === idA ? idB : idA;
    const followerSync = Promise.resolve(c.syncGroup({ groupId: GROUP, generationId: 1, memberId: follower, groupInstanceId: null, assignments: [] }));
    const leaderSync = await within('leader sync', Promise.resolve(c.syncGroup({
      groupId: GROUP, generationId: 1, memberId: leader, groupInstanceId: null,
      assignments: [{ memberId: idA, assignment: Buffer.from('orders:0') }, { memberId: idB, assignment: Buffer.from('orders:1') }],
    })));
    expect([leaderSync.errorCode, (await within('follower sync', followerSync)).errorCode]).to.deep.equal([0, 0]);
    const beat = (memberId: string, generationId = 1): number => c.heartbeat({ groupId: GROUP, generationId, memberId, groupInstanceId: null }).errorCode;
    expect([beat(idA), beat(idB)]).to.deep.equal([0, 0]);

    // b falls silent; a keeps heartbeating. One millisecond before b's deadline nothing has happened.
    scheduler.advance(SESSION_B_MS - 1);
    expect(beat(idA), 'before b\'s deadline').to.equal(0);
    expect(c.describeGroups({ groups: [GROUP] }).groups[0]!.members.map((m) => m.memberId)).to.have.members([idA, idB]);
    scheduler.advance(1);
    expect(beat(idA), 'at b\'s deadline').to.equal(Errors.REBALANCE_IN_PROGRESS.code);
    const again = await within('a rejoins', Promise.resolve(c.joinGroup(join(idA, SESSION_A_MS), CLIENT)));
    expect(again).to.include({ errorCode: 0, generationId: 2, leader: idA, memberId: idA });
    expect(again.members.map((m) => m.memberId)).to.deep.equal([idA]);
    const sync2 = await within('a syncs', Promise.resolve(c.syncGroup({ groupId: GROUP, generationId: 2, memberId: idA, groupInstanceId: null, assignments: [{ memberId: idA, assignment: Buffer.from('orders:0,1') }] })));
    expect(Buffer.from(sync2.assignment).toString()).to.equal('orders:0,1');
    expect(beat(idB), 'b was removed').to.equal(Errors.UNKNOWN_MEMBER_ID.code);
    const commitB = await c.offsetCommit(commit(idB, 1, [[1, 5]]));
    expect(commitB.topics[0]!.partitions[0]!.errorCode, 'a removed member cannot commit').to.equal(Errors.UNKNOWN_MEMBER_ID.code);
    const staleA = await c.offsetCommit(commit(idA, 1, [[0, 5]]));
    expect(staleA.topics[0]!.partitions[0]!.errorCode, 'a member\'s commit from the generation before').to.equal(Errors.ILLEGAL_GENERATION.code);
  });

  it('answers a commit only once the ISR has it', async () => {
    createOffsetsTopic(1);
    await active(1);
    const r1 = await coordinator(1).offsetCommit(commit('', -1, [[0, 5]]));
    expect(r1.topics[0]!.partitions[0]!.errorCode, 'generation -1 commits need no membership').to.equal(0);
    await cluster.stopNode(2); // still in the ISR: acks=all cannot complete
    const r2 = await coordinator(1).offsetCommit(commit('', -1, [[0, 6]]));
    expect(r2.topics[0]!.partitions[0]!.errorCode).to.equal(Errors.REQUEST_TIMED_OUT.code);
    const fetched = coordinator(1).offsetFetch({ groupId: GROUP, topics: [{ name: 'orders', partitions: [0, 1] }] });
    expect(fetched.topics[0]!.partitions.map((p) => p.committedOffset), 'the unreplicated commit is not visible').to.deep.equal([5, -1]);
  });

  it('releases parked joins with NOT_COORDINATOR when leadership moves', async () => {
    createOffsetsTopic(1);
    await active(1);
    const { memberId } = await stableMember(1);
    const c = coordinator(1);
    const join = { groupId: GROUP, sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 10_000, groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.from('sub') }] };
    const second = (await c.joinGroup({ ...join, memberId: '' }, CLIENT)) as JoinGroupResponse;
    const parked = Promise.resolve(c.joinGroup({ ...join, memberId: second.memberId }, CLIENT));
    expect(c.heartbeat({ groupId: GROUP, generationId: 1, memberId, groupInstanceId: null }).errorCode).to.equal(Errors.REBALANCE_IN_PROGRESS.code);
    cluster.changePartition(OFFSETS_ID, 0, { leader: 2 });
    expect((await within('parked join', parked)).errorCode).to.equal(Errors.NOT_COORDINATOR.code);
  });

  it('deletes an Empty group with tombstones that a new leader honours', async () => {
    createOffsetsTopic(1);
    await active(1);
    const { memberId, generationId } = await stableMember(1);
    await coordinator(1).offsetCommit(commit(memberId, generationId, [[0, 3]]));
    expect((await coordinator(1).deleteGroups({ groups: [GROUP] })).results[0]!.errorCode).to.equal(Errors.NON_EMPTY_GROUP.code);
    expect(coordinator(1).leaveGroup({ groupId: GROUP, members: [{ memberId, groupInstanceId: null }] }).members[0]!.errorCode).to.equal(0);
    expect(coordinator(1).listGroups().groups).to.deep.equal([{ groupId: GROUP, protocolType: 'consumer', groupState: 'Empty' }]);
    expect((await coordinator(1).deleteGroups({ groups: [GROUP, 'never-existed'] })).results.map((r) => r.errorCode))
      .to.deep.equal([0, Errors.GROUP_ID_NOT_FOUND.code]);
    expect(coordinator(1).listGroups().groups).to.deep.equal([]);
    cluster.changePartition(OFFSETS_ID, 0, { leader: 2 });
    await active(2);
    expect(coordinator(2).listGroups().groups).to.deep.equal([]);
    expect(coordinator(2).offsetFetch({ groupId: GROUP, topics: null }).topics).to.deep.equal([]);
  });
  it('deletes offsets only of topics the group does not consume, with tombstones that a new leader honours', async () => {
    createOffsetsTopic(1);
    await active(1);
    const { memberId, generationId } = await stableMember(1);
    await coordinator(1).offsetCommit(commit(memberId, generationId, [[0, 3], [1, 4]]));
    const del = { groupId: GROUP, topics: [{ name: 'orders', partitions: [0] }] };
    // The member's metadata is not a ConsumerProtocol subscription: what it consumes is unknown, so nothing goes.
    const refused = await coordinator(1).offsetDelete(del);
    expect(refused.topics[0]!.partitions[0]!.errorCode).to.equal(Errors.GROUP_SUBSCRIBED_TO_TOPIC.code);
    expect(coordinator(1).leaveGroup({ groupId: GROUP, members: [{ memberId, groupInstanceId: null }] }).members[0]!.errorCode).to.equal(0);
    const deleted = await coordinator(1).offsetDelete(del);
    expect([deleted.errorCode, deleted.topics[0]!.partitions[0]!.errorCode]).to.deep.equal([0, 0]);
    expect((await coordinator(1).offsetDelete({ groupId: 'never-existed', topics: [] })).errorCode).to.equal(Errors.GROUP_ID_NOT_FOUND.code);
    cluster.changePartition(OFFSETS_ID, 0, { leader: 2 });
    await active(2);
    const left = coordinator(2).offsetFetch({ groupId: GROUP, topics: null }).topics;
    expect(left.map((t) => t.partitions.map((p) => [p.partition, p.committedOffset]))).to.deep.equal([[[1, 4]]]);
  });
});
