// The table interpreter on bytes, without sockets: classic and compact
// encodings, tagged fields (known, unknown and defaulted), nullability by
// version, hostile lengths, and a property test that every value of a table
// survives encode → decode at every version.

import { expect } from 'chai';
import fc from 'fast-check';
import { Reader, KafkaDecodeError } from '../../../src/protocol/kafka/codec/reader.js';
import { Writer, BYTES_REF_MIN } from '../../../src/protocol/kafka/codec/writer.js';
import { decodeMessage, encodeMessage, type Struct } from '../../../src/protocol/kafka/message.js';
import { f, message, versions, ZERO_UUID } from '../../../src/protocol/kafka/schema.js';
import { fcParams } from '../../record/fixtures/property.js';

const spec = message('TestRequest', 999, '0-3', '2+', [
  f.int16('code'),
  f.string('name', '0+', { nullable: '1+' }),
  f.int64('offset', '1+', { default: -1 }),
  f.array('items', '0+', [f.int32('id'), f.bytes('data', '0+', { nullable: '0+' }), f.bool('flag', '3+')]),
  f.array('ids', '0+', 'int32'),
  f.uuid('topicId', '2+'),
  f.int32('hint', '2+', { tag: 0, default: -1 }),
  f.string('note', '3+', { tag: 5, nullable: '3+' }),
]);

function encode(v: Struct, version: number): Buffer {
  const w = new Writer(8);
  encodeMessage(spec, version, v, w);
  return w.toBuffer();
}
const decode = (b: Buffer, version: number): Struct => decodeMessage(spec, version, new Reader(b));

describe('protocol/kafka codec', () => {
  it('parses version ranges in the spec notation', () => {
    expect(versions('3+')).to.deep.equal({ min: 3, max: Infinity });
    expect(versions('2-5')).to.deep.equal({ min: 2, max: 5 });
    expect(versions('7')).to.deep.equal({ min: 7, max: 7 });
    expect(versions('none').max).to.be.below(versions('none').min);
    expect(() => versions('x')).to.throw();
  });

  it('writes classic encodings in non-flexible versions', () => {
    const b = encode({ code: 7, name: 'ab', items: [], ids: [1] }, 0);
    expect(b.toString('hex')).to.equal('0007' + '0002' + '6162' + '00000000' + '00000001' + '00000001');
  });

  it('writes compact encodings and an empty tag section in flexible versions', () => {
    const b = encode({ code: 7, name: 'ab', offset: 5, items: [], ids: [1], topicId: ZERO_UUID }, 2);
    expect(b.toString('hex')).to.equal('0007' + '03' + '6162' + '0000000000000005' + '01' + '02' + '00000001' + ZERO_UUID + '00');
  });

  it('fills absent fields and unsent tagged fields with their defaults', () => {
    const v = decode(encode({ code: 1, name: 'x' }, 0), 0);
    expect(v.offset).to.equal(-1);
    expect(v.hint).to.equal(-1);
    expect(v.note).to.equal(null);
    expect(v.topicId).to.equal(ZERO_UUID);
  });

  it('writes tagged fields only when not default, sorted by tag, and reads them back', () => {
    const b = encode({ code: 1, name: 'x', hint: 9, note: 'n' }, 3);
    const v = decode(b, 3);
    expect(v.hint).to.equal(9);
    expect(v.note).to.equal('n');
    expect(decode(encode({ code: 1, name: 'x', hint: -1 }, 3), 3).hint).to.equal(-1);
    // The tag section ends the message: 2 tags, tag 0 (4 bytes), tag 5 (compact string "n").
    expect(b.subarray(b.length - 11).toString('hex')).to.equal('02' + '00' + '04' + '00000009' + '05' + '02' + '026e');
  });

  it('skips tags it does not know', () => {
    const b = encode({ code: 1, name: 'x' }, 2);
    // Replace the empty tag section with one unknown tag 40 of 3 bytes.
    const withUnknown = Buffer.concat([b.subarray(0, b.length - 1), Buffer.from('012803aabbcc', 'hex')]);
    const r = new Reader(withUnknown);
    expect(decodeMessage(spec, 2, r).code).to.equal(1);
    expect(r.remaining).to.equal(0);
  });

  it('refuses null where the version does not allow it, on both sides', () => {
    expect(() => encode({ code: 1, name: null }, 0)).to.throw(/cannot be null/);
    expect(() => decode(Buffer.from('0001ffff', 'hex'), 0)).to.throw(KafkaDecodeError, /cannot be null/);
    expect(decode(encode({ code: 1, name: null }, 1), 1).name).to.equal(null);
  });

  it('refuses lengths beyond the frame before allocating', () => {
    expect(() => decode(Buffer.from('0001' + '0001' + '61' + '7fffffff', 'hex'), 0)).to.throw(KafkaDecodeError, /elements/);
    expect(() => decode(Buffer.from('0001' + '7fff', 'hex'), 0)).to.throw(KafkaDecodeError);
    expect(() => decode(Buffer.from('0001' + 'ffffffffff0f', 'hex'), 2)).to.throw(KafkaDecodeError);
    expect(() => new Reader(Buffer.from('00200000000000000000', 'hex')).int64()).to.throw(KafkaDecodeError, /2\^53/);
  });

  it('references large byte values instead of copying them, and keeps small ones inline', () => {
    const big = Buffer.alloc(BYTES_REF_MIN, 7);
    const w = new Writer();
    encodeMessage(spec, 0, { code: 1, name: 'x', items: [{ id: 1, data: big }, { id: 2, data: Buffer.from('hi') }] }, w);
    const chunks = w.finish();
    expect(chunks.some((c) => c === big)).to.equal(true);
    expect(decode(Buffer.concat(chunks), 0).items).to.have.length(2);
  });

  it('grows its buffer across every field boundary without losing a byte', () => {
    for (let start = 1; start < 40; start++) {
      const w = new Writer(start);
      w.int8(1); w.int16(2); w.int32(3); w.int64(4); w.uvarint(300); w.varint(-5); w.bool(true); w.utf8('héllo'); w.uuid('ab'.repeat(16));
      const r = new Reader(w.toBuffer());
      expect([r.int8(), r.int16(), r.int32(), r.int64(), r.uvarint(), r.varint(), r.bool(), r.utf8Of(6, 's'), r.uuid()]).to.deep.equal([1, 2, 3, 4, 300, -5, true, 'héllo', 'ab'.repeat(16)]);
    }
  });

  it('round-trips every value at every version (property)', () => {
    const item = fc.record({ id: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), data: fc.option(fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)), { nil: null }), flag: fc.boolean() });
    const value = fc.record({
      code: fc.integer({ min: -32768, max: 32767 }),
      name: fc.string({ maxLength: 30 }),
      offset: fc.maxSafeInteger(),
      items: fc.array(item, { maxLength: 4 }),
      ids: fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 5 }),
      topicId: fc.uint8Array({ minLength: 16, maxLength: 16 }).map((a) => Buffer.from(a).toString('hex')),
      hint: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      note: fc.option(fc.string({ maxLength: 10 }), { nil: null }),
    });
    fc.assert(fc.property(value, fc.integer({ min: 0, max: 3 }), (v, version) => {
      const back = decode(encode(v, version), version);
      const again = encode(back, version);
      expect(again.toString('hex')).to.equal(encode(v, version).toString('hex'));
      expect(back.code).to.equal(v.code);
      expect(back.name).to.equal(v.name);
      expect((back.items as Struct[]).map((i) => i.id)).to.deep.equal(v.items.map((i) => i.id));
      if (version >= 1) expect(back.offset).to.equal(v.offset);
      if (version >= 2) expect(back.hint).to.equal(v.hint);
      if (version >= 3) expect(back.note).to.equal(v.note);
    }), fcParams());
  });
});
