// The simulation kernel: one discrete-event loop, one seeded RNG and one
// simulated time line for a whole cluster of real nodes in one process.
//
// Every node (and every client) is a *host*. A host gets its own Clock and
// Scheduler (src/util/clock.ts), which is all the real code sees of time:
// - its clock reads the kernel's true time plus the host's offsets (each host
//   starts with its own wall and monotonic offset, and a clock jump moves one
//   host's wall clock either way or its monotonic clock forward);
// - its scheduler turns `schedule(delay, fn)` into a kernel event owned by the
//   host, so pausing the host holds its events and crashing it drops them.
//
// The loop runs ONE event, then drains the microtask queue (every promise
// continuation the event caused) before the next, so an event and all the
// synchronous-looking async work it triggers are one atomic step. There is
// no real I/O underneath (in-memory network and disk), so draining is a
// setImmediate: Node runs every nextTick and promise job before it. Events
// run in (time, seq) order — never an order that depends on the engine — so
// a run is a pure function of its seed. Each event adds a line to a rolling
// digest (same seed ⇒ same digest: test/sim/cluster/kernel.test.ts) and to a
// bounded ring buffer, the compact trace a failure prints.
//
// Invariants: true time never decreases; an event is never scheduled in the
// past; a dead incarnation's events never run; a paused host's events run only
// after it resumes, in their original order.

import { createHash, type Hash } from 'node:crypto';
import { assert } from '../../../src/util/assert.js';
import type { Clock, Scheduler } from '../../../src/util/clock.js';
import { SeededRng, type Rng } from '../../../src/util/rng.js';

export type HostId = string;

/** Wall-clock reading of true time 0 (any fixed value: only differences matter). */
const WALL_EPOCH_MS = 1_767_225_600_000; // 2026-01-01T00:00:00Z

interface KernelEvent {
  at: number;
  seq: number;
  readonly owner: Incarnation | null;
  readonly label: string;
  readonly run: () => void;
  cancelled: boolean;
}

/** One life of a host between crashes: its events die with it. */
class Incarnation {
  alive = true;
  constructor(readonly host: HostState, readonly n: number) {}
}

interface HostState {
  readonly id: HostId;
  wallOffsetMs: number;
  monoOffsetMs: number;
  paused: boolean;
  /** Events that came due while paused, in the order they came due. */
  readonly held: KernelEvent[];
  current: Incarnation;
  incarnations: number;
}

export interface KernelOptions {
  readonly seed: number;
  /** Lines of trace kept for a failure report (default 400). */
  readonly traceLines?: number;
  /** Keep every trace line (single-seed replays). */
  readonly fullTrace?: boolean;
}

export interface KernelStats {
  readonly events: number;
  readonly nowMs: number;
  readonly pending: number;
}

/** What a host's code sees: its clock and scheduler, bound to one incarnation. */
export interface HostTime {
  readonly host: HostId;
  readonly incarnation: number;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  /** Schedules a labelled event on this host (the network's deliveries, the cluster's own steps). */
  schedule(delayMs: number, label: string, fn: () => void): () => void;
  /** False once the host crashed after this incarnation was made. */
  readonly alive: boolean;
}

export class SimKernel {
  readonly seed: number;
  /** The root generator; every component takes a fork, in a fixed order. */
  readonly rng: Rng;
  private readonly heap: KernelEvent[] = [];
  private seqNext = 0;
  private nowMs = 0;
  private eventCount = 0;
  private readonly hosts = new Map<HostId, HostState>();
  private readonly hash: Hash = createHash('sha256');
  private readonly ring: string[];
  private ringNext = 0;
  private readonly all: string[] | undefined;
  private running = false;
  private readonly afterEvent: Array<() => void> = [];

  constructor(opts: KernelOptions) {
    this.seed = opts.seed;
    this.rng = new SeededRng(opts.seed);
    this.ring = new Array<string>(opts.traceLines ?? 400).fill('');
    this.all = opts.fullTrace ? [] : undefined;
  }

  /** True time, ms since the run began. */
  now(): number {
    return this.nowMs;
  }

  stats(): KernelStats {
    return { events: this.eventCount, nowMs: this.nowMs, pending: this.heap.length };
  }

  /** Adds a line to the trace and the digest (at the current true time). */
  trace(line: string): void {
    const text = `${this.nowMs} ${line}`;
    this.hash.update(text);
    this.hash.update('\n');
    this.ring[this.ringNext] = text;
    this.ringNext = (this.ringNext + 1) % this.ring.length;
    this.all?.push(text);
  }

  /** The digest of every trace line so far (same seed ⇒ same digest). */
  digest(): string {
    return this.hash.copy().digest('hex').slice(0, 16);
  }

  /** The last `n` trace lines (all of them with fullTrace), oldest first. */
  tail(n = this.ring.length): string[] {
    if (this.all) return this.all.slice(-n);
    const out: string[] = [];
    for (let k = Math.min(n, this.ring.length); k > 0; k--) {
      const line = this.ring[(this.ringNext - k + this.ring.length) % this.ring.length];
      if (line) out.push(line);
    }
    return out;
  }

  /** Runs `fn` after every event (on-the-fly invariant checks); returns an unsubscribe. */
  onEvent(fn: () => void): () => void {
    this.afterEvent.push(fn);
    return () => {
      const i = this.afterEvent.indexOf(fn);
      if (i >= 0) this.afterEvent.splice(i, 1);
    };
  }

  // ---- hosts ----

  /** Registers a host with clock offsets drawn from the kernel's RNG (idempotent). */
  addHost(id: HostId): void {
    if (this.hosts.has(id)) return;
    const state: HostState = {
      id, wallOffsetMs: this.rng.range(-500, 500), monoOffsetMs: this.rng.range(0, 10_000_000), paused: false, held: [],
      current: undefined as unknown as Incarnation, incarnations: 0,
    };
    state.current = new Incarnation(state, 0);
    this.hosts.set(id, state);
  }

  /** A fresh incarnation's time for `id` (the previous one, if alive, is killed). */
  incarnate(id: HostId): HostTime {
    this.addHost(id);
    const h = this.hostState(id);
    if (h.current.alive && h.incarnations > 0) this.kill(id);
    h.incarnations++;
    h.current = new Incarnation(h, h.incarnations);
    return this.timeOf(h.current);
  }

  /** The current incarnation's time (made on first use). */
  time(id: HostId): HostTime {
    this.addHost(id);
    const h = this.hostState(id);
    if (h.incarnations === 0) return this.incarnate(id);
    return this.timeOf(h.current);
  }

  /** Crash: the current incarnation's pending and held events are dropped, its scheduler goes dead. */
  kill(id: HostId): void {
    const h = this.hostState(id);
    h.current.alive = false;
    h.held.length = 0;
    h.paused = false;
    this.trace(`${id} killed`);
  }

  isAlive(id: HostId): boolean {
    const h = this.hosts.get(id);
    return h !== undefined && h.incarnations > 0 && h.current.alive;
  }

  /** While paused, none of the host's events run (timers, deliveries); they wait, in order. */
  pause(id: HostId): void {
    this.hostState(id).paused = true;
    this.trace(`${id} paused`);
  }

  resume(id: HostId): void {
    const h = this.hostState(id);
    if (!h.paused) return;
    h.paused = false;
    this.trace(`${id} resumed (${h.held.length} held)`);
    const held = h.held.splice(0);
    for (const ev of held) if (!ev.cancelled) this.push(this.nowMs, ev.owner, ev.label, ev.run, ev);
  }

  isPaused(id: HostId): boolean {
    return this.hosts.get(id)?.paused ?? false;
  }

  /** Moves one host's wall clock by `wallMs` (either way) and its monotonic clock forward by `monoMs`. */
  jumpClock(id: HostId, wallMs: number, monoMs = 0): void {
    assert(monoMs >= 0, 'a monotonic clock never goes back');
    assert(Number.isSafeInteger(wallMs) && Number.isSafeInteger(monoMs), 'clock jumps are whole milliseconds');
    const h = this.hostState(id);
    h.wallOffsetMs += wallMs;
    h.monoOffsetMs += monoMs;
    this.trace(`${id} clock jump wall ${wallMs} mono ${monoMs}`);
  }

  // ---- events ----

  /** Schedules a kernel-level event (no host: never paused, never dropped). */
  schedule(delayMs: number, label: string, fn: () => void): () => void {
    return this.scheduleOn(null, delayMs, label, fn);
  }

  /** Runs one event then drains microtasks; false when nothing is pending. */
  async step(): Promise<boolean> {
    assert(!this.running, 'the kernel loop is not re-entrant: runFor/runUntil/await was called from inside the world (an event or a background operation)');
    const ev = this.pop();
    if (ev === undefined) return false;
    this.running = true;
    try {
      if (ev.at > this.nowMs) this.nowMs = ev.at;
      this.eventCount++;
      this.trace(ev.owner ? `${ev.owner.host.id}#${ev.owner.n} ${ev.label}` : ev.label);
      ev.run();
      await drainMicrotasks();
      for (const fn of this.afterEvent) fn();
    } finally {
      this.running = false;
    }
    return true;
  }

  /** Runs events until true time passes `now() + ms` (then stands at that time). */
  async runFor(ms: number, maxEvents = Number.MAX_SAFE_INTEGER): Promise<void> {
    const until = this.nowMs + Math.ceil(ms);
    let n = 0;
    while (n++ < maxEvents) {
      const next = this.peekTime();
      if (next === undefined || next > until) break;
      await this.step();
    }
    if (until > this.nowMs) this.nowMs = until;
  }

  /** Runs events until `pred()` holds (checked after each event) or `timeoutMs` of true time passed; returns whether it held. */
  async runUntil(pred: () => boolean, timeoutMs: number): Promise<boolean> {
    const until = this.nowMs + Math.ceil(timeoutMs);
    if (pred()) return true;
    for (;;) {
      const next = this.peekTime();
      if (next === undefined || next > until) {
        if (until > this.nowMs) this.nowMs = until;
        return pred();
      }
      await this.step();
      if (pred()) return true;
    }
  }

  /** Runs the loop until `p` settles (or `timeoutMs` of true time passes: then rejects). */
  async await<T>(p: Promise<T>, timeoutMs: number, what = 'operation'): Promise<T> {
    let settled = false;
    let value: T | undefined;
    let error: unknown;
    let failed = false;
    p.then((v) => { settled = true; value = v; }, (e: unknown) => { settled = true; failed = true; error = e; });
    await drainMicrotasks();
    const ok = await this.runUntil(() => settled, timeoutMs);
    if (!ok) throw new Error(`${what} did not finish within ${timeoutMs} ms of simulated time`);
    if (failed) throw error;
    return value as T;
  }

  // ---- internals ----

  private hostState(id: HostId): HostState {
    const h = this.hosts.get(id);
    assert(h !== undefined, `unknown host ${id}`);
    return h;
  }

  private timeOf(inc: Incarnation): HostTime {
    const h = inc.host;
    const clock: Clock = {
      // Whole milliseconds, as Date.now() reads (record timestamps must be integers); event times may be fractional.
      nowMs: () => Math.floor(WALL_EPOCH_MS + this.nowMs + h.wallOffsetMs),
      monotonicMs: () => this.nowMs + h.monoOffsetMs,
    };
    const scheduler: Scheduler = {
      schedule: (delayMs, fn) => this.scheduleOn(inc, delayMs, 'timer', fn),
    };
    return {
      host: h.id, incarnation: inc.n, clock, scheduler,
      schedule: (delayMs, label, fn) => this.scheduleOn(inc, delayMs, label, fn),
      get alive() { return inc.alive; },
    };
  }

  private scheduleOn(owner: Incarnation | null, delayMs: number, label: string, fn: () => void): () => void {
    if (owner && !owner.alive) return noop;
    // Whole milliseconds, as real timers keep them: true time (and so every wall clock) stays an integer,
    // which record timestamps rely on (Date.now() never returns a fraction).
    const d = Number.isFinite(delayMs) ? Math.max(0, Math.ceil(delayMs)) : 0;
    const ev = this.push(this.nowMs + d, owner, delayMs > 0 ? `${label}+${Math.round(d)}` : label, fn);
    return () => { ev.cancelled = true; };
  }

  private push(at: number, owner: Incarnation | null, label: string, run: () => void, reuse?: KernelEvent): KernelEvent {
    assert(at >= this.nowMs, `cannot schedule in the past (${at} < ${this.nowMs})`);
    // A held event keeps its identity (so its cancel function still works) but takes a new place in line.
    const ev: KernelEvent = reuse ?? { at, seq: 0, owner, label, run, cancelled: false };
    ev.at = at;
    ev.seq = this.seqNext++;
    this.heap.push(ev);
    this.siftUp(this.heap.length - 1);
    return ev;
  }

  private peekTime(): number | undefined {
    this.dropDead();
    return this.heap[0]?.at;
  }

  /** Pops dead and cancelled events off the top, and parks paused hosts' events. */
  private dropDead(): void {
    for (;;) {
      const top = this.heap[0];
      if (top === undefined) return;
      const owner = top.owner;
      if (top.cancelled || (owner && !owner.alive)) {
        this.popTop();
        continue;
      }
      if (owner && owner.host.paused) {
        this.popTop();
        owner.host.held.push(top);
        continue;
      }
      return;
    }
  }

  private pop(): KernelEvent | undefined {
    this.dropDead();
    return this.popTop();
  }

  private popTop(): KernelEvent | undefined {
    const top = this.heap[0];
    if (top === undefined) return undefined;
    const last = this.heap.pop() as KernelEvent;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  private less(a: KernelEvent, b: KernelEvent): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private siftUp(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private siftDown(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

const noop = (): void => undefined;

/**
 * Lets every pending microtask (promise jobs, nextTicks) run. Node runs the
 * whole microtask queue before a setImmediate callback, and the simulation
 * does no real I/O, so nothing else can slip in between.
 */
export function drainMicrotasks(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
