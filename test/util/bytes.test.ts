// The portable byte helpers agree with Node's Buffer, which they replace in
// the record codec: big-endian integers, UTF-8 length, writing and reading
// (ASCII fast path and TextEncoder/TextDecoder path alike).
import { expect } from 'chai';
import fc from 'fast-check';
import {
  bigInt64At, int16At, int32At, int64NumberAt, uint32At, utf8Decode, utf8Length, utf8Write, writeBigInt64, writeInt16, writeInt32,
} from '../../src/util/bytes.js';

describe('util: bytes', () => {
  it('UTF-8 length, write and read match Buffer for any string (lone surrogates included)', () => {
    fc.assert(fc.property(fc.oneof(fc.string({ unit: 'grapheme-ascii' }), fc.string({ unit: 'binary' }), fc.string({ unit: 'binary', maxLength: 200 })), (s) => {
      const expected = Buffer.from(s, 'utf8');
      expect(utf8Length(s)).to.equal(expected.length);
      const out = new Uint8Array(expected.length + 2);
      expect(utf8Write(out, s, 1)).to.equal(expected.length);
      expect(Buffer.from(out.subarray(1, 1 + expected.length)).equals(expected)).to.equal(true);
      expect(utf8Decode(out, 1, 1 + expected.length)).to.equal(expected.toString('utf8'));
    }), { numRuns: 500 });
  });

  it('big-endian integers match Buffer', () => {
    fc.assert(fc.property(fc.integer({ min: -0x8000, max: 0x7fff }), fc.integer({ min: -0x80000000, max: 0x7fffffff }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (i16, i32, i64) => {
      const b = new Uint8Array(14);
      writeInt16(b, i16, 0);
      writeInt32(b, i32, 2);
      writeBigInt64(b, i64, 6);
      const n = Buffer.from(b);
      expect([int16At(b, 0), int32At(b, 2), uint32At(b, 2), bigInt64At(b, 6)]).to.deep.equal([n.readInt16BE(0), n.readInt32BE(2), n.readUInt32BE(2), n.readBigInt64BE(6)]);
      if (i64 >= BigInt(Number.MIN_SAFE_INTEGER) && i64 <= BigInt(Number.MAX_SAFE_INTEGER)) expect(int64NumberAt(b, 6)).to.equal(Number(i64));
    }), { numRuns: 500 });
  });
});
