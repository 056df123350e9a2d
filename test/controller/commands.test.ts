import { expect } from 'chai';
import { MetadataDelta } from '../../src/metadata/delta.js';
import { MetadataImage } from '../../src/metadata/image.js';
import type { MetadataRecord } from '../../src/metadata/records.js';
import { ManualClock } from '../../src/util/clock.js';
import { SeededRng } from '../../src/util/rng.js';
import { silentLogger } from '../../src/util/logger.js';
import { BrokerHeartbeats } from '../../src/controller/decisions/broker-heartbeats.js';
import type { CommandContext, CommandResult } from '../../src/controller/context.js';
import { brokerHeartbeat, fenceExpiredBrokers, registerBroker } from '../../src/controller/cluster-control.js';
import { alterPartition, alterReassignments, createPartitions, createTopics, deleteTopics, electLeaders, electPreferredLeaders, listReassignments } from '../../src/controller/replication-control.js';
import { allocateProducerIds, alterConfigs, describeConfigs } from '../../src/controller/config-control.js';
import { Errors } from '../../src/util/errors.js';

/** Applies every command's records at once, like an active controller whose proposals commit. */
class Harness {
  image = MetadataImage.EMPTY;
  offset = 0;
  readonly clock = new ManualClock();
  readonly heartbeats = new BrokerHeartbeats(this.clock, 9000);
  readonly rng = new SeededRng(7);
  epochs = new Map<number, number>();

  ctx(): CommandContext {
    return { image: this.image, nextOffset: this.offset + 1, clock: this.clock, rng: this.rng, heartbeats: this.heartbeats, logger: silentLogger };
  }

  run<R>(command: (ctx: CommandContext) => CommandResult<R>): R {
    const { records, response } = command(this.ctx());
    this.commit(records);
    return response;
  }

  commit(records: readonly MetadataRecord[]): void {
    if (records.length === 0) return;
    const delta = new MetadataDelta(this.image);
    delta.replayBatch(records, ++this.offset);
    this.image = delta.apply();
  }

  startBroker(id: number, incarnation = `inc-${id}`, rack: string | null = null): void {
    const res = this.run((c) => registerBroker(c, { brokerId: id, incarnationId: incarnation, clusterId: 'c', endpoints: [{ name: 'CLIENT', url: `ws://127.0.0.1:${9000 + id}` }], rack }));
    if (res.error) throw new Error(res.message);
    this.epochs.set(id, res.brokerEpoch);
    const hb = this.run((c) => brokerHeartbeat(c, { brokerId: id, brokerEpoch: res.brokerEpoch, currentMetadataOffset: this.offset, wantShutdown: false }));
    expect(hb).to.include({ error: null, isFenced: false });
  }

  heartbeat(id: number, wantShutdown = false, unreachableBrokers: number[] = []) {
    return this.run((c) => brokerHeartbeat(c, { brokerId: id, brokerEpoch: this.epochs.get(id)!, currentMetadataOffset: this.offset, wantShutdown, unreachableBrokers }));
  }
}

function cluster(n = 3): Harness {
  const h = new Harness();
  h.commit([{ type: 'cluster', v: 1, clusterId: 'c', metadataVersion: 1 }]);
  for (let i = 1; i <= n; i++) h.startBroker(i);
  return h;
}

describe('controller commands', () => {
  describe('broker lifecycle', () => {
    it('registers fenced, unfences once caught up, refuses other clusters and stale epochs', () => {
      const h = cluster(0);
      const res = h.run((c) => registerBroker(c, { brokerId: 1, incarnationId: 'a', clusterId: 'c', endpoints: [], rack: null }));
      if (res.error) throw new Error('register failed');
      expect(h.image.brokers.get(1)!.fenced).to.equal(true);
      const behind = h.run((c) => brokerHeartbeat(c, { brokerId: 1, brokerEpoch: res.brokerEpoch, currentMetadataOffset: res.brokerEpoch - 1, wantShutdown: false }));
      expect(behind).to.include({ isFenced: true, isCaughtUp: false });
      const caught = h.run((c) => brokerHeartbeat(c, { brokerId: 1, brokerEpoch: res.brokerEpoch, currentMetadataOffset: res.brokerEpoch, wantShutdown: false }));
      expect(caught).to.include({ isFenced: false, isCaughtUp: true });
      expect(h.image.brokers.get(1)!.fenced).to.equal(false);
      const other = h.run((c) => registerBroker(c, { brokerId: 2, incarnationId: 'b', clusterId: 'other', endpoints: [], rack: null }));
      expect(other.error).to.equal(Errors.INCONSISTENT_CLUSTER_ID);
      const stale = h.run((c) => brokerHeartbeat(c, { brokerId: 1, brokerEpoch: 999, currentMetadataOffset: 0, wantShutdown: false }));
      expect(stale.error).to.equal(Errors.STALE_BROKER_EPOCH);
    });

    it('fences a broker after the session timeout: out of ISRs, leaderships moved, sole-ISR partitions offline', () => {
      const h = cluster(3);
      h.run((c) => createTopics(c, [{ name: 'a', numPartitions: 6, replicationFactor: 3, configs: {} }, { name: 'solo', numPartitions: 3, replicationFactor: 1, configs: {} }]));
      h.clock.advance(5000);
      h.heartbeat(1);
      h.heartbeat(2);
      h.clock.advance(5000);
      expect(h.run((c) => fenceExpiredBrokers(c))).to.deep.equal([3]);
      expect(h.image.brokers.get(3)!.fenced).to.equal(true);
      for (const [, reg] of h.image.topic('a')!.partitions) {
        expect(reg.isr).to.not.include(3);
        expect(reg.leader).to.not.equal(3);
      }
      const soloOn3 = [...h.image.topic('solo')!.partitions.values()].filter((r) => r.replicas[0] === 3);
      expect(soloOn3.length).to.be.greaterThan(0);
      for (const reg of soloOn3) expect(reg).to.include({ leader: -1 }).and.to.have.deep.property('isr', [3]);
    });

    it('brings offline partitions back when the broker returns, and re-prefers its leaderships', () => {
      const h = cluster(3);
      h.run((c) => createTopics(c, [{ name: 'a', numPartitions: 3, replicationFactor: 3, configs: {} }, { name: 'solo', numPartitions: 3, replicationFactor: 1, configs: {} }]));
      const preferredBy3 = [...h.image.topic('a')!.partitions.entries()].filter(([, r]) => r.replicas[0] === 3).map(([p]) => p);
      h.clock.advance(9001);
      h.heartbeat(1);
      h.heartbeat(2);
      h.run((c) => fenceExpiredBrokers(c));
      // broker 3 restarts: a new incarnation, caught up → unfenced
      h.startBroker(3, 'inc-3-b');
      for (const reg of h.image.topic('solo')!.partitions.values()) expect(reg.leader).to.equal(reg.replicas[0]);
      // it rejoins ISRs only through AlterPartition from the leader, so preferred leadership waits for that
      for (const p of preferredBy3) {
        const reg = h.image.topic('a')!.partitions.get(p)!;
        const res = h.run((c) => alterPartition(c, { brokerId: reg.leader, brokerEpoch: h.epochs.get(reg.leader)!, topicId: h.image.topic('a')!.topicId, partition: p, leaderEpoch: reg.leaderEpoch, partitionEpoch: reg.partitionEpoch, newIsr: [...reg.isr, 3] }));
        expect(res.errorCode).to.equal(0);
      }
      h.run((c) => electPreferredLeaders(c, null));
      for (const p of preferredBy3) expect(h.image.topic('a')!.partitions.get(p)!.leader).to.equal(3);
    });

    it('fences a silent leader early once a follower reports it unreachable: its leaderships move inside the ISR, nothing else changes', () => {
      const h = cluster(3);
      h.heartbeats.setSuspectTimeoutMs(1000);
      h.run((c) => createTopics(c, [{ name: 'a', numPartitions: 6, replicationFactor: 3, configs: {} }]));
      const before = new Map(h.image.topic('a')!.partitions);
      h.heartbeat(1);
      h.heartbeat(2, false, [3]);
      expect(h.run((c) => fenceExpiredBrokers(c)), 'broker 3 was heard from a moment ago').to.deep.equal([]);
      h.clock.advance(1000);
      h.heartbeat(1);
      h.heartbeat(2, false, [1, 3]);
      expect(h.run((c) => fenceExpiredBrokers(c)), 'broker 1 heartbeats: broker 2\'s word alone fences nobody').to.deep.equal([3]);
      expect(h.image.brokers.get(3)!.fenced).to.equal(true);
      expect(h.image.brokers.get(1)!.fenced).to.equal(false);
      for (const [p, reg] of h.image.topic('a')!.partitions) {
        const was = before.get(p)!;
        expect(reg.isr).to.deep.equal(was.isr.filter((b) => b !== 3));
        if (was.leader === 3) {
          expect(was.isr, 'the new leader was in the ISR the old leader used').to.include(reg.leader);
          expect(reg.leaderEpoch).to.equal(was.leaderEpoch + 1);
        } else {
          expect(reg.leader).to.equal(was.leader);
        }
      }
      // Alive after all (a GC pause): its next heartbeat unfences it, and it rejoins the ISRs through its leaders.
      expect(h.heartbeat(3)).to.include({ error: null, isFenced: false });
    });

    it('a new incarnation is fenced and leaves every ISR at once', () => {
      const h = cluster(3);
      h.run((c) => createTopics(c, [{ name: 'a', numPartitions: 3, replicationFactor: 3, configs: {} }]));
      const res = h.run((c) => registerBroker(c, { brokerId: 2, incarnationId: 'restarted', clusterId: 'c', endpoints: [], rack: null }));
      expect(res.error).to.equal(null);
      expect(h.image.brokers.get(2)!.fenced).to.equal(true);
      for (const reg of h.image.topic('a')!.partitions.values()) {
        expect(reg.isr).to.not.include(2);
        expect(reg.leader).to.not.equal(2);
      }
    });

    it('controlled shutdown moves leaderships away before saying shouldShutdown', () => {
      const h = cluster(3);
      h.run((c) => createTopics(c, [{ name: 'a', numPartitions: 6, replicationFactor: 3, configs: {} }]));
      const res = h.heartbeat(1, true);
      expect(res).to.include({ error: null, shouldShutdown: true });
      expect(h.image.brokers.get(1)!.inControlledShutdown).to.equal(true);
      for (const reg of h.image.topic('a')!.partitions.values()) expect(reg.leader).to.not.equal(1);
    });

    it('unclean election happens only when the topic enables it', () => {
      for (const unclean of [false, true]) {
        const h = cluster(3);
        h.run((c) => createTopics(c, [{ name: 'u', numPartitions: 1, replicationFactor: 3, configs: { 'unclean.leader.election.enable': String(unclean) } }]));
        const t = h.image.topic('u')!;
        let reg = t.partitions.get(0)!;
        const leader = reg.leader;
        h.run((c) => alterPartition(c, { brokerId: leader, brokerEpoch: h.epochs.get(leader)!, topicId: t.topicId, partition: 0, leaderEpoch: reg.leaderEpoch, partitionEpoch: reg.partitionEpoch, newIsr: [leader] }));
        for (const b of [1, 2, 3]) if (b !== leader) h.heartbeat(b);
        h.clock.advance(9001);
        for (const b of [1, 2, 3]) if (b !== leader) h.heartbeat(b);
        h.run((c) => fenceExpiredBrokers(c));
        reg = h.image.topic('u')!.partitions.get(0)!;
        if (unclean) expect(reg.leader).to.not.equal(-1).and.to.not.equal(leader);
        else expect(reg.leader).to.equal(-1);
      }
    });
  });

  describe('topics', () => {
    it('creates topics with even placement, full ISRs and configs; rejects bad ones alone', () => {
      const h = cluster(3);
      const res = h.run((c) => createTopics(c, [
        { name: 'good', numPartitions: 6, replicationFactor: 2, configs: { 'retention.ms': '1000' } },
        { name: 'bad name', numPartitions: 1, replicationFactor: 1, configs: {} },
        { name: 'big', numPartitions: 1, replicationFactor: 4, configs: {} },
        { name: 'cfg', numPartitions: 1, replicationFactor: 1, configs: { 'retention.ms': 'soon' } },
        { name: 'unknowncfg', numPartitions: 1, replicationFactor: 1, configs: { 'no.such': '1' } },
        { name: 'good', numPartitions: 1, replicationFactor: 1, configs: {} },
        { name: 'zero', numPartitions: 0, replicationFactor: 1, configs: {} },
      ]));
      expect(res.map((r) => r.errorCode)).to.deep.equal([0, 17, 38, 40, 40, 36, 37]);
      const good = h.image.topic('good')!;
      expect(good.partitions.size).to.equal(6);
      for (const reg of good.partitions.values()) {
        expect(reg.isr).to.deep.equal(reg.replicas);
        expect(reg.leader).to.equal(reg.replicas[0]);
      }
      expect(h.image.config('topic', 'good').get('retention.ms')).to.equal('1000');
      expect(h.image.topicsByName.size).to.equal(1);
    });

    it('uses cluster defaults for -1, adds partitions, deletes topics', () => {
      const h = cluster(3);
      h.run((c) => alterConfigs(c, [{ resourceType: 'cluster', resourceName: '', set: { 'num.partitions': '4', 'default.replication.factor': '3' }, delete: [] }]));
      const [made] = h.run((c) => createTopics(c, [{ name: 'd', numPartitions: -1, replicationFactor: -1, configs: {} }]));
      expect(made).to.include({ numPartitions: 4, replicationFactor: 3 });
      expect(h.run((c) => createPartitions(c, 'd', 3)).errorCode).to.equal(Errors.INVALID_PARTITIONS.code);
      expect(h.run((c) => createPartitions(c, 'd', 7)).errorCode).to.equal(0);
      expect(h.image.topic('d')!.partitions.size).to.equal(7);
      expect(h.image.topic('d')!.partitions.get(6)!.replicas).to.have.length(3);
      expect(h.run((c) => deleteTopics(c, ['d', 'nope'])).map((r) => r.errorCode)).to.deep.equal([0, 3]);
      expect(h.image.topic('d')).to.equal(undefined);
    });

    it('describes configs with their source and validates alters', () => {
      const h = cluster(1);
      h.run((c) => createTopics(c, [{ name: 't', numPartitions: 1, replicationFactor: 1, configs: { 'segment.bytes': '1048576' } }]));
      h.run((c) => alterConfigs(c, [{ resourceType: 'cluster', resourceName: '', set: { 'log.retention.ms': '5000' }, delete: [] }]));
      const described = new Map(describeConfigs(h.image, 'topic', 't')!.map((d) => [d.name, d]));
      expect(described.get('segment.bytes')).to.include({ value: '1048576', source: 'topic' });
      expect(described.get('retention.ms')).to.include({ value: '5000', source: 'cluster' });
      expect(described.get('cleanup.policy')).to.include({ value: 'delete', source: 'default' });
      const bad = h.run((c) => alterConfigs(c, [
        { resourceType: 'topic', resourceName: 'missing', set: { 'retention.ms': '1' }, delete: [] },
        { resourceType: 'topic', resourceName: 't', set: { 'min.insync.replicas': '0' }, delete: [] },
        { resourceType: 'topic', resourceName: 't', set: {}, delete: ['segment.bytes'] },
      ]));
      expect(bad.map((r) => r.errorCode)).to.deep.equal([3, 40, 0]);
      expect(h.image.config('topic', 't').has('segment.bytes')).to.equal(false);
    });
  });

  describe('partitions on given replicas, unclean elections on request', () => {
    it('adds partitions on the replica lists given, and refuses lists of the wrong count, size, duplicates or unknown brokers', () => {
      const h = cluster(3);
      h.run((c) => createTopics(c, [{ name: 'g', numPartitions: 1, replicationFactor: 2, configs: {} }]));
      for (const bad of [[[1, 2]], [[1], [2]], [[1, 1], [2, 3]], [[1, 9], [2, 3]]]) {
        const before = h.offset;
        expect(h.run((c) => createPartitions(c, 'g', 3, false, bad)).errorCode, JSON.stringify(bad)).to.equal(Errors.INVALID_REPLICA_ASSIGNMENT.code);
        expect(h.offset, 'nothing written').to.equal(before);
      }
      expect(h.run((c) => createPartitions(c, 'g', 3, true, [[1, 2], [3, 1]])).errorCode, 'validateOnly').to.equal(0);
      expect(h.image.topic('g')!.partitions.size).to.equal(1);
      expect(h.run((c) => createPartitions(c, 'g', 3, false, [[1, 2], [3, 1]])).errorCode).to.equal(0);
      const t = h.image.topic('g')!;
      expect([1, 2].map((p) => t.partitions.get(p)!.replicas)).to.deep.equal([[1, 2], [3, 1]]);
      expect(t.partitions.get(2)!.leader).to.equal(3);
    });

    it('elects an out-of-sync live replica of a leaderless partition when asked (unclean), and only then', () => {
      const h = cluster(3);
      h.run((c) => createTopics(c, [
        { name: 'u', numPartitions: -1, replicationFactor: -1, configs: {}, assignments: [[1, 2]] },
        { name: 'lone', numPartitions: -1, replicationFactor: -1, configs: {}, assignments: [[1]] },
      ]));
      const topicId = h.image.topic('u')!.topicId;
      const reg = h.image.topic('u')!.partitions.get(0)!;
      expect(h.run((c) => alterPartition(c, { brokerId: 1, brokerEpoch: h.epochs.get(1)!, topicId, partition: 0, leaderEpoch: reg.leaderEpoch, partitionEpoch: reg.partitionEpoch, newIsr: [1] })).errorCode).to.equal(0);
      const u0 = [{ topic: 'u', partition: 0 }];
      expect(h.run((c) => electLeaders(c, u0, 'unclean'))[0]!.errorCode, 'it has a leader').to.equal(Errors.ELECTION_NOT_NEEDED.code);
      h.clock.advance(9001);
      h.heartbeat(2);
      h.heartbeat(3);
      h.run((c) => fenceExpiredBrokers(c));
      expect(h.image.topic('u')!.partitions.get(0)).to.include({ leader: -1 });
      expect(h.run((c) => electLeaders(c, u0, 'preferred'))[0]!.errorCode, 'a clean election cannot').to.equal(Errors.PREFERRED_LEADER_NOT_AVAILABLE.code);
      expect(h.run((c) => electLeaders(c, [{ topic: 'lone', partition: 0 }], 'unclean'))[0]!.errorCode, 'no live replica').to.equal(Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE.code);
      expect(h.run((c) => electLeaders(c, u0, 'unclean'))[0]!.errorCode).to.equal(0);
      expect(h.image.topic('u')!.partitions.get(0)).to.deep.include({ leader: 2, isr: [2] });
    });
  });

  describe('reassignment and producer ids', () => {
    it('moves a partition onto a new broker through AlterPartition and lists it meanwhile', () => {
      const h = cluster(3);
      h.run((c) => createTopics(c, [{ name: 'r', numPartitions: 1, replicationFactor: 2, assignments: [[1, 2]], configs: {} }]));
      h.startBroker(4);
      h.run((c) => alterReassignments(c, [{ topic: 'r', partition: 0, replicas: [2, 4] }]));
      expect(listReassignments(h.image)).to.have.length(1);
      const t = h.image.topic('r')!;
      const reg = t.partitions.get(0)!;
      h.run((c) => alterPartition(c, { brokerId: 1, brokerEpoch: h.epochs.get(1)!, topicId: t.topicId, partition: 0, leaderEpoch: reg.leaderEpoch, partitionEpoch: reg.partitionEpoch, newIsr: [1, 2, 4] }));
      const done = h.image.topic('r')!.partitions.get(0)!;
      expect(done).to.deep.include({ replicas: [2, 4], isr: [2, 4], leader: 2 });
      expect(listReassignments(h.image)).to.have.length(0);
    });

    it('hands out disjoint producer id blocks', () => {
      const h = cluster(2);
      const a = h.run((c) => allocateProducerIds(c, 1, h.epochs.get(1)!));
      const b = h.run((c) => allocateProducerIds(c, 2, h.epochs.get(2)!));
      if (a.error || b.error) throw new Error('allocation failed');
      expect(b.firstProducerId).to.equal(a.firstProducerId + a.size);
      expect(h.run((c) => allocateProducerIds(c, 1, 12345)).error).to.equal(Errors.STALE_BROKER_EPOCH);
    });
  });
});

describe('auto leader rebalance', () => {
  it('finds partitions whose preferred replica is back in the ISR and moves leadership to it', async () => {
    const { imbalancedPartitions } = await import('../../src/controller/replication-control.js');
    const h = cluster(3);
    h.run((c) => createTopics(c, [{ name: 'a', numPartitions: 3, replicationFactor: 3, configs: {} }]));
    expect(imbalancedPartitions(h.image)).to.deep.equal([]);
    // broker 1 shuts down in a controlled way: its leaderships move away
    h.heartbeat(1, true);
    const movedAway = [...h.image.topic('a')!.partitions.entries()].filter(([, r]) => r.replicas[0] === 1).map(([p]) => p);
    expect(movedAway.length).to.be.greaterThan(0);
    expect(imbalancedPartitions(h.image), 'a broker shutting down is not acceptable').to.deep.equal([]);
    // it comes back (new incarnation) and rejoins the ISRs through the leaders
    h.startBroker(1, 'inc-1-b');
    for (const p of movedAway) {
      const t = h.image.topic('a')!;
      const reg = t.partitions.get(p)!;
      h.run((c) => alterPartition(c, { brokerId: reg.leader, brokerEpoch: h.epochs.get(reg.leader)!, topicId: t.topicId, partition: p, leaderEpoch: reg.leaderEpoch, partitionEpoch: reg.partitionEpoch, newIsr: [...reg.isr, 1] }));
    }
    expect(imbalancedPartitions(h.image).map((tp) => tp.partition).sort()).to.deep.equal(movedAway.sort());
    h.run((c) => electPreferredLeaders(c, imbalancedPartitions(c.image)));
    for (const p of movedAway) expect(h.image.topic('a')!.partitions.get(p)!.leader).to.equal(1);
    expect(imbalancedPartitions(h.image)).to.deep.equal([]);
  });
});
