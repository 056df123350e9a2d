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
// Portability: only Uint8Array and TextEncoder here and in the codec; the
// CRC32C and codec implementations are the entry point's (src/node.ts,
// src/browser.ts). Keys and values come back typed as Buffer for Node users:
// on Node they are Buffers (views into ws's Buffer frames, or a Node codec's
// output); in a browser they are plain Uint8Arrays (decode text with
// TextDecoder).

import { CompressionType, CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK } from '../record/batch-header.js';
import { decodeRecordBatches, encodeRecordBatch, type DecodedBatch, type RecordHeader, type RecordInput } from '../record/record-batch.js';
import type { AbortedTransaction } from '../protocol/apis/fetch.js';
import { CONTROL_TYPE_ABORT, CONTROL_TYPE_COMMIT } from '../record/control-batch.js';
import { int16At } from '../util/bytes.js';
import { adoptBytes, utf8Encode } from '../util/bytes.js';

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
export function encodeMessages(messages: readonly Message[], opts: EncodeOptions): Uint8Array {
  return encodeRecordBatch({
    records: messages.map((m) => ({
      key: toBytes(m.key ?? null),
      value: toBytes(m.value),
      headers: toHeaders(m.headers),
      timestamp: m.timestamp ?? opts.timestampMs,
    })),
    compression: opts.compression ?? CompressionType.None,
  });
}

/**
 * The data records of a fetch response's `records` at or after `fetchOffset`,
 * in offset order. `aborted` (a read_committed fetch's abortedTransactions)
 * also drops the records of aborted transactions, as Kafka's consumer does:
 * walking the batches in offset order, a producer's aborted transaction
 * starts at its firstOffset and ends at that producer's ABORT marker; its
 * transactional batches in between are skipped. null (read_uncommitted)
 * keeps every data record.
 */
export function decodeFetchedRecords(records: Uint8Array, fetchOffset: number, aborted: readonly AbortedTransaction[] | null = null): ConsumedRecord[] {
  const out: ConsumedRecord[] = [];
  const skip = aborted === null ? null : new AbortedSkipper(aborted);
  // adoptBytes: on Node, a Buffer view, so keys and values are Buffers too.
  for (const batch of decodeRecordBatches(adoptBytes(records))) {
    const attributes = batch.header.attributes;
    if (skip !== null && skip.skips(batch)) continue;
    if ((attributes & CONTROL_FLAG_MASK) !== 0) continue;
    // The decoded records themselves (a ConsumedRecord is what they hold, less `attributes`): no copy per record.
    for (const r of batch.records) if (r.offset >= fetchOffset) out.push(r as ConsumedRecord);
  }
  return out;
}

export { CONTROL_TYPE_ABORT, CONTROL_TYPE_COMMIT };

/**
 * A control record's type from its key (int16 version, int16 type: the
 * layout of record/control-batch.ts); -1 when the key is too short. Read from
 * the already decoded record, so a fetch answer is not decoded twice.
 */
export function controlTypeOf(key: Uint8Array | null): number {
  if (key === null || key.length < 4) return -1;
  return int16At(key, 2);
}

/** Kafka's read_committed walk (CompletedFetch): which batches belong to aborted transactions. */
class AbortedSkipper {
  /** Aborted transactions not yet reached, by first offset. */
  private readonly ahead: AbortedTransaction[];
  private next = 0;
  /** Producers whose aborted transaction the walk is inside of. */
  private readonly inAborted = new Set<string>();

  constructor(aborted: readonly AbortedTransaction[]) {
    this.ahead = [...aborted].sort((a, b) => a.firstOffset - b.firstOffset);
  }

  /** Whether to skip this batch (an aborted transaction's data, or any control batch). */
  skips(batch: DecodedBatch): boolean {
    const h = batch.header;
    if (h.producerId < 0n) return (h.attributes & CONTROL_FLAG_MASK) !== 0;
    const lastOffset = h.baseOffset + h.lastOffsetDelta;
    while (this.next < this.ahead.length && this.ahead[this.next]!.firstOffset <= lastOffset) {
      this.inAborted.add(String(this.ahead[this.next]!.producerId));
      this.next++;
    }
    const pid = String(h.producerId);
    if ((h.attributes & CONTROL_FLAG_MASK) !== 0) {
      if (controlTypeOf(batch.records[0]?.key ?? null) === CONTROL_TYPE_ABORT) this.inAborted.delete(pid);
      return true;
    }
    return (h.attributes & TRANSACTIONAL_FLAG_MASK) !== 0 && this.inAborted.has(pid);
  }
}

/**
 * One message as the batch codec's input (what the Producer accumulates):
 * strings become UTF-8 bytes, binary stays a view (not a copy). A message
 * without headers gets none (no empty list per record).
 */
export function toRecordInput(m: Message, timestampMs: number): RecordInput {
  const record: RecordInput = { key: toBytes(m.key ?? null), value: toBytes(m.value), timestamp: m.timestamp ?? timestampMs };
  if (m.headers !== undefined) record.headers = toHeaders(m.headers);
  return record;
}

function toBytes(bytes: Uint8Array): Uint8Array;
function toBytes(bytes: MessageBytes): Uint8Array | null;
function toBytes(bytes: MessageBytes): Uint8Array | null {
  if (bytes === null) return null;
  return typeof bytes === 'string' ? utf8Encode(bytes) : bytes;
}

function toHeaders(headers: Message['headers']): RecordHeader[] {
  if (headers === undefined) return [];
  const entries = Array.isArray(headers)
    ? (headers as ReadonlyArray<{ key: string; value: MessageBytes }>)
    : Object.entries(headers as Record<string, MessageBytes>).map(([key, value]) => ({ key, value }));
  return entries.map((h) => ({ key: h.key, value: toBytes(h.value) }));
}
