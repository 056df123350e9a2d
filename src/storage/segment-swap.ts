// Swapping cleaned segments into a log, crash-safely, and finishing or undoing
// an interrupted swap at the next open (Kafka's `.cleaned` / `.swap` /
// `.deleted` protocol, LogLoader's swap recovery). The cleaner writes the
// surviving batches of a group of old segments into one new segment named by
// the first old one's base offset.
//
// Steps of a swap, each rename followed by an fsync of the directory:
//   1. the cleaned segment, `<base>.log.cleaned`, is fsynced;
//   2. every file of every old segment is renamed to `<name>.deleted`;
//   3. `<base>.log.cleaned` is renamed to `<base>.log.swap`     <- commit point
//   4. `<base>.log.swap` is renamed to `<base>.log`;
//   5. the `.deleted` files are removed.
// The cleaned segment's index files are written after step 5 (indexes are
// derived data: the loader rebuilds missing ones from the log).
//
// Recovery (recoverInterruptedSwap, run by the loader before it lists
// segments) looks only at the suffixes, so it needs no record of which clean
// was running:
//   - a `.cleaned` file: the swap had not committed. It is deleted and every
//     `.deleted` file is renamed back: the log is the old segments.
//   - a `.swap` file (no `.cleaned`): it had. The `.deleted` files are removed
//     and the `.swap` renamed to its live name: the log is the new segment.
//   - only `.deleted` files: step 5 was cut short; they are removed.
// At most one swap per log runs at a time (the cleaner cleans a log in one
// job), so these cases never mix two swaps.

import * as path from 'node:path';
import { assert } from '../util/assert.js';
import type { FileSystem } from '../util/file-system.js';
import { fsyncDir, removeIfExists } from '../util/fs-util.js';
import type { LogSegment } from './segment.js';

export const CLEANED_FILE_SUFFIX = '.cleaned';
export const SWAP_FILE_SUFFIX = '.swap';
export const DELETED_FILE_SUFFIX = '.deleted';

/** The points between the steps above, where a test's hook may crash the swap. */
export type SwapStep = 'cleaned-flushed' | 'old-renamed' | 'swap-renamed' | 'log-renamed' | 'deleted-removed';
export const SWAP_STEPS: readonly SwapStep[] = ['cleaned-flushed', 'old-renamed', 'swap-renamed', 'log-renamed', 'deleted-removed'];
/** Called after each step (and after each old segment's rename, with its index); throwing there simulates a crash. */
export type SwapHook = (step: SwapStep, index?: number) => void;

/** Files of a segment that may exist: the log and its indexes. */
function oldFilesOf(seg: LogSegment): string[] {
  return [seg.logFile, seg.offsetIndex.file, seg.timeIndex.file, seg.txnIndex.file];
}

/** Runs the five steps. `cleaned` holds `<base>.log.cleaned`; afterwards it is the live `<base>.log`. The caller releases `old`. */
export function swapSegments(fs: FileSystem, dir: string, old: readonly LogSegment[], cleaned: LogSegment, hook: SwapHook = () => {}): void {
  assert(cleaned.logFile.endsWith(CLEANED_FILE_SUFFIX), 'swapSegments: the new segment must be a .cleaned one');
  cleaned.flushData();
  hook('cleaned-flushed');
  const renamed: string[] = [];
  old.forEach((seg, i) => {
    for (const f of oldFilesOf(seg)) {
      if (!fs.existsSync(f)) continue;
      fs.renameSync(f, f + DELETED_FILE_SUFFIX);
      renamed.push(f + DELETED_FILE_SUFFIX);
    }
    fsyncDir(fs, dir);
    hook('old-renamed', i);
  });
  cleaned.renameLogFile(SWAP_FILE_SUFFIX);
  fsyncDir(fs, dir);
  hook('swap-renamed');
  cleaned.renameLogFile('');
  fsyncDir(fs, dir);
  hook('log-renamed');
  // The old segments keep their descriptors (unlinked files stay readable):
  // the caller releases them once they are out of its segment list, so a
  // failure anywhere in here leaves it a log whose every segment still reads.
  for (const f of renamed) removeIfExists(fs, f);
  hook('deleted-removed');
  cleaned.persistIndexes();
}

/** What recovery did, for the loader's log line; null when there was nothing to do. */
export type SwapRecovery = 'rolled-back' | 'completed' | 'cleaned-up' | null;

/** Finishes or undoes an interrupted swap in `dir` (rules in the header). */
export function recoverInterruptedSwap(fs: FileSystem, dir: string): SwapRecovery {
  const names = fs.readdirSync(dir);
  const cleaned = names.filter((n) => n.endsWith(CLEANED_FILE_SUFFIX));
  const swaps = names.filter((n) => n.endsWith(SWAP_FILE_SUFFIX));
  const deleted = names.filter((n) => n.endsWith(DELETED_FILE_SUFFIX));
  if (cleaned.length === 0 && swaps.length === 0 && deleted.length === 0) return null;
  let outcome: SwapRecovery;
  if (cleaned.length > 0) {
    for (const n of cleaned) removeIfExists(fs, path.join(dir, n));
    // A `.swap` beside a `.cleaned` cannot come from one swap; it would be a
    // later step of a swap that never began, so it goes too.
    for (const n of swaps) removeIfExists(fs, path.join(dir, n));
    for (const n of deleted) fs.renameSync(path.join(dir, n), path.join(dir, n.slice(0, -DELETED_FILE_SUFFIX.length)));
    outcome = 'rolled-back';
  } else if (swaps.length > 0) {
    for (const n of deleted) removeIfExists(fs, path.join(dir, n));
    for (const n of swaps) fs.renameSync(path.join(dir, n), path.join(dir, n.slice(0, -SWAP_FILE_SUFFIX.length)));
    outcome = 'completed';
  } else {
    for (const n of deleted) removeIfExists(fs, path.join(dir, n));
    outcome = 'cleaned-up';
  }
  fsyncDir(fs, dir);
  return outcome;
}
