import { expect } from 'chai';
import type { Message } from '../../src/raft/types.js';
import { drain, enc, entry, soloRaft } from './harness.js';

const good = { type: 'append', from: 1, to: 2, term: 1, prevLogIndex: 0, prevLogTerm: 0, entries: [entry(1, 1)], commit: 0 };

const malformed: unknown[] = [
  null,
  undefined,
  42,
  'append',
  [],
  {},
  { ...good, type: 'nonsense' },
  { ...good, term: NaN },
  { ...good, term: -1 },
  { ...good, term: 1.5 },
  { ...good, from: 0 },
  { ...good, to: '2' },
  { ...good, prevLogIndex: undefined },
  { ...good, entries: 'x' },
  { ...good, entries: [null] },
  { ...good, entries: [entry(2, 1)] }, // not contiguous with prevLogIndex
  { ...good, entries: [entry(1, 5)] }, // entry term above the message term
  { ...good, entries: [{ index: 1, term: 1, type: 7, data: enc('x') }] },
  { ...good, entries: [{ index: 1, term: 1, type: 0, data: 'x' }] },
  { ...good, entries: [entry(1, 1), entry(2, 0)] }, // terms must not decrease
  { type: 'vote', from: 1, to: 2, term: 1, lastLogIndex: 0, lastLogTerm: 0 }, // no transfer flag
  { type: 'heartbeat', from: 1, to: 2, term: 1, commit: Infinity, readRound: 0 },
  { type: 'installSnapshot', from: 1, to: 2, term: 1, meta: { index: 1, term: 1, membership: { voters: [], observers: [] } }, offset: 0, chunk: enc('x'), done: true },
  { type: 'installSnapshot', from: 1, to: 2, term: 1, meta: { index: 1, term: 1 }, offset: 0, chunk: enc('x'), done: true },
  { type: 'installSnapshotResp', from: 1, to: 2, term: 1, snapshotIndex: 1, nextOffset: -2, done: false },
  { ...good, get commit(): number { throw new Error('boom'); } },
];

describe('raft input validation', () => {
  it('drops malformed messages without throwing or changing state', () => {
    const r = soloRaft(2, { voters: [1, 2, 3], observers: [] });
    const before = r.status();
    malformed.forEach((m, i) => {
      expect(() => r.step(m as Message), `case ${i}`).to.not.throw();
    });
    expect(r.status()).to.deep.equal(before);
    expect(drain(r)).to.deep.equal([]);
    // The well-formed original is accepted (the cases above fail for their own reason).
    r.step(good as Message);
    expect(r.status()).to.include({ term: 1, lastIndex: 1, leader: 1 });
  });

  it('drops misaddressed messages and messages from itself', () => {
    const r = soloRaft(2, { voters: [1, 2, 3], observers: [] });
    r.step({ ...good, to: 3 } as Message);
    r.step({ ...good, from: 2 } as Message);
    expect(r.status()).to.include({ term: 0, lastIndex: 0 });
    expect(drain(r)).to.deep.equal([]);
  });

  it('survives fuzzed messages', () => {
    const r = soloRaft(2, { voters: [1, 2, 3], observers: [] });
    const types = ['vote', 'preVote', 'voteResp', 'preVoteResp', 'append', 'appendResp', 'heartbeat', 'heartbeatResp',
      'installSnapshot', 'installSnapshotResp', 'timeoutNow'];
    let seed = 12345;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const val = (): unknown => [0, 1, 2, 3, -1, NaN, 'x', true, false, null, 1e20, enc('ab')][rnd(12)];
    for (let i = 0; i < 3000; i++) {
      const m: Record<string, unknown> = { type: types[rnd(types.length)], from: rnd(4), to: 2, term: rnd(4) };
      for (const f of ['prevLogIndex', 'prevLogTerm', 'commit', 'lastLogIndex', 'lastLogTerm', 'transfer', 'granted',
        'success', 'matchIndex', 'conflictTerm', 'conflictIndex', 'readRound', 'lastIndex', 'offset', 'chunk', 'done',
        'snapshotIndex', 'nextOffset']) m[f] = val();
      m.entries = rnd(2) ? [] : [entry(1 + rnd(3), rnd(3))];
      m.meta = { index: rnd(4), term: rnd(3), membership: { voters: [1, 2, 3], observers: [] } };
      expect(() => r.step(m as unknown as Message)).to.not.throw();
      if (i % 7 === 0) r.tick();
      drain(r);
    }
  });
});
