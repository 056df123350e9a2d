// Control batches: the COMMIT and ABORT markers a transaction coordinator has
// written to every partition of a transaction (KIP-98; Kafka's
// EndTransactionMarker and ControlRecordType). A marker is a RecordBatch v2
// with the transactional and control attributes, the producer's id and
// epoch, base sequence -1 and exactly ONE uncompressed record:
//
//   key    int16 version (0) | int16 type (0 ABORT, 1 COMMIT)
//   value  int16 version (0) | int32 coordinatorEpoch
//
// Kafka defines more control types (2 LEADER_CHANGE, 3+ KRaft snapshot
// records); they are parsed as 'other' and never taken for a marker.
// Readers skip every control batch: a consumer never sees one.

import { ATTRIBUTES_OFFSET, CONTROL_FLAG_MASK, RECORD_BATCH_HEADER_BYTES, TRANSACTIONAL_FLAG_MASK, batchSizeAt } from './batch-header.js';
import { decodeRecordBatch, encodeRecordBatch } from './record-batch.js';
import { corrupt } from './varint.js';
import { int16At, int32At } from '../util/bytes.js';

export const CONTROL_TYPE_ABORT = 0;
export const CONTROL_TYPE_COMMIT = 1;
const CONTROL_KEY_VERSION = 0;
const MARKER_VALUE_VERSION = 0;
const CONTROL_KEY_BYTES = 4;
const MARKER_VALUE_BYTES = 6;

export interface TxnMarkerInput {
  readonly producerId: number;
  readonly producerEpoch: number;
  /** true: COMMIT; false: ABORT. */
  readonly committed: boolean;
  readonly coordinatorEpoch: number;
  /** The marker record's timestamp (the coordinator's clock). */
  readonly timestampMs: number;
}

/** What a control batch says. */
export type ControlRecord =
  | { readonly kind: 'marker'; readonly committed: boolean; readonly coordinatorEpoch: number }
  | { readonly kind: 'other'; readonly type: number };

/** Whether the batch at `pos` has the control attribute (header only). */
export function isControlBatch(buf: Uint8Array, pos = 0): boolean {
  return (int16At(buf, pos + ATTRIBUTES_OFFSET) & CONTROL_FLAG_MASK) !== 0;
}

/** Whether the batch at `pos` has the transactional attribute (header only). */
export function isTransactionalBatch(buf: Uint8Array, pos = 0): boolean {
  return (int16At(buf, pos + ATTRIBUTES_OFFSET) & TRANSACTIONAL_FLAG_MASK) !== 0;
}

/** A complete COMMIT or ABORT marker batch (base offset 0: the leader stamps it on append). */
export function encodeTxnMarker(m: TxnMarkerInput): Uint8Array {
  const key = new Uint8Array(CONTROL_KEY_BYTES);
  const kv = new DataView(key.buffer);
  kv.setInt16(0, CONTROL_KEY_VERSION);
  kv.setInt16(2, m.committed ? CONTROL_TYPE_COMMIT : CONTROL_TYPE_ABORT);
  const value = new Uint8Array(MARKER_VALUE_BYTES);
  const vv = new DataView(value.buffer);
  vv.setInt16(0, MARKER_VALUE_VERSION);
  vv.setInt32(2, m.coordinatorEpoch);
  return encodeRecordBatch({
    records: [{ key, value, timestamp: m.timestampMs }],
    producerId: BigInt(m.producerId),
    producerEpoch: m.producerEpoch,
    baseSequence: -1,
    isTransactional: true,
    isControl: true,
  });
}

/**
 * What the control batch at `pos` (whole in `buf`, CRC checked) says.
 * Throws CORRUPT_MESSAGE for a batch that is not a control batch, does not
 * hold exactly one record, or whose key or marker value is malformed.
 */
export function parseControlBatch(buf: Uint8Array, pos = 0): ControlRecord {
  if (buf.length - pos < RECORD_BATCH_HEADER_BYTES || !isControlBatch(buf, pos)) throw corrupt('not a control batch', { position: pos });
  const batch = decodeRecordBatch(buf.subarray(pos, pos + batchSizeAt(buf, pos)), 0);
  if (batch.records.length !== 1) throw corrupt(`a control batch holds ${batch.records.length} records, not 1`, { position: pos });
  const r = batch.records[0]!;
  if (r.key === null || r.key.length < CONTROL_KEY_BYTES) throw corrupt('control record key shorter than 4 bytes', { position: pos });
  const version = int16At(r.key, 0);
  if (version < 0) throw corrupt(`control record key version ${version}`, { position: pos });
  const type = int16At(r.key, 2);
  if (type !== CONTROL_TYPE_ABORT && type !== CONTROL_TYPE_COMMIT) return { kind: 'other', type };
  if (r.value === null || r.value.length < MARKER_VALUE_BYTES) throw corrupt('transaction marker value shorter than 6 bytes', { position: pos });
  const valueVersion = int16At(r.value, 0);
  if (valueVersion < 0) throw corrupt(`transaction marker value version ${valueVersion}`, { position: pos });
  return { kind: 'marker', committed: type === CONTROL_TYPE_COMMIT, coordinatorEpoch: int32At(r.value, 2) };
}
