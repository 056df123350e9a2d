// A stand-in state machine until the metadata image exists: it remembers how
// many Normal entries it applied, the index of the last entry, and a running
// CRC32C digest over (index, length, data) of every applied Normal entry.
// Two replicas with equal digests at equal applied index applied the same
// sequence (up to CRC collisions), which is what the tests and the benchmark
// check. NoOp and Config entries only advance appliedIndex.
//
// Snapshot image (36 bytes, little-endian): u32 version = 1, u32 digest,
// u64 appliedIndex, u64 appliedCount, u64 lastDataIndex, u32 CRC32C of the
// preceding 32 bytes.

import { assert } from '../util/assert.js';
import { crc32c } from '../util/crc32c.js';
import { Errors, SluiceError } from '../util/errors.js';
import { EntryType, type Entry, type Snapshot } from '../raft/types.js';
import type { StateMachine } from './state-machine.js';

const IMAGE_VERSION = 1;
const IMAGE_BYTES = 36;
const IMAGE_CRC_OFFSET = 32;

export interface LogDigest {
  /** Index of the last applied entry of any type. */
  readonly appliedIndex: number;
  /** Normal entries applied. */
  readonly appliedCount: number;
  /** Index of the last applied Normal entry (0 if none). */
  readonly lastDataIndex: number;
  /** Running CRC32C (unsigned 32-bit). */
  readonly digest: number;
}

/** Scratch space for digestStep (single-threaded, never escapes). */
const header = Buffer.alloc(12);

/** Folds one Normal entry into a running digest; exported so tests can compute the expected value. */
export function digestStep(digest: number, index: number, data: Uint8Array): number {
  header.writeUInt32LE(index % 0x1_0000_0000, 0);
  header.writeUInt32LE(Math.floor(index / 0x1_0000_0000), 4);
  header.writeUInt32LE(data.length, 8);
  return crc32c(data, crc32c(header, digest));
}

export class LogDigestStateMachine implements StateMachine {
  private state: LogDigest = { appliedIndex: 0, appliedCount: 0, lastDataIndex: 0, digest: 0 };

  get appliedIndex(): number {
    return this.state.appliedIndex;
  }

  get current(): LogDigest {
    return this.state;
  }

  apply(entry: Entry): void {
    const s = this.state;
    assert(entry.index === s.appliedIndex + 1, `apply out of order: ${entry.index} after ${s.appliedIndex}`);
    if (entry.type !== EntryType.Normal) {
      this.state = { ...s, appliedIndex: entry.index };
      return;
    }
    this.state = {
      appliedIndex: entry.index,
      appliedCount: s.appliedCount + 1,
      lastDataIndex: entry.index,
      digest: digestStep(s.digest, entry.index, entry.data),
    };
  }

  snapshot(): Uint8Array {
    return encodeImage(this.state);
  }

  restore(snapshot: Snapshot): void {
    const image = decodeImage(snapshot.data);
    if (image.appliedIndex !== snapshot.meta.index) {
      throw new SluiceError(Errors.CORRUPT_MESSAGE, `snapshot image is at index ${image.appliedIndex}, its metadata says ${snapshot.meta.index}`);
    }
    this.state = image;
  }

  describe(): Record<string, unknown> {
    return { ...this.state };
  }
}

function writeU64(buf: Buffer, value: number, offset: number): void {
  buf.writeUInt32LE(value % 0x1_0000_0000, offset);
  buf.writeUInt32LE(Math.floor(value / 0x1_0000_0000), offset + 4);
}

function readU64(buf: Buffer, offset: number): number {
  return buf.readUInt32LE(offset) + buf.readUInt32LE(offset + 4) * 0x1_0000_0000;
}

export function encodeImage(s: LogDigest): Uint8Array {
  const buf = Buffer.alloc(IMAGE_BYTES);
  buf.writeUInt32LE(IMAGE_VERSION, 0);
  buf.writeUInt32LE(s.digest >>> 0, 4);
  writeU64(buf, s.appliedIndex, 8);
  writeU64(buf, s.appliedCount, 16);
  writeU64(buf, s.lastDataIndex, 24);
  buf.writeUInt32LE(crc32c(buf.subarray(0, IMAGE_CRC_OFFSET)), IMAGE_CRC_OFFSET);
  return buf;
}

export function decodeImage(data: Uint8Array): LogDigest {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (buf.length !== IMAGE_BYTES || buf.readUInt32LE(0) !== IMAGE_VERSION) {
    throw new SluiceError(Errors.CORRUPT_MESSAGE, `log-digest snapshot image: bad size ${buf.length} or version`);
  }
  if (crc32c(buf.subarray(0, IMAGE_CRC_OFFSET)) !== buf.readUInt32LE(IMAGE_CRC_OFFSET)) {
    throw new SluiceError(Errors.CORRUPT_MESSAGE, 'log-digest snapshot image: CRC mismatch');
  }
  return {
    appliedIndex: readU64(buf, 8),
    appliedCount: readU64(buf, 16),
    lastDataIndex: readU64(buf, 24),
    digest: buf.readUInt32LE(4),
  };
}
