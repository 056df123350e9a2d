// The real PartitionLog (through the LogManager) and the real RaftDisk,
// driven by seeded random operations on the simulated disk with crashes —
// some tearing the unsynced tails — in between. After every crash the code's
// own recovery must open the data without throwing, keep everything it had
// promised was durable, and invent nothing that was never written.
//
// What counts as promised:
//   - partition log: every offset below the LEO at a flush(), and below the
//     recovery point once a background flush moved it (the log says all below
//     is fsynced); a truncation takes back the promise above its offset;
//   - Raft disk: every entry and the hard state at a sync(); a suffix
//     truncation (fsynced as it happens) takes back the entries it cut; a
//     snapshot is durable when saveSnapshot returns.
//   - no gaps: the recovered log holds one batch per offset up to its LEO
//     (no cleaner runs here, so any gap would be lost data under an LEO that
//     claims it).
//
// Debugging a seed: SIM_FS_DEBUG=1 prints the files around every crash;
// SIM_FS_SEEDS=N runs N seeds of each.

import { expect } from 'chai';
import { ManualClock, ManualScheduler } from '../../../src/util/clock.js';
import { SeededRng, type Rng } from '../../../src/util/rng.js';
import { LogManager } from '../../../src/storage/log-manager.js';
import type { PartitionLog } from '../../../src/storage/partition-log.js';
import { RaftDisk } from '../../../src/raft-node/raft-disk.js';
import type { Entry, HardState } from '../../../src/raft/types.js';
import { batchesIn, makeBatch, readAllBytes } from '../../storage/log-test-helpers.js';
import { randomEntry, snapshot as makeSnapshot } from '../../raft-node/disk-test-helpers.js';
import { simDisk, type SimDisk } from './sim-fs.js';

const SEEDS = Number(process.env.SIM_FS_SEEDS ?? 40);
const STEPS = 120;

/** A failure names the seed and the last steps, so it can be replayed. */
function withTrace(seed: number, trace: string[], fn: () => Promise<void> | void): Promise<void> {
  return Promise.resolve().then(fn).catch((err: unknown) => {
    throw new Error(`seed ${seed}: ${(err as Error).message}\n  last steps: ${trace.slice(-25).join(', ')}`, { cause: err });
  });
}

describe('recovery on the simulated disk', function () {
  this.timeout(120_000);

  describe('PartitionLog (via LogManager)', () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      it(`seed ${seed}: keeps what was flushed, invents nothing, across crashes`, async () => {
        const trace: string[] = [];
        await withTrace(seed, trace, () => partitionLogRun(seed, trace));
      });
    }
  });

  describe('RaftDisk', () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      it(`seed ${seed}: keeps what was synced, invents nothing, across crashes`, async () => {
        const trace: string[] = [];
        await withTrace(seed, trace, () => raftDiskRun(seed, trace));
      });
    }
  });
});

// ---- partition log --------------------------------------------------------------

interface LogWorld {
  rng: Rng;
  clock: ManualClock;
  scheduler: ManualScheduler;
  disk: SimDisk;
  manager: LogManager;
  log: PartitionLog;
  /** The stamped batch at each offset (one record per batch). */
  written: (Buffer | undefined)[];
  /** Every batch ever written at each offset (a lost truncation may bring an older one back). */
  history: Map<number, Set<string>>;
  /** Offsets below this must survive a crash. */
  promised: number;
  epoch: number;
}

function openManager(w: Pick<LogWorld, 'clock' | 'scheduler' | 'disk'>): LogManager {
  return LogManager.open({
    dataDir: w.disk.dataDir, clock: w.clock, scheduler: w.scheduler, fs: w.disk.fs,
    logConfig: { segmentBytes: 700, indexIntervalBytes: 120, retentionMs: -1 },
  });
}

export async function partitionLogRun(seed: number, trace: string[]): Promise<void> {
  const rng = new SeededRng(seed);
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const disk = simDisk({ host: 'n1', clock, scheduler, rng: rng.fork() });
  const manager = openManager({ clock, scheduler, disk });
  const w: LogWorld = {
    rng, clock, scheduler, disk, manager, log: manager.getOrCreateLog('t', 0),
    written: [], history: new Map(), promised: 0, epoch: 0,
  };
  for (let step = 0; step < STEPS; step++) {
    const r = rng.next();
    if (r < 0.5) appendOne(w, trace);
    else if (r < 0.58) {
      w.log.flush();
      w.promised = w.log.logEndOffset;
      trace.push(`flush@${w.promised}`);
    } else if (r < 0.63) {
      w.log.flushData();
      w.promised = w.log.logEndOffset;
      trace.push(`flushData@${w.promised}`);
    } else if (r < 0.68) {
      w.log.roll();
      trace.push('roll');
    } else if (r < 0.74) {
      await w.log.whenBackgroundFlushed();
      w.promised = Math.max(w.promised, w.log.recoveryPoint);
      trace.push(`bg-flushed@${w.log.recoveryPoint}`);
    } else if (r < 0.78) {
      w.manager.checkpointRecoveryPoints();
      trace.push('checkpoint');
    } else if (r < 0.82) {
      w.epoch++;
      trace.push(`epoch ${w.epoch}`);
    } else if (r < 0.87 && w.written.length > 0) {
      const to = rng.int(w.written.length + 1);
      const end = w.log.truncateTo(to); // at or below `to`: batches are whole, and a gap may lie below it
      w.written.length = end;
      w.promised = Math.min(w.promised, end);
      trace.push(`truncate ${to}`);
    } else if (r < 0.9) {
      w.manager.close();
      trace.push('clean restart');
      reopen(w, false);
    } else if (r < 0.97) {
      const torn = rng.chance(0.5);
      trace.push(torn ? 'crash(torn)' : 'crash');
      if (process.env.SIM_FS_DEBUG) console.log('before', w.log.segmentInfos().map((x) => [x.baseOffset, x.nextOffset]), w.disk.fs.listFiles());
      w.disk.crash({ tornTail: torn });
      if (process.env.SIM_FS_DEBUG) console.log('after', w.disk.fs.listFiles().map((f) => `${f}:${w.disk.fs.statSync(f).size}`));
      reopen(w, true);
    }
  }
  w.manager.close();
  reopen(w, false);
  expect(w.log.logEndOffset, 'a clean close keeps everything').to.equal(w.written.length);
  w.manager.close();
}

function appendOne(w: LogWorld, trace: string[]): void {
  const offset = w.log.logEndOffset;
  const b = makeBatch({ records: 1, valueBytes: 5 + w.rng.int(80), fill: w.rng.int(256), timestamp: 1_000 + offset });
  w.log.append(b, { leaderEpoch: w.epoch });
  w.written[offset] = b;
  const seen = w.history.get(offset) ?? new Set<string>();
  seen.add(b.toString('hex'));
  w.history.set(offset, seen);
  trace.push(`append ${offset}`);
}

/** Reopens the manager (after a crash or a clean close) and checks the recovered log against the promises. */
function reopen(w: LogWorld, crashed: boolean): void {
  w.manager = openManager(w);
  const log = w.manager.getLog('t', 0);
  if (log === undefined) {
    // The log's directory entry was never made durable: allowed only if nothing was promised.
    expect(crashed && w.promised === 0, 'the log directory vanished though data was promised').to.equal(true);
    w.log = w.manager.getOrCreateLog('t', 0);
    w.written = [];
    return;
  }
  w.log = log;
  const bytes = readAllBytes(log);
  const batches = batchesIn(bytes);
  expect(log.logStartOffset).to.equal(0);
  expect(log.logEndOffset, `recovered LEO ${log.logEndOffset} is below the promised ${w.promised}`).to.be.at.least(w.promised);
  const recovered: (Buffer | undefined)[] = [];
  let pos = 0;
  for (const b of batches) {
    expect(b.baseOffset, `offset ${b.baseOffset} goes back or repeats`).to.be.at.least(recovered.length);
    expect(b.baseOffset, `gap before offset ${b.baseOffset}`).to.equal(recovered.length);
    const one = bytes.subarray(pos, pos + b.sizeBytes);
    pos += b.sizeBytes;
    if (b.baseOffset >= w.promised) {
      expect(w.history.get(b.baseOffset)?.has(one.toString('hex')), `offset ${b.baseOffset} holds a batch never written there`).to.equal(true);
    }
    recovered[b.baseOffset] = Buffer.from(one);
  }
  recovered.length = log.logEndOffset;
  for (let i = 0; i < w.promised; i++) {
    const want = w.written[i];
    const got = recovered[i];
    expect(want === undefined ? got === undefined : got?.equals(want) === true, `promised offset ${i} lost or changed`).to.equal(true);
  }
  if (!crashed) {
    expect(recovered.length, 'a clean restart keeps everything').to.equal(w.written.length);
    for (let i = 0; i < recovered.length; i++) expect(recovered[i]?.equals(w.written[i]!) ?? w.written[i] === undefined, `offset ${i} after a clean restart`).to.equal(true);
  }
  // What the disk holds now is what there is: after a crash it is all on the (simulated) disk.
  w.written = recovered;
  if (crashed) w.promised = recovered.length;
  w.epoch = Math.max(w.epoch, log.latestEpoch());
}

// ---- Raft disk ------------------------------------------------------------------

interface RaftWorld {
  rng: Rng;
  disk: SimDisk;
  raft: RaftDisk;
  dir: string;
  /** The log as appended (after the snapshot). */
  entries: Entry[];
  hardState: HardState;
  /** Synced: entries and hard state that must survive. */
  syncedEntries: Entry[];
  syncedHardState: HardState;
  snapshotIndex: number;
  snapshotTerm: number;
  /** Every entry ever appended at an index, as "term:hex". */
  history: Map<number, Set<string>>;
}

function key(e: Entry): string {
  return `${e.term}:${e.type}:${Buffer.from(e.data).toString('hex')}`;
}

export async function raftDiskRun(seed: number, trace: string[]): Promise<void> {
  const rng = new SeededRng(seed);
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const disk = simDisk({ host: 'n1', clock, scheduler, rng: rng.fork() });
  const dir = `${disk.dataDir}/__cluster_metadata-0`;
  const zero: HardState = { term: 0, vote: 0, commit: 0 };
  const w: RaftWorld = {
    rng, disk, dir, raft: RaftDisk.open(dir, { fs: disk.fs, segmentBytesMax: 400 }),
    entries: [], hardState: zero, syncedEntries: [], syncedHardState: zero, snapshotIndex: 0, snapshotTerm: 0, history: new Map(),
  };
  for (let step = 0; step < STEPS; step++) {
    const r = rng.next();
    if (r < 0.4) raftAppend(w, trace);
    else if (r < 0.55) {
      const last = w.entries[w.entries.length - 1];
      const term = Math.max(w.hardState.term, last?.term ?? 0) + (rng.chance(0.3) ? 1 : 0);
      const lastIndex = last?.index ?? w.snapshotIndex;
      // One vote per term: a new term may vote, the same term keeps the vote it has (or casts its first).
      const vote = term > w.hardState.term || w.hardState.vote === 0 ? (rng.chance(0.5) ? 1 + rng.int(3) : 0) : w.hardState.vote;
      w.hardState = { term, vote, commit: Math.max(w.hardState.commit, w.snapshotIndex + rng.int(lastIndex - w.snapshotIndex + 1)) };
      w.hardState = { ...w.hardState, commit: Math.min(w.hardState.commit, lastIndex) };
      w.raft.setHardState(w.hardState);
      trace.push(`hs ${JSON.stringify(w.hardState)}`);
    } else if (r < 0.75) {
      w.raft.sync();
      w.syncedEntries = [...w.entries];
      w.syncedHardState = w.hardState;
      trace.push('sync');
    } else if (r < 0.8 && w.hardState.commit > w.snapshotIndex) {
      // Snapshots cover committed, synced entries only, as the node takes them.
      w.raft.sync();
      w.syncedEntries = [...w.entries];
      w.syncedHardState = w.hardState;
      const at = w.hardState.commit;
      const term = w.entries.find((e) => e.index === at)!.term;
      w.raft.saveSnapshot(makeSnapshot(at, term));
      w.snapshotIndex = at;
      w.snapshotTerm = term;
      w.entries = w.entries.filter((e) => e.index > at);
      w.syncedEntries = w.syncedEntries.filter((e) => e.index > at);
      trace.push(`snapshot ${at}`);
    } else if (r < 0.95) {
      const torn = rng.chance(0.5);
      trace.push(torn ? 'crash(torn)' : 'crash');
      w.disk.crash({ tornTail: torn });
      raftReopen(w);
    }
  }
  w.raft.close();
  w.syncedEntries = [...w.entries];
  w.syncedHardState = w.hardState;
  raftReopen(w);
  expect(w.raft.lastIndex(), 'close syncs').to.equal(w.entries[w.entries.length - 1]?.index ?? w.snapshotIndex);
  w.raft.close();
}

function raftAppend(w: RaftWorld, trace: string[]): void {
  const lastIndex = w.entries[w.entries.length - 1]?.index ?? w.snapshotIndex;
  // Sometimes a conflicting suffix from a new leader, never below the commit index.
  let first = lastIndex + 1;
  if (w.rng.chance(0.2) && lastIndex > w.hardState.commit) first = w.hardState.commit + 1 + w.rng.int(lastIndex - w.hardState.commit);
  const prevTerm = first - 1 === w.snapshotIndex ? w.snapshotTerm : (w.entries.find((e) => e.index === first - 1)?.term ?? 0);
  let term = Math.max(prevTerm, w.hardState.term);
  if (first <= lastIndex) term = Math.max(term, w.entries[w.entries.length - 1]!.term) + 1;
  const batch: Entry[] = [];
  for (let i = 0, n = 1 + w.rng.int(4); i < n; i++) batch.push(randomEntry(w.rng, first + i, term, 60));
  w.raft.appendEntries(batch);
  if (first <= lastIndex) {
    // The cut is fsynced as it happens (raft-log-segment.ts): it takes back what was synced past it.
    w.syncedEntries = w.syncedEntries.filter((e) => e.index < first);
  }
  w.entries = [...w.entries.filter((e) => e.index < first), ...batch];
  if (term > w.hardState.term) w.hardState = { ...w.hardState, term, vote: 0 };
  w.raft.setHardState(w.hardState);
  for (const e of batch) {
    const seen = w.history.get(e.index) ?? new Set<string>();
    seen.add(key(e));
    w.history.set(e.index, seen);
  }
  trace.push(`append ${first}..${first + batch.length - 1}@${term}`);
}

function raftReopen(w: RaftWorld): void {
  w.raft = RaftDisk.open(w.dir, { fs: w.disk.fs, segmentBytesMax: 400 });
  const loaded = w.raft.loaded;
  const hs = loaded.hardState;
  const synced = w.syncedHardState;
  expect(hs.term, 'the term never goes back').to.be.at.least(synced.term);
  if (hs.term === synced.term) expect(hs.vote, 'a synced vote survives').to.equal(synced.vote);
  expect(loaded.snapshot?.meta.index ?? 0, 'a saved snapshot survives').to.equal(w.snapshotIndex);
  const byIndex = new Map(loaded.entries.map((e) => [e.index, e]));
  for (const e of w.syncedEntries) {
    const got = byIndex.get(e.index);
    expect(got !== undefined && key(got) === key(e), `synced entry ${e.index} lost or changed`).to.equal(true);
  }
  let expected = w.snapshotIndex + 1;
  for (const e of loaded.entries) {
    expect(e.index, 'contiguous').to.equal(expected++);
    expect(w.history.get(e.index)?.has(key(e)), `entry ${e.index} was never written`).to.equal(true);
  }
  expect(hs.commit).to.be.at.most(w.raft.lastIndex());
  // The recovered entries are the truth now: everything recovered is on the disk. The hard state may have been
  // repaired in memory only (a term raised to the log's): the quorum-state file keeps the last synced one until
  // the next sync, so that stays the bar.
  w.entries = [...loaded.entries];
  w.syncedEntries = [...loaded.entries];
  w.hardState = hs;
}
