// Big-endian integer access, UTF-8 and concatenation on plain Uint8Array, for
// code that runs in browsers as well as on Node (the record codec, the client).
// Node's Buffer is a Uint8Array, so every function takes one; none of them
// names Buffer, so a browser bundle carries no Buffer polyfill.
//
// Integer reads and writes are byte arithmetic, not a DataView per call: the
// broker reads batch headers on every produce and fetch.

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

export const int8At = (b: Uint8Array, p: number): number => (b[p]! << 24) >> 24;
export const int16At = (b: Uint8Array, p: number): number => ((b[p]! << 24) | (b[p + 1]! << 16)) >> 16;
export const int32At = (b: Uint8Array, p: number): number => (b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!;
export const uint32At = (b: Uint8Array, p: number): number => int32At(b, p) >>> 0;
export const uint32LeAt = (b: Uint8Array, p: number): number => (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
export const uint16LeAt = (b: Uint8Array, p: number): number => b[p]! | (b[p + 1]! << 8);
/** An int64 as a number: exact within ±2^53 (callers check Number.isSafeInteger). */
export const int64NumberAt = (b: Uint8Array, p: number): number => int32At(b, p) * 0x1_0000_0000 + uint32At(b, p + 4);
export const uint64LeNumberAt = (b: Uint8Array, p: number): number => uint32LeAt(b, p + 4) * 0x1_0000_0000 + uint32LeAt(b, p);
export const bigInt64At = (b: Uint8Array, p: number): bigint => (BigInt(int32At(b, p)) << 32n) | BigInt(uint32At(b, p + 4));

export function writeInt8(b: Uint8Array, v: number, p: number): void {
  b[p] = v & 0xff;
}
export function writeInt16(b: Uint8Array, v: number, p: number): void {
  b[p] = (v >>> 8) & 0xff;
  b[p + 1] = v & 0xff;
}
export function writeInt32(b: Uint8Array, v: number, p: number): void {
  b[p] = (v >>> 24) & 0xff;
  b[p + 1] = (v >>> 16) & 0xff;
  b[p + 2] = (v >>> 8) & 0xff;
  b[p + 3] = v & 0xff;
}
export function writeBigInt64(b: Uint8Array, v: bigint, p: number): void {
  const u = BigInt.asUintN(64, v);
  writeInt32(b, Number(u >> 32n), p);
  writeInt32(b, Number(u & 0xffff_ffffn), p + 4);
}
export function writeInt64Number(b: Uint8Array, v: number, p: number): void {
  writeBigInt64(b, BigInt(v), p);
}

/** UTF-8 byte length of `s` without encoding it. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3; // BMP character, or a lone surrogate (encoded as U+FFFD, 3 bytes)
  }
  return n;
}

export const utf8Encode = (s: string): Uint8Array => encoder.encode(s);
export const utf8Decode = (b: Uint8Array, start = 0, end = b.length): string => decoder.decode(b.subarray(start, end));

/** Writes `s` as UTF-8 at `p`; returns the bytes written. */
export function utf8Write(b: Uint8Array, s: string, p: number): number {
  return encoder.encodeInto(s, b.subarray(p)).written;
}

export function concatBytes(parts: readonly Uint8Array[], total?: number): Uint8Array {
  const n = total ?? parts.reduce((s, p) => s + p.length, 0);
  const out = allocBytes(n);
  let pos = 0;
  for (const p of parts) {
    out.set(p, pos);
    pos += p.length;
  }
  return out;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

let allocator: (n: number) => Uint8Array = (n) => new Uint8Array(n);
let adopter: (b: Uint8Array) => Uint8Array = (b) => b;

/**
 * Fresh bytes (contents unspecified). A plain Uint8Array unless the Node entry
 * installed Buffer.allocUnsafe (src/util/node-bytes.ts), so that what the
 * codec returns on Node stays a Buffer for callers that use Buffer methods.
 */
export function allocBytes(n: number): Uint8Array {
  return allocator(n);
}

/** `b` as the platform's bytes over the same memory: a Buffer view on Node (node-bytes.ts), `b` itself elsewhere. */
export function adoptBytes(b: Uint8Array): Uint8Array {
  return adopter(b);
}

export function setByteAllocator(alloc: (n: number) => Uint8Array, adopt: (b: Uint8Array) => Uint8Array): void {
  allocator = alloc;
  adopter = adopt;
}
