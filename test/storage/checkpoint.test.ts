import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readEpochCheckpoint, readOffsetCheckpoint, writeOffsetCheckpoint } from '../../src/storage/checkpoint.js';
import { Errors, isSluiceError } from '../../src/util/errors.js';
import { removeDir, tempDir } from './log-test-helpers.js';
import { NodeFileSystem } from '../../src/util/file-system.js';

describe('checkpoint files', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('sluice-ckpt-');
  });
  afterEach(() => removeDir(dir));

  it('round-trips offsets in Kafka text format, atomically', () => {
    const file = path.join(dir, 'recovery-point-offset-checkpoint');
    const entries = [
      { topic: 'orders-eu.v2', partition: 0, offset: 42 },
      { topic: 'a-b-c', partition: 17, offset: 2 ** 40 },
    ];
    writeOffsetCheckpoint(NodeFileSystem, file, entries);
    expect(fs.readFileSync(file, 'utf8')).to.equal(`0\n2\norders-eu.v2 0 42\na-b-c 17 ${2 ** 40}\n`);
    expect(readOffsetCheckpoint(NodeFileSystem, file)).to.deep.equal(entries);
    expect(fs.readdirSync(dir)).to.deep.equal(['recovery-point-offset-checkpoint']);
    writeOffsetCheckpoint(NodeFileSystem, file, []);
    expect(readOffsetCheckpoint(NodeFileSystem, file)).to.deep.equal([]);
  });

  it('reads a missing file as empty', () => {
    expect(readOffsetCheckpoint(NodeFileSystem, path.join(dir, 'nope'))).to.deep.equal([]);
    expect(readEpochCheckpoint(NodeFileSystem, path.join(dir, 'nope'))).to.deep.equal([]);
  });

  for (const [name, body] of [
    ['bad version', '1\n0\n'],
    ['count mismatch', '0\n2\nt 0 1\n'],
    ['bad entry', '0\n1\nt x 1\n'],
    ['negative offset', '0\n1\nt 0 -5\n'],
    ['extra field', '0\n1\nt 0 1 9\n'],
  ] as const) {
    it(`rejects a malformed file (${name})`, () => {
      const file = path.join(dir, 'cp');
      fs.writeFileSync(file, body);
      expect(() => readOffsetCheckpoint(NodeFileSystem, file)).to.throw().that.satisfies((e: unknown) => isSluiceError(e, Errors.KAFKA_STORAGE_ERROR));
    });
  }
});
