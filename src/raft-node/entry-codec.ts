// The on-disk frame of one Raft log entry, as stored in the segments of
// `__cluster_metadata-0/`. All integers are big-endian (as in Kafka):
//
//   0  bodyLength  u32   bytes after this field = 21 + data length
//   4  crc         u32   CRC32C of bytes [8, 4 + bodyLength): term..data
//   8  term        u64
//  16  index       u64
//  24  type        u8    EntryType (0 normal, 1 no-op, 2 config)
//  25  data        bodyLength - 21 bytes
//
// The CRC does not cover bodyLength; a damaged length shows up as a frame that
// runs past the end of the file or whose CRC fails, and the loader decides
// from what follows whether that is a torn tail or corruption (see
// findPlausibleFrame). Invariant paired across write and read: every frame
// written verifies; a frame is returned as an entry only if it verifies.

import '../node.js'; // Node runtime: native CRC32C, every codec, Buffer bytes
import { assert } from '../util/assert.js';
import { crc32c } from '../util/crc32c.js';
import { EntryType, type Entry } from '../raft/types.js';

export const FRAME_HEADER_BYTES = 25;
/** Bytes counted by bodyLength before the data: crc + term + index + type. */
const BODY_FIXED_BYTES = 21;
const CRC_START = 8;
/** Largest entry payload accepted; a length beyond it is treated as damage. */
export const ENTRY_DATA_BYTES_MAX = 64 * 1024 * 1024;

const TWO_POW_32 = 2 ** 32;
/** High word limit that keeps a u64 within Number.MAX_SAFE_INTEGER. */
const SAFE_HIGH_WORD_MAX = 2 ** 21 - 1;

export function frameBytes(entry: Entry): number {
  return FRAME_HEADER_BYTES + entry.data.length;
}

/**
 * Encodes `entries` into one buffer (so a batch costs one write). `offsets[i]`
 * is the byte offset of entry i's frame within that buffer.
 */
export function encodeEntries(entries: readonly Entry[]): { buf: Buffer; offsets: number[] } {
  let total = 0;
  for (const entry of entries) total += frameBytes(entry);
  const buf = Buffer.allocUnsafe(total);
  const offsets: number[] = [];
  let pos = 0;
  for (const entry of entries) {
    offsets.push(pos);
    pos = encodeFrameAt(buf, pos, entry);
  }
  assert(pos === total, 'entry frames filled the buffer exactly');
  return { buf, offsets };
}

function encodeFrameAt(buf: Buffer, pos: number, entry: Entry): number {
  assert(entry.data.length <= ENTRY_DATA_BYTES_MAX, `entry ${entry.index} data exceeds ${ENTRY_DATA_BYTES_MAX} bytes`);
  assert(isEntryType(entry.type), `entry ${entry.index} has unknown type ${entry.type}`);
  buf.writeUInt32BE(BODY_FIXED_BYTES + entry.data.length, pos);
  writeU64(buf, pos + 8, entry.term);
  writeU64(buf, pos + 16, entry.index);
  buf.writeUInt8(entry.type, pos + 24);
  buf.set(entry.data, pos + FRAME_HEADER_BYTES);
  const end = pos + frameBytes(entry);
  buf.writeUInt32BE(crc32c(buf.subarray(pos + CRC_START, end)), pos + 4);
  return end;
}

export type DecodeResult =
  /** A frame that verifies. */
  | { readonly kind: 'entry'; readonly entry: Entry; readonly frameBytes: number }
  /** Short, over-long or failing its CRC: what a torn write can leave behind. */
  | { readonly kind: 'damaged'; readonly detail: string }
  /** Verifies yet cannot be a frame we wrote: never the result of a torn write. */
  | { readonly kind: 'invalid'; readonly detail: string };

/** Decodes the frame at `pos` (< buf.length). The entry's data is a copy. */
export function decodeFrame(buf: Buffer, pos: number): DecodeResult {
  const available = buf.length - pos;
  if (available < FRAME_HEADER_BYTES) {
    return { kind: 'damaged', detail: `incomplete frame header (${available} of ${FRAME_HEADER_BYTES} bytes)` };
  }
  const bodyLength = buf.readUInt32BE(pos);
  const dataLength = bodyLength - BODY_FIXED_BYTES;
  if (dataLength < 0 || dataLength > ENTRY_DATA_BYTES_MAX) {
    return { kind: 'damaged', detail: `implausible frame length ${bodyLength}` };
  }
  const end = pos + 4 + bodyLength;
  if (end > buf.length) {
    return { kind: 'damaged', detail: `incomplete frame (${available} of ${end - pos} bytes)` };
  }
  const stored = buf.readUInt32BE(pos + 4);
  const actual = crc32c(buf.subarray(pos + CRC_START, end));
  if (stored !== actual) {
    return { kind: 'damaged', detail: `CRC mismatch (stored ${hex(stored)}, computed ${hex(actual)})` };
  }
  const term = readU64(buf, pos + 8);
  const index = readU64(buf, pos + 16);
  const type = buf.readUInt8(pos + 24);
  if (term === undefined || index === undefined || !isEntryType(type)) {
    return { kind: 'invalid', detail: `frame verifies but holds an impossible term, index or type ${type}` };
  }
  const data = new Uint8Array(buf.subarray(pos + FRAME_HEADER_BYTES, end));
  return { kind: 'entry', entry: { term, index, type, data }, frameBytes: end - pos };
}

/**
 * The first offset in (from, buf.length) holding a verifying frame whose
 * index is ≥ `indexMin` and term ≥ `termMin`, or -1. Used after a damaged
 * frame: if such a frame follows, the damage is corruption in the middle of
 * the log, not a torn tail. Header checks run before the CRC, so random bytes
 * rarely cost a checksum.
 */
export function findPlausibleFrame(buf: Buffer, from: number, indexMin: number, termMin: number): number {
  for (let pos = from + 1; pos + FRAME_HEADER_BYTES <= buf.length; pos++) {
    if (!plausibleHeader(buf, pos, indexMin, termMin)) continue;
    const result = decodeFrame(buf, pos);
    if (result.kind === 'entry') return pos;
  }
  return -1;
}

function plausibleHeader(buf: Buffer, pos: number, indexMin: number, termMin: number): boolean {
  const dataLength = buf.readUInt32BE(pos) - BODY_FIXED_BYTES;
  if (dataLength < 0 || pos + FRAME_HEADER_BYTES + dataLength > buf.length) return false;
  if (!isEntryType(buf.readUInt8(pos + 24))) return false;
  const term = readU64(buf, pos + 8);
  const index = readU64(buf, pos + 16);
  return term !== undefined && index !== undefined && term >= termMin && index >= indexMin;
}

function isEntryType(type: number): type is EntryType {
  return type === EntryType.Normal || type === EntryType.NoOp || type === EntryType.Config;
}

export function writeU64(buf: Buffer, pos: number, value: number): void {
  assert(Number.isSafeInteger(value) && value >= 0, `u64 field out of range: ${value}`);
  buf.writeUInt32BE(Math.floor(value / TWO_POW_32), pos);
  buf.writeUInt32BE(value % TWO_POW_32, pos + 4);
}

/** A u64 as a number, or undefined when it would not be a safe integer. */
export function readU64(buf: Buffer, pos: number): number | undefined {
  const high = buf.readUInt32BE(pos);
  if (high > SAFE_HIGH_WORD_MAX) return undefined;
  return high * TWO_POW_32 + buf.readUInt32BE(pos + 4);
}

function hex(n: number): string {
  return '0x' + n.toString(16).padStart(8, '0');
}
