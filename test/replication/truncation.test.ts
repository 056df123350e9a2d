// Leader-epoch truncation (src/replication/rules/truncation.ts): first the
// pure rule case by case against an in-memory LeaderEpochCache, then the rule
// driven in rounds — as the replica fetcher drives it — over real
// PartitionLogs whose histories diverged, checking that the follower keeps
// exactly the prefix it shares with the leader and, after copying the
// leader's batches from its LEO, holds the leader's log byte for byte.

import { expect } from 'chai';
import fc from 'fast-check';
import * as path from 'node:path';
import { truncationAfterEpochQuery, UNDEFINED_EPOCH, type FollowerLogView } from '../../src/replication/rules/truncation.js';
import { LeaderEpochCache } from '../../src/storage/leader-epoch-cache.js';
import type { EpochEntry } from '../../src/storage/checkpoint.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { ManualClock } from '../../src/util/clock.js';
import { batchesIn, makeBatch, readAllBytes, removeDir, tempDir } from '../storage/log-test-helpers.js';

/** A follower as the rule sees it, backed by the real epoch cache. */
function view(entries: EpochEntry[], logEndOffset: number, highWatermark = 0): FollowerLogView {
  const cache = new LeaderEpochCache(null, entries);
  return { logEndOffset, highWatermark, endOffsetForEpoch: (e) => cache.endOffsetForEpoch(e, logEndOffset) };
}

describe('replication rules: leader-epoch truncation', () => {
  describe('one answer', () => {
    it('equal epochs: cuts where the leader\'s epoch ends, never above the follower\'s LEO', () => {
      const f = view([{ epoch: 0, startOffset: 0 }, { epoch: 2, startOffset: 10 }], 30);
      expect(truncationAfterEpochQuery(f, 2, { leaderEpoch: 2, endOffset: 25 })).to.deep.equal({ truncateTo: 25, done: true });
      expect(truncationAfterEpochQuery(f, 2, { leaderEpoch: 2, endOffset: 40 })).to.deep.equal({ truncateTo: 30, done: true });
    });

    it('leader epoch smaller than asked, which the follower has: cuts at the earlier of both ends of it', () => {
      // Follower: epoch 1 from 0, epoch 3 from 40; the leader never had 3.
      const f = view([{ epoch: 1, startOffset: 0 }, { epoch: 3, startOffset: 40 }], 60);
      expect(truncationAfterEpochQuery(f, 3, { leaderEpoch: 1, endOffset: 30 })).to.deep.equal({ truncateTo: 30, done: true });
      // The leader has more of epoch 1 than the follower: the follower's epoch-3 tail still goes.
      expect(truncationAfterEpochQuery(f, 3, { leaderEpoch: 1, endOffset: 50 })).to.deep.equal({ truncateTo: 40, done: true });
    });

    it('leader epoch smaller than asked, which the follower lacks: cuts its newer epochs and asks again', () => {
      const f = view([{ epoch: 1, startOffset: 0 }, { epoch: 4, startOffset: 40 }], 60);
      const first = truncationAfterEpochQuery(f, 4, { leaderEpoch: 2, endOffset: 50 });
      expect(first).to.deep.equal({ truncateTo: 40, done: false });
      // Second round, after truncating: the follower now asks about epoch 1.
      const g = view([{ epoch: 1, startOffset: 0 }], 40);
      expect(truncationAfterEpochQuery(g, 1, { leaderEpoch: 1, endOffset: 35 })).to.deep.equal({ truncateTo: 35, done: true });
    });

    it('needs a second round when the follower\'s older epoch also ends differently', () => {
      // Follower 1@0, 3@20, 5@40 (LEO 60); leader 1@0, 3@20, 4@30 (LEO 50).
      const f = view([{ epoch: 1, startOffset: 0 }, { epoch: 3, startOffset: 20 }, { epoch: 5, startOffset: 40 }], 60);
      const first = truncationAfterEpochQuery(f, 5, { leaderEpoch: 4, endOffset: 50 });
      expect(first).to.deep.equal({ truncateTo: 40, done: false });
      const g = view([{ epoch: 1, startOffset: 0 }, { epoch: 3, startOffset: 20 }], 40);
      expect(truncationAfterEpochQuery(g, 3, { leaderEpoch: 3, endOffset: 30 })).to.deep.equal({ truncateTo: 30, done: true });
    });

    it('unknown epoch: falls back to the high watermark', () => {
      const f = view([{ epoch: 7, startOffset: 0 }], 30, 12);
      expect(truncationAfterEpochQuery(f, 7, { leaderEpoch: UNDEFINED_EPOCH, endOffset: -1 })).to.deep.equal({ truncateTo: 12, done: true });
      expect(truncationAfterEpochQuery(f, 7, { leaderEpoch: 7, endOffset: -1 }), 'no end offset either').to.deep.equal({ truncateTo: 12, done: true });
    });

    it('a follower with no end for the leader\'s epoch falls back to its high watermark and asks again', () => {
      const f: FollowerLogView = { logEndOffset: 30, highWatermark: 8, endOffsetForEpoch: () => ({ epoch: UNDEFINED_EPOCH, endOffset: -1 }) };
      expect(truncationAfterEpochQuery(f, 5, { leaderEpoch: 3, endOffset: 20 })).to.deep.equal({ truncateTo: 8, done: false });
    });

    it('never truncates above the LEO, nor keeps offsets the leader\'s answer excludes', () => {
      const scenario = fc.record({
        starts: fc.uniqueArray(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 6 }),
        epochGaps: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 6, maxLength: 6 }),
        extra: fc.integer({ min: 1, max: 50 }),
        hwFraction: fc.double({ min: 0, max: 1, noNaN: true }),
        answerEpochBack: fc.integer({ min: -1, max: 8 }),
        answerEnd: fc.integer({ min: -1, max: 200 }),
      });
      fc.assert(fc.property(scenario, (s) => {
        const starts = [...s.starts].sort((a, b) => a - b);
        let epoch = 0;
        const entries = starts.map((startOffset, i) => ({ epoch: (epoch += s.epochGaps[i]!), startOffset }));
        const leo = starts[starts.length - 1]! + s.extra;
        const hw = Math.floor(leo * s.hwFraction);
        const asked = entries[entries.length - 1]!.epoch;
        const leaderEpoch = s.answerEpochBack < 0 ? UNDEFINED_EPOCH : Math.max(0, asked - s.answerEpochBack);
        const d = truncationAfterEpochQuery(view(entries, leo, hw), asked, { leaderEpoch, endOffset: s.answerEnd });
        expect(d.truncateTo).to.be.within(0, leo);
        if (leaderEpoch === UNDEFINED_EPOCH || s.answerEnd < 0) expect(d.truncateTo).to.equal(hw);
        else expect(d.truncateTo).to.be.at.most(s.answerEnd);
      }), { seed: 5101, numRuns: 500 });
    });
  });

  describe('rounds over real logs', () => {
    let dirs: string[] = [];
    let clock: ManualClock;
    let fillCounter = 0;

    beforeEach(() => {
      dirs = [];
      clock = new ManualClock();
      fillCounter = 0;
    });
    afterEach(() => {
      for (const d of dirs) removeDir(d);
    });

    function openLog(name: string): PartitionLog {
      const dir = tempDir('sluice-trunc-');
      dirs.push(dir);
      // Small segments, so truncation also crosses segment boundaries.
      return PartitionLog.open({ dir: path.join(dir, name), config: { segmentBytes: 700, indexIntervalBytes: 100 }, clock });
    }

    /** `count` batches written by the leader of `epoch`, each unlike any other batch of the test. */
    function lead(log: PartitionLog, epoch: number, count: number, recordsPerBatch = 2): void {
      log.assignLeaderEpoch(epoch);
      for (let i = 0; i < count; i++) {
        const n = fillCounter++;
        log.append(makeBatch({ records: recordsPerBatch, fill: n & 0xff, timestamp: 10_000 + n }), { leaderEpoch: epoch });
      }
    }

    /** End offset of the batches both logs hold identically, from the start. */
    function commonPrefixEnd(a: PartitionLog, b: PartitionLog): number {
      const ab = readAllBytes(a);
      const bb = readAllBytes(b);
      let end = 0;
      let pos = 0;
      for (const batch of batchesIn(ab)) {
        const other = bb.subarray(pos, pos + batch.sizeBytes);
        if (!other.equals(ab.subarray(pos, pos + batch.sizeBytes))) break;
        end = batch.lastOffset + 1;
        pos += batch.sizeBytes;
      }
      return end;
    }

    /**
     * What the fetcher does on following `leader`: OffsetForLeaderEpoch about
     * its latest epoch, truncate, repeat until done. Returns the rounds taken.
     */
    function truncateAgainst(follower: PartitionLog, leader: PartitionLog): number {
      const roundsMax = follower.epochEntries().length + 1;
      for (let round = 1; round <= roundsMax; round++) {
        const asked = follower.latestEpoch();
        if (asked < 0) return round - 1;
        const answer = leader.endOffsetForEpoch(asked);
        const d = truncationAfterEpochQuery(
          { logEndOffset: follower.logEndOffset, highWatermark: follower.highWatermark, endOffsetForEpoch: (e) => follower.endOffsetForEpoch(e) },
          asked, { leaderEpoch: answer.epoch, endOffset: answer.endOffset },
        );
        follower.truncateTo(d.truncateTo);
        if (d.done) return round;
      }
      throw new Error(`truncation did not finish within ${roundsMax} rounds`);
    }

    /** Copies up to `batchesMax` of the leader's batches from the follower's LEO, as fetches would. */
    function copyFrom(follower: PartitionLog, leader: PartitionLog, batchesMax = Infinity): void {
      for (let n = 0; n < batchesMax && follower.logEndOffset < leader.logEndOffset; n++) {
        const r = leader.read(follower.logEndOffset, 1); // always one whole batch
        expect(r.firstOffset, 'the follower ends on a batch boundary of the leader').to.equal(follower.logEndOffset);
        follower.appendAsFollower(r.records);
      }
    }

    function follow(follower: PartitionLog, leader: PartitionLog, batchesMax = Infinity): number {
      const shared = commonPrefixEnd(follower, leader);
      const rounds = truncateAgainst(follower, leader);
      expect(follower.logEndOffset, 'truncation keeps exactly the shared prefix').to.equal(shared);
      copyFrom(follower, leader, batchesMax);
      const fb = readAllBytes(follower);
      expect(fb.equals(readAllBytes(leader).subarray(0, fb.length)), 'the follower is a prefix of the leader').to.equal(true);
      return rounds;
    }

    function expectSameLog(follower: PartitionLog, leader: PartitionLog): void {
      expect(follower.logEndOffset).to.equal(leader.logEndOffset);
      const fb = readAllBytes(follower);
      const lb = readAllBytes(leader);
      expect(batchesIn(fb)).to.deep.equal(batchesIn(lb));
      expect(fb.equals(lb), 'same bytes').to.equal(true);
      // A leader's epoch with no batch yet starts at its LEO and is in no log.
      expect(follower.epochEntries()).to.deep.equal(leader.epochEntries().filter((e) => e.startOffset < leader.logEndOffset));
    }

    it('drops the tail an old leader wrote in its own epoch and takes the new leader\'s', () => {
      const leader = openLog('t-0');
      const follower = openLog('t-0');
      lead(leader, 0, 3);
      lead(leader, 1, 2);
      copyFrom(follower, leader);
      // The follower led epoch 2 and wrote records nobody else got...
      lead(follower, 2, 3);
      // ...while the leader of epoch 3 wrote others after the shared prefix.
      const shared = leader.logEndOffset;
      lead(leader, 3, 4);
      expect(follower.logEndOffset).to.be.greaterThan(shared);
      expect(follow(follower, leader)).to.equal(1);
      expectSameLog(follower, leader);
      expect(batchesIn(readAllBytes(follower)).map((b) => b.leaderEpoch)).to.deep.equal([0, 0, 0, 1, 1, 3, 3, 3, 3]);
    });

    it('takes several rounds when the follower\'s epochs are all unknown to the leader', () => {
      const leader = openLog('t-0');
      const follower = openLog('t-0');
      lead(leader, 1, 2);
      copyFrom(follower, leader, 1); // the follower got only the first batch of epoch 1
      lead(leader, 2, 1);
      // Unclean: the follower leads epochs 3 and 4, which the leader never sees;
      // it never had the leader's epoch 2, so the first answer cannot settle it.
      lead(follower, 3, 2);
      lead(follower, 4, 2);
      lead(leader, 5, 3);
      expect(follow(follower, leader)).to.equal(2);
      expectSameLog(follower, leader);
    });

    it('asks again when it holds more of a third leader\'s epoch than the new leader does', () => {
      const old = openLog('t-0');
      const leader = openLog('t-0');
      const follower = openLog('t-0');
      lead(old, 1, 2);
      copyFrom(leader, old, 1);
      copyFrom(follower, old, 2);
      lead(leader, 2, 1); // overwrites the second epoch-1 batch the follower holds
      lead(follower, 3, 1);
      lead(leader, 4, 2);
      // Round 1 (asks 3, told 2 ends at 4) keeps the follower's second epoch-1
      // batch; only round 2 (asks 1, told it ends at 2) removes it.
      expect(follow(follower, leader)).to.equal(2);
      expectSameLog(follower, leader);
    });

    it('a fresh follower needs no truncation and copies everything', () => {
      const leader = openLog('t-0');
      const follower = openLog('t-0');
      lead(leader, 0, 2);
      lead(leader, 3, 3);
      expect(follow(follower, leader)).to.equal(0);
      expectSameLog(follower, leader);
    });

    /** One term: a leader writes, and the other replicas follow it for a while (or are cut off: -1). */
    interface Term {
      leader: number;
      batches: number;
      recordsPerBatch: number;
      copies: number[];
    }
    const termArb: fc.Arbitrary<Term> = fc.record({
      leader: fc.integer({ min: 0, max: 2 }),
      batches: fc.integer({ min: 0, max: 3 }),
      recordsPerBatch: fc.integer({ min: 1, max: 3 }),
      copies: fc.array(fc.integer({ min: -1, max: 4 }), { minLength: 3, maxLength: 3 }),
    });

    it('any history of leaders ends with every follower equal to the last leader', function () {
      this.timeout(60_000); // real files (fsyncs): seconds
      fc.assert(fc.property(fc.array(termArb, { minLength: 1, maxLength: 10 }), (terms) => {
        const runDirs = dirs.length;
        const logs = [openLog('p-0'), openLog('p-0'), openLog('p-0')];
        try {
          terms.forEach((term, epoch) => {
            const leader = logs[term.leader]!;
            lead(leader, epoch, term.batches, term.recordsPerBatch);
            logs.forEach((log, i) => {
              if (i !== term.leader && term.copies[i]! >= 0) follow(log, leader, term.copies[i]!);
            });
          });
          const last = logs[terms[terms.length - 1]!.leader]!;
          for (const log of logs) {
            if (log === last) continue;
            follow(log, last);
            expectSameLog(log, last);
          }
        } finally {
          for (const log of logs) log.close();
          for (const d of dirs.splice(runDirs)) removeDir(d);
        }
      }), { seed: 20240, numRuns: 60 });
    });
  });
});
