import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { isSluiceError, Errors } from '../../src/util/errors.js';
import { QUORUM_STATE_FILE, readQuorumState, writeQuorumState } from '../../src/raft-node/quorum-state.js';
import { makeTempDir, removeDir } from './disk-test-helpers.js';

describe('raft quorum-state file', () => {
  let dir: string;
  beforeEach(() => {
    dir = makeTempDir();
  });
  afterEach(() => removeDir(dir));

  it('is absent on a new node', () => {
    expect(readQuorumState(dir)).to.equal(undefined);
  });

  it('round-trips as Kafka-style JSON and leaves no temp file', () => {
    writeQuorumState(dir, { term: 7, vote: 2, commit: 1234 });
    const json = JSON.parse(fs.readFileSync(path.join(dir, QUORUM_STATE_FILE), 'utf8'));
    expect(json).to.deep.equal({ currentTerm: 7, votedFor: 2, commitIndex: 1234, version: 1 });
    expect(readQuorumState(dir)).to.deep.equal({ term: 7, vote: 2, commit: 1234 });
    writeQuorumState(dir, { term: 8, vote: 0, commit: 1300 });
    expect(readQuorumState(dir)).to.deep.equal({ term: 8, vote: 0, commit: 1300 });
    expect(fs.readdirSync(dir)).to.deep.equal([QUORUM_STATE_FILE]);
  });

  for (const [what, text] of [
    ['garbage', '{"currentTerm":7,"vot'],
    ['a negative term', '{"currentTerm":-1,"votedFor":0,"commitIndex":0,"version":1}'],
    ['an unknown version', '{"currentTerm":1,"votedFor":0,"commitIndex":0,"version":99}'],
  ] as const) {
    it(`refuses ${what}, naming the file`, () => {
      const file = path.join(dir, QUORUM_STATE_FILE);
      fs.writeFileSync(file, text);
      let caught: unknown;
      try {
        readQuorumState(dir);
      } catch (err) {
        caught = err;
      }
      expect(isSluiceError(caught, Errors.CORRUPT_MESSAGE), String(caught)).to.equal(true);
      expect((caught as Error).message).to.contain(file);
    });
  }
});
