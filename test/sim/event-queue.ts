// Discrete-event scheduler of the Raft simulation. Simulated time only moves
// when the next event is popped: there are no timers and no wall clock, so a
// run is a pure function of its seed.
//
// Invariants:
// - events run in (time, seq) order: earliest simulated time first, and among
//   events at the same time, the one scheduled first (FIFO by a sequence
//   number) — never an order that depends on the JavaScript engine;
// - now() never decreases; an event can only be scheduled at or after now().

import { assert } from '../../src/util/assert.js';

export type Label = string | (() => string);

export interface SimEvent {
  readonly timeMs: number;
  readonly seq: number;
  /** Description for the trace; a closure is only rendered if the trace is printed. */
  readonly label: Label;
  readonly run: () => void;
}

export class EventQueue {
  private readonly heap: SimEvent[] = [];
  private seqNext = 0;
  private nowMs = 0;

  now(): number {
    return this.nowMs;
  }

  get size(): number {
    return this.heap.length;
  }

  /** Schedules `run` at now() + delayMs. Returns the event's sequence number. */
  schedule(delayMs: number, label: Label, run: () => void): number {
    assert(delayMs >= 0 && Number.isFinite(delayMs), `bad delay ${delayMs}`);
    return this.scheduleAt(this.nowMs + delayMs, label, run);
  }

  scheduleAt(timeMs: number, label: Label, run: () => void): number {
    assert(timeMs >= this.nowMs, `cannot schedule in the past (${timeMs} < ${this.nowMs})`);
    const ev: SimEvent = { timeMs, seq: this.seqNext++, label, run };
    this.heap.push(ev);
    this.siftUp(this.heap.length - 1);
    return ev.seq;
  }

  /** Time of the next event, or undefined when the queue is empty. */
  peekTime(): number | undefined {
    return this.heap[0]?.timeMs;
  }

  /** Removes the earliest event and advances now() to its time (the caller runs it). */
  pop(): SimEvent | undefined {
    const top = this.heap[0];
    if (top === undefined) return undefined;
    const last = this.heap.pop() as SimEvent;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.siftDown(0);
    }
    this.nowMs = top.timeMs;
    return top;
  }

  private before(a: SimEvent, b: SimEvent): boolean {
    return a.timeMs < b.timeMs || (a.timeMs === b.timeMs && a.seq < b.seq);
  }

  private siftUp(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(h[i] as SimEvent, h[parent] as SimEvent)) return;
      [h[i], h[parent]] = [h[parent] as SimEvent, h[i] as SimEvent];
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.before(h[l] as SimEvent, h[m] as SimEvent)) m = l;
      if (r < h.length && this.before(h[r] as SimEvent, h[m] as SimEvent)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m] as SimEvent, h[i] as SimEvent];
      i = m;
    }
  }
}
