// The chunked msgpack encoder (protocol/chunked-msgpack.ts), tested on bytes:
// its chunks, concatenated, are msgpack that decodes to the value — for every
// integer width and string and bin length boundary, and for random values —
// and, for the shapes a broker answers, the very bytes msgpackr writes. Large
// bin payloads are the caller's own buffers (no copy); small ones are copied.
import { expect } from 'chai';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { CHUNK_BIN_BYTES_MIN, encodeChunked } from '../../src/protocol/chunked-msgpack.js';
import { decodeResponse, encodeResponse, encodeResponseChunks } from '../../src/protocol/envelope.js';

// The envelope's own options: plain maps, undefined as nil.
const packr = new Packr({ useRecords: false, moreTypes: false, variableMapSize: true, encodeUndefinedAsNil: true });
const joined = (chunks: readonly Uint8Array[]): Buffer => Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)));
const roundTrip = (v: unknown): unknown => packr.unpack(joined(encodeChunked(v)));

describe('protocol: chunked msgpack encoder', () => {
  it('writes every integer width at its boundaries, and other numbers as float64', () => {
    const ints = [0, 1, 127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1, -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31), -(2 ** 31) - 1, -(2 ** 53) + 1];
    for (const n of ints) expect(roundTrip(n), String(n)).to.equal(n);
    for (const x of [1.5, -0.25, 1e300, Number.MIN_VALUE]) expect(roundTrip(x)).to.equal(x);
    for (const n of ints.filter((i) => i >= -(2 ** 31) && i <= 2 ** 32 - 1)) {
      expect(joined(encodeChunked(n)).equals(packr.pack(n)), `${n}: msgpackr's bytes`).to.equal(true);
    }
  });

  it('writes strings of every header size, multibyte UTF-8 included', () => {
    for (const s of ['', 'a', 'x'.repeat(31), 'x'.repeat(32), 'x'.repeat(255), 'x'.repeat(256), 'x'.repeat(70_000), 'naïve ☃ 🎉', '€'.repeat(100)]) {
      expect(roundTrip(s)).to.equal(s);
      expect(joined(encodeChunked(s)).equals(packr.pack(s)), `length ${s.length}`).to.equal(true);
    }
  });

  it('passes large bin payloads through as chunks and copies small ones', () => {
    const small = Buffer.alloc(CHUNK_BIN_BYTES_MIN - 1, 7);
    const large = Buffer.alloc(CHUNK_BIN_BYTES_MIN, 9);
    const huge = Buffer.alloc(70_000, 3);
    const chunks = encodeChunked({ small, large, huge, after: 1 });
    expect(chunks.filter((c) => c === large || c === huge), 'the caller\'s own buffers').to.have.length(2);
    expect(chunks.includes(small)).to.equal(false);
    const back = packr.unpack(joined(chunks)) as Record<string, Uint8Array | number>;
    expect(Buffer.from(back.small as Uint8Array).equals(small)).to.equal(true);
    expect(Buffer.from(back.large as Uint8Array).equals(large)).to.equal(true);
    expect(Buffer.from(back.huge as Uint8Array).equals(huge)).to.equal(true);
    expect(back.after).to.equal(1);
  });

  it('writes arrays and maps of every header size, nil, booleans and undefined', () => {
    const v = {
      none: null, undef: undefined, yes: true, no: false,
      a15: Array.from({ length: 15 }, (_, i) => i), a16: Array.from({ length: 16 }, (_, i) => i), a70k: new Array(70_000).fill(1),
      m16: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, i])), nested: [{ x: [{ y: 'z' }] }],
    };
    expect(roundTrip(v)).to.deep.equal({ ...v, undef: null });
    expect(joined(encodeChunked(v)).equals(packr.pack(v)), 'msgpackr\'s bytes').to.equal(true);
  });

  it('frames a fetch answer exactly as msgpackr does, with the batches as their own chunks', () => {
    const records = Buffer.alloc(4096, 0x5a);
    const body = {
      errorCode: 0,
      topics: [{ name: 'orders', partitions: [
        { partition: 0, errorCode: 0, errorMessage: null, highWatermark: 123_456, logStartOffset: 0, logEndOffset: 123_460, records },
        { partition: 1, errorCode: 6, errorMessage: 'NOT_LEADER_OR_FOLLOWER: broker 2 is not the leader of orders-1', highWatermark: -1, logStartOffset: -1, records: new Uint8Array(0) },
      ] }],
    };
    const chunks = encodeResponseChunks({ correlationId: 0xfffffff0, body });
    expect(chunks).to.include(records);
    expect(joined(chunks).equals(encodeResponse({ correlationId: 0xfffffff0, body }))).to.equal(true);
    const back = decodeResponse(joined(chunks));
    expect(back.ok).to.equal(true);
  });

  it('round-trips random values', () => {
    const leaf = fc.oneof(
      fc.integer({ min: -(2 ** 31), max: 2 ** 32 - 1 }), fc.maxSafeInteger(), fc.double({ noNaN: true }), fc.string(), fc.string({ unit: 'binary' }),
      fc.boolean(), fc.constant(null), fc.uint8Array({ maxLength: 2 * CHUNK_BIN_BYTES_MIN }).map((u) => Buffer.from(u)),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('node'), { maxLength: 20 }), fc.dictionary(fc.string(), tie('node'), { maxKeys: 20 })),
    })).node;
    fc.assert(fc.property(value, (v) => {
      expect(roundTrip(v)).to.deep.equal(packr.unpack(packr.pack(v)));
    }), { numRuns: 500, seed: 7 });
  });

  it('refuses what msgpack frames do not carry', () => {
    expect(() => encodeChunked(1n)).to.throw(/bigint/);
    expect(() => encodeChunked({ at: new Date(0) })).to.throw(/plain objects/);
    expect(() => encodeChunked({ f: () => 1 })).to.throw(/function/);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => encodeChunked(cycle)).to.throw(/nested too deeply/);
  });
});
