import { expect } from 'chai';
import { serverNodeFlags, v8PoolSizeFor } from '../../src/server/runtime-flags.js';

describe('server runtime flags', () => {
  it('leaves one core to the main threads: cores - 1 V8 background threads, at least 1 and at most Node\'s 4', () => {
    expect([1, 2, 3, 4, 5, 64].map(v8PoolSizeFor)).to.deep.equal([1, 1, 2, 3, 4, 4]);
    expect(serverNodeFlags(2)).to.deep.equal(['--v8-pool-size=1']);
  });
});
