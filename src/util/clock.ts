// Time is injected everywhere so pure cores and tests control it. Shell code
// uses SystemClock; tests and simulations use ManualClock.

export interface Clock {
  /** Wall-clock milliseconds since the epoch (record timestamps, retention). */
  nowMs(): number;
  /** Monotonic milliseconds for measuring intervals (timeouts, lag). */
  monotonicMs(): number;
}

export const SystemClock: Clock = {
  nowMs: () => Date.now(),
  monotonicMs: () => performance.now(),
};

/** A clock that moves only when told to. Both readings advance together. */
export class ManualClock implements Clock {
  constructor(private wallMs = 1_700_000_000_000, private monoMs = 0) {}
  nowMs(): number {
    return this.wallMs;
  }
  monotonicMs(): number {
    return this.monoMs;
  }
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`cannot move a clock backwards (${ms} ms)`);
    this.wallMs += ms;
    this.monoMs += ms;
  }
  set(wallMs: number): void {
    this.wallMs = wallMs;
  }
}
