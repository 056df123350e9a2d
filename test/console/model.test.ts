// The console's view models (src/console/page/model.ts): pure functions, so
// the rules the page shows by are checked here without a browser.
import { expect } from 'chai';
import {
  dialable, groupRow, lagSeries, sampleOf, tailStart, throughputSeries, topicRows, type Sample,
} from '../../src/console/page/model.js';
import type { BrokerLogDirs, GroupDescription, TopicDescription } from '../../src/client/index.js';

const replica = (topic: string, partition: number, hw: number, logStart: number, sizeBytes: number) => ({
  topic, partition, errorCode: 0, errorMessage: null, sizeBytes, segments: 1, logStartOffset: logStart, logEndOffset: hw, highWatermark: hw,
  cleanupPolicy: 'delete', dirtyRatio: 0, firstDirtyOffset: 0, cleanableBytes: 0, lastCleanMs: -1, cleaning: false, uncleanable: null,
});

const topic: TopicDescription = {
  name: 't', topicId: 'id',
  partitions: [
    { partition: 0, leader: 1, leaderEpoch: 0, replicas: [1, 2], isr: [1, 2], offlineReplicas: [], errorCode: 0 },
    { partition: 1, leader: 2, leaderEpoch: 0, replicas: [2, 1], isr: [2], offlineReplicas: [], errorCode: 0 },
    { partition: 2, leader: -1, leaderEpoch: 0, replicas: [3], isr: [], offlineReplicas: [3], errorCode: 5 },
  ],
};

describe('console view models', () => {
  it('takes log start, high watermark and size from each partition\'s leader, and flags under-replicated and offline partitions', () => {
    const dirs: BrokerLogDirs[] = [
      // The follower's high watermark of p0 lags the leader's: the leader's counts.
      { brokerId: 1, logDir: '/d1', error: null, replicas: [replica('t', 0, 10, 2, 100), replica('t', 1, 3, 0, 30)] },
      { brokerId: 2, logDir: '/d2', error: null, replicas: [replica('t', 0, 8, 2, 90), replica('t', 1, 5, 1, 50)] },
    ];
    const [row] = topicRows([topic], dirs);
    expect(row!.partitions.map((p) => [p.highWatermark, p.logStartOffset, p.sizeBytes])).to.deep.equal([[10, 2, 100], [5, 1, 50], [null, null, null]]);
    expect(row!.partitions.map((p) => [p.underReplicated, p.offline])).to.deep.equal([[false, false], [true, false], [true, true]]);
    expect([row!.underReplicated, row!.offline, row!.records, row!.sizeBytes]).to.deep.equal([2, 1, 12, 150]);
  });

  it('sums a group\'s known lags, and charts records/s from high-watermark growth (never negative)', () => {
    const g: GroupDescription = {
      groupId: 'g', state: 'Stable', protocolType: 'consumer', protocol: 'range', coordinator: 1,
      members: [{ memberId: 'm', groupInstanceId: null, clientId: 'c', clientHost: 'h', subscription: ['t'], assignment: [{ topic: 't', partitions: [1, 0] }] }],
      offsets: [
        { topic: 't', partition: 0, committedOffset: 4, metadata: null, logEndOffset: 10, lag: 6 },
        { topic: 't', partition: 1, committedOffset: -1, metadata: null, logEndOffset: 3, lag: null },
      ],
    };
    const row = groupRow(g);
    expect([row.totalLag, row.members[0]!.assignment]).to.deep.equal([6, ['t:0', 't:1']]);
    const at = (ms: number, hw: number, lag: number): Sample => ({ atMs: ms, highWatermarks: new Map([['t', hw]]), lags: new Map([['g', lag]]) });
    const samples = [at(0, 100, 6), at(2000, 140, 4), at(4000, 120, 9)];
    expect(throughputSeries(samples)).to.deep.equal([{ name: 't', points: [[-2, 20], [0, 0]] }]);
    expect(lagSeries(samples)).to.deep.equal([{ name: 'g', points: [[-4, 6], [-2, 4], [0, 9]] }]);
    const one = { ...topic, partitions: topic.partitions.slice(0, 1) };
    const dirs: BrokerLogDirs[] = [{ brokerId: 1, logDir: '/d', error: null, replicas: [replica('__consumer_offsets', 0, 7, 0, 1), replica('t', 0, 9, 0, 1)] }];
    const s = sampleOf(5, topicRows([{ ...one, name: '__consumer_offsets' }, one], dirs), [row]);
    expect([...s.highWatermarks]).to.deep.equal([['t', 9]]);
    expect(s.lags.get('g')).to.equal(6);
  });

  it('starts a tail a few records back (never below log start) and dials wildcard hosts at the page\'s host', () => {
    expect(tailStart({ logStartOffset: 0, highWatermark: 50 }, 20)).to.equal(30);
    expect(tailStart({ logStartOffset: 40, highWatermark: 50 }, 20)).to.equal(40);
    expect(tailStart({ logStartOffset: null, highWatermark: null }, 20)).to.equal(0);
    expect(dialable('ws://0.0.0.0:9092', 'example.org')).to.equal('ws://example.org:9092');
    expect(dialable('ws://[::]:9092', '[::1]')).to.equal('ws://[::1]:9092');
    expect(dialable('ws://10.0.0.1:9092', 'example.org')).to.equal('ws://10.0.0.1:9092');
  });
});
