// The file-system seam: every call storage, the Raft disk, the producer-state
// snapshots and the data dir make to the disk goes through a `FileSystem`,
// injected as the field `fs` (default NodeFileSystem only where a process is
// composed). The simulation plugs in an in-memory disk
// (test/sim/cluster/sim-fs.ts) that loses what was not fsynced at a crash and
// can tear the last write, so the recovery code is tested against the crash
// model it claims to handle.
//
// The interface is the set of (mostly synchronous) calls the code already
// made on `node:fs`, with the same meaning, so NodeFileSystem is a thin
// forwarder. Conventions every implementation keeps:
//   - a failing call throws an Error whose `code` is the POSIX name (ENOENT,
//     EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, EBADF, ...), as node:fs does; callers
//     test `code` (e.g. "missing file" is ENOENT);
//   - file descriptors are plain numbers; reads and writes are positioned
//     (pread/pwrite) and never move a shared cursor;
//   - durability: written bytes and new file lengths reach the disk only with
//     fsync/fdatasync of that file; a directory entry created, renamed or
//     removed reaches it only with an fsync of the directory (a descriptor
//     opened on the directory with mode 'r'). That is the contract of POSIX
//     and of ext4 without data=journal, and the one the simulated disk
//     enforces on crash.

import * as nodeFs from 'node:fs';

/**
 * How to open a file (node:fs's flag strings, plus 'c'):
 *   'r'  read only; must exist (also how a directory is opened to fsync it);
 *   'r+' read and write; must exist;
 *   'w'  write; created or truncated;
 *   'w+' read and write; created or truncated;
 *   'wx' write; created, and fails with EEXIST if it exists;
 *   'c'  write; created if missing, never truncated (O_WRONLY | O_CREAT).
 */
export type OpenMode = 'r' | 'r+' | 'w' | 'w+' | 'wx' | 'c';

export interface FileStat {
  readonly size: number;
  /** Last data modification, wall-clock ms (retention of segments without timestamps). */
  readonly mtimeMs: number;
  readonly isDirectory: boolean;
}

export interface FileSystem {
  /** Opens `path` (see OpenMode); returns a descriptor. */
  openSync(path: string, mode: OpenMode): number;
  closeSync(fd: number): void;
  /** pread: reads up to `length` bytes at file `position` into `buf[offset..]`; returns the count (0 at end of file). */
  readSync(fd: number, buf: Uint8Array, offset: number, length: number, position: number): number;
  /** pwrite: writes up to `length` bytes of `buf[offset..]` at file `position`; returns the count written. */
  writeSync(fd: number, buf: Uint8Array, offset: number, length: number, position: number): number;
  ftruncateSync(fd: number, length: number): void;
  fstatSync(fd: number): FileStat;
  /** Makes the file's data and length (or, for a directory, its entries) durable. */
  fsyncSync(fd: number): void;
  /** fsync without the metadata a later read does not need; data and length are durable. */
  fdatasyncSync(fd: number): void;
  /** fsync off the event loop; resolves once the bytes written before the call are durable. */
  fsync(fd: number): Promise<void>;
  /** Opens `path` read-only, fsyncs and closes it, off the event loop (rejects with ENOENT if missing). */
  fsyncPath(path: string): Promise<void>;

  readFileSync(path: string): Buffer;
  /** Writes a whole file (created or truncated; `exclusive`: fails with EEXIST if it exists). No fsync. */
  writeFileSync(path: string, data: string | Uint8Array, opts?: { exclusive?: boolean }): void;
  /** Atomic replace of `to` by `from` (both in one file system). */
  renameSync(from: string, to: string): void;
  unlinkSync(path: string): void;
  mkdirSync(path: string, opts?: { recursive?: boolean }): void;
  /** rm: `recursive` removes a directory tree; `force` ignores a missing path. */
  rmSync(path: string, opts?: { recursive?: boolean; force?: boolean }): void;
  /** Entry names of a directory, in no particular order. */
  readdirSync(path: string): string[];
  existsSync(path: string): boolean;
  statSync(path: string): FileStat;
}

function statOf(s: nodeFs.Stats): FileStat {
  return { size: s.size, mtimeMs: s.mtimeMs, isDirectory: s.isDirectory() };
}

const NODE_FLAGS: Record<OpenMode, string | number> = {
  r: 'r',
  'r+': 'r+',
  w: 'w',
  'w+': 'w+',
  wx: 'wx',
  c: nodeFs.constants.O_WRONLY | nodeFs.constants.O_CREAT,
};

/** The real disk, through node:fs. */
export const NodeFileSystem: FileSystem = {
  openSync: (p, mode) => nodeFs.openSync(p, NODE_FLAGS[mode], 0o644),
  closeSync: (fd) => nodeFs.closeSync(fd),
  readSync: (fd, buf, offset, length, position) => nodeFs.readSync(fd, buf, offset, length, position),
  writeSync: (fd, buf, offset, length, position) => nodeFs.writeSync(fd, buf, offset, length, position),
  ftruncateSync: (fd, length) => nodeFs.ftruncateSync(fd, length),
  fstatSync: (fd) => statOf(nodeFs.fstatSync(fd)),
  fsyncSync: (fd) => nodeFs.fsyncSync(fd),
  fdatasyncSync: (fd) => nodeFs.fdatasyncSync(fd),
  fsync: (fd) => new Promise<void>((resolve, reject) => nodeFs.fsync(fd, (err) => (err ? reject(err) : resolve()))),
  fsyncPath: (p) => new Promise<void>((resolve, reject) => {
    nodeFs.open(p, 'r', (openErr, fd) => {
      if (openErr) return reject(openErr);
      nodeFs.fsync(fd, (syncErr) => nodeFs.close(fd, () => (syncErr ? reject(syncErr) : resolve())));
    });
  }),
  readFileSync: (p) => nodeFs.readFileSync(p),
  writeFileSync: (p, data, opts) => nodeFs.writeFileSync(p, data, opts?.exclusive === true ? { flag: 'wx' } : {}),
  renameSync: (from, to) => nodeFs.renameSync(from, to),
  unlinkSync: (p) => nodeFs.unlinkSync(p),
  mkdirSync: (p, opts) => {
    nodeFs.mkdirSync(p, { recursive: opts?.recursive === true });
  },
  rmSync: (p, opts) => nodeFs.rmSync(p, { recursive: opts?.recursive === true, force: opts?.force === true }),
  readdirSync: (p) => nodeFs.readdirSync(p),
  existsSync: (p) => nodeFs.existsSync(p),
  statSync: (p) => statOf(nodeFs.statSync(p)),
};
