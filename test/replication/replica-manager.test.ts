// The replica manager with real parts (replica-harness.ts): three brokers in
// one process, each with its own logs on disk and a WebSocket listener
// serving the broker API, followers fetching from leaders over loopback, and
// the test as the controller publishing metadata images. Covers roles from
// the image, acks=1/all, the high watermark as the consumer's limit, long
// polls, ISR shrink/expand through AlterPartition (one call in flight),
// min.insync.replicas, leader changes and epoch fencing, divergent-tail
// truncation, restarts at new addresses, a failing follower log, topic
// configs and deletion, DeleteRecords, and the fsync durability mode. Every wait is on a
// condition, never a fixed sleep. The tests about lag times and timeouts run the
// brokers on a ManualScheduler (simulated time, advanced by the test: exact "after
// the lag time", "not before the timeout"); sockets and disks stay real.

import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiKey } from '../../src/protocol/api-keys.js';
import type { FetchRequest, FetchResponse } from '../../src/protocol/apis/fetch.js';
import type { DeleteRecordsResponse } from '../../src/protocol/apis/delete-records.js';
import type { PartitionLog } from '../../src/storage/partition-log.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { Errors } from '../../src/util/errors.js';
import { readAllBytes } from '../storage/log-test-helpers.js';
import { batchOf, TestCluster, valuesIn, waitAdvancing, waitFor, within, type ClusterOptions } from './replica-harness.js';

const T = 'events';
const TID = 'tid-events';

function sameMembers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

describe('replication: replica manager (in-process brokers)', function () {
  this.timeout(60_000);
  let cluster: TestCluster | undefined;

  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  });

  async function threeNodes(opts: ClusterOptions = {}): Promise<TestCluster> {
    cluster = await TestCluster.start([1, 2, 3], opts);
    cluster.createTopic(T, TID, [{ replicas: [1, 2, 3] }]);
    return cluster;
  }

  function log(id: number, topic = T, partition = 0): PartitionLog {
    const l = cluster!.node(id).logs.getLog(topic, partition);
    if (!l) throw new Error(`broker ${id} has no log ${topic}-${partition}`);
    return l;
  }

  function part(id: number) {
    return cluster!.node(id).rm.partition(T, 0)!;
  }

  function sameLog(a: number, b: number, topic = T, partition = 0): boolean {
    const la = log(a, topic, partition);
    const lb = log(b, topic, partition);
    return la.logEndOffset === lb.logEndOffset && readAllBytes(la).equals(readAllBytes(lb));
  }

  function consumerFetch(fetchOffset: number, maxWaitMs: number): FetchRequest {
    return {
      replicaId: -1, brokerEpoch: -1, maxWaitMs, minBytes: 1, maxBytes: 1 << 20, sessionId: 0, sessionEpoch: -1,
      topics: [{ name: T, partitions: [{ partition: 0, fetchOffset, currentLeaderEpoch: 0, partitionMaxBytes: 1 << 20 }] }], forgotten: [],
    };
  }

  it('takes leader and follower roles from the image', async () => {
    const c = await threeNodes();
    c.createTopic('pair', 'tid-pair', [{ replicas: [1, 2] }]);
    expect(part(1).isLeader).to.equal(true);
    expect(part(1).leader!.isr).to.deep.equal([1, 2, 3]);
    for (const id of [2, 3]) {
      expect(part(id).isLeader, `broker ${id}`).to.equal(false);
      expect(part(id)).to.include({ leaderId: 1, leaderEpoch: 0 });
    }
    expect(c.node(3).rm.partition('pair', 0), 'not a replica').to.equal(undefined);
    expect(c.node(3).logs.getLog('pair', 0)).to.equal(undefined);

    expect((await c.produce(3, 'pair', 1, batchOf('x'))).errorCode).to.equal(Errors.NOT_LEADER_OR_FOLLOWER.code);
    expect((await c.produce(2, T, 1, batchOf('x'))).errorCode).to.equal(Errors.NOT_LEADER_OR_FOLLOWER.code);
    expect((await c.produce(1, 'nope', 1, batchOf('x'))).errorCode).to.equal(Errors.UNKNOWN_TOPIC_OR_PARTITION.code);
    for (const id of [1, 2, 3]) expect(log(id).logEndOffset, `nothing written on ${id}`).to.equal(0);
  });

  it('answers acks=1 at once, and acks=all only once every ISR follower holds the batch', async () => {
    const c = await threeNodes();
    expect(await c.produce(1, T, 1, batchOf('a', 'b'))).to.include({ errorCode: 0, baseOffset: 0 });
    expect(await c.produce(1, T, -1, batchOf('c'))).to.include({ errorCode: 0, baseOffset: 2 });
    for (const id of [2, 3]) expect(log(id).logEndOffset, `follower ${id} holds offset 2`).to.be.greaterThan(2);
    expect(log(1).highWatermark).to.equal(3);
    expect(await c.consume(1, T)).to.deep.equal(['a', 'b', 'c']);
    await waitFor('followers learn the high watermark', () => [2, 3].every((id) => log(id).highWatermark === 3));
    expect(sameLog(1, 2) && sameLog(1, 3)).to.equal(true);
  });

  it('serves consumers up to the high watermark and replicas up to the log end', async () => {
    const c = await threeNodes();
    c.controllerMode = 'hold'; // the stopped followers stay in the ISR
    expect((await c.produce(1, T, -1, batchOf('a', 'b'))).errorCode).to.equal(0);
    await c.stopNode(2);
    await c.stopNode(3);
    await c.produce(1, T, 1, batchOf('c'));
    await c.produce(1, T, 1, batchOf('d'));
    expect(log(1)).to.include({ logEndOffset: 4, highWatermark: 2 });

    const consumer = await c.fetch(1, T, 0);
    expect(consumer).to.include({ errorCode: 0, highWatermark: 2 });
    expect(consumer.logEndOffset, 'only replicas learn the LEO').to.equal(undefined);
    expect(valuesIn(consumer.records)).to.deep.equal(['a', 'b']);
    expect((await c.fetch(1, T, 2)).records.length, 'nothing committed past the HW').to.equal(0);

    const replica = await c.fetch(1, T, 2, { replicaId: 2, currentLeaderEpoch: 0 });
    expect(replica).to.include({ errorCode: 0, highWatermark: 2, logEndOffset: 4 });
    expect(valuesIn(replica.records)).to.deep.equal(['c', 'd']);
    expect(log(1).highWatermark, 'follower 3 still holds it back').to.equal(2);
  });

  it('completes a consumer\'s long poll when committed data arrives, and not with uncommitted data', async () => {
    const time = new ManualScheduler();
    const c = await threeNodes({ clock: time.clock, scheduler: time });
    expect((await c.produce(1, T, -1, batchOf('a'))).errorCode).to.equal(0);
    const pending = c.node(1).rm.fetch(consumerFetch(1, 30_000), () => false);
    expect(pending, 'nothing to read yet: it waits').to.be.instanceOf(Promise);
    const produced = c.produce(1, T, -1, batchOf('b'));
    const res = await within('the long poll to complete', pending as Promise<FetchResponse>);
    expect(valuesIn(res.topics[0]!.partitions[0]!.records)).to.deep.equal(['b']);
    expect((await produced).errorCode).to.equal(0);

    // With the followers gone, new data stays above the HW: a poll sees none of it, and answers at its deadline.
    c.controllerMode = 'hold';
    await c.stopNode(2);
    await c.stopNode(3);
    const short = c.node(1).rm.fetch(consumerFetch(2, 200), () => false) as Promise<FetchResponse>;
    expect(short).to.be.instanceOf(Promise);
    let answered = false;
    void short.then(() => (answered = true));
    await c.produce(1, T, 1, batchOf('c'));
    time.advance(199);
    await new Promise((r) => setImmediate(r));
    expect(answered, 'not before its deadline').to.equal(false);
    time.advance(1);
    const expired = await within('the poll deadline', short);
    expect(expired.topics[0]!.partitions[0]!).to.include({ errorCode: 0, highWatermark: 2 });
    expect(expired.topics[0]!.partitions[0]!.records.length).to.equal(0);
  });

  it('serves follower fetch sessions: answers name only partitions with news; a wrong epoch or a consumer session is refused', async () => {
    cluster = await TestCluster.start([1, 2, 3]);
    const c = cluster;
    const MANY = 'many';
    c.createTopic(MANY, 'tid-many', Array.from({ length: 20 }, () => ({ replicas: [1, 2, 3] })));
    expect((await c.produce(1, MANY, -1, batchOf('a'), { partition: 0 })).errorCode).to.equal(0);
    // The test fetches as broker 4: registered, but a replica of nothing, so the real followers' sessions are left alone.
    c.publish([{ type: 'registerBroker', v: 1, brokerId: 4, incarnationId: 'inc-4', brokerEpoch: 77, endpoints: [], rack: null, fenced: false }]);
    const fetch = (sessionId: number, sessionEpoch: number, partitions: Array<[number, number]>, maxWaitMs = 0) => c.request<FetchResponse>(1, ApiKey.Fetch, {
      replicaId: 4, brokerEpoch: 77, maxWaitMs, minBytes: 1, maxBytes: 1 << 20, sessionId, sessionEpoch,
      topics: partitions.length === 0 ? [] : [{ name: MANY, partitions: partitions.map(([partition, fetchOffset]) => ({ partition, fetchOffset, currentLeaderEpoch: 0, partitionMaxBytes: 1 << 20 })) }],
    });
    const named = (res: FetchResponse) => res.topics.flatMap((t) => t.partitions.map((x) => x.partition)).sort((a, b) => a - b);
    const opened = await fetch(0, 0, Array.from({ length: 20 }, (_, i) => [i, i === 0 ? 1 : 0] as [number, number]));
    expect(opened.errorCode).to.equal(0);
    expect(opened.sessionId).to.be.greaterThan(0);
    expect(named(opened), 'the first answer names every partition').to.deep.equal(Array.from({ length: 20 }, (_, i) => i));
    const quiet = await fetch(opened.sessionId!, 1, []);
    expect(named(quiet), 'nothing new anywhere').to.deep.equal([]);
    const waiting = fetch(opened.sessionId!, 2, [], 10_000);
    expect((await c.produce(1, MANY, 1, batchOf('b'), { partition: 7 })).errorCode).to.equal(0);
    const woke = await within('the session fetch to wake on the append', waiting);
    expect(named(woke), 'only the partition that was appended to').to.deep.equal([7]);
    expect(valuesIn(woke.topics[0]!.partitions[0]!.records)).to.deep.equal(['b']);
    expect((await fetch(opened.sessionId!, 9, [])).errorCode).to.equal(Errors.INVALID_FETCH_SESSION_EPOCH.code);
    expect((await fetch(opened.sessionId!, 4, [])).errorCode, 'a wrong epoch ended the session').to.equal(Errors.FETCH_SESSION_ID_NOT_FOUND.code);
    const consumer = await c.request<FetchResponse>(1, ApiKey.Fetch, { replicaId: -1, maxWaitMs: 0, sessionId: 0, sessionEpoch: 0, topics: [] });
    expect(consumer.errorCode).to.equal(Errors.INVALID_REQUEST.code);
  });

  it('a follower whose session the leader dropped opens a new one and goes on replicating', async () => {
    const c = await threeNodes();
    expect((await c.produce(1, T, -1, batchOf('a'))).errorCode).to.equal(0);
    // Open a session as broker 2: the leader keeps one session per replica, so the real fetcher's is gone.
    const taken = await c.request<FetchResponse>(1, ApiKey.Fetch, {
      replicaId: 2, brokerEpoch: c.node(2).brokerEpoch, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, sessionId: 0, sessionEpoch: 0,
      topics: [{ name: T, partitions: [{ partition: 0, fetchOffset: log(2).logEndOffset, currentLeaderEpoch: 0, partitionMaxBytes: 1 << 20 }] }],
    });
    expect(taken.errorCode).to.equal(0);
    for (const v of ['b', 'c', 'd']) expect((await c.produce(1, T, -1, batchOf(v))).errorCode, `acks=all of ${v} needs broker 2`).to.equal(0);
    await waitFor('broker 2 holds every record', () => log(2).logEndOffset === 4);
    expect(readAllBytes(log(2)).equals(readAllBytes(log(1)))).to.equal(true);
  });

  it('keeps followers of idle partitions in the ISR while their fetches name only a busy partition', async () => {
    // Simulated time: the brokers' clock and timers move only when the test says so. Each
    // acks=all produce waits for both followers (real sockets), then 50 ms pass; over four lag
    // times the ISR check (every lag time / 2) runs eight times and must find no one lagging.
    const scheduler = new ManualScheduler();
    cluster = await TestCluster.start([1, 2, 3], { replicaLagTimeMaxMs: 300, clock: scheduler.clock, scheduler });
    const c = cluster;
    c.createTopic('mixed', 'tid-mixed', Array.from({ length: 10 }, () => ({ replicas: [1, 2, 3] })));
    const started = scheduler.clock.monotonicMs();
    for (let i = 0; i < 24; i++) {
      expect((await c.produce(1, 'mixed', -1, batchOf(`v${i}`), { partition: 0 })).errorCode).to.equal(0);
      scheduler.advance(50);
    }
    expect(scheduler.clock.monotonicMs() - started, 'the traffic outlasted the lag time').to.equal(4 * 300);
    expect(c.alterCalls.filter((call) => call.newIsr.length < 3), 'no ISR shrink').to.deep.equal([]);
    for (let p = 0; p < 10; p++) expect(c.registration('mixed', p).isr).to.have.length(3);
    // The check does see a follower that stops: broker 3 goes away and simulated time moves on,
    // 10 ms per real poll (so broker 2's fetches keep arriving in between), until it is shrunk.
    await c.stopNode(3);
    const now = (): number => scheduler.clock.monotonicMs();
    const lagsFrom = c.node(1).rm.partition('mixed', 0)!.leader!.follower(3)!.lastCaughtUpMs + 300;
    const shrunk = (): boolean => c.alterCalls.some((call) => !call.newIsr.includes(3));
    await waitFor('a lag time since broker 3 last caught up', () => {
      scheduler.advance(Math.min(10, lagsFrom - now()));
      return now() >= lagsFrom;
    });
    expect(shrunk(), 'not shrunk within the lag time').to.equal(false);
    await waitFor('a shrink without broker 3', () => {
      scheduler.advance(10);
      return shrunk();
    });
  });

  it('times acks=all out while an ISR follower is down, and asks the controller to shrink it after the lag time', async () => {
    const time = new ManualScheduler();
    const c = await threeNodes({ clock: time.clock, scheduler: time });
    c.controllerMode = 'hold';
    expect((await c.produce(1, T, -1, batchOf('a'))).errorCode).to.equal(0);
    await c.stopNode(3);
    const sentAt = time.clock.monotonicMs();
    let answeredAt = -1;
    const waiting = c.produce(1, T, -1, batchOf('b'), { timeoutMs: 300 }).then((r) => {
      answeredAt = time.clock.monotonicMs();
      return r;
    });
    await waitAdvancing(time, 'the acks=all answer', () => answeredAt >= 0);
    expect(answeredAt - sentAt, 'answered at its timeout, not before').to.be.at.least(300);
    expect(await waiting).to.include({ errorCode: Errors.REQUEST_TIMED_OUT.code, baseOffset: 1 });
    const lagsFrom = part(1).leader!.follower(3)!.lastCaughtUpMs + 500;
    const shrunk = (): boolean => c.alterCalls.some((call) => !call.newIsr.includes(3));
    await waitFor('a lag time since broker 3 last caught up', () => {
      time.advance(Math.min(10, lagsFrom - time.clock.monotonicMs()));
      return time.clock.monotonicMs() >= lagsFrom;
    });
    expect(shrunk(), 'not shrunk within the lag time').to.equal(false);
    await waitAdvancing(time, 'a shrink without broker 3', shrunk);
    const shrink = c.alterCalls.find((call) => !call.newIsr.includes(3))!;
    expect(shrink).to.include({ brokerId: 1, topicId: TID, partition: 0, leaderEpoch: 0, partitionEpoch: 0 });
    expect(shrink.newIsr).to.include(1);
    expect(log(1).highWatermark, 'an uncommitted shrink still counts broker 3').to.equal(1);

    // The controller commits the shrink: the batch is committed without broker 3.
    c.changePartition(TID, 0, { isr: [1, 2] });
    await waitAdvancing(time, 'HW passes the batch', () => log(1).highWatermark === 2);
    c.controllerMode = 'commit';
    expect((await c.produce(1, T, -1, batchOf('c'))).errorCode).to.equal(0);
  });

  it('refuses acks=all below min.insync.replicas, and takes stopped followers back once they caught up', async () => {
    const time = new ManualScheduler();
    const c = await threeNodes({ clock: time.clock, scheduler: time });
    const wait = (what: string, cond: () => boolean): Promise<void> => waitAdvancing(time, what, cond);
    c.setTopicConfig(T, 'min.insync.replicas', '2');
    expect((await c.produce(1, T, -1, batchOf('a'))).errorCode).to.equal(0);
    await c.stopNode(3);
    await wait('ISR shrinks to [1, 2]', () => sameMembers(c.registration(T).isr, [1, 2]));
    expect((await c.produce(1, T, -1, batchOf('b'))).errorCode, 'two in sync are enough').to.equal(0);
    await c.stopNode(2);
    await wait('ISR shrinks to [1]', () => sameMembers(c.registration(T).isr, [1]));

    const end = log(1).logEndOffset;
    const refused = await c.produce(1, T, -1, batchOf('c'));
    expect(refused).to.include({ errorCode: Errors.NOT_ENOUGH_REPLICAS.code, baseOffset: -1 });
    expect(log(1).logEndOffset, 'nothing appended').to.equal(end);
    expect((await c.produce(1, T, 1, batchOf('d'))).errorCode, 'acks=1 still works').to.equal(0);

    await c.startNode(2); // restarted over its data, at a new address
    await c.startNode(3);
    await wait('both rejoin the ISR', () => sameMembers(c.registration(T).isr, [1, 2, 3]));
    expect((await c.produce(1, T, -1, batchOf('e'))).errorCode).to.equal(0);
    expect(await c.consume(1, T)).to.deep.equal(['a', 'b', 'd', 'e']);
    await wait('every replica holds the same log', () => sameLog(1, 2) && sameLog(1, 3));
  });

  it('answers NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrinks below the minimum while acks=all waits', async () => {
    const c = await threeNodes();
    c.setTopicConfig(T, 'min.insync.replicas', '2');
    c.controllerMode = 'hold';
    expect((await c.produce(1, T, -1, batchOf('a'))).errorCode).to.equal(0);
    await c.stopNode(2);
    await c.stopNode(3);
    const waiting = c.produce(1, T, -1, batchOf('b'), { timeoutMs: 30_000 });
    await waitFor('the batch is appended', () => log(1).logEndOffset === 2);
    c.changePartition(TID, 0, { isr: [1] });
    const res = await within('the acks=all answer', waiting);
    expect(res).to.include({ errorCode: Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND.code, baseOffset: 1 });
  });

  it('moves leadership: the old leader follows and refuses produce; stale and future epochs are refused', async () => {
    const c = await threeNodes();
    expect((await c.produce(1, T, -1, batchOf('a', 'b'))).errorCode).to.equal(0);
    c.changePartition(TID, 0, { leader: 2 });
    expect(part(1)).to.include({ isLeader: false, leaderId: 2, leaderEpoch: 1 });
    expect(part(2)).to.include({ isLeader: true, leaderEpoch: 1 });
    expect(part(3)).to.include({ isLeader: false, leaderId: 2 });

    expect((await c.produce(1, T, 1, batchOf('x'))).errorCode).to.equal(Errors.NOT_LEADER_OR_FOLLOWER.code);
    expect((await c.fetch(1, T, 0, { currentLeaderEpoch: 1 })).errorCode).to.equal(Errors.NOT_LEADER_OR_FOLLOWER.code);
    expect((await c.fetch(2, T, 0, { currentLeaderEpoch: 0 })).errorCode).to.equal(Errors.FENCED_LEADER_EPOCH.code);
    expect((await c.fetch(2, T, 0, { currentLeaderEpoch: 2 })).errorCode).to.equal(Errors.UNKNOWN_LEADER_EPOCH.code);
    expect((await c.fetch(2, T, 0, { currentLeaderEpoch: 1 })).errorCode).to.equal(0);

    type Answers = { topics: Array<{ partitions: Array<{ errorCode: number }> }> };
    const listOffsets = await c.request<Answers>(2, ApiKey.ListOffsets, {
      replicaId: -1, topics: [{ name: T, partitions: [{ partition: 0, currentLeaderEpoch: 0, timestamp: -1 }] }],
    });
    expect(listOffsets.topics[0]!.partitions[0]!.errorCode).to.equal(Errors.FENCED_LEADER_EPOCH.code);
    const epochQuery = await c.request<Answers>(2, ApiKey.OffsetForLeaderEpoch, {
      replicaId: 3, topics: [{ name: T, partitions: [{ partition: 0, currentLeaderEpoch: 5, leaderEpoch: 0 }] }],
    });
    expect(epochQuery.topics[0]!.partitions[0]!.errorCode).to.equal(Errors.UNKNOWN_LEADER_EPOCH.code);

    expect(await c.produce(2, T, -1, batchOf('c'))).to.include({ errorCode: 0, baseOffset: 2 });
    expect(log(1).logEndOffset, 'the old leader replicated it before acks=all returned').to.equal(3);
    await waitFor('every replica holds the same log', () => sameLog(2, 1) && sameLog(2, 3));
    expect(log(1).epochEntries()).to.deep.equal([{ epoch: 0, startOffset: 0 }, { epoch: 1, startOffset: 2 }]);
  });

  it('drops the divergent tail an old leader wrote, so its log equals the new leader\'s', async () => {
    const c = await threeNodes();
    expect((await c.produce(1, T, -1, batchOf('a'))).errorCode).to.equal(0);
    expect((await c.produce(1, T, -1, batchOf('b'))).errorCode).to.equal(0);
    c.controllerMode = 'hold';
    // Broker 1 is cut off from its followers (its listener goes away) but still leads.
    await c.node(1).server.close();
    for (const v of ['x1', 'x2', 'x3']) {
      const r = c.node(1).rm.produce({ acks: 1, timeoutMs: 1000, topics: [{ name: T, partitions: [{ partition: 0, records: batchOf(v) }] }] });
      expect((r as { topics: Array<{ partitions: Array<{ errorCode: number }> }> }).topics[0]!.partitions[0]!.errorCode).to.equal(0);
    }
    expect(log(1).logEndOffset).to.equal(5);
    expect(log(2).logEndOffset).to.equal(2);

    // The controller elects broker 2 from the ISR it can reach.
    c.controllerMode = 'commit';
    c.changePartition(TID, 0, { leader: 2, isr: [2, 3] });
    expect(await c.produce(2, T, -1, batchOf('c'))).to.include({ errorCode: 0, baseOffset: 2 });
    await waitFor('the old leader holds the new leader\'s log', () => sameLog(2, 1));
    expect(valuesIn(readAllBytes(log(1)))).to.deep.equal(['a', 'b', 'c']);
    expect(log(1).epochEntries()).to.deep.equal(log(2).epochEntries());
    await waitFor('the old leader rejoins the ISR', () => c.registration(T).isr.includes(1));
    expect(c.alterCalls.filter((call) => call.brokerId === 2).map((call) => [...call.newIsr].sort())).to.deep.include([1, 2, 3]);
  });

  it('keeps one AlterPartition in flight: a stale answer to an earlier call does not release a newer one', async () => {
    const c = cluster = await TestCluster.start([1, 2, 3]);
    c.controllerMode = 'hold';
    c.createTopic(T, TID, [{ replicas: [1, 2, 3], isr: [1, 2] }]);
    await waitFor('the leader asks to add broker 3', () => c.held.length === 1);
    const first = c.held[0]!;
    expect(first.req).to.include({ partitionEpoch: 0 });
    expect([...first.req.newIsr].sort()).to.deep.equal([1, 2, 3]);
    // The controller changes the partition for another reason: the first call is now stale.
    c.changePartition(TID, 0, { isr: [1, 2] });
    await waitFor('a new request on partition epoch 1', () => c.held.length === 2);
    const second = c.held[1]!;
    expect(second.req).to.include({ partitionEpoch: 1 });

    c.answerHeld(first, { errorCode: Errors.INVALID_UPDATE_VERSION.code, errorMessage: 'stale partition epoch' });
    await new Promise((r) => setImmediate(r));
    // Let broker 3 fetch again: each of its fetches makes the leader consider the ISR.
    const progress = () => part(1).leader!.follower(3)!.lastFetchMs;
    const seen = progress();
    await waitFor('another fetch from broker 3', () => progress() > seen);
    expect(c.alterCalls, 'the second call is still in flight: no third').to.have.length(2);

    c.answerHeld(second);
    await waitFor('broker 3 joins', () => sameMembers(c.registration(T).isr, [1, 2, 3]));
  });

  for (const durability of ['replication', 'fsync'] as const) {
    it(`keeps replicating the other partitions when one follower log fails (${durability})`, async () => {
      const c = await threeNodes({ durability });
      c.createTopic('second', 'tid-second', [{ replicas: [1, 2, 3] }]);
      c.controllerMode = 'hold'; // broker 2 stays in both ISRs: acks=all needs its fetches
      log(2).closeForDelete(); // a disk failure under broker 2's events-0: every operation on it throws
      await c.produce(1, T, 1, batchOf('a'));
      const r = await c.produce(1, 'second', -1, batchOf('b'), { timeoutMs: 10_000 });
      expect(r.errorCode, 'broker 2 replicated second-0 despite events-0').to.equal(0);
      expect(log(2, 'second').logEndOffset).to.equal(1);
    });
  }

  it('follows a leader that restarted at a new address', async () => {
    const c = await threeNodes();
    expect((await c.produce(1, T, -1, batchOf('a'))).errorCode).to.equal(0);
    const oldUrl = c.node(1).url;
    await c.stopNode(1);
    await c.startNode(1); // same data, new port, same leadership in the image
    expect(c.node(1).url).to.not.equal(oldUrl);
    expect(part(1).isLeader).to.equal(true);
    expect((await c.produce(1, T, -1, batchOf('b'))).errorCode).to.equal(0);
    expect(await c.consume(1, T)).to.deep.equal(['a', 'b']);
    await waitFor('every replica holds the same log', () => sameLog(1, 2) && sameLog(1, 3));
  });

  it('applies topic config changes to the hosted logs, from a delta or from a whole image', async () => {
    const c = await threeNodes();
    c.publish([{ type: 'config', v: 1, resourceType: 'topic', resourceName: T, name: 'retention.ms', value: '123456' }], { withChanges: true });
    for (const id of [1, 2, 3]) expect(log(id).logConfig.retentionMs, `broker ${id}`).to.equal(123456);
    // A whole image (changes null: what a broker gets after a snapshot restore).
    c.publish([{ type: 'config', v: 1, resourceType: 'topic', resourceName: T, name: 'retention.ms', value: '654321' }]);
    for (const id of [1, 2, 3]) expect(log(id).logConfig.retentionMs, `broker ${id}`).to.equal(654321);
  });

  it('DeleteRecords moves the log start on the leader, deletes segments below it, checkpoints it, and followers follow', async () => {
    const c = await threeNodes();
    c.setTopicConfig(T, 'segment.bytes', String(16 * 1024));
    const big = 'x'.repeat(4000);
    for (let i = 0; i < 12; i++) expect((await c.produce(1, T, -1, batchOf(`${big}${i}`))).errorCode).to.equal(0);
    const segmentsBefore = log(1).numberOfSegments;
    expect(segmentsBefore, 'several segments').to.be.greaterThan(2);
    const del = async (id: number, offset: number) => (await (await c.link(id)).request<DeleteRecordsResponse>(ApiKey.DeleteRecords, 0, {
      topics: [{ name: T, partitions: [{ partition: 0, offset }] }],
    }, 10_000)).topics[0]!.partitions[0]!;

    expect(await del(1, 9)).to.include({ errorCode: 0, lowWatermark: 9 });
    expect(log(1).logStartOffset).to.equal(9);
    expect(log(1).numberOfSegments, 'segments wholly below 9 deleted').to.be.lessThan(segmentsBefore);
    const checkpoint = fs.readFileSync(path.join(c.node(1).dataDir, 'log-start-offset-checkpoint'), 'utf8');
    expect(checkpoint.split('\n'), 'checkpointed before the answer').to.include(`${T} 0 9`);
    expect((await c.fetch(1, T, 3)).errorCode, 'below the new start').to.equal(Errors.OFFSET_OUT_OF_RANGE.code);
    expect(valuesIn((await c.fetch(1, T, 9)).records, 9)[0]).to.equal(`${big}9`);
    await waitFor('followers follow the leader\'s log start', () => [2, 3].every((id) => log(id).logStartOffset === 9));

    expect(await del(1, 13), 'past the high watermark').to.include({ errorCode: Errors.OFFSET_OUT_OF_RANGE.code, lowWatermark: -1 });
    expect(await del(1, -5)).to.include({ errorCode: Errors.OFFSET_OUT_OF_RANGE.code });
    expect(await del(2, 10), 'a follower').to.include({ errorCode: Errors.NOT_LEADER_OR_FOLLOWER.code });
    expect(await del(1, 4), 'below the start: nothing moves').to.include({ errorCode: 0, lowWatermark: 9 });
    expect(await del(1, -1), '-1 is the high watermark').to.include({ errorCode: 0, lowWatermark: 12 });
    expect(log(1).logStartOffset).to.equal(12);
    await waitFor('followers at 12', () => [2, 3].every((id) => log(id).logStartOffset === 12));
    await c.stopNode(2);
    await c.startNode(2);
    expect(log(2).logStartOffset, 'a restarted follower keeps it').to.equal(12);
  });

  it('removes a deleted topic\'s replicas and directories', async () => {
    const c = await threeNodes();
    c.createTopic('other', 'tid-other', [{ replicas: [1, 2, 3] }, { replicas: [2, 3, 1] }]);
    expect((await c.produce(1, T, -1, batchOf('a'))).errorCode).to.equal(0);
    expect((await c.produce(1, 'other', -1, batchOf('b'))).errorCode).to.equal(0);
    expect((await c.produce(2, 'other', -1, batchOf('c'), { partition: 1 })).errorCode).to.equal(0);
    const dirOf = (id: number, name: string) => path.join(c.node(id).dataDir, name);
    for (const id of [1, 2, 3]) expect(fs.existsSync(dirOf(id, `${T}-0`))).to.equal(true);

    const expectGone = (topic: string, partitions: number[]) => {
      for (const id of [1, 2, 3]) {
        for (const p of partitions) {
          expect(c.node(id).rm.partition(topic, p), `broker ${id} ${topic}-${p}`).to.equal(undefined);
          expect(c.node(id).logs.getLog(topic, p)).to.equal(undefined);
          expect(fs.existsSync(dirOf(id, `${topic}-${p}`)), `directory of ${topic}-${p} on ${id}`).to.equal(false);
        }
        expect(fs.readdirSync(c.node(id).dataDir).filter((n) => n.endsWith('-delete')), 'no half-deleted directory').to.deep.equal([]);
      }
    };
    c.publish([{ type: 'removeTopic', v: 1, topicId: TID }]); // from the whole image
    expectGone(T, [0]);
    expect(c.node(3).rm.partition('other', 1), 'other topics stay').to.not.equal(undefined);
    c.publish([{ type: 'removeTopic', v: 1, topicId: 'tid-other' }], { withChanges: true }); // from the delta's changes
    expectGone('other', [0, 1]);
    expect((await c.produce(1, T, 1, batchOf('z'))).errorCode).to.equal(Errors.UNKNOWN_TOPIC_OR_PARTITION.code);
  });

  it('replicates in fsync durability mode, counting only flushed data toward the high watermark', async () => {
    const c = await threeNodes({ durability: 'fsync' });
    c.createTopic('more', 'tid-more', [{ replicas: [2, 3, 1] }]);
    for (let i = 0; i < 4; i++) {
      const r = await c.produce(1, T, -1, batchOf(`v${i}`));
      expect(r.errorCode).to.equal(0);
      for (const id of [1, 2, 3]) expect(log(id).recoveryPoint, `broker ${id} flushed offset ${r.baseOffset}`).to.be.greaterThan(r.baseOffset);
    }
    // Concurrent appends to partitions led by different brokers: group commits.
    const answers = await Promise.all([0, 1, 2].flatMap((i) => [
      c.produce(1, T, -1, batchOf(`w${i}`)),
      c.produce(2, 'more', -1, batchOf(`m${i}`)),
    ]));
    expect(answers.map((a) => a.errorCode)).to.deep.equal([0, 0, 0, 0, 0, 0]);
    expect(await c.consume(1, T)).to.deep.equal(['v0', 'v1', 'v2', 'v3', 'w0', 'w1', 'w2']);
    expect(await c.consume(2, 'more')).to.deep.equal(['m0', 'm1', 'm2']);
    await waitFor('every replica holds the same logs', () => sameLog(1, 2) && sameLog(1, 3) && sameLog(2, 1, 'more') && sameLog(2, 3, 'more'));
  });
});
