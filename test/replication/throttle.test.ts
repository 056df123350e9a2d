// The reassignment throttle's token bucket (pure, injected clock): a full
// second's worth at first, refilled at the rate, capped at one second, and
// a large batch puts it in debt so the average holds.
import { expect } from 'chai';
import { ManualClock, ManualScheduler } from '../../src/util/clock.js';
import { TokenBucket } from '../../src/replication/rules/throttle.js';
import { batchOf, TestCluster } from './replica-harness.js';

describe('replication throttle (token bucket)', () => {
  it('allows one second of bytes, refills at the rate, never above one second', () => {
    const clock = new ManualClock();
    const b = new TokenBucket(clock);
    expect(b.available(1000)).to.equal(1000);
    b.take(1000);
    expect(b.available(1000)).to.equal(0);
    clock.advance(250);
    expect(b.available(1000)).to.equal(250);
    clock.advance(10_000);
    expect(b.available(1000)).to.equal(1000);
  });

  it('goes into debt for a batch larger than what was available, and the average holds', () => {
    const clock = new ManualClock();
    const b = new TokenBucket(clock);
    b.available(1000);
    b.take(3000);
    expect(b.available(1000)).to.be.lessThan(0);
    clock.advance(1999);
    expect(b.available(1000)).to.be.at.most(0);
    clock.advance(1);
    expect(b.available(1000)).to.equal(0);
    clock.advance(500);
    expect(b.available(1000)).to.equal(500);
  });

  it('starts full again when the rate changes', () => {
    const clock = new ManualClock();
    const b = new TokenBucket(clock);
    b.available(100);
    b.take(100);
    expect(b.available(5000)).to.equal(5000);
  });

  describe('on a leader (in-process brokers)', function () {
    this.timeout(30_000);
    let c: TestCluster | undefined;
    afterEach(async () => c?.close());

    it('limits replica fetches of a replica being added, and only those', async () => {
      // Simulated time that the test does not move: the bucket never refills, so what gets
      // through is exactly one second's worth of the rate plus at most one batch.
      const scheduler = new ManualScheduler();
      c = await TestCluster.start([1, 2], { clock: scheduler.clock, scheduler });
      c.createTopic('moving', 't-moving', [{ replicas: [1], isr: [1] }]);
      for (let i = 0; i < 5; i++) expect((await c.produce(1, 'moving', 1, batchOf('x'.repeat(1000)))).errorCode).to.equal(0);
      await c.stopNode(2); // its own fetcher would spend the tokens; the test fetches as broker 2
      c.publish([{ type: 'config', v: 1, resourceType: 'cluster', resourceName: '', name: 'leader.replication.throttled.rate', value: '1500' }]);
      c.changePartition('t-moving', 0, { replicas: [1, 2], addingReplicas: [2] });
      // Fetch as broker 2 until the leader sends nothing (a read returns at least one whole batch).
      let sent = 0;
      let offset = 0;
      for (let i = 0; i < 10; i++) {
        const r = await c.fetch(1, 'moving', offset, { replicaId: 2, currentLeaderEpoch: 0 });
        expect(r.errorCode).to.equal(0);
        if (r.records.length === 0) break;
        sent += r.records.length;
        offset += 1;
      }
      expect(sent, 'bytes sent to the added replica before the bucket ran dry').to.be.within(1500, 1500 + 1100);
      const dry = await c.fetch(1, 'moving', offset, { replicaId: 2, currentLeaderEpoch: 0 });
      expect(dry.records.length, 'nothing while no time passes').to.equal(0);
      scheduler.advance(1000);
      const refilled = await c.fetch(1, 'moving', offset, { replicaId: 2, currentLeaderEpoch: 0 });
      expect(refilled.records.length, 'a second later the bucket has refilled').to.be.greaterThan(0);
      const consumer = await c.fetch(1, 'moving', 0);
      expect(consumer.records.length, 'consumers are not throttled').to.be.greaterThan(5000);
    });
  });
});

