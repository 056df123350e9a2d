// Small synchronous file helpers shared by storage, the Raft disk and the
// server's data dir, over an injected FileSystem (file-system.ts): full writes and reads at explicit positions (pwrite/pread
// never move a shared file cursor, so a failed or partial write cannot shift
// later ones), directory fsync, and the atomic replace used by every
// checkpoint, quorum-state, snapshot and meta.properties file.
//
// Invariant of writeFileAtomic: after any crash the file is either its
// previous version or the complete new one — never a mix. The bytes go to
// `<file>.tmp`, are fsynced, and only then renamed over `<file>` (rename is
// atomic in POSIX); the directory is fsynced so the rename survives. A crash
// before the rename leaves a `.tmp` file, which recovery deletes
// (removeTempFiles).

import * as path from 'node:path';
import type { FileSystem } from './file-system.js';
import type { Logger } from './logger.js';

export const TEMP_SUFFIX = '.tmp';

/** Writes all `length` bytes of `buf[offset..]` at file `position`. */
export function writeFully(fs: FileSystem, fd: number, buf: Uint8Array, offset: number, length: number, position: number): void {
  let done = 0;
  while (done < length) {
    const n = fs.writeSync(fd, buf, offset + done, length - done, position + done);
    if (n <= 0) throw new Error(`write returned ${n}`);
    done += n;
  }
}

/** Reads up to `length` bytes at `position`; returns how many were read (fewer only at end of file). */
export function readFully(fs: FileSystem, fd: number, buf: Uint8Array, offset: number, length: number, position: number): number {
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buf, offset + done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/** Makes entries created, renamed or removed in `dir` durable. */
export function fsyncDir(fs: FileSystem, dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Async variant of fsyncDir, for background flushes. */
export function fsyncDirAsync(fs: FileSystem, dir: string): Promise<void> {
  return fs.fsyncPath(dir);
}

/** Replaces `file` with `data` (or the concatenation of chunks) atomically and durably. */
export function writeFileAtomic(fs: FileSystem, file: string, data: string | Uint8Array | readonly Uint8Array[]): void {
  const tmp = file + TEMP_SUFFIX;
  const chunks = typeof data === 'string' ? [Buffer.from(data, 'utf8')] : data instanceof Uint8Array ? [data] : data;
  const fd = fs.openSync(tmp, 'w');
  try {
    let position = 0;
    for (const chunk of chunks) {
      writeFully(fs, fd, chunk, 0, chunk.length, position);
      position += chunk.length;
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  fsyncDir(fs, path.dirname(file));
}

/** Deletes leftovers of interrupted atomic writes in `dir`; returns the names removed. */
export function removeTempFiles(fs: FileSystem, dir: string, logger: Logger): string[] {
  const removed = fs.readdirSync(dir).filter((name) => name.endsWith(TEMP_SUFFIX));
  for (const name of removed) {
    logger.warn({ file: path.join(dir, name) }, 'deleting a partial temp file left by an interrupted write');
    fs.unlinkSync(path.join(dir, name));
  }
  if (removed.length > 0) fsyncDir(fs, dir);
  return removed;
}

/** Removes `file` if it exists; returns whether it did. */
export function removeIfExists(fs: FileSystem, file: string): boolean {
  try {
    fs.unlinkSync(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
