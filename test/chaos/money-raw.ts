// Raw log bytes → the tx_money checker's RawRecords and RawMarkers, shared by
// the chaos run's final read (over the wire) and the simulation's (from the
// live PartitionLog). Decoded here from the batch bytes with the record
// codec, NOT through the broker's or the client's transaction logic: the
// checker's replay is meant to be independent of the code it checks. A
// control batch (attributes transactional|control) holds one record whose
// key is int16 version, int16 type (0 ABORT, 1 COMMIT).

import { decodeRecordBatch } from '../../src/record/record-batch.js';
import { CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK, batchSizeAt, lastOffsetOf } from '../../src/record/batch-header.js';
import type { RawMarker, RawRecord } from './money-history.js';

/** Collects the records at or after `from` below `to` of the whole batches in `buf`; returns the offset after the last whole batch read. */
export function collectRaw(buf: Uint8Array, from: number, to: number, raw: RawRecord[], markers: RawMarker[]): number {
  let next = from;
  for (let pos = 0; pos + 12 <= buf.length;) {
    const size = batchSizeAt(buf, pos);
    if (pos + size > buf.length) break; // a partial batch at the end of a size-limited answer
    if (lastOffsetOf(buf, pos) >= next) {
      const { header, records } = decodeRecordBatch(buf, pos);
      const producerId = header.producerId.toString();
      const transactional = (header.attributes & TRANSACTIONAL_FLAG_MASK) !== 0;
      const control = (header.attributes & CONTROL_FLAG_MASK) !== 0;
      for (const r of records) {
        if (r.offset < next || r.offset >= to) continue;
        if (control) {
          const type = r.key && r.key.length >= 4 ? (r.key[2]! << 8) | r.key[3]! : -1;
          if (type === 0 || type === 1) markers.push({ offset: r.offset, producerId, producerEpoch: header.producerEpoch, type: type === 1 ? 'commit' : 'abort' });
          else throw new Error(`control record at ${r.offset} with type ${type}`);
          continue;
        }
        raw.push({
          offset: r.offset, value: r.value === null ? '' : Buffer.from(r.value).toString('utf8'), producerId, producerEpoch: header.producerEpoch, transactional,
        });
      }
      next = lastOffsetOf(buf, pos) + 1;
    }
    pos += size;
  }
  return next;
}
