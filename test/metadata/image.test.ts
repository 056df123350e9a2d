import { expect } from 'chai';
import { MetadataDelta, imageFromRecords } from '../../src/metadata/delta.js';
import { MetadataImage } from '../../src/metadata/image.js';
import type { MetadataRecord } from '../../src/metadata/records.js';
import { decodeMetadataRecord, decodeMetadataRecords, encodeMetadataRecord, encodeMetadataRecords } from '../../src/metadata/codec.js';
import { AssertionError } from '../../src/util/assert.js';
import { Errors, isSluiceError } from '../../src/util/errors.js';

const broker = (id: number, fenced = true): MetadataRecord => ({
  type: 'registerBroker', v: 1, brokerId: id, incarnationId: `inc-${id}`, brokerEpoch: id * 10,
  endpoints: [{ name: 'CLIENT', url: `ws://127.0.0.1:${9000 + id}` }], rack: null, fenced,
});

const history: MetadataRecord[] = [
  { type: 'cluster', v: 1, clusterId: 'c1', metadataVersion: 1 },
  broker(1), broker(2), broker(3),
  { type: 'brokerRegistrationChange', v: 1, brokerId: 1, brokerEpoch: 10, fenced: false },
  { type: 'brokerRegistrationChange', v: 1, brokerId: 2, brokerEpoch: 20, fenced: false },
  { type: 'topic', v: 1, name: 'orders', topicId: 'T1' },
  { type: 'partition', v: 1, topicId: 'T1', partition: 0, replicas: [1, 2, 3], isr: [1, 2, 3], leader: 1, leaderEpoch: 0, partitionEpoch: 0, addingReplicas: [], removingReplicas: [] },
  { type: 'partition', v: 1, topicId: 'T1', partition: 1, replicas: [2, 3, 1], isr: [2, 3, 1], leader: 2, leaderEpoch: 0, partitionEpoch: 0, addingReplicas: [], removingReplicas: [] },
  { type: 'topic', v: 1, name: 'logs', topicId: 'T2' },
  { type: 'partition', v: 1, topicId: 'T2', partition: 0, replicas: [3], isr: [3], leader: 3, leaderEpoch: 0, partitionEpoch: 0, addingReplicas: [], removingReplicas: [] },
  { type: 'config', v: 1, resourceType: 'topic', resourceName: 'orders', name: 'retention.ms', value: '1000' },
  { type: 'partitionChange', v: 1, topicId: 'T1', partition: 0, isr: [1, 2] },
  { type: 'partitionChange', v: 1, topicId: 'T1', partition: 0, leader: 2, isr: [2] },
  { type: 'producerIds', v: 1, brokerId: 1, brokerEpoch: 10, nextProducerId: 1000 },
];

function replayAll(records: readonly MetadataRecord[], base = MetadataImage.EMPTY, start = 1): MetadataImage {
  const delta = new MetadataDelta(base);
  records.forEach((r, i) => delta.replay(r, start + i));
  return delta.apply();
}

describe('MetadataImage and MetadataDelta', () => {
  it('replays records into an image', () => {
    const img = replayAll(history);
    expect(img.offset).to.equal(history.length);
    expect(img.cluster?.clusterId).to.equal('c1');
    expect(img.unfencedBrokers().map((b) => b.brokerId)).to.deep.equal([1, 2]);
    const p0 = img.partition('orders', 0)!;
    expect(p0.leader).to.equal(2);
    expect(p0.isr).to.deep.equal([2]);
    expect(p0.leaderEpoch, 'leader epoch bumps only on leader change').to.equal(1);
    expect(p0.partitionEpoch, 'partition epoch bumps on every change').to.equal(2);
    expect(img.topicsById.get('T1')).to.equal(img.topic('orders'));
    expect(img.config('topic', 'orders').get('retention.ms')).to.equal('1000');
    expect(img.nextProducerId).to.equal(1000);
  });

  it('shares untouched topics with the previous image', () => {
    const first = replayAll(history);
    const delta = new MetadataDelta(first);
    delta.replay({ type: 'partitionChange', v: 1, topicId: 'T1', partition: 1, isr: [2, 3] }, first.offset + 1);
    const second = delta.apply();
    expect(second.topic('logs')).to.equal(first.topic('logs'));
    expect(second.topic('orders')).to.not.equal(first.topic('orders'));
    expect(first.partition('orders', 1)!.isr, 'the base image is unchanged').to.deep.equal([2, 3, 1]);
    expect([...delta.changes().topics]).to.deep.equal(['T1']);
  });

  it('removes topics and their configs', () => {
    const first = replayAll(history);
    const second = replayAll([{ type: 'removeTopic', v: 1, topicId: 'T1' }], first, first.offset + 1);
    expect(second.topic('orders')).to.equal(undefined);
    expect(second.topicsById.has('T1')).to.equal(false);
    expect(second.config('topic', 'orders').size).to.equal(0);
    expect(second.topic('logs')).to.equal(first.topic('logs'));
  });

  it('a topic re-created under a removed name keeps its new identity', () => {
    const first = replayAll(history);
    const recreate: MetadataRecord[] = [
      { type: 'topic', v: 1, name: 'orders2', topicId: 'T3' },
      { type: 'partitionChange', v: 1, topicId: 'T1', partition: 1, isr: [2, 3] },
      { type: 'removeTopic', v: 1, topicId: 'T1' },
      { type: 'topic', v: 1, name: 'orders', topicId: 'T4' },
      { type: 'partition', v: 1, topicId: 'T4', partition: 0, replicas: [1], isr: [1], leader: 1, leaderEpoch: 0, partitionEpoch: 0, addingReplicas: [], removingReplicas: [] },
    ];
    const second = replayAll(recreate, first, first.offset + 1);
    expect(second.topic('orders')?.topicId).to.equal('T4');
    expect(second.topicsById.has('T1')).to.equal(false);
    expect(second.topic('orders2')?.topicId).to.equal('T3');
  });

  it('snapshot records rebuild an identical image', () => {
    const img = replayAll(history);
    const again = imageFromRecords(decodeMetadataRecords(encodeMetadataRecords(img.toRecords())), img.offset);
    expect(again.toRecords()).to.deep.equal(img.toRecords());
    expect(again.offset).to.equal(img.offset);
    expect(again.partition('orders', 0)).to.deep.equal(img.partition('orders', 0));
    expect(again.brokers.get(1)).to.deep.equal(img.brokers.get(1));
  });

  it('asserts on records a correct controller never emits', () => {
    expect(() => replayAll([{ type: 'partitionChange', v: 1, topicId: 'nope', partition: 0, isr: [1] }])).to.throw(AssertionError);
    expect(() => replayAll([...history.slice(0, 8), { type: 'partitionChange', v: 1, topicId: 'T1', partition: 0, leader: 9 }])).to.throw(AssertionError, /not in ISR/);
    const delta = new MetadataDelta(MetadataImage.EMPTY);
    delta.replay(history[0]!, 5);
    expect(() => delta.replay(history[1]!, 5)).to.throw(AssertionError, /out of order/);
  });
});

describe('metadata record codec', () => {
  it('round-trips every record type', () => {
    for (const r of history) expect(decodeMetadataRecord(encodeMetadataRecord(r))).to.deep.equal(r);
  });

  it('refuses garbage, unknown types, versions and ill-typed fields with CORRUPT_MESSAGE', () => {
    const bad: unknown[] = [
      Buffer.from([0xc1]),
      encodeMetadataRecord({ ...history[6]!, type: 'bogus' } as never),
      encodeMetadataRecord({ ...history[6]!, v: 2 } as never),
      encodeMetadataRecord({ type: 'topic', v: 1, name: 5, topicId: 'x' } as never),
      encodeMetadataRecord({ type: 'topic', v: 1, name: 'a' } as never),
      encodeMetadataRecord({ type: 'topic', v: 1, name: 'a', topicId: 'x', extra: 1 } as never),
      encodeMetadataRecord({ ...history[7]!, replicas: [1, 'two'] } as never),
    ];
    for (const bytes of bad) {
      try {
        decodeMetadataRecord(bytes as Buffer);
        expect.fail('decoded a bad record');
      } catch (err) {
        expect(isSluiceError(err, Errors.CORRUPT_MESSAGE), String(err)).to.equal(true);
      }
    }
  });
});
