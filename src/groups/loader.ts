// Loading one __consumer_offsets partition: read its log from the start to
// the log end offset it had when this broker became its leader, and keep the
// last value of every key (a tombstone deletes it). Reads go in steps of
// loadReadBytesMax, yielding to the event loop between steps (a zero-delay
// timer on the injected scheduler) so a long log does not stall the broker; the load stops early when `cancelled()` says
// leadership moved on. A record that cannot be decoded is skipped and counted.
//
// Transactions (TxnOffsetCommit): a transactional batch's offset records are
// pending offsets of its producer (txn-pending.ts), not committed ones; that
// producer's COMMIT marker later in the log makes them committed (a plain
// commit later in the log than the pending record still wins), its ABORT
// marker drops them. Whatever is still pending at the end of the log is an
// open transaction and stays pending in the result.

import { CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK } from '../record/batch-header.js';
import { CONTROL_TYPE_ABORT, CONTROL_TYPE_COMMIT } from '../record/control-batch.js';
import type { PartitionLog } from '../storage/partition-log.js';
import { decodeRecordBatches, type DecodedBatch } from '../record/record-batch.js';
import { decodeGroupValue, decodeKey, decodeOffsetValue, type CommittedOffset } from './records.js';
import { PendingTxnOffsets, type EndedTxnOffset } from './txn-pending.js';
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
  /** Offsets of transactions open at the end of the log. */
  readonly pending: PendingTxnOffsets;
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
  const pending = new PendingTxnOffsets();
  const counts = { records: 0, skipped: 0 };
  let offset = log.logStartOffset;
  while (offset < opts.endOffset) {
    await new Promise<void>((resolve) => opts.scheduler.schedule(0, resolve));
    if (opts.cancelled()) return null;
    const r = log.read(offset, opts.readBytesMax, { maxOffset: opts.endOffset });
    if (r.records.length === 0) break;
    for (const batch of decodeRecordBatches(r.records)) applyBatch(groups, pending, batch, { from: offset, to: opts.endOffset }, counts);
    if (r.nextOffset <= offset) break;
    offset = r.nextOffset;
  }
  return { groups, pending, ...counts };
}

function applyBatch(
  groups: Map<string, LoadedGroup>, pending: PendingTxnOffsets, batch: DecodedBatch,
  range: { readonly from: number; readonly to: number }, counts: { records: number; skipped: number },
): void {
  const h = batch.header;
  const transactional = (h.attributes & TRANSACTIONAL_FLAG_MASK) !== 0;
  if ((h.attributes & CONTROL_FLAG_MASK) !== 0) {
    if (!transactional || h.baseOffset < range.from || h.baseOffset >= range.to) return;
    const type = controlRecordType(batch);
    if (type === null) {
      counts.skipped++;
      return;
    }
    storeEnded(groups, pending.marker(Number(h.producerId), h.baseOffset, type === CONTROL_TYPE_COMMIT).committed);
    return;
  }
  for (const rec of batch.records) {
    if (rec.offset < range.from || rec.offset >= range.to) continue;
    counts.records++;
    const key = rec.key && asBuffer(rec.key);
    const value = rec.value && asBuffer(rec.value);
    const ok = transactional ? addPending(pending, Number(h.producerId), key, value, rec.offset) : applyRecord(groups, key, value, rec.offset);
    if (!ok) counts.skipped++;
  }
}

/**
 * ABORT or COMMIT of a control batch, or null when it is not a marker (control-batch.ts has the layout;
 * read here from the batch already decoded, rather than decoding it again).
 */
function controlRecordType(batch: DecodedBatch): number | null {
  const key = batch.records[0]?.key;
  if (batch.records.length !== 1 || !key || key.length < 4) return null;
  const view = new DataView(key.buffer, key.byteOffset, key.byteLength);
  const type = view.getInt16(2);
  return view.getInt16(0) >= 0 && (type === CONTROL_TYPE_ABORT || type === CONTROL_TYPE_COMMIT) ? type : null;
}

/** Committed offsets a COMMIT marker ended: stored unless the group has a commit later in the log. */
function storeEnded(groups: Map<string, LoadedGroup>, ended: readonly EndedTxnOffset[]): void {
  for (const e of ended) {
    const g = groupOf(groups, e.groupId);
    let byPartition = g.offsets.get(e.topic);
    if (!byPartition) g.offsets.set(e.topic, (byPartition = new Map()));
    const have = byPartition.get(e.partition);
    if (!have || have.logOffset < e.value.logOffset) byPartition.set(e.partition, e.value);
  }
}

/** A transactional record: an offset commit of the producer's transaction (other kinds are not written in transactions: skipped). */
function addPending(pending: PendingTxnOffsets, producerId: number, keyBytes: Buffer | null, value: Buffer | null, logOffset: number): boolean {
  if (keyBytes === null || value === null) return false;
  try {
    const key = decodeKey(keyBytes);
    if (key === null || key.kind !== 'offset') return false;
    pending.add(producerId, key, { ...decodeOffsetValue(value), logOffset });
    return true;
  } catch {
    return false;
  }
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
