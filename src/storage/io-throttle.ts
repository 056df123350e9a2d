// The log cleaner's I/O throttle (Kafka's Throttler for
// log.cleaner.io.max.bytes.per.second): after each slice the cleaner reports
// the bytes it read and wrote and waits the returned delay before the next.
// Pure arithmetic over an injected clock; the caller does the waiting.

import { NEVER } from './log-config.js';
import type { Clock } from '../util/clock.js';

/** A measuring window longer than this restarts, so an idle spell does not become a burst allowance. */
const WINDOW_MS = 1000;

export class IoThrottle {
  private windowStartMs: number;
  private bytesInWindow = 0;

  constructor(private readonly bytesPerSecond: number, private readonly clock: Clock) {
    this.windowStartMs = clock.monotonicMs();
  }

  /** Counts `bytes` just done; returns how long to wait (ms) so the rate stays at or below the limit. */
  record(bytes: number): number {
    if (this.bytesPerSecond >= NEVER) return 0;
    const now = this.clock.monotonicMs();
    this.bytesInWindow += bytes;
    const elapsed = now - this.windowStartMs;
    const due = (this.bytesInWindow / this.bytesPerSecond) * 1000;
    const delay = Math.max(0, due - elapsed);
    if (elapsed + delay >= WINDOW_MS) {
      this.windowStartMs = now + delay;
      this.bytesInWindow = 0;
    }
    return Math.ceil(delay);
  }
}
