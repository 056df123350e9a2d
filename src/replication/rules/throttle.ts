// Replication throttle (Kafka's leader.replication.throttled.rate, applied to
// reassignment traffic): a token bucket of bytes that refills at `rate`
// bytes/s up to one second's worth. A leader asks how many bytes it may send
// to a throttled follower now, reads at most that much (a read may return one
// batch larger: the bucket then goes into debt, so the average holds), and
// takes what it sent. Pure: time comes from the injected clock.

import type { Clock } from '../../util/clock.js';

export class TokenBucket {
  private tokens = 0;
  private lastMs: number;
  private rate = 0;

  constructor(private readonly clock: Clock) {
    this.lastMs = clock.monotonicMs();
  }

  /** Bytes that may go now at `rateBytesPerS` (> 0); the bucket starts full when the rate changes. */
  available(rateBytesPerS: number): number {
    const now = this.clock.monotonicMs();
    if (rateBytesPerS !== this.rate) {
      this.rate = rateBytesPerS;
      this.tokens = rateBytesPerS;
    } else {
      this.tokens = Math.min(this.rate, this.tokens + ((now - this.lastMs) * this.rate) / 1000);
    }
    this.lastMs = now;
    return Math.floor(this.tokens);
  }

  /** Takes `bytes` that were sent (may leave the bucket in debt). */
  take(bytes: number): void {
    this.tokens -= bytes;
  }
}
