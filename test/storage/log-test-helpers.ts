// Shared fixtures for the partition-log tests: temp directories, batches built
// with the real codec, and header walks over read results.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { batchSizeAt, baseOffsetOf, lastOffsetOf, leaderEpochOf, maxTimestampOf } from '../../src/record/batch-header.js';
import type { PartitionLog } from '../../src/storage/partition-log.js';
import { encodeRecordBatch } from '../../src/record/record-batch.js';
import { asBuffer } from '../../src/util/node-bytes.js';

export function tempDir(prefix = 'sluice-log-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

export interface BatchSpec {
  records?: number;
  valueBytes?: number;
  /** Timestamp of every record (default 1_000). */
  timestamp?: number;
  /** Fills the values so batches differ. */
  fill?: number;
}

/** A fresh, unstamped batch (base offset 0, epoch -1). */
export function makeBatch(spec: BatchSpec = {}): Buffer {
  const n = spec.records ?? 1;
  const value = Buffer.alloc(spec.valueBytes ?? 10, spec.fill ?? 7);
  return asBuffer(encodeRecordBatch({
    records: Array.from({ length: n }, () => ({ value, timestamp: spec.timestamp ?? 1_000 })),
  }));
}

export interface BatchFacts {
  baseOffset: number;
  lastOffset: number;
  sizeBytes: number;
  leaderEpoch: number;
  maxTimestamp: number;
}

/** The header facts of each whole batch in `buf`. */
export function batchesIn(buf: Buffer): BatchFacts[] {
  const out: BatchFacts[] = [];
  for (let pos = 0; pos < buf.length;) {
    const sizeBytes = batchSizeAt(buf, pos);
    out.push({
      baseOffset: baseOffsetOf(buf, pos),
      lastOffset: lastOffsetOf(buf, pos),
      sizeBytes,
      leaderEpoch: leaderEpochOf(buf, pos),
      maxTimestamp: maxTimestampOf(buf, pos),
    });
    pos += sizeBytes;
  }
  return out;
}

/** Every stored batch from the log start to the LEO, read in `maxBytes` steps. */
export function readAllBytes(log: PartitionLog, maxBytes = 1 << 20): Buffer {
  const parts: Buffer[] = [];
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const r = log.read(offset, maxBytes);
    if (r.records.length === 0) break;
    parts.push(r.records);
    offset = r.nextOffset;
  }
  return Buffer.concat(parts);
}

/** Appends `count` single-record batches with increasing timestamps; returns their stamped bytes. */
export function appendMany(log: PartitionLog, count: number, spec: BatchSpec & { epoch?: number } = {}): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const b = makeBatch({ ...spec, timestamp: (spec.timestamp ?? 1_000) + i, fill: i & 0xff });
    log.append(b, { leaderEpoch: spec.epoch ?? 0 });
    out.push(b);
  }
  return out;
}
