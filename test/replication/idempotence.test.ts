// The idempotent producer on brokers (replica manager + producer state store),
// with the in-process cluster of replica-harness.ts: three brokers with real
// logs, followers fetching over loopback, the test as the controller. Covers
// duplicates answered with their original offsets and stored once, refused
// sequences and epochs appending nothing, followers holding the leader's
// state (so a new leader recognises a retry the old one acknowledged),
// truncation of a divergent tail taking its batches out of the state, and a
// restart rebuilding the state from a snapshot or, without one, from the log.

import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import type { PartitionLog } from '../../src/storage/partition-log.js';
import { PRODUCER_STATE_SNAPSHOT_FILE } from '../../src/replication/producer-state-store.js';
import type { ProducePartitionResponse } from '../../src/protocol/apis/produce.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { Errors } from '../../src/util/errors.js';
import { readAllBytes } from '../storage/log-test-helpers.js';
import { batchOf, TestCluster, valuesIn, waitFor } from './replica-harness.js';
import { asBuffer } from '../../src/util/node-bytes.js';

const T = 'events';
const TID = 'tid-events';
const PID = 4242;

/** A batch of producer `pid` at `epoch` whose first record has sequence `seq`. */
function idem(pid: number, epoch: number, seq: number, ...values: string[]): Buffer {
  const now = Date.now();
  return asBuffer(encodeRecordBatch({
    records: values.map((v) => ({ value: Buffer.from(v), timestamp: now })),
    producerId: BigInt(pid), producerEpoch: epoch, baseSequence: seq,
  }));
}

describe('replication: idempotent producer state on brokers (in-process)', function () {
  this.timeout(60_000);
  let cluster: TestCluster | undefined;

  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  });

  async function threeNodes(): Promise<TestCluster> {
    cluster = await TestCluster.start([1, 2, 3]);
    cluster.createTopic(T, TID, [{ replicas: [1, 2, 3] }]);
    return cluster;
  }

  function log(id: number): PartitionLog {
    return cluster!.node(id).logs.getLog(T, 0)!;
  }

  function sameLog(a: number, b: number): boolean {
    return log(a).logEndOffset === log(b).logEndOffset && readAllBytes(log(a)).equals(readAllBytes(log(b)));
  }

  function stateOf(id: number) {
    return cluster!.node(id).rm.producerState(T, 0)?.entry(PID);
  }

  /** Produce straight into broker `id`'s replica manager (its listener may be closed). */
  async function produceDirect(id: number, records: Buffer, acks: -1 | 1 = 1): Promise<ProducePartitionResponse> {
    const r = await cluster!.node(id).rm.produce({ acks, timeoutMs: 5000, topics: [{ name: T, partitions: [{ partition: 0, records }] }] });
    return r.topics[0]!.partitions[0]!;
  }

  it('answers a retried batch with its original offsets and stores it once; refused batches append nothing', async () => {
    const c = await threeNodes();
    expect(await c.produce(1, T, -1, batchOf('plain'))).to.include({ errorCode: 0, baseOffset: 0 });
    const b0 = idem(PID, 0, 0, 'a', 'b');
    const b1 = idem(PID, 0, 2, 'c');
    expect(await c.produce(1, T, -1, b0)).to.include({ errorCode: 0, baseOffset: 1 });
    expect(await c.produce(1, T, -1, b1)).to.include({ errorCode: 0, baseOffset: 3 });
    expect(await c.produce(1, T, -1, b0), 'retry of an older batch').to.include({ errorCode: 0, baseOffset: 1 });
    expect(await c.produce(1, T, 1, b1)).to.include({ errorCode: 0, baseOffset: 3 });
    expect(log(1).logEndOffset).to.equal(4);

    const refused: Array<[Buffer, number]> = [
      [idem(PID, 0, 4, 'gap'), Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code],
      [idem(PID, 1, 5, 'new epoch not at 0'), Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code],
      [idem(PID + 1, 0, 7, 'unknown producer'), Errors.UNKNOWN_PRODUCER_ID.code],
      [Buffer.concat([idem(PID, 0, 0, 'a', 'b'), idem(PID, 0, 3, 'd')]), Errors.DUPLICATE_SEQUENCE_NUMBER.code],
    ];
    for (const [records, code] of refused) {
      const r = await c.produce(1, T, -1, records);
      expect(r.errorCode, r.errorMessage ?? '').to.equal(code);
      expect(r.baseOffset).to.equal(-1);
    }
    // A corrupted retry is not taken for a duplicate.
    const corrupt = Buffer.from(b1);
    corrupt.writeUInt8(corrupt.readUInt8(corrupt.length - 1) ^ 0xff, corrupt.length - 1);
    expect((await c.produce(1, T, 1, corrupt)).errorCode).to.equal(Errors.CORRUPT_MESSAGE.code);
    expect(log(1).logEndOffset, 'nothing appended by refused batches').to.equal(4);

    // A new epoch starting at 0 fences the old one.
    expect(await c.produce(1, T, -1, idem(PID, 1, 0, 'e1'))).to.include({ errorCode: 0, baseOffset: 4 });
    expect((await c.produce(1, T, -1, idem(PID, 0, 3, 'zombie'))).errorCode).to.equal(Errors.INVALID_PRODUCER_EPOCH.code);
    expect(await c.consume(1, T)).to.deep.equal(['plain', 'a', 'b', 'c', 'e1']);
  });

  it('keeps the same state on followers, so a new leader recognises a retry the old one acknowledged', async () => {
    const c = await threeNodes();
    const batches = [idem(PID, 0, 0, 'a'), idem(PID, 0, 1, 'b', 'c'), idem(PID, 0, 3, 'd')];
    for (const b of batches) expect((await c.produce(1, T, -1, b)).errorCode).to.equal(0);
    await waitFor('followers hold the log', () => sameLog(1, 2) && sameLog(1, 3));
    expect(stateOf(2)).to.deep.equal(stateOf(1));
    expect(stateOf(3)).to.deep.equal(stateOf(1));

    c.changePartition(TID, 0, { leader: 2 });
    expect(await c.produce(2, T, -1, batches[1]!), 'the old leader acknowledged it').to.include({ errorCode: 0, baseOffset: 1 });
    expect(await c.produce(2, T, -1, idem(PID, 0, 4, 'e'))).to.include({ errorCode: 0, baseOffset: 4 });
    expect((await c.produce(2, T, -1, idem(PID, 0, 6, 'gap'))).errorCode).to.equal(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code);
    expect(await c.consume(2, T)).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
  });

  it('takes a truncated divergent tail out of the state: the batch retried on the new leader is new there and everywhere', async () => {
    const c = await threeNodes();
    expect((await c.produce(1, T, -1, idem(PID, 0, 0, 'a'))).errorCode).to.equal(0);
    c.controllerMode = 'hold';
    await c.node(1).server.close(); // broker 1 still leads but its followers cannot reach it
    const lonely = idem(PID, 0, 1, 'lonely');
    expect(await produceDirect(1, lonely)).to.include({ errorCode: 0, baseOffset: 1 });
    expect(await produceDirect(1, idem(PID, 0, 2, 'lonely-2'))).to.include({ errorCode: 0, baseOffset: 2 });
    expect(stateOf(1)!.batches).to.have.length(3);

    c.controllerMode = 'commit';
    c.changePartition(TID, 0, { leader: 2, isr: [2, 3] });
    expect(await c.produce(2, T, -1, batchOf('other'))).to.include({ errorCode: 0, baseOffset: 1 });
    // The producer never heard back from broker 1, so it retries its batch on the new leader.
    expect(await c.produce(2, T, -1, idem(PID, 0, 1, 'lonely'))).to.include({ errorCode: 0, baseOffset: 2 });
    await waitFor('broker 1 truncated and caught up', () => sameLog(2, 1));
    const retained = (id: number) => ({ epoch: stateOf(id)?.epoch, batches: stateOf(id)?.batches });
    expect(retained(1), 'broker 1 forgot its lonely batches').to.deep.equal(retained(2));
    expect(retained(2).batches!.map((b) => [b.firstSeq, b.firstOffset])).to.deep.equal([[0, 0], [1, 2]]);
    await waitFor('broker 1 rejoins the ISR', () => c.registration(T).isr.includes(1));

    c.changePartition(TID, 0, { leader: 1 });
    expect(await produceDirect(1, lonely), 'a duplicate at the new leader\'s offset').to.include({ errorCode: 0, baseOffset: 2 });
    expect(await produceDirect(1, idem(PID, 0, 2, 'next'))).to.include({ errorCode: 0, baseOffset: 3 });
    expect(valuesIn(readAllBytes(log(1)))).to.deep.equal(['a', 'other', 'lonely', 'next']);
  });

  for (const withSnapshot of [true, false]) {
    it(`rebuilds the state after a restart ${withSnapshot ? 'from the clean-shutdown snapshot' : 'from the log headers'}`, async () => {
      const c = await threeNodes();
      for (let i = 0; i < 7; i++) expect((await c.produce(1, T, -1, idem(PID, 0, i, `v${i}`))).errorCode).to.equal(0);
      expect((await c.produce(1, T, -1, idem(PID + 1, 3, 0, 'w'))).errorCode).to.equal(0);
      const before = c.node(1).rm.producerState(T, 0)!.snapshot();
      await c.stopNode(1);
      const file = path.join(c.node(1).dataDir, `${T}-0`, PRODUCER_STATE_SNAPSHOT_FILE);
      expect(fs.existsSync(file), 'a clean stop writes a snapshot').to.equal(true);
      if (!withSnapshot) fs.unlinkSync(file);
      await c.startNode(1);
      expect(fs.existsSync(file), 'the snapshot is used once').to.equal(false);
      expect(c.node(1).rm.producerState(T, 0)?.snapshot(), 'loaded at start').to.deep.equal(withSnapshot ? before : undefined);

      expect(await c.produce(1, T, -1, idem(PID, 0, 4, 'v4')), 'a retry').to.include({ errorCode: 0, baseOffset: 4 });
      expect(c.node(1).rm.producerState(T, 0)!.snapshot()).to.deep.equal(before);
      expect((await c.produce(1, T, -1, idem(PID, 0, 1, 'v1'))).errorCode, 'older than the last five').to.equal(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code);
      expect((await c.produce(1, T, -1, idem(PID + 1, 2, 1, 'fenced'))).errorCode).to.equal(Errors.INVALID_PRODUCER_EPOCH.code);
      expect(await c.produce(1, T, -1, idem(PID, 0, 7, 'v7'))).to.include({ errorCode: 0, baseOffset: 8 });
    });
  }

  it('ignores a snapshot that no longer matches the log', async () => {
    const c = await threeNodes();
    expect((await c.produce(1, T, -1, idem(PID, 0, 0, 'a'))).errorCode).to.equal(0);
    await c.stopNode(1);
    const file = path.join(c.node(1).dataDir, `${T}-0`, PRODUCER_STATE_SNAPSHOT_FILE);
    const body = JSON.parse(fs.readFileSync(file, 'utf8')) as { logEndOffset: number };
    fs.writeFileSync(file, JSON.stringify({ ...body, logEndOffset: body.logEndOffset + 1 }));
    await c.startNode(1);
    expect(c.node(1).rm.producerState(T, 0), 'not loaded').to.equal(undefined);
    expect(await c.produce(1, T, -1, idem(PID, 0, 0, 'a')), 'rebuilt from the log instead').to.include({ errorCode: 0, baseOffset: 0 });
  });

  it('answers InitProducerId with COORDINATOR_NOT_AVAILABLE where the broker API has no producer id source or transaction coordinator', async () => {
    const c = await threeNodes();
    const r = await c.request<{ errorCode: number }>(1, ApiKey.InitProducerId, { transactionalId: null, producerId: -1, producerEpoch: -1 });
    expect(r.errorCode).to.equal(Errors.COORDINATOR_NOT_AVAILABLE.code);
    // Issue 18: a transactional id is no longer refused; this broker API simply has no coordinator for it.
    const txn = await c.request<{ errorCode: number }>(1, ApiKey.InitProducerId, { transactionalId: 'tx', producerId: -1, producerEpoch: -1 });
    expect(txn.errorCode).to.equal(Errors.COORDINATOR_NOT_AVAILABLE.code);
  });
});
