// The Consumer and the group admin, one consumer at a time: option checks and
// fetch-answer decoding without a cluster; then on a real 3-node cluster —
// assign() without a group (the iterator, earliest/latest reset, seek,
// pause/resume, OFFSET_OUT_OF_RANGE reset, the prefetch memory bound),
// eachBatch with commits from outside group membership, a RegExp
// subscription with the range assignor, manual commits, and the group admin
// (list, describe with lag, reset offsets, delete).
import { expect } from 'chai';
import type { Client } from '../../src/client/client.js';
import { Consumer, type ConsumerMessage } from '../../src/client/consumer.js';
import { decodeFetched } from '../../src/client/consumer-fetcher.js';
import { CONSUMER_DEFAULTS, resolveConsumerOptions } from '../../src/client/consumer-options.js';
import { GroupAdmin } from '../../src/client/group-admin.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { Errors, isSluiceError, SluiceError } from '../../src/util/errors.js';
import { produceOk } from '../integration/broker-kit.js';
import { waitFor } from '../integration/harness.js';
import {
  Collector, GROUP_TIMEOUTS, makeTopic, newClient, produceTo, startConsumerCluster, WAIT_MS, type ConsumerCluster,
} from '../integration/consumer-kit.js';
import { asBuffer } from '../../src/util/node-bytes.js';

function batch(baseOffset: number, values: string[], isControl = false): Buffer {
  return asBuffer(encodeRecordBatch({ baseOffset, isControl, records: values.map((v, i) => ({ key: null, value: Buffer.from(v), headers: [], timestamp: 1_000 + i })) }));
}

describe('consumer', () => {
  describe('options', () => {
    it('fills defaults and refuses bad options with INVALID_CONFIG', () => {
      const o = resolveConsumerOptions({ groupId: 'g' });
      expect(o.assignors.map((a) => a.name)).to.deep.equal(['cooperative-sticky']);
      expect(o.sessionTimeoutMs).to.equal(CONSUMER_DEFAULTS.sessionTimeoutMs);
      expect(o.prefetchBytesMax).to.equal(2 * CONSUMER_DEFAULTS.maxBytes);
      expect(o.autoOffsetReset).to.equal('latest');
      const bad = [
        { groupId: '' }, { sessionTimeoutMs: 1000, heartbeatIntervalMs: 1000 }, { partitionAssigners: ['sticky'] }, { partitionAssigners: [] },
        { maxWaitMs: 120_000 }, { autoOffsetReset: 'none' as 'latest' }, { maxBytes: 0 }, { autoCommitIntervalMs: 1.5 },
      ];
      for (const b of bad) expect(() => resolveConsumerOptions(b), JSON.stringify(b)).to.throw(SluiceError).with.property('code', Errors.INVALID_CONFIG.code);
    });
  });

  describe('decoding fetch answers', () => {
    it('skips records below the fetch offset and control batches, and moves past every whole batch', () => {
      const bytes = Buffer.concat([batch(10, ['a', 'b', 'c']), batch(13, ['marker'], true), batch(14, ['d', 'e'])]);
      const out = decodeFetched(bytes, 11);
      expect(out.records.map((r) => [r.offset, r.value!.toString()])).to.deep.equal([[11, 'b'], [12, 'c'], [14, 'd'], [15, 'e']]);
      expect(out.nextOffset).to.equal(16);
      const onlyControl = decodeFetched(batch(20, ['m'], true), 20);
      expect(onlyControl).to.deep.equal({ records: [], nextOffset: 21 });
      const partial = decodeFetched(bytes.subarray(0, bytes.length - 5), 10);
      expect(partial.nextOffset).to.equal(14);
      expect(decodeFetched(new Uint8Array(0), 7)).to.deep.equal({ records: [], nextOffset: 7 });
    });
  });

  describe('on a real cluster', function () {
    this.timeout(180_000);
    let cc: ConsumerCluster;
    const clients: Client[] = [];
    const consumers: Consumer[] = [];

    before(async () => {
      cc = await startConsumerCluster();
      await makeTopic(cc, 'plain', 2);
      await produceTo(cc, 'plain', 2, 30, 'p');
    });

    after(async () => {
      await Promise.all(consumers.map((c) => c.close().catch(() => undefined)));
      for (const c of clients) c.close();
      cc?.admin.close();
      cc?.conns.closeAll();
      await cc?.cluster.cleanup();
    });

    afterEach(function () {
      if (this.currentTest?.state === 'failed') console.log(cc.cluster.dumpLogs());
    });

    function consumer(opts: ConstructorParameters<typeof Consumer>[1] = {}): Consumer {
      const client = newClient(cc.cluster);
      clients.push(client);
      const c = new Consumer(client, opts);
      consumers.push(c);
      return c;
    }

    /** Takes `n` messages from the iterator (bounded in time). */
    async function take(it: AsyncIterator<ConsumerMessage>, n: number): Promise<ConsumerMessage[]> {
      const out: ConsumerMessage[] = [];
      const deadline = performance.now() + WAIT_MS;
      while (out.length < n) {
        if (performance.now() > deadline) throw new Error(`took ${out.length} of ${n} messages before the deadline`);
        const r = await it.next();
        if (r.done) throw new Error(`the iterator ended after ${out.length} of ${n}`);
        out.push(r.value);
      }
      return out;
    }

    const vals = (ms: readonly ConsumerMessage[]) => ms.map((m) => m.value!.toString());

    it('assign() without a group: the iterator reads every record from the earliest offset, each partition in order', async () => {
      const c = consumer({ autoOffsetReset: 'earliest' });
      c.assign([{ topic: 'plain', partition: 0 }, { topic: 'plain', partition: 1 }]);
      const it = c[Symbol.asyncIterator]();
      const got = await take(it, 60);
      for (const p of [0, 1]) {
        const mine = got.filter((m) => m.partition === p);
        expect(mine.map((m) => m.offset)).to.deep.equal(Array.from({ length: 30 }, (_, i) => i));
        expect(vals(mine)).to.deep.equal(Array.from({ length: 30 }, (_, i) => `p/${p}/${i}`));
        expect(mine[0]!.key!.toString()).to.equal(`k${p}`);
      }
      await it.return!();
      expect(() => c.assign([])).to.not.throw();
    });

    it('autoOffsetReset latest reads only what is produced after it started', async () => {
      await makeTopic(cc, 'latest', 1);
      await produceTo(cc, 'latest', 1, 5, 'early');
      const c = consumer({ autoOffsetReset: 'latest' });
      c.assign([{ topic: 'latest', partition: 0 }]);
      const it = c[Symbol.asyncIterator]();
      const next = it.next();
      await waitFor('the position to be known', () => c.position({ topic: 'latest', partition: 0 }) === 5 || undefined, { timeoutMs: WAIT_MS });
      await produceTo(cc, 'latest', 1, 1, 'late');
      const first = await next;
      expect(first.value!.value!.toString()).to.equal('late/0/0');
      expect(first.value!.offset).to.equal(5);
      await it.return!();
    });

    it('seek moves the position; a paused partition delivers nothing until resumed', async () => {
      const c = consumer({ autoOffsetReset: 'earliest' });
      c.assign([{ topic: 'plain', partition: 0, offset: 25 }, { topic: 'plain', partition: 1, offset: 28 }]);
      c.pause([{ topic: 'plain', partitions: [1] }]);
      expect(c.paused()).to.deep.equal([{ topic: 'plain', partitions: [1] }]);
      const it = c[Symbol.asyncIterator]();
      const firstFive = await take(it, 5);
      expect(firstFive.map((m) => `${m.partition}@${m.offset}`)).to.deep.equal(['0@25', '0@26', '0@27', '0@28', '0@29']);
      c.seek({ topic: 'plain', partition: 0, offset: 3 });
      c.resume([{ topic: 'plain' }]);
      expect(c.paused()).to.deep.equal([]);
      const rest = await take(it, 27 + 2); // p0 from 3 to its end (30 records), and p1's last two
      expect(rest.filter((m) => m.partition === 0).map((m) => m.offset)).to.deep.equal(Array.from({ length: 27 }, (_, i) => i + 3));
      expect(rest.filter((m) => m.partition === 1).map((m) => m.offset)).to.deep.equal([28, 29]);
      await it.return!();
    });

    it('an offset past the end is out of range: the position resets by the policy', async () => {
      const c = consumer({ autoOffsetReset: 'earliest' });
      c.assign([{ topic: 'plain', partition: 1, offset: 10_000 }]);
      const it = c[Symbol.asyncIterator]();
      const got = await take(it, 3);
      expect(got.map((m) => m.offset)).to.deep.equal([0, 1, 2]);
      await it.return!();
    });

    it('keeps prefetched bytes within prefetchBytesMax (plus at most one batch per partition)', async () => {
      await makeTopic(cc, 'bulk', 2);
      const big = 'x'.repeat(2_000);
      const bootstrap = await cc.conns.get(cc.cluster.brokerUrls[0]!);
      for (let round = 0; round < 20; round++) {
        for (const p of [0, 1]) {
          await produceOk(cc.conns, bootstrap, 'bulk', p, Array.from({ length: 10 }, (_, i) => ({ value: `${round}-${i}-${big}` })));
        }
      }
      // Per partition and per request the limits are above the bound, so only prefetchBytesMax holds the buffer down.
      const prefetchBytesMax = 48 * 1024;
      const batchBytesMax = 25 * 1024; // one produced batch: 10 records of ~2 KB
      const c = consumer({ autoOffsetReset: 'earliest', prefetchBytesMax, maxBytesPerPartition: 64 * 1024, maxBytes: 64 * 1024 });
      c.assign([{ topic: 'bulk', partition: 0 }, { topic: 'bulk', partition: 1 }]);
      const it = c[Symbol.asyncIterator]();
      await take(it, 1);
      await waitFor('the prefetch buffer to fill', () => c.bufferedBytes >= 16 * 1024 || undefined, { timeoutMs: WAIT_MS, intervalMs: 5 });
      let peak = 0;
      for (let n = 1; n < 400; n++) {
        peak = Math.max(peak, c.bufferedBytes);
        expect(c.bufferedBytes).to.be.at.most(prefetchBytesMax + 2 * batchBytesMax);
        await take(it, 1);
      }
      expect(peak).to.be.greaterThan(0);
      await it.return!();
    });

    it('eachBatch with assign() and a group commits outside membership; a new consumer resumes there', async () => {
      const col = new Collector();
      const c = consumer({ groupId: 'manual-assign', autoOffsetReset: 'earliest', autoCommitIntervalMs: 200 });
      c.assign([{ topic: 'plain', partition: 0 }]);
      await c.run({
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch: b, resolveOffset }) => {
          for (const m of b.messages) {
            if (m.offset >= 20) return; // leave the rest unresolved
            col.add('b', b.topic, b.partition, m);
            resolveOffset(m.offset);
          }
        },
      });
      await waitFor('offsets up to 20 committed', async () => {
        const o = await new GroupAdmin(clients[clients.length - 1]!).fetchOffsets({ groupId: 'manual-assign', topics: ['plain'] });
        return o[0]?.partitions.find((p) => p.partition === 0)?.offset === 20 || undefined;
      }, { timeoutMs: WAIT_MS, intervalMs: 100 });
      await c.close();
      const d = consumer({ groupId: 'manual-assign', autoOffsetReset: 'earliest' });
      d.assign([{ topic: 'plain', partition: 0 }]);
      const it = d[Symbol.asyncIterator]();
      expect((await take(it, 1))[0]!.offset).to.equal(20);
      await it.return!();
    });

    it('a handler that throws crashes the consumer; the failed record is not committed', async () => {
      const c = consumer({ groupId: 'crash-group', autoOffsetReset: 'earliest', autoCommitIntervalMs: 50 });
      c.assign([{ topic: 'plain', partition: 1 }]);
      const crashed = new Promise<Error>((resolve) => c.on('crash', (e) => resolve(e.error)));
      const stopped = new Promise<void>((resolve) => c.on('stop', () => resolve()));
      await c.run({
        eachMessage: async ({ message }) => {
          if (message.offset === 12) throw new Error('bad record');
        },
      });
      const err = await crashed;
      expect(err.message).to.equal('bad record');
      await stopped;
      const o = await new GroupAdmin(clients[clients.length - 1]!).fetchOffsets({ groupId: 'crash-group', topics: ['plain'] });
      expect(o[0]!.partitions.find((p) => p.partition === 1)!.offset).to.equal(12);
    });

    it('a RegExp subscription with the range assignor, and manual commits', async () => {
      await makeTopic(cc, 'rx-a', 2);
      await makeTopic(cc, 'rx-b', 2);
      const values = [...await produceTo(cc, 'rx-a', 2, 5, 'ra'), ...await produceTo(cc, 'rx-b', 2, 5, 'rb')];
      const col = new Collector();
      const opts = { groupId: 'rx-group', ...GROUP_TIMEOUTS, partitionAssigners: ['range'], autoCommit: false };
      const [c1, c2] = [consumer(opts), consumer(opts)];
      for (const [c, who] of [[c1, 'c1'], [c2, 'c2']] as const) {
        await c.subscribe({ topics: /^rx-/, fromBeginning: true });
        await c.run({ eachMessage: async ({ topic, partition, message }) => col.add(who, topic, partition, message) });
      }
      await waitFor('one partition of each topic per member', () => {
        const a = [c1, c2].map((c) => c.assignment().map((tp) => tp.topic).sort().join());
        return (a[0] === 'rx-a,rx-b' && a[1] === 'rx-a,rx-b') || undefined;
      }, { timeoutMs: WAIT_MS, intervalMs: 50 });
      await col.waitForAll(values, 'every record of both topics');
      expect(col.seen.some((s) => s.topic.startsWith('__'))).to.equal(false);
      const admin = new GroupAdmin(clients[0]!);
      expect(await admin.fetchOffsets({ groupId: 'rx-group' })).to.deep.equal([]);
      const mine = c1.assignment();
      await c1.commitOffsets(mine.map((tp) => ({ ...tp, offset: 5 })));
      const fetched = await admin.fetchOffsets({ groupId: 'rx-group' });
      expect(fetched.flatMap((t) => t.partitions.map((p) => `${t.topic}-${p.partition}@${p.offset}`)).sort())
        .to.deep.equal(mine.map((tp) => `${tp.topic}-${tp.partition}@5`).sort());
      await Promise.all([c1.close(), c2.close()]);
      // (No order check here: without auto-commit, a rebalance restarts partitions from the beginning.)
    });

    it('group admin: list, describe with lag, reset offsets (only when empty), delete', async () => {
      const admin = new GroupAdmin(clients[0]!);
      const c = consumer({ groupId: 'admin-group', ...GROUP_TIMEOUTS, autoCommitIntervalMs: 100 });
      const col = new Collector();
      await c.subscribe({ topics: ['plain'], fromBeginning: true });
      await c.run({ eachMessage: async ({ topic, partition, message }) => col.add('a', topic, partition, message) });
      await waitFor('everything read and committed', async () => {
        const [d] = await admin.describeGroups(['admin-group']);
        return (d!.state === 'Stable' && d!.offsets.length === 2 && d!.offsets.every((o) => o.lag === 0)) ? d : undefined;
      }, { timeoutMs: WAIT_MS, intervalMs: 100 });
      const [d] = await admin.describeGroups(['admin-group']);
      expect(d!.members).to.have.length(1);
      expect(d!.members[0]!.subscription).to.deep.equal(['plain']);
      expect(d!.members[0]!.assignment).to.deep.equal([{ topic: 'plain', partitions: [0, 1] }]);
      expect(d!.protocol).to.equal('cooperative-sticky');
      const end0 = d!.offsets.find((o) => o.partition === 0)!.logEndOffset;
      expect(end0).to.be.greaterThan(0);
      expect((await admin.listGroups()).map((g) => g.groupId)).to.include('admin-group');
      const refused = await admin.resetOffsets({ groupId: 'admin-group', topic: 'plain', to: 'earliest' }).catch((e: unknown) => e);
      expect(isSluiceError(refused, Errors.NON_EMPTY_GROUP), String(refused)).to.equal(true);
      const del = await admin.deleteGroups(['admin-group']);
      expect(del[0]!.error?.code).to.equal(Errors.NON_EMPTY_GROUP.code);
      await c.close();
      await waitFor('the group to be empty', async () => (await admin.describeGroups(['admin-group']))[0]!.state === 'Empty' || undefined, { timeoutMs: WAIT_MS, intervalMs: 100 });
      expect((await admin.resetOffsets({ groupId: 'admin-group', topic: 'plain', to: 'earliest' })).map((o) => o.offset)).to.deep.equal([0, 0]);
      expect((await admin.resetOffsets({ groupId: 'admin-group', topic: 'plain', partitions: [1], to: { offset: 1e9 } }))[0]!.offset).to.equal(d!.offsets.find((o) => o.partition === 1)!.logEndOffset);
      expect((await admin.resetOffsets({ groupId: 'admin-group', topic: 'plain', partitions: [1], to: { offset: 7 } })).map((o) => o.offset)).to.deep.equal([7]);
      // Every record in 'plain' has timestamp 1_700_000_000_000 (broker-kit): a later time resets to the end.
      expect((await admin.resetOffsets({ groupId: 'admin-group', topic: 'plain', partitions: [0], to: { timestamp: 1_700_000_000_000 } }))[0]!.offset).to.equal(0);
      expect((await admin.resetOffsets({ groupId: 'admin-group', topic: 'plain', partitions: [0], to: { timestamp: 1_800_000_000_000 } }))[0]!.offset).to.equal(end0);
      const after = await admin.describeGroups(['admin-group']);
      expect(after[0]!.offsets.map((o) => [o.partition, o.committedOffset, o.lag])).to.deep.equal([[0, end0, 0], [1, 7, after[0]!.offsets[1]!.logEndOffset - 7]]);
      expect((await admin.deleteGroups(['admin-group']))[0]!.error).to.equal(null);
      expect((await admin.listGroups()).map((g) => g.groupId)).to.not.include('admin-group');
    });
  });
});
