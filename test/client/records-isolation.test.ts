// read_committed decoding on bytes (records.ts decodeFetchedRecords with a
// fetch answer's abortedTransactions), against Kafka's CompletedFetch rules:
// an aborted transaction's transactional batches are skipped from its
// firstOffset up to that producer's ABORT marker, committed ones are kept,
// non-transactional and other producers' batches are untouched, control
// batches are never records, and read_uncommitted keeps aborted data.
import '../../src/node.js';
import { expect } from 'chai';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { decodeFetchedRecords, controlTypeOf, CONTROL_TYPE_ABORT, CONTROL_TYPE_COMMIT } from '../../src/client/records.js';
import { decodeFetched } from '../../src/client/consumer-fetcher.js';
import { utf8Decode, utf8Encode } from '../../src/util/bytes.js';
import { encodeTxnMarker } from '../../src/record/control-batch.js';
import { stampBatch } from '../../src/record/batch-header.js';
import { asBuffer } from '../../src/util/node-bytes.js';

const text = (b: Uint8Array | null) => (b === null ? null : utf8Decode(b));

/** A transactional data batch of producer `pid` at `baseOffset`. */
function data(pid: number, baseOffset: number, values: string[], transactional = true): Uint8Array {
  return encodeRecordBatch({
    records: values.map((v) => ({ value: utf8Encode(v) })), baseOffset, producerId: BigInt(pid), producerEpoch: 0, baseSequence: 0,
    isTransactional: transactional,
  });
}

/** A marker as the leader stores it: the log's own marker codec, stamped at `offset`. */
function marker(pid: number, offset: number, type: number): Uint8Array {
  const m = asBuffer(encodeTxnMarker({ producerId: pid, producerEpoch: 1, committed: type === CONTROL_TYPE_COMMIT, coordinatorEpoch: 3, timestampMs: 1 }));
  stampBatch(m, 0, offset, 1);
  return m;
}

function plain(baseOffset: number, values: string[]): Uint8Array {
  return encodeRecordBatch({ records: values.map((v) => ({ value: utf8Encode(v) })), baseOffset });
}

const concat = (...parts: Uint8Array[]): Uint8Array => Buffer.concat(parts);
const values = (bytes: Uint8Array, fetchOffset: number, aborted: Array<{ producerId: number; firstOffset: number }> | null) =>
  decodeFetchedRecords(bytes, fetchOffset, aborted).map((r) => `${r.offset}:${text(r.value)}`);

describe('client: read_committed decoding', () => {
  it('reads the control record type from its key', () => {
    expect(controlTypeOf(new Uint8Array([0, 0, 0, 0]))).to.equal(CONTROL_TYPE_ABORT);
    expect(controlTypeOf(new Uint8Array([0, 0, 0, 1]))).to.equal(CONTROL_TYPE_COMMIT);
    expect(controlTypeOf(new Uint8Array([0, 0]))).to.equal(-1);
    expect(controlTypeOf(null)).to.equal(-1);
  });

  it('skips an aborted transaction and keeps a committed one interleaved with it', () => {
    // p7 aborts [0,1] + [4]; p8 commits [2,3]; a plain batch at 6.
    const log = concat(data(7, 0, ['a0', 'a1']), data(8, 2, ['c2', 'c3']), data(7, 4, ['a4']), marker(7, 5, CONTROL_TYPE_ABORT),
      plain(6, ['n6']), marker(8, 7, CONTROL_TYPE_COMMIT));
    expect(values(log, 0, [{ producerId: 7, firstOffset: 0 }])).to.deep.equal(['2:c2', '3:c3', '6:n6']);
    // read_uncommitted: every data record, still no control record.
    expect(values(log, 0, null)).to.deep.equal(['0:a0', '1:a1', '2:c2', '3:c3', '4:a4', '6:n6']);
  });

  it('lets the same producer commit after its ABORT marker', () => {
    const log = concat(data(7, 0, ['a0']), marker(7, 1, CONTROL_TYPE_ABORT), data(7, 2, ['c2']), marker(7, 3, CONTROL_TYPE_COMMIT));
    expect(values(log, 0, [{ producerId: 7, firstOffset: 0 }])).to.deep.equal(['2:c2']);
  });

  it('only starts skipping at the aborted transaction\'s first offset', () => {
    // p7 commits [0], then aborts [2]: the abort's firstOffset is 2.
    const log = concat(data(7, 0, ['c0']), marker(7, 1, CONTROL_TYPE_COMMIT), data(7, 2, ['a2']), marker(7, 3, CONTROL_TYPE_ABORT));
    expect(values(log, 0, [{ producerId: 7, firstOffset: 2 }])).to.deep.equal(['0:c0']);
  });

  it('keeps an idempotent (non-transactional) batch of a producer id that has an aborted transaction', () => {
    const log = concat(data(7, 0, ['a0']), data(7, 1, ['i1'], false), marker(7, 2, CONTROL_TYPE_ABORT));
    expect(values(log, 0, [{ producerId: 7, firstOffset: 0 }])).to.deep.equal(['1:i1']);
  });

  it('handles aborted transactions given out of order, and two producers aborting at once', () => {
    const log = concat(data(1, 0, ['x0']), data(2, 1, ['y1']), marker(2, 2, CONTROL_TYPE_ABORT), data(3, 3, ['z3']), marker(1, 4, CONTROL_TYPE_ABORT),
      marker(3, 5, CONTROL_TYPE_COMMIT));
    expect(values(log, 0, [{ producerId: 2, firstOffset: 1 }, { producerId: 1, firstOffset: 0 }])).to.deep.equal(['3:z3']);
  });

  it('moves the position past markers and skipped batches', () => {
    const log = concat(data(7, 10, ['a10', 'a11']), marker(7, 12, CONTROL_TYPE_ABORT));
    const d = decodeFetched(log, 10, [{ producerId: 7, firstOffset: 10 }]);
    expect(d.records).to.deep.equal([]);
    expect(d.nextOffset).to.equal(13);
    const m = decodeFetched(marker(7, 20, CONTROL_TYPE_COMMIT), 20, []);
    expect(m.records).to.deep.equal([]);
    expect(m.nextOffset).to.equal(21);
  });

  it('skips by the abortedTransactions list, not by the marker alone (an ABORT marker with no listed transaction skips nothing)', () => {
    const log = concat(data(7, 0, ['a0']), marker(7, 1, CONTROL_TYPE_ABORT));
    expect(values(log, 0, [])).to.deep.equal(['0:a0']); // no aborted transaction listed: the data is committed as far as the reader knows
    expect(values(log, 0, [{ producerId: 7, firstOffset: 0 }])).to.deep.equal([]);
  });
});
