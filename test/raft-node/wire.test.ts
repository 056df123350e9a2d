import { expect } from 'chai';
import fc from 'fast-check';
import { pack } from 'msgpackr';
import { checkMessage } from '../../src/raft-node/message-check.js';
import { decodeFrame, encodeFrame, estimateMessageBytes, WIRE_VERSION, type Frame } from '../../src/raft-node/wire.js';
import { SAMPLE_MESSAGES } from './messages.fixture.js';

function roundTrip(frame: Frame): Frame {
  const d = decodeFrame(encodeFrame(frame));
  if (!d.ok) throw new Error(`decode failed: ${d.reason}`);
  return d.frame;
}

/** Normalizes Buffers to plain Uint8Arrays so deep equality compares bytes. */
function plain(x: unknown): unknown {
  if (x instanceof Uint8Array) return Array.from(x);
  if (Array.isArray(x)) return x.map(plain);
  if (typeof x === 'object' && x !== null) return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, plain(v)]));
  return x;
}

describe('raft-node wire codec', () => {
  it('round-trips every frame kind', () => {
    const frames: Frame[] = [
      { k: 'hello', role: 'node', version: WIRE_VERSION, nodeId: 3, clusterId: 'abc' },
      { k: 'hello', role: 'client', version: WIRE_VERSION, clusterId: 'abc' },
      { k: 'hello', role: 'client', version: WIRE_VERSION },
      { k: 'helloAck', nodeId: 2, clusterId: 'abc' },
      { k: 'raft', msgs: SAMPLE_MESSAGES },
      { k: 'req', reqs: [{ id: 7, op: 'propose', data: new Uint8Array([9, 8, 7]) }, { id: 8, op: 'status' }, { id: 9, op: 'read' }] },
      {
        k: 'resp',
        resps: [
          { id: 7, result: { index: 12, term: 3 } },
          { id: 9, error: { code: 41, name: 'NOT_CONTROLLER', message: 'x', leader: 2, leaderEndpoint: 'ws://127.0.0.1:1' } },
        ],
      },
    ];
    for (const f of frames) expect(plain(roundTrip(f))).to.deep.equal(plain(f));
  });

  it('keeps every sample message intact through a raft frame', () => {
    const d = decodeFrame(encodeFrame({ k: 'raft', msgs: SAMPLE_MESSAGES }));
    expect(d.ok && d.dropped).to.equal(0);
    if (!d.ok || d.frame.k !== 'raft') throw new Error('not a raft frame');
    expect(d.frame.msgs).to.have.length(SAMPLE_MESSAGES.length);
    const append = d.frame.msgs.find((m) => m.type === 'append');
    expect(append && append.type === 'append' && append.entries[1]?.data).to.be.instanceOf(Uint8Array);
  });

  it('rejects bytes that are not a frame, without throwing', () => {
    const bad: Uint8Array[] = [
      Buffer.from('hello garbage'),
      Buffer.from([0xc6, 0xff, 0xff, 0xff, 0xff]),
      new Uint8Array(0),
      pack(42),
      pack([1, 2, 3]),
      pack({ k: 'nope' }),
      pack({ k: 'hello', role: 'node', version: 1, nodeId: 'x', clusterId: 'c' }),
      pack({ k: 'hello', role: 'god', version: 1 }),
      pack({ k: 'req', reqs: [{ id: 1, op: 'drop-tables' }] }),
      pack({ k: 'req', reqs: [{ id: 1, op: 'status' }, { id: -1, op: 'status' }] }),
      pack({ k: 'req', reqs: [] }),
      pack({ k: 'req', id: 1, op: 'status' }),
      pack({ k: 'raft', msgs: 'not a list' }),
      pack({ k: 'resp', resps: [{ id: 1, error: { code: 'x' } }] }),
    ];
    for (const b of bad) expect(decodeFrame(b).ok, Buffer.from(b).toString('hex')).to.equal(false);
  });

  it('drops ill-shaped raft messages one by one and keeps the rest', () => {
    const good = SAMPLE_MESSAGES[0];
    const frame = pack({
      k: 'raft',
      msgs: [good, { ...good, term: -1 }, { ...good, from: 'x' }, null, 5, { ...good, type: 'bogus' }, SAMPLE_MESSAGES[6]],
    });
    const d = decodeFrame(frame);
    if (!d.ok || d.frame.k !== 'raft') throw new Error('expected a raft frame');
    expect(d.frame.msgs.map((m) => m.type)).to.deep.equal(['preVote', 'heartbeat']);
    expect(d.dropped).to.equal(5);
  });

  it('never throws on random bytes or on mutations of valid frames', () => {
    const valid = encodeFrame({ k: 'raft', msgs: SAMPLE_MESSAGES });
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      const d = decodeFrame(bytes);
      expect(d.ok === true || typeof d.reason === 'string').to.equal(true);
    }), { numRuns: 2000 });
    fc.assert(fc.property(fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), (flips) => {
      const copy = Buffer.from(valid);
      for (const [pos, value] of flips) copy[pos] = value;
      const d = decodeFrame(copy);
      // Whatever survives decoding must be well-shaped messages.
      if (d.ok && d.frame.k === 'raft') for (const m of d.frame.msgs) expect(checkMessage(m)).to.equal(m);
    }), { numRuns: 2000 });
  });

  it('estimates append sizes from their entry data', () => {
    const append = SAMPLE_MESSAGES.find((m) => m.type === 'append');
    const heartbeat = SAMPLE_MESSAGES.find((m) => m.type === 'heartbeat');
    if (!append || !heartbeat) throw new Error('fixture');
    expect(estimateMessageBytes(append)).to.be.greaterThan(estimateMessageBytes(heartbeat));
    expect(encodeFrame({ k: 'raft', msgs: [append] }).length).to.be.lessThan(estimateMessageBytes(append) + 200);
  });
});
