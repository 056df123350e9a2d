// A RecordBatch v2 built one record at a time: each record body is encoded
// into one growing buffer when it is appended (the producer's accumulator
// does it at send()), and the 61-byte batch header is written when the batch
// is built for sending. Nothing per record is kept but its bytes, and no
// sizing pass runs at build time. The byte layout is record-batch.ts's (and
// docs/storage.md "Record batch format"); for the same records the bytes are
// exactly what encodeRecordBatch writes (tested).
//
// The record bodies do not depend on the batch's identity: a record's
// offsetDelta is its index and its timestampDelta is taken from the first
// record's timestamp (the base timestamp), so a batch re-identified (new
// producer id/epoch, sequence 0) is built again over the same bodies with a
// new header. The producer id, epoch, base sequence, attributes, lengths,
// record count, max timestamp and CRC are the header's alone.
//
// The buffer starts with room for the header, so an uncompressed batch is
// built in place: the header is written in front of the bodies and the
// result is a view of the buffer (no copy). A compressed batch compresses
// the bodies into a new buffer at build. Building again (after a
// re-identification) rewrites the in-place header: callers must be done
// with the bytes of the previous build (the producer re-identifies a batch
// only after its request was answered).
//
// Invariants: `count` bodies lie in buf[HEADER, HEADER + recordsBytes);
// no append after a build; maxTimestamp is the largest record timestamp.

import {
  ATTRIBUTES_OFFSET, BASE_OFFSET_OFFSET, BASE_SEQUENCE_OFFSET, BASE_TIMESTAMP_OFFSET, BATCH_LENGTH_OFFSET,
  CRC_OFFSET, CompressionType, LAST_OFFSET_DELTA_OFFSET, LOG_OVERHEAD_BYTES, MAGIC_OFFSET, MAGIC_V2, MAX_TIMESTAMP_OFFSET,
  NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE, PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET, PRODUCER_ID_OFFSET, RECORD_BATCH_HEADER_BYTES, RECORD_COUNT_OFFSET, TRANSACTIONAL_FLAG_MASK,
  computeBatchCrc,
} from './batch-header.js';
import { type CompressionRegistry, defaultCompressionRegistry } from './compression.js';
import { varintSize, varlongSize, writeVarint, writeVarlong } from './varint.js';
import { AssertionError, assert } from '../util/assert.js';
import { allocBytes, utf8Length, utf8Write, writeBigInt64, writeInt16, writeInt32, writeInt64Number, writeInt8 } from '../util/bytes.js';

/** A key, value or header value: bytes, a string (written as UTF-8), or null. */
export type BodyBytes = Uint8Array | string | null;
/** Headers as a list (a key may repeat) or a map; header keys are strings. */
export type BodyHeaders =
  | ReadonlyArray<{ readonly key: string; readonly value: BodyBytes }>
  | Readonly<Record<string, BodyBytes>>;

/** What the header of a build carries besides what the records give. */
export interface BuildOptions {
  /** Default -1n, -1, -1 (no idempotent producer). */
  readonly producerId?: bigint;
  readonly producerEpoch?: number;
  readonly baseSequence?: number;
  /** Default None: the bodies are compressed at build otherwise. */
  readonly compression?: CompressionType;
  readonly isTransactional?: boolean;
}

/** Room for the first bodies when no hint is given. */
const INITIAL_BODY_BYTES = 1024;
const RECORD_BODY_BYTES_MAX = 0x7fffffff;

export class RecordBatchBuilder {
  private buf: Uint8Array;
  /** Bytes of the encoded records (length varints included), after the header. */
  private bodyBytes = 0;
  private records = 0;
  private baseTs = 0;
  private maxTs = Number.NEGATIVE_INFINITY;
  private built = false;

  /**
   * `bodyBytesHint`: the size the bodies are expected to reach (the
   * producer's batchBytes); the buffer grows by doubling up to it, and past
   * it only as far as a record needs.
   */
  constructor(private readonly bodyBytesHint = 16384, initialBodyBytes = Math.min(INITIAL_BODY_BYTES, bodyBytesHint)) {
    assert(Number.isSafeInteger(bodyBytesHint) && bodyBytesHint > 0, `bad body bytes hint ${bodyBytesHint}`);
    this.buf = allocBytes(RECORD_BATCH_HEADER_BYTES + Math.max(0, initialBodyBytes));
  }

  get count(): number {
    return this.records;
  }

  /** Bytes of the record bodies as encoded (uncompressed), length varints included. */
  get recordsBytes(): number {
    return this.bodyBytes;
  }

  /** The bytes of an uncompressed build: header plus bodies. */
  get uncompressedBytes(): number {
    return RECORD_BATCH_HEADER_BYTES + this.bodyBytes;
  }

  /**
   * Encodes one record after the others (offsetDelta = its index) and
   * returns its encoded size. `timestampMs` must be a safe integer within
   * a safe distance of the first record's, which is the batch's base
   * timestamp. Strings are written as UTF-8.
   */
  append(key: BodyBytes, value: BodyBytes, headers: BodyHeaders | undefined, timestampMs: number): number {
    return this.tryAppend(key, value, headers, timestampMs, Infinity);
  }

  /**
   * As append, unless the batch has records and this one would take the
   * records' bytes past `recordsBytesMax`: then nothing is written and the
   * answer is -1. The record is measured once, for both.
   */
  tryAppend(key: BodyBytes, value: BodyBytes, headers: BodyHeaders | undefined, timestampMs: number, recordsBytesMax: number): number {
    assert(!this.built, 'no append after the batch is built');
    const keyBytes = bytesLength(key);
    const valueBytes = bytesLength(value);
    const body = this.bodySize(keyBytes, valueBytes, headers, timestampMs);
    const size = varintSize(body) + body;
    if (this.records > 0 && this.bodyBytes + size > recordsBytesMax) return -1;
    if (this.records === 0) this.baseTs = timestampMs;
    this.ensure(size);
    const buf = this.buf;
    let pos = RECORD_BATCH_HEADER_BYTES + this.bodyBytes;
    const start = pos;
    pos = writeVarint(buf, pos, body);
    buf[pos++] = 0; // record attributes: unused in v2
    pos = writeVarlong(buf, pos, timestampMs - this.baseTs);
    pos = writeVarint(buf, pos, this.records); // offsetDelta
    pos = writeNullable(buf, pos, key, keyBytes);
    pos = writeNullable(buf, pos, value, valueBytes);
    pos = headers === undefined ? writeVarint(buf, pos, 0) : writeHeaders(buf, pos, headers);
    assert(pos - start === size, 'record size differs from its measure');
    this.bodyBytes += size;
    this.records++;
    if (timestampMs > this.maxTs) this.maxTs = timestampMs;
    return size;
  }

  /** The bytes the record would take if appended now (what tryAppend compares). */
  measure(key: BodyBytes, value: BodyBytes, headers: BodyHeaders | undefined, timestampMs: number): number {
    const body = this.bodySize(bytesLength(key), bytesLength(value), headers, timestampMs);
    return varintSize(body) + body;
  }

  /** The size of a record body (without its length varint) as the next record of this batch. */
  private bodySize(keyBytes: number, valueBytes: number, headers: BodyHeaders | undefined, timestampMs: number): number {
    const timestampDelta = this.records === 0 ? 0 : timestampMs - this.baseTs;
    if (!Number.isSafeInteger(timestampMs) || !Number.isSafeInteger(timestampDelta)) {
      throw new AssertionError(`record ${this.records}: bad timestamp ${timestampMs}`);
    }
    let body = 1 + varlongSize(timestampDelta) + varintSize(this.records) + nullableSize(keyBytes) + nullableSize(valueBytes);
    body += headers === undefined ? 1 : headersSize(headers);
    if (body > RECORD_BODY_BYTES_MAX) throw new AssertionError(`record ${this.records} too large: ${body} bytes`);
    return body;
  }

  /**
   * The whole batch: a header carrying `opts` over the bodies appended so
   * far (compressed if asked), with its CRC. May be called again with other
   * options (re-identification): the bodies are the same.
   */
  build(opts: BuildOptions = {}, codecs: CompressionRegistry = defaultCompressionRegistry): Uint8Array {
    assert(this.records > 0, 'a record batch needs at least one record');
    this.built = true;
    const compression = opts.compression ?? CompressionType.None;
    let out: Uint8Array;
    if (compression === CompressionType.None) {
      out = this.buf.subarray(0, RECORD_BATCH_HEADER_BYTES + this.bodyBytes);
    } else {
      const packed = codecs.compress(compression, this.buf.subarray(RECORD_BATCH_HEADER_BYTES, RECORD_BATCH_HEADER_BYTES + this.bodyBytes));
      out = allocBytes(RECORD_BATCH_HEADER_BYTES + packed.length);
      out.set(packed, RECORD_BATCH_HEADER_BYTES);
    }
    this.writeHeader(out, opts, compression);
    writeInt32(out, computeBatchCrc(out, 0), CRC_OFFSET);
    return out;
  }

  private writeHeader(out: Uint8Array, opts: BuildOptions, compression: CompressionType): void {
    const producerId = opts.producerId ?? NO_PRODUCER_ID;
    const producerEpoch = opts.producerEpoch ?? NO_PRODUCER_EPOCH;
    const baseSequence = opts.baseSequence ?? NO_SEQUENCE;
    assert((baseSequence | 0) === baseSequence, 'base sequence is int32');
    assert(Number.isInteger(producerEpoch) && producerEpoch >= -0x8000 && producerEpoch <= 0x7fff, 'producer epoch is int16');
    let attributes: number = compression;
    if (opts.isTransactional === true) attributes |= TRANSACTIONAL_FLAG_MASK;
    writeInt64Number(out, 0, BASE_OFFSET_OFFSET);
    writeInt32(out, out.length - LOG_OVERHEAD_BYTES, BATCH_LENGTH_OFFSET);
    writeInt32(out, NO_PARTITION_LEADER_EPOCH, PARTITION_LEADER_EPOCH_OFFSET);
    writeInt8(out, MAGIC_V2, MAGIC_OFFSET);
    writeInt32(out, 0, CRC_OFFSET); // filled in once everything it covers is written
    writeInt16(out, attributes, ATTRIBUTES_OFFSET);
    writeInt32(out, this.records - 1, LAST_OFFSET_DELTA_OFFSET);
    writeInt64Number(out, this.baseTs, BASE_TIMESTAMP_OFFSET);
    writeInt64Number(out, this.maxTs, MAX_TIMESTAMP_OFFSET);
    writeBigInt64(out, producerId, PRODUCER_ID_OFFSET);
    writeInt16(out, producerEpoch, PRODUCER_EPOCH_OFFSET);
    writeInt32(out, baseSequence, BASE_SEQUENCE_OFFSET);
    writeInt32(out, this.records, RECORD_COUNT_OFFSET);
  }

  /** Room for `size` more body bytes: doubling up to the hint, then exactly what is needed. */
  private ensure(size: number): void {
    const needed = RECORD_BATCH_HEADER_BYTES + this.bodyBytes + size;
    if (needed <= this.buf.length) return;
    const doubled = Math.min(2 * this.buf.length, RECORD_BATCH_HEADER_BYTES + this.bodyBytesHint);
    const next = allocBytes(Math.max(needed, doubled));
    next.set(this.buf.subarray(0, RECORD_BATCH_HEADER_BYTES + this.bodyBytes));
    this.buf = next;
  }
}

/** Encoded length of a key, value or header value; -1 for null. */
function bytesLength(b: BodyBytes): number {
  if (b == null) return -1; // undefined too, as null
  return typeof b === 'string' ? utf8Length(b) : b.length;
}

function nullableSize(length: number): number {
  return length < 0 ? 1 : varintSize(length) + length;
}

function writeNullable(buf: Uint8Array, pos: number, b: BodyBytes, length: number): number {
  if (b == null) return writeVarint(buf, pos, -1);
  pos = writeVarint(buf, pos, length);
  if (typeof b === 'string') {
    const written = utf8Write(buf, b, pos);
    assert(written === length, 'UTF-8 length differs from its measure');
  } else {
    buf.set(b, pos);
  }
  return pos + length;
}

function headersSize(headers: BodyHeaders): number {
  let size = 0;
  let count = 0;
  if (isHeaderList(headers)) {
    for (const h of headers) {
      size += headerSize(h.key, h.value);
      count++;
    }
  } else {
    for (const k of Object.keys(headers)) {
      size += headerSize(k, headers[k]!);
      count++;
    }
  }
  return varintSize(count) + size;
}

function headerSize(key: string, value: BodyBytes): number {
  const keyBytes = utf8Length(key);
  return varintSize(keyBytes) + keyBytes + nullableSize(bytesLength(value));
}

function writeHeaders(buf: Uint8Array, pos: number, headers: BodyHeaders): number {
  if (isHeaderList(headers)) {
    pos = writeVarint(buf, pos, headers.length);
    for (const h of headers) pos = writeHeader(buf, pos, h.key, h.value);
  } else {
    const keys = Object.keys(headers);
    pos = writeVarint(buf, pos, keys.length);
    for (const k of keys) pos = writeHeader(buf, pos, k, headers[k]!);
  }
  return pos;
}

function writeHeader(buf: Uint8Array, pos: number, key: string, value: BodyBytes): number {
  const keyBytes = utf8Length(key);
  pos = writeNullable(buf, pos, key, keyBytes);
  return writeNullable(buf, pos, value, bytesLength(value));
}

function isHeaderList(headers: BodyHeaders): headers is ReadonlyArray<{ readonly key: string; readonly value: BodyBytes }> {
  return Array.isArray(headers);
}
