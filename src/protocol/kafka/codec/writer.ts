// A growable writer of Kafka's binary protocol primitives. Large byte values
// (record batches in Fetch answers) are not copied: `bytesRef` ends the current
// chunk and appends the value as a chunk of its own, so an answer is a list of
// chunks that the socket writes in one corked burst. Everything else is copied
// into the writer's buffer.
//
// Invariant: `length` is the number of bytes written so far across all chunks;
// `finish()` returns chunks whose total size is exactly that.

const INITIAL_BYTES = 512;
/** Byte values at least this large are referenced, not copied. */
export const BYTES_REF_MIN = 4096;
const UUID_BYTES = 16;

export class Writer {
  private buf: Buffer;
  private pos = 0;
  private readonly chunks: Uint8Array[] = [];
  private flushed = 0;

  constructor(initialBytes = INITIAL_BYTES) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  get length(): number {
    return this.flushed + this.pos;
  }

  private room(n: number): number {
    if (this.pos + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
      this.buf.copy(next, 0, 0, this.pos);
      this.buf = next;
    }
    const at = this.pos;
    this.pos += n;
    return at;
  }

  // Each writer takes its position first: room() may replace this.buf, and
  // `this.buf.writeX(v, this.room(n))` would write into the old buffer.
  int8(v: number): void { const at = this.room(1); this.buf.writeInt8(v, at); }
  int16(v: number): void { const at = this.room(2); this.buf.writeInt16BE(v, at); }
  uint16(v: number): void { const at = this.room(2); this.buf.writeUInt16BE(v, at); }
  int32(v: number): void { const at = this.room(4); this.buf.writeInt32BE(v, at); }
  uint32(v: number): void { const at = this.room(4); this.buf.writeUInt32BE(v, at); }
  float64(v: number): void { const at = this.room(8); this.buf.writeDoubleBE(v, at); }
  bool(v: boolean): void { const at = this.room(1); this.buf[at] = v ? 1 : 0; }
  int64(v: number): void { const at = this.room(8); this.buf.writeBigInt64BE(BigInt(v), at); }

  uvarint(v: number): void {
    let x = v;
    while (x >= 0x80) {
      const at = this.room(1);
      this.buf[at] = (x % 0x80) | 0x80;
      x = Math.floor(x / 0x80);
    }
    const at = this.room(1);
    this.buf[at] = x;
  }

  varint(v: number): void {
    this.uvarint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  raw(bytes: Uint8Array): void {
    const at = this.room(bytes.length);
    this.buf.set(bytes, at);
  }

  /** Appends `bytes` by reference when large (see the module header), by copy when small. */
  bytesRef(bytes: Uint8Array): void {
    if (bytes.length < BYTES_REF_MIN) {
      this.raw(bytes);
      return;
    }
    this.cut();
    this.chunks.push(bytes);
    this.flushed += bytes.length;
  }

  utf8(s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    const at = this.room(n);
    this.buf.write(s, at, n, 'utf8');
  }

  uuid(hex: string): void {
    const at = this.room(UUID_BYTES);
    this.buf.write(hex, at, UUID_BYTES, 'hex');
  }

  /** Overwrites 4 bytes at an absolute position already written in the current chunk (length prefixes). */
  patchInt32(absolutePos: number, v: number): void {
    const rel = absolutePos - this.flushed;
    if (rel < 0 || rel + 4 > this.pos) throw new RangeError('patchInt32 outside the current chunk');
    this.buf.writeInt32BE(v, rel);
  }

  private cut(): void {
    if (this.pos === 0) return;
    this.chunks.push(this.buf.subarray(0, this.pos));
    this.flushed += this.pos;
    this.buf = Buffer.allocUnsafe(Math.max(INITIAL_BYTES, this.buf.length - this.pos));
    this.pos = 0;
  }

  finish(): Uint8Array[] {
    this.cut();
    return this.chunks;
  }

  /** The whole output as one buffer (tests, small answers). */
  toBuffer(): Buffer {
    const chunks = this.finish();
    return chunks.length === 1 ? Buffer.from(chunks[0]!.buffer, chunks[0]!.byteOffset, chunks[0]!.byteLength) : Buffer.concat(chunks);
  }
}
