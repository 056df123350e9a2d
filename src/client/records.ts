// From application messages to produce batches and from fetched batches back
// to records, on top of the RecordBatch v2 codec (src/record/record-batch.ts).
//
// Fetch responses carry whole batches as stored, so the first batch may start
// before the offset asked for: records below the fetch offset are dropped
// here, as are control batches (transaction markers), which are not data.
// Decoding checks every batch's CRC (the pair of the CRC written on encode);
// a bad batch throws CORRUPT_MESSAGE.
//
// Decoded keys, values and header values are views into the fetched bytes,
// not copies: hold on to them only as long as you would hold the response.
//
// Portability: the codec uses Buffer, node:zlib (gzip) and a native CRC32C,
// so unlike broker-connection.ts this module is Node-only for now.

import { CompressionType, CONTROL_FLAG_MASK } from '../record/batch-header.js';
import { decodeRecordBatches, encodeRecordBatch, type RecordHeader, type RecordInput } from '../record/record-batch.js';

export type MessageBytes = string | Uint8Array | null;

export interface Message {
  readonly key?: MessageBytes;
  readonly value: MessageBytes;
  /** A map (one value per key) or a list (Kafka allows a key more than once). */
  readonly headers?: Readonly<Record<string, MessageBytes>> | ReadonlyArray<{ readonly key: string; readonly value: MessageBytes }>;
  /** Milliseconds since the epoch; default EncodeOptions.timestampMs. */
  readonly timestamp?: number;
}

export interface EncodeOptions {
  /** Timestamp of messages that carry none: the producer's clock reading, passed in so tests control it. */
  readonly timestampMs: number;
  /** Default None. */
  readonly compression?: CompressionType;
}

export interface ConsumedRecord {
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

/** One RecordBatch v2 holding `messages` in order (offsets 0..n-1 until the leader assigns real ones). */
export function encodeMessages(messages: readonly Message[], opts: EncodeOptions): Buffer {
  return encodeRecordBatch({
    records: messages.map((m) => ({
      key: toBuffer(m.key ?? null),
      value: toBuffer(m.value),
      headers: toHeaders(m.headers),
      timestamp: m.timestamp ?? opts.timestampMs,
    })),
    compression: opts.compression ?? CompressionType.None,
  });
}

/** The data records of a fetch response's `records` at or after `fetchOffset`, in offset order. */
export function decodeFetchedRecords(records: Uint8Array, fetchOffset: number): ConsumedRecord[] {
  const out: ConsumedRecord[] = [];
  for (const batch of decodeRecordBatches(toBuffer(records))) {
    if ((batch.header.attributes & CONTROL_FLAG_MASK) !== 0) continue;
    // The decoded records themselves (a ConsumedRecord is what they hold, less `attributes`): no copy per record.
    for (const r of batch.records) if (r.offset >= fetchOffset) out.push(r);
  }
  return out;
}

/**
 * One message as the batch codec's input (what the Producer accumulates):
 * strings become UTF-8 Buffers, binary stays a view (not a copy). A message
 * without headers gets none (no empty list per record).
 */
export function toRecordInput(m: Message, timestampMs: number): RecordInput {
  const record: RecordInput = { key: toBuffer(m.key ?? null), value: toBuffer(m.value), timestamp: m.timestamp ?? timestampMs };
  if (m.headers !== undefined) record.headers = toHeaders(m.headers);
  return record;
}

function toBuffer(bytes: Uint8Array): Buffer;
function toBuffer(bytes: MessageBytes): Buffer | null;
function toBuffer(bytes: MessageBytes): Buffer | null {
  if (bytes === null) return null;
  if (typeof bytes === 'string') return Buffer.from(bytes, 'utf8');
  // A view, not a copy: msgpack decodes `bin` as a plain Uint8Array outside Node's Buffer.
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function toHeaders(headers: Message['headers']): RecordHeader[] {
  if (headers === undefined) return [];
  const entries = Array.isArray(headers)
    ? (headers as ReadonlyArray<{ key: string; value: MessageBytes }>)
    : Object.entries(headers as Record<string, MessageBytes>).map(([key, value]) => ({ key, value }));
  return entries.map((h) => ({ key: h.key, value: toBuffer(h.value) }));
}
