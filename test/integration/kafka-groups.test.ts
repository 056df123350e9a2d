// The group APIs, FindCoordinator and InitProducerId on the Kafka listener of
// a real 3-node cluster, through the raw Kafka client: coordinators (batched,
// the wrong broker, unknown key types; transactional ones are in
// kafka-transactions.test.ts), a two-member rebalance, static
// membership, offsets, admin APIs, producer ids — and a mixed group of a
// Sluice consumer (WebSocket) and a Kafka-protocol member.

import { expect } from 'chai';
import { connect, createTopic, startBrokerCluster } from './broker-kit.js';
import { waitFor, type ProcessCluster } from './harness.js';
import { RawKafkaClient } from '../protocol/kafka/raw-client.js';
import { RawGroupMember, connectToCoordinator } from '../protocol/kafka/raw-group-member.js';
import type { Struct } from '../../src/protocol/kafka/message.js';
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { Client } from '../../src/client/client.js';
import { Consumer } from '../../src/client/consumer.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { findCoordinator } from '../../src/protocol/kafka/apis/find-coordinator/schema.js';
import { joinGroup } from '../../src/protocol/kafka/apis/join-group/schema.js';
import { syncGroup } from '../../src/protocol/kafka/apis/sync-group/schema.js';
import { heartbeat } from '../../src/protocol/kafka/apis/heartbeat/schema.js';
import { leaveGroup } from '../../src/protocol/kafka/apis/leave-group/schema.js';
import { offsetCommit } from '../../src/protocol/kafka/apis/offset-commit/schema.js';
import { offsetFetch } from '../../src/protocol/kafka/apis/offset-fetch/schema.js';
import { listGroups } from '../../src/protocol/kafka/apis/list-groups/schema.js';
import { describeGroups } from '../../src/protocol/kafka/apis/describe-groups/schema.js';
import { deleteGroups } from '../../src/protocol/kafka/apis/delete-groups/schema.js';
import { offsetDelete } from '../../src/protocol/kafka/apis/offset-delete/schema.js';
import { initProducerId } from '../../src/protocol/kafka/apis/init-producer-id/schema.js';
import { decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription } from '../../src/groups/consumer-protocol.js';
import { coordinatorPartition } from '../../src/groups/placement.js';

const E = {
  NONE: 0, COORDINATOR_NOT_AVAILABLE: 15, NOT_COORDINATOR: 16, ILLEGAL_GENERATION: 22, INVALID_GROUP_ID: 24, UNKNOWN_MEMBER_ID: 25,
  INVALID_SESSION_TIMEOUT: 26, REBALANCE_IN_PROGRESS: 27, INVALID_REQUEST: 42, NON_EMPTY_GROUP: 68, GROUP_ID_NOT_FOUND: 69,
  MEMBER_ID_REQUIRED: 79, FENCED_INSTANCE_ID: 82, GROUP_SUBSCRIBED_TO_TOPIC: 86,
} as const;
const WAIT_MS = 30_000;

function hostPort(addr: string): [string, number] {
  const [h, p] = addr.split(':');
  return [h!, Number(p)];
}

const subscription = (topics: string[]): Buffer => Buffer.from(encodeSubscription({ topics, ownedPartitions: [], generationId: -1, userData: null }));
const labels = (tps: ReadonlyArray<{ topic: string; partitions: readonly number[] }>): string[] => tps.flatMap((tp) => tp.partitions.map((p) => `${tp.topic}-${p}`)).sort();

describe('Kafka group APIs (real 3-node cluster)', function () {
  this.timeout(120_000);
  let cluster: ProcessCluster;
  let admin: BrokerConnection;
  const clients: RawKafkaClient[] = [];
  const track = (c: RawKafkaClient): RawKafkaClient => {
    clients.push(c);
    return c;
  };
  const open = async (i = 0): Promise<RawKafkaClient> => track(await RawKafkaClient.connect(...hostPort(cluster.nodes[i]!.kafkaAddress)));
  const coordinatorOf = async (groupId: string): Promise<RawKafkaClient> => track(await connectToCoordinator(await open(), groupId));
  const member = async (groupId: string, topics: string[], partitions: Record<string, number>, instance: string | null = null, timeouts: { sessionTimeoutMs?: number; rebalanceTimeoutMs?: number } = {}): Promise<RawGroupMember> => (
    new RawGroupMember(await coordinatorOf(groupId), groupId, topics, { partitions, groupInstanceId: instance, ...timeouts }));

  before(async () => {
    cluster = await startBrokerCluster(3, [], { kafka: true });
    admin = await connect(cluster.brokerUrls[0]!);
    const res = await admin.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 'cluster', resourceName: '', set: { 'offsets.topic.num.partitions': '3' } }] });
    expect(res.resources[0]!.errorCode).to.equal(0);
    await createTopic(admin, 'gt', 4, 3);
    await createTopic(admin, 'other', 2, 3);
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  after(async () => {
    admin?.close();
    await cluster?.cleanup();
  });

  it('finds coordinators one at a time and batched, refuses unknown key types, and the wrong broker answers NOT_COORDINATOR', async () => {
    const c = await open(1);
    const first = await waitFor('a coordinator once __consumer_offsets exists', async () => {
      const res = await c.request(findCoordinator, 0, { key: 'fc-group' });
      expect([E.NONE, E.COORDINATOR_NOT_AVAILABLE]).to.include(res.errorCode);
      return res.errorCode === 0 ? res : undefined;
    }, { timeoutMs: WAIT_MS, intervalMs: 100 });
    expect(cluster.nodes.map((n) => n.kafkaAddress)).to.include(`${String(first.host)}:${String(first.port)}`);
    const batched = await c.request(findCoordinator, 6, { keyType: 0, coordinatorKeys: ['fc-group', 'fc-other', ''] });
    const [a, b, empty] = batched.coordinators as Struct[];
    expect([a!.key, a!.errorCode, a!.nodeId, a!.port]).to.deep.equal(['fc-group', 0, first.nodeId, first.port]);
    expect(b!.errorCode).to.equal(0);
    expect(empty!.errorCode).to.equal(E.INVALID_GROUP_ID);
    // Key type 1 (a transactional id) is the transaction coordinator's: kafka-transactions.test.ts.
    const odd = await c.request(findCoordinator, 4, { keyType: 7, coordinatorKeys: ['x'] });
    expect((odd.coordinators as Struct[])[0]!.errorCode).to.equal(E.INVALID_REQUEST);
    // Every broker but the coordinator refuses the group's requests.
    const wrongIndex = cluster.nodes.findIndex((n) => n.kafkaAddress !== `${String(first.host)}:${String(first.port)}`);
    const wrong = await open(wrongIndex);
    const join = await wrong.request(joinGroup, 5, { groupId: 'fc-group', sessionTimeoutMs: 6000, rebalanceTimeoutMs: 6000, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription(['gt']) }] });
    expect(join.errorCode).to.equal(E.NOT_COORDINATOR);
    const fetched = await wrong.request(offsetFetch, 1, { groupId: 'fc-group', topics: [{ name: 'gt', partitionIndexes: [0] }] });
    expect(((fetched.topics as Struct[])[0]!.partitions as Struct[])[0]!.errorCode).to.equal(E.NOT_COORDINATOR);
  });

  it('takes two members through join, sync, heartbeat, a rebalance and leave', async () => {
    const a = await member('cycle', ['gt'], { gt: 4 });
    const first = await a.join();
    expect(first.errorCode).to.equal(0);
    expect(a.memberId).to.not.equal('');
    const c = a.conn;
    const syncA = await a.sync(first);
    expect(syncA.errorCode).to.equal(0);
    expect(labels(a.assignment)).to.deep.equal(['gt-0', 'gt-1', 'gt-2', 'gt-3']);
    a.generationId = first.generationId as number;
    expect((await a.heartbeat()).errorCode).to.equal(0);

    // A second member: its first join gets an id to rejoin with (KIP-394), then waits for the rebalance.
    const b = await member('cycle', ['gt'], { gt: 4 });
    const bare = await b.conn.request(joinGroup, 9, { groupId: 'cycle', sessionTimeoutMs: 6000, rebalanceTimeoutMs: 10000, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription(['gt']) }] });
    expect(bare.errorCode).to.equal(E.MEMBER_ID_REQUIRED);
    b.memberId = bare.memberId as string;
    const bJoin = b.join();
    await waitFor('the first member to be told to rejoin', async () => (await a.heartbeat()).errorCode === E.REBALANCE_IN_PROGRESS || undefined, { timeoutMs: WAIT_MS, intervalMs: 100 });
    const [aJoin2, bJoin2] = await Promise.all([a.join(), bJoin]);
    expect(aJoin2.generationId).to.equal((first.generationId as number) + 1);
    expect(bJoin2.generationId).to.equal(aJoin2.generationId);
    expect(aJoin2.protocolType).to.equal('consumer');
    const leaderJoin = aJoin2.leader === a.memberId ? aJoin2 : bJoin2;
    expect((leaderJoin.members as Struct[]).map((m) => m.memberId).sort()).to.deep.equal([a.memberId, b.memberId].sort());
    const [sa, sb] = await Promise.all([a.sync(aJoin2), b.sync(bJoin2)]);
    expect([sa.errorCode, sb.errorCode]).to.deep.equal([0, 0]);
    expect(sa.protocolName).to.equal('range');
    expect([...labels(a.assignment), ...labels(b.assignment)].sort()).to.deep.equal(['gt-0', 'gt-1', 'gt-2', 'gt-3']);
    expect(labels(a.assignment)).to.have.length(2);

    // A stale generation's heartbeat is refused; b leaves (batched LeaveGroup), a rebalances alone.
    expect((await c.request(heartbeat, 2, { groupId: 'cycle', generationId: first.generationId, memberId: a.memberId })).errorCode).to.equal(E.ILLEGAL_GENERATION);
    const left = await b.conn.request(leaveGroup, 3, { groupId: 'cycle', members: [{ memberId: b.memberId, groupInstanceId: null }, { memberId: 'nobody', groupInstanceId: null }] });
    expect((left.members as Struct[]).map((m) => m.errorCode)).to.deep.equal([0, E.UNKNOWN_MEMBER_ID]);
    a.generationId = aJoin2.generationId as number;
    await waitFor('a rebalance after the leave', async () => (await a.heartbeat()).errorCode === E.REBALANCE_IN_PROGRESS || undefined, { timeoutMs: WAIT_MS, intervalMs: 100 });
    await a.joinAndSync();
    expect(labels(a.assignment)).to.have.length(4);
    // LeaveGroup v0 names one member and answers with its error.
    expect((await c.request(leaveGroup, 0, { groupId: 'cycle', memberId: a.memberId })).errorCode).to.equal(0);
    expect((await c.request(leaveGroup, 1, { groupId: 'cycle', memberId: a.memberId })).errorCode).to.equal(E.UNKNOWN_MEMBER_ID);
  });

  it('lets cooperative members rejoin while keeping partitions, committing between the two rebalances (KIP-429)', async () => {
    const c1 = await coordinatorOf('coop');
    const c2 = await coordinatorOf('coop');
    const sub = (owned: number[], generationId: number): Buffer => Buffer.from(encodeSubscription({ topics: ['gt'], ownedPartitions: owned.length ? [{ topic: 'gt', partitions: owned }] : [], generationId, userData: null }));
    const joinReq = (memberId: string, owned: number[], generationId: number): Struct => ({
      groupId: 'coop', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId, protocolType: 'consumer',
      protocols: [{ name: 'cooperative-sticky', metadata: sub(owned, generationId) }],
    });
    const assignment = (parts: number[]): Buffer => Buffer.from(encodeAssignment({ partitions: [{ topic: 'gt', partitions: parts }], userData: null }));
    const joinOnce = async (c: RawKafkaClient, req: Struct): Promise<Struct> => {
      const first = await c.request(joinGroup, 9, req);
      return first.errorCode === E.MEMBER_ID_REQUIRED ? c.request(joinGroup, 9, { ...req, memberId: first.memberId }) : first;
    };
    const a1 = await joinOnce(c1, joinReq('', [], -1));
    const a = a1.memberId as string;
    expect((await c1.request(syncGroup, 5, { groupId: 'coop', generationId: a1.generationId, memberId: a, protocolType: 'consumer', protocolName: 'cooperative-sticky', assignments: [{ memberId: a, assignment: assignment([0, 1, 2, 3]) }] })).errorCode).to.equal(0);
    const g1 = a1.generationId as number;

    // b joins; a is told to rejoin and does so still owning all four partitions.
    const bJoin = joinOnce(c2, joinReq('', [], -1));
    await waitFor('a told to rejoin', async () => (await c1.request(heartbeat, 4, { groupId: 'coop', generationId: g1, memberId: a })).errorCode === E.REBALANCE_IN_PROGRESS || undefined, { timeoutMs: WAIT_MS, intervalMs: 100 });
    // While the group prepares the rebalance, a still consumes and commits in its generation.
    const during = await c1.request(offsetCommit, 9, { groupId: 'coop', generationIdOrMemberEpoch: g1, memberId: a, topics: [{ name: 'gt', partitions: [{ partitionIndex: 3, committedOffset: 9, committedMetadata: null }] }] });
    expect(((during.topics as Struct[])[0]!.partitions as Struct[])[0]!.errorCode).to.equal(0);
    const [a2, b2] = await Promise.all([c1.request(joinGroup, 9, joinReq(a, [0, 1, 2, 3], g1)), bJoin]);
    const b = b2.memberId as string;
    expect(a2.generationId).to.equal(g1 + 1);
    // The leader (a, the first member) sees each member's owned partitions: cooperative-sticky's input.
    expect(a2.leader).to.equal(a);
    const owned = new Map((a2.members as Struct[]).map((m) => [m.memberId as string, decodeSubscription(m.metadata as Buffer).ownedPartitions]));
    expect(owned.get(a)).to.deep.equal([{ topic: 'gt', partitions: [0, 1, 2, 3] }]);
    expect(owned.get(b)).to.deep.equal([]);
    // First rebalance: a keeps 0-1 and gives up 2-3; nobody gets a partition still owned.
    const g2 = a2.generationId as number;
    const [sa, sb] = await Promise.all([
      c1.request(syncGroup, 5, { groupId: 'coop', generationId: g2, memberId: a, assignments: [{ memberId: a, assignment: assignment([0, 1]) }, { memberId: b, assignment: assignment([]) }] }),
      c2.request(syncGroup, 5, { groupId: 'coop', generationId: g2, memberId: b, assignments: [] }),
    ]);
    expect([sa.errorCode, sb.errorCode]).to.deep.equal([0, 0]);
    // a revoked 2-3 and rejoins at once (Stable, changed metadata): a second rebalance hands them to b.
    const a3Join = c1.request(joinGroup, 9, joinReq(a, [0, 1], g2));
    await waitFor('b told to rejoin', async () => (await c2.request(heartbeat, 4, { groupId: 'coop', generationId: g2, memberId: b })).errorCode === E.REBALANCE_IN_PROGRESS || undefined, { timeoutMs: WAIT_MS, intervalMs: 100 });
    const [a3, b3] = await Promise.all([a3Join, c2.request(joinGroup, 9, joinReq(b, [], g2))]);
    expect(b3.generationId).to.equal(g2 + 1);
    const g3 = a3.generationId as number;
    const [, sb3] = await Promise.all([
      c1.request(syncGroup, 5, { groupId: 'coop', generationId: g3, memberId: a, assignments: [{ memberId: a, assignment: assignment([0, 1]) }, { memberId: b, assignment: assignment([2, 3]) }] }),
      c2.request(syncGroup, 5, { groupId: 'coop', generationId: g3, memberId: b, assignments: [] }),
    ]);
    expect(labels(decodeAssignment(sb3.assignment as Buffer).partitions)).to.deep.equal(['gt-2', 'gt-3']);
    await c1.request(leaveGroup, 5, { groupId: 'coop', members: [{ memberId: a, groupInstanceId: null }, { memberId: b, groupInstanceId: null }] });
  });

  it('closes a rebalance at the rebalance timeout without the members that did not rejoin', async () => {
    const timeouts = { sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 1_500 };
    const a = await member('slow', ['gt'], { gt: 4 }, null, timeouts);
    await a.joinAndSync();
    const b = await member('slow', ['gt'], { gt: 4 }, null, timeouts);
    // a neither heartbeats nor rejoins: b's join is answered once a's rebalance timeout has passed, without a.
    const joined = await b.join();
    expect(joined.errorCode).to.equal(0);
    expect(joined.generationId).to.equal(a.generationId + 1);
    expect((joined.members as Struct[]).map((m) => m.memberId)).to.deep.equal([b.memberId]);
    expect((await a.heartbeat()).errorCode).to.equal(E.UNKNOWN_MEMBER_ID);
    const unknown = await a.conn.request(joinGroup, 9, { groupId: 'slow', sessionTimeoutMs: 6000, rebalanceTimeoutMs: 1000, memberId: a.memberId, protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription(['gt']) }] });
    expect(unknown.errorCode).to.equal(E.UNKNOWN_MEMBER_ID);
    await b.sync(joined);
    expect(labels(b.assignment)).to.have.length(4);
    await b.leave();
  });

  it('lets JoinGroup v0-3 join without MEMBER_ID_REQUIRED, and refuses bad session timeouts and group ids', async () => {
    const c = await coordinatorOf('old-join');
    const protocols = [{ name: 'range', metadata: subscription(['gt']) }];
    const res = await c.request(joinGroup, 0, { groupId: 'old-join', sessionTimeoutMs: 6000, memberId: '', protocolType: 'consumer', protocols });
    expect(res.errorCode).to.equal(0);
    expect(res.memberId).to.not.equal('');
    expect(res.leader).to.equal(res.memberId);
    const sync = await c.request(syncGroup, 0, { groupId: 'old-join', generationId: res.generationId, memberId: res.memberId, assignments: [] });
    expect(sync.errorCode).to.equal(0);
    const tooShort = await c.request(joinGroup, 9, { groupId: 'old-join', sessionTimeoutMs: 10, rebalanceTimeoutMs: 1000, memberId: '', protocolType: 'consumer', protocols });
    expect(tooShort.errorCode).to.equal(E.INVALID_SESSION_TIMEOUT);
    const tooLong = await c.request(joinGroup, 9, { groupId: 'old-join', sessionTimeoutMs: 100_000_000, rebalanceTimeoutMs: 1000, memberId: '', protocolType: 'consumer', protocols });
    expect(tooLong.errorCode).to.equal(E.INVALID_SESSION_TIMEOUT);
    const noGroup = await c.request(joinGroup, 9, { groupId: '', sessionTimeoutMs: 6000, rebalanceTimeoutMs: 1000, memberId: '', protocolType: 'consumer', protocols });
    expect(noGroup.errorCode).to.equal(E.INVALID_GROUP_ID);
    expect((await c.request(leaveGroup, 2, { groupId: 'old-join', memberId: res.memberId })).errorCode).to.equal(0);
  });

  it('lets a restarted static member take its place without a rebalance and fences the old member id', async () => {
    const a = await member('static', ['gt'], { gt: 4 }, 'instance-1');
    const join = await a.join();
    expect(join.errorCode, 'a static member needs no MEMBER_ID_REQUIRED round').to.equal(0);
    await a.sync(join);
    const oldId = a.memberId;
    const generation = join.generationId;
    // The restart: same instance id, no member id, a new connection.
    const again = await member('static', ['gt'], { gt: 4 }, 'instance-1');
    const rejoin = await again.join();
    expect(rejoin.errorCode).to.equal(0);
    expect(rejoin.memberId).to.not.equal(oldId);
    expect(rejoin.generationId, 'no rebalance').to.equal(generation);
    const sync = await again.conn.request(syncGroup, 5, { groupId: 'static', generationId: generation, memberId: again.memberId, groupInstanceId: 'instance-1', protocolType: 'consumer', protocolName: 'range', assignments: [] });
    expect(sync.errorCode).to.equal(0);
    expect(labels(decodeAssignment(sync.assignment as Buffer).partitions)).to.deep.equal(['gt-0', 'gt-1', 'gt-2', 'gt-3']);
    const fenced = await a.conn.request(heartbeat, 4, { groupId: 'static', generationId: generation, memberId: oldId, groupInstanceId: 'instance-1' });
    expect(fenced.errorCode).to.equal(E.FENCED_INSTANCE_ID);
    const wrongProtocol = await again.conn.request(syncGroup, 5, { groupId: 'static', generationId: generation, memberId: again.memberId, groupInstanceId: 'instance-1', protocolType: 'consumer', protocolName: 'roundrobin', assignments: [] });
    expect(wrongProtocol.errorCode).to.equal(23);
    const left = await again.conn.request(leaveGroup, 4, { groupId: 'static', members: [{ memberId: '', groupInstanceId: 'instance-1' }] });
    expect((left.members as Struct[])[0]!.errorCode).to.equal(0);
  });

  it('commits and fetches offsets at every version family, refusing stale generations and unknown members', async () => {
    const a = await member('offsets', ['gt'], { gt: 4 });
    await a.joinAndSync();
    const c = a.conn;
    const commit = (v: number, generation: number, memberId: string, offset: number): Promise<Struct> => c.request(offsetCommit, v, {
      groupId: 'offsets', generationIdOrMemberEpoch: generation, memberId,
      topics: [{ name: 'gt', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: 0, committedMetadata: 'meta' }, { partitionIndex: 9, committedOffset: 1, committedMetadata: null }] }],
    });
    const codes = (res: Struct): number[] => ((res.topics as Struct[])[0]!.partitions as Struct[]).map((p) => p.errorCode as number);
    expect(codes(await commit(9, a.generationId, a.memberId, 42))).to.deep.equal([0, 3]);
    expect(codes(await commit(2, a.generationId - 1, a.memberId, 43))).to.deep.equal([E.ILLEGAL_GENERATION, E.ILLEGAL_GENERATION]);
    expect(codes(await commit(8, a.generationId, 'stranger', 44))).to.deep.equal([E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID]);
    const v1 = await c.request(offsetFetch, 1, { groupId: 'offsets', topics: [{ name: 'gt', partitionIndexes: [0, 1] }] });
    expect(((v1.topics as Struct[])[0]!.partitions as Struct[]).map((p) => [p.committedOffset, p.metadata])).to.deep.equal([[42, 'meta'], [-1, '']]);
    const v5 = await c.request(offsetFetch, 5, { groupId: 'offsets', topics: null });
    expect(((v5.topics as Struct[])[0]!.partitions as Struct[])[0]).to.deep.include({ partitionIndex: 0, committedOffset: 42, committedLeaderEpoch: 0 });
    const v9 = await c.request(offsetFetch, 9, { groups: [{ groupId: 'offsets', topics: [{ name: 'gt', partitionIndexes: [0] }] }, { groupId: '', topics: null }], requireStable: true });
    const [mine, bad] = v9.groups as Struct[];
    expect(((mine!.topics as Struct[])[0]!.partitions as Struct[])[0]!.committedOffset).to.equal(42);
    expect(bad!.errorCode).to.equal(E.INVALID_GROUP_ID);
    // OffsetCommit v0: no group membership (a consumer using assign()), into a group of its own.
    const solo = await coordinatorOf('solo-offsets');
    const v0 = await solo.request(offsetCommit, 0, { groupId: 'solo-offsets', topics: [{ name: 'gt', partitions: [{ partitionIndex: 3, committedOffset: 7, committedMetadata: '' }] }] });
    expect(codes(v0)).to.deep.equal([0]);
    const back = await solo.request(offsetFetch, 3, { groupId: 'solo-offsets', topics: null });
    expect(((back.topics as Struct[])[0]!.partitions as Struct[])[0]).to.deep.include({ partitionIndex: 3, committedOffset: 7 });
    await a.leave();
  });

  it('lists, describes and deletes groups, and deletes offsets of topics the group does not consume', async () => {
    const a = await member('admin-g', ['gt'], { gt: 4 });
    await a.joinAndSync();
    const c = a.conn;
    await c.request(offsetCommit, 8, {
      groupId: 'admin-g', generationIdOrMemberEpoch: a.generationId, memberId: a.memberId,
      topics: ['gt', 'other'].map((name) => ({ name, partitions: [{ partitionIndex: 0, committedOffset: 5, committedMetadata: null }] })),
    });
    const listed = await c.request(listGroups, 5, { statesFilter: ['stable'], typesFilter: [] });
    expect((listed.groups as Struct[]).find((g) => g.groupId === 'admin-g')).to.deep.include({ protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' });
    const v0 = await c.request(listGroups, 0, {});
    expect((v0.groups as Struct[]).map((g) => g.groupId)).to.include('admin-g');
    expect((await c.request(listGroups, 4, { statesFilter: ['Empty'] })).groups as Struct[]).to.not.deep.include.members([{ groupId: 'admin-g' }]);
    expect((await c.request(listGroups, 5, { typesFilter: ['consumer'] })).groups).to.deep.equal([]);
    // A group that never existed, on the same coordinator (__consumer_offsets has 3 partitions here).
    const neverWas = Array.from({ length: 30 }, (_, i) => `never-was-${i}`).find((id) => coordinatorPartition(id, 3) === coordinatorPartition('admin-g', 3))!;
    const described = await c.request(describeGroups, 5, { groups: ['admin-g', neverWas] });
    const [g, none] = described.groups as Struct[];
    expect(g).to.deep.include({ errorCode: 0, groupState: 'Stable', protocolType: 'consumer', protocolData: 'range' });
    expect((g!.members as Struct[]).map((m) => m.memberId)).to.deep.equal([a.memberId]);
    expect(labels(decodeAssignment((g!.members as Struct[])[0]!.memberAssignment as Buffer).partitions)).to.have.length(4);
    expect(none).to.deep.include({ errorCode: 0, groupState: 'Dead' });

    const del = await c.request(offsetDelete, 0, { groupId: 'admin-g', topics: ['gt', 'other'].map((name) => ({ name, partitions: [{ partitionIndex: 0 }] })) });
    expect(del.errorCode).to.equal(0);
    expect((del.topics as Struct[]).map((t) => (t.partitions as Struct[])[0]!.errorCode)).to.deep.equal([E.GROUP_SUBSCRIBED_TO_TOPIC, 0]);
    const after = await c.request(offsetFetch, 7, { groupId: 'admin-g', topics: null });
    expect((after.topics as Struct[]).map((t) => t.name)).to.deep.equal(['gt']);
    expect((await c.request(offsetDelete, 0, { groupId: neverWas, topics: [] })).errorCode).to.equal(E.GROUP_ID_NOT_FOUND);

    const busy = await c.request(deleteGroups, 2, { groupsNames: ['admin-g', neverWas] });
    expect((busy.results as Struct[]).map((r) => r.errorCode)).to.deep.equal([E.NON_EMPTY_GROUP, E.GROUP_ID_NOT_FOUND]);
    await a.leave();
    const gone = await c.request(deleteGroups, 0, { groupsNames: ['admin-g'] });
    expect((gone.results as Struct[])[0]!.errorCode).to.equal(0);
    const fetched = await c.request(offsetFetch, 7, { groupId: 'admin-g', topics: null });
    expect(fetched.topics).to.deep.equal([]);
  });

  it('hands idempotent producers ids and bumps an epoch on v3+ (transactional ids: kafka-transactions.test.ts)', async () => {
    const c = await open(2);
    const fresh = await c.request(initProducerId, 0, { transactionalId: null, transactionTimeoutMs: 60000 });
    expect(fresh.errorCode).to.equal(0);
    expect(fresh.producerId).to.be.at.least(0);
    expect(fresh.producerEpoch).to.equal(0);
    const other = await c.request(initProducerId, 4, { transactionalId: null, transactionTimeoutMs: 60000 });
    expect(other.producerId).to.not.equal(fresh.producerId);
    const bumped = await c.request(initProducerId, 5, { transactionalId: null, transactionTimeoutMs: 60000, producerId: fresh.producerId, producerEpoch: 0 });
    expect([bumped.errorCode, bumped.producerId, bumped.producerEpoch]).to.deep.equal([0, fresh.producerId, 1]);
    const half = await c.request(initProducerId, 3, { transactionalId: null, transactionTimeoutMs: 60000, producerId: fresh.producerId, producerEpoch: -1 });
    expect(half.errorCode).to.equal(E.INVALID_REQUEST);
  });

  it('shares a group between a Sluice consumer (WebSocket) and a Kafka-protocol member: disjoint partitions covering the topic', async () => {
    const client = new Client({
      bootstrap: cluster.brokerUrls, clientId: 'sluice-member', webSocketFactory: nodeWebSocketFactory,
      connectTimeoutMs: 2_000, requestTimeoutMs: 10_000, retry: { retries: 30, initialRetryTimeMs: 50, maxRetryTimeMs: 1_000 },
    });
    const sluice = new Consumer(client, { groupId: 'mixed', partitionAssigners: ['range'], sessionTimeoutMs: 6_000, rebalanceTimeoutMs: 10_000, heartbeatIntervalMs: 300 });
    const raw = await member('mixed', ['gt'], { gt: 4 });
    try {
      await sluice.subscribe({ topics: ['gt'], fromBeginning: true });
      await sluice.run({ eachMessage: async () => undefined });
      await waitFor('the Sluice consumer to hold all four partitions', () => sluice.assignment().length === 4 || undefined, { timeoutMs: WAIT_MS, intervalMs: 50 });
      await raw.run();
      await waitFor('two partitions each', () => (sluice.assignment().length === 2 && labels(raw.assignment).length === 2) || undefined, { timeoutMs: WAIT_MS, intervalMs: 50 });
      expect(raw.failure).to.equal(null);
      const sluiceParts = sluice.assignment().map((tp) => `${tp.topic}-${tp.partition}`);
      expect([...sluiceParts, ...labels(raw.assignment)].sort()).to.deep.equal(['gt-0', 'gt-1', 'gt-2', 'gt-3']);
      const described = await raw.conn.request(describeGroups, 5, { groups: ['mixed'] });
      const clientIds = ((described.groups as Struct[])[0]!.members as Struct[]).map((m) => m.clientId).sort();
      expect(clientIds).to.deep.equal(['raw-mixed', 'sluice-member']);
    } finally {
      await raw.leave().catch(() => undefined);
      await sluice.stop().catch(() => undefined);
      await client.close();
    }
  });
});
