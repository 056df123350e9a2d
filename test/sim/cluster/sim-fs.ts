// A simulated disk: an in-memory FileSystem (src/util/file-system.ts) that
// loses, at crash(), everything the code did not make durable — so the
// simulation tests the recovery code against the crash model it claims to
// handle, and an ordering bug (answering before a sync) becomes a lost vote
// or a lost acknowledged write.
//
// The crash model (POSIX, and ext4 in its default data=ordered mode without
// data=journal, where nothing is promised beyond fsync):
//   - File contents. Every file has what a reader sees now (volatile) and
//     what survives a crash (durable). fsync/fdatasync of a descriptor makes
//     the file's current bytes and length durable; nothing else does (no
//     background writeback is modelled, so "not synced" means "lost").
//   - Directory entries. Creating, renaming or removing a name changes the
//     directory at once, but the change is durable only once the directory
//     itself is fsynced (a descriptor opened on it with mode 'r'). A file
//     whose data was fsynced but whose new name was not is gone after a
//     crash; a renamed file whose directory was not fsynced is back under its
//     old name. A rename between two directories needs both fsynced. The
//     root directory always exists.
//   - Torn tails (crash({ tornTail: true })): instead of losing every
//     unsynced change of a file, a random prefix of the sequence of its
//     unsynced writes and truncations survives — as if the kernel had begun
//     writing them back in order — and the first change that does not
//     survive whole may survive in part: a random prefix of that write's
//     bytes (a truncation is all or nothing). Directory changes are never
//     torn. Bytes written past the end of a file leave zeros in the gap, as
//     a real file's hole reads.
//   - A crash ends the process that used the disk: every open descriptor
//     becomes invalid (EBADF), and async fsyncs in flight never complete.
//   - Slow disk (setSlow(ms)): an async fsync (fsync, fsyncPath) makes the
//     bytes written before the call durable, and resolves, `ms` later on the
//     injected scheduler (a crash before then loses them). Synchronous fsyncs
//     complete at once: the simulated process cannot block.
//
// Implementation: a file keeps its current bytes plus an undo log of its
// unsynced changes (the bytes each write overwrote, the length before it), so
// an fsync is O(1) — drop the log — and a crash undoes the log, newest first.

import * as path from 'node:path';
import type { Clock, Scheduler } from '../../../src/util/clock.js';
import type { FileStat, FileSystem, OpenMode } from '../../../src/util/file-system.js';
import type { Rng } from '../../../src/util/rng.js';

/** What a write or truncation changed, to undo it at a crash. */
type Undo =
  | { readonly kind: 'write'; readonly pos: number; readonly length: number; readonly oldSize: number; readonly old: Buffer }
  | { readonly kind: 'truncate'; readonly newSize: number; readonly oldSize: number; readonly old: Buffer };

class FileNode {
  readonly kind = 'file';
  data = Buffer.alloc(0);
  size = 0;
  mtimeMs = 0;
  /** Unsynced changes, oldest first; the first has absolute number `undoBase`. */
  undo: Undo[] = [];
  undoBase = 0;

  bytes(): Buffer {
    return this.data.subarray(0, this.size);
  }

  private reserve(n: number): void {
    if (n <= this.data.length) return;
    const bigger = Buffer.alloc(Math.max(n, this.data.length * 2, 256));
    this.data.copy(bigger, 0, 0, this.size);
    this.data = bigger;
  }

  /** Sets the length; growing fills with zeros. */
  setSize(n: number): void {
    if (n > this.size) {
      this.reserve(n);
      this.data.fill(0, this.size, n);
    }
    this.size = n;
  }

  write(buf: Uint8Array, offset: number, length: number, pos: number): void {
    const oldSize = this.size;
    const old = Buffer.from(this.data.subarray(Math.min(pos, oldSize), Math.min(pos + length, oldSize)));
    this.undo.push({ kind: 'write', pos, length, oldSize, old });
    if (pos + length > this.size) this.setSize(pos + length);
    this.data.set(buf.subarray(offset, offset + length), pos);
  }

  truncate(n: number): void {
    const oldSize = this.size;
    this.undo.push({ kind: 'truncate', newSize: n, oldSize, old: Buffer.from(this.data.subarray(Math.min(n, oldSize), oldSize)) });
    this.setSize(n);
  }

  /** Everything so far is durable. */
  sync(): void {
    this.undoBase += this.undo.length;
    this.undo = [];
  }

  /** The changes numbered below `end` are durable (an async fsync that began when the log ended there). */
  syncUpTo(end: number): void {
    const n = end - this.undoBase;
    if (n <= 0) return;
    this.undo.splice(0, n);
    this.undoBase = end;
  }

  get undoEnd(): number {
    return this.undoBase + this.undo.length;
  }

  /**
   * Crash: undoes the unsynced changes newest first. With `keep` (torn tail),
   * the oldest `keep.changes` survive whole and the next survives as its
   * first `keep.bytes` bytes if it is a write.
   */
  crash(keep?: { changes: number; bytes: number }): void {
    const survivors = keep?.changes ?? 0;
    for (let i = this.undo.length - 1; i >= survivors; i--) {
      const u = this.undo[i]!;
      const partial = i === survivors && keep !== undefined && u.kind === 'write' ? Math.min(keep.bytes, u.length - 1) : 0;
      this.revert(u, partial);
    }
    this.undo = [];
    this.undoBase = 0;
  }

  /** Undoes one change, keeping the first `keepBytes` bytes of a write. */
  private revert(u: Undo, keepBytes: number): void {
    if (u.kind === 'truncate') {
      this.setSize(u.oldSize);
      u.old.copy(this.data, u.newSize);
      return;
    }
    // Bytes [pos + keepBytes, pos + length) go back to what they were; the file ends where it did, or after the kept prefix.
    if (keepBytes < u.old.length) u.old.copy(this.data, u.pos + keepBytes, keepBytes);
    this.size = keepBytes > 0 ? Math.max(u.oldSize, u.pos + keepBytes) : u.oldSize;
  }
}

class DirNode {
  readonly kind = 'dir';
  entries = new Map<string, Node>();
  /** The entries as of the last fsync of this directory. */
  durable = new Map<string, Node>();
  mtimeMs = 0;
}

type Node = FileNode | DirNode;

interface Descriptor {
  readonly node: Node;
  readonly readable: boolean;
  readonly writable: boolean;
}

function fsError(code: string, op: string, p: string): NodeJS.ErrnoException {
  const err = new Error(`${code}: ${op} '${p}' (simulated disk)`) as NodeJS.ErrnoException;
  err.code = code;
  err.syscall = op;
  err.path = p;
  return err;
}

export interface SimFileSystemOptions {
  /** File modification times (default: 0). */
  readonly clock?: Clock;
  /** Times slow async fsyncs (required before setSlow). */
  readonly scheduler?: Scheduler;
  /** Chooses torn tails (required for crash({ tornTail: true })). */
  readonly rng?: Rng;
}

export interface SimCrashOptions {
  /** Let a random prefix of each file's unsynced changes survive, the last one possibly torn. */
  readonly tornTail?: boolean;
}

/** Counters for tests and the simulation's report. */
export interface SimFsStats {
  fsyncs: number;
  bytesWritten: number;
  crashes: number;
  /** Files whose unsynced changes were (partly) kept by a torn-tail crash. */
  tornFiles: number;
}

export class SimFileSystem implements FileSystem {
  private root = new DirNode();
  private fds = new Map<number, Descriptor>();
  private nextFd = 3;
  /** Bumped by every crash: async fsyncs begun before one never complete. */
  private incarnation = 0;
  private slowMs: number | null = null;
  readonly stats: SimFsStats = { fsyncs: 0, bytesWritten: 0, crashes: 0, tornFiles: 0 };

  constructor(private readonly opts: SimFileSystemOptions = {}) {}

  // ---- faults ----------------------------------------------------------------

  /** The process using the disk dies: unsynced changes are lost (or torn), descriptors closed. */
  crash(opts: SimCrashOptions = {}): void {
    const rng = opts.tornTail === true ? this.opts.rng : undefined;
    if (opts.tornTail === true && rng === undefined) throw new Error('SimFileSystem: crash({ tornTail }) needs an rng');
    this.stats.crashes++;
    this.incarnation++;
    this.fds.clear();
    const seen = new Set<Node>();
    const visit = (dir: DirNode): void => {
      // Sorted, so the torn-tail choices come in the same order every run.
      dir.entries = new Map([...dir.durable].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      dir.durable = new Map(dir.entries);
      for (const node of dir.entries.values()) {
        if (seen.has(node)) continue;
        seen.add(node);
        if (node.kind === 'dir') visit(node);
        else this.crashFile(node, rng);
      }
    };
    visit(this.root);
  }

  private crashFile(file: FileNode, rng: Rng | undefined): void {
    if (rng === undefined || file.undo.length === 0) return file.crash();
    const changes = rng.int(file.undo.length + 1);
    const next = file.undo[changes];
    const bytes = next?.kind === 'write' && next.length > 1 ? rng.int(next.length) : 0;
    if (changes > 0 || bytes > 0) this.stats.tornFiles++;
    file.crash({ changes, bytes });
  }

  /** Async fsyncs complete `delayMs` later (null: at once). */
  setSlow(delayMs: number | null): void {
    if (delayMs !== null && this.opts.scheduler === undefined) throw new Error('SimFileSystem: a slow disk needs a scheduler');
    this.slowMs = delayMs;
  }

  // ---- inspection (tests) ------------------------------------------------------

  /** Every file path on the disk as a reader sees it now, sorted. */
  listFiles(): string[] {
    const out: string[] = [];
    const walk = (dir: DirNode, at: string): void => {
      for (const [name, node] of [...dir.entries].sort(([a], [b]) => (a < b ? -1 : 1))) {
        const p = path.posix.join(at, name);
        if (node.kind === 'dir') walk(node, p);
        else out.push(p);
      }
    };
    walk(this.root, '/');
    return out;
  }

  // ---- paths -------------------------------------------------------------------

  private split(p: string): { parent: string; name: string; full: string } {
    const full = path.posix.resolve('/', p);
    return { parent: path.posix.dirname(full), name: path.posix.basename(full), full };
  }

  private lookup(p: string): Node | undefined {
    const full = path.posix.resolve('/', p);
    let node: Node = this.root;
    for (const part of full.split('/')) {
      if (part === '') continue;
      if (node.kind !== 'dir') return undefined;
      const next = node.entries.get(part);
      if (next === undefined) return undefined;
      node = next;
    }
    return node;
  }

  private dirOf(p: string, op: string): DirNode {
    const node = this.lookup(p);
    if (node === undefined) throw fsError('ENOENT', op, p);
    if (node.kind !== 'dir') throw fsError('ENOTDIR', op, p);
    return node;
  }

  private fileAt(p: string, op: string): FileNode {
    const node = this.lookup(p);
    if (node === undefined) throw fsError('ENOENT', op, p);
    if (node.kind !== 'file') throw fsError('EISDIR', op, p);
    return node;
  }

  private desc(fd: number, op: string): Descriptor {
    const d = this.fds.get(fd);
    if (d === undefined) throw fsError('EBADF', op, `fd ${fd}`);
    return d;
  }

  private fileDesc(fd: number, op: string, need: 'read' | 'write'): FileNode {
    const d = this.desc(fd, op);
    if (d.node.kind !== 'file') throw fsError('EISDIR', op, `fd ${fd}`);
    if (need === 'read' ? !d.readable : !d.writable) throw fsError('EBADF', op, `fd ${fd}`);
    return d.node;
  }

  private now(): number {
    return this.opts.clock?.nowMs() ?? 0;
  }

  // ---- FileSystem: descriptors -------------------------------------------------------

  openSync(p: string, mode: OpenMode): number {
    const { parent, name, full } = this.split(p);
    let node = this.lookup(full);
    if (node !== undefined && node.kind === 'dir') {
      if (mode !== 'r') throw fsError('EISDIR', 'open', p);
    } else if (mode === 'r' || mode === 'r+') {
      if (node === undefined) throw fsError('ENOENT', 'open', p);
    } else {
      if (mode === 'wx' && node !== undefined) throw fsError('EEXIST', 'open', p);
      if (node === undefined) {
        const dir = this.dirOf(parent, 'open');
        node = new FileNode();
        node.mtimeMs = this.now();
        dir.entries.set(name, node);
      } else if (mode !== 'c' && node.size > 0) {
        node.truncate(0);
      }
    }
    const fd = this.nextFd++;
    this.fds.set(fd, { node, readable: mode === 'r' || mode === 'r+' || mode === 'w+', writable: mode !== 'r' });
    return fd;
  }

  closeSync(fd: number): void {
    this.desc(fd, 'close');
    this.fds.delete(fd);
  }

  readSync(fd: number, buf: Uint8Array, offset: number, length: number, position: number): number {
    const file = this.fileDesc(fd, 'read', 'read');
    const n = Math.max(0, Math.min(length, file.size - position));
    if (n > 0) buf.set(file.data.subarray(position, position + n), offset);
    return n;
  }

  writeSync(fd: number, buf: Uint8Array, offset: number, length: number, position: number): number {
    const file = this.fileDesc(fd, 'write', 'write');
    file.write(buf, offset, length, position);
    file.mtimeMs = this.now();
    this.stats.bytesWritten += length;
    return length;
  }

  ftruncateSync(fd: number, length: number): void {
    const file = this.fileDesc(fd, 'ftruncate', 'write');
    file.truncate(length);
    file.mtimeMs = this.now();
  }

  fstatSync(fd: number): FileStat {
    return this.statOf(this.desc(fd, 'fstat').node);
  }

  fsyncSync(fd: number): void {
    this.syncNode(this.desc(fd, 'fsync').node);
  }

  fdatasyncSync(fd: number): void {
    this.syncNode(this.desc(fd, 'fdatasync').node);
  }

  fsync(fd: number): Promise<void> {
    try {
      return this.syncLater(this.desc(fd, 'fsync').node);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  fsyncPath(p: string): Promise<void> {
    const node = this.lookup(p);
    return node === undefined ? Promise.reject(fsError('ENOENT', 'open', p)) : this.syncLater(node);
  }

  private syncNode(node: Node): void {
    this.stats.fsyncs++;
    if (node.kind === 'file') node.sync();
    else node.durable = new Map(node.entries);
  }

  /** An async fsync: what was written before the call becomes durable now, or `slowMs` later. */
  private syncLater(node: Node): Promise<void> {
    if (this.slowMs === null) {
      this.syncNode(node);
      return Promise.resolve();
    }
    const incarnation = this.incarnation;
    const upTo = node.kind === 'file' ? node.undoEnd : 0;
    const entries = node.kind === 'dir' ? new Map(node.entries) : undefined;
    return new Promise<void>((resolve) => {
      this.opts.scheduler!.schedule(this.slowMs ?? 0, () => {
        if (incarnation !== this.incarnation) return; // the process crashed meanwhile: never answered
        this.stats.fsyncs++;
        if (node.kind === 'file') node.syncUpTo(upTo);
        else if (entries !== undefined) node.durable = entries;
        resolve();
      });
    });
  }

  // ---- FileSystem: whole files and names --------------------------------------------------

  readFileSync(p: string): Buffer {
    return Buffer.from(this.fileAt(p, 'open').bytes());
  }

  writeFileSync(p: string, data: string | Uint8Array, opts?: { exclusive?: boolean }): void {
    const fd = this.openSync(p, opts?.exclusive === true ? 'wx' : 'w');
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      if (bytes.length > 0) this.writeSync(fd, bytes, 0, bytes.length, 0);
    } finally {
      this.closeSync(fd);
    }
  }

  renameSync(from: string, to: string): void {
    const src = this.split(from);
    const dst = this.split(to);
    const fromDir = this.dirOf(src.parent, 'rename');
    const node = fromDir.entries.get(src.name);
    if (node === undefined) throw fsError('ENOENT', 'rename', from);
    const toDir = this.dirOf(dst.parent, 'rename');
    const existing = toDir.entries.get(dst.name);
    if (existing === node) return;
    if (existing !== undefined) {
      if (node.kind === 'file' && existing.kind === 'dir') throw fsError('EISDIR', 'rename', to);
      if (node.kind === 'dir' && existing.kind === 'file') throw fsError('ENOTDIR', 'rename', to);
      if (existing.kind === 'dir' && existing.entries.size > 0) throw fsError('ENOTEMPTY', 'rename', to);
    }
    if (node.kind === 'dir' && (dst.full + '/').startsWith(src.full + '/')) throw fsError('EINVAL', 'rename', to);
    fromDir.entries.delete(src.name);
    toDir.entries.set(dst.name, node);
  }

  unlinkSync(p: string): void {
    const { parent, name } = this.split(p);
    const dir = this.dirOf(parent, 'unlink');
    const node = dir.entries.get(name);
    if (node === undefined) throw fsError('ENOENT', 'unlink', p);
    if (node.kind === 'dir') throw fsError('EISDIR', 'unlink', p);
    dir.entries.delete(name);
  }

  mkdirSync(p: string, opts?: { recursive?: boolean }): void {
    const { parent, name, full } = this.split(p);
    const existing = this.lookup(full);
    if (existing !== undefined) {
      if (opts?.recursive === true && existing.kind === 'dir') return;
      throw fsError('EEXIST', 'mkdir', p);
    }
    if (full === '/') return;
    if (opts?.recursive === true && this.lookup(parent) === undefined) this.mkdirSync(parent, opts);
    const dir = this.dirOf(parent, 'mkdir');
    const node = new DirNode();
    node.mtimeMs = this.now();
    dir.entries.set(name, node);
  }

  rmSync(p: string, opts?: { recursive?: boolean; force?: boolean }): void {
    const { parent, name, full } = this.split(p);
    const node = this.lookup(full);
    if (node === undefined) {
      if (opts?.force === true) return;
      throw fsError('ENOENT', 'rm', p);
    }
    if (node.kind === 'dir' && opts?.recursive !== true) throw fsError('EISDIR', 'rm', p);
    if (full === '/') throw fsError('EPERM', 'rm', p);
    // Like rm -r: every name below goes, each change waiting for its directory's fsync to be durable.
    if (node.kind === 'dir') for (const child of [...node.entries.keys()]) this.rmSync(path.posix.join(full, child), opts);
    this.dirOf(parent, 'rm').entries.delete(name);
  }

  readdirSync(p: string): string[] {
    return [...this.dirOf(p, 'scandir').entries.keys()].sort();
  }

  existsSync(p: string): boolean {
    return this.lookup(p) !== undefined;
  }

  statSync(p: string): FileStat {
    const node = this.lookup(p);
    if (node === undefined) throw fsError('ENOENT', 'stat', p);
    return this.statOf(node);
  }

  private statOf(node: Node): FileStat {
    return node.kind === 'file'
      ? { size: node.size, mtimeMs: node.mtimeMs, isDirectory: false }
      : { size: 0, mtimeMs: node.mtimeMs, isDirectory: true };
  }
}

/** One node's disk as the cluster simulation drives it (test/sim/cluster/cluster.ts ClusterDisk). */
export interface SimDisk {
  readonly fs: SimFileSystem;
  readonly dataDir: string;
  crash(opts?: SimCrashOptions): void;
  setSlow(delayMs: number | null): void;
}

/** A fresh simulated disk for `host`, its data dir `/data/<host>` already made durable. */
export function simDisk(opts: { host: string; clock: Clock; scheduler: Scheduler; rng: Rng }): SimDisk {
  const fs = new SimFileSystem({ clock: opts.clock, scheduler: opts.scheduler, rng: opts.rng });
  const dataDir = `/data/${opts.host}`;
  fs.mkdirSync(dataDir, { recursive: true });
  for (const dir of ['/', '/data']) {
    const fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
  }
  return {
    fs,
    dataDir,
    crash: (crashOpts) => fs.crash(crashOpts),
    setSlow: (delayMs) => fs.setSlow(delayMs),
  };
}
