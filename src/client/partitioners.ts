// Choosing a partition for a record that names none.
//
// The default partitioner is Kafka's: a record with a key goes to
// murmur2(key) mod partitions (bit-compatible with the Java client, see
// murmur2.ts), so one key always lands on one partition while the partition
// count stays the same. A record without a key goes to a *sticky* partition
// (KIP-480): every keyless record of a topic goes to the same partition until
// the producer closes that partition's batch (full, linger passed, flush),
// then the next keyless record picks another partition at random. Batches
// fill up instead of each partition getting a trickle, which is what makes
// keyless produce cheap; over time the load still spreads evenly.
//
// The sticky choice prefers partitions that have a leader right now, and a
// different partition from the one just closed when there is a choice.
// Randomness comes from an injected Rng, so tests can replay a choice.

import type { Rng } from '../util/rng.js';
import { murmur2Partition } from './murmur2.js';

export interface PartitionerInput {
  readonly topic: string;
  readonly key: Uint8Array | null;
  readonly partitionCount: number;
  /** Partitions with a leader now, ascending; empty when none has one (then any partition may be chosen). */
  readonly availablePartitions: readonly number[];
}

export interface Partitioner {
  /** A partition in [0, partitionCount). */
  partition(input: PartitionerInput): number;
  /** The producer closed the open batch of `topic`/`partition` (it is full or being sent). */
  onBatchClosed?(topic: string, partition: number): void;
}

/** Kafka's default: murmur2 for keyed records, sticky for keyless ones. */
export class DefaultPartitioner implements Partitioner {
  private readonly sticky = new Map<string, number>();
  /** Topics whose sticky partition was just closed, with that partition (avoided by the next choice). */
  private readonly closed = new Map<string, number>();

  constructor(private readonly rng: Rng) {}

  partition(input: PartitionerInput): number {
    if (input.key !== null) return murmur2Partition(input.key, input.partitionCount);
    const current = this.sticky.get(input.topic);
    if (current !== undefined && current < input.partitionCount) return current;
    const next = this.choose(input, this.closed.get(input.topic));
    this.sticky.set(input.topic, next);
    this.closed.delete(input.topic);
    return next;
  }

  onBatchClosed(topic: string, partition: number): void {
    if (this.sticky.get(topic) !== partition) return;
    this.sticky.delete(topic);
    this.closed.set(topic, partition);
  }

  /** The current sticky partition of a topic, if any (for tests and diagnostics). */
  stickyPartition(topic: string): number | undefined {
    return this.sticky.get(topic);
  }

  private choose(input: PartitionerInput, avoid: number | undefined): number {
    const live = input.availablePartitions.filter((p) => p < input.partitionCount);
    const pool = live.length > 0 ? live : Array.from({ length: input.partitionCount }, (_, p) => p);
    const candidates = pool.length > 1 && avoid !== undefined ? pool.filter((p) => p !== avoid) : pool;
    return candidates[this.rng.int(candidates.length)]!;
  }
}
