// Delayed operations ("purgatory", Kafka's DelayedOperation and
// DelayedOperationPurgatory): requests that wait for a condition on one or
// more partitions — an acks=all produce until the high watermark passes its
// last offset (delayed-produce.ts), a long-poll fetch until enough data is
// readable (delayed-fetch.ts) — with a deadline.
//
// An operation has Kafka's shape: `tryComplete()` checks its condition and,
// when it holds, calls `forceComplete()`; `onComplete()` answers the request
// and runs exactly once, whichever way the operation completed;
// `onExpiration()` runs (after onComplete) only when the deadline did it.
// The purgatory re-checks an operation when something happens on a partition
// it watches (`poke`), completes it at its deadline, or on `completeKey`
// (leadership lost, partition deleted) and `completeAll` (shutdown).
// Deadlines are timers of the injected Scheduler, so a simulation runs them
// on its own clock.

import type { Scheduler } from '../util/clock.js';

export abstract class DelayedOperation {
  private completed = false;

  /** Checks the condition; when it holds, completes the operation (forceComplete) and returns true. */
  abstract tryComplete(): boolean;
  /** Answers the request. Runs exactly once. */
  protected abstract onComplete(): void;
  /** The deadline passed (runs after onComplete, only then). */
  protected onExpiration(): void {}

  get isCompleted(): boolean {
    return this.completed;
  }

  /** Completes the operation now unless it already was; returns whether this call did it. */
  forceComplete(): boolean {
    if (this.completed) return false;
    this.completed = true;
    this.onComplete();
    return true;
  }

  /** The purgatory's deadline: completes the operation, and tells it why. */
  expire(): void {
    if (this.forceComplete()) this.onExpiration();
  }
}

interface Entry {
  readonly op: DelayedOperation;
  readonly keys: readonly string[];
  /** Cancels the deadline timer. */
  readonly cancel: () => void;
}

export class Purgatory {
  private readonly byKey = new Map<string, Set<Entry>>();
  private readonly all = new Set<Entry>();

  constructor(private readonly scheduler: Scheduler) {}

  /**
   * Completes `op` now if it can; else watches `keys` (partition keys) until
   * it completes, or `timeoutMs` passes. Returns whether it completed at once.
   */
  tryCompleteElseWatch(op: DelayedOperation, keys: readonly string[], timeoutMs: number): boolean {
    if (op.tryComplete()) return true;
    this.watch(op, keys, timeoutMs);
    return false;
  }

  /** Watches `keys` until `op` completes or `timeoutMs` passes (the caller just found it incomplete). */
  watch(op: DelayedOperation, keys: readonly string[], timeoutMs: number): void {
    const entry: Entry = {
      op,
      keys,
      cancel: this.scheduler.schedule(timeoutMs, () => {
        if (this.remove(entry)) op.expire();
      }),
    };
    this.all.add(entry);
    for (const k of keys) {
      let set = this.byKey.get(k);
      if (!set) this.byKey.set(k, (set = new Set()));
      set.add(entry);
    }
  }

  /** Re-checks the operations of `key`; the ones that complete leave. */
  poke(key: string): void {
    const set = this.byKey.get(key);
    if (!set) return;
    for (const entry of [...set]) {
      if (!set.has(entry)) continue;
      if (entry.op.isCompleted || entry.op.tryComplete()) this.remove(entry);
    }
  }

  /** Completes every operation of `key` now, with what holds now (leadership lost, partition deleted). */
  completeKey(key: string): void {
    const set = this.byKey.get(key);
    if (!set) return;
    for (const entry of [...set]) if (this.remove(entry)) entry.op.forceComplete();
  }

  completeAll(): void {
    for (const key of [...this.byKey.keys()]) this.completeKey(key);
  }

  get size(): number {
    return this.all.size;
  }

  private remove(entry: Entry): boolean {
    if (!this.all.delete(entry)) return false;
    for (const k of entry.keys) {
      const set = this.byKey.get(k);
      set?.delete(entry);
      if (set && set.size === 0) this.byKey.delete(k);
    }
    entry.cancel();
    return true;
  }
}
