// CPU time and memory of the server processes during one workload, read from
// /proc (Linux): utime+stime of /proc/PID/stat for CPU, VmRSS and VmHWM of
// /proc/PID/status for memory, every `intervalMs` (250 ms) between start()
// and stop(). This is what turns throughput into cost: CPU µs per record and
// peak RSS per broker process.
//
// Invariants: a process is sampled at start() and at stop() as well, so even
// a workload shorter than one interval has two samples; a process that exits
// (or whose /proc entry cannot be read) keeps its last sample and is marked
// exited — its figures stop growing but do not vanish. Without /proc (not
// Linux) every figure is 0 and `supported` is false.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export const SAMPLE_INTERVAL_MS = 250;
const KIB_PER_MB = 1024;
/** /proc/PID/stat fields after "(comm) ": state is index 0, utime 11, stime 12 (fields 14 and 15 of proc(5)). */
const UTIME_INDEX = 11;
const STIME_INDEX = 12;

export interface RssPoint {
  /** Seconds since the sampler started. */
  readonly tS: number;
  readonly rssMb: number;
}

export interface ProcessStats {
  readonly pid: number;
  /** CPU seconds (user + system) the process used between start() and its last sample. */
  readonly cpuSeconds: number;
  /** Highest VmRSS sampled during the workload. */
  readonly peakRssMb: number;
  /** VmHWM at the last sample: the highest RSS since the process started (catches spikes between samples). */
  readonly lifetimePeakRssMb: number;
  readonly rssTimeline: readonly RssPoint[];
  /** True when the process was gone (or unreadable) at some sample after the first. */
  readonly exited: boolean;
}

interface Sample {
  readonly cpuTicks: number;
  readonly rssKb: number;
  readonly hwmKb: number;
}

let clockTicksPerS: number | undefined;

/** USER_HZ: the unit of utime/stime (100 on practically every Linux; asked of getconf once). */
export function clockTicks(): number {
  if (clockTicksPerS === undefined) {
    try {
      const v = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
      clockTicksPerS = Number.isFinite(v) && v > 0 ? v : 100;
    } catch {
      clockTicksPerS = 100;
    }
  }
  return clockTicksPerS;
}

/** User and system CPU time of a live process, in clock ticks (clockTicks() per second), from /proc/PID/stat. Throws when it is gone. */
export function cpuTicksOf(pid: number): { readonly user: number; readonly system: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // comm may hold spaces and parentheses: the fields start after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(rest[UTIME_INDEX]), system: Number(rest[STIME_INDEX]) };
}

/**
 * Resident memory of a process from /proc/PID/status: VmRSS now and VmHWM (its peak since it started), in KiB.
 * Null when it is gone, unreadable, or a zombie (exited, not yet reaped: no memory lines).
 */
export function memoryKbOf(pid: number): { readonly rssKb: number; readonly hwmKb: number } | null {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const kb = (key: string): number | null => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? Number(m[1]) : null;
  };
  const rssKb = kb('VmRSS');
  return rssKb === null ? null : { rssKb, hwmKb: kb('VmHWM') ?? rssKb };
}

/** One reading of a process from /proc; null when it is gone or /proc is missing. */
export function readProc(pid: number): Sample | null {
  try {
    const ticks = cpuTicksOf(pid);
    const cpuTicks = ticks.user + ticks.system;
    const memory = memoryKbOf(pid);
    if (!Number.isFinite(cpuTicks) || memory === null) return null;
    return { cpuTicks, ...memory };
  } catch {
    return null;
  }
}

class Track {
  first: Sample | null = null;
  last: Sample | null = null;
  peakRssKb = 0;
  exited = false;
  readonly timeline: RssPoint[] = [];

  constructor(readonly pid: number) {}

  add(s: Sample | null, tS: number): void {
    if (s === null) {
      if (this.first !== null) this.exited = true;
      return;
    }
    this.first ??= s;
    this.last = s;
    this.peakRssKb = Math.max(this.peakRssKb, s.rssKb);
    this.timeline.push({ tS, rssMb: round1(s.rssKb / KIB_PER_MB) });
  }

  stats(): ProcessStats {
    const cpuTicks = this.first && this.last ? this.last.cpuTicks - this.first.cpuTicks : 0;
    return {
      pid: this.pid,
      cpuSeconds: Math.round((cpuTicks / clockTicks()) * 100) / 100,
      peakRssMb: round1(this.peakRssKb / KIB_PER_MB),
      lifetimePeakRssMb: round1((this.last?.hwmKb ?? 0) / KIB_PER_MB),
      rssTimeline: [...this.timeline],
      exited: this.exited,
    };
  }
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/** Samples a fixed set of PIDs from start() until stop(). */
export class ProcSampler {
  private readonly tracks: Track[];
  private readonly startMs = performance.now();
  private timer: ReturnType<typeof setInterval> | null = null;

  private constructor(pids: readonly number[], intervalMs: number) {
    this.tracks = pids.map((pid) => new Track(pid));
    this.sampleNow();
    this.timer = setInterval(() => this.sampleNow(), intervalMs);
    // Sampling must never keep a finished benchmark process alive.
    this.timer.unref();
  }

  static start(pids: readonly number[], intervalMs = SAMPLE_INTERVAL_MS): ProcSampler {
    return new ProcSampler(pids, intervalMs);
  }

  static get supported(): boolean {
    return fs.existsSync('/proc/self/stat');
  }

  /** Takes one sample of every process now (also what the timer does). */
  sampleNow(): void {
    const tS = Math.round(performance.now() - this.startMs) / 1000;
    for (const t of this.tracks) if (!t.exited) t.add(readProc(t.pid), tS);
  }

  /** The figures so far, per process in the order given to start(). */
  current(): ProcessStats[] {
    return this.tracks.map((t) => t.stats());
  }

  /** Takes a last sample, stops the timer, and returns the figures. */
  stop(): ProcessStats[] {
    if (this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
      this.sampleNow();
    }
    return this.current();
  }
}
