// Delayed operations ("purgatory"): requests that wait for a condition on one
// or more partitions — an acks=all produce until the high watermark passes its
// last offset, a long-poll fetch until enough data is readable — with a
// deadline. Each waiter is re-checked when something happens on a partition
// it watches (`poke`) and completes exactly once: when its check says so, at
// its deadline, or when the manager shuts down. Deadlines are timers of the
// injected Scheduler, so a simulation runs them on its own clock.

import type { Scheduler } from '../util/clock.js';

export interface Waiter {
  /** Returns true when the operation is complete (it has resolved itself). */
  check(): boolean;
  /** Deadline passed (or shutdown): resolve with what is there now. */
  expire(): void;
}

interface Entry {
  readonly waiter: Waiter;
  readonly keys: readonly string[];
  /** Cancels the deadline timer. */
  readonly cancel: () => void;
}

export class Purgatory {
  private readonly byKey = new Map<string, Set<Entry>>();
  private readonly all = new Set<Entry>();

  constructor(private readonly scheduler: Scheduler) {}

  /** Watches `keys` (partition keys) until `waiter` completes or `timeoutMs` passes. */
  watch(keys: readonly string[], waiter: Waiter, timeoutMs: number): void {
    const entry: Entry = {
      waiter,
      keys,
      cancel: this.scheduler.schedule(timeoutMs, () => {
        if (this.remove(entry)) waiter.expire();
      }),
    };
    this.all.add(entry);
    for (const k of keys) {
      let set = this.byKey.get(k);
      if (!set) this.byKey.set(k, (set = new Set()));
      set.add(entry);
    }
  }

  /** Re-checks the waiters of `key`; the ones that complete leave. */
  poke(key: string): void {
    const set = this.byKey.get(key);
    if (!set) return;
    for (const entry of [...set]) {
      if (!set.has(entry)) continue;
      if (entry.waiter.check()) this.remove(entry);
    }
  }

  /** Expires every waiter of `key` now (leadership lost, partition deleted). */
  expireKey(key: string): void {
    const set = this.byKey.get(key);
    if (!set) return;
    for (const entry of [...set]) if (this.remove(entry)) entry.waiter.expire();
  }

  expireAll(): void {
    for (const key of [...this.byKey.keys()]) this.expireKey(key);
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
