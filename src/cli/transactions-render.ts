// Text tables for `sluice transactions list|describe` (kafka-transactions.sh's
// columns). Pure: data in, text out, so the layout is tested without a cluster.

import type { TransactionDescription, TransactionListing } from '../client/transaction-admin.js';
import { renderTable } from './table.js';

export function renderTransactionList(rows: readonly TransactionListing[]): string {
  if (rows.length === 0) return 'no transactional ids';
  return renderTable(['TRANSACTIONAL-ID', 'COORDINATOR', 'PRODUCER-ID', 'STATE'],
    rows.map((t) => [t.transactionalId, t.coordinatorId, t.producerId, t.state]));
}

/** `nowMs` turns the start time into the transaction's age. */
export function renderTransactionDescriptions(rows: readonly TransactionDescription[], nowMs: number): string {
  return renderTable(
    ['TRANSACTIONAL-ID', 'COORDINATOR', 'STATE', 'PRODUCER-ID', 'EPOCH', 'TIMEOUT-MS', 'START-TIME-MS', 'DURATION-MS', 'PARTITIONS', 'ERROR'],
    rows.map((t) => {
      const open = t.transactionStartTimeMs >= 0;
      const partitions = t.topics.flatMap((x) => x.partitions.map((p) => `${x.name}-${p}`)).join(',');
      return [
        t.transactionalId, t.coordinatorId, t.transactionState, t.producerId, t.producerEpoch, t.transactionTimeoutMs,
        open ? t.transactionStartTimeMs : null, open ? Math.max(0, nowMs - t.transactionStartTimeMs) : null, partitions,
        t.errorCode === 0 ? null : t.errorMessage ?? `error ${t.errorCode}`,
      ];
    }),
  );
}
