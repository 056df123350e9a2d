import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AssertionError } from '../../src/util/assert.js';
import { OffsetIndex } from '../../src/storage/offset-index.js';
import { TimeIndex, NO_TIMESTAMP } from '../../src/storage/time-index.js';
import { removeDir, tempDir } from './log-test-helpers.js';
import { NodeFileSystem } from '../../src/util/file-system.js';

describe('OffsetIndex', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('sluice-index-');
  });
  afterEach(() => removeDir(dir));

  function filled(): OffsetIndex {
    const idx = new OffsetIndex(NodeFileSystem, path.join(dir, 'a.index'), 1000, 1024);
    idx.append(1010, 400);
    idx.append(1020, 800);
    idx.append(1035, 1300);
    return idx;
  }

  it('looks up exact offsets, offsets between entries, before the first and after the last', () => {
    const idx = filled();
    expect(idx.lookup(1020)).to.deep.equal({ offset: 1020, position: 800 });
    expect(idx.lookup(1025)).to.deep.equal({ offset: 1020, position: 800 });
    expect(idx.lookup(1005)).to.deep.equal({ offset: 1000, position: 0 });
    expect(idx.lookup(999)).to.deep.equal({ offset: 1000, position: 0 });
    expect(idx.lookup(5000)).to.deep.equal({ offset: 1035, position: 1300 });
    expect(new OffsetIndex(NodeFileSystem, path.join(dir, 'b.index'), 7, 64).lookup(9)).to.deep.equal({ offset: 7, position: 0 });
  });

  it('rejects entries that do not increase', () => {
    const idx = filled();
    expect(() => idx.append(1035, 2000)).to.throw(AssertionError);
    expect(() => idx.append(1040, 1300)).to.throw(AssertionError);
    expect(() => idx.append(999, 0)).to.throw(AssertionError);
  });

  it('truncates entries at or after an offset', () => {
    const idx = filled();
    idx.truncateTo(1020);
    expect(idx.entries).to.equal(1);
    expect(idx.lookup(5000)).to.deep.equal({ offset: 1010, position: 400 });
    idx.append(1012, 500);
    expect(idx.lastEntry()).to.deep.equal({ offset: 1012, position: 500 });
  });

  it('persists and reloads, including after a truncation shrinks the file', () => {
    const idx = filled();
    idx.persist(true);
    expect(fs.statSync(idx.file).size).to.equal(24);
    idx.truncateTo(1011);
    idx.append(1015, 600);
    idx.persist(false);
    const again = new OffsetIndex(NodeFileSystem, idx.file, 1000, 1024);
    expect(again.loadFromFile()).to.equal(null);
    expect(again.entries).to.equal(2);
    expect(again.entryAt(1)).to.deep.equal({ offset: 1015, position: 600 });
    expect(again.sanityProblem(700)).to.equal(null);
    expect(again.sanityProblem(600)).to.match(/outside/);
  });

  it('reports missing, torn and disordered files', () => {
    const idx = new OffsetIndex(NodeFileSystem, path.join(dir, 'x.index'), 0, 1024);
    expect(idx.loadFromFile()).to.equal('missing');
    fs.writeFileSync(idx.file, Buffer.alloc(13));
    expect(idx.loadFromFile()).to.match(/multiple of 8/);
    const bad = Buffer.alloc(16);
    bad.writeInt32BE(5, 0);
    bad.writeInt32BE(100, 4);
    bad.writeInt32BE(3, 8);
    bad.writeInt32BE(200, 12);
    fs.writeFileSync(idx.file, bad);
    expect(idx.loadFromFile()).to.equal(null);
    expect(idx.sanityProblem(1000)).to.match(/does not increase/);
  });

  it('is full at segment.index.bytes / 8 entries', () => {
    const idx = new OffsetIndex(NodeFileSystem, path.join(dir, 'f.index'), 0, 24);
    for (let i = 1; i <= 3; i++) {
      expect(idx.isFull()).to.equal(false);
      idx.append(i, i * 100);
    }
    expect(idx.isFull()).to.equal(true);
  });
});

describe('TimeIndex', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('sluice-tindex-');
  });
  afterEach(() => removeDir(dir));

  it('appends only increasing timestamps', () => {
    const idx = new TimeIndex(NodeFileSystem, path.join(dir, 'a.timeindex'), 100, 1200);
    expect(idx.maybeAppend(NO_TIMESTAMP, 100)).to.equal(false);
    expect(idx.maybeAppend(5_000, 100)).to.equal(true);
    expect(idx.maybeAppend(5_000, 110)).to.equal(false);
    expect(idx.maybeAppend(4_000, 120)).to.equal(false);
    expect(idx.maybeAppend(6_000, 130)).to.equal(true);
    expect(idx.entries).to.equal(2);
  });

  it('looks up exact, between, before the first and after the last timestamp', () => {
    const idx = new TimeIndex(NodeFileSystem, path.join(dir, 'a.timeindex'), 100, 1200);
    idx.maybeAppend(1_700_000_000_000, 105);
    idx.maybeAppend(1_700_000_000_500, 120);
    idx.maybeAppend(2 ** 41 + 3, 150);
    expect(idx.lookup(1_700_000_000_500)).to.deep.equal({ timestamp: 1_700_000_000_500, offset: 120 });
    expect(idx.lookup(1_700_000_000_499)).to.deep.equal({ timestamp: 1_700_000_000_000, offset: 105 });
    expect(idx.lookup(10)).to.deep.equal({ timestamp: NO_TIMESTAMP, offset: 100 });
    expect(idx.lookup(2 ** 50)).to.deep.equal({ timestamp: 2 ** 41 + 3, offset: 150 });
  });

  it('truncates by offset, persists and reloads exact 64-bit timestamps', () => {
    const idx = new TimeIndex(NodeFileSystem, path.join(dir, 'a.timeindex'), 0, 1200);
    idx.maybeAppend(2 ** 45 + 1, 3);
    idx.maybeAppend(2 ** 45 + 2, 9);
    idx.maybeAppend(2 ** 45 + 3, 20);
    idx.truncateTo(9);
    idx.persist(true);
    const again = new TimeIndex(NodeFileSystem, idx.file, 0, 1200);
    expect(again.loadFromFile()).to.equal(null);
    expect(again.entries).to.equal(1);
    expect(again.lastEntry()).to.deep.equal({ timestamp: 2 ** 45 + 1, offset: 3 });
    expect(again.sanityProblem(4)).to.equal(null);
    expect(again.sanityProblem(3)).to.match(/outside/);
  });
});
