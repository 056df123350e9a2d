// Crash-atomic small-file replacement and directory fsync, shared by the
// quorum-state and snapshot (checkpoint) files of the Raft disk.
//
// Invariant: a file written by writeFileAtomic is, after any crash, either
// absent / its previous version or the complete new version — never a mix.
// That holds because the bytes go to `<name>.tmp`, are fsynced, and only then
// renamed over `<name>` (rename is atomic in POSIX); the directory is fsynced
// so the rename itself survives a crash. A crash before the rename leaves a
// `.tmp` file behind, which recovery deletes (removeTempFiles).

import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../util/logger.js';

export const TEMP_SUFFIX = '.tmp';

/** Writes `chunks` (in order) as `dir/name`, atomically and durably. */
export function writeFileAtomic(dir: string, name: string, chunks: readonly Uint8Array[]): void {
  const tempPath = path.join(dir, name + TEMP_SUFFIX);
  const fd = fs.openSync(tempPath, 'w');
  try {
    for (const chunk of chunks) writeFully(fd, chunk, null);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tempPath, path.join(dir, name));
  fsyncDir(dir);
}

/**
 * Writes all of `buf` at `position` (null = the file's current position).
 * writeSync may write fewer bytes than asked; for regular files that is rare,
 * so this is one system call in practice.
 */
export function writeFully(fd: number, buf: Uint8Array, position: number | null): void {
  let done = 0;
  while (done < buf.length) {
    const at = position === null ? null : position + done;
    done += fs.writeSync(fd, buf, done, buf.length - done, at);
  }
}

/** Makes creations, renames and deletions of entries in `dir` durable. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Deletes leftovers of interrupted atomic writes; returns the names removed. */
export function removeTempFiles(dir: string, logger: Logger): string[] {
  const removed = fs.readdirSync(dir).filter((name) => name.endsWith(TEMP_SUFFIX));
  for (const name of removed) {
    logger.warn({ file: path.join(dir, name) }, 'deleting a partial temp file left by an interrupted write');
    fs.unlinkSync(path.join(dir, name));
  }
  if (removed.length > 0) fsyncDir(dir);
  return removed;
}
