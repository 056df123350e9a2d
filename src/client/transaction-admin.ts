// Transaction administration (what kafka-transactions.sh list/describe do):
// ListTransactions goes to every broker (each answers for the
// __transaction_state partitions it leads) and the answers are merged;
// DescribeTransactions goes to each id's coordinator (FindCoordinator
// keyType 1), ids grouped per coordinator. Retriable failures (a coordinator
// moving or loading, a lost connection) are retried with the Client's
// backoff; a per-id error is returned in that id's entry.

import { COORDINATOR_KEY_TRANSACTION, type DescribedTransaction, type TransactionStateName } from '../protocol/apis/transactions.js';
import { Errors, SluiceError } from '../util/errors.js';
import type { Client } from './client.js';
import { checked } from './consumer-coordinator.js';

export interface ListTransactionsOptions {
  /** Only transactions in these states (Kafka's names: 'Ongoing', 'PrepareCommit', ...). */
  readonly states?: readonly string[];
  readonly producerIds?: readonly number[];
  /** Only transactions open for longer than this. */
  readonly durationMs?: number;
}

export interface TransactionListing {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly state: TransactionStateName;
  /** The broker that answered for it (its coordinator). */
  readonly coordinatorId: number;
}

export type TransactionDescription = DescribedTransaction & { readonly coordinatorId: number };

export async function listTransactions(client: Client, opts: ListTransactionsOptions = {}): Promise<TransactionListing[]> {
  await client.refreshMetadata();
  const brokers = [...client.clusterInfo.brokers.keys()].sort((a, b) => a - b);
  const lists = await Promise.all(brokers.map((id) => client.retry('ListTransactions', async () => {
    const res = await (await client.connection(id)).listTransactions({
      stateFilters: opts.states ?? [], producerIdFilters: opts.producerIds ?? [], durationFilterMs: opts.durationMs ?? -1,
    });
    if (res.unknownStateFilters.length > 0) {
      throw new SluiceError(Errors.INVALID_REQUEST, `unknown transaction states: ${res.unknownStateFilters.join(', ')}`);
    }
    return res.transactionStates.map((t) => ({ transactionalId: t.transactionalId, producerId: t.producerId, state: t.transactionState, coordinatorId: id }));
  })));
  return lists.flat().sort((a, b) => a.transactionalId.localeCompare(b.transactionalId));
}

export async function describeTransactions(client: Client, ids: readonly string[]): Promise<TransactionDescription[]> {
  const byCoordinator = new Map<number, { url: string; ids: string[] }>();
  await Promise.all([...new Set(ids)].map((id) => client.retry('FindCoordinator', async () => {
    const found = checked('FindCoordinator', await (await client.anyConnection()).findCoordinator(id, COORDINATOR_KEY_TRANSACTION));
    if (found.url === null || found.nodeId < 0) throw new SluiceError(Errors.COORDINATOR_NOT_AVAILABLE, `no transaction coordinator for ${id} yet`);
    const entry = byCoordinator.get(found.nodeId) ?? { url: found.url, ids: [] };
    entry.ids.push(id);
    byCoordinator.set(found.nodeId, entry);
  })));
  const out: TransactionDescription[] = [];
  await Promise.all([...byCoordinator].map(([nodeId, { url, ids: mine }]) => client.retry('DescribeTransactions', async () => {
    const res = await (await client.connectionTo(url)).describeTransactions(mine);
    for (const t of res.transactionStates) out.push({ ...t, coordinatorId: nodeId });
  })));
  const order = new Map(ids.map((id, i) => [id, i]));
  return out.sort((a, b) => (order.get(a.transactionalId) ?? 0) - (order.get(b.transactionalId) ?? 0));
}
