// `sluice groups reset-offsets`: the plan (dry run, the default, as Kafka's
// tool) and its execution.
//
// The dry run computes the new offsets with the rule GroupAdmin.resetOffsets
// applies — earliest / latest, an offset clamped to [earliest, latest], the
// first record at or after a time (latest when there is none) — from the same
// ListOffsets answers, and commits nothing. --execute calls
// GroupAdmin.resetOffsets, which refuses a group with members
// (NON_EMPTY_GROUP), and shows what it committed. Between a dry run and an
// execute the log may grow, so latest / by-time targets can differ.

import { Errors, SluiceError } from '../util/errors.js';
import type { Client } from '../client/index.js';
import type { ResetTarget } from '../client/group-admin.js';
import { listOffsets, partitionKey } from '../client/consumer-list-offsets.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from '../protocol/apis/offsets.js';
import type { ResetRow } from './groups-render.js';

export interface ResetRequest {
  readonly groupId: string;
  readonly topic: string;
  /** Default: every partition of the topic. */
  readonly partitions?: readonly number[] | undefined;
  readonly to: ResetTarget;
  readonly execute: boolean;
}

export interface ResetOutcome {
  readonly executed: boolean;
  /** Members of the group now (a dry run on a live group would be refused on --execute). */
  readonly members: number;
  readonly rows: ResetRow[];
}

export async function resetGroupOffsets(client: Client, req: ResetRequest): Promise<ResetOutcome> {
  const admin = client.groupAdmin();
  const topic = await client.retry('Metadata', () => client.topic(req.topic));
  const partitions = req.partitions ?? topic.partitions.map((p) => p.partition);
  for (const p of partitions) {
    if (!topic.partitions[p]) throw new SluiceError(Errors.UNKNOWN_TOPIC_OR_PARTITION, `topic ${req.topic} has no partition ${p}`);
  }
  const current = await committedOffsets(client, req.groupId, req.topic);
  const [group] = await admin.describeGroups([req.groupId]);
  const members = group?.members.length ?? 0;
  const targets = req.execute
    ? await admin.resetOffsets({ groupId: req.groupId, topic: req.topic, partitions, to: req.to })
    : await planTargets(client, req.topic, partitions, req.to);
  const rows = targets.map((t) => ({ topic: t.topic, partition: t.partition, currentOffset: current.get(t.partition) ?? -1, newOffset: t.offset }));
  return { executed: req.execute, members, rows };
}

async function committedOffsets(client: Client, groupId: string, topic: string): Promise<Map<number, number>> {
  const fetched = await client.groupAdmin().fetchOffsets({ groupId, topics: [topic] });
  return new Map((fetched.find((t) => t.topic === topic)?.partitions ?? []).map((p) => [p.partition, p.offset]));
}

/** The offsets GroupAdmin.resetOffsets would commit now. */
export async function planTargets(client: Client, topic: string, partitions: readonly number[], to: ResetTarget): Promise<Array<{ topic: string; partition: number; offset: number }>> {
  const q = (timestamp: number) => partitions.map((partition) => ({ topic, partition, timestamp }));
  const [earliest, latest] = await Promise.all([listOffsets(client, q(EARLIEST_TIMESTAMP)), listOffsets(client, q(LATEST_TIMESTAMP))]);
  const byTime = typeof to === 'object' && 'timestamp' in to ? await listOffsets(client, q(to.timestamp)) : null;
  return partitions.map((partition) => {
    const key = partitionKey(topic, partition);
    const lo = earliest.get(key) ?? 0;
    const hi = latest.get(key) ?? lo;
    return { topic, partition, offset: targetOffset(to, lo, hi, byTime?.get(key) ?? -1) };
  });
}

/** The reset rule, given a partition's earliest and latest offsets and the by-time answer (-1: no record at or after). */
export function targetOffset(to: ResetTarget, earliest: number, latest: number, atTime: number): number {
  if (to === 'earliest') return earliest;
  if (to === 'latest') return latest;
  if ('offset' in to) return Math.min(Math.max(to.offset, earliest), latest);
  return atTime < 0 ? latest : atTime;
}
