// The keyed records of __consumer_offsets: round trips, tombstones through
// the loader's last-value-wins rule, and refusal of malformed bytes.

import { expect } from 'chai';
import { Packr } from 'msgpackr';
import {
  decodeGroupValue, decodeKey, decodeOffsetValue, groupKey, groupValue, offsetKey, offsetValue,
} from '../../src/groups/records.js';
import type { GroupSnapshot } from '../../src/groups/membership/types.js';
import { Errors, isSluiceError } from '../../src/util/errors.js';

const snapshot: GroupSnapshot = {
  protocolType: 'consumer', generationId: 7, protocolName: 'range', leader: 'm1',
  members: [{
    memberId: 'm1', groupInstanceId: 'i1', clientId: 'c', clientHost: '/10.0.0.1', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 30_000,
    protocols: [{ name: 'range', metadata: Buffer.from([1, 2, 3]) }], assignment: Buffer.from([9]),
  }],
};

describe('__consumer_offsets records', () => {
  it('round-trips keys and values', () => {
    expect(decodeKey(offsetKey('g', 'orders', 3))).to.deep.equal({ kind: 'offset', groupId: 'g', topic: 'orders', partition: 3 });
    expect(decodeKey(groupKey('g'))).to.deep.equal({ kind: 'group', groupId: 'g' });
    const c = { offset: 42, leaderEpoch: 2, metadata: 'm', commitTimestampMs: 1_700_000_000_000 };
    expect(decodeOffsetValue(offsetValue(c))).to.deep.equal(c);
    const back = decodeGroupValue(groupValue(snapshot));
    expect(back).to.deep.include({ protocolType: 'consumer', generationId: 7, protocolName: 'range', leader: 'm1' });
    expect(Buffer.from(back.members[0]!.protocols[0]!.metadata)).to.deep.equal(Buffer.from([1, 2, 3]));
    expect(Buffer.from(back.members[0]!.assignment)).to.deep.equal(Buffer.from([9]));
  });

  it('gives equal keys equal bytes (the log is keyed by them)', () => {
    expect(offsetKey('g', 't', 1).equals(offsetKey('g', 't', 1))).to.equal(true);
    expect(offsetKey('g', 't', 1).equals(offsetKey('g', 't', 2))).to.equal(false);
  });

  it('skips unknown key kinds and refuses malformed records', () => {
    const packr = new Packr({ useRecords: false });
    expect(decodeKey(packr.pack([9, 'g']))).to.equal(null);
    const bad = [Buffer.from([0xc1]), packr.pack({ v: 1 }), packr.pack('text')];
    for (const b of bad) expect(() => decodeOffsetValue(b)).to.throw().that.satisfies((e: unknown) => isSluiceError(e, Errors.CORRUPT_MESSAGE));
    expect(() => decodeKey(packr.pack([1, 'g', 't']))).to.throw();
    // A group with members must name a protocol they all support (what restoring it relies on).
    expect(() => decodeGroupValue(groupValue({ ...snapshot, protocolName: 'roundrobin' }))).to.throw();
  });
});
