// One segment file of the Raft log: `<20-digit base index>.log`, holding the
// frames (entry-codec.ts) of entries base, base+1, ... back to back.
//
// Invariants:
//   - positions[i] is the byte offset of entry base+i; terms[i] its term;
//     both arrays have one element per entry; `size` is the file's length as
//     written by us (recovery truncates anything after the last whole frame).
//   - Terms never decrease within a segment.
//   - Writes go through one fd opened lazily; the caller (raft-log.ts)
//     decides when to fsync (group commit) and tracks which segments are dirty.
//   - A truncation is fsynced before it returns, so a later crash can never
//     expose stale frames after new ones (which would look like corruption).

import path from 'node:path';
import { assert } from '../util/assert.js';
import { Errors, SluiceError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { Entry } from '../raft/types.js';
import type { FileSystem } from '../util/file-system.js';
import { writeFully } from '../util/fs-util.js';
import { decodeFrame, findPlausibleFrame } from './entry-codec.js';

export const SEGMENT_SUFFIX = '.log';
const SEGMENT_NAME = /^(\d{20})\.log$/;

export function segmentName(base: number): string {
  return String(base).padStart(20, '0') + SEGMENT_SUFFIX;
}

/** The base index encoded in a segment file name, or undefined if it is not one. */
export function parseSegmentName(name: string): number | undefined {
  const match = SEGMENT_NAME.exec(name);
  if (!match?.[1]) return undefined;
  const base = Number(match[1]);
  return Number.isSafeInteger(base) && base >= 1 ? base : undefined;
}

export interface SegmentRecoveryOptions {
  /** Only the last segment may end in a torn write. */
  readonly isLast: boolean;
  /** Term of the entry before this segment (0 if none): terms never decrease. */
  readonly prevTerm: number;
  readonly logger: Logger;
}

export class LogSegment {
  private fd: number | undefined;

  private constructor(
    private readonly fs: FileSystem,
    readonly base: number,
    readonly path: string,
    private readonly positions: number[],
    private readonly terms: number[],
    private size: number,
  ) {}

  /** Creates an empty segment file; fails if one with that base exists. */
  static create(fs: FileSystem, dir: string, base: number): LogSegment {
    const file = path.join(dir, segmentName(base));
    const segment = new LogSegment(fs, base, file, [], [], 0);
    segment.fd = fs.openSync(file, 'wx');
    return segment;
  }

  /**
   * Reads and verifies a segment. A damaged frame at the tail of the last
   * segment (nothing valid after it) is a torn write: it is cut off with a
   * warning. Any other damage throws CORRUPT_MESSAGE naming file and offset.
   */
  static recover(fs: FileSystem, dir: string, base: number, opts: SegmentRecoveryOptions): { segment: LogSegment; entries: Entry[] } {
    const file = path.join(dir, segmentName(base));
    const buf = fs.readFileSync(file);
    const entries: Entry[] = [];
    const positions: number[] = [];
    let prevTerm = opts.prevTerm;
    let pos = 0;
    while (pos < buf.length) {
      const result = decodeFrame(buf, pos);
      if (result.kind === 'invalid') throw corrupt(file, pos, result.detail);
      if (result.kind === 'damaged') {
        checkTornTail(buf, file, pos, result.detail, { ...opts, nextIndex: base + entries.length, prevTerm });
        truncateFile(fs, file, pos);
        opts.logger.warn({ file, offset: pos, droppedBytes: buf.length - pos, reason: result.detail },
          'truncated a torn write at the tail of the raft log');
        break;
      }
      const { entry } = result;
      const expected = base + entries.length;
      if (entry.index !== expected) throw corrupt(file, pos, `expected index ${expected}, found ${entry.index}`);
      if (entry.term < prevTerm) throw corrupt(file, pos, `term ${entry.term} after term ${prevTerm}`);
      entries.push(entry);
      positions.push(pos);
      prevTerm = entry.term;
      pos += result.frameBytes;
    }
    const segment = new LogSegment(fs, base, file, positions, entries.map((e) => e.term), pos);
    return { segment, entries };
  }

  get count(): number {
    return this.positions.length;
  }

  get bytes(): number {
    return this.size;
  }

  /** Index of the last entry; base - 1 when empty. */
  lastIndex(): number {
    return this.base + this.positions.length - 1;
  }

  lastTerm(): number | undefined {
    return this.terms[this.terms.length - 1];
  }

  termAt(index: number): number | undefined {
    return this.terms[index - this.base];
  }

  /** Appends pre-encoded frames of `entries` (offsets within `buf`) with one write. */
  append(buf: Buffer, offsets: readonly number[], entries: readonly Entry[]): void {
    assert(entries.length === offsets.length && entries.length > 0, 'one offset per entry');
    assert(entries[0]?.index === this.lastIndex() + 1, 'segment appends are contiguous');
    writeFully(this.fs, this.openFd(), buf, 0, buf.length, this.size);
    for (let i = 0; i < entries.length; i++) {
      this.positions.push(this.size + (offsets[i] ?? 0));
      this.terms.push(entries[i]?.term ?? 0);
    }
    this.size += buf.length;
  }

  /** Removes entries ≥ index (base ≤ index ≤ lastIndex + 1) and fsyncs the cut. */
  truncateFrom(index: number): void {
    assert(index >= this.base && index <= this.lastIndex() + 1, `truncation index ${index} outside segment ${this.base}`);
    const keep = index - this.base;
    const newSize = keep === this.positions.length ? this.size : (this.positions[keep] ?? this.size);
    const fd = this.openFd();
    this.fs.ftruncateSync(fd, newSize);
    this.fs.fsyncSync(fd);
    this.positions.length = keep;
    this.terms.length = keep;
    this.size = newSize;
  }

  /** Flushes written frames to stable storage (data and file length). */
  sync(): void {
    if (this.fd !== undefined) this.fs.fdatasyncSync(this.fd);
  }

  closeFd(): void {
    if (this.fd === undefined) return;
    this.fs.closeSync(this.fd);
    this.fd = undefined;
  }

  remove(): void {
    this.closeFd();
    this.fs.unlinkSync(this.path);
  }

  private openFd(): number {
    this.fd ??= this.fs.openSync(this.path, 'r+');
    return this.fd;
  }
}

/** Throws unless the damaged frame at `pos` can only be a torn tail. */
function checkTornTail(
  buf: Buffer,
  file: string,
  pos: number,
  detail: string,
  ctx: { isLast: boolean; nextIndex: number; prevTerm: number },
): void {
  if (!ctx.isLast) throw corrupt(file, pos, `${detail}; not the last segment, so not a torn write`);
  const next = findPlausibleFrame(buf, pos, ctx.nextIndex, ctx.prevTerm);
  if (next >= 0) throw corrupt(file, pos, `${detail}; a valid frame follows at byte ${next}, so not a torn write`);
}

function truncateFile(fs: FileSystem, file: string, size: number): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.ftruncateSync(fd, size);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function corrupt(file: string, offset: number, detail: string): SluiceError {
  return new SluiceError(Errors.CORRUPT_MESSAGE, `raft log segment ${file} is corrupt at byte offset ${offset}: ${detail}`,
    { file, offset });
}
