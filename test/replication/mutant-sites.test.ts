// The deliberate bugs of the replication code (src/util/mutants.ts), each
// switched on at its one site: these tests prove the switch reaches the
// code it names (the behaviour changes as the bug would change it), so the
// cluster simulation's mutant runs (test/sim/mutants.test.ts) test the
// checker, not a dead switch. With every switch off, the same scenarios are
// the normal behaviour the other tests in this folder assert.

import { expect } from 'chai';
import { LeaderState, type LeaderFacts } from '../../src/replication/rules/leader-state.js';
import { Partition } from '../../src/replication/partition.js';
import type { PartitionRegistration } from '../../src/metadata/image.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { ManualClock } from '../../src/util/clock.js';
import { setMutant, type MutantName } from '../../src/util/mutants.js';
import { asBuffer } from '../../src/util/node-bytes.js';
import { readAllBytes, removeDir, tempDir } from '../storage/log-test-helpers.js';
import { batchOf, openLogs, TestCluster, valuesIn, waitFor } from './replica-harness.js';

const LAG_MS = 10_000;

function facts(isr: number[], hw = 0): LeaderFacts & { isr: readonly number[]; highWatermark: number } {
  return {
    isr, highWatermark: hw,
    advanceHighWatermark(offset: number) {
      this.highWatermark = offset;
    },
  };
}

/** Runs `f` with `name` switched on, then off again whatever happens. */
async function withMutant<T>(name: MutantName, f: () => T | Promise<T>): Promise<T> {
  setMutant(name);
  try {
    return await f();
  } finally {
    setMutant(undefined);
  }
}

describe('replication: mutant sites', function () {
  this.timeout(60_000);
  afterEach(() => setMutant(undefined));

  it('hw-at-leader-end: the HW jumps to the leader\'s end, past followers that lack the records', async () => {
    const run = (): number => {
      const state = new LeaderState(1, 0, 0, [1, 2, 3], facts([1, 2, 3]), 0, new ManualClock(), LAG_MS);
      state.onLocalAppend(10);
      state.onFollowerFetch(2, 4);
      return state.highWatermark;
    };
    expect(run(), 'off: min LEO over the ISR (broker 3 never fetched)').to.equal(0);
    expect(await withMutant('hw-at-leader-end', run)).to.equal(10);
  });

  it('acks-all-on-leader-append: acks=all is answered before the HW passes the batch', async () => {
    const state = new LeaderState(1, 0, 0, [1, 2], facts([1, 2]), 0, new ManualClock(), LAG_MS);
    state.onLocalAppend(5);
    expect(state.ackState(4, 2)).to.equal('wait');
    expect(await withMutant('acks-all-on-leader-append', () => state.ackState(4, 2))).to.equal('ok');
  });

  it('isr-shrink-ignores-min-isr: an ISR shrunk below min.insync.replicas still takes and acknowledges acks=all', async () => {
    const f = facts([1, 2]);
    const state = new LeaderState(1, 0, 0, [1, 2], f, 0, new ManualClock(), LAG_MS);
    state.onLocalAppend(5);
    f.isr = [1];
    state.onIsrCommitted([1, 2]);
    expect([state.hasEnoughReplicas(2), state.ackState(4, 2)]).to.deep.equal([false, 'notEnoughReplicasAfterAppend']);
    expect(await withMutant('isr-shrink-ignores-min-isr', () => [state.hasEnoughReplicas(2), state.ackState(4, 2)])).to.deep.equal([true, 'ok']);
  });

  it('new-leader-hw-at-leo: a new leader makes its uncommitted tail visible at once', async () => {
    const dir = tempDir('sluice-mutant-');
    try {
      const logs = openLogs(dir);
      const reg = (epoch: number): PartitionRegistration => ({
        replicas: [1, 2], isr: [1, 2], leader: 1, leaderEpoch: epoch, partitionEpoch: epoch, addingReplicas: [], removingReplicas: [],
      });
      const run = (topic: string): number => {
        const log = logs.getOrCreateLog(topic, 0);
        for (const v of ['a', 'b', 'c']) log.append(asBuffer(encodeRecordBatch({ records: [{ value: Buffer.from(v), timestamp: 0 }] })), { leaderEpoch: 0 });
        log.updateHighWatermark(1); // only 'a' is committed
        const p = new Partition(topic, 0, `tid-${topic}`, log, 1);
        p.makeLeader(reg(1), log.logEndOffset, new ManualClock(), LAG_MS);
        return p.highWatermark;
      };
      expect(run('off'), 'off: the old HW').to.equal(1);
      expect(await withMutant('new-leader-hw-at-leo', () => run('on'))).to.equal(3);
      logs.close();
    } finally {
      removeDir(dir);
    }
  });

  describe('in-process brokers', () => {
    let c: TestCluster | undefined;
    afterEach(async () => {
      setMutant(undefined);
      await c?.close();
      c = undefined;
    });

    it('idempotent-duplicate-append: a retried idempotent batch is stored twice', async () => {
      c = await TestCluster.start([1]);
      c.createTopic('t', 'tid-t', [{ replicas: [1] }]);
      const b0 = asBuffer(encodeRecordBatch({ records: [{ value: Buffer.from('a'), timestamp: Date.now() }], producerId: 7n, producerEpoch: 0, baseSequence: 0 }));
      expect(await c.produce(1, 't', -1, b0)).to.include({ errorCode: 0, baseOffset: 0 });
      expect(await c.produce(1, 't', -1, b0), 'off: answered with its original offset').to.include({ errorCode: 0, baseOffset: 0 });
      setMutant('idempotent-duplicate-append');
      expect(await c.produce(1, 't', -1, b0)).to.include({ errorCode: 0, baseOffset: 1 });
      expect(await c.consume(1, 't')).to.deep.equal(['a', 'a']);
    });

    it('follower-skips-epoch-truncation: a returning old leader keeps its divergent tail under the new leader\'s records', async () => {
      setMutant('follower-skips-epoch-truncation');
      c = await TestCluster.start([1, 2, 3]);
      const T = 'events';
      c.createTopic(T, 'tid-events', [{ replicas: [1, 2, 3] }]);
      const log = (id: number) => c!.node(id).logs.getLog(T, 0)!;
      expect((await c.produce(1, T, -1, batchOf('a'))).errorCode).to.equal(0);
      expect((await c.produce(1, T, -1, batchOf('b'))).errorCode).to.equal(0);
      c.controllerMode = 'hold';
      await c.node(1).server.close(); // cut off from its followers, still leading
      const r = c.node(1).rm.produce({ acks: 1, timeoutMs: 1000, topics: [{ name: T, partitions: [{ partition: 0, records: batchOf('x1') }] }] });
      expect((r as { topics: Array<{ partitions: Array<{ errorCode: number }> }> }).topics[0]!.partitions[0]!.errorCode).to.equal(0);
      await c.stopNode(1);
      c.controllerMode = 'commit';
      c.changePartition('tid-events', 0, { leader: 2, isr: [2, 3] });
      for (const v of ['c', 'd', 'e']) expect((await c.produce(2, T, -1, batchOf(v))).errorCode).to.equal(0);
      await c.startNode(1); // follows broker 2 from its own end (3), without asking where epoch 0 ended
      await waitFor('broker 1 at the leader\'s end', () => log(1).logEndOffset === 5);
      expect(valuesIn(readAllBytes(log(2)))).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
      expect(valuesIn(readAllBytes(log(1))), 'the stale x1 stays below the HW').to.deep.equal(['a', 'b', 'x1', 'd', 'e']);
    });
  });
});
