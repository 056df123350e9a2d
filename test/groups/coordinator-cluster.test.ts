// The group coordinator on a real 3-node cluster (combined nodes on
// loopback), driven with the raw group protocol through BrokerConnection:
// FindCoordinator creates __consumer_offsets (3 partitions, from the cluster
// config), two members join one generation with one leader, sync their
// assignments, heartbeat and commit; the coordinator's process is SIGKILLed,
// FindCoordinator names a new broker that loaded the group (same generation,
// same offsets). Session expiry is timing, tested on the coordinator's
// manual clock in coordinator.test.ts; this test keeps what only real
// processes show (a SIGKILLed coordinator, a load over real sockets and disks).

import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { CONSUMER_OFFSETS_TOPIC } from '../../src/protocol/apis/groups.js';
import type { BrokerConnection, JoinGroupInput } from '../../src/client/broker-connection.js';
import { coordinatorPartition } from '../../src/groups/placement.js';
import { Errors, isSluiceError } from '../../src/util/errors.js';
import { waitFor, type ProcessCluster } from '../integration/harness.js';
import { Connections, connect, startBrokerCluster, waitForFullIsr } from '../integration/broker-kit.js';

const GROUP = 'payments';
const TOPIC = 'invoices';
const OFFSETS_PARTITIONS = 3;
/** Both sessions outlive the failover. */
const SESSION_A_MS = 30_000;
const SESSION_B_MS = 20_000;
const FAILOVER_MS = 60_000;

describe('group coordinator on a real 3-node cluster', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  const conns = new Connections();

  before(async () => {
    cluster = await startBrokerCluster(3);
  });

  after(async () => {
    conns.closeAll();
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  const liveUrls = (): string[] => cluster.nodes.filter((n) => n.running).map((n) => n.brokerUrl);

  /** FindCoordinator through any live broker until one answers (COORDINATOR_NOT_AVAILABLE is retried), not `notNode`. */
  function findCoordinator(notNode = -1): Promise<{ nodeId: number; url: string }> {
    return waitFor(`a coordinator for ${GROUP}${notNode >= 0 ? ` other than ${notNode}` : ''}`, async () => {
      for (const url of liveUrls()) {
        const c = await (await conns.get(url)).findCoordinator(GROUP).catch(() => null);
        if (c && c.url && c.nodeId !== notNode) return { nodeId: c.nodeId, url: c.url };
      }
      return undefined;
    }, { timeoutMs: FAILOVER_MS, intervalMs: 100 });
  }

  /** Retries `call` while the coordinator is loading or moving (retriable errors), up to the failover bound; other errors fail at once. */
  async function whileLoading<T>(what: string, call: () => Promise<T>): Promise<T> {
    let fatal: unknown = null;
    const got = await waitFor(what, async () => {
      try {
        return { value: await call() };
      } catch (err) {
        if (isSluiceError(err) && err.retriable) return undefined;
        fatal = err;
        return { value: undefined };
      }
    }, { timeoutMs: FAILOVER_MS, intervalMs: 100 });
    if (fatal !== null) throw fatal;
    return got.value as T;
  }

  function joinInput(memberId: string, sessionTimeoutMs: number, subscription: string): JoinGroupInput {
    return {
      groupId: GROUP, memberId, sessionTimeoutMs, rebalanceTimeoutMs: 20_000, protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.from(subscription) }],
    };
  }

  async function memberIdFor(conn: BrokerConnection, sessionTimeoutMs: number): Promise<string> {
    const err = await conn.joinGroup(joinInput('', sessionTimeoutMs, TOPIC)).then(() => null, (e: unknown) => e);
    expect(isSluiceError(err, Errors.MEMBER_ID_REQUIRED), String(err)).to.equal(true);
    return (err as { details: { memberId: string } }).details.memberId;
  }

  it('runs a group through join, sync, commits and a coordinator failover', async () => {
    const admin = await connect(cluster.brokerUrls[0]!);
    try {
      const altered = await admin.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 'cluster', resourceName: '', set: { 'offsets.topic.num.partitions': String(OFFSETS_PARTITIONS) } }] });
      expect(altered.resources[0]!.errorCode).to.equal(0);
      // The topic's record follows the config's in the metadata log: a broker that knows the topic has the config too.
      const created = await admin.admin(ApiKey.CreateTopics, { topics: [{ name: TOPIC, numPartitions: 4, replicationFactor: 3 }] });
      expect(created.topics[0]!.errorCode).to.equal(0);
      for (const url of cluster.brokerUrls) await waitForFullIsr(await conns.get(url), TOPIC, 4);
    } finally {
      admin.close();
    }

    // ---- FindCoordinator creates __consumer_offsets; the coordinator leads the group's partition.
    const first = await findCoordinator();
    const bootstrap = await conns.get(cluster.brokerUrls[0]!);
    const offsetsTopic = await waitForFullIsr(bootstrap, CONSUMER_OFFSETS_TOPIC, OFFSETS_PARTITIONS);
    const home = offsetsTopic.find((p) => p.partition === coordinatorPartition(GROUP, OFFSETS_PARTITIONS))!;
    expect(home.replicas).to.have.length(3);
    expect(first.nodeId).to.equal(home.leader);

    // ---- two members join one generation; one is the leader and assigns.
    const coord = await conns.get(first.url);
    const [idA, idB] = [await whileLoading('member id for a', () => memberIdFor(coord, SESSION_A_MS)), await memberIdFor(coord, SESSION_B_MS)];
    const [ja, jb] = await Promise.all([coord.joinGroup(joinInput(idA, SESSION_A_MS, TOPIC)), coord.joinGroup(joinInput(idB, SESSION_B_MS, TOPIC))]);
    expect(ja.generationId).to.equal(1);
    expect(jb.generationId).to.equal(1);
    expect(ja.leader).to.equal(jb.leader);
    const [leader, follower] = ja.leader === idA ? [ja, jb] : [jb, ja];
    expect(leader.members.map((m) => m.memberId)).to.have.members([idA, idB]);
    expect(follower.members).to.deep.equal([]);
    const assignment = { [idA]: 'invoices:0,1', [idB]: 'invoices:2,3' };
    const followerSync = coord.syncGroup({ groupId: GROUP, generationId: 1, memberId: follower.memberId });
    const leaderSync = await coord.syncGroup({
      groupId: GROUP, generationId: 1, memberId: leader.memberId,
      assignments: Object.entries(assignment).map(([memberId, a]) => ({ memberId, assignment: Buffer.from(a) })),
    });
    expect(Buffer.from(leaderSync.assignment).toString()).to.equal(assignment[leader.memberId]);
    expect(Buffer.from((await followerSync).assignment).toString()).to.equal(assignment[follower.memberId]);
    for (const memberId of [idA, idB]) expect((await coord.heartbeat({ groupId: GROUP, generationId: 1, memberId })).errorCode).to.equal(0);

    // ---- commits, answered once replicated.
    const commit = async (memberId: string, generationId: number, offsets: Array<[number, number]>) => {
      const res = await coord.offsetCommit({ groupId: GROUP, generationId, memberId, topics: [{ name: TOPIC, partitions: offsets.map(([partition, committedOffset]) => ({ partition, committedOffset })) }] });
      return res.topics[0]!.partitions.map((p) => p.errorCode);
    };
    expect(await commit(idA, 1, [[0, 100], [1, 101]])).to.deep.equal([0, 0]);
    expect(await commit(idB, 1, [[2, 102], [3, 103]])).to.deep.equal([0, 0]);
    expect(await commit(idB, 0, [[2, 999]])).to.deep.equal([Errors.ILLEGAL_GENERATION.code]);
    const committed = (await coord.offsetFetch({ groupId: GROUP, topics: null })).topics[0]!.partitions.map((p) => [p.partition, p.committedOffset]);
    expect(committed).to.deep.equal([[0, 100], [1, 101], [2, 102], [3, 103]]);

    // ---- SIGKILL the coordinator: another broker takes the partition over and loads the group.
    await cluster.node(first.nodeId).kill('SIGKILL');
    const second = await findCoordinator(first.nodeId);
    const coord2 = await conns.get(second.url);
    const fetched = await whileLoading('offsets from the new coordinator', () => coord2.offsetFetch({ groupId: GROUP, topics: [{ name: TOPIC, partitions: [0, 1, 2, 3] }] }));
    expect(fetched.topics[0]!.partitions.map((p) => p.committedOffset)).to.deep.equal([100, 101, 102, 103]);
    for (const memberId of [idA, idB]) {
      expect((await coord2.heartbeat({ groupId: GROUP, generationId: 1, memberId })).errorCode, 'same members, same generation: no rebalance').to.equal(0);
    }
    const described = (await coord2.describeGroups([GROUP])).groups[0]!;
    expect(described.groupState).to.equal('Stable');
    expect(described.members.map((m) => m.memberId)).to.have.members([idA, idB]);
  });
});
