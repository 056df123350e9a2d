import { expect } from 'chai';
import { placeReplicas } from '../../src/controller/decisions/placement.js';
import { electLeader, type ElectionContext } from '../../src/controller/decisions/election.js';
import { buildPartitionChange } from '../../src/controller/decisions/partition-change.js';
import { decideAlterPartition, type AlterPartitionRequest } from '../../src/controller/decisions/alter-partition.js';
import { cancelReassignment, startReassignment } from '../../src/controller/decisions/reassignment.js';
import { BrokerHeartbeats } from '../../src/controller/decisions/broker-heartbeats.js';
import { topicNameProblem, partitionCountProblem, replicationFactorProblem, collidingTopicName } from '../../src/controller/decisions/topic-rules.js';
import type { PartitionRegistration } from '../../src/metadata/image.js';
import { MetadataDelta } from '../../src/metadata/delta.js';
import { MetadataImage } from '../../src/metadata/image.js';
import { NO_LEADER } from '../../src/metadata/records.js';
import { SeededRng } from '../../src/util/rng.js';
import { ManualClock } from '../../src/util/clock.js';
import { Errors } from '../../src/util/errors.js';

const alive = (...ids: number[]): ElectionContext => ({ isAcceptableLeader: (b) => ids.includes(b), uncleanLeaderElectionEnabled: false });
const reg = (r: Partial<PartitionRegistration> & { replicas: number[] }): PartitionRegistration => ({
  isr: r.replicas, leader: r.replicas[0]!, leaderEpoch: 3, partitionEpoch: 7, addingReplicas: [], removingReplicas: [], ...r,
});

/** Applies a change record through the real replay path, to check `after` agrees with replay. */
function replayed(before: PartitionRegistration, record: object): PartitionRegistration {
  const d = new MetadataDelta(MetadataImage.EMPTY);
  d.replay({ type: 'topic', v: 1, name: 't', topicId: 'T' }, 1);
  d.replay({ type: 'partition', v: 1, topicId: 'T', partition: 0, ...before }, 2);
  d.replay(record as never, 3);
  return d.apply().partition('t', 0)!;
}

describe('controller decisions', () => {
  describe('topic rules', () => {
    it('follows Kafka naming rules', () => {
      expect(topicNameProblem('orders.v1_x-y')).to.equal(null);
      for (const bad of ['', '.', '..', 'a b', 'ä', 'x'.repeat(250), 'a/b']) expect(topicNameProblem(bad)?.code).to.equal(Errors.INVALID_TOPIC.code);
      expect(topicNameProblem('x'.repeat(249))).to.equal(null);
      expect(collidingTopicName('a.b', ['a_b', 'c'])).to.equal('a_b');
      expect(partitionCountProblem(0)?.code).to.equal(Errors.INVALID_PARTITIONS.code);
      expect(replicationFactorProblem(4, 3)?.code).to.equal(Errors.INVALID_REPLICATION_FACTOR.code);
      expect(replicationFactorProblem(3, 3)).to.equal(null);
    });
  });

  describe('placement', () => {
    const brokers = [1, 2, 3, 4, 5].map((id) => ({ id, rack: null }));

    it('gives each partition distinct replicas and spreads leaders and replicas evenly', () => {
      const plan = placeReplicas(brokers, 50, 3, new SeededRng(1));
      expect(plan).to.have.length(50);
      const leaders = new Map<number, number>();
      const load = new Map<number, number>();
      for (const r of plan) {
        expect(new Set(r).size).to.equal(3);
        leaders.set(r[0]!, (leaders.get(r[0]!) ?? 0) + 1);
        for (const b of r) load.set(b, (load.get(b) ?? 0) + 1);
      }
      expect([...leaders.values()]).to.deep.equal([10, 10, 10, 10, 10]);
      for (const n of load.values()) expect(n).to.equal(30);
    });

    it('is deterministic for a seed and varies its start across seeds', () => {
      expect(placeReplicas(brokers, 6, 2, new SeededRng(9))).to.deep.equal(placeReplicas(brokers, 6, 2, new SeededRng(9)));
      const firsts = new Set([1, 2, 3, 4, 5, 6, 7, 8].map((s) => placeReplicas(brokers, 1, 1, new SeededRng(s))[0]![0]));
      expect(firsts.size).to.be.greaterThan(1);
    });

    it('spreads each partition across racks when racks are set', () => {
      const racked = [{ id: 1, rack: 'a' }, { id: 2, rack: 'a' }, { id: 3, rack: 'b' }, { id: 4, rack: 'b' }, { id: 5, rack: 'c' }, { id: 6, rack: 'c' }];
      const rackOf = new Map(racked.map((b) => [b.id, b.rack]));
      for (let seed = 0; seed < 20; seed++) {
        for (const r of placeReplicas(racked, 12, 3, new SeededRng(seed))) {
          expect(new Set(r.map((b) => rackOf.get(b))).size, `replicas ${r}`).to.equal(3);
        }
      }
    });
  });

  describe('leader election', () => {
    it('picks the first live ISR member in assignment order', () => {
      expect(electLeader([3, 1, 2], [1, 2, 3], NO_LEADER, alive(1, 2)).leader).to.equal(1);
      expect(electLeader([3, 1, 2], [2, 3], NO_LEADER, alive(1, 2, 3)).leader).to.equal(3);
    });

    it('keeps a healthy leader unless the preferred one is asked for', () => {
      expect(electLeader([1, 2, 3], [1, 2, 3], 2, alive(1, 2, 3)).leader).to.equal(2);
      expect(electLeader([1, 2, 3], [1, 2, 3], 2, alive(1, 2, 3), true).leader).to.equal(1);
    });

    it('goes offline without a live ISR member; unclean election only when enabled', () => {
      const none = electLeader([1, 2, 3], [1], NO_LEADER, alive(2, 3));
      expect(none).to.deep.equal({ leader: NO_LEADER, isr: [1], kind: 'none' });
      const unclean = electLeader([1, 2, 3], [1], NO_LEADER, { ...alive(2, 3), uncleanLeaderElectionEnabled: true });
      expect(unclean).to.deep.equal({ leader: 2, isr: [2], kind: 'unclean' });
    });
  });

  describe('partition change builder', () => {
    it('moves leadership off a fenced leader, bumping epochs, and agrees with replay', () => {
      const before = reg({ replicas: [1, 2, 3] });
      const change = buildPartitionChange('T', 0, before, { isr: [2, 3] }, alive(2, 3));
      expect(change.record).to.include({ leader: 2 });
      expect(change.after).to.include({ leader: 2, leaderEpoch: 4, partitionEpoch: 8 });
      expect(replayed(before, change.record!)).to.deep.equal(change.after);
    });

    it('never empties the ISR: the last member stays and the partition goes offline', () => {
      const before = reg({ replicas: [1, 2, 3], isr: [1], leader: 1 });
      const change = buildPartitionChange('T', 0, before, { isr: [] }, alive(2, 3));
      expect(change.after.isr).to.deep.equal([1]);
      expect(change.after.leader).to.equal(NO_LEADER);
      expect(replayed(before, change.record!)).to.deep.equal(change.after);
    });

    it('emits nothing when nothing changes', () => {
      const before = reg({ replicas: [1, 2, 3] });
      expect(buildPartitionChange('T', 0, before, {}, alive(1, 2, 3)).record).to.equal(null);
    });

    it('controlled shutdown excludes a broker from leadership', () => {
      const before = reg({ replicas: [1, 2, 3] });
      const change = buildPartitionChange('T', 0, before, { isr: [2, 3], excludeLeaders: new Set([1]) }, alive(1, 2, 3));
      expect(change.after.leader).to.equal(2);
    });
  });

  describe('AlterPartition', () => {
    const current = reg({ replicas: [1, 2, 3], isr: [1, 2, 3], leader: 1 });
    const req = (over: Partial<AlterPartitionRequest>): AlterPartitionRequest => ({
      brokerId: 1, brokerEpoch: 100, topicId: 'T', partition: 0, leaderEpoch: 3, partitionEpoch: 7, newIsr: [1, 2], ...over,
    });
    const code = (r: ReturnType<typeof decideAlterPartition>) => (r.error ? r.error.name : 'OK');

    it('accepts a shrink from the current leader with current epochs', () => {
      const d = decideAlterPartition(current, req({}), 100, alive(1, 2, 3));
      expect(code(d)).to.equal('OK');
      if (!d.error) expect(d.change.after.isr).to.deep.equal([1, 2]);
    });

    it('rejects stale or future epochs, non-leaders, stale broker epochs', () => {
      expect(code(decideAlterPartition(current, req({ leaderEpoch: 2 }), 100, alive(1, 2, 3)))).to.equal('FENCED_LEADER_EPOCH');
      expect(code(decideAlterPartition(current, req({ leaderEpoch: 4 }), 100, alive(1, 2, 3)))).to.equal('UNKNOWN_LEADER_EPOCH');
      expect(code(decideAlterPartition(current, req({ partitionEpoch: 6 }), 100, alive(1, 2, 3)))).to.equal('INVALID_UPDATE_VERSION');
      expect(code(decideAlterPartition(current, req({ brokerId: 2 }), 100, alive(1, 2, 3)))).to.equal('NOT_LEADER_OR_FOLLOWER');
      expect(code(decideAlterPartition(current, req({}), 99, alive(1, 2, 3)))).to.equal('STALE_BROKER_EPOCH');
      expect(code(decideAlterPartition(undefined, req({}), 100, alive(1, 2, 3)))).to.equal('UNKNOWN_TOPIC_OR_PARTITION');
    });

    it('rejects an ISR without the leader, with strangers, or adding fenced brokers', () => {
      expect(code(decideAlterPartition(current, req({ newIsr: [] }), 100, alive(1, 2, 3)))).to.equal('INVALID_REQUEST');
      expect(code(decideAlterPartition(current, req({ newIsr: [2, 3] }), 100, alive(1, 2, 3)))).to.equal('INVALID_REQUEST');
      expect(code(decideAlterPartition(current, req({ newIsr: [1, 4] }), 100, alive(1, 2, 3, 4)))).to.equal('INVALID_REQUEST');
      const shrunk = reg({ replicas: [1, 2, 3], isr: [1], leader: 1 });
      expect(code(decideAlterPartition(shrunk, req({ newIsr: [1, 3] }), 100, alive(1, 2)))).to.equal('INELIGIBLE_REPLICA');
    });
  });

  describe('reassignment', () => {
    const registered = () => true;

    it('adds targets, completes when they join the ISR, and moves leadership off a leaving leader', () => {
      const before = reg({ replicas: [1, 2, 3], leader: 1 });
      const start = startReassignment('T', 0, before, [2, 3, 4], registered, alive(1, 2, 3, 4));
      expect(start.error).to.equal(null);
      if (start.error) return;
      const moving = start.change.after;
      expect(moving.replicas).to.deep.equal([2, 3, 4, 1]);
      expect(moving.addingReplicas).to.deep.equal([4]);
      expect(moving.removingReplicas).to.deep.equal([1]);
      expect(moving.leader, 'leader stays until the move completes').to.equal(1);
      expect(replayed(before, start.change.record!)).to.deep.equal(moving);

      const joined = decideAlterPartition(moving, {
        brokerId: 1, brokerEpoch: 1, topicId: 'T', partition: 0, leaderEpoch: moving.leaderEpoch,
        partitionEpoch: moving.partitionEpoch, newIsr: [1, 2, 3, 4],
      }, 1, alive(1, 2, 3, 4));
      expect(joined.error).to.equal(null);
      if (joined.error) return;
      const done = joined.change.after;
      expect(done.replicas).to.deep.equal([2, 3, 4]);
      expect(done.isr).to.deep.equal([2, 3, 4]);
      expect(done.addingReplicas).to.deep.equal([]);
      expect(done.leader).to.equal(2);
      expect(done.leaderEpoch).to.equal(moving.leaderEpoch + 1);
      expect(replayed(moving, joined.change.record!)).to.deep.equal(done);
    });

    it('cancel restores the original replicas; cancel without a reassignment is an error', () => {
      const before = reg({ replicas: [1, 2, 3] });
      const start = startReassignment('T', 0, before, [1, 2, 4], registered, alive(1, 2, 3, 4));
      if (start.error) throw new Error('start failed');
      const cancel = cancelReassignment('T', 0, start.change.after, alive(1, 2, 3, 4));
      if (cancel.error) throw new Error('cancel failed');
      expect(cancel.change.after.replicas).to.deep.equal([1, 2, 3]);
      expect(cancel.change.after.addingReplicas).to.deep.equal([]);
      expect(cancelReassignment('T', 0, before, alive(1)).error).to.equal(Errors.NO_REASSIGNMENT_IN_PROGRESS);
      expect(startReassignment('T', 0, before, [1, 1], registered, alive(1)).error).to.equal(Errors.INVALID_REPLICA_ASSIGNMENT);
    });
  });

  describe('broker heartbeats', () => {
    it('expires a broker after the session timeout and restarts deadlines on failover', () => {
      const clock = new ManualClock();
      const hb = new BrokerHeartbeats(clock, 9000);
      hb.resetAll([1, 2]);
      clock.advance(5000);
      hb.touch(1);
      clock.advance(4000);
      expect(hb.expired([1, 2])).to.deep.equal([2]);
      expect(hb.isAlive(1)).to.equal(true);
      hb.resetAll([1, 2]);
      expect(hb.expired([1, 2]), 'a new controller gives every broker a full session').to.deep.equal([]);
      expect(hb.expired([3]), 'unknown brokers are not alive').to.deep.equal([3]);
    });
  });

  // The corroborated-death rule (decisions/broker-heartbeats.ts): the controller's own silence AND a live peer's report.
  describe('corroborated broker death (fast failover)', () => {
    const SESSION = 9000;
    const SUSPECT = 1000;
    function world() {
      const clock = new ManualClock();
      const hb = new BrokerHeartbeats(clock, SESSION, SUSPECT);
      hb.resetAll([1, 2, 3]);
      return { clock, hb };
    }

    it('fences a silent broker once a live peer reports it unreachable, at the suspect timeout and not before', () => {
      const { clock, hb } = world();
      clock.advance(300);
      hb.touch(1);
      hb.touch(2);
      hb.report(2, [1]);
      expect(hb.corroboratedDead([1, 2, 3]), 'the controller still hears broker 1').to.deep.equal([]);
      expect(hb.nextCorroborationAtMs([1, 2, 3]), 'its silence reaches the suspect timeout then').to.equal(1300);
      clock.advance(999);
      hb.touch(2);
      hb.report(2, [1]);
      expect(hb.corroboratedDead([1, 2, 3])).to.deep.equal([]);
      clock.advance(1);
      expect(hb.corroboratedDead([1, 2, 3])).to.deep.equal([1]);
      expect(hb.reportersOf(1)).to.deep.equal([2]);
      expect(hb.expired([1, 2, 3]), 'no session expired: only the corroborated rule fences').to.deep.equal([]);
    });

    it('never fences a broker that heartbeats, whatever its peers say (a cut between two brokers is not a dead leader)', () => {
      const { clock, hb } = world();
      for (let t = 0; t < 20; t++) {
        clock.advance(500);
        for (const b of [1, 2, 3]) hb.touch(b);
        hb.report(2, [1]);
        hb.report(3, [1]);
        expect(hb.corroboratedDead([1, 2, 3])).to.deep.equal([]);
      }
    });

    it('never fences on silence alone: a broker nobody reports waits for its session', () => {
      const { clock, hb } = world();
      clock.advance(SESSION - 1);
      expect(hb.corroboratedDead([1, 2, 3])).to.deep.equal([]);
      expect(hb.nextCorroborationAtMs([1, 2, 3])).to.equal(undefined);
      clock.advance(1);
      expect(hb.expired([1, 2, 3])).to.deep.equal([1, 2, 3]);
      expect(hb.corroboratedDead([1, 2, 3]), 'an expired broker is fenced by its session, counted once').to.deep.equal([]);
    });

    it('a report holds only while its reporter repeats it and is heard from: withdrawn, stale and self reports do not count', () => {
      const { clock, hb } = world();
      hb.report(2, [1]);
      hb.report(3, [3]);
      clock.advance(1000);
      hb.touch(2);
      hb.report(2, []);
      expect(hb.corroboratedDead([1, 2, 3]), 'broker 2 withdrew its report; broker 3 reported itself').to.deep.equal([]);
      hb.touch(2);
      hb.report(2, [1]);
      clock.advance(SUSPECT);
      expect(hb.corroboratedDead([1, 3]), 'broker 2 has not repeated its report within the suspect timeout: it may be dead itself').to.deep.equal([]);
      hb.touch(3);
      hb.report(3, [1]);
      expect(hb.corroboratedDead([1, 2])).to.deep.equal([1]);
      hb.remove(3);
      expect(hb.corroboratedDead([1, 2]), 'an unregistered reporter\'s reports go with it').to.deep.equal([]);
    });

    it('is off with a suspect timeout of 0 or not below the session, and a new controller starts without reports', () => {
      const { clock, hb } = world();
      hb.report(2, [1]);
      clock.advance(2000);
      hb.touch(2);
      hb.report(2, [1]);
      expect(hb.corroboratedDead([1])).to.deep.equal([1]);
      hb.setSuspectTimeoutMs(0);
      expect(hb.corroboratedDead([1])).to.deep.equal([]);
      hb.setSuspectTimeoutMs(SESSION);
      expect(hb.corroboratedDead([1])).to.deep.equal([]);
      expect(hb.nextCorroborationAtMs([1])).to.equal(undefined);
      hb.setSuspectTimeoutMs(SUSPECT);
      hb.resetAll([1, 2, 3]);
      clock.advance(SUSPECT);
      expect(hb.corroboratedDead([1]), 'reports made to an earlier controller are gone').to.deep.equal([]);
    });
  });
});
