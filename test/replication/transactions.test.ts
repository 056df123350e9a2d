// Transactional partitions on brokers (replica manager, producer state, the
// logs' transaction indexes) with the in-process cluster of
// replica-harness.ts: three brokers with real logs, followers fetching over
// loopback, the test as the controller and, where a test needs one, as the
// transaction coordinator's answers to KIP-890 verification (a TxnVerifier
// holding the partitions "added" to each transaction: that is the coordinator
// lane's part, not the code under test).
//
// Covers: the LSO of open transactions for read_committed fetch and
// ListOffsets; WriteTxnMarkers (acks=all, epoch bump fencing late writes,
// coordinator-epoch fencing, per-partition errors) and the marker listeners;
// aborted transactions in read_committed answers; a read_committed long poll
// woken by a marker; followers holding the same transaction state and index,
// so a new leader serves the same LSO and aborts; a restart (snapshot) and a
// restart without it (rebuilt from the log); KIP-890 verification in the
// produce path; the client rules (INVALID_RECORD, INVALID_REQUEST,
// INVALID_TXN_STATE) and 'coordinator' appends without sequence.

import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { encodeRecordBatch, decodeRecordBatches } from '../../src/record/record-batch.js';
import { CONTROL_FLAG_MASK } from '../../src/record/batch-header.js';
import { encodeTxnMarker } from '../../src/record/control-batch.js';
import { READ_COMMITTED, READ_UNCOMMITTED, type FetchPartitionResponse, type FetchResponse } from '../../src/protocol/apis/fetch.js';
import { LATEST_TIMESTAMP } from '../../src/protocol/apis/offsets.js';
import type { ProducePartitionResponse } from '../../src/protocol/apis/produce.js';
import type { WriteTxnMarkersResponse } from '../../src/protocol/apis/transactions.js';
import type { PartitionLog } from '../../src/storage/partition-log.js';
import { PRODUCER_STATE_SNAPSHOT_FILE } from '../../src/replication/producer-state-store.js';
import type { TxnMarkerApplied, TxnRefusal, TxnVerifier, TxnVerifyRequest } from '../../src/replication/txn-seams.js';
import { Errors } from '../../src/util/errors.js';
import { asBuffer } from '../../src/util/node-bytes.js';
import { TestCluster, waitFor, within } from './replica-harness.js';

const T = 'payments';
const TID = 'tid-payments';
const TXID = 'transfer-app';
const PID = 7000;

function txnBatch(pid: number, epoch: number, seq: number, ...values: string[]): Buffer {
  const now = Date.now();
  return asBuffer(encodeRecordBatch({
    records: values.map((v) => ({ value: Buffer.from(v), timestamp: now })),
    producerId: BigInt(pid), producerEpoch: epoch, baseSequence: seq, isTransactional: true,
  }));
}

function plainBatch(...values: string[]): Buffer {
  const now = Date.now();
  return asBuffer(encodeRecordBatch({ records: values.map((v) => ({ value: Buffer.from(v), timestamp: now })) }));
}

/** What the coordinator would answer: partitions added to (transactionalId, producer, epoch)'s open transaction. */
class AddedPartitions implements TxnVerifier {
  readonly added = new Set<string>();
  readonly asked: TxnVerifyRequest[] = [];
  failWith: Error | null = null;
  /** Called between the question and the answer (a marker can land then). */
  meanwhile: (() => Promise<void>) | null = null;

  add(pid: number, epoch: number, partition = 0): void {
    this.added.add(`${TXID}/${pid}/${epoch}/${T}-${partition}`);
  }

  async verify(req: TxnVerifyRequest): Promise<TxnRefusal | null> {
    this.asked.push(req);
    if (this.meanwhile) await this.meanwhile();
    if (this.failWith) throw this.failWith;
    if (this.added.has(`${req.transactionalId}/${req.producerId}/${req.producerEpoch}/${req.topic}-${req.partition}`)) return null;
    return { error: Errors.INVALID_TXN_STATE, message: `${req.topic}-${req.partition} is not in the transaction` };
  }
}

describe('replication: transactional partitions on brokers (in-process)', function () {
  this.timeout(60_000);
  let cluster: TestCluster | undefined;
  let coordinator: AddedPartitions;

  beforeEach(() => {
    coordinator = new AddedPartitions();
  });

  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  });

  async function threeNodes(opts: { verify?: boolean; markerTimeoutMs?: number } = {}): Promise<TestCluster> {
    cluster = await TestCluster.start([1, 2, 3], {
      ...(opts.verify ? { txnVerifier: () => coordinator } : {}),
      ...(opts.markerTimeoutMs !== undefined ? { txnMarkerTimeoutMs: opts.markerTimeoutMs } : {}),
    });
    cluster.createTopic(T, TID, [{ replicas: [1, 2, 3] }]);
    return cluster;
  }

  function log(id: number): PartitionLog {
    return cluster!.node(id).logs.getLog(T, 0)!;
  }

  async function produce(id: number, records: Buffer, opts: { transactionalId?: string | null; origin?: 'client' | 'coordinator' } = {}): Promise<ProducePartitionResponse> {
    const res = await cluster!.node(id).rm.produce({
      transactionalId: opts.transactionalId === undefined ? TXID : opts.transactionalId, acks: -1, timeoutMs: 10_000,
      topics: [{ name: T, partitions: [{ partition: 0, records }] }],
    }, opts.origin ?? 'client');
    return res.topics[0]!.partitions[0]!;
  }

  async function markers(id: number, pid: number, epoch: number, committed: boolean, coordinatorEpoch = 0, partitions = [0]): Promise<WriteTxnMarkersResponse> {
    return within('markers', Promise.resolve(cluster!.node(id).rm.writeTxnMarkers({
      markers: [{ producerId: pid, producerEpoch: epoch, transactionResult: committed, coordinatorEpoch, topics: [{ name: T, partitions }] }],
    })));
  }

  function markerErrors(res: WriteTxnMarkersResponse): number[] {
    return res.markers.flatMap((m) => m.topics.flatMap((t) => t.partitions.map((p) => p.errorCode)));
  }

  async function fetch(id: number, offset: number, isolation: 0 | 1, maxWaitMs = 0): Promise<FetchPartitionResponse> {
    const res = await Promise.resolve(cluster!.node(id).rm.fetch({
      replicaId: -1, isolationLevel: isolation, brokerEpoch: -1, maxWaitMs, minBytes: 1, maxBytes: 1 << 20, sessionId: 0, sessionEpoch: -1,
      topics: [{ name: T, partitions: [{ partition: 0, fetchOffset: offset, currentLeaderEpoch: -1, partitionMaxBytes: 1 << 20 }] }], forgotten: [],
    }, () => false)) as FetchResponse;
    return res.topics[0]!.partitions[0]!;
  }

  /** What a read_committed consumer delivers from `id`: data records up to the LSO, minus aborted transactions, never markers. */
  async function readCommitted(id: number): Promise<string[]> {
    const out: string[] = [];
    const aborted = new Map<number, number[]>();
    for (let offset = 0, round = 0; round < 100; round++) {
      const r = await fetch(id, offset, READ_COMMITTED);
      expect(r.errorCode).to.equal(0);
      for (const a of r.abortedTransactions ?? []) aborted.set(a.producerId, [...(aborted.get(a.producerId) ?? []), a.firstOffset]);
      if (r.records.length === 0) return out;
      const open = new Set<number>();
      for (const b of decodeRecordBatches(r.records)) {
        const pid = Number(b.header.producerId);
        if ((b.header.attributes & CONTROL_FLAG_MASK) !== 0) {
          open.delete(pid);
        } else {
          if ((aborted.get(pid) ?? []).some((first) => first <= b.header.baseOffset)) open.add(pid);
          if (!open.has(pid)) for (const rec of b.records) if (rec.offset >= offset) out.push(Buffer.from(rec.value!).toString());
        }
        offset = b.header.baseOffset + b.header.lastOffsetDelta + 1;
        if ((b.header.attributes & CONTROL_FLAG_MASK) !== 0) aborted.set(pid, (aborted.get(pid) ?? []).filter((first) => first > b.header.baseOffset));
      }
    }
    throw new Error('readCommitted: no end');
  }

  function listLatest(id: number, isolation: 0 | 1): number {
    return cluster!.node(id).rm.listOffsets({ replicaId: -1, isolationLevel: isolation, topics: [{ name: T, partitions: [{ partition: 0, currentLeaderEpoch: -1, timestamp: LATEST_TIMESTAMP }] }] })
      .topics[0]!.partitions[0]!.offset;
  }

  it('holds read_committed readers at the first open transaction until its marker, and hides what an abort ended', async () => {
    const c = await threeNodes();
    const seen: TxnMarkerApplied[] = [];
    c.node(1).rm.onTxnMarker((m) => seen.push(m));
    expect((await produce(1, plainBatch('p0'), { transactionalId: null })).errorCode).to.equal(0); // 0
    expect(await produce(1, txnBatch(PID, 0, 0, 'a1', 'a2'))).to.include({ errorCode: 0, baseOffset: 1 }); // 1-2
    expect((await produce(1, plainBatch('p3'), { transactionalId: null })).errorCode).to.equal(0); // 3
    expect(await produce(1, txnBatch(PID + 1, 0, 0, 'b1'))).to.include({ errorCode: 0, baseOffset: 4 }); // 4
    expect(log(1).highWatermark).to.equal(5);
    expect(c.node(1).rm.lastStableOffset(T, 0)).to.equal(1);
    expect(listLatest(1, READ_COMMITTED)).to.equal(1);
    expect(listLatest(1, READ_UNCOMMITTED)).to.equal(5);
    const held = await fetch(1, 0, READ_COMMITTED);
    expect(held.lastStableOffset).to.equal(1);
    expect(decodeRecordBatches(held.records).map((b) => b.header.baseOffset), 'only what lies below the LSO').to.deep.equal([0]);
    expect((await fetch(1, 1, READ_COMMITTED)).records.length, 'nothing at the LSO').to.equal(0);
    expect((await fetch(1, 0, READ_UNCOMMITTED)).lastStableOffset, 'read_uncommitted answers carry the LSO too').to.equal(1);

    // The coordinator aborts PID's transaction (ending it at epoch 1) and commits PID+1's.
    expect(markerErrors(await markers(1, PID, 1, false, 3))).to.deep.equal([0]);
    expect(c.node(1).rm.lastStableOffset(T, 0), 'PID+1 is still open').to.equal(4);
    expect(markerErrors(await markers(1, PID + 1, 1, true, 3))).to.deep.equal([0]);
    expect(c.node(1).rm.lastStableOffset(T, 0)).to.equal(7);
    expect(seen.map((m) => [m.producerId, m.committed, m.offset, m.producerEpoch, m.coordinatorEpoch])).to.deep.equal([[PID, false, 5, 1, 3], [PID + 1, true, 6, 1, 3]]);
    const answer = await fetch(1, 0, READ_COMMITTED);
    expect(answer.abortedTransactions).to.deep.equal([{ producerId: PID, firstOffset: 1 }]);
    expect(await readCommitted(1)).to.deep.equal(['p0', 'p3', 'b1']);
    expect((await fetch(1, 0, READ_UNCOMMITTED)).abortedTransactions, 'read_uncommitted: no list').to.equal(null);

    // The marker raised PID's epoch: a late write of the ended transaction is fenced; the next one starts at 0.
    expect((await produce(1, txnBatch(PID, 0, 2, 'late'))).errorCode).to.equal(Errors.INVALID_PRODUCER_EPOCH.code);
    expect((await produce(1, txnBatch(PID, 1, 1, 'gap'))).errorCode).to.equal(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code);
    expect(await produce(1, txnBatch(PID, 1, 0, 'c1'))).to.include({ errorCode: 0, baseOffset: 7 });
    expect(c.node(1).rm.lastStableOffset(T, 0)).to.equal(7);
  });

  it('fences markers and answers per partition', async () => {
    const c = await threeNodes();
    expect((await produce(1, txnBatch(PID, 0, 0, 'a'))).errorCode).to.equal(0);
    expect(markerErrors(await markers(1, PID, 1, true, 5))).to.deep.equal([0]);
    expect(markerErrors(await markers(1, PID, 1, true, 5)), 'a retried marker').to.deep.equal([0]);
    expect(markerErrors(await markers(1, PID, 1, false, 4))).to.deep.equal([Errors.TRANSACTION_COORDINATOR_FENCED.code]);
    expect(markerErrors(await markers(1, PID, 0, false, 6))).to.deep.equal([Errors.INVALID_PRODUCER_EPOCH.code]);
    expect(markerErrors(await markers(2, PID, 1, true, 5)), 'not the leader').to.deep.equal([Errors.NOT_LEADER_OR_FOLLOWER.code]);
    expect(markerErrors(await markers(1, PID, 1, true, 5, [0, 9])), 'an unknown partition').to.deep.equal([0, Errors.UNKNOWN_TOPIC_OR_PARTITION.code]);
    c.changePartition(TID, 0, { isr: [1] });
    c.setTopicConfig(T, 'min.insync.replicas', '2');
    await waitFor('broker 1 sees the ISR shrink', () => c.node(1).rm.partition(T, 0)!.isr.length === 1);
    expect(markerErrors(await markers(1, PID, 1, true, 5))).to.deep.equal([Errors.NOT_ENOUGH_REPLICAS.code]);
  });

  it('wakes a waiting read_committed fetch when a marker moves the LSO', async () => {
    await threeNodes();
    expect((await produce(1, txnBatch(PID, 0, 0, 'a'))).errorCode).to.equal(0);
    let answered = false;
    const waiting = fetch(1, 0, READ_COMMITTED, 20_000).finally(() => {
      answered = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(answered, 'nothing below the LSO yet: the fetch waits').to.equal(false);
    expect(markerErrors(await markers(1, PID, 1, true))).to.deep.equal([0]);
    const r = await within('the woken fetch', waiting);
    expect(decodeRecordBatches(r.records).map((b) => b.records.map((x) => Buffer.from(x.value!).toString())).flat()).to.deep.equal(['a']);
  });

  it('keeps the same transaction state and index on followers, so a new leader serves the same LSO and aborts', async () => {
    const c = await threeNodes();
    expect((await produce(1, txnBatch(PID, 0, 0, 'x1'))).errorCode).to.equal(0);
    expect(markerErrors(await markers(1, PID, 1, false))).to.deep.equal([0]);
    expect((await produce(1, txnBatch(PID + 1, 0, 0, 'y1'))).errorCode).to.equal(0); // open
    expect((await produce(1, plainBatch('z'), { transactionalId: null })).errorCode).to.equal(0);
    await waitFor('followers hold the log', () => [2, 3].every((id) => log(id).logEndOffset === log(1).logEndOffset && log(id).highWatermark === log(1).highWatermark));
    const aborts = log(1).abortedTransactions(0, 100);
    expect(aborts).to.have.length(1);
    for (const id of [2, 3]) expect(log(id).abortedTransactions(0, 100), `broker ${id}'s index`).to.deep.equal(aborts);

    c.changePartition(TID, 0, { leader: 2 });
    await waitFor('broker 2 leads', () => c.node(2).rm.partition(T, 0)!.isLeader);
    expect(c.node(2).rm.lastStableOffset(T, 0), 'the open transaction holds the LSO on the new leader too').to.equal(2);
    expect(await readCommitted(2)).to.deep.equal([]);
    expect(markerErrors(await markers(2, PID + 1, 1, true))).to.deep.equal([0]);
    expect(await readCommitted(2)).to.deep.equal(['y1', 'z']);
    expect((await produce(2, txnBatch(PID, 0, 1, 'late'))).errorCode, 'the fence moved with the log').to.equal(Errors.INVALID_PRODUCER_EPOCH.code);
  });

  it('takes a truncated divergent marker out of the state and the index', async () => {
    const c = await threeNodes({ markerTimeoutMs: 300 });
    expect((await produce(1, txnBatch(PID, 0, 0, 'a'))).errorCode).to.equal(0);
    await waitFor('followers hold the batch', () => [2, 3].every((id) => log(id).logEndOffset === 1));
    c.controllerMode = 'hold';
    await c.node(1).server.close(); // broker 1 still leads, but its followers cannot reach it
    expect(markerErrors(await markers(1, PID, 1, false)), 'appended, never replicated').to.deep.equal([Errors.REQUEST_TIMED_OUT.code]);
    expect(log(1).abortedTransactions(0, 10)).to.have.length(1);
    expect(cluster!.node(1).rm.producerState(T, 0)!.entry(PID)!.epoch).to.equal(1);

    c.controllerMode = 'commit';
    c.changePartition(TID, 0, { leader: 2, isr: [2, 3] });
    await waitFor('broker 2 leads', () => c.node(2).rm.partition(T, 0)!.isLeader);
    expect(c.node(2).rm.lastStableOffset(T, 0), 'the transaction is open on the new leader').to.equal(0);
    expect(markerErrors(await markers(2, PID, 1, true, 1))).to.deep.equal([0]);
    await waitFor('broker 1 truncated its abort and took the commit', () => log(1).logEndOffset === 2 && log(1).highWatermark === 2 && c.node(1).rm.producerState(T, 0)?.endOffset === 2);
    expect(log(1).abortedTransactions(0, 10), 'the cut abort left the index').to.deep.equal([]);
    const state = (id: number) => c.node(id).rm.producerState(T, 0)!.entry(PID);
    expect(state(1)).to.deep.include({ epoch: 1, currentTxnFirstOffset: -1, coordinatorEpoch: 1, lastMarkerOffset: 1 });
    expect(state(1)).to.deep.equal(state(2));
    expect(await readCommitted(2)).to.deep.equal(['a']);
  });

  for (const withSnapshot of [true, false]) {
    it(`restores the LSO and aborts after a restart ${withSnapshot ? 'from the snapshot' : 'from the log'}`, async () => {
      const c = await threeNodes();
      expect((await produce(1, txnBatch(PID, 0, 0, 'gone'))).errorCode).to.equal(0);
      expect(markerErrors(await markers(1, PID, 1, false))).to.deep.equal([0]);
      expect((await produce(1, txnBatch(PID + 1, 0, 0, 'pending'))).errorCode).to.equal(0);
      await c.stopNode(1);
      const file = path.join(c.node(1).dataDir, `${T}-0`, PRODUCER_STATE_SNAPSHOT_FILE);
      expect(fs.existsSync(file)).to.equal(true);
      if (!withSnapshot) fs.unlinkSync(file);
      await c.startNode(1);
      await waitFor('broker 1 leads again', () => c.node(1).rm.partition(T, 0)?.isLeader === true);
      c.changePartition(TID, 0, { leader: 1 });
      await waitFor('broker 1 has its HW back', () => log(1).highWatermark === 3);
      expect(c.node(1).rm.lastStableOffset(T, 0)).to.equal(2);
      expect(log(1).abortedTransactions(0, 10).map((a) => [a.producerId, a.firstOffset, a.lastOffset])).to.deep.equal([[PID, 0, 1]]);
      expect(markerErrors(await markers(1, PID + 1, 1, true))).to.deep.equal([0]);
      expect(await readCommitted(1)).to.deep.equal(['pending']);
    });
  }

  it('verifies a producer\'s first transactional write to a partition with the coordinator (KIP-890)', async () => {
    await threeNodes({ verify: true });
    expect((await produce(1, txnBatch(PID, 0, 0, 'not-added'))).errorCode).to.equal(Errors.INVALID_TXN_STATE.code);
    expect(log(1).logEndOffset, 'a refused batch is not written').to.equal(0);
    coordinator.add(PID, 0);
    expect(await produce(1, txnBatch(PID, 0, 0, 'a'))).to.include({ errorCode: 0, baseOffset: 0 });
    expect(await produce(1, txnBatch(PID, 0, 1, 'b'))).to.include({ errorCode: 0, baseOffset: 1 });
    expect(coordinator.asked.map((q) => [q.transactionalId, q.producerId, q.producerEpoch, q.topic, q.partition]), 'asked once per transaction and partition')
      .to.deep.equal([[TXID, PID, 0, T, 0], [TXID, PID, 0, T, 0]]);
    expect(markerErrors(await markers(1, PID, 1, true))).to.deep.equal([0]);
    expect((await produce(1, txnBatch(PID, 1, 0, 'next'))).errorCode, 'a new transaction is verified again').to.equal(Errors.INVALID_TXN_STATE.code);
    coordinator.failWith = new Error('coordinator unreachable');
    expect((await produce(1, txnBatch(PID, 1, 0, 'next'))).errorCode).to.equal(Errors.COORDINATOR_NOT_AVAILABLE.code);
    coordinator.failWith = null;
    // A marker landing while the coordinator is asked: that transaction ended, the write is refused.
    coordinator.add(PID, 1);
    coordinator.meanwhile = async () => {
      coordinator.meanwhile = null;
      expect(markerErrors(await markers(1, PID, 2, false))).to.deep.equal([0]);
    };
    expect((await produce(1, txnBatch(PID, 1, 0, 'raced'))).errorCode).to.equal(Errors.INVALID_TXN_STATE.code);
    expect(await readCommitted(1)).to.deep.equal(['a', 'b']);
  });

  it('keeps a producer\'s pipelined writes in order while its first one is verified: later ones wait for it, and are not asked again', async () => {
    await threeNodes({ verify: true });
    coordinator.add(PID, 0);
    // The first question is answered last (a remote coordinator, a slow link): the writes sent behind it must
    // neither overtake it (OUT_OF_ORDER_SEQUENCE_NUMBER, a retry for the client) nor be verified on their own.
    let release!: () => void;
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    coordinator.meanwhile = async () => {
      coordinator.meanwhile = null;
      await slow;
    };
    const first = produce(1, txnBatch(PID, 0, 0, 'p0'));
    const later = [produce(1, txnBatch(PID, 0, 1, 'p1')), produce(1, txnBatch(PID, 0, 2, 'p2'))];
    await waitFor('the first write to be asked about', () => coordinator.asked.length >= 1);
    release();
    const answers = await within('the writes', Promise.all([first, ...later]));
    expect(answers.map((a) => [a.errorCode, a.baseOffset])).to.deep.equal([[0, 0], [0, 1], [0, 2]]);
    expect(coordinator.asked, 'asked once for the transaction on the partition').to.have.length(1);
    expect(markerErrors(await markers(1, PID, 0, true))).to.deep.equal([0]);
    expect(await readCommitted(1)).to.deep.equal(['p0', 'p1', 'p2']);
  });

  it('applies the client rules, and takes coordinator batches without sequence', async () => {
    await threeNodes({ verify: true });
    const marker = asBuffer(encodeTxnMarker({ producerId: PID, producerEpoch: 0, committed: true, coordinatorEpoch: 0, timestampMs: Date.now() }));
    expect((await produce(1, marker)).errorCode, 'a client control batch').to.equal(Errors.INVALID_RECORD.code);
    expect((await produce(1, txnBatch(PID, 0, 0, 'a'), { transactionalId: null })).errorCode, 'no transactionalId').to.equal(Errors.INVALID_REQUEST.code);
    coordinator.add(PID, 0);
    expect((await produce(1, txnBatch(PID, 0, 0, 'a'))).errorCode).to.equal(0);
    const idem = asBuffer(encodeRecordBatch({ records: [{ value: Buffer.from('plain') }], producerId: BigInt(PID), producerEpoch: 0, baseSequence: 1 }));
    expect((await produce(1, idem, { transactionalId: null })).errorCode, 'a non-transactional write into an open transaction').to.equal(Errors.INVALID_TXN_STATE.code);
    const offsets = txnBatch(PID + 5, 3, -1, 'group offsets');
    expect((await produce(1, offsets, { transactionalId: null, origin: 'coordinator' })).errorCode).to.equal(0);
    expect((await produce(1, txnBatch(PID + 5, 3, -1, 'again'), { transactionalId: null, origin: 'coordinator' })).errorCode).to.equal(0);
    expect(coordinator.asked.map((q) => q.producerId), 'coordinator appends (and refused requests) are not verified').to.deep.equal([PID]);
    expect(cluster!.node(1).rm.lastStableOffset(T, 0)).to.equal(0);
    expect(markerErrors(await markers(1, PID + 5, 4, true))).to.deep.equal([0]);
    expect(markerErrors(await markers(1, PID, 1, true))).to.deep.equal([0]);
    expect(await readCommitted(1)).to.deep.equal(['a', 'group offsets', 'again']);
  });
});
