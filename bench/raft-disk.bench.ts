// Benchmark of the Raft durable state (src/raft-node/raft-disk.ts): 64-byte
// entries appended in batches of 100 with one sync() per batch — the group
// commit the node driver does per batch of Readys. Two workloads:
//   - log-only:          the hard state does not change, so sync() is one fdatasync;
//   - commit-per-batch:  the commit index changes every batch (a busy leader),
//                        so sync() also rewrites quorum-state (temp, fsync, rename, fsync dir).
// Each workload is bounded by time and batch count; total run ≤ 10 s.
// Run: node <outDir>/bench/raft-disk.bench.js [--duration-ms N]

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EntryType, type Entry } from '../src/raft/types.js';
import { RaftDisk } from '../src/raft-node/raft-disk.js';

export interface RaftDiskBenchOptions {
  /** Wall time per workload. */
  durationMs?: number;
  batchesMax?: number;
  batchEntries?: number;
  entryBytes?: number;
}

export interface RaftDiskBenchResult {
  workload: 'log-only' | 'commit-per-batch';
  entries: number;
  syncs: number;
  elapsedMs: number;
  entriesPerSec: number;
  syncsPerSec: number;
}

const DURATION_MS_DEFAULT = 4_000;
const BATCHES_MAX_DEFAULT = 1_000_000;

export function runRaftDiskBench(opts: RaftDiskBenchOptions = {}): RaftDiskBenchResult[] {
  return (['log-only', 'commit-per-batch'] as const).map((workload) => runWorkload(workload, opts));
}

function runWorkload(workload: RaftDiskBenchResult['workload'], opts: RaftDiskBenchOptions): RaftDiskBenchResult {
  const durationMs = opts.durationMs ?? DURATION_MS_DEFAULT;
  const batchesMax = opts.batchesMax ?? BATCHES_MAX_DEFAULT;
  const batchEntries = opts.batchEntries ?? 100;
  const data = new Uint8Array(opts.entryBytes ?? 64).fill(0x5a);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-raft-disk-bench-'));
  try {
    const disk = RaftDisk.open(path.join(root, '__cluster_metadata-0'));
    disk.setHardState({ term: 1, vote: 1, commit: 0 });
    disk.sync();
    let next = 1;
    let syncs = 0;
    const start = performance.now();
    while (syncs < batchesMax && performance.now() - start < durationMs) {
      const batch: Entry[] = [];
      for (let i = 0; i < batchEntries; i++) batch.push({ term: 1, index: next++, type: EntryType.Normal, data });
      disk.appendEntries(batch);
      if (workload === 'commit-per-batch') disk.setHardState({ term: 1, vote: 1, commit: next - 1 });
      disk.sync();
      syncs++;
    }
    const elapsedMs = performance.now() - start;
    disk.close();
    const entries = next - 1;
    return { workload, entries, syncs, elapsedMs, entriesPerSec: (entries * 1000) / elapsedMs, syncsPerSec: (syncs * 1000) / elapsedMs };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

function main(): void {
  const flag = process.argv.indexOf('--duration-ms');
  const durationMs = flag >= 0 ? Number(process.argv[flag + 1]) : DURATION_MS_DEFAULT;
  for (const r of runRaftDiskBench({ durationMs })) {
    console.log(`${r.workload.padEnd(17)} ${Math.round(r.entriesPerSec).toLocaleString('en')} entries/s  ` +
      `${Math.round(r.syncsPerSec).toLocaleString('en')} syncs/s  (${r.entries} entries, ${r.syncs} syncs, ${Math.round(r.elapsedMs)} ms)`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
