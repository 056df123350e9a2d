// Measurement helpers every Deployment uses, so each system is measured the
// same way: a throughput meter with a timeline (for "throughput over time"),
// HdrHistogram latencies (hdr-histogram-js) with a percentile curve, a pacer
// for fixed offered rates, and random values.
import { randomBytes } from 'node:crypto';
import * as hdr from 'hdr-histogram-js';
import type { LatencyResult, ThroughputResult, TimelinePoint } from './types.js';

const TIMELINE_STEP_MS = 250;
/** Latencies are recorded in microseconds, up to a minute. */
const LATENCY_US_MAX = 60_000_000;
const CURVE_PERCENTILES = [0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100];

const round2 = (x: number): number => Math.round(x * 100) / 100;

/** Counts records and bytes as they complete and samples the cumulative count every 250 ms. */
export class ThroughputMeter {
  private readonly startMs = performance.now();
  private records = 0;
  private bytes = 0;
  private readonly timeline: TimelinePoint[] = [{ tS: 0, records: 0 }];
  private nextSampleMs = this.startMs + TIMELINE_STEP_MS;

  add(records: number, bytes: number): void {
    this.records += records;
    this.bytes += bytes;
    const now = performance.now();
    if (now >= this.nextSampleMs) {
      this.timeline.push({ tS: round2((now - this.startMs) / 1000), records: this.records });
      this.nextSampleMs = now + TIMELINE_STEP_MS;
    }
  }

  get done(): number {
    return this.records;
  }

  elapsedMs(): number {
    return performance.now() - this.startMs;
  }

  result(): ThroughputResult {
    const seconds = Math.max(1e-6, this.elapsedMs() / 1000);
    const timeline = [...this.timeline, { tS: round2(seconds), records: this.records }];
    return {
      records: this.records, bytes: this.bytes, seconds: round2(seconds),
      recordsPerS: Math.round(this.records / seconds), mbPerS: round2(this.bytes / seconds / 1e6), timeline,
    };
  }
}

export function latencyHistogram(): hdr.Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: LATENCY_US_MAX, numberOfSignificantValueDigits: 3 });
}

/** Records one latency given in milliseconds (stored in µs, at least 1). */
export function recordMs(h: hdr.Histogram, ms: number): void {
  h.recordValue(Math.min(LATENCY_US_MAX, Math.max(1, Math.round(ms * 1000))));
}

export function latencyResult(h: hdr.Histogram, ratePerS: number, records: number, seconds: number): LatencyResult {
  // HdrHistogram answers a percentile with its bucket's upper edge, which can lie above the largest value seen.
  const ms = (us: number): number => Math.round(Math.min(us, h.maxValue)) / 1000;
  return {
    ratePerS, achievedPerS: Math.round(records / Math.max(1e-6, seconds)), records, seconds: round2(seconds),
    p50Ms: ms(h.getValueAtPercentile(50)), p99Ms: ms(h.getValueAtPercentile(99)),
    p999Ms: ms(h.getValueAtPercentile(99.9)), maxMs: ms(h.maxValue),
    curve: CURVE_PERCENTILES.map((percentile) => ({ percentile, ms: ms(percentile === 100 ? h.maxValue : h.getValueAtPercentile(percentile)) })),
  };
}

/**
 * The e2e latencies of one run, the same way for every system: each record
 * carries its send time, and only records sent after the warm-up (which
 * begins when sending does, at start()) are measured. Before start() nothing
 * is measured.
 */
export class LatencyRecorder {
  readonly histogram = latencyHistogram();
  /** Records received, warm-up included (what a drain waits for). */
  received = 0;
  /** Records received that were sent after the warm-up. */
  measured = 0;
  private measureFromMs = Infinity;

  /** Sending starts now; records sent in the next `warmupSeconds` are received but not measured. */
  start(warmupSeconds: number): void {
    this.measureFromMs = nowMs() + warmupSeconds * 1000;
  }

  /** One record sent at `sentMs` (nowMs() clock) arrived at `arrivedMs`. */
  record(sentMs: number, arrivedMs: number): void {
    this.received++;
    if (sentMs < this.measureFromMs) return;
    this.measured++;
    recordMs(this.histogram, arrivedMs - sentMs);
  }

  /** The result of the measured part: `sentSeconds` is how long sending ran, warm-up included. */
  result(spec: { readonly ratePerS: number; readonly warmupSeconds: number }, sentSeconds: number): LatencyResult {
    return latencyResult(this.histogram, spec.ratePerS, this.measured, Math.max(1e-6, sentSeconds - spec.warmupSeconds));
  }
}

/**
 * Fixed-rate sending: how many records are due now so that `ratePerS` is kept
 * on average since start. Sending in small bursts each tick (not one timer per
 * record) keeps the offered rate even when timers fire late.
 */
export class Pacer {
  private readonly startMs = performance.now();
  private sent = 0;

  constructor(private readonly ratePerS: number) {}

  due(): number {
    const owed = Math.floor(((performance.now() - this.startMs) / 1000) * this.ratePerS) - this.sent;
    return Math.max(0, owed);
  }

  markSent(n: number): void {
    this.sent += n;
  }
}

/** `count` random values of `bytes` bytes each, to cycle through (random so compression cannot help). */
export function randomValues(count: number, bytes: number): Buffer[] {
  return Array.from({ length: count }, () => randomBytes(bytes));
}

/** Wall-clock ms since the epoch with sub-ms precision, for timestamps that cross processes. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
