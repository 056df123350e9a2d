import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { checkpointName, decodeSnapshot, encodeSnapshotHeader, parseCheckpointName, SnapshotStore } from '../../src/raft-node/snapshot-store.js';
import { makeTempDir, RecordingLogger, removeDir, snapshot } from './disk-test-helpers.js';

describe('raft snapshot store', () => {
  let dir: string;
  let logger: RecordingLogger;
  beforeEach(() => {
    dir = makeTempDir();
    logger = new RecordingLogger();
  });
  afterEach(() => removeDir(dir));

  it('names checkpoints like Kafka: 20-digit index and term', () => {
    expect(checkpointName(42, 3)).to.equal('00000000000000000042-00000000000000000003.checkpoint');
    expect(parseCheckpointName(checkpointName(42, 3))).to.deep.equal({ name: checkpointName(42, 3), index: 42, term: 3 });
    expect(parseCheckpointName('42-3.checkpoint')).to.equal(undefined);
  });

  it('round-trips meta and data', () => {
    const store = new SnapshotStore(dir, logger);
    expect(store.loadNewest()).to.equal(undefined);
    const snap = snapshot(10, 2, 1000);
    store.save(snap);
    const loaded = store.loadNewest();
    expect(loaded?.meta).to.deep.equal(snap.meta);
    expect(Array.from(loaded?.data ?? [])).to.deep.equal(Array.from(snap.data));
  });

  it('keeps only the newest two', () => {
    const store = new SnapshotStore(dir, logger);
    for (const [index, term] of [[5, 1], [9, 1], [20, 2], [31, 4]] as const) store.save(snapshot(index, term));
    expect(store.list().map((f) => f.index)).to.deep.equal([20, 31]);
    expect(store.loadNewest()?.meta.index).to.equal(31);
  });

  it('falls back to the older snapshot when the newest fails its CRC', () => {
    const store = new SnapshotStore(dir, logger);
    store.save(snapshot(5, 1));
    store.save(snapshot(9, 2));
    const newest = path.join(dir, checkpointName(9, 2));
    const bytes = fs.readFileSync(newest);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] ?? 0) ^ 1;
    fs.writeFileSync(newest, bytes);
    expect(store.loadNewest()?.meta.index).to.equal(5);
    expect(logger.warnings()).to.have.length(1);
  });

  it('rejects a checkpoint whose content disagrees with its name', () => {
    const snap = snapshot(9, 2);
    const bytes = Buffer.concat([encodeSnapshotHeader(snap), snap.data]);
    expect(decodeSnapshot(bytes, { name: 'x', index: 9, term: 2 })).to.not.be.a('string');
    expect(decodeSnapshot(bytes, { name: 'x', index: 9, term: 3 })).to.be.a('string');
    expect(decodeSnapshot(bytes.subarray(0, 20), { name: 'x', index: 9, term: 2 })).to.be.a('string');
  });
});
