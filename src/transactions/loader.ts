// Loading one __transaction_state partition: read its log from the start to
// the log end offset it had when this broker became its leader and keep the
// last value of every transactional id (a tombstone forgets it). Reads go in
// steps of loadReadBytesMax, yielding to the event loop between steps (a
// zero-delay timer on the injected scheduler); the load stops early when
// `cancelled()` says leadership moved on. A record that cannot be decoded is
// skipped and counted (as the group loader does).

import { CONTROL_FLAG_MASK } from '../record/batch-header.js';
import { decodeRecordBatches } from '../record/record-batch.js';
import type { PartitionLog } from '../storage/partition-log.js';
import type { Scheduler } from '../util/clock.js';
import { decodeTxnKey, decodeTxnValue } from './records.js';
import type { TxnMetadata } from './state-machine.js';

export interface TxnLoadResult {
  readonly transactions: Map<string, TxnMetadata>;
  readonly records: number;
  readonly skipped: number;
}

export interface TxnLoadOptions {
  readonly endOffset: number;
  readonly readBytesMax: number;
  readonly cancelled: () => boolean;
  readonly scheduler: Scheduler;
}

/** The partition's transactions, or null if cancelled. Throws if the log cannot be read. */
export async function loadTransactionPartition(log: PartitionLog, opts: TxnLoadOptions): Promise<TxnLoadResult | null> {
  const transactions = new Map<string, TxnMetadata>();
  let records = 0;
  let skipped = 0;
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
        records++;
        if (!apply(transactions, rec.key, rec.value)) skipped++;
      }
    }
    if (r.nextOffset <= offset) break;
    offset = r.nextOffset;
  }
  return { transactions, records, skipped };
}

function apply(transactions: Map<string, TxnMetadata>, key: Uint8Array | null, value: Uint8Array | null): boolean {
  if (key === null) return false;
  try {
    const id = decodeTxnKey(key);
    if (id === null) return false;
    if (value === null) transactions.delete(id);
    else transactions.set(id, decodeTxnValue(id, value));
    return true;
  } catch {
    return false;
  }
}
