import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { AssertionError } from '../../src/util/assert.js';
import { Errors, isSluiceError } from '../../src/util/errors.js';
import { SeededRng } from '../../src/util/rng.js';
import type { Entry, HardState, Snapshot } from '../../src/raft/types.js';
import { RaftDisk, type RaftDiskOptions } from '../../src/raft-node/raft-disk.js';
import { QUORUM_STATE_FILE } from '../../src/raft-node/quorum-state.js';
import { checkpointName, encodeSnapshotHeader, SnapshotStore } from '../../src/raft-node/snapshot-store.js';
import { encodeEntries } from '../../src/raft-node/entry-codec.js';
import { segmentName } from '../../src/raft-node/raft-log-segment.js';
import {
  entries, entry, makeTempDir, plain, randomEntry, RecordingLogger, removeDir, segmentFiles, snapshot,
} from './disk-test-helpers.js';

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error, none was thrown');
}

function readJson(file: string): unknown {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

describe('RaftDisk', () => {
  let root: string;
  let dir: string;
  let logger: RecordingLogger;
  let disk: RaftDisk | undefined;

  const open = (opts: RaftDiskOptions = {}): RaftDisk => {
    disk = RaftDisk.open(dir, { logger, ...opts });
    return disk;
  };
  const reopen = (opts: RaftDiskOptions = {}): RaftDisk => {
    disk?.close();
    return open(opts);
  };

  beforeEach(() => {
    root = makeTempDir();
    dir = path.join(root, '__cluster_metadata-0');
    logger = new RecordingLogger();
    disk = undefined;
  });
  afterEach(() => {
    try {
      disk?.close();
    } finally {
      removeDir(root);
    }
  });

  it('creates its directory and starts empty', () => {
    const d = open();
    expect(fs.statSync(dir).isDirectory()).to.equal(true);
    expect(d.loaded).to.deep.equal({ hardState: { term: 0, vote: 0, commit: 0 }, entries: [] });
    expect(d.lastIndex()).to.equal(0);
  });

  it('round-trips appended entries across a reopen and keeps appending after it', () => {
    const rng = new SeededRng(11);
    let d = open();
    const written: Entry[] = [];
    for (let batch = 0; batch < 20; batch++) {
      const list = Array.from({ length: 1 + rng.int(10) }, (_, i) => randomEntry(rng, written.length + i + 1, 1 + Math.floor(batch / 5)));
      d.appendEntries(list);
      written.push(...list);
      d.sync();
    }
    expect(d.lastIndex()).to.equal(written.length);
    d = reopen();
    expect(plain(d.loaded.entries)).to.deep.equal(plain(written));
    d.appendEntries([entry(written.length + 1, 9)]);
    d = reopen();
    expect(d.lastIndex()).to.equal(written.length + 1);
    expect(d.loaded.entries[written.length]?.term).to.equal(9);
  });

  it('truncates a conflicting suffix and reopens with the replacement', () => {
    let d = open();
    d.appendEntries(entries(1, 10, 1));
    d.sync();
    d.appendEntries(entries(6, 8, 2));
    expect(d.lastIndex()).to.equal(8);
    d.sync();
    d = reopen();
    expect(plain(d.loaded.entries)).to.deep.equal(plain([...entries(1, 5, 1), ...entries(6, 8, 2)]));
  });

  it('truncates across segments on conflict, deleting the later segment files', () => {
    let d = open({ segmentBytesMax: 200 });
    for (let i = 1; i <= 30; i++) d.appendEntries([entry(i, 1)]);
    d.sync();
    expect(segmentFiles(dir).length).to.be.greaterThan(3);
    d.appendEntries(entries(12, 13, 2));
    const bases = segmentFiles(dir).map((n) => Number(n.slice(0, 20)));
    expect(bases.every((b) => b <= 12), `segments left: ${bases.join(',')}`).to.equal(true);
    d = reopen({ segmentBytesMax: 200 });
    expect(plain(d.loaded.entries)).to.deep.equal(plain([...entries(1, 11, 1), ...entries(12, 13, 2)]));
  });

  it('writes the hard state only at sync, atomically, and round-trips it', () => {
    let d = open();
    const file = path.join(dir, QUORUM_STATE_FILE);
    d.appendEntries(entries(1, 3, 5));
    d.setHardState({ term: 5, vote: 2, commit: 3 });
    expect(fs.existsSync(file)).to.equal(false);
    d.sync();
    expect(readJson(file)).to.deep.equal({ currentTerm: 5, votedFor: 2, commitIndex: 3, version: 1 });
    d.setHardState({ term: 6, vote: 0, commit: 3 });
    expect(readJson(file)).to.deep.include({ currentTerm: 5 });
    d = reopen();
    expect(d.loaded.hardState).to.deep.equal({ term: 6, vote: 0, commit: 3 });
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.tmp'))).to.deep.equal([]);
  });

  it('clamps the loaded commit index to what the log holds', () => {
    let d = open();
    d.appendEntries(entries(1, 5, 1));
    d.setHardState({ term: 1, vote: 1, commit: 5 });
    d.close();
    fs.writeFileSync(path.join(dir, QUORUM_STATE_FILE), JSON.stringify({ currentTerm: 1, votedFor: 1, commitIndex: 100, version: 1 }));
    d = open();
    expect(d.loaded.hardState).to.deep.equal({ term: 1, vote: 1, commit: 5 });
  });

  it('raises a term left behind the log (crash before quorum-state) and clears the vote', () => {
    let d = open();
    d.appendEntries(entries(1, 3, 4));
    d.setHardState({ term: 2, vote: 3, commit: 0 });
    d = reopen();
    expect(d.loaded.hardState).to.deep.equal({ term: 4, vote: 0, commit: 0 });
    expect(logger.warnings().length).to.equal(1);
  });

  it('saves a snapshot, deletes the segments below it, and reopens after it', () => {
    let d = open({ segmentBytesMax: 200 });
    for (let i = 1; i <= 60; i++) d.appendEntries([entry(i, 1 + Math.floor(i / 20))]);
    d.sync();
    const before = segmentFiles(dir).length;
    const snap = snapshot(40, 3);
    d.saveSnapshot(snap);
    const bases = segmentFiles(dir).map((n) => Number(n.slice(0, 20)));
    expect(bases.length).to.be.lessThan(before);
    expect(bases[0]).to.be.at.most(41);
    expect(bases[1]).to.be.greaterThan(41);
    expect(fs.existsSync(path.join(dir, checkpointName(40, 3)))).to.equal(true);
    expect(d.lastIndex()).to.equal(60);
    d = reopen({ segmentBytesMax: 200 });
    expect(d.loaded.snapshot?.meta).to.deep.equal(snap.meta);
    expect(Array.from(d.loaded.snapshot?.data ?? [])).to.deep.equal(Array.from(snap.data));
    expect(d.loaded.entries.map((e) => e.index)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 41 + i));
    expect(d.loaded.hardState.commit).to.equal(40);
  });

  it('restarts the log right after a snapshot past its end', () => {
    let d = open();
    d.appendEntries(entries(1, 10, 1));
    d.sync();
    d.saveSnapshot(snapshot(25, 3));
    expect(d.lastIndex()).to.equal(25);
    expect(segmentFiles(dir)).to.deep.equal([segmentName(26)]);
    d.appendEntries(entries(26, 28, 3));
    d = reopen();
    expect(d.loaded.snapshot?.meta.index).to.equal(25);
    expect(plain(d.loaded.entries)).to.deep.equal(plain(entries(26, 28, 3)));
  });

  it('discards a log whose entry at the snapshot index has another term', () => {
    let d = open();
    d.appendEntries(entries(1, 10, 1));
    d.saveSnapshot(snapshot(5, 2));
    expect(d.lastIndex()).to.equal(5);
    d = reopen();
    expect(d.loaded.entries).to.deep.equal([]);
    expect(d.lastIndex()).to.equal(5);
  });

  it('keeps the newest two snapshots', () => {
    const d = open();
    d.appendEntries(entries(1, 50, 1));
    for (const index of [10, 20, 30, 40]) d.saveSnapshot(snapshot(index, 1));
    const checkpoints = fs.readdirSync(dir).filter((n) => n.endsWith('.checkpoint')).sort();
    expect(checkpoints).to.deep.equal([checkpointName(30, 1), checkpointName(40, 1)]);
  });

  it('rolls segments at segmentBytesMax, naming each by its base index', () => {
    const segmentBytesMax = 100;
    let d = open({ segmentBytesMax });
    for (let i = 1; i <= 20; i += 2) d.appendEntries(entries(i, i + 1, 1)); // 2 × 33-byte frames per batch
    d.appendEntries(entries(21, 25, 1)); // one batch larger than a segment stays whole
    d.sync();
    const files = segmentFiles(dir);
    const expectedBases = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21];
    expect(files).to.deep.equal(expectedBases.map(segmentName));
    for (const name of files.slice(0, -1)) expect(fs.statSync(path.join(dir, name)).size).to.be.at.most(segmentBytesMax);
    d = reopen({ segmentBytesMax });
    expect(plain(d.loaded.entries)).to.deep.equal(plain(entries(1, 25, 1)));
  });

  describe('recovery from damage', () => {
    /** Writes a log, closes it, and returns each entry with the segment and byte range of its frame. */
    function buildLog(seed: number, count: number, segmentBytesMax: number): { list: Entry[]; frames: { file: string; start: number; end: number }[] } {
      const rng = new SeededRng(seed);
      const d = open({ segmentBytesMax });
      const list: Entry[] = [];
      while (list.length < count) {
        const batch = Array.from({ length: 1 + rng.int(4) }, (_, i) => randomEntry(rng, list.length + i + 1, 1 + Math.floor(list.length / 7), 48));
        d.appendEntries(batch);
        list.push(...batch);
      }
      d.setHardState({ term: list[list.length - 1]?.term ?? 0, vote: 1, commit: 0 });
      d.close();
      disk = undefined;
      const frames: { file: string; start: number; end: number }[] = [];
      for (const name of segmentFiles(dir)) {
        const file = path.join(dir, name);
        const size = fs.statSync(file).size;
        let pos = 0;
        for (const e of list.filter((x) => x.index >= Number(name.slice(0, 20)))) {
          if (pos >= size) break;
          frames.push({ file, start: pos, end: pos + 25 + e.data.length });
          pos += 25 + e.data.length;
        }
        expect(pos).to.equal(size);
      }
      expect(frames.length).to.equal(list.length);
      return { list, frames };
    }

    for (const [label, segmentBytesMax] of [['one segment', 1 << 20], ['several segments', 400]] as const) {
      it(`cuts a torn tail at any byte and keeps every whole entry before it (${label}, seeded)`, () => {
        const { list, frames } = buildLog(5, 40, segmentBytesMax);
        const lastFile = frames[frames.length - 1]?.file ?? '';
        const original = fs.readFileSync(lastFile);
        const tailFrames = frames.filter((f) => f.file === lastFile);
        const rng = new SeededRng(1234);
        for (let round = 0; round < 150; round++) {
          const cut = rng.int(original.length);
          const garbage = rng.chance(0.3) ? Buffer.alloc(rng.range(1, 100)) : Buffer.alloc(0);
          fs.writeFileSync(lastFile, Buffer.concat([original.subarray(0, cut), garbage]));
          const whole = tailFrames.filter((f) => f.end <= cut);
          const kept = frames.length - tailFrames.length + whole.length;
          const boundary = whole[whole.length - 1]?.end ?? 0;
          const d = open({ segmentBytesMax });
          const context = `seed 1234 round ${round} cut ${cut} garbage ${garbage.length}`;
          expect(d.lastIndex(), context).to.equal(kept);
          expect(plain(d.loaded.entries), context).to.deep.equal(plain(list.slice(0, kept)));
          expect(fs.statSync(lastFile).size, context).to.equal(boundary);
          if (round % 25 === 0) {
            d.appendEntries([entry(kept + 1, 99)]);
            const again = reopen({ segmentBytesMax });
            expect(again.lastIndex(), context).to.equal(kept + 1);
          }
          disk?.close();
          disk = undefined;
        }
        expect(logger.warnings().length).to.be.greaterThan(100);
      });
    }

    it('cuts a final frame whose CRC fails, with a warning', () => {
      const { list, frames } = buildLog(8, 12, 1 << 20);
      const last = frames[frames.length - 1];
      const bytes = fs.readFileSync(last?.file ?? '');
      bytes[(last?.end ?? 0) - 1] = (bytes[(last?.end ?? 0) - 1] ?? 0) ^ 0xff;
      fs.writeFileSync(last?.file ?? '', bytes);
      const d = open();
      expect(plain(d.loaded.entries)).to.deep.equal(plain(list.slice(0, -1)));
      expect(logger.warnings().map((w) => w.msg)).to.deep.equal(['truncated a torn write at the tail of the raft log']);
    });

    it('refuses a flipped byte anywhere before the final frame, naming file and offset (seeded)', () => {
      const { frames } = buildLog(9, 40, 400);
      // Every frame except the last one of the last segment: damage there would look like a torn write.
      const candidates = frames.slice(0, -1);
      const rng = new SeededRng(99);
      for (let round = 0; round < 100; round++) {
        const frame = candidates[rng.int(candidates.length)];
        if (!frame) throw new Error('no frame');
        const at = frame.start + rng.int(frame.end - frame.start);
        const original = fs.readFileSync(frame.file);
        const damaged = Buffer.from(original);
        damaged[at] = (damaged[at] ?? 0) ^ (1 << rng.int(8));
        fs.writeFileSync(frame.file, damaged);
        const err = catchError(() => open({ segmentBytesMax: 400 }));
        const context = `seed 99 round ${round}: byte ${at} of ${frame.file}`;
        expect(isSluiceError(err, Errors.CORRUPT_MESSAGE), `${context}: ${String(err)}`).to.equal(true);
        expect((err as Error).message, context).to.contain(frame.file).and.contain(`byte offset ${frame.start}`);
        expect(fs.readFileSync(frame.file).equals(damaged), `${context}: recovery must not modify a corrupt log`).to.equal(true);
        fs.writeFileSync(frame.file, original);
      }
    });

    it('refuses a log with a segment missing in the middle', () => {
      buildLog(10, 40, 400);
      const files = segmentFiles(dir);
      fs.unlinkSync(path.join(dir, files[1] ?? ''));
      const err = catchError(() => open({ segmentBytesMax: 400 }));
      expect(isSluiceError(err, Errors.CORRUPT_MESSAGE), String(err)).to.equal(true);
      expect((err as Error).message).to.contain('does not follow');
    });

    it('refuses frames that verify but break index order or term order', () => {
      fs.mkdirSync(dir);
      const file = path.join(dir, segmentName(1));
      const skipped = encodeEntries([entry(1, 1), entry(2, 1), entry(4, 1), entry(5, 1)]);
      fs.writeFileSync(file, skipped.buf);
      let err = catchError(() => open());
      expect((err as Error).message).to.contain(file).and.contain(`byte offset ${skipped.offsets[2]}`).and.contain('expected index 3');
      const backwards = encodeEntries([entry(1, 2), entry(2, 1), entry(3, 2)]);
      fs.writeFileSync(file, backwards.buf);
      err = catchError(() => open());
      expect((err as Error).message).to.contain(file).and.contain(`byte offset ${backwards.offsets[1]}`).and.contain('term 1 after term 2');
    });

    it('discards a log that a snapshot install interrupted by a crash left behind', () => {
      let d = open();
      d.appendEntries(entries(1, 10, 1));
      d.setHardState({ term: 2, vote: 0, commit: 5 });
      d.close();
      disk = undefined;
      // The checkpoint reached the disk, the compaction that follows it did not.
      new SnapshotStore(dir, logger).save(snapshot(5, 2));
      d = open();
      expect(d.loaded.snapshot?.meta.index).to.equal(5);
      expect(d.loaded.entries).to.deep.equal([]);
      expect(d.lastIndex()).to.equal(5);
      expect(segmentFiles(dir)).to.deep.equal([segmentName(6)]);
    });

    it('keeps a log that continues a snapshot whose compaction was interrupted', () => {
      let d = open({ segmentBytesMax: 100 });
      for (let i = 1; i <= 12; i++) d.appendEntries([entry(i, 1)]);
      d.setHardState({ term: 1, vote: 0, commit: 9 });
      d.close();
      disk = undefined;
      new SnapshotStore(dir, logger).save(snapshot(9, 1));
      d = open({ segmentBytesMax: 100 });
      expect(d.loaded.entries.map((e) => e.index)).to.deep.equal([10, 11, 12]);
      expect(Number(segmentFiles(dir)[0]?.slice(0, 20))).to.be.at.most(9);
    });

    it('refuses a log that starts after the snapshot it should continue', () => {
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, segmentName(8)), encodeEntries(entries(8, 9, 1)).buf);
      expect((catchError(() => open()) as Error).message).to.contain('entries are missing');
    });

    it('ignores and deletes a partial snapshot temp file', () => {
      let d = open();
      d.appendEntries(entries(1, 20, 1));
      d.saveSnapshot(snapshot(10, 1));
      d.setHardState({ term: 1, vote: 1, commit: 20 });
      d.close();
      disk = undefined;
      const newer = snapshot(20, 1, 4096);
      const full = Buffer.concat([encodeSnapshotHeader(newer), newer.data]);
      const temp = path.join(dir, checkpointName(20, 1) + '.tmp');
      fs.writeFileSync(temp, full.subarray(0, 1000));
      fs.writeFileSync(path.join(dir, QUORUM_STATE_FILE + '.tmp'), '{"currentTe');
      d = open();
      expect(d.loaded.snapshot?.meta.index).to.equal(10);
      expect(d.loaded.entries.map((e) => e.index)).to.deep.equal(entries(11, 20, 1).map((e) => e.index));
      expect(fs.existsSync(temp)).to.equal(false);
      expect(logger.warnings().map((w) => w.msg)).to.deep.equal(Array(2).fill('deleting a partial temp file left by an interrupted write'));
    });
  });

  it('rejects contract violations as assertion errors', () => {
    const d = open();
    d.appendEntries(entries(1, 5, 2));
    expect(catchError(() => d.appendEntries([entry(7, 2)]))).to.be.an.instanceOf(AssertionError);
    expect(catchError(() => d.appendEntries([entry(6, 1)]))).to.be.an.instanceOf(AssertionError);
    expect(catchError(() => d.appendEntries([entry(6, 2), entry(8, 2)]))).to.be.an.instanceOf(AssertionError);
    d.saveSnapshot(snapshot(3, 2));
    expect(catchError(() => d.appendEntries([entry(3, 2)]))).to.be.an.instanceOf(AssertionError);
    expect(catchError(() => d.saveSnapshot(snapshot(2, 2)))).to.be.an.instanceOf(AssertionError);
    d.close();
    expect(catchError(() => d.sync())).to.be.an.instanceOf(AssertionError);
  });

  it('matches an in-memory model over random appends, conflicts, snapshots and reopens (seeded)', function () {
    this.timeout(60_000); // hundreds of real fsyncs; slow on a busy disk
    for (const seed of [1, 2, 3]) runModel(seed);
  });

  /** Random operations against RaftDisk and a plain model; every reopen must load exactly the model. */
  function runModel(seed: number): void {
    const rng = new SeededRng(seed);
    const segmentBytesMax = 300;
    let d = open({ segmentBytesMax });
    let snap: Snapshot | undefined;
    let log: Entry[] = []; // entries after the snapshot
    let hs: HardState = { term: 0, vote: 0, commit: 0 };
    let term = 1;
    const snapIndex = (): number => snap?.meta.index ?? 0;
    const lastIndex = (): number => log[log.length - 1]?.index ?? snapIndex();
    const termAt = (i: number): number => (i === snapIndex() ? (snap?.meta.term ?? 0) : (log.find((e) => e.index === i)?.term ?? 0));
    for (let step = 0; step < 300; step++) {
      const context = `seed ${seed} step ${step}`;
      const op = rng.int(100);
      if (op < 50) {
        const start = rng.chance(0.7) ? lastIndex() + 1 : rng.range(snapIndex() + 1, lastIndex() + 1);
        term = Math.max(term, termAt(start - 1)) + rng.int(2);
        const batch = Array.from({ length: rng.range(1, 8) }, (_, i) => randomEntry(rng, start + i, term, 40));
        d.appendEntries(batch);
        log = [...log.filter((e) => e.index < start), ...batch];
      } else if (op < 70) {
        d.sync();
      } else if (op < 80) {
        hs = { term, vote: rng.int(4), commit: rng.range(snapIndex(), lastIndex()) };
        d.setHardState(hs);
      } else if (op < 88 && lastIndex() > snapIndex()) {
        const pastEnd = rng.chance(0.2);
        const index = pastEnd ? lastIndex() + rng.range(1, 5) : rng.range(snapIndex() + 1, lastIndex());
        snap = snapshot(index, pastEnd ? term : termAt(index), rng.int(64));
        d.saveSnapshot(snap);
        log = log.filter((e) => e.index > index);
      } else if (op >= 88) {
        d = reopen({ segmentBytesMax });
        expect(d.loaded.snapshot?.meta, context).to.deep.equal(snap?.meta);
        expect(plain(d.loaded.entries), context).to.deep.equal(plain(log));
        const lastTerm = termAt(lastIndex());
        const expected = hs.term < lastTerm ? { term: lastTerm, vote: 0, commit: hs.commit } : { ...hs };
        expected.commit = Math.min(Math.max(hs.commit, snapIndex()), lastIndex());
        expect(d.loaded.hardState, context).to.deep.equal(expected);
        hs = expected;
      }
      expect(d.lastIndex(), context).to.equal(lastIndex());
    }
    d.close();
    disk = undefined;
    removeDir(dir);
  }
});
