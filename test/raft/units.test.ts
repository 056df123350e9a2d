// Unit tests of the core's building blocks: the log, flow control, the
// ReadIndex tracker and membership arithmetic.
import { expect } from 'chai';
import {
  applyConfChange, checkConfChange, decodeConfChange, encodeConfChange, quorumSize, tryDecodeConfChange,
} from '../../src/raft/membership.js';
import { Inflights, Progress, quorumIndex } from '../../src/raft/progress.js';
import { RaftLog } from '../../src/raft/raft-log.js';
import { ReadIndexTracker } from '../../src/raft/read-index.js';
import { EntryType, type ConfChange } from '../../src/raft/types.js';
import { AssertionError } from '../../src/util/assert.js';
import { SluiceError } from '../../src/util/errors.js';
import { entry, logWithTerms } from './harness.js';

const M3 = { voters: [1, 2, 3], observers: [] };

describe('raft building blocks', () => {
  describe('RaftLog', () => {
    const mk = (terms: number[], commit = 0) =>
      new RaftLog({ entries: logWithTerms(terms), bootstrapMembership: M3, commit, applied: 0 });

    it('hands out unstable entries once and re-hands replaced ones after truncation', () => {
      const log = new RaftLog({ entries: [], bootstrapMembership: M3, commit: 0, applied: 0 });
      log.append(logWithTerms([1, 1, 1]));
      const first = log.takeUnhandedEntries();
      expect(first.map((e) => e.index)).to.deep.equal([1, 2, 3]);
      expect(log.takeUnhandedEntries()).to.deep.equal([]);
      log.truncateAndAppend([entry(2, 2)]);
      expect(log.takeUnhandedEntries().map((e) => [e.index, e.term])).to.deep.equal([[2, 2]]);
      log.stableTo(first); // only index 1 of that batch is still ours
      expect(log.stable).to.equal(1);
    });

    it('refuses to truncate committed entries', () => {
      const log = mk([1, 1, 1], 2);
      expect(() => log.truncateAndAppend([entry(2, 2)])).to.throw(AssertionError);
    });

    it('answers term queries at the snapshot boundary and beyond the log', () => {
      const log = mk([1, 1, 2, 2, 3], 5);
      log.appliedTo(4);
      log.compact({ meta: { index: 3, term: 2, membership: M3 }, data: new Uint8Array([1]) });
      expect([log.firstIndex(), log.lastIndex()]).to.deep.equal([4, 5]);
      expect([log.termAt(2), log.termAt(3), log.termAt(4), log.termAt(6)]).to.deep.equal([undefined, 2, 2, undefined]);
      expect(log.snapshot()?.meta.index).to.equal(3);
      expect(() => log.slice(3, 5)).to.throw(AssertionError);
    });

    it('finds backtracking positions', () => {
      const log = mk([1, 1, 1, 4, 4, 5, 5, 6, 6, 6]);
      expect(log.lastIndexWithTermAtMost(10, 5)).to.equal(7);
      expect(log.lastIndexWithTermAtMost(10, 3)).to.equal(3);
      expect(log.firstIndexOfTermRun(9)).to.equal(8);
      expect(log.isUpToDate(9, 6)).to.equal(false);
      expect(log.isUpToDate(10, 6)).to.equal(true);
      expect(log.isUpToDate(1, 7)).to.equal(true);
    });

    it('tracks membership by config entries and reverts on truncation', () => {
      const cfg = (index: number, cc: ConfChange) => ({ index, term: 1, type: EntryType.Config, data: encodeConfChange(cc) });
      const log = new RaftLog({ entries: [], bootstrapMembership: M3, commit: 0, applied: 0 });
      log.append([entry(1, 1), cfg(2, { type: 'addObserver', node: 4 }), cfg(3, { type: 'promoteObserver', node: 4 })]);
      expect(log.membership()).to.deep.equal({ voters: [1, 2, 3, 4], observers: [] });
      expect(log.membershipAt(2)).to.deep.equal({ voters: [1, 2, 3], observers: [4] });
      expect(log.lastConfigIndex()).to.equal(3);
      log.truncateAndAppend([entry(3, 2)]);
      expect(log.membership()).to.deep.equal({ voters: [1, 2, 3], observers: [4] });
      expect(log.lastConfigIndex()).to.equal(2);
    });
  });

  describe('flow control', () => {
    it('Inflights is a bounded FIFO of increasing indexes', () => {
      const f = new Inflights(2);
      f.add(3);
      f.add(5);
      expect(f.full()).to.equal(true);
      expect(() => f.add(6)).to.throw(AssertionError);
      f.freeTo(4);
      expect(f.count).to.equal(1);
      f.freeFirst();
      expect(f.count).to.equal(0);
    });

    it('Progress pauses a probe after one send and a replicate stream at the window', () => {
      const p = new Progress(5, 2);
      expect(p.isPaused()).to.equal(false);
      p.sentEntries(7);
      expect(p.isPaused()).to.equal(true);
      expect(p.maybeUpdate(4)).to.equal(true);
      p.becomeReplicate();
      expect(p.next).to.equal(5);
      p.sentEntries(6);
      p.sentEntries(8);
      expect([p.next, p.isPaused()]).to.deep.equal([9, true]);
      expect(p.maybeUpdate(3)).to.equal(false);
      p.becomeSnapshot(20);
      expect(p.isPaused()).to.equal(true);
      p.becomeProbe();
      expect(p.next).to.equal(21);
    });

    it('quorumIndex is the highest index a majority holds', () => {
      const match: Record<number, number> = { 1: 9, 2: 7, 3: 3, 4: 1, 5: 8 };
      expect(quorumIndex([1, 2, 3, 4, 5], (id) => match[id]!)).to.equal(7);
      expect(quorumIndex([1, 2, 3, 4], (id) => match[id]!)).to.equal(3);
      expect(quorumIndex([4], (id) => match[id]!)).to.equal(1);
      expect([1, 2, 3, 4, 5].map(quorumSize)).to.deep.equal([1, 2, 2, 3, 3]);
    });
  });

  describe('ReadIndexTracker', () => {
    it('confirms reads tagged up to the round a quorum acknowledged', () => {
      const t = new ReadIndexTracker(10);
      t.request(1, true, 5);
      expect(t.needsRound()).to.equal(true);
      expect(t.startRound()).to.equal(1);
      t.request(2, true, 6);
      t.startRound();
      t.ack(2, 1);
      expect(t.confirmed([1, 2, 3], 1)).to.deep.equal([{ requestId: 1, index: 5 }]);
      t.ack(3, 9); // never sent: ignored
      expect(t.confirmed([1, 2, 3], 1)).to.deep.equal([]);
      t.ack(3, 2);
      expect(t.confirmed([1, 2, 3], 1)).to.deep.equal([{ requestId: 2, index: 6 }]);
    });

    it('holds reads until the leader commits in its term, within capacity', () => {
      const t = new ReadIndexTracker(2);
      expect(t.request(1, false, 0)).to.equal(true);
      expect(t.needsRound()).to.equal(false);
      expect(t.request(2, false, 0)).to.equal(true);
      expect(t.request(3, false, 0)).to.equal(false);
      t.releaseWaiting(4);
      t.startRound();
      expect(t.confirmed([1], 1).map((r) => r.index)).to.deep.equal([4, 4]);
    });
  });

  describe('membership', () => {
    it('encodes conf changes in 5 bytes and rejects anything else', () => {
      const all: ConfChange[] = [
        { type: 'addVoter', node: 1 }, { type: 'removeVoter', node: 0xffffffff }, { type: 'addObserver', node: 300 },
        { type: 'removeObserver', node: 2 }, { type: 'promoteObserver', node: 65536 },
      ];
      for (const cc of all) {
        const b = encodeConfChange(cc);
        expect(b.byteLength).to.equal(5);
        expect(decodeConfChange(b)).to.deep.equal(cc);
      }
      expect(tryDecodeConfChange(new Uint8Array([9, 0, 0, 0, 1]))).to.equal(undefined);
      expect(tryDecodeConfChange(new Uint8Array([0, 0, 0, 0, 0]))).to.equal(undefined);
      expect(tryDecodeConfChange(new Uint8Array([0, 0, 0, 1]))).to.equal(undefined);
      expect(() => decodeConfChange(new Uint8Array(2))).to.throw(SluiceError);
      expect(() => encodeConfChange({ type: 'addVoter', node: -1 })).to.throw(SluiceError);
    });

    it('applies changes totally and checks them strictly', () => {
      let m = applyConfChange(M3, { type: 'addObserver', node: 4 });
      expect(m).to.deep.equal({ voters: [1, 2, 3], observers: [4] });
      m = applyConfChange(m, { type: 'promoteObserver', node: 4 });
      expect(m).to.deep.equal({ voters: [1, 2, 3, 4], observers: [] });
      expect(applyConfChange(m, { type: 'addObserver', node: 1 })).to.deep.equal(m); // a voter stays a voter
      expect(applyConfChange(m, { type: 'removeVoter', node: 2 })).to.deep.equal({ voters: [1, 3, 4], observers: [] });
      expect(checkConfChange(M3, { type: 'addVoter', node: 4 })).to.equal(true);
      expect(checkConfChange(M3, { type: 'promoteObserver', node: 3 })).to.equal(false);
      expect(checkConfChange({ voters: [1], observers: [] }, { type: 'removeVoter', node: 1 })).to.equal(false);
    });
  });
});
