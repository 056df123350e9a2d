// A msgpack encoder for frames that carry record batches: the same msgpack
// any decoder reads (maps, arrays, strings, numbers, nil, booleans, bin), but
// written as a list of chunks in which every large `bin` payload is the
// caller's own bytes, not a copy. A broker's fetch answer is mostly record
// batches it already holds in memory (its log's tail cache) or has just read
// from a segment; msgpackr copied each into a fresh output buffer, which
// doubled the bytes a leader allocated per fetch and, at 100,000 records/s,
// made V8 run a full collection every ~120 ms (external memory counts toward
// the old generation's limit). The chunks are sent as the fragments of one
// WebSocket message (net/server-connection.ts), so the receiver sees one
// ordinary frame.
//
// Numbers: integers in int32/uint32 take the smallest msgpack int; any other
// number (larger offsets included, exact up to 2^53) is a float64 — as
// msgpackr writes them. Keys keep their insertion order. Values of other types
// (bigint, functions, symbols, class instances other than Uint8Array and
// plain objects) are refused with an Error: the caller then answers with an
// error body instead.

/** `bin` payloads at least this long are passed through as chunks; shorter ones are copied (cheaper than a fragment). */
export const CHUNK_BIN_BYTES_MIN = 512;

/** Scratch space for the msgpack bytes around the payloads; one allocation (from Node's pool when small) per frame. */
const SCRATCH_BYTES_INITIAL = 1024;

export function encodeChunked(value: unknown): Uint8Array[] {
  const w = new ChunkWriter();
  w.value(value, 0);
  return w.finish();
}

/** Nesting deeper than this is refused (frames are a few levels deep; a cycle would recurse forever). */
const DEPTH_MAX = 32;

class ChunkWriter {
  private readonly chunks: Uint8Array[] = [];
  private buf = Buffer.allocUnsafe(SCRATCH_BYTES_INITIAL);
  /** Start of the bytes written to `buf` since the last chunk cut. */
  private start = 0;
  private pos = 0;

  finish(): Uint8Array[] {
    this.cut();
    return this.chunks;
  }

  value(v: unknown, depth: number): void {
    if (depth > DEPTH_MAX) throw new Error('msgpack value nested too deeply');
    if (v === null || v === undefined) return this.byte(0xc0);
    switch (typeof v) {
      case 'number':
        return this.number(v);
      case 'string':
        return this.string(v);
      case 'boolean':
        return this.byte(v ? 0xc3 : 0xc2);
      case 'object':
        if (v instanceof Uint8Array) return this.bin(v);
        if (Array.isArray(v)) {
          this.header(v.length, 0x90, 0xdc, 0xdd);
          for (const x of v) this.value(x, depth + 1);
          return;
        }
        if (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null) return this.map(v as Record<string, unknown>, depth);
        throw new Error('only plain objects, arrays and Uint8Arrays can be encoded');
      default:
        throw new Error(`a ${typeof v} cannot be encoded as msgpack`);
    }
  }

  private map(o: Record<string, unknown>, depth: number): void {
    const keys = Object.keys(o);
    this.header(keys.length, 0x80, 0xde, 0xdf);
    for (const k of keys) {
      this.string(k);
      this.value(o[k], depth + 1);
    }
  }

  /** An array's or map's header: the fix form below 16 entries, else the 16- or 32-bit form. */
  private header(n: number, fix: number, code16: number, code32: number): void {
    if (n < 16) return this.byte(fix | n);
    this.room(5);
    if (n <= 0xffff) {
      this.buf[this.pos++] = code16;
      this.buf.writeUInt16BE(n, this.pos);
      this.pos += 2;
    } else {
      this.buf[this.pos++] = code32;
      this.buf.writeUInt32BE(n, this.pos);
      this.pos += 4;
    }
  }

  private number(n: number): void {
    this.room(9);
    const b = this.buf;
    if (Number.isInteger(n) && n >= -0x80000000 && n <= 0xffffffff) {
      if (n >= 0) {
        if (n < 0x80) b[this.pos++] = n;
        else if (n <= 0xff) { b[this.pos++] = 0xcc; b[this.pos++] = n; }
        else if (n <= 0xffff) { b[this.pos++] = 0xcd; b.writeUInt16BE(n, this.pos); this.pos += 2; }
        else { b[this.pos++] = 0xce; b.writeUInt32BE(n, this.pos); this.pos += 4; }
      } else if (n >= -0x20) b[this.pos++] = n & 0xff;
      else if (n >= -0x80) { b[this.pos++] = 0xd0; b.writeInt8(n, this.pos); this.pos += 1; }
      else if (n >= -0x8000) { b[this.pos++] = 0xd1; b.writeInt16BE(n, this.pos); this.pos += 2; }
      else { b[this.pos++] = 0xd2; b.writeInt32BE(n, this.pos); this.pos += 4; }
      return;
    }
    b[this.pos++] = 0xcb;
    b.writeDoubleBE(n, this.pos);
    this.pos += 8;
  }

  private string(s: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    this.room(5 + s.length * 3);
    const b = this.buf;
    const n = Buffer.byteLength(s, 'utf8');
    if (n < 32) b[this.pos++] = 0xa0 | n;
    else if (n <= 0xff) { b[this.pos++] = 0xd9; b[this.pos++] = n; }
    else if (n <= 0xffff) { b[this.pos++] = 0xda; b.writeUInt16BE(n, this.pos); this.pos += 2; }
    else { b[this.pos++] = 0xdb; b.writeUInt32BE(n, this.pos); this.pos += 4; }
    this.pos += b.write(s, this.pos, n, 'utf8');
  }

  private bin(v: Uint8Array): void {
    const n = v.byteLength;
    this.room(5);
    const b = this.buf;
    if (n <= 0xff) { b[this.pos++] = 0xc4; b[this.pos++] = n; }
    else if (n <= 0xffff) { b[this.pos++] = 0xc5; b.writeUInt16BE(n, this.pos); this.pos += 2; }
    else { b[this.pos++] = 0xc6; b.writeUInt32BE(n, this.pos); this.pos += 4; }
    if (n < CHUNK_BIN_BYTES_MIN) {
      this.room(n);
      this.buf.set(v, this.pos);
      this.pos += n;
      return;
    }
    this.cut();
    this.chunks.push(v);
  }

  private byte(x: number): void {
    this.room(1);
    this.buf[this.pos++] = x;
  }

  /** The bytes written since the last cut become a chunk (a view of the scratch buffer, which is never written again there). */
  private cut(): void {
    if (this.pos > this.start) this.chunks.push(this.buf.subarray(this.start, this.pos));
    this.start = this.pos;
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.cut();
    this.buf = Buffer.allocUnsafe(Math.max(n, this.buf.length * 2));
    this.start = 0;
    this.pos = 0;
  }
}
