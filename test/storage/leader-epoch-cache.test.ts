import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LeaderEpochCache, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET } from '../../src/storage/leader-epoch-cache.js';
import { isSluiceError, Errors } from '../../src/util/errors.js';
import { removeDir, tempDir } from './log-test-helpers.js';

describe('LeaderEpochCache', () => {
  const undef = { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };

  it('assigns new epochs and ignores repeats of the latest', () => {
    const c = new LeaderEpochCache(null);
    c.assign(1, 0);
    c.assign(1, 5);
    c.assign(3, 10);
    expect(c.all()).to.deep.equal([{ epoch: 1, startOffset: 0 }, { epoch: 3, startOffset: 10 }]);
    expect(c.latestEpoch()).to.equal(3);
  });

  it('drops conflicting entries when an epoch is assigned out of order', () => {
    const c = new LeaderEpochCache(null, [{ epoch: 1, startOffset: 0 }, { epoch: 3, startOffset: 10 }, { epoch: 5, startOffset: 20 }]);
    c.assign(4, 15);
    expect(c.all()).to.deep.equal([{ epoch: 1, startOffset: 0 }, { epoch: 3, startOffset: 10 }, { epoch: 4, startOffset: 15 }]);
    c.assign(2, 12);
    expect(c.all()).to.deep.equal([{ epoch: 1, startOffset: 0 }, { epoch: 2, startOffset: 12 }]);
  });

  it('answers endOffsetForEpoch with KIP-279 semantics', () => {
    const c = new LeaderEpochCache(null, [{ epoch: 2, startOffset: 10 }, { epoch: 4, startOffset: 30 }, { epoch: 7, startOffset: 50 }]);
    const leo = 65;
    expect(c.endOffsetForEpoch(7, leo)).to.deep.equal({ epoch: 7, endOffset: 65 });
    expect(c.endOffsetForEpoch(4, leo)).to.deep.equal({ epoch: 4, endOffset: 50 });
    // An epoch this log never saw maps to the largest epoch below it.
    expect(c.endOffsetForEpoch(5, leo)).to.deep.equal({ epoch: 4, endOffset: 50 });
    expect(c.endOffsetForEpoch(3, leo)).to.deep.equal({ epoch: 2, endOffset: 30 });
    // Older than every known epoch: it ended where the first known one began.
    expect(c.endOffsetForEpoch(1, leo)).to.deep.equal({ epoch: 1, endOffset: 10 });
    expect(c.endOffsetForEpoch(8, leo)).to.deep.equal(undef);
    expect(c.endOffsetForEpoch(UNDEFINED_EPOCH, leo)).to.deep.equal(undef);
    expect(new LeaderEpochCache(null).endOffsetForEpoch(0, 0)).to.deep.equal(undef);
  });

  it('truncates from the end and from the start', () => {
    const c = new LeaderEpochCache(null, [{ epoch: 2, startOffset: 10 }, { epoch: 4, startOffset: 30 }, { epoch: 7, startOffset: 50 }]);
    c.truncateFromEnd(50);
    expect(c.all().map((e) => e.epoch)).to.deep.equal([2, 4]);
    c.truncateFromStart(35);
    expect(c.all()).to.deep.equal([{ epoch: 4, startOffset: 35 }]);
    c.truncateFromStart(20);
    expect(c.all()).to.deep.equal([{ epoch: 4, startOffset: 35 }]);
    expect(c.epochForOffset(34)).to.equal(UNDEFINED_EPOCH);
    expect(c.epochForOffset(99)).to.equal(4);
  });

  it('keeps an entry that starts exactly at the new log start', () => {
    const c = new LeaderEpochCache(null, [{ epoch: 2, startOffset: 10 }, { epoch: 4, startOffset: 30 }]);
    c.truncateFromStart(30);
    expect(c.all()).to.deep.equal([{ epoch: 4, startOffset: 30 }]);
  });

  it('round-trips through its checkpoint file and rejects a malformed one', () => {
    const dir = tempDir('sluice-epoch-');
    try {
      const file = path.join(dir, 'leader-epoch-checkpoint');
      const c = new LeaderEpochCache(file);
      c.assign(0, 0);
      c.assign(3, 120);
      c.checkpoint();
      expect(fs.readFileSync(file, 'utf8')).to.equal('0\n2\n0 0\n3 120\n');
      expect(LeaderEpochCache.load(file).all()).to.deep.equal(c.all());
      fs.writeFileSync(file, '0\n2\n3 120\n1 130\n');
      expect(() => LeaderEpochCache.load(file)).to.throw().that.satisfies((e: unknown) => isSluiceError(e, Errors.KAFKA_STORAGE_ERROR));
    } finally {
      removeDir(dir);
    }
  });
});
