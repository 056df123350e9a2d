// Encoding and decoding of whole Kafka RecordBatch v2 batches, record by
// record. Clients and tests use this; the broker never does (it reads only the
// header, batch-header.ts). docs/storage.md "Record batch format" has the
// byte layout. Each record (KIP-82 headers included) is:
//
//   length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
//   | keyLength varint | key | valueLength varint | value
//   | headerCount varint | { keyLength varint | key (UTF-8) | valueLength varint | value }*
//
// with length -1 meaning null (header keys cannot be null).
//
// Encoding sizes every record first and writes into one preallocated Uint8Array:
// no per-record allocation or concatenation. Decoding validates the header and
// CRC first, then walks the records with a bounds-checked Cursor, returning
// keys and values as views into the input (or the decompressed copy): callers
// that keep them past the input's lifetime must copy.
//
// Decoding invariants: it throws only SluiceError(CORRUPT_MESSAGE) on any
// malformed input; record count, record lengths and the section length must
// agree exactly (no slack, no trailing bytes); offsets strictly increase and
// stay within lastOffsetDelta; timestamps and offsets are safe integers.

import {
  ATTRIBUTES_OFFSET, BASE_SEQUENCE_OFFSET, BASE_TIMESTAMP_OFFSET, BATCH_LENGTH_OFFSET, type BatchHeader,
  COMPRESSION_CODEC_MASK, CONTROL_FLAG_MASK, CRC_OFFSET, CompressionType, DELETE_HORIZON_FLAG_MASK, LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD_BYTES, MAGIC_OFFSET, MAGIC_V2, MAX_TIMESTAMP_OFFSET, NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID, NO_SEQUENCE, PARTITION_LEADER_EPOCH_OFFSET, PRODUCER_EPOCH_OFFSET, PRODUCER_ID_OFFSET,
  RECORD_BATCH_HEADER_BYTES, RECORD_COUNT_OFFSET, TIMESTAMP_TYPE_MASK, TRANSACTIONAL_FLAG_MASK,
  BASE_OFFSET_OFFSET, computeBatchCrc, readBatchHeader, validateBatch,
} from './batch-header.js';
import { type CompressionRegistry, compressionName, defaultCompressionRegistry } from './compression.js';
import { Cursor, corrupt, varintSize, varlongSize, writeVarint, writeVarlong } from './varint.js';
import { AssertionError, assert } from '../util/assert.js';
import { allocBytes, utf8Length, utf8Write, writeBigInt64, writeInt16, writeInt32, writeInt64Number, writeInt8 } from '../util/bytes.js';
import { Errors, SluiceError } from '../util/errors.js';

export interface RecordHeader { key: string; value: Uint8Array | null }
export interface RecordInput {
  key?: Uint8Array | null;
  value: Uint8Array | null;
  headers?: RecordHeader[];
  timestamp?: number;
  /**
   * Offset relative to the batch's base offset. Default: the record's index.
   * The log cleaner keeps the surviving records' original offsets, so a
   * rebuilt batch has gaps; deltas must strictly increase.
   */
  offsetDelta?: number;
}
export interface BatchInput {
  /** At least one, unless lastOffsetDelta is given (a batch emptied by compaction that keeps producer state). */
  records: RecordInput[];
  /**
   * Default: the records' count - 1. The log cleaner keeps a rebuilt batch's
   * original value (Kafka's overrideLastOffset) so the batch still covers the
   * offsets it was appended with, which producer sequence tracking relies on.
   */
  lastOffsetDelta?: number;
  /** Default: the largest record timestamp. The log cleaner keeps the original batch's. */
  maxTimestamp?: number;
  /**
   * KIP-534: when set, the batch's delete-horizon attribute is set and its
   * base timestamp holds this value (record timestamps stay exact: their
   * deltas are taken from it). Tombstones in the batch may be removed by a
   * clean that runs after this time.
   */
  deleteHorizonMs?: number;
  /** Default 0; the leader stamps the real one on append. */
  baseOffset?: number;
  /** Default -1; the leader stamps it on append. */
  partitionLeaderEpoch?: number;
  /** Default: the first record's timestamp, else 0. Records without a timestamp get this one. */
  baseTimestamp?: number;
  /** Defaults -1n, -1, -1 (no idempotent producer). */
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  /** Default None. */
  compression?: CompressionType;
  isTransactional?: boolean;
  isControl?: boolean;
  /** Default 'create'. */
  timestampType?: 'create' | 'logAppend';
}

export interface DecodedRecord {
  offset: number;
  /** For a LogAppendTime batch this is the batch's maxTimestamp, as in Kafka. */
  timestamp: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: RecordHeader[];
  attributes: number;
}
export interface DecodedBatch { header: BatchHeader; records: DecodedRecord[]; sizeBytes: number }

/** What a record without headers is encoded with (shared: never written to). */
const NO_HEADERS: readonly RecordHeader[] = [];

/** Smallest encoded record: a 1-byte length, then 6 one-byte fields (attributes .. headerCount). */
const RECORD_BYTES_MIN = 7;
const RECORD_BODY_BYTES_MIN = RECORD_BYTES_MIN - 1;
/** Smallest encoded header: empty key, null value. */
const HEADER_BYTES_MIN = 2;
const INT16_MIN = -0x8000;
const INT16_MAX = 0x7fff;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

// ---------------------------------------------------------------- encoding

/** What the sizing pass learned, so the writing pass does not measure again. */
interface Plan {
  baseTimestamp: number;
  maxTimestamp: number;
  timestampDeltas: number[];
  bodyBytes: Int32Array;
  /** UTF-8 byte lengths of every header key, in write order. */
  headerKeyBytes: number[];
  recordsBytes: number;
}

/** A complete batch: header, records (compressed if asked), correct CRC, lastOffsetDelta and maxTimestamp. */
export function encodeRecordBatch(input: BatchInput, codecs: CompressionRegistry = defaultCompressionRegistry): Uint8Array {
  const plan = planBatch(input);
  const compression = input.compression ?? CompressionType.None;
  let buf: Uint8Array;
  // An emptied batch keeps its codec bit but has an empty section, as Kafka writes it.
  if (compression === CompressionType.None || input.records.length === 0) {
    buf = allocBytes(RECORD_BATCH_HEADER_BYTES + plan.recordsBytes);
    writeRecords(buf, RECORD_BATCH_HEADER_BYTES, input.records, plan);
  } else {
    const raw = allocBytes(plan.recordsBytes);
    writeRecords(raw, 0, input.records, plan);
    const packed = codecs.compress(compression, raw);
    buf = allocBytes(RECORD_BATCH_HEADER_BYTES + packed.length);
    buf.set(packed, RECORD_BATCH_HEADER_BYTES);
  }
  writeHeader(buf, input, plan, compression);
  writeInt32(buf, computeBatchCrc(buf, 0), CRC_OFFSET);
  return buf;
}

function planBatch(input: BatchInput): Plan {
  const records = input.records;
  assert(records.length > 0 || input.lastOffsetDelta !== undefined, 'a record batch needs at least one record');
  const baseTimestamp = input.deleteHorizonMs ?? input.baseTimestamp ?? records[0]?.timestamp ?? 0;
  assert(Number.isSafeInteger(baseTimestamp), `base timestamp ${baseTimestamp} is not a safe integer`);
  const plan: Plan = {
    baseTimestamp,
    maxTimestamp: Number.NEGATIVE_INFINITY,
    timestampDeltas: new Array<number>(records.length),
    bodyBytes: new Int32Array(records.length),
    headerKeyBytes: [],
    recordsBytes: 0,
  };
  let previousOffsetDelta = -1;
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    const offsetDelta = record.offsetDelta ?? i;
    assert(Number.isInteger(offsetDelta) && offsetDelta > previousOffsetDelta, `record ${i}: offset delta ${offsetDelta} after ${previousOffsetDelta}`);
    previousOffsetDelta = offsetDelta;
    const timestamp = record.timestamp ?? baseTimestamp;
    const delta = timestamp - baseTimestamp;
    if (!Number.isSafeInteger(timestamp) || !Number.isSafeInteger(delta)) throw new AssertionError(`record ${i}: bad timestamp ${timestamp}`);
    plan.timestampDeltas[i] = delta;
    if (timestamp > plan.maxTimestamp) plan.maxTimestamp = timestamp;
    const body = recordBodySize(record, delta, offsetDelta, plan.headerKeyBytes);
    if (body > 0x7fffffff) throw new AssertionError(`record ${i} too large: ${body} bytes`);
    plan.bodyBytes[i] = body;
    plan.recordsBytes += varintSize(body) + body;
  }
  assert(input.lastOffsetDelta === undefined || ((input.lastOffsetDelta | 0) === input.lastOffsetDelta && input.lastOffsetDelta >= previousOffsetDelta),
    `last offset delta ${input.lastOffsetDelta} below the last record's ${previousOffsetDelta}`);
  if (input.maxTimestamp !== undefined) plan.maxTimestamp = input.maxTimestamp;
  else if (records.length === 0) plan.maxTimestamp = baseTimestamp;
  return plan;
}

function recordBodySize(record: RecordInput, timestampDelta: number, offsetDelta: number, headerKeyBytes: number[]): number {
  const headers = record.headers ?? NO_HEADERS;
  let size = 1 + varlongSize(timestampDelta) + varintSize(offsetDelta);
  size += nullableBytesSize(record.key ?? null) + nullableBytesSize(record.value);
  size += varintSize(headers.length);
  for (const header of headers) {
    const keyBytes = utf8Length(header.key);
    headerKeyBytes.push(keyBytes);
    size += varintSize(keyBytes) + keyBytes + nullableBytesSize(header.value);
  }
  return size;
}

function nullableBytesSize(bytes: Uint8Array | null): number {
  return bytes === null ? 1 : varintSize(bytes.length) + bytes.length;
}

function writeRecords(buf: Uint8Array, start: number, records: RecordInput[], plan: Plan): void {
  let pos = start;
  let headerIndex = 0;
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    pos = writeVarint(buf, pos, plan.bodyBytes[i]!);
    const bodyStart = pos;
    buf[pos++] = 0; // record attributes: unused in v2
    pos = writeVarlong(buf, pos, plan.timestampDeltas[i]!);
    pos = writeVarint(buf, pos, record.offsetDelta ?? i);
    pos = writeNullableBytes(buf, pos, record.key ?? null);
    pos = writeNullableBytes(buf, pos, record.value);
    const headers = record.headers ?? NO_HEADERS;
    pos = writeVarint(buf, pos, headers.length);
    for (const header of headers) {
      const keyBytes = plan.headerKeyBytes[headerIndex++]!;
      pos = writeVarint(buf, pos, keyBytes);
      pos += utf8Write(buf.subarray(0, pos + keyBytes), header.key, pos);
      pos = writeNullableBytes(buf, pos, header.value);
    }
    assert(pos - bodyStart === plan.bodyBytes[i], 'record size differs from plan');
  }
  assert(pos - start === plan.recordsBytes, 'records section size differs from plan');
}

function writeNullableBytes(buf: Uint8Array, pos: number, bytes: Uint8Array | null): number {
  if (bytes === null) return writeVarint(buf, pos, -1);
  pos = writeVarint(buf, pos, bytes.length);
  buf.set(bytes, pos);
  return pos + bytes.length;
}

function writeHeader(buf: Uint8Array, input: BatchInput, plan: Plan, compression: CompressionType): void {
  const baseOffset = input.baseOffset ?? 0;
  const epoch = input.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH;
  const producerId = input.producerId ?? NO_PRODUCER_ID;
  const producerEpoch = input.producerEpoch ?? NO_PRODUCER_EPOCH;
  const baseSequence = input.baseSequence ?? NO_SEQUENCE;
  assert(Number.isSafeInteger(baseOffset) && baseOffset >= 0, `bad base offset ${baseOffset}`);
  assert((epoch | 0) === epoch && (baseSequence | 0) === baseSequence, 'leader epoch and base sequence are int32');
  assert(Number.isInteger(producerEpoch) && producerEpoch >= INT16_MIN && producerEpoch <= INT16_MAX, 'producer epoch is int16');
  assert(producerId >= INT64_MIN && producerId <= INT64_MAX, 'producer id is int64');
  writeInt64Number(buf, baseOffset, BASE_OFFSET_OFFSET);
  writeInt32(buf, buf.length - LOG_OVERHEAD_BYTES, BATCH_LENGTH_OFFSET);
  writeInt32(buf, epoch, PARTITION_LEADER_EPOCH_OFFSET);
  writeInt8(buf, MAGIC_V2, MAGIC_OFFSET);
  writeInt32(buf, 0, CRC_OFFSET); // filled in once everything it covers is written
  writeInt16(buf, batchAttributes(input, compression), ATTRIBUTES_OFFSET);
  writeInt32(buf, input.lastOffsetDelta ?? input.records.length - 1, LAST_OFFSET_DELTA_OFFSET);
  writeInt64Number(buf, plan.baseTimestamp, BASE_TIMESTAMP_OFFSET);
  writeInt64Number(buf, plan.maxTimestamp, MAX_TIMESTAMP_OFFSET);
  writeBigInt64(buf, producerId, PRODUCER_ID_OFFSET);
  writeInt16(buf, producerEpoch, PRODUCER_EPOCH_OFFSET);
  writeInt32(buf, baseSequence, BASE_SEQUENCE_OFFSET);
  writeInt32(buf, input.records.length, RECORD_COUNT_OFFSET);
}

function batchAttributes(input: BatchInput, compression: CompressionType): number {
  assert((compression & COMPRESSION_CODEC_MASK) === compression, `bad compression type ${compression}`);
  let attributes: number = compression;
  if (input.timestampType === 'logAppend') attributes |= TIMESTAMP_TYPE_MASK;
  if (input.isTransactional === true) attributes |= TRANSACTIONAL_FLAG_MASK;
  if (input.isControl === true) attributes |= CONTROL_FLAG_MASK;
  if (input.deleteHorizonMs !== undefined) attributes |= DELETE_HORIZON_FLAG_MASK;
  return attributes;
}

// ---------------------------------------------------------------- decoding

/**
 * Decodes the batch starting at `pos` after validating its header and CRC.
 * Throws SluiceError(CORRUPT_MESSAGE) on any malformation.
 */
export function decodeRecordBatch(buf: Uint8Array, pos = 0, codecs: CompressionRegistry = defaultCompressionRegistry): DecodedBatch {
  assert(Number.isSafeInteger(pos) && pos >= 0, `bad position ${pos}`);
  const sizeBytes = validateBatch(buf, pos);
  const header = readBatchHeader(buf, pos);
  if (!Number.isSafeInteger(header.baseOffset + header.lastOffsetDelta) || header.baseOffset < 0) {
    throw corrupt(`base offset ${header.baseOffset} out of range`, { position: pos });
  }
  let section = buf.subarray(pos + RECORD_BATCH_HEADER_BYTES, pos + sizeBytes);
  const compression = header.attributes & COMPRESSION_CODEC_MASK;
  if (compression !== CompressionType.None && !(header.recordCount === 0 && section.length === 0)) {
    section = codecs.decompress(compression, section);
  }
  return { header, records: decodeRecords(section, header, pos), sizeBytes };
}

/**
 * Checks, without building records, that every batch in `buf` would decode:
 * header and CRC, the codec (decompressing if needed), and each record's
 * fields within its length. What a partition leader runs on produced batches
 * so that it never stores one a consumer cannot read (Kafka's LogValidator
 * does the same). Throws what decodeRecordBatch would.
 */
export function checkRecordBatches(buf: Uint8Array, codecs: CompressionRegistry = defaultCompressionRegistry): void {
  for (let pos = 0; pos < buf.length;) {
    const sizeBytes = validateBatch(buf, pos);
    const header = readBatchHeader(buf, pos);
    let section = buf.subarray(pos + RECORD_BATCH_HEADER_BYTES, pos + sizeBytes);
    const compression = header.attributes & COMPRESSION_CODEC_MASK;
    if (!codecs.has(compression)) {
      throw new SluiceError(Errors.UNSUPPORTED_COMPRESSION_TYPE, `compression ${compressionName(compression)} is not supported by this cluster`, { position: pos });
    }
    if (compression !== CompressionType.None && !(header.recordCount === 0 && section.length === 0)) {
      section = codecs.decompress(compression, section);
    }
    walkRecords(section, header, pos);
    pos += sizeBytes;
  }
}

function walkRecords(section: Uint8Array, header: BatchHeader, batchPos: number): void {
  const count = header.recordCount;
  if (count > section.length / RECORD_BYTES_MIN) {
    throw corrupt(`record count ${count} cannot fit in ${section.length} bytes`, { position: batchPos });
  }
  const cursor = new Cursor(section, 0, section.length);
  let previousOffsetDelta = -1;
  for (let i = 0; i < count; i++) {
    const length = cursor.readVarint();
    if (length < RECORD_BODY_BYTES_MIN || length > cursor.remaining()) {
      throw corrupt(`record ${i}: length ${length} with ${cursor.remaining()} bytes left`, { record: i });
    }
    const recordEnd = cursor.pos + length;
    cursor.end = recordEnd;
    cursor.readInt8();
    recordTimestamp(header, cursor.readVarlong(), i);
    const offsetDelta = cursor.readVarint();
    if (offsetDelta <= previousOffsetDelta || offsetDelta > header.lastOffsetDelta) {
      throw corrupt(`record ${i}: offset delta ${offsetDelta} after ${previousOffsetDelta}, last ${header.lastOffsetDelta}`, { record: i });
    }
    previousOffsetDelta = offsetDelta;
    skipNullableBytes(cursor, i, 'key');
    skipNullableBytes(cursor, i, 'value');
    const headers = cursor.readVarint();
    if (headers < 0 || headers > cursor.remaining() / HEADER_BYTES_MIN) {
      throw corrupt(`record ${i}: header count ${headers} with ${cursor.remaining()} bytes left`, { record: i });
    }
    for (let h = 0; h < headers; h++) {
      const keyLength = cursor.readVarint();
      if (keyLength < 0) throw corrupt(`record ${i}: header ${h} key length ${keyLength}`, { record: i });
      cursor.skip(keyLength);
      skipNullableBytes(cursor, i, `header ${h} value`);
    }
    if (cursor.pos !== recordEnd) throw corrupt(`record ${i}: ${recordEnd - cursor.pos} bytes past its fields`, { record: i });
    cursor.end = section.length;
  }
  if (cursor.pos !== section.length) {
    throw corrupt(`${section.length - cursor.pos} trailing bytes after ${count} records`, { position: batchPos });
  }
}

function skipNullableBytes(cursor: Cursor, index: number, what: string): void {
  const length = cursor.readVarint();
  if (length < -1) throw corrupt(`record ${index}: ${what} length ${length}`, { record: index });
  if (length > 0) cursor.skip(length);
}

/** Decodes a concatenation of whole batches (e.g. a fetch response's records). */
export function decodeRecordBatches(buf: Uint8Array, codecs: CompressionRegistry = defaultCompressionRegistry): DecodedBatch[] {
  const batches: DecodedBatch[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const batch = decodeRecordBatch(buf, pos, codecs);
    batches.push(batch);
    pos += batch.sizeBytes; // >= 61, so the loop ends
  }
  return batches;
}

function decodeRecords(section: Uint8Array, header: BatchHeader, batchPos: number): DecodedRecord[] {
  const count = header.recordCount;
  if (count > section.length / RECORD_BYTES_MIN) {
    throw corrupt(`record count ${count} cannot fit in ${section.length} bytes`, { position: batchPos });
  }
  const cursor = new Cursor(section, 0, section.length);
  const records: DecodedRecord[] = [];
  let previousOffsetDelta = -1;
  for (let i = 0; i < count; i++) {
    const record = decodeRecord(cursor, header, previousOffsetDelta, i);
    previousOffsetDelta = record.offset - header.baseOffset;
    records.push(record);
  }
  if (cursor.pos !== section.length) {
    throw corrupt(`${section.length - cursor.pos} trailing bytes after ${count} records`, { position: batchPos });
  }
  return records;
}

function decodeRecord(cursor: Cursor, header: BatchHeader, previousOffsetDelta: number, index: number): DecodedRecord {
  const length = cursor.readVarint();
  if (length < RECORD_BODY_BYTES_MIN || length > cursor.remaining()) {
    throw corrupt(`record ${index}: length ${length} with ${cursor.remaining()} bytes left`, { record: index });
  }
  const sectionEnd = cursor.end;
  const recordEnd = cursor.pos + length;
  cursor.end = recordEnd; // a field that runs past its record fails as truncated
  const attributes = cursor.readInt8();
  const timestampDelta = cursor.readVarlong();
  const offsetDelta = cursor.readVarint();
  if (offsetDelta <= previousOffsetDelta || offsetDelta > header.lastOffsetDelta) {
    throw corrupt(`record ${index}: offset delta ${offsetDelta} after ${previousOffsetDelta}, last ${header.lastOffsetDelta}`, { record: index });
  }
  const key = readNullableBytes(cursor, index, 'key');
  const value = readNullableBytes(cursor, index, 'value');
  const headers = readHeaders(cursor, index);
  if (cursor.pos !== recordEnd) throw corrupt(`record ${index}: ${recordEnd - cursor.pos} bytes past its fields`, { record: index });
  cursor.end = sectionEnd;
  return { offset: header.baseOffset + offsetDelta, timestamp: recordTimestamp(header, timestampDelta, index), key, value, headers, attributes };
}

function recordTimestamp(header: BatchHeader, timestampDelta: number, index: number): number {
  const logAppend = (header.attributes & TIMESTAMP_TYPE_MASK) !== 0;
  const timestamp = logAppend ? header.maxTimestamp : header.baseTimestamp + timestampDelta;
  if (!Number.isSafeInteger(header.baseTimestamp) || !Number.isSafeInteger(timestamp)) {
    throw corrupt(`record ${index}: timestamp out of range`, { record: index });
  }
  return timestamp;
}

function readNullableBytes(cursor: Cursor, index: number, what: string): Uint8Array | null {
  const length = cursor.readVarint();
  if (length === -1) return null;
  if (length < -1) throw corrupt(`record ${index}: ${what} length ${length}`, { record: index });
  return cursor.readBytes(length);
}

function readHeaders(cursor: Cursor, index: number): RecordHeader[] {
  const count = cursor.readVarint();
  if (count < 0 || count > cursor.remaining() / HEADER_BYTES_MIN) {
    throw corrupt(`record ${index}: header count ${count} with ${cursor.remaining()} bytes left`, { record: index });
  }
  const headers: RecordHeader[] = [];
  for (let h = 0; h < count; h++) {
    const keyLength = cursor.readVarint();
    if (keyLength < 0) throw corrupt(`record ${index}: header ${h} key length ${keyLength}`, { record: index });
    const key = cursor.readUtf8(keyLength);
    headers.push({ key, value: readNullableBytes(cursor, index, `header ${h} value`) });
  }
  return headers;
}
