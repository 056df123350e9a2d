// ListOffsets for many partitions at once: one request per partition leader,
// retried (with the Client's backoff, after a metadata refresh) for the
// partitions whose leader moved or is being elected. The consumer uses it to
// reset positions (earliest / latest / by time), the group admin for lag and
// offset resets.
//
// Result: offset per partition key (partitionKey()); a by-time lookup that
// finds no record at or after the time answers -1, as the broker does.

import { Errors, isSluiceError, SluiceError } from '../util/errors.js';
import type { Client } from './client.js';
import { errorFromCode } from './responses.js';
import { READ_UNCOMMITTED, type IsolationLevel } from '../protocol/apis/fetch.js';

export interface OffsetQuery {
  readonly topic: string;
  readonly partition: number;
  /** LATEST_TIMESTAMP (-1), EARLIEST_TIMESTAMP (-2) or a time in ms since the epoch. */
  readonly timestamp: number;
}

/** The key the consumer and group admin index partitions by. */
export function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/** isolationLevel 1 (read_committed): LATEST is the last stable offset. */
export async function listOffsets(client: Client, queries: readonly OffsetQuery[], isolationLevel: IsolationLevel = READ_UNCOMMITTED): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  let pending = [...queries];
  await client.retry('ListOffsets', async () => {
    const byLeader = new Map<number, OffsetQuery[]>();
    let lastError: SluiceError | null = null;
    for (const q of pending) {
      try {
        const { brokerId } = await client.leaderFor(q.topic, q.partition);
        byLeader.set(brokerId, [...(byLeader.get(brokerId) ?? []), q]);
      } catch (err) {
        if (!isSluiceError(err)) throw err;
        lastError = err;
      }
    }
    await Promise.all([...byLeader].map(async ([brokerId, qs]) => {
      try {
        lastError = (await askLeader(client, brokerId, qs, found, isolationLevel)) ?? lastError;
      } catch (err) {
        if (!isSluiceError(err) || !err.retriable) throw err;
        client.noteError(err);
        lastError = err;
      }
    }));
    pending = pending.filter((q) => !found.has(partitionKey(q.topic, q.partition)));
    if (pending.length > 0) throw lastError ?? new SluiceError(Errors.LEADER_NOT_AVAILABLE, `no offsets for ${pending.length} partitions`);
  });
  return found;
}

/** One request to one leader; fills `found`; returns the last retriable partition error (a non-retriable one throws). */
async function askLeader(
  client: Client, brokerId: number, qs: readonly OffsetQuery[], found: Map<string, number>, isolationLevel: IsolationLevel,
): Promise<SluiceError | null> {
  const byTopic = new Map<string, OffsetQuery[]>();
  for (const q of qs) byTopic.set(q.topic, [...(byTopic.get(q.topic) ?? []), q]);
  const conn = await client.connection(brokerId);
  const res = await conn.listOffsets({
    isolationLevel,
    topics: [...byTopic].map(([name, ps]) => ({ name, partitions: ps.map((q) => ({ partition: q.partition, timestamp: q.timestamp })) })),
  });
  let retriable: SluiceError | null = null;
  for (const t of res.topics) {
    for (const p of t.partitions) {
      if (p.errorCode === Errors.NONE.code) {
        found.set(partitionKey(t.name, p.partition), p.offset);
        continue;
      }
      const err = errorFromCode(p.errorCode, p.errorMessage, { topic: t.name, partition: p.partition });
      if (!err.retriable) throw err;
      client.noteError(err);
      retriable = err;
    }
  }
  return retriable;
}
