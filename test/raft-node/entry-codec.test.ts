import { expect } from 'chai';
import { EntryType } from '../../src/raft/types.js';
import { crc32c } from '../../src/util/crc32c.js';
import { SeededRng } from '../../src/util/rng.js';
import { decodeFrame, encodeEntries, findPlausibleFrame, FRAME_HEADER_BYTES } from '../../src/raft-node/entry-codec.js';
import { plain, randomEntry } from './disk-test-helpers.js';

describe('raft entry codec', () => {
  it('lays a frame out as documented (golden bytes)', () => {
    const { buf } = encodeEntries([{ term: 2, index: 0x0102030405, type: EntryType.Config, data: Uint8Array.of(0xaa, 0xbb) }]);
    const body = Buffer.from([
      0, 0, 0, 0, 0, 0, 0, 2, // term
      0, 0, 0, 1, 2, 3, 4, 5, // index
      2, // type
      0xaa, 0xbb, // data
    ]);
    const expected = Buffer.alloc(8);
    expected.writeUInt32BE(23, 0); // bodyLength = 21 + 2
    expected.writeUInt32BE(crc32c(body), 4);
    expect(buf.toString('hex')).to.equal(Buffer.concat([expected, body]).toString('hex'));
  });

  it('round-trips random batches and reports each frame offset', () => {
    const rng = new SeededRng(7);
    const list = Array.from({ length: 50 }, (_, i) => randomEntry(rng, 100 + i, 3 + Math.floor(i / 10)));
    const { buf, offsets } = encodeEntries(list);
    const decoded = offsets.map((off) => {
      const r = decodeFrame(buf, off);
      if (r.kind !== 'entry') throw new Error(`frame at ${off}: ${r.kind}`);
      return r.entry;
    });
    expect(plain(decoded)).to.deep.equal(plain(list));
    expect(decoded[0]?.data).to.be.an.instanceOf(Uint8Array);
  });

  it('reports every truncation of a frame as damaged', () => {
    const { buf } = encodeEntries([randomEntry(new SeededRng(1), 1, 1, 40)]);
    for (let cut = 1; cut < buf.length; cut++) {
      expect(decodeFrame(buf.subarray(0, cut), 0).kind, `cut at ${cut}`).to.equal('damaged');
    }
    expect(decodeFrame(buf, 0).kind).to.equal('entry');
  });

  it('detects any single flipped byte', () => {
    const { buf } = encodeEntries([{ term: 9, index: 44, type: EntryType.Normal, data: new Uint8Array(30).fill(5) }]);
    for (let at = 0; at < buf.length; at++) {
      const copy = Buffer.from(buf);
      copy[at] = (copy[at] ?? 0) ^ 0x10;
      expect(decodeFrame(copy, 0).kind, `flip at ${at}`).to.not.equal('entry');
    }
  });

  it('calls a verifying frame with an unknown type invalid, not damaged', () => {
    const { buf } = encodeEntries([{ term: 1, index: 1, type: EntryType.Normal, data: new Uint8Array(4) }]);
    buf.writeUInt8(9, 24);
    buf.writeUInt32BE(crc32c(buf.subarray(8)), 4);
    expect(decodeFrame(buf, 0).kind).to.equal('invalid');
  });

  it('finds the next whole frame after a damaged length', () => {
    const rng = new SeededRng(3);
    const list = [randomEntry(rng, 10, 2, 20), randomEntry(rng, 11, 2, 20), randomEntry(rng, 12, 3, 20)];
    const { buf, offsets } = encodeEntries(list);
    buf.writeUInt32BE(0x7fff, 0); // first frame now claims to run past the end
    expect(decodeFrame(buf, 0).kind).to.equal('damaged');
    expect(findPlausibleFrame(buf, 0, 10, 2)).to.equal(offsets[1]);
    // Frames below the wanted index or term do not count.
    expect(findPlausibleFrame(buf, 0, 13, 2)).to.equal(-1);
    expect(findPlausibleFrame(buf.subarray(0, FRAME_HEADER_BYTES + 3), 0, 10, 2)).to.equal(-1);
  });
});
