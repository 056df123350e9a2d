import { expect } from 'chai';
import { checkMessage } from '../../src/raft-node/message-check.js';
import { SAMPLE_MESSAGES } from './messages.fixture.js';

describe('raft message shape checks', () => {
  it('accepts one well-formed message of every type', () => {
    for (const m of SAMPLE_MESSAGES) expect(checkMessage(m), m.type).to.equal(m);
  });

  it('rejects non-objects and unknown types', () => {
    for (const x of [null, undefined, 3, 'vote', [], { type: 'nope', from: 1, to: 2, term: 1 }, { type: 'constructor', from: 1, to: 2, term: 1 }]) {
      expect(checkMessage(x)).to.equal(undefined);
    }
  });

  it('rejects a missing, negative, fractional or NaN field in every type', () => {
    for (const m of SAMPLE_MESSAGES) {
      for (const key of Object.keys(m)) {
        if (key === 'type') continue;
        const value = (m as unknown as Record<string, unknown>)[key];
        const broken: unknown[] = [undefined, 'x', Number.NaN];
        if (typeof value === 'number') broken.push(-5, 1.5);
        for (const b of broken) {
          const copy = { ...m, [key]: b };
          expect(checkMessage(copy), `${m.type}.${key}=${String(b)}`).to.equal(undefined);
        }
      }
    }
  });

  it('checks entries, snapshot metadata and node ids in depth', () => {
    const append = SAMPLE_MESSAGES.find((m) => m.type === 'append');
    const snap = SAMPLE_MESSAGES.find((m) => m.type === 'installSnapshot');
    if (append?.type !== 'append' || snap?.type !== 'installSnapshot') throw new Error('fixture');
    const e = append.entries[0];
    expect(checkMessage({ ...append, entries: [{ ...e, data: 'text' }] })).to.equal(undefined);
    expect(checkMessage({ ...append, entries: [{ ...e, type: 9 }] })).to.equal(undefined);
    expect(checkMessage({ ...append, entries: [{ ...e, index: 0 }] })).to.equal(undefined);
    expect(checkMessage({ ...snap, meta: { ...snap.meta, membership: { voters: [1, -2], observers: [] } } })).to.equal(undefined);
    expect(checkMessage({ ...snap, meta: { ...snap.meta, membership: { voters: [1] } } })).to.equal(undefined);
    expect(checkMessage({ ...snap, from: 0 })).to.equal(undefined);
    expect(checkMessage({ ...SAMPLE_MESSAGES[9], nextOffset: -2 })).to.equal(undefined);
  });
});
