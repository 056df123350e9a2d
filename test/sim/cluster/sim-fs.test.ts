import { expect } from 'chai';
import { ManualClock, ManualScheduler } from '../../../src/util/clock.js';
import { SeededRng } from '../../../src/util/rng.js';
import { fsyncDir, writeFileAtomic } from '../../../src/util/fs-util.js';
import { SimFileSystem, simDisk } from './sim-fs.js';

function syncDir(fs: SimFileSystem, dir: string): void {
  fsyncDir(fs, dir);
}

function write(fs: SimFileSystem, file: string, text: string, position: number, mode: 'w' | 'r+' | 'c' = 'c'): number {
  const fd = fs.openSync(file, mode);
  const buf = Buffer.from(text);
  fs.writeSync(fd, buf, 0, buf.length, position);
  return fd;
}

function text(fs: SimFileSystem, file: string): string {
  return fs.readFileSync(file).toString();
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
  return undefined;
}

describe('SimFileSystem', () => {
  let fs: SimFileSystem;
  beforeEach(() => {
    fs = new SimFileSystem({ rng: new SeededRng(7) });
    fs.mkdirSync('/d');
    syncDir(fs, '/');
  });

  it('reads what was written, at positions, with POSIX error codes', () => {
    const fd = write(fs, '/d/f', 'hello', 0);
    fs.writeSync(fd, Buffer.from('XY'), 0, 2, 7);
    expect(codeOf(() => fs.readSync(fd, Buffer.alloc(16), 0, 16, 0)), 'opened write-only').to.equal('EBADF');
    fs.closeSync(fd);
    expect(fs.readFileSync('/d/f')).to.deep.equal(Buffer.from('hello\0\0XY'));
    expect(fs.statSync('/d/f')).to.include({ size: 9, isDirectory: false });
    expect(fs.readdirSync('/d')).to.deep.equal(['f']);
    expect(codeOf(() => fs.openSync('/d/nope', 'r'))).to.equal('ENOENT');
    expect(codeOf(() => fs.openSync('/d/f', 'wx'))).to.equal('EEXIST');
    expect(codeOf(() => fs.readdirSync('/d/f'))).to.equal('ENOTDIR');
    expect(codeOf(() => fs.mkdirSync('/x/y'))).to.equal('ENOENT');
    expect(codeOf(() => fs.closeSync(fd))).to.equal('EBADF');
    expect(codeOf(() => fs.unlinkSync('/d'))).to.equal('EISDIR');
  });

  it('keeps after a crash only what fsync made durable', () => {
    const fd = write(fs, '/d/f', 'synced', 0);
    fs.fsyncSync(fd);
    syncDir(fs, '/d');
    fs.writeSync(fd, Buffer.from('-lost'), 0, 5, 6);
    expect(text(fs, '/d/f')).to.equal('synced-lost');
    fs.crash();
    expect(text(fs, '/d/f')).to.equal('synced');
    expect(codeOf(() => fs.closeSync(fd)), 'descriptors die with the process').to.equal('EBADF');
  });

  it('loses a new name until its directory is fsynced, even when the data was', () => {
    const fd = write(fs, '/d/new', 'data', 0);
    fs.fsyncSync(fd);
    fs.crash();
    expect(fs.existsSync('/d/new')).to.equal(false);
    const fd2 = write(fs, '/d/new', 'data', 0);
    fs.fsyncSync(fd2);
    syncDir(fs, '/d');
    fs.crash();
    expect(text(fs, '/d/new')).to.equal('data');
  });

  it('undoes an unsynced rename, unlink and mkdir at a crash', () => {
    writeFileAtomic(fs, '/d/a', 'A');
    fs.renameSync('/d/a', '/d/b');
    fs.mkdirSync('/d/sub');
    fs.crash();
    expect(fs.readdirSync('/d')).to.deep.equal(['a']);
    fs.unlinkSync('/d/a');
    fs.crash();
    expect(text(fs, '/d/a')).to.equal('A');
    fs.unlinkSync('/d/a');
    syncDir(fs, '/d');
    fs.crash();
    expect(fs.existsSync('/d/a')).to.equal(false);
  });

  it('writeFileAtomic leaves the old or the new version at every crash point', () => {
    writeFileAtomic(fs, '/d/state', 'v1');
    writeFileAtomic(fs, '/d/state', 'v2');
    fs.crash();
    expect(text(fs, '/d/state')).to.equal('v2');
    // Without the directory fsync the rename is lost: the old version is back.
    const fd = fs.openSync('/d/state.tmp', 'w');
    fs.writeSync(fd, Buffer.from('v3'), 0, 2, 0);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync('/d/state.tmp', '/d/state');
    fs.crash();
    expect(text(fs, '/d/state')).to.equal('v2');
  });

  it('undoes unsynced truncations and overwrites in order', () => {
    const fd = write(fs, '/d/f', 'abcdefgh', 0);
    fs.fsyncSync(fd);
    syncDir(fs, '/d');
    fs.ftruncateSync(fd, 2);
    fs.writeSync(fd, Buffer.from('XYZ'), 0, 3, 1);
    fs.ftruncateSync(fd, 10);
    expect(fs.readFileSync('/d/f')).to.deep.equal(Buffer.from('aXYZ\0\0\0\0\0\0'));
    fs.crash();
    expect(text(fs, '/d/f')).to.equal('abcdefgh');
  });

  it('a torn-tail crash keeps a prefix of the unsynced writes, the last one possibly cut', () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 60; seed++) {
      const disk = new SimFileSystem({ rng: new SeededRng(seed) });
      const fd = write(disk, '/f', 'base', 0);
      disk.fsyncSync(fd);
      fsyncDir(disk, '/');
      disk.writeSync(fd, Buffer.from('-one'), 0, 4, 4);
      disk.writeSync(fd, Buffer.from('-two'), 0, 4, 8);
      disk.crash({ tornTail: true });
      const got = text(disk, '/f');
      expect('base-one-two'.startsWith(got) && got.startsWith('base'), got).to.equal(true);
      seen.add(got);
    }
    expect(seen.has('base'), 'sometimes all is lost').to.equal(true);
    expect([...seen].some((s) => s.length > 4 && s.length < 8), 'sometimes the first write is torn').to.equal(true);
    expect([...seen].some((s) => s.length > 8 && s.length < 12), 'sometimes the second write is torn').to.equal(true);
  });

  it('the same seed tears the same way', () => {
    const run = (): string[] => {
      const disk = new SimFileSystem({ rng: new SeededRng(42) });
      for (const name of ['a', 'b', 'c']) {
        const fd = write(disk, `/${name}`, 'x', 0);
        disk.fsyncSync(fd);
        disk.writeSync(fd, Buffer.from('0123456789'), 0, 10, 1);
      }
      fsyncDir(disk, '/');
      disk.crash({ tornTail: true });
      return disk.listFiles().map((f) => text(disk, f));
    };
    expect(run()).to.deep.equal(run());
  });

  it('rm -r and rename of directories follow the same rules', () => {
    fs.mkdirSync('/d/t-0/x', { recursive: true });
    writeFileAtomic(fs, '/d/t-0/x/f', 'F');
    syncDir(fs, '/d');
    syncDir(fs, '/d/t-0');
    fs.renameSync('/d/t-0', '/d/t-0.1-delete');
    syncDir(fs, '/d');
    fs.rmSync('/d/t-0.1-delete', { recursive: true, force: true });
    expect(fs.readdirSync('/d')).to.deep.equal([]);
    fs.crash();
    expect(fs.readdirSync('/d')).to.deep.equal(['t-0.1-delete']);
    expect(text(fs, '/d/t-0.1-delete/x/f')).to.equal('F');
    expect(codeOf(() => fs.rmSync('/d/none'))).to.equal('ENOENT');
    fs.rmSync('/d/none', { force: true });
  });

  it('a slow disk completes async fsyncs later on the scheduler; a crash first loses them', async () => {
    const clock = new ManualClock();
    const scheduler = new ManualScheduler(clock);
    const disk = simDisk({ host: 'n1', clock, scheduler, rng: new SeededRng(1) });
    const file = `${disk.dataDir}/f`;
    const fd = write(disk.fs, file, 'one', 0);
    fsyncDir(disk.fs, disk.dataDir);
    disk.setSlow(50);
    let done = false;
    const synced = disk.fs.fsync(fd).then(() => {
      done = true;
    });
    disk.fs.writeSync(fd, Buffer.from('+two'), 0, 4, 3);
    scheduler.advance(49);
    await Promise.resolve();
    expect(done).to.equal(false);
    scheduler.advance(1);
    await synced;
    disk.crash();
    expect(text(disk.fs, file), 'what was written before the fsync call').to.equal('one');

    const fd2 = write(disk.fs, file, 'three', 0, 'w');
    let answered = false;
    void disk.fs.fsync(fd2).then(() => {
      answered = true;
    });
    disk.crash();
    scheduler.advance(100);
    await Promise.resolve();
    expect(answered, 'a crashed process gets no answer').to.equal(false);
    expect(text(disk.fs, file)).to.equal('one');
    disk.setSlow(null);
    const fd3 = disk.fs.openSync(file, 'r+');
    disk.fs.writeSync(fd3, Buffer.from('ONE'), 0, 3, 0);
    await disk.fs.fsync(fd3);
    disk.crash();
    expect(text(disk.fs, file)).to.equal('ONE');
  });

  it('opens a directory read-only to fsync it, and refuses to write it', () => {
    expect(codeOf(() => fs.openSync('/d', 'r+'))).to.equal('EISDIR');
    const fd = fs.openSync('/d', 'r');
    expect(fs.fstatSync(fd).isDirectory).to.equal(true);
    expect(codeOf(() => fs.readSync(fd, Buffer.alloc(1), 0, 1, 0))).to.equal('EISDIR');
    fs.closeSync(fd);
  });
});
