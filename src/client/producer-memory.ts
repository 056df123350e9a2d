// The producer's bound on buffered record bytes (Kafka's buffer.memory).
// Every record reserves its estimated size before it joins a batch and gives
// it back when its batch is acknowledged or fails. When the bound is reached,
// a reservation waits — this is the back-pressure a caller of send() feels —
// and fails after its time limit with a retriable REQUEST_TIMED_OUT.
//
// Waiters are served strictly first come, first served: a small reservation
// never overtakes a larger one that waits, so records enter batches in the
// order send() was called.
//
// Invariant: 0 <= usedBytes <= bytesMax.

import { AssertionError, assert } from '../util/assert.js';
import { Errors, SluiceError } from '../util/errors.js';
import type { Scheduler } from '../util/clock.js';

interface Waiter {
  readonly bytes: number;
  readonly resolve: () => void;
  readonly reject: (err: SluiceError) => void;
  /** Cancels the waiter's time limit; null once it is served or failed. */
  cancelTimer: (() => void) | null;
}

export class BufferPool {
  private used = 0;
  private readonly waiters: Waiter[] = [];

  constructor(readonly bytesMax: number, private readonly scheduler: Scheduler) {
    assert(Number.isSafeInteger(bytesMax) && bytesMax > 0, `bad bytesMax ${bytesMax}`);
  }

  get usedBytes(): number {
    return this.used;
  }

  get hasWaiters(): boolean {
    return this.waiters.length > 0;
  }

  /**
   * Reserves `bytes` if that can be done at once (nobody waits and they fit):
   * the per-record fast path, which needs no deadline. A reservation larger
   * than the whole pool can never be granted and throws MESSAGE_TOO_LARGE.
   */
  tryReserve(bytes: number): boolean {
    // Per record: the message is built only on failure.
    if (!(Number.isSafeInteger(bytes) && bytes > 0)) throw new AssertionError(`bad reservation ${bytes}`);
    if (bytes > this.bytesMax) {
      throw new SluiceError(Errors.MESSAGE_TOO_LARGE, `a record of ~${bytes} bytes exceeds the producer's bufferBytesMax ${this.bytesMax}`);
    }
    if (this.waiters.length > 0 || this.used + bytes > this.bytesMax) return false;
    this.used += bytes;
    return true;
  }

  /**
   * Reserves `bytes`: returns null when granted at once, else a promise that
   * resolves once granted or rejects after `waitMs`. Throws as tryReserve().
   */
  reserve(bytes: number, waitMs: number): Promise<void> | null {
    if (this.tryReserve(bytes)) return null;
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { bytes, resolve, reject, cancelTimer: null };
      waiter.cancelTimer = this.scheduler.schedule(Math.max(0, waitMs), () => {
        const i = this.waiters.indexOf(waiter);
        if (i < 0) return;
        this.waiters.splice(i, 1);
        reject(new SluiceError(Errors.REQUEST_TIMED_OUT, `producer buffer full: ${bytes} bytes not available within ${waitMs} ms (bufferBytesMax ${this.bytesMax})`));
        this.grant(); // the next waiter may fit now that this one left the line
      });
      this.waiters.push(waiter);
    });
  }

  release(bytes: number): void {
    assert(bytes >= 0 && bytes <= this.used, `releasing ${bytes} of ${this.used} bytes`);
    this.used -= bytes;
    this.grant();
  }

  /** Fails every waiter (the producer is closing). */
  failWaiters(err: SluiceError): void {
    for (const w of this.waiters.splice(0)) {
      w.cancelTimer?.();
      w.reject(err);
    }
  }

  private grant(): void {
    while (this.waiters.length > 0 && this.used + this.waiters[0]!.bytes <= this.bytesMax) {
      const w = this.waiters.shift()!;
      w.cancelTimer?.();
      this.used += w.bytes;
      w.resolve();
    }
  }
}
