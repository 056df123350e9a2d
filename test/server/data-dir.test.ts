import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../src/util/logger.js';
import {
  LOCK_FILE, META_PROPERTIES, METADATA_LOG_DIR, formatMetaProperties, lockDataDir, parseMetaProperties, prepareDataDir,
} from '../../src/server/data-dir.js';

const derived = { value: 'derivedClusterId000000', explicit: false };

describe('data dir', () => {
  let tmp: string;
  beforeEach(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-dd-')); });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('round-trips meta.properties in Kafka\'s text format', () => {
    const meta = { version: 1, nodeId: 7, clusterId: 'abc-DEF_1' };
    expect(parseMetaProperties(formatMetaProperties(meta), 'f')).to.deep.equal(meta);
    expect(() => parseMetaProperties('version=1\nnode.id=x\ncluster.id=a\n', 'f')).to.throw(/not a valid/);
    expect(() => parseMetaProperties('node.id=1\ncluster.id=a\n', 'f')).to.throw(/not a valid/);
  });

  it('formats a fresh dir once, then recognises it', () => {
    const dir = path.join(tmp, 'node-1');
    const first = prepareDataDir(dir, 1, derived, silentLogger);
    expect(first.formatted).to.equal(true);
    expect(first.raftDir).to.equal(path.join(dir, METADATA_LOG_DIR));
    expect(fs.readFileSync(path.join(dir, META_PROPERTIES), 'utf8')).to.match(/^cluster\.id=derivedClusterId000000$/m);
    // A later start keeps the recorded cluster id even if the derived one changed (the quorum grew).
    const again = prepareDataDir(dir, 1, { value: 'somethingElse', explicit: false }, silentLogger);
    expect(again.formatted).to.equal(false);
    expect(again.meta.clusterId).to.equal('derivedClusterId000000');
  });

  it('refuses a dir that belongs to another node or (explicitly) another cluster', () => {
    prepareDataDir(tmp, 1, derived, silentLogger);
    expect(() => prepareDataDir(tmp, 2, derived, silentLogger)).to.throw(/belongs to node\.id=1.*not node 2/);
    expect(() => prepareDataDir(tmp, 1, { value: 'other', explicit: true }, silentLogger)).to.throw(/belongs to cluster\.id=derivedClusterId000000/);
  });

  it('refuses to format over a metadata log without meta.properties', () => {
    fs.mkdirSync(path.join(tmp, METADATA_LOG_DIR));
    expect(() => prepareDataDir(tmp, 1, derived, silentLogger)).to.throw(/no meta\.properties/);
  });

  it('locks the dir against live processes and takes over stale locks', async () => {
    const release = lockDataDir(tmp, silentLogger);
    expect(fs.readFileSync(path.join(tmp, LOCK_FILE), 'utf8').trim()).to.equal(String(process.pid));
    release();
    expect(fs.existsSync(path.join(tmp, LOCK_FILE))).to.equal(false);

    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      fs.writeFileSync(path.join(tmp, LOCK_FILE), `${holder.pid}\n`);
      expect(() => lockDataDir(tmp, silentLogger)).to.throw(/in use by process/);
    } finally {
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
    }
    // The holder is gone now: its lock is stale.
    const again = lockDataDir(tmp, silentLogger);
    expect(fs.readFileSync(path.join(tmp, LOCK_FILE), 'utf8').trim()).to.equal(String(process.pid));
    again();
  });
});
