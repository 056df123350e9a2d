// Zigzag variable-length integers as Kafka's RecordBatch v2 records use them
// (protobuf's encoding: 7 bits a byte, least significant group first, high bit
// = "more bytes follow"; zigzag maps 0,-1,1,-2,... to 0,1,2,3,... so small
// negative numbers stay short), plus a bounds-checked read cursor.
//
// varint  = a signed 32-bit integer, at most 5 bytes.
// varlong = a signed 64-bit integer, at most 10 bytes on the wire. Sluice holds
//   varlongs (timestamp deltas) as JS numbers, so it encodes and decodes exactly
//   every safe integer (|x| <= 2^53 - 1) and refuses the rest: writing one is a
//   caller bug (assert), reading one is a malformed batch (CORRUPT_MESSAGE).
//
// Invariant: the Cursor never reads outside [pos, end); any read that would
// throws SluiceError(CORRUPT_MESSAGE) — never a RangeError — so hostile bytes
// cannot crash a decoder.

import { AssertionError, assert } from '../util/assert.js';
import { Errors, SluiceError } from '../util/errors.js';
import { utf8Decode } from '../util/bytes.js';

export const VARINT_BYTES_MAX = 5;
export const VARLONG_BYTES_MAX = 10;
/** A zigzag value below 2^54 (every safe integer) needs at most 8 bytes. */
const VARLONG_SAFE_BYTES_MAX = 8;
const TWO_POW_30 = 0x40000000;

export function corrupt(message: string, details: Record<string, unknown> = {}): SluiceError {
  return new SluiceError(Errors.CORRUPT_MESSAGE, message, details);
}

/** Bytes that writeVarint(value) takes. `value` must be an int32. */
export function varintSize(value: number): number {
  checkInt32(value);
  return unsignedSize(((value << 1) ^ (value >> 31)) >>> 0);
}

/** Writes `value` (an int32) as a zigzag varint at `pos`; returns the position after it. */
export function writeVarint(buf: Uint8Array, pos: number, value: number): number {
  checkInt32(value);
  return writeUnsigned32(buf, pos, ((value << 1) ^ (value >> 31)) >>> 0);
}

/** Bytes that writeVarlong(value) takes. `value` must be a safe integer. */
export function varlongSize(value: number): number {
  checkSafe(value);
  const m = value < 0 ? -value - 1 : value;
  if (m < TWO_POW_30) return unsignedSize(m * 2 + 1);
  // zigzag z = 2m + s: one byte for the low 7 bits, then the groups of floor(m / 64).
  let q = Math.floor(m / 64);
  let n = 1;
  while (q > 0) {
    q = Math.floor(q / 128);
    n++;
  }
  return n;
}

/**
 * Writes `value` (a safe integer) as a zigzag varlong at `pos`; returns the
 * position after it. Zigzag z = 2m + s with m = value, s = 0 for value >= 0
 * and m = -value - 1, s = 1 below: z itself may not be exact as a double
 * (2^54 > 2^53), so the first byte is taken from m mod 64 and s and the rest
 * from floor(m / 64) — all exact.
 */
export function writeVarlong(buf: Uint8Array, pos: number, value: number): number {
  checkSafe(value);
  const s = value < 0 ? 1 : 0;
  const m = value < 0 ? -value - 1 : value;
  if (m < TWO_POW_30) return writeUnsigned32(buf, pos, m * 2 + s);
  buf[pos++] = 0x80 | ((m % 64) * 2 + s);
  let q = Math.floor(m / 64);
  while (q >= 0x80) {
    buf[pos++] = 0x80 | q % 0x80;
    q = Math.floor(q / 0x80);
  }
  buf[pos++] = q;
  return pos;
}

// Writing an out-of-range value is a caller bug. These run per field, so the
// message is built only on failure (an assert() argument is built every call).
function checkInt32(value: number): void {
  if ((value | 0) !== value) throw new AssertionError(`varint out of int32 range: ${value}`);
}

function checkSafe(value: number): void {
  if (!Number.isSafeInteger(value)) throw new AssertionError(`varlong not a safe integer: ${value}`);
}

function unsignedSize(z: number): number {
  if (z < 0x80) return 1;
  if (z < 0x4000) return 2;
  if (z < 0x200000) return 3;
  if (z < 0x10000000) return 4;
  return 5;
}

/** Writes an unsigned value below 2^32 in 7-bit groups. */
function writeUnsigned32(buf: Uint8Array, pos: number, z: number): number {
  while (z >= 0x80) {
    buf[pos++] = (z & 0x7f) | 0x80;
    z >>>= 7;
  }
  buf[pos++] = z;
  return pos;
}

/** A read position over buf[pos, end). Every read is bounds-checked (see header). */
export class Cursor {
  constructor(
    readonly buf: Uint8Array,
    public pos: number,
    /** Exclusive bound; callers may narrow it to one record and restore it after. */
    public end: number,
  ) {
    assert(pos >= 0 && pos <= end && end <= buf.length, `cursor [${pos}, ${end}) outside buffer of ${buf.length}`);
  }

  remaining(): number {
    return this.end - this.pos;
  }

  readInt8(): number {
    if (this.pos >= this.end) throw this.truncated(1);
    const b = this.buf[this.pos++]!;
    return (b << 24) >> 24;
  }

  /** A zigzag varint of at most 5 bytes whose value fits in 32 bits. */
  readVarint(): number {
    let z = 0;
    for (let i = 0; i < VARINT_BYTES_MAX; i++) {
      if (this.pos >= this.end) throw this.truncated(1);
      const b = this.buf[this.pos++]!;
      if (i === VARINT_BYTES_MAX - 1 && b > 0x0f) throw corrupt(`varint overflows 32 bits`, { position: this.pos - 1 });
      z |= (b & 0x7f) << (7 * i);
      if (b < 0x80) {
        z >>>= 0;
        return (z >>> 1) ^ -(z & 1);
      }
    }
    throw corrupt(`varint longer than ${VARINT_BYTES_MAX} bytes`, { position: this.pos });
  }

  /** A zigzag varlong whose value is a safe integer (see writeVarlong for the arithmetic). */
  readVarlong(): number {
    const start = this.pos;
    if (this.pos >= this.end) throw this.truncated(1);
    let b = this.buf[this.pos++]!;
    const s = b & 1;
    const low6 = (b & 0x7f) >>> 1;
    let q = 0;
    let scale = 1;
    for (let n = 1; b >= 0x80; n++) {
      if (n === VARLONG_SAFE_BYTES_MAX) throw corrupt('varlong outside the safe integer range', { position: start });
      if (this.pos >= this.end) throw this.truncated(1);
      b = this.buf[this.pos++]!;
      q += (b & 0x7f) * scale;
      scale *= 0x80;
    }
    // q has at most 7 groups (49 bits), so it is exact; bound m = 64q + low6 before forming it.
    if (q > Math.floor((Number.MAX_SAFE_INTEGER - low6) / 64)) {
      throw corrupt('varlong outside the safe integer range', { position: start });
    }
    const m = q * 64 + low6;
    const value = s === 1 ? -m - 1 : m;
    if (!Number.isSafeInteger(value)) throw corrupt('varlong outside the safe integer range', { position: start });
    return value;
  }

  /** Moves past the next `length` bytes without making a view of them (the leader's record walk). */
  skip(length: number): void {
    if (length > this.end - this.pos) throw this.truncated(length);
    this.pos += length;
  }

  /** A view (no copy) of the next `length` bytes. */
  readBytes(length: number): Uint8Array {
    if (length > this.end - this.pos) throw this.truncated(length);
    const view = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return view;
  }

  /** The next `length` bytes as UTF-8 (malformed sequences become U+FFFD, as in Kafka). */
  readUtf8(length: number): string {
    if (length > this.end - this.pos) throw this.truncated(length);
    const text = utf8Decode(this.buf, this.pos, this.pos + length);
    this.pos += length;
    return text;
  }

  private truncated(wanted: number): SluiceError {
    return corrupt(`truncated: needs ${wanted} bytes at ${this.pos}, ${this.end - this.pos} left`, { position: this.pos });
  }
}
