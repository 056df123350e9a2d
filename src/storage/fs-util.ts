// Small synchronous file helpers shared by the storage modules: full writes and
// reads at explicit positions (pwrite/pread never move a shared file cursor, so
// a failed or partial write cannot shift later ones), directory fsync, and the
// atomic replace used by every checkpoint file (write temp, fsync, rename,
// fsync the directory — a reader sees the old or the new file, never a mix).

import * as fs from 'node:fs';
import * as path from 'node:path';

/** Writes all `length` bytes of `buf[offset..]` at file `position`. */
export function writeFully(fd: number, buf: Uint8Array, offset: number, length: number, position: number): void {
  let done = 0;
  while (done < length) {
    const n = fs.writeSync(fd, buf, offset + done, length - done, position + done);
    if (n <= 0) throw new Error(`write returned ${n}`);
    done += n;
  }
}

/** Reads up to `length` bytes at `position`; returns how many were read (fewer only at end of file). */
export function readFully(fd: number, buf: Uint8Array, offset: number, length: number, position: number): number {
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buf, offset + done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/** Makes entries created, renamed or removed in `dir` durable. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Async variant of fsyncDir, for background flushes; errors are passed to the callback. */
export function fsyncDirAsync(dir: string, done: (err: Error | null) => void): void {
  fs.open(dir, 'r', (openErr, fd) => {
    if (openErr) return done(openErr);
    fs.fsync(fd, (syncErr) => fs.close(fd, () => done(syncErr)));
  });
}

/** Replaces `file` with `data` atomically and durably. */
export function writeFileAtomic(file: string, data: string | Uint8Array): void {
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    writeFully(fd, bytes, 0, bytes.length, 0);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  fsyncDir(path.dirname(file));
}

/** Removes `file` if it exists; returns whether it did. */
export function removeIfExists(file: string): boolean {
  try {
    fs.unlinkSync(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
