// The consumer's offset book: per partition, the offset after the last
// record the application completed (`resolved`) and the offset last
// committed; commits go one at a time, in call order.
//
// Invariant (at-least-once): a committed offset is always one the
// application resolved (or sought to, or committed by hand) — the book never
// commits past what was completed. Commits that fail are logged and left for
// the next attempt; the records after the last commit may then be delivered
// again, never skipped.

import { Errors, SluiceError } from '../util/errors.js';
import type { Clock } from '../util/clock.js';
import type { ClientLogger } from './client.js';
import {
  commitGroupOffsets, fetchGroupOffsets, type CommitContext, type CoordinatorLink, type OffsetToCommit,
} from './consumer-coordinator.js';
import type { TopicPartition } from './consumer-fetcher.js';
import { partitionKey } from './consumer-list-offsets.js';

export interface OffsetBookDeps {
  readonly coord: CoordinatorLink;
  readonly autoCommitIntervalMs: number;
  /** The client's clock: auto-commit intervals are measured on it. */
  readonly clock: Clock;
  /** The generation to commit in; null while the consumer is not (yet) a member. */
  readonly context: () => CommitContext | null;
  readonly onCommitted: (offsets: readonly OffsetToCommit[]) => void;
  readonly onCommitError: (err: unknown) => void;
  readonly logger: ClientLogger;
  /**
   * read_committed consumers (KIP-447): where a transaction's offset commit is
   * pending, wait for it to end instead of starting at the older offset — the
   * start of exactly-once read-process-write after a rebalance.
   */
  readonly requireStable?: boolean;
}

export class OffsetBook {
  private readonly resolved = new Map<string, OffsetToCommit>();
  private readonly committed = new Map<string, number>();
  private chain: Promise<void> = Promise.resolve();
  private lastCommitMs = 0;

  constructor(private readonly deps: OffsetBookDeps) {}

  /** The application completed everything below `offset` in this partition (or moved there). */
  resolve(tp: TopicPartition, offset: number): void {
    this.resolved.set(partitionKey(tp.topic, tp.partition), { topic: tp.topic, partition: tp.partition, offset });
  }

  forget(keys: Iterable<string>): void {
    for (const k of keys) {
      this.resolved.delete(k);
      this.committed.delete(k);
    }
  }

  /** Committed offsets by key (-1: none), remembered so unchanged ones are not committed again. */
  async fetchCommitted(tps: readonly TopicPartition[]): Promise<Map<string, number>> {
    const byTopic = new Map<string, number[]>();
    for (const tp of tps) byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), tp.partition]);
    const offsets = await fetchGroupOffsets(this.deps.coord, [...byTopic].map(([topic, partitions]) => ({ topic, partitions })), this.deps.requireStable ?? false);
    const out = new Map<string, number>();
    for (const o of offsets) {
      const key = partitionKey(o.topic, o.partition);
      out.set(key, o.offset);
      if (o.offset >= 0) this.committed.set(key, o.offset);
    }
    return out;
  }

  async commitIfDue(): Promise<void> {
    if (this.deps.clock.monotonicMs() - this.lastCommitMs < this.deps.autoCommitIntervalMs) return;
    await this.commitResolved(null);
  }

  /** Commits resolved offsets that moved (only those of `keys` when given); failures are logged, not thrown. */
  async commitResolved(keys: ReadonlySet<string> | null): Promise<void> {
    this.lastCommitMs = this.deps.clock.monotonicMs();
    if (this.deps.context() === null) return;
    const due = [...this.resolved].filter(([k, o]) => (keys === null || keys.has(k)) && this.committed.get(k) !== o.offset).map(([, o]) => o);
    if (due.length === 0) return;
    await this.commit(due).catch((err: unknown) => {
      this.deps.logger.warn({ groupId: this.deps.coord.groupId, err: String(err) }, 'offset commit failed; records after the last commit may be delivered again');
    });
  }

  /** Commits now, after any commit in progress. */
  commit(offsets: readonly OffsetToCommit[]): Promise<void> {
    const run = async (): Promise<void> => {
      const ctx = this.deps.context();
      if (ctx === null) throw new SluiceError(Errors.REBALANCE_IN_PROGRESS, 'not a member of the group yet: nothing can be committed');
      try {
        await commitGroupOffsets(this.deps.coord, ctx, offsets);
      } catch (err) {
        this.deps.onCommitError(err);
        throw err;
      }
      for (const o of offsets) this.committed.set(partitionKey(o.topic, o.partition), o.offset);
      this.deps.onCommitted(offsets);
    };
    const p = this.chain.then(run, run);
    this.chain = p.catch(() => undefined);
    return p;
  }
}
