// Loading one __consumer_offsets partition: read its log from the start to
// the log end offset it had when this broker became its leader, and keep the
// last value of every key (a tombstone deletes it). Reads go in steps of
// loadReadBytesMax, yielding to the event loop between steps (a zero-delay
// timer on the injected scheduler) so a long log does not stall the broker; the load stops early when `cancelled()` says
// leadership moved on. A record that cannot be decoded is skipped and counted.

import { CONTROL_FLAG_MASK } from '../record/batch-header.js';
import type { PartitionLog } from '../storage/partition-log.js';
import { decodeRecordBatches } from '../record/record-batch.js';
import { decodeGroupValue, decodeKey, decodeOffsetValue, type CommittedOffset } from './records.js';
import type { GroupSnapshot } from './membership/types.js';
import { asBuffer } from '../util/node-bytes.js';
import type { Scheduler } from '../util/clock.js';

/** A committed offset and where its record is in the log (a later record for the same key wins). */
export interface StoredOffset extends CommittedOffset {
  readonly logOffset: number;
}

/** topic → partition → committed offset. */
export type GroupOffsets = Map<string, Map<number, StoredOffset>>;

export interface LoadedGroup {
  snapshot: GroupSnapshot | null;
  readonly offsets: GroupOffsets;
}

export interface LoadResult {
  readonly groups: Map<string, LoadedGroup>;
  readonly records: number;
  /** Records skipped because they could not be decoded. */
  readonly skipped: number;
}

export interface LoadOptions {
  readonly endOffset: number;
  readonly readBytesMax: number;
  readonly cancelled: () => boolean;
  /** Where the load yields between steps (schedule(0)). */
  readonly scheduler: Scheduler;
}

/** The partition's groups and offsets, or null if cancelled. Throws if the log cannot be read. */
export async function loadOffsetsPartition(log: PartitionLog, opts: LoadOptions): Promise<LoadResult | null> {
  const groups = new Map<string, LoadedGroup>();
  const counts = { records: 0, skipped: 0 };
  let offset = log.logStartOffset;
  while (offset < opts.endOffset) {
    await new Promise<void>((resolve) => opts.scheduler.schedule(0, resolve));
    if (opts.cancelled()) return null;
    const r = log.read(offset, opts.readBytesMax, { maxOffset: opts.endOffset });
    if (r.records.length === 0) break;
    for (const batch of decodeRecordBatches(r.records)) {
      if ((batch.header.attributes & CONTROL_FLAG_MASK) !== 0) continue;
      for (const rec of batch.records) {
        if (rec.offset < offset || rec.offset >= opts.endOffset) continue;
        counts.records++;
        if (!applyRecord(groups, rec.key && asBuffer(rec.key), rec.value && asBuffer(rec.value), rec.offset)) counts.skipped++;
      }
    }
    if (r.nextOffset <= offset) break;
    offset = r.nextOffset;
  }
  return { groups, ...counts };
}

function groupOf(groups: Map<string, LoadedGroup>, groupId: string): LoadedGroup {
  let g = groups.get(groupId);
  if (!g) {
    g = { snapshot: null, offsets: new Map() };
    groups.set(groupId, g);
  }
  return g;
}

/** Applies one record; false if it could not be decoded. */
function applyRecord(groups: Map<string, LoadedGroup>, keyBytes: Buffer | null, value: Buffer | null, logOffset: number): boolean {
  if (keyBytes === null) return false;
  try {
    const key = decodeKey(keyBytes);
    if (key === null) return false;
    const g = groupOf(groups, key.groupId);
    if (key.kind === 'group') {
      g.snapshot = value === null ? null : decodeGroupValue(value);
    } else if (value === null) {
      g.offsets.get(key.topic)?.delete(key.partition);
    } else {
      let byPartition = g.offsets.get(key.topic);
      if (!byPartition) g.offsets.set(key.topic, (byPartition = new Map()));
      byPartition.set(key.partition, { ...decodeOffsetValue(value), logOffset });
    }
    if (g.snapshot === null && [...g.offsets.values()].every((m) => m.size === 0)) groups.delete(key.groupId);
    return true;
  } catch {
    return false;
  }
}
