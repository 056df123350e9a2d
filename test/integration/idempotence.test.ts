// The idempotent producer's broker half on a real cluster of three combined
// `sluice server` processes: InitProducerId hands out distinct ids from any
// broker and bumps epochs; a retried batch is answered with its original
// offset and stored once; an out-of-order batch is refused and appends
// nothing; an older epoch is fenced; and after a SIGKILL of the leader the
// new leader recognises a retry of a batch the old one acknowledged — as does
// the old leader once it is back (its state rebuilt from its log's headers,
// no snapshot after a SIGKILL) and leads again.

import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/api-keys.js';
import type { ProducePartitionResponse } from '../../src/protocol/apis/produce.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { Errors } from '../../src/util/errors.js';
import { ProcessCluster, waitFor } from './harness.js';
import { DataClient, startDataCluster } from './data-client.js';
import { asBuffer } from '../../src/util/node-bytes.js';

// Short enough for quick failovers, long enough that a controller election under a loaded
// 2-core test run does not fence every broker before heartbeats find the new controller.
const SESSION_MS = 6000;

function idem(pid: number, epoch: number, seq: number, ...values: string[]): Buffer {
  const now = Date.now();
  return asBuffer(encodeRecordBatch({
    records: values.map((v) => ({ value: Buffer.from(v), timestamp: now })),
    producerId: BigInt(pid), producerEpoch: epoch, baseSequence: seq,
  }));
}

describe('idempotent producer on a real 3-node cluster', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  let client: DataClient;

  before(async () => {
    ({ cluster, client } = await startDataCluster({ size: 3, sessionTimeoutMs: SESSION_MS }));
  });

  after(async () => {
    await client?.close();
    await cluster?.cleanup();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dumpLogs());
  });

  /** Sends `records` to the partition's current leader. */
  async function send(topic: string, records: Buffer, acks: -1 | 1 = -1): Promise<ProducePartitionResponse> {
    const leader = await client.partition(topic, 0);
    if (!leader.url) throw new Error(`${topic}-0 has no leader`);
    const res = await (await client.connection(leader.url)).produce({ acks, timeoutMs: 10_000, topics: [{ name: topic, partitions: [{ partition: 0, records }] }] });
    return res.topics[0]!.partitions[0]!;
  }

  async function values(topic: string, count: number): Promise<string[]> {
    const all = await client.readAtLeast(topic, 0, count);
    all.forEach((r, i) => expect(r.offset).to.equal(i));
    return all.map((r) => r.value);
  }

  it('InitProducerId: distinct ids from every broker, epoch 0; a named producer gets its next epoch', async () => {
    const seen = new Set<number>();
    for (const n of cluster.nodes) {
      const conn = await client.connection(n.brokerUrl);
      for (let i = 0; i < 3; i++) {
        const r = await conn.initProducerId();
        expect(r.producerEpoch).to.equal(0);
        expect(seen.has(r.producerId), `id ${r.producerId} handed out twice`).to.equal(false);
        seen.add(r.producerId);
      }
    }
    const conn = await client.connection(cluster.node(2).brokerUrl);
    const first = await conn.initProducerId();
    expect(await conn.initProducerId(first)).to.deep.equal({ producerId: first.producerId, producerEpoch: 1 });
  });

  it('answers a retry with the original offset and stores it once; refuses out-of-order sequences and fenced epochs', async () => {
    await client.createTopic('idem', { assignments: [[1, 2, 3]], configs: { 'min.insync.replicas': '2' } });
    const conn = await client.connection(cluster.node(1).brokerUrl);
    const { producerId: pid, producerEpoch: epoch } = await conn.initProducerId();
    const b0 = idem(pid, epoch, 0, 'a', 'b');
    const b1 = idem(pid, epoch, 2, 'c');
    expect(await send('idem', b0)).to.include({ errorCode: 0, baseOffset: 0 });
    expect(await send('idem', b1)).to.include({ errorCode: 0, baseOffset: 2 });
    expect(await send('idem', b0), 'retry of the first batch').to.include({ errorCode: 0, baseOffset: 0 });
    expect(await send('idem', b1, 1)).to.include({ errorCode: 0, baseOffset: 2 });

    const gap = await send('idem', idem(pid, epoch, 5, 'gap'));
    expect(gap.errorCode, gap.errorMessage ?? '').to.equal(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code);

    const bumped = await conn.initProducerId({ producerId: pid, producerEpoch: epoch });
    expect(await send('idem', idem(pid, bumped.producerEpoch, 0, 'd'))).to.include({ errorCode: 0, baseOffset: 3 });
    const zombie = await send('idem', idem(pid, epoch, 3, 'zombie'));
    expect(zombie.errorCode, zombie.errorMessage ?? '').to.equal(Errors.INVALID_PRODUCER_EPOCH.code);
    expect((await send('idem', batchWithoutProducer('plain'))).errorCode).to.equal(0);
    expect(await values('idem', 5)).to.deep.equal(['a', 'b', 'c', 'd', 'plain']);
  });

  it('keeps the state across a leader SIGKILL: the new leader, and the old one back as leader, detect retried duplicates', async () => {
    await client.createTopic('failover', { assignments: [[1, 2, 3]], configs: { 'min.insync.replicas': '2' } });
    const { producerId: pid } = await (await client.connection(cluster.node(2).brokerUrl)).initProducerId();
    const batches = Array.from({ length: 8 }, (_, i) => idem(pid, 0, i, `v${i}`));
    for (const [i, b] of batches.entries()) expect(await send('failover', b), `batch ${i}`).to.include({ errorCode: 0, baseOffset: i });
    const before = await client.partition('failover', 0);
    expect(before.leader).to.equal(1);

    await cluster.node(1).kill('SIGKILL');
    const after = await client.waitForPartition('failover', 0, 'a new leader', (p) => p.leader !== 1 && p.leader >= 0 && p.leaderEpoch > before.leaderEpoch, 60_000);
    // The producer never saw the answers to its last batches: it retries them on the new leader.
    for (const i of [5, 6, 7]) expect(await send('failover', batches[i]!), `retry of batch ${i} on broker ${after.leader}`).to.include({ errorCode: 0, baseOffset: i });
    expect((await send('failover', idem(pid, 0, 9, 'gap'))).errorCode).to.equal(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code);
    expect(await send('failover', idem(pid, 0, 8, 'v8'))).to.include({ errorCode: 0, baseOffset: 8 });

    // The old leader returns (no snapshot after SIGKILL: it rebuilds from its log) and leads again.
    cluster.node(1).start();
    await client.waitForPartition('failover', 0, 'node 1 back in the ISR', (p) => p.isr.includes(1), 60_000);
    const conn = await client.connection(cluster.node(2).brokerUrl);
    await waitFor('node 1 leading again', async () => {
      await conn.admin(ApiKey.ElectLeaders, { partitions: [{ topic: 'failover', partition: 0 }] });
      return (await client.partition('failover', 0)).leader === 1;
    }, { timeoutMs: 30_000, intervalMs: 200 });
    expect(await send('failover', idem(pid, 0, 8, 'v8')), 'retry on the restarted broker').to.include({ errorCode: 0, baseOffset: 8 });
    expect(await send('failover', batches[4]!)).to.include({ errorCode: 0, baseOffset: 4 });
    expect(await send('failover', idem(pid, 0, 9, 'v9'))).to.include({ errorCode: 0, baseOffset: 9 });
    expect(await values('failover', 10)).to.deep.equal(Array.from({ length: 10 }, (_, i) => `v${i}`));
  });
});

function batchWithoutProducer(value: string): Buffer {
  return asBuffer(encodeRecordBatch({ records: [{ value: Buffer.from(value), timestamp: Date.now() }] }));
}
