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

/**
 * Timers, injected like the clock: a shell that waits asks a Scheduler, so a
 * test can run its timers by hand (ManualScheduler) instead of sleeping.
 */
export interface Scheduler {
  /** Runs `fn` once after `delayMs` (0: on a later event-loop turn, never synchronously); returns a cancel function. */
  schedule(delayMs: number, fn: () => void): () => void;
}

/** setTimeout longer than this fires at once (Node's limit); longer delays are clamped to it. */
const TIMER_DELAY_MAX_MS = 2 ** 31 - 1;

/** The timer functions of the runtime: Node has setImmediate and unref'able timers, browsers have neither. */
interface RuntimeTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(t: unknown): void;
  setImmediate?: (fn: () => void) => unknown;
  clearImmediate?: (t: unknown) => void;
}

/**
 * Real timers on any runtime (Node, browsers, workers). `keepAlive: false`
 * unrefs each delayed timer where the runtime can (Node), so a pending one
 * never keeps the process alive: a server's sockets do that. A zero delay
 * uses setImmediate where there is one, so slices of background work let I/O
 * callbacks (the request path) run between them; elsewhere setTimeout(0).
 * An immediate is never unref'd: it runs on the next turn anyway, and Node
 * does not wake its event loop for unref'd immediates alone (one can wait in
 * the poll phase for the next I/O event or timer, seconds on an idle node).
 */
function realTimers(keepAlive: boolean): Scheduler {
  const rt = globalThis as unknown as RuntimeTimers;
  const unref = (t: unknown): void => {
    if (!keepAlive) (t as { unref?: () => void } | null)?.unref?.();
  };
  return {
    schedule(delayMs, fn) {
      if (delayMs <= 0 && rt.setImmediate && rt.clearImmediate) {
        const immediate = rt.setImmediate(fn);
        return () => rt.clearImmediate!(immediate);
      }
      const timer = rt.setTimeout(fn, Math.min(Math.max(0, delayMs), TIMER_DELAY_MAX_MS));
      unref(timer);
      return () => rt.clearTimeout(timer);
    },
  };
}

/** Real timers, unref'd where the runtime allows: a pending one never keeps the process alive (servers). */
export const SystemScheduler: Scheduler = realTimers(false);

/**
 * Real timers that keep a Node process alive while pending: the client's
 * default, because its callers await them (a script waiting out a retry
 * backoff or a linger must not exit under it). The same on browsers.
 */
export const KeepAliveScheduler: Scheduler = realTimers(true);

/** Timers that run only when a test advances them (with the ManualClock it owns). */
export class ManualScheduler implements Scheduler {
  private readonly pending: { at: number; seq: number; fn: () => void }[] = [];
  private seq = 0;
  constructor(readonly clock: ManualClock = new ManualClock()) {}

  schedule(delayMs: number, fn: () => void): () => void {
    const entry = { at: this.clock.monotonicMs() + Math.max(0, delayMs), seq: this.seq++, fn };
    this.pending.push(entry);
    return () => {
      const i = this.pending.indexOf(entry);
      if (i >= 0) this.pending.splice(i, 1);
    };
  }

  get size(): number {
    return this.pending.length;
  }

  /** Runs due timers, moving the clock to each, until none is due within `ms` from now or `maxRuns` ran; returns how many ran. */
  advance(ms: number, maxRuns = 1_000_000): number {
    const until = this.clock.monotonicMs() + ms;
    let runs = 0;
    while (runs < maxRuns) {
      this.pending.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.pending[0];
      if (next === undefined || next.at > until) break;
      this.pending.shift();
      if (next.at > this.clock.monotonicMs()) this.clock.advance(next.at - this.clock.monotonicMs());
      next.fn();
      runs++;
    }
    if (until > this.clock.monotonicMs()) this.clock.advance(until - this.clock.monotonicMs());
    return runs;
  }
}
