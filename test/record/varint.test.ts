import { expect } from 'chai';
import fc from 'fast-check';
import {
  Cursor, VARINT_BYTES_MAX, VARLONG_BYTES_MAX, varintSize, varlongSize, writeVarint, writeVarlong,
} from '../../src/record/varint.js';
import { fcParams } from './fixtures/property.js';
import { Errors, SluiceError, isSluiceError } from '../../src/util/errors.js';

// Reference encoder on bigints, written straight from the definition (zigzag,
// then 7-bit groups little-endian), to check the number-based fast paths.
function referenceEncode(value: bigint, bits: 32n | 64n): Buffer {
  let z = value >= 0n ? value << 1n : ((-value) << 1n) - 1n;
  expect(z < 1n << bits).to.equal(true);
  const out: number[] = [];
  while (z >= 0x80n) {
    out.push(Number(z & 0x7fn) | 0x80);
    z >>= 7n;
  }
  out.push(Number(z));
  return Buffer.from(out);
}

function encodeVarint(value: number): Buffer {
  const buf = Buffer.alloc(VARINT_BYTES_MAX + 2, 0xee);
  const end = writeVarint(buf, 1, value);
  expect(end - 1).to.equal(varintSize(value));
  return buf.subarray(1, end);
}

function encodeVarlong(value: number): Buffer {
  const buf = Buffer.alloc(VARLONG_BYTES_MAX + 2, 0xee);
  const end = writeVarlong(buf, 1, value);
  expect(end - 1).to.equal(varlongSize(value));
  return buf.subarray(1, end);
}

const cursorOf = (hex: string): Cursor => {
  const buf = Buffer.from(hex, 'hex');
  return new Cursor(buf, 0, buf.length);
};

function expectCorrupt(fn: () => unknown, messagePart: string): void {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(SluiceError);
    expect((err as SluiceError).code).to.equal(Errors.CORRUPT_MESSAGE.code);
    expect((err as SluiceError).message).to.contain(messagePart);
    return;
  }
  expect.fail('expected CORRUPT_MESSAGE');
}

describe('record/varint', () => {
  describe('varint (int32)', () => {
    // Vectors as in Kafka's ByteUtilsTest and the protobuf zigzag table.
    const vectors: Array<[number, string]> = [
      [0, '00'], [-1, '01'], [1, '02'], [-2, '03'], [63, '7e'], [-64, '7f'], [64, '8001'], [-65, '8101'],
      [8191, 'fe7f'], [-8192, 'ff7f'], [8192, '808001'], [2147483647, 'feffffff0f'], [-2147483648, 'ffffffff0f'],
    ];

    it('encodes and decodes the known vectors', () => {
      for (const [value, hex] of vectors) {
        expect(encodeVarint(value).toString('hex'), `encode ${value}`).to.equal(hex);
        const cursor = cursorOf(hex);
        expect(cursor.readVarint(), `decode ${hex}`).to.equal(value);
        expect(cursor.remaining()).to.equal(0);
      }
    });

    it('matches the bigint reference for every int32', () => {
      fc.assert(fc.property(fc.integer({ min: -0x80000000, max: 0x7fffffff }), (value) => {
        const bytes = encodeVarint(value);
        expect(bytes.equals(referenceEncode(BigInt(value), 32n))).to.equal(true);
        expect(new Cursor(bytes, 0, bytes.length).readVarint()).to.equal(value);
      }), fcParams(1000));
    });

    it('accepts a non-minimal encoding within 5 bytes', () => {
      expect(cursorOf('8080808000').readVarint()).to.equal(0);
    });

    it('rejects encodings longer than 5 bytes or wider than 32 bits', () => {
      expectCorrupt(() => cursorOf('808080808000').readVarint(), 'varint');
      expectCorrupt(() => cursorOf('ffffffff1f').readVarint(), 'overflows 32 bits');
    });

    it('rejects a varint cut short', () => {
      expectCorrupt(() => cursorOf('').readVarint(), 'truncated');
      expectCorrupt(() => cursorOf('8080').readVarint(), 'truncated');
    });

    it('refuses to write a value outside int32 (caller bug)', () => {
      expect(() => varintSize(2 ** 31)).to.throw('int32');
      expect(() => writeVarint(Buffer.alloc(8), 0, 1.5)).to.throw('int32');
    });
  });

  describe('varlong (safe integers)', () => {
    const safeEdges = [0, -1, 1, 2 ** 30 - 1, 2 ** 30, -(2 ** 30), -(2 ** 30) - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 32,
      1_700_000_000_000, -1_700_000_000_000, 2 ** 47, 2 ** 52 + 1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];

    it('matches the bigint reference at the edges of each path', () => {
      for (const value of safeEdges) {
        const bytes = encodeVarlong(value);
        expect(bytes.toString('hex'), `encode ${value}`).to.equal(referenceEncode(BigInt(value), 64n).toString('hex'));
        expect(new Cursor(bytes, 0, bytes.length).readVarlong(), `decode ${value}`).to.equal(value);
      }
    });

    it('encodes known vectors', () => {
      expect(encodeVarlong(-100).toString('hex')).to.equal('c701');
      expect(encodeVarlong(Number.MAX_SAFE_INTEGER).toString('hex')).to.equal('feffffffffffff1f');
      expect(encodeVarlong(Number.MIN_SAFE_INTEGER).toString('hex')).to.equal('fdffffffffffff1f');
    });

    it('matches the bigint reference for every safe integer', () => {
      const safe = fc.oneof(
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
        fc.maxSafeInteger(),
        fc.integer({ min: -(2 ** 12), max: 2 ** 12 }).map((d) => Number.MAX_SAFE_INTEGER - Math.abs(d)),
        fc.integer({ min: -(2 ** 12), max: 2 ** 12 }).map((d) => Number.MIN_SAFE_INTEGER + Math.abs(d)),
      );
      fc.assert(fc.property(safe, (value) => {
        const bytes = encodeVarlong(value);
        expect(bytes.equals(referenceEncode(BigInt(value), 64n))).to.equal(true);
        expect(new Cursor(bytes, 0, bytes.length).readVarlong()).to.equal(value);
      }), fcParams(1000));
    });

    it('rejects values just outside the safe range and any 9- or 10-byte varlong', () => {
      const hex = (v: bigint): string => referenceEncode(v, 64n).toString('hex');
      expectCorrupt(() => cursorOf(hex(2n ** 53n)).readVarlong(), 'safe integer');
      expectCorrupt(() => cursorOf(hex(-(2n ** 53n))).readVarlong(), 'safe integer');
      expectCorrupt(() => cursorOf(hex(2n ** 63n - 1n)).readVarlong(), 'safe integer');
      expectCorrupt(() => cursorOf(hex(-(2n ** 63n))).readVarlong(), 'safe integer');
      expectCorrupt(() => cursorOf('ffffffffffffffffffff01').readVarlong(), 'safe integer');
      expectCorrupt(() => cursorOf('ff').readVarlong(), 'truncated');
    });

    it('refuses to write an unsafe number (caller bug)', () => {
      expect(() => varlongSize(2 ** 53)).to.throw('safe integer');
      expect(() => writeVarlong(Buffer.alloc(16), 0, Number.NaN)).to.throw('safe integer');
    });
  });

  describe('Cursor', () => {
    it('returns views that share memory with the input', () => {
      const buf = Buffer.from('0a0b0c0d', 'hex');
      const cursor = new Cursor(buf, 1, 4);
      const view = cursor.readBytes(2);
      expect(Buffer.from(view).toString('hex')).to.equal('0b0c');
      buf[1] = 0xff;
      expect(view[0]).to.equal(0xff);
      expect(cursor.pos).to.equal(3);
    });

    it('reads int8 signed and UTF-8 text', () => {
      const buf = Buffer.concat([Buffer.from([0xff, 0x7f]), Buffer.from('héllo ✓', 'utf8')]);
      const cursor = new Cursor(buf, 0, buf.length);
      expect(cursor.readInt8()).to.equal(-1);
      expect(cursor.readInt8()).to.equal(127);
      expect(cursor.readUtf8(cursor.remaining())).to.equal('héllo ✓');
    });

    it('never reads past its end, even when the buffer goes on', () => {
      const buf = Buffer.from('0102030405', 'hex');
      const cursor = new Cursor(buf, 0, 2);
      expectCorrupt(() => cursor.readBytes(3), 'truncated');
      expectCorrupt(() => cursor.readUtf8(3), 'truncated');
      cursor.readBytes(2);
      expectCorrupt(() => cursor.readInt8(), 'truncated');
    });

    it('throws only CORRUPT_MESSAGE on arbitrary bytes', () => {
      fc.assert(fc.property(fc.uint8Array({ maxLength: 12 }), (bytes) => {
        const buf = Buffer.from(bytes);
        for (const read of [(c: Cursor) => c.readVarint(), (c: Cursor) => c.readVarlong()]) {
          try {
            read(new Cursor(buf, 0, buf.length));
          } catch (err) {
            expect(isSluiceError(err, Errors.CORRUPT_MESSAGE), String(err)).to.equal(true);
          }
        }
      }), fcParams(1000));
    });
  });
});
