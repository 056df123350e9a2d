import { expect } from 'chai';
import { MetadataStateMachine } from '../../src/metadata/state-machine.js';
import { encodeMetadataRecords } from '../../src/metadata/codec.js';
import { EntryType, type Entry } from '../../src/raft/types.js';
import type { MetadataRecord } from '../../src/metadata/records.js';
import { Errors, isSluiceError } from '../../src/util/errors.js';

const entry = (index: number, records: MetadataRecord[] | null, type = EntryType.Normal): Entry => ({
  term: 1, index, type, data: records ? encodeMetadataRecords(records) : new Uint8Array(0),
});

const cmd1: MetadataRecord[] = [
  { type: 'topic', v: 1, name: 'a', topicId: 'A' },
  { type: 'partition', v: 1, topicId: 'A', partition: 0, replicas: [1], isr: [1], leader: 1, leaderEpoch: 0, partitionEpoch: 0, addingReplicas: [], removingReplicas: [] },
];
const cmd2: MetadataRecord[] = [{ type: 'partitionChange', v: 1, topicId: 'A', partition: 0, leader: -1, isr: [1] }];

describe('metadata state machine', () => {
  it('applies entries atomically, publishes images with changes, skips no-ops', () => {
    const sm = new MetadataStateMachine();
    const seen: Array<[number, string[] | null]> = [];
    sm.subscribe((img, changes) => seen.push([img.offset, changes ? [...changes.topics] : null]));
    sm.apply(entry(1, null, EntryType.NoOp));
    sm.apply(entry(2, cmd1));
    sm.apply(entry(3, cmd2));
    expect(sm.appliedIndex).to.equal(3);
    expect(sm.image.offset).to.equal(3);
    expect(sm.image.partition('a', 0)!.leaderEpoch).to.equal(1);
    expect(seen).to.deep.equal([[2, ['A']], [3, ['A']]]);
  });

  it('snapshots and restores an identical image', () => {
    const sm = new MetadataStateMachine();
    sm.apply(entry(1, cmd1));
    sm.apply(entry(2, cmd2));
    sm.apply(entry(3, null, EntryType.NoOp));
    const data = sm.snapshot();
    const other = new MetadataStateMachine();
    let restored = false;
    other.subscribe((_img, changes) => {
      restored = changes === null;
    });
    other.restore({ meta: { index: 3, term: 1, membership: { voters: [1], observers: [] } }, data });
    expect(restored).to.equal(true);
    expect(other.appliedIndex).to.equal(3);
    expect(other.image.toRecords()).to.deep.equal(sm.image.toRecords());
    expect(other.image.offset).to.equal(2);
    other.apply(entry(4, [{ type: 'removeTopic', v: 1, topicId: 'A' }]));
    expect(other.image.topic('a')).to.equal(undefined);
  });

  it('refuses a corrupt entry or snapshot with CORRUPT_MESSAGE', () => {
    const sm = new MetadataStateMachine();
    const bad: Entry = { term: 1, index: 1, type: EntryType.Normal, data: Buffer.from([0x92, 0x01]) };
    expect(() => sm.apply(bad)).to.throw().that.satisfies((e: unknown) => isSluiceError(e, Errors.CORRUPT_MESSAGE));
    expect(() => sm.restore({ meta: { index: 1, term: 1, membership: { voters: [1], observers: [] } }, data: Buffer.from([0xc1]) }))
      .to.throw().that.satisfies((e: unknown) => isSluiceError(e, Errors.CORRUPT_MESSAGE));
  });
});
