// The offsets loader on a real partition log holding plain commits,
// transactional commits of three producers (one committed, one aborted,
// one still open at the end of the log) and their markers: committed
// transactions become committed offsets (unless a plain commit is later in
// the log), aborted ones vanish, open ones come back pending, and a marker
// past the end offset the load was given is not applied.

import { expect } from 'chai';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { encodeRecordBatch, type RecordInput } from '../../src/record/record-batch.js';
import { encodeTxnMarker } from '../../src/record/control-batch.js';
import { loadOffsetsPartition, type LoadResult } from '../../src/groups/loader.js';
import { offsetKey, offsetValue } from '../../src/groups/records.js';
import { SystemClock, SystemScheduler } from '../../src/util/clock.js';
import { asBuffer } from '../../src/util/node-bytes.js';
import { removeDir, tempDir } from '../storage/log-test-helpers.js';

const COMMIT = 1;
const ABORT = 0;

function offsetRecord(groupId: string, partition: number, offset: number): RecordInput {
  return { key: offsetKey(groupId, 'orders', partition), value: offsetValue({ offset, leaderEpoch: 0, metadata: null, commitTimestampMs: 5 }), timestamp: 5 };
}

function plain(...records: RecordInput[]): Buffer {
  return asBuffer(encodeRecordBatch({ records }));
}

function txn(producerId: number, ...records: RecordInput[]): Buffer {
  return asBuffer(encodeRecordBatch({ records, producerId: BigInt(producerId), producerEpoch: 0, baseSequence: -1, isTransactional: true }));
}

function marker(producerId: number, type: number): Buffer {
  return asBuffer(encodeTxnMarker({ producerId, producerEpoch: 1, committed: type === COMMIT, coordinatorEpoch: 3, timestampMs: 5 }));
}

function committed(r: LoadResult, groupId: string): Array<[number, number]> {
  return [...(r.groups.get(groupId)?.offsets.get('orders') ?? new Map()).entries()].map(([p, v]) => [p, v.offset] as [number, number]).sort((a, b) => a[0] - b[0]);
}

describe('offsets loader with transactions (real partition log)', () => {
  let dir: string;
  let log: PartitionLog;

  beforeEach(() => {
    dir = tempDir('sluice-offsets-load-');
    log = PartitionLog.open({ dir, clock: SystemClock, config: {} });
  });

  afterEach(() => {
    log.close();
    removeDir(dir);
  });

  const append = (b: Buffer): void => {
    log.append(b, { leaderEpoch: 0 });
  };
  const load = (endOffset = log.logEndOffset) => loadOffsetsPartition(log, { endOffset, readBytesMax: 256, cancelled: () => false, scheduler: SystemScheduler });

  it('commits, drops and keeps pending as the markers say', async () => {
    append(plain(offsetRecord('g', 0, 1), offsetRecord('g', 1, 1), offsetRecord('g', 2, 1))); // 0-2
    append(txn(7, offsetRecord('g', 0, 10), offsetRecord('g', 1, 10))); // 3-4: producer 7, committed below
    append(txn(8, offsetRecord('g', 2, 20))); // 5: producer 8, aborted below
    append(plain(offsetRecord('g', 1, 2))); // 6: a plain commit after 7's record for partition 1 wins
    append(marker(8, ABORT)); // 7
    append(marker(7, COMMIT)); // 8
    append(txn(9, offsetRecord('g', 0, 30), offsetRecord('fresh', 4, 3))); // 9-10: producer 9, open at the end
    append(txn(7, offsetRecord('g', 2, 40))); // 11: producer 7's next transaction, open too
    const end = log.logEndOffset;
    append(marker(9, COMMIT)); // past the end offset of the load below

    const r = (await load(end))!;
    expect(committed(r, 'g')).to.deep.equal([[0, 10], [1, 2], [2, 1]]);
    expect(r.groups.has('fresh'), 'a group with only pending offsets has no committed ones').to.equal(false);
    expect(r.pending.openProducers).to.deep.equal([7, 9]);
    expect(r.pending.isUnstable('g', 'orders', 0)).to.equal(true);
    expect(r.pending.isUnstable('g', 'orders', 1)).to.equal(false);
    expect(r.pending.isUnstable('g', 'orders', 2)).to.equal(true);
    expect(r.pending.isUnstable('fresh', 'orders', 4)).to.equal(true);
    expect(r.skipped).to.equal(0);

    // The same pending state then ends by the live path's call, as the coordinator makes it.
    const out = r.pending.marker(9, end, true);
    expect(out.committed.map((c) => [c.groupId, c.partition, c.value.offset, c.value.logOffset])).to.deep.equal([['g', 0, 30, 9], ['fresh', 4, 3, 10]]);

    // Loading to the real end applies producer 9's marker.
    const all = (await load())!;
    expect(committed(all, 'g')).to.deep.equal([[0, 30], [1, 2], [2, 1]]);
    expect(committed(all, 'fresh')).to.deep.equal([[4, 3]]);
    expect(all.pending.openProducers).to.deep.equal([7]);
  });

  it('skips a control batch that is not a marker, and a transactional record that is not an offset commit', async () => {
    append(txn(7, offsetRecord('g', 0, 10)));
    append(asBuffer(encodeRecordBatch({ records: [{ key: Buffer.from([0, 0, 0, 9]), value: null, timestamp: 5 }], producerId: 7n, producerEpoch: 0, baseSequence: -1, isTransactional: true, isControl: true })));
    append(txn(7, { key: Buffer.from('not msgpack of a key'), value: Buffer.from('x'), timestamp: 5 }));
    const r = (await load())!;
    expect(r.skipped).to.equal(2);
    expect(r.pending.openProducers, 'an unknown control type ends nothing').to.deep.equal([7]);
  });
});
