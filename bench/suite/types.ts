// The benchmark suite's common vocabulary (issue 8): the workloads every
// system runs with the same definitions, and the results each run reports.
// A Deployment is one system in one configuration (Sluice RF=3 acks=all, NATS
// JetStream R3, Redis Streams with AOF everysec, ...): it starts its servers on
// loopback with fresh data, runs the workloads with that system's natural
// batching and pipelining, and stops every process it started, by PID.
//
// Every workload is bounded twice: by a record count and by seconds.

/** One producer (or `producers` in parallel) writing random values as fast as acknowledgements allow. */
export interface ProduceSpec {
  /** Records to write in all (shared by the producers); the run ends earlier when `seconds` pass. */
  readonly records: number;
  readonly seconds: number;
  readonly valueBytes: number;
  readonly producers: number;
}

/** Read back everything the last produce() wrote, from the beginning. */
export interface ConsumeSpec {
  /** Records to read in all; normally the produce run's acknowledged count. */
  readonly records: number;
  readonly seconds: number;
  /** 1 = one consumer; more = that many members of one group sharing the work. */
  readonly consumers: number;
}

/**
 * A producer at a fixed offered rate for a fixed time; a consumer timestamps
 * each arrival. The first `warmupSeconds` are sent at the same rate but not
 * measured: they time JIT compilation and connection set-up, not the steady
 * state (every system gets the same warm-up).
 */
export interface E2eSpec {
  readonly ratePerS: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly valueBytes: number;
}

/** Cumulative records done at `tS` seconds after the workload started. */
export interface TimelinePoint {
  readonly tS: number;
  readonly records: number;
}

export interface ThroughputResult {
  readonly records: number;
  readonly bytes: number;
  readonly seconds: number;
  readonly recordsPerS: number;
  readonly mbPerS: number;
  readonly timeline: readonly TimelinePoint[];
}

export interface LatencyResult {
  /** The offered rate and the rate actually sent. */
  readonly ratePerS: number;
  readonly achievedPerS: number;
  readonly records: number;
  readonly seconds: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly maxMs: number;
  /** The latency percentile curve (percentile 0..100 → ms), for the HTML report. */
  readonly curve: ReadonlyArray<{ readonly percentile: number; readonly ms: number }>;
}

/** Called with the records done so far; drives the progress bar. */
export type Progress = (done: number) => void;

export type SystemName = 'sluice' | 'nats-jetstream' | 'redis-streams' | 'apache-kafka';

export interface Deployment {
  readonly system: SystemName;
  /** The configuration, e.g. 'RF=3 acks=all', 'R3 file storage', 'AOF everysec'. */
  readonly variant: string;
  /** Starts the servers on 127.0.0.1 with fresh data dirs and waits until they serve. */
  start(): Promise<void>;
  /** PIDs of the server processes, for CPU time and peak RSS. */
  serverPids(): readonly number[];
  /** Writes into a fresh stream/topic; every record is acknowledged before it counts. */
  produce(spec: ProduceSpec, progress: Progress): Promise<ThroughputResult>;
  /** Reads back what the last produce() wrote. */
  consume(spec: ConsumeSpec, progress: Progress): Promise<ThroughputResult>;
  e2e(spec: E2eSpec, progress: Progress): Promise<LatencyResult>;
  /** Stops every process it started (by PID) and removes its data dirs. */
  stop(): Promise<void>;
  /**
   * CPU seconds that client processes other than this one (a JVM driver) spent
   * on the last workload; the runner adds them to the client CPU. Absent: none.
   */
  externalClientCpuSeconds?(): number;
}

/** Whether a peer can run here; when not, why (shown instead of its numbers). */
export interface Availability {
  readonly available: boolean;
  readonly reason?: string;
  /** The server's version, when it could be read. */
  readonly version?: string;
}
