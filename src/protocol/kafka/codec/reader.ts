// A bounds-checked reader of Kafka's binary protocol primitives (big-endian
// fixed-width integers, unsigned varints of the flexible versions, zigzag
// varints, strings, bytes, UUIDs).
//
// Invariant: the reader never reads outside [pos, end). A read that would
// throws KafkaDecodeError naming what it was reading — never a RangeError —
// so a hostile frame closes its connection with a reason and nothing else.
// Byte fields are returned as views into the frame (no copy): a caller that
// keeps one past the frame's lifetime must copy it.

export class KafkaDecodeError extends Error {
  override name = 'KafkaDecodeError';
}

const UVARINT_BYTES_MAX = 5;
const UUID_BYTES = 16;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export class Reader {
  pos: number;
  constructor(readonly buf: Buffer, pos = 0, readonly end = buf.length) {
    this.pos = pos;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  private need(n: number, what: string): number {
    if (n < 0 || this.pos + n > this.end) {
      throw new KafkaDecodeError(`${what}: needs ${n} bytes at ${this.pos}, frame has ${this.end - this.pos} left`);
    }
    const at = this.pos;
    this.pos += n;
    return at;
  }

  int8(what = 'int8'): number { return this.buf.readInt8(this.need(1, what)); }
  int16(what = 'int16'): number { return this.buf.readInt16BE(this.need(2, what)); }
  uint16(what = 'uint16'): number { return this.buf.readUInt16BE(this.need(2, what)); }
  int32(what = 'int32'): number { return this.buf.readInt32BE(this.need(4, what)); }
  uint32(what = 'uint32'): number { return this.buf.readUInt32BE(this.need(4, what)); }
  float64(what = 'float64'): number { return this.buf.readDoubleBE(this.need(8, what)); }

  bool(what = 'bool'): boolean {
    return this.buf[this.need(1, what)] !== 0;
  }

  /**
   * Sluice holds int64s as JS numbers: every offset, timestamp and producer id
   * it hands out is a safe integer. A value past 2^53 cannot be represented
   * exactly, so it is refused rather than silently rounded.
   */
  int64(what = 'int64'): number {
    const v = this.buf.readBigInt64BE(this.need(8, what));
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new KafkaDecodeError(`${what}: ${v} is beyond 2^53, which Sluice cannot represent exactly`);
    }
    return Number(v);
  }

  /** Unsigned LEB128 varint, at most 32 bits (compact lengths, tag numbers, tag sizes). */
  uvarint(what = 'uvarint'): number {
    let value = 0;
    for (let i = 0; i < UVARINT_BYTES_MAX; i++) {
      const b = this.buf[this.need(1, what)]!;
      value += (b & 0x7f) * 2 ** (7 * i);
      if ((b & 0x80) === 0) {
        if (value > 0xffffffff) throw new KafkaDecodeError(`${what}: unsigned varint beyond 32 bits`);
        return value;
      }
    }
    throw new KafkaDecodeError(`${what}: unsigned varint longer than ${UVARINT_BYTES_MAX} bytes`);
  }

  /** Zigzag varint (signed 32-bit). */
  varint(what = 'varint'): number {
    const u = this.uvarint(what);
    return (u % 2 === 0 ? u / 2 : -(u + 1) / 2);
  }

  bytesOf(n: number, what: string): Buffer {
    const at = this.need(n, what);
    return this.buf.subarray(at, at + n);
  }

  utf8Of(n: number, what: string): string {
    const bytes = this.bytesOf(n, what);
    try {
      return utf8.decode(bytes);
    } catch {
      throw new KafkaDecodeError(`${what}: not valid UTF-8`);
    }
  }

  uuid(what = 'uuid'): string {
    return this.bytesOf(UUID_BYTES, what).toString('hex');
  }

  skip(n: number, what: string): void {
    this.need(n, what);
  }
}
