// CRC32C (Castagnoli), the checksum of Kafka's RecordBatch v2 and of Sluice's
// Raft log entries.
//
// Two implementations, chosen at the entry point: this module's pure-JS
// slicing-by-8 table version (no dependency: what the browser build uses,
// ~1 GB/s in V8), and @node-rs/crc32's SSE4.2/ARMv8 instructions (≈5 GB/s),
// which src/util/crc32c-native.ts installs when imported — the Node entry,
// the CLI and every broker module that computes CRCs import it.

const POLY = 0x82f63b78; // reflected Castagnoli polynomial
const TABLE = new Int32Array(8 * 256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
  TABLE[n] = c;
}
for (let n = 0; n < 256; n++) {
  let c = TABLE[n]!;
  for (let t = 1; t < 8; t++) {
    c = TABLE[c & 0xff]! ^ (c >>> 8);
    TABLE[t * 256 + n] = c;
  }
}

/** Slicing-by-8 CRC32C of `buf`, continuing from `initial`. */
export function crc32cJs(buf: Uint8Array, initial = 0): number {
  let crc = ~initial;
  let i = 0;
  const n = buf.length;
  const t = TABLE;
  for (; i + 8 <= n; i += 8) {
    const a = crc ^ (buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24));
    crc = t[0x700 + (a & 0xff)]! ^ t[0x600 + ((a >>> 8) & 0xff)]! ^ t[0x500 + ((a >>> 16) & 0xff)]! ^ t[0x400 + (a >>> 24)]!
      ^ t[0x300 + buf[i + 4]!]! ^ t[0x200 + buf[i + 5]!]! ^ t[0x100 + buf[i + 6]!]! ^ t[buf[i + 7]!]!;
  }
  for (; i < n; i++) crc = t[(crc ^ buf[i]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}

export type Crc32cFunction = (buf: Uint8Array, initial?: number) => number;

let impl: Crc32cFunction = crc32cJs;
let implName = 'js';

/** CRC32C of `buf` (optionally continuing from `initial`), as an unsigned 32-bit integer. */
export function crc32c(buf: Uint8Array, initial = 0): number {
  return impl(buf, initial);
}

/** Replaces the implementation (an entry point's choice); `name` is what crc32cImplementation() reports. */
export function setCrc32cImplementation(fn: Crc32cFunction, name: string): void {
  impl = fn;
  implName = name;
}

export function crc32cImplementation(): string {
  return implName;
}
