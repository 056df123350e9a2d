import { expect } from 'chai';
import { AssertionError } from '../../src/util/assert.js';
import { isSluiceError } from '../../src/util/errors.js';
import { EntryType, type Entry } from '../../src/raft/types.js';
import { LogDigestStateMachine, digestStep } from '../../src/raft-node/log-digest-state-machine.js';

function entry(index: number, data: string, type = EntryType.Normal): Entry {
  return { index, term: 1, type, data: Buffer.from(data) };
}

const membership = { voters: [1], observers: [] };

describe('LogDigestStateMachine', () => {
  it('counts and digests Normal entries, and only advances the index for others', () => {
    const sm = new LogDigestStateMachine();
    sm.apply(entry(1, '', EntryType.NoOp));
    sm.apply(entry(2, 'a'));
    sm.apply(entry(3, 'bc'));
    expect(sm.current.appliedIndex).to.equal(3);
    expect(sm.current.appliedCount).to.equal(2);
    expect(sm.current.lastDataIndex).to.equal(3);
    expect(sm.current.digest).to.equal(digestStep(digestStep(0, 2, Buffer.from('a')), 3, Buffer.from('bc')));
  });

  it('tells apart sequences that concatenate to the same bytes', () => {
    const a = new LogDigestStateMachine();
    const b = new LogDigestStateMachine();
    a.apply(entry(1, 'ab'));
    a.apply(entry(2, 'c'));
    b.apply(entry(1, 'a'));
    b.apply(entry(2, 'bc'));
    expect(a.current.digest).to.not.equal(b.current.digest);
  });

  it('refuses to apply out of order', () => {
    const sm = new LogDigestStateMachine();
    expect(() => sm.apply(entry(2, 'x'))).to.throw(AssertionError);
  });

  it('restores exactly the state it snapshotted', () => {
    const sm = new LogDigestStateMachine();
    for (let i = 1; i <= 50; i++) sm.apply(entry(i, `v${i}`, i % 7 === 0 ? EntryType.NoOp : EntryType.Normal));
    const copy = new LogDigestStateMachine();
    copy.restore({ meta: { index: 50, term: 1, membership }, data: sm.snapshot() });
    expect(copy.current).to.deep.equal(sm.current);
    copy.apply(entry(51, 'next'));
    sm.apply(entry(51, 'next'));
    expect(copy.describe()).to.deep.equal(sm.describe());
  });

  it('rejects a damaged image or one at another index', () => {
    const sm = new LogDigestStateMachine();
    sm.apply(entry(1, 'x'));
    const image = Buffer.from(sm.snapshot());
    const other = new LogDigestStateMachine();
    const wrongIndex = () => other.restore({ meta: { index: 2, term: 1, membership }, data: image });
    expect(wrongIndex).to.throw().that.satisfies(isSluiceError);
    image[5] = (image[5] ?? 0) ^ 0xff;
    const damaged = () => other.restore({ meta: { index: 1, term: 1, membership }, data: image });
    expect(damaged).to.throw(/CRC/);
  });
});
