// Load-loop helpers shared by the peer deployments, so NATS and Redis are
// driven the same way: a bounded window of requests in flight, a tally that
// feeds the ThroughputMeter and the progress callback in chunks (not per
// record), the split of a record count among producers, and the e2e payload
// (send time as a float64 in the first 8 bytes, random bytes after).
//
// Invariants: the window never admits more than `max` requests; every wait on
// it is bounded in time, so a server that stops answering fails the run
// instead of hanging it.

import { assert } from '../../src/util/assert.js';
import { Pacer, ThroughputMeter, nowMs } from '../suite/measure.js';
import { sleepMs } from './server-process.js';
import type { Progress } from '../suite/types.js';

/** Records the tally accumulates before it updates the meter and reports progress. */
const TALLY_FLUSH_RECORDS = 512;
/** The e2e payload's send timestamp: a float64 of ms since the epoch. */
export const STAMP_BYTES = 8;

/** Requests in flight, at most `max`; producers wait on it for room, with a time bound. */
export class InFlightWindow {
  private inFlight = 0;
  private waiter: { readonly atMost: number; readonly wake: () => void } | undefined;

  constructor(readonly max: number) {
    assert(max >= 1, 'a window admits at least one request');
  }

  get size(): number {
    return this.inFlight;
  }

  hasRoom(): boolean {
    return this.inFlight < this.max;
  }

  acquire(): void {
    assert(this.inFlight < this.max, 'window overfilled');
    this.inFlight++;
  }

  release(): void {
    assert(this.inFlight > 0, 'window released more than acquired');
    this.inFlight--;
    if (this.waiter && this.inFlight <= this.waiter.atMost) this.waiter.wake();
  }

  /**
   * Resolves once at most `atMost` requests are in flight; throws when that
   * takes longer than `timeoutMs` (`what` names the requests in the error).
   * One waiter at a time: one loop drives a window.
   */
  async settle(atMost: number, timeoutMs: number, what: string): Promise<void> {
    if (this.inFlight <= atMost) return;
    assert(this.waiter === undefined, 'one waiter per window');
    const settled = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.waiter = { atMost, wake: () => { clearTimeout(timer); resolve(true); } };
    });
    this.waiter = undefined;
    if (!settled) throw new Error(`${this.inFlight} ${what} still unanswered after ${timeoutMs} ms`);
  }

  /** Waits for room; waking at half the window (not at the first free slot) keeps event-loop turns per request low. */
  waitForRoom(timeoutMs: number, what: string): Promise<void> {
    return this.settle(Math.floor(this.max / 2), timeoutMs, what);
  }
}

/** `promise`, or an error naming `what` when it takes longer than `timeoutMs`. */
export async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Counts completions and passes them to the meter and the progress bar every few hundred records. */
export class Tally {
  private records = 0;
  private bytes = 0;

  constructor(private readonly meter: ThroughputMeter, private readonly progress: Progress) {}

  add(records: number, bytes: number): void {
    this.records += records;
    this.bytes += bytes;
    if (this.records >= TALLY_FLUSH_RECORDS) this.flush();
  }

  flush(): void {
    if (this.records === 0) return;
    this.meter.add(this.records, this.bytes);
    this.records = 0;
    this.bytes = 0;
    this.progress(this.meter.done);
  }
}

/** `records` split among `parts` workers as evenly as possible (the first ones take the remainder). */
export function splitRecords(records: number, parts: number): number[] {
  assert(Number.isInteger(parts) && parts >= 1, `need at least one worker, got ${parts}`);
  const base = Math.floor(records / parts);
  return Array.from({ length: parts }, (_, i) => base + (i < records % parts ? 1 : 0));
}

/** A fresh e2e payload: `filler`'s bytes with the send time written over the first 8. */
export function stampedValue(filler: Buffer): Buffer {
  assert(filler.length >= STAMP_BYTES, `e2e values need at least ${STAMP_BYTES} bytes for the send time`);
  const value = Buffer.allocUnsafe(filler.length);
  filler.copy(value);
  value.writeDoubleLE(nowMs(), 0);
  return value;
}

/** The send time (nowMs() clock) stamped in the value that starts at `offset` of `bytes`. */
export function sentAtMs(bytes: Uint8Array, offset = 0): number {
  assert(offset + STAMP_BYTES <= bytes.length, 'value too short for a send time');
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, STAMP_BYTES);
  return view.getFloat64(0, true);
}

/** The performance.now() reading `seconds` from now, for a loop's time bound. */
export function deadlineAfter(seconds: number): number {
  return performance.now() + seconds * 1000;
}

/** Pacing tick: one timer turn; records due since the last tick go out together. */
const PACE_TICK_MS = 1;

/**
 * Offers records at `ratePerS` for `seconds`: each tick, `send(due)` sends up
 * to `due` records and returns how many it sent (fewer when its window is
 * full — the pacer then still owes them, and the achieved rate shows it).
 */
export async function sendPaced(ratePerS: number, seconds: number, send: (due: number) => number): Promise<{ sent: number; seconds: number }> {
  assert(ratePerS > 0 && seconds > 0, 'a paced run needs a rate and a duration');
  const pacer = new Pacer(ratePerS);
  const start = performance.now();
  const deadline = deadlineAfter(seconds);
  let sent = 0;
  while (performance.now() < deadline) {
    const due = pacer.due();
    if (due > 0) {
      const n = send(due);
      pacer.markSent(n);
      sent += n;
    }
    await sleepMs(PACE_TICK_MS);
  }
  return { sent, seconds: (performance.now() - start) / 1000 };
}

/**
 * A wait that ends when `finish()` is called or after `timeoutMs` (the bound
 * of a callback-driven read), or fails when `fail()` is called first.
 */
export class BoundedWait {
  private settle: ((err?: Error) => void) | undefined;
  private readonly timer: NodeJS.Timeout;
  readonly done: Promise<void>;

  constructor(timeoutMs: number) {
    this.done = new Promise((resolve, reject) => {
      this.settle = (err) => (err ? reject(err) : resolve());
    });
    // A failure nobody awaits (the run already threw) must not become an unhandled rejection.
    this.done.catch(() => undefined);
    this.timer = setTimeout(() => this.finish(), Math.max(0, timeoutMs));
  }

  finish(): void {
    this.end(undefined);
  }

  fail(err: Error): void {
    this.end(err);
  }

  private end(err: Error | undefined): void {
    clearTimeout(this.timer);
    const settle = this.settle;
    this.settle = undefined;
    settle?.(err);
  }
}
