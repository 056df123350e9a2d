// The `quorum-state` file: the Raft hard state (current term, vote, commit
// index) as JSON, like Kafka's KRaft `quorum-state`:
//
//   {"currentTerm":5,"votedFor":2,"commitIndex":1234,"version":1}
//
// votedFor 0 means no vote in currentTerm. The file is replaced atomically
// (util/fs-util.ts), so it is always a complete version; anything unparsable
// is therefore disk corruption and stops recovery rather than being guessed.

import path from 'node:path';
import { Errors, SluiceError } from '../util/errors.js';
import type { HardState } from '../raft/types.js';
import { NodeFileSystem, type FileSystem } from '../util/file-system.js';
import { writeFileAtomic } from '../util/fs-util.js';

export const QUORUM_STATE_FILE = 'quorum-state';
export const QUORUM_STATE_VERSION = 1;

/** Reads the hard state, or undefined when the file does not exist (a new node). */
export function readQuorumState(dir: string, fs: FileSystem = NodeFileSystem): HardState | undefined {
  const file = path.join(dir, QUORUM_STATE_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return parseQuorumState(text, file);
}

export function writeQuorumState(dir: string, hs: HardState, fs: FileSystem = NodeFileSystem): void {
  const json = JSON.stringify({ currentTerm: hs.term, votedFor: hs.vote, commitIndex: hs.commit, version: QUORUM_STATE_VERSION });
  writeFileAtomic(fs, path.join(dir, QUORUM_STATE_FILE), json + '\n');
}

export function parseQuorumState(text: string, file: string): HardState {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw corrupt(file, `not JSON (${(err as Error).message})`);
  }
  if (typeof value !== 'object' || value === null) throw corrupt(file, 'not a JSON object');
  const { currentTerm, votedFor, commitIndex, version } = value as Record<string, unknown>;
  if (version !== QUORUM_STATE_VERSION) throw corrupt(file, `unknown version ${String(version)}`);
  if (!isCount(currentTerm) || !isCount(votedFor) || !isCount(commitIndex)) {
    throw corrupt(file, 'currentTerm, votedFor and commitIndex must be non-negative integers');
  }
  return { term: currentTerm, vote: votedFor, commit: commitIndex };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function corrupt(file: string, detail: string): SluiceError {
  return new SluiceError(Errors.CORRUPT_MESSAGE, `raft quorum-state ${file} is unreadable: ${detail}`, { file });
}
