import { expect } from 'chai';
import { missingNodeFlags, serverNodeFlags, v8PoolSizeFor } from '../../src/server/runtime-flags.js';

describe('server runtime flags', () => {
  it('leaves one core to the main threads: cores - 1 V8 background threads, at least 1 and at most Node\'s 4', () => {
    expect([1, 2, 3, 4, 5, 64].map(v8PoolSizeFor)).to.deep.equal([1, 1, 2, 3, 4, 4]);
    expect(serverNodeFlags(2)).to.deep.equal(['--initial-old-space-size=128', '--v8-pool-size=1']);
  });

  it('names the recommended flags a process was started without, whatever values the operator chose', () => {
    const rec = serverNodeFlags(2);
    expect(missingNodeFlags([], rec)).to.deep.equal(rec);
    expect(missingNodeFlags(['--v8-pool-size=3', '--inspect'], rec)).to.deep.equal(['--initial-old-space-size=128']);
    expect(missingNodeFlags(['--initial-old-space-size=512', '--v8-pool-size=1'], rec)).to.deep.equal([]);
  });
});
