// Raft snapshots on disk: `<20-digit index>-<20-digit term>.checkpoint` files
// in the metadata directory (Kafka's naming), each holding the SnapshotMeta
// and the state-machine image under one CRC. Big-endian layout:
//
//   0  magic           4 bytes  "SLCP"
//   4  version         u8       = 1
//   5  crc             u32      CRC32C of bytes [9, end)
//   9  index           u64      must equal the index in the file name
//  17  term            u64      must equal the term in the file name
//  25  membershipBytes u32
//  29  membership      JSON {"voters":[..],"observers":[..]}
//   …  data            the rest of the file
//
// Invariants: a file is written atomically (temp, fsync, rename, fsync dir),
// so a checkpoint with its final name is complete unless the disk corrupted
// it; loading never returns a snapshot whose CRC or name check fails; at most
// SNAPSHOTS_RETAINED_MAX checkpoints are kept (the newest by index, term).

import path from 'node:path';
import { assert } from '../util/assert.js';
import { crc32c } from '../util/crc32c.js';
import type { Logger } from '../util/logger.js';
import type { Membership, NodeId, Snapshot } from '../raft/types.js';
import { NodeFileSystem, type FileSystem } from '../util/file-system.js';
import { writeFileAtomic } from '../util/fs-util.js';
import { readU64, writeU64 } from './entry-codec.js';

export const CHECKPOINT_SUFFIX = '.checkpoint';
/** The newest snapshot plus one fallback, in case the newest is found corrupt. */
export const SNAPSHOTS_RETAINED_MAX = 2;

const MAGIC = Buffer.from('SLCP', 'ascii');
const FORMAT_VERSION = 1;
const HEADER_BYTES = 29;
const CRC_START = 9;
const CHECKPOINT_NAME = /^(\d{20})-(\d{20})\.checkpoint$/;

export interface CheckpointFile {
  readonly name: string;
  readonly index: number;
  readonly term: number;
}

export function checkpointName(index: number, term: number): string {
  return `${String(index).padStart(20, '0')}-${String(term).padStart(20, '0')}${CHECKPOINT_SUFFIX}`;
}

export function parseCheckpointName(name: string): CheckpointFile | undefined {
  const match = CHECKPOINT_NAME.exec(name);
  if (!match?.[1] || !match[2]) return undefined;
  const index = Number(match[1]);
  const term = Number(match[2]);
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(term)) return undefined;
  return { name, index, term };
}

/** The header and membership of a checkpoint; the data follows as a second chunk (no copy). */
export function encodeSnapshotHeader(snap: Snapshot): Buffer {
  const membership = Buffer.from(JSON.stringify({ voters: snap.meta.membership.voters, observers: snap.meta.membership.observers }));
  const header = Buffer.alloc(HEADER_BYTES + membership.length);
  MAGIC.copy(header, 0);
  header.writeUInt8(FORMAT_VERSION, 4);
  writeU64(header, 9, snap.meta.index);
  writeU64(header, 17, snap.meta.term);
  header.writeUInt32BE(membership.length, 25);
  membership.copy(header, HEADER_BYTES);
  const crc = crc32c(snap.data, crc32c(header.subarray(CRC_START)));
  header.writeUInt32BE(crc, 5);
  return header;
}

/** Decodes and verifies a checkpoint; returns a reason string when it is unusable. */
export function decodeSnapshot(buf: Buffer, expected: CheckpointFile): Snapshot | string {
  if (buf.length < HEADER_BYTES) return `too short (${buf.length} bytes)`;
  if (!buf.subarray(0, 4).equals(MAGIC)) return 'bad magic';
  if (buf.readUInt8(4) !== FORMAT_VERSION) return `unknown format version ${buf.readUInt8(4)}`;
  const stored = buf.readUInt32BE(5);
  const actual = crc32c(buf.subarray(CRC_START));
  if (stored !== actual) return `CRC mismatch (stored ${stored}, computed ${actual})`;
  const index = readU64(buf, 9);
  const term = readU64(buf, 17);
  if (index !== expected.index || term !== expected.term) return `holds index ${index} term ${term}, not what its name says`;
  const membershipEnd = HEADER_BYTES + buf.readUInt32BE(25);
  if (membershipEnd > buf.length) return 'membership runs past the end';
  const membership = parseMembership(buf.subarray(HEADER_BYTES, membershipEnd).toString('utf8'));
  if (membership === undefined) return 'malformed membership';
  return { meta: { index, term, membership }, data: new Uint8Array(buf.subarray(membershipEnd)) };
}

export class SnapshotStore {
  constructor(private readonly dir: string, private readonly logger: Logger, private readonly fs: FileSystem = NodeFileSystem) {}

  /** Checkpoint files present, oldest first. */
  list(): CheckpointFile[] {
    const files: CheckpointFile[] = [];
    for (const name of this.fs.readdirSync(this.dir)) {
      const file = parseCheckpointName(name);
      if (file) files.push(file);
    }
    return files.sort((a, b) => a.index - b.index || a.term - b.term);
  }

  /** The newest snapshot that verifies; corrupt ones are skipped with a warning (and kept for inspection). */
  loadNewest(): Snapshot | undefined {
    const files = this.list();
    for (let i = files.length - 1; i >= 0; i--) {
      const file = files[i];
      if (!file) continue;
      const result = decodeSnapshot(this.fs.readFileSync(path.join(this.dir, file.name)), file);
      if (typeof result !== 'string') return result;
      this.logger.warn({ file: path.join(this.dir, file.name), reason: result }, 'skipping a corrupt raft snapshot');
    }
    return undefined;
  }

  /** Writes `snap` atomically and durably, then deletes all but the newest SNAPSHOTS_RETAINED_MAX. */
  save(snap: Snapshot): void {
    assert(snap.meta.index >= 1, 'a snapshot covers at least one entry');
    writeFileAtomic(this.fs, path.join(this.dir, checkpointName(snap.meta.index, snap.meta.term)), [encodeSnapshotHeader(snap), snap.data]);
    const files = this.list();
    for (const file of files.slice(0, Math.max(0, files.length - SNAPSHOTS_RETAINED_MAX))) {
      this.fs.unlinkSync(path.join(this.dir, file.name));
    }
  }
}

function parseMembership(text: string): Membership | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { voters, observers } = value as Record<string, unknown>;
  if (!isNodeIdList(voters) || !isNodeIdList(observers)) return undefined;
  return { voters, observers };
}

function isNodeIdList(value: unknown): value is NodeId[] {
  return Array.isArray(value) && value.every((id) => Number.isSafeInteger(id) && (id as number) >= 0);
}
