// Pure rules of "brokers as observers": who follows the metadata log, and the
// next one-server change towards that set.
import { expect } from 'chai';
import { makeMembership } from '../../src/raft/membership.js';
import {
  METADATA_ENDPOINT, metadataEndpointUrl, metadataFollowers, nextObserverChange, type FollowerRegistration,
} from '../../src/raft-node/observers.js';

const reg = (brokerId: number, ...endpoints: [string, string][]): FollowerRegistration => ({
  brokerId, endpoints: endpoints.map(([name, url]) => ({ name, url })),
});

describe('metadata observers (pure rules)', () => {
  it('reads the CONTROLLER endpoint, normalized, and skips a malformed one', () => {
    expect(METADATA_ENDPOINT).to.equal('CONTROLLER');
    expect(metadataEndpointUrl(reg(4, ['CLIENT', 'ws://h:1'], ['CONTROLLER', 'ws://h:9093/']))).to.equal('ws://h:9093');
    expect(metadataEndpointUrl(reg(4, ['CLIENT', 'ws://h:1']))).to.equal(undefined);
    expect(metadataEndpointUrl(reg(4, ['CONTROLLER', 'http://h:9093']))).to.equal(undefined);
    expect(metadataEndpointUrl(reg(4, ['CONTROLLER', 'ws://h:99999']))).to.equal(undefined);
  });

  it('follower set: registered brokers with the endpoint, minus voters and self', () => {
    const brokers = [
      reg(1, ['CONTROLLER', 'ws://a:1']), // a voter (combined node)
      reg(4, ['CONTROLLER', 'ws://b:4']),
      reg(5, ['CLIENT', 'ws://c:5']), // does not follow the log
      reg(6, ['CONTROLLER', 'ws://d:6']),
      reg(7, ['CONTROLLER', 'nonsense']),
    ];
    expect([...metadataFollowers(brokers, [1, 2, 3])]).to.deep.equal([[4, 'ws://b:4'], [6, 'ws://d:6']]);
    expect([...metadataFollowers(brokers, [1, 2, 3], 6).keys()]).to.deep.equal([4]);
  });

  it('next change: additions first in id order, then removals, never a voter', () => {
    const m = makeMembership([1, 2, 3], [5, 9]);
    expect(nextObserverChange(m, new Set([9, 7, 4, 5]))).to.deep.equal({ type: 'addObserver', node: 4 });
    expect(nextObserverChange(makeMembership([1, 2, 3], [4, 5, 7, 9]), new Set([4, 5, 7]))).to.deep.equal({ type: 'removeObserver', node: 9 });
    expect(nextObserverChange(m, new Map([[5, 'u'], [9, 'v']]))).to.equal(undefined);
    // A wanted node that is a voter is a member already: nothing to add; voters are never removed.
    expect(nextObserverChange(makeMembership([1, 2, 3], []), new Set([2]))).to.equal(undefined);
    expect(nextObserverChange(makeMembership([1, 2, 3], []), new Set())).to.equal(undefined);
  });
});
