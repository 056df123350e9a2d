// Crash recovery: a "crash" is closeForDelete() (files released without flush
// or clean-shutdown marker), after which the test damages the files the way a
// torn write or bad disk would, then reopens.

import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LEADER_EPOCH_CHECKPOINT_FILE } from '../../src/storage/checkpoint.js';
import { CLEAN_SHUTDOWN_FILE } from '../../src/storage/log-loader.js';
import type { LogConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { ManualClock } from '../../src/util/clock.js';
import { SeededRng } from '../../src/util/rng.js';
import { batchesIn, makeBatch, readAllBytes, removeDir, tempDir } from './log-test-helpers.js';

const CONFIG: Partial<LogConfig> = { segmentBytes: 2000, indexIntervalBytes: 150, retentionMs: -1 };
const EPOCH_BYTES = [12, 16] as const;

interface Written {
  batches: Buffer[];
  /** Base offset of the last segment. */
  lastBase: number;
  lastFile: string;
  /** Positions of the batches of the last segment in its file, with their indexes in `batches`. */
  lastSegment: { position: number; sizeBytes: number; index: number }[];
  recoveryPoint: number;
}

/** Writes `count` batches of varied sizes into a fresh log in `dir`, then "crashes". */
async function writeAndCrash(dir: string, count: number, seed: number): Promise<Written> {
  const rng = new SeededRng(seed);
  const log = PartitionLog.open({ dir, clock: new ManualClock(), config: CONFIG });
  const batches: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const b = makeBatch({ records: rng.range(1, 4), valueBytes: rng.range(0, 120), timestamp: 1_000 + rng.int(500), fill: i });
    log.append(b, { leaderEpoch: Math.floor(i / 10) });
    batches.push(b);
  }
  await log.whenBackgroundFlushed();
  const segments = log.segmentInfos();
  const lastBase = segments[segments.length - 1]!.baseOffset;
  const recoveryPoint = log.recoveryPoint;
  log.closeForDelete();
  const lastSegment: Written['lastSegment'] = [];
  let position = 0;
  batches.forEach((b, index) => {
    if (batchesIn(b)[0]!.baseOffset < lastBase) return;
    lastSegment.push({ position, sizeBytes: b.length, index });
    position += b.length;
  });
  return { batches, lastBase, lastFile: path.join(dir, `${String(lastBase).padStart(20, '0')}.log`), lastSegment, recoveryPoint };
}

/** Reopens `dir` and checks the log is exactly the first `keep` batches, then that it still takes appends. */
function expectLogIs(dir: string, w: Written, keep: number, recoveryPoint: number): void {
  const log = PartitionLog.open({ dir, clock: new ManualClock(), config: CONFIG, recoveryPoint });
  try {
    const expected = w.batches.slice(0, keep);
    const leo = keep === 0 ? 0 : batchesIn(expected[keep - 1]!)[0]!.lastOffset + 1;
    expect(log.logEndOffset, 'log end offset').to.equal(leo);
    expect(readAllBytes(log, 700).equals(Buffer.concat(expected)), 'contents').to.equal(true);
    expect(log.epochEntries().every((e) => e.startOffset < leo)).to.equal(true);
    expect(log.append(makeBatch(), { leaderEpoch: 99 }).baseOffset).to.equal(leo);
  } finally {
    log.close();
  }
}

describe('log recovery', () => {
  let root: string;
  beforeEach(() => {
    root = tempDir('sluice-recovery-');
  });
  afterEach(() => removeDir(root));

  function copyOf(src: string, name: string): string {
    const dst = path.join(root, name);
    fs.cpSync(src, dst, { recursive: true });
    return dst;
  }

  it('cut at any byte of the last segment: the log ends at the last whole batch', async () => {
    const pristine = path.join(root, 'pristine');
    const w = await writeAndCrash(pristine, 60, 1);
    expect(w.lastBase, 'several segments').to.be.greaterThan(0);
    const size = fs.statSync(w.lastFile).size;
    const rng = new SeededRng(2);
    const cuts = [0, size, ...Array.from({ length: 32 }, () => rng.int(size))];
    cuts.forEach((cut, i) => {
      const dir = copyOf(pristine, `cut-${i}`);
      fs.truncateSync(path.join(dir, path.basename(w.lastFile)), cut);
      const whole = w.lastSegment.filter((b) => b.position + b.sizeBytes <= cut);
      const keep = whole.length > 0 ? whole[whole.length - 1]!.index + 1 : w.lastSegment[0]!.index;
      // Mostly the checkpointed recovery point, sometimes none (a full scan).
      expectLogIs(dir, w, keep, i % 4 === 0 ? 0 : w.recoveryPoint);
      removeDir(dir);
    });
  });

  it('a flipped byte in the last batch drops exactly that batch', async () => {
    const pristine = path.join(root, 'pristine');
    const w = await writeAndCrash(pristine, 45, 3);
    const last = w.lastSegment[w.lastSegment.length - 1]!;
    const rng = new SeededRng(4);
    for (let i = 0; i < 24; i++) {
      // The partition leader epoch lies outside the CRC (it is stamped after the
      // producer computed it), as in Kafka, so a flip there is undetectable.
      let at: number;
      do at = rng.int(last.sizeBytes);
      while (at >= EPOCH_BYTES[0] && at < EPOCH_BYTES[1]);
      const dir = copyOf(pristine, `flip-${i}`);
      const file = path.join(dir, path.basename(w.lastFile));
      const bytes = fs.readFileSync(file);
      bytes[last.position + at]! ^= 1 << rng.int(8);
      fs.writeFileSync(file, bytes);
      expectLogIs(dir, w, last.index, w.recoveryPoint);
      removeDir(dir);
    }
  });

  it('garbage after the last batch is truncated, never served', async () => {
    const dir = path.join(root, 'log');
    const w = await writeAndCrash(dir, 30, 5);
    fs.appendFileSync(w.lastFile, Buffer.concat([Buffer.alloc(100), Buffer.from('not a batch at all, just noise')]));
    expectLogIs(dir, w, 30, w.recoveryPoint);
  });

  it('a torn segment before the last one loses every later segment', async () => {
    const dir = path.join(root, 'log');
    const w = await writeAndCrash(dir, 60, 6);
    const logs = fs.readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
    expect(logs.length).to.be.greaterThan(2);
    const second = path.join(dir, logs[1]!);
    const secondBase = Number(logs[1]!.slice(0, 20));
    fs.truncateSync(second, fs.statSync(second).size - 3);
    const keep = w.batches.findIndex((b) => batchesIn(b)[0]!.baseOffset >= Number(logs[2]!.slice(0, 20))) - 1;
    expectLogIs(dir, w, keep, secondBase);
    for (const f of logs.slice(2)) expect(fs.existsSync(path.join(dir, f)), f).to.equal(false);
  });

  it('skips the scan after a clean shutdown (and only then)', async () => {
    const dir = path.join(root, 'log');
    const w = await writeAndCrash(dir, 20, 7);
    PartitionLog.open({ dir, config: CONFIG }).close();
    expect(fs.existsSync(path.join(dir, CLEAN_SHUTDOWN_FILE))).to.equal(true);
    // Damage a record byte (covered by the CRC) of the last batch.
    const last = w.lastSegment[w.lastSegment.length - 1]!;
    const bytes = fs.readFileSync(w.lastFile);
    bytes[last.position + last.sizeBytes - 1]! ^= 0xff;
    fs.writeFileSync(w.lastFile, bytes);
    const trusting = PartitionLog.open({ dir, config: CONFIG });
    expect(trusting.logEndOffset, 'no scan after a clean shutdown').to.equal(batchesIn(w.batches[19]!)[0]!.lastOffset + 1);
    expect(fs.existsSync(path.join(dir, CLEAN_SHUTDOWN_FILE)), 'marker removed on open').to.equal(false);
    trusting.closeForDelete();
    expectLogIs(dir, w, 19, 0);
  });

  for (const damage of ['deleted', 'torn', 'scrambled'] as const) {
    it(`rebuilds ${damage} index files and gives the same lookups`, async () => {
      const dir = path.join(root, 'log');
      await writeAndCrash(dir, 50, 8);
      const before = PartitionLog.open({ dir, config: CONFIG });
      const snapshot = lookups(before);
      before.close();
      const rng = new SeededRng(9);
      for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('index'))) {
        const file = path.join(dir, f);
        if (damage === 'deleted') fs.unlinkSync(file);
        else if (damage === 'torn') fs.truncateSync(file, Math.max(0, fs.statSync(file).size - 5));
        else fs.writeFileSync(file, Buffer.from(Array.from({ length: fs.statSync(file).size }, () => rng.int(256))));
      }
      // A clean shutdown: only the index checks can send segments to recovery.
      const after = PartitionLog.open({ dir, config: CONFIG });
      try {
        expect(lookups(after)).to.deep.equal(snapshot);
        for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.index'))) expect(fs.statSync(path.join(dir, f)).size % 8).to.equal(0);
      } finally {
        after.close();
      }
    });
  }

  it('rebuilds a missing or malformed leader-epoch checkpoint from the batches', async () => {
    const dir = path.join(root, 'log');
    await writeAndCrash(dir, 35, 10);
    const first = PartitionLog.open({ dir, config: CONFIG });
    const entries = first.epochEntries().map((e) => ({ ...e }));
    expect(entries.map((e) => e.epoch)).to.deep.equal([0, 1, 2, 3]);
    first.close();
    const file = path.join(dir, LEADER_EPOCH_CHECKPOINT_FILE);
    for (const content of [null, 'garbage\n']) {
      if (content === null) fs.unlinkSync(file);
      else fs.writeFileSync(file, content);
      const log = PartitionLog.open({ dir, config: CONFIG });
      expect(log.epochEntries()).to.deep.equal(entries);
      log.close();
      expect(fs.readFileSync(file, 'utf8').split('\n').slice(0, 2)).to.deep.equal(['0', '4']);
    }
  });

  it('removes leftover temp files and index files without a log', () => {
    const dir = path.join(root, 'log');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'leader-epoch-checkpoint.tmp'), 'x');
    fs.writeFileSync(path.join(dir, '00000000000000000500.index'), Buffer.alloc(8));
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'kept');
    const log = PartitionLog.open({ dir, config: CONFIG });
    log.close();
    const names = fs.readdirSync(dir).sort();
    expect(names).to.include('notes.txt');
    expect(names).to.not.include('leader-epoch-checkpoint.tmp');
    expect(names).to.not.include('00000000000000000500.index');
  });
});

/** Everything the indexes influence: reads from every offset and every timestamp lookup. */
function lookups(log: PartitionLog): { reads: [number, number, number][]; times: (number | null)[] } {
  const reads: [number, number, number][] = [];
  for (let o = log.logStartOffset; o < log.logEndOffset; o++) {
    const r = log.read(o, 300);
    reads.push([r.firstOffset, r.nextOffset, r.records.length]);
  }
  const times: (number | null)[] = [];
  for (let t = 900; t <= 1600; t += 7) times.push(log.offsetForTimestamp(t));
  return { reads, times };
}
