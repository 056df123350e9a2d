// Checkpoint files in Kafka's text format: a version line, a count line, then
// one entry per line with space-separated fields. Two kinds:
//
//   recovery-point-offset-checkpoint, replication-offset-checkpoint,
//   log-start-offset-checkpoint:         "<topic> <partition> <offset>"
//   leader-epoch-checkpoint:             "<epoch> <startOffset>"
//
// Writes are atomic and durable (fs-util writeFileAtomic). A missing file reads
// as no entries; a malformed one is a KAFKA_STORAGE_ERROR — callers decide
// whether they can rebuild (the epoch cache can, from the log).

import type { FileSystem } from '../util/file-system.js';
import { Errors, SluiceError } from '../util/errors.js';
import { writeFileAtomic } from '../util/fs-util.js';

export const CHECKPOINT_VERSION = 0;
export const RECOVERY_POINT_CHECKPOINT_FILE = 'recovery-point-offset-checkpoint';
export const REPLICATION_OFFSET_CHECKPOINT_FILE = 'replication-offset-checkpoint';
export const LOG_START_OFFSET_CHECKPOINT_FILE = 'log-start-offset-checkpoint';
export const LEADER_EPOCH_CHECKPOINT_FILE = 'leader-epoch-checkpoint';

export interface PartitionOffset {
  topic: string;
  partition: number;
  offset: number;
}

export interface EpochEntry {
  epoch: number;
  startOffset: number;
}

/** Writes `lines` under the version and count header, atomically. */
export function writeCheckpointFile(fs: FileSystem, file: string, lines: readonly string[]): void {
  const body = [String(CHECKPOINT_VERSION), String(lines.length), ...lines].join('\n') + '\n';
  writeFileAtomic(fs, file, body);
}

/** The entry lines of a checkpoint file, [] if it does not exist; throws on a bad header. */
export function readCheckpointLines(fs: FileSystem, file: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(file).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines[0] !== String(CHECKPOINT_VERSION)) throw malformed(file, `unsupported version line ${JSON.stringify(lines[0])}`);
  const count = parseNonNegativeInt(lines[1]);
  if (count === null || lines.length !== count + 2) throw malformed(file, `count line ${JSON.stringify(lines[1])} does not match ${lines.length - 2} entries`);
  return lines.slice(2);
}

export function writeOffsetCheckpoint(fs: FileSystem, file: string, entries: readonly PartitionOffset[]): void {
  writeCheckpointFile(fs, file, entries.map((e) => `${e.topic} ${e.partition} ${e.offset}`));
}

export function readOffsetCheckpoint(fs: FileSystem, file: string): PartitionOffset[] {
  return readCheckpointLines(fs, file).map((line) => {
    const fields = line.split(' ');
    const partition = parseNonNegativeInt(fields[1]);
    const offset = parseNonNegativeInt(fields[2]);
    if (fields.length !== 3 || !fields[0] || partition === null || offset === null) throw malformed(file, `bad entry ${JSON.stringify(line)}`);
    return { topic: fields[0], partition, offset };
  });
}

export function writeEpochCheckpoint(fs: FileSystem, file: string, entries: readonly EpochEntry[]): void {
  writeCheckpointFile(fs, file, entries.map((e) => `${e.epoch} ${e.startOffset}`));
}

export function readEpochCheckpoint(fs: FileSystem, file: string): EpochEntry[] {
  return readCheckpointLines(fs, file).map((line) => {
    const fields = line.split(' ');
    const epoch = parseNonNegativeInt(fields[0]);
    const startOffset = parseNonNegativeInt(fields[1]);
    if (fields.length !== 2 || epoch === null || startOffset === null) throw malformed(file, `bad entry ${JSON.stringify(line)}`);
    return { epoch, startOffset };
  });
}

function parseNonNegativeInt(s: string | undefined): number | null {
  if (s === undefined || !/^\d{1,16}$/.test(s)) return null;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : null;
}

function malformed(file: string, why: string): SluiceError {
  return new SluiceError(Errors.KAFKA_STORAGE_ERROR, `malformed checkpoint file ${file}: ${why}`, { file });
}
