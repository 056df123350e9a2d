// The failover bench's pure part (bench/failover-analysis.ts, issue 19): on
// values, no process — percentiles, the Kafka failover driver's lines, the
// choice of the new leader's first acknowledgement by leader epoch, and the
// acknowledged writes missing from a read-back.
import { expect } from 'chai';
import {
  epochAt, firstAckByNewLeader, lostWrites, parseFailoverLine, quantile, type KafkaAck,
} from '../../bench/failover-analysis.js';

describe('bench failover analysis', () => {
  it('takes nearest-rank percentiles, rounded, and 0 of nothing', () => {
    const s = [5, 1, 4, 2, 3];
    expect(quantile(s, 0.5)).to.equal(3);
    expect(quantile(s, 0.99)).to.equal(5);
    expect(quantile(s, 0)).to.equal(1);
    expect(quantile([1.4, 1.6], 0.99)).to.equal(2);
    expect(quantile([], 0.5)).to.equal(0);
    const twenty = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(quantile(twenty, 0.5)).to.equal(10);
    expect(quantile(twenty, 0.99)).to.equal(20);
  });

  it('reads the failover driver\'s lines and refuses malformed ones', () => {
    expect(parseFailoverLine('{"event":"ack","atMs":1700000000123.5,"seq":7,"offset":6}')).to.deep.equal({ event: 'ack', atMs: 1700000000123.5, seq: 7, offset: 6 });
    expect(parseFailoverLine('{"event":"started","atMs":5}')).to.deep.equal({ event: 'started', atMs: 5 });
    expect(parseFailoverLine('{"event":"send-error","atMs":5,"seq":3,"message":"boom"}')).to.deep.equal({ event: 'send-error', atMs: 5, seq: 3, message: 'boom' });
    expect(parseFailoverLine('{"event":"error","message":"x"}')).to.deep.equal({ event: 'error', message: 'x' });
    const result = '{"event":"result","sent":10,"acked":9,"failed":1,"records":9,"lost":0,"lostSample":[],"duplicates":0,"epochs":[[0,0],[5,1]]}';
    expect(parseFailoverLine(result)).to.deep.equal({
      event: 'result', sent: 10, acked: 9, failed: 1, records: 9, lost: 0, lostSample: [], duplicates: 0, epochs: [[0, 0], [5, 1]],
    });
    expect(parseFailoverLine('{"event":"ack","atMs":1,"seq":2}'), 'no offset').to.equal(null);
    expect(parseFailoverLine('{"event":"ack","atMs":"1","seq":2,"offset":3}'), 'a string time').to.equal(null);
    expect(parseFailoverLine(result.replace('[[0,0],[5,1]]', '[[0]]')), 'a bad epoch pair').to.equal(null);
    expect(parseFailoverLine('{"event":"ack","atMs":1,')).to.equal(null);
    expect(parseFailoverLine('[2026-12-07 06:00:00,000] WARN [Producer clientId=producer-1] Connection to node 1 could not be established')).to.equal(null);
    expect(parseFailoverLine('{"event":"progress","done":1}')).to.equal(null);
  });

  it('finds the leader epoch of an offset from the epoch changes', () => {
    const epochs = [[0, 0], [100, 1], [250, 3]] as const;
    expect(epochAt(epochs, 0)).to.equal(0);
    expect(epochAt(epochs, 99)).to.equal(0);
    expect(epochAt(epochs, 100)).to.equal(1);
    expect(epochAt(epochs, 249)).to.equal(1);
    expect(epochAt(epochs, 10_000)).to.equal(3);
    expect(epochAt([[5, 2]], 4)).to.equal(-1);
    expect(epochAt([], 0)).to.equal(-1);
  });

  describe('the new leader\'s first acknowledgement', () => {
    const epochs = [[0, 0], [100, 1]] as const;
    const ack = (atMs: number, offset: number): KafkaAck => ({ atMs, seq: offset, offset });

    it('is the earliest acknowledgement after the kill in a later epoch than the last one before it', () => {
      const acks = [ack(900, 98), ack(990, 99), ack(10_200, 101), ack(10_100, 100), ack(10_300, 102)];
      const first = firstAckByNewLeader(acks, 1_000, epochs);
      expect(first).to.deep.equal({ ack: ack(10_100, 100), epoch: 1, preKillEpoch: 0 });
    });

    it('skips an old-epoch acknowledgement that reached the client just after the kill', () => {
      // The old leader answered offset 99 before it died; the client saw it 2 ms after the kill.
      const acks = [ack(990, 98), ack(1_002, 99), ack(9_500, 100)];
      expect(firstAckByNewLeader(acks, 1_000, epochs)?.ack).to.deep.equal(ack(9_500, 100));
    });

    it('is undefined without an acknowledgement before the kill, or without a later epoch', () => {
      expect(firstAckByNewLeader([ack(2_000, 100)], 1_000, epochs)).to.equal(undefined);
      expect(firstAckByNewLeader([ack(900, 98), ack(1_500, 99)], 1_000, epochs)).to.equal(undefined);
      expect(firstAckByNewLeader([ack(900, 98), ack(1_500, 99)], 1_000, [[0, 0]])).to.equal(undefined);
    });

    it('compares with the epoch of the highest offset acknowledged before the kill, not the first', () => {
      // Leadership had already moved once (epoch 1 from offset 100) before this kill.
      const acks = [ack(100, 50), ack(900, 150), ack(5_000, 160), ack(6_000, 200)];
      const first = firstAckByNewLeader(acks, 1_000, [[0, 0], [100, 1], [200, 2]]);
      expect(first).to.deep.equal({ ack: ack(6_000, 200), epoch: 2, preKillEpoch: 1 });
    });
  });

  it('counts the acknowledged sequence numbers missing from a read-back', () => {
    const found = new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14]);
    expect(lostWrites([{ from: 0, count: 10 }], found)).to.deep.equal({ acked: 10, lost: 0, sample: [] });
    expect(lostWrites([{ from: 0, count: 5 }, { from: 10, count: 5 }], found)).to.deep.equal({ acked: 10, lost: 2, sample: [10, 11] });
    expect(lostWrites([{ from: 20, count: 5 }], found, 3)).to.deep.equal({ acked: 5, lost: 5, sample: [20, 21, 22] });
    expect(lostWrites([], found)).to.deep.equal({ acked: 0, lost: 0, sample: [] });
  });
});
