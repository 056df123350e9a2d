// The suite's workloads through Kafka's own Java client (issue 19), for any
// Kafka-protocol server: Apache Kafka (bench/peers/kafka.ts) and Sluice's
// Kafka listener (bench/suite/sluice.ts). Each workload is one run of the
// Java driver bench/peers/kafka/java (sluice.bench.KafkaBench), compiled by
// `make bench-peers` against the jars of bench/peers/kafka/pom.xml; this
// module finds those jars, runs the driver, turns its JSON lines into
// progress and the suite's ThroughputResult / LatencyResult, and also runs
// Kafka's perf tools (kafka-producer-perf-test / kafka-consumer-perf-test,
// i.e. ProducerPerformance / ConsumerPerformance) and parses their summary.
//
// Invariants: every JVM started here is tracked until it exits, killed by
// PID when its time bound passes, and SIGKILLed by a process-exit hook if the
// bench dies first; a driver run that ends without a result line fails with
// its last output. The driver's own CPU seconds (from its clock start, JVM
// start-up excluded) are reported beside each result: the client cost.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { latencyHistogram, latencyResult, recordMs } from '../suite/measure.js';
import type { ConsumeSpec, E2eSpec, LatencyResult, ProduceSpec, Progress, ThroughputResult, TimelinePoint } from '../suite/types.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository root: <root>/dist/bench/peers → <root>. */
export const REPO_ROOT = path.resolve(here, '../../..');
/** Shared with the interop tests' Kafka broker (scripts/interop-tools.sh --kafka-broker): one fetch serves both. */
export const KAFKA_CACHE = path.join(process.env.SLUICE_INTEROP_CACHE ?? path.join(REPO_ROOT, 'node_modules/.cache/sluice-interop'), 'kafka-broker');
export const KAFKA_LIB = path.join(KAFKA_CACHE, 'lib');
export const DRIVER_CLASSES = path.join(KAFKA_CACHE, 'bench-classes');
const DRIVER_MAIN = 'sluice.bench.KafkaBench';
/** The driver's JVM: a 1 GiB heap bound (the producer's 32 MiB buffer and the consumers' fetches fit many times). */
const DRIVER_JVM_OPTS = ['-Xms256m', '-Xmx1g', '-XX:+UseG1GC'];
/** kafka-run-class.sh's heap for the tools: KAFKA_HEAP_OPTS default -Xmx256M. */
const TOOL_JVM_OPTS = ['-Xmx256m'];
const OUTPUT_CHARS_KEPT = 20_000;

/** Kafka's perf tools' main classes in 4.x (kafka-tools). */
export const PERF_TOOLS = {
  producer: 'org.apache.kafka.tools.ProducerPerformance',
  consumer: 'org.apache.kafka.tools.ConsumerPerformance',
} as const;

const KAFKA_POM = path.join(REPO_ROOT, 'bench/peers/kafka/pom.xml');
const DRIVER_SRC = path.join(REPO_ROOT, 'bench/peers/kafka/java/src');

/** scripts/bench-peers.sh's stamp: the first 16 hex digits of the SHA-256 of the files' contents, in path order. */
export function inputsHash(files: readonly string[]): string {
  const h = createHash('sha256');
  for (const f of files) h.update(fs.readFileSync(f));
  return h.digest('hex').slice(0, 16);
}

function javaSources(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.java')).map((f) => path.join(dir, f)).sort();
}

/** Why the Kafka jars or the compiled driver are missing (or stale) here (run make bench-peers), or null. */
export function kafkaJarsMissing(): string | null {
  if (spawnSync('java', ['-version'], { timeout: 10_000 }).status !== 0) return 'java is not on PATH (a JDK 17+ runs Kafka and its client)';
  if (!fs.existsSync(path.join(KAFKA_LIB, '.stamp'))) return `no Kafka jars in ${KAFKA_LIB} (run make bench-peers: it fetches bench/peers/kafka/pom.xml with Maven)`;
  if (!fs.existsSync(path.join(DRIVER_CLASSES, '.stamp'))) return `the Java driver is not compiled in ${DRIVER_CLASSES} (run make bench-peers)`;
  try {
    const want = inputsHash([KAFKA_POM, ...javaSources(DRIVER_SRC)]);
    if (fs.readFileSync(path.join(DRIVER_CLASSES, '.stamp'), 'utf8').trim() !== want) return `the Java driver in ${DRIVER_CLASSES} is older than its source (run make bench-peers)`;
  } catch { /* no source tree next to the build (an installed copy): use what is compiled */ }
  return null;
}

/** The kafka_2.13 jar's version (the Kafka release the peer runs), or undefined. */
export function kafkaVersion(): string | undefined {
  try {
    const jar = fs.readdirSync(KAFKA_LIB).find((f) => /^kafka_2\.13-.+\.jar$/.test(f));
    return jar?.replace(/^kafka_2\.13-/, '').replace(/\.jar$/, '');
  } catch {
    return undefined;
  }
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) if (child.pid !== undefined && child.exitCode === null) {
    try { process.kill(child.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
});

export interface JvmRun {
  readonly status: number | null;
  readonly output: string;
  readonly timedOut: boolean;
}

/**
 * Runs `java <jvmOpts> -cp <classpath> <main> <args>` to its end, killed by
 * PID after `timeoutMs`; `onLine` sees each stdout line as it comes.
 */
export function runJvm(jvmOpts: readonly string[], classpath: string, main: string, args: readonly string[], timeoutMs: number, onLine?: (line: string) => void): Promise<JvmRun> {
  return new Promise((resolve) => {
    const child = spawn('java', [...jvmOpts, '-cp', classpath, main, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(child);
    let output = '';
    let partial = '';
    let timedOut = false;
    const keep = (s: string): void => {
      output += s;
      if (output.length > OUTPUT_CHARS_KEPT) output = output.slice(output.length - OUTPUT_CHARS_KEPT);
    };
    child.stdout.on('data', (b: Buffer) => {
      const s = b.toString('utf8');
      keep(s);
      if (!onLine) return;
      const lines = (partial + s).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    });
    child.stderr.on('data', (b: Buffer) => keep(b.toString('utf8')));
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) {
        try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ }
      }
    }, timeoutMs);
    const finish = (status: number | null): void => {
      clearTimeout(timer);
      live.delete(child);
      if (partial && onLine) onLine(partial);
      resolve({ status, output, timedOut });
    };
    child.once('error', (err) => {
      keep(`\n${String(err)}`);
      finish(null);
    });
    child.once('close', (code) => finish(code));
  });
}

/**
 * Starts a long-running driver mode with stdin open (closing it ends the run), tracked like every
 * other JVM here (SIGKILLed by the exit hook if the bench dies first). The caller reads its stdout.
 */
export function spawnDriver(mode: string, args: readonly string[]): ChildProcess {
  const cp = `${KAFKA_LIB}/*${path.delimiter}${DRIVER_CLASSES}`;
  const child = spawn('java', [...DRIVER_JVM_OPTS, '-cp', cp, DRIVER_MAIN, mode, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  live.add(child);
  child.once('close', () => live.delete(child));
  return child;
}

/** One parsed line of the driver's output. */
export type DriverEvent =
  | { readonly event: 'progress'; readonly done: number }
  | { readonly event: 'result'; readonly [k: string]: unknown }
  | { readonly event: 'error'; readonly message: string };

/** The driver event on `line`, or null for any other output (a JVM warning, a log line). */
export function parseDriverLine(line: string): DriverEvent | null {
  const t = line.trim();
  if (!t.startsWith('{"event":')) return null;
  try {
    const v = JSON.parse(t) as DriverEvent;
    return typeof v.event === 'string' ? v : null;
  } catch {
    return null;
  }
}

/** `key=value` arguments of the driver, with the producer configs as `p.<name>=<value>`. */
export function driverArgs(args: Readonly<Record<string, string | number>>, producerProps: Readonly<Record<string, string>> = {}): string[] {
  return [
    ...Object.entries(args).map(([k, v]) => `${k}=${v}`),
    ...Object.entries(producerProps).map(([k, v]) => `p.${k}=${v}`),
  ];
}

/** Runs one driver mode to its result (progress lines go to `progress`); throws with the driver's error or last output. */
export async function runDriver(mode: string, args: readonly string[], timeoutMs: number, progress?: Progress): Promise<Record<string, unknown>> {
  let result: Record<string, unknown> | undefined;
  let error: string | undefined;
  const cp = `${KAFKA_LIB}/*${path.delimiter}${DRIVER_CLASSES}`;
  const run = await runJvm(DRIVER_JVM_OPTS, cp, DRIVER_MAIN, [mode, ...args], timeoutMs, (line) => {
    const e = parseDriverLine(line);
    if (e === null) return;
    if (e.event === 'progress') progress?.(e.done);
    else if (e.event === 'error') error = e.message;
    else result = e;
  });
  if (error !== undefined) throw new Error(`Kafka driver ${mode}: ${error}`);
  if (run.timedOut) throw new Error(`Kafka driver ${mode} did not finish within ${Math.round(timeoutMs / 1000)} s: ${tail(run.output)}`);
  if (run.status !== 0 || result === undefined) throw new Error(`Kafka driver ${mode} exited ${run.status} without a result: ${tail(run.output)}`);
  return result;
}

function tail(s: string, chars = 1500): string {
  return s.trim().slice(-chars);
}

/** The driver's produce/consume result as the suite's ThroughputResult. */
export function throughputOf(r: Record<string, unknown>): ThroughputResult {
  const records = Number(r.records);
  const bytes = Number(r.bytes);
  const seconds = Number(r.seconds);
  if (!(Number.isFinite(records) && Number.isFinite(bytes) && seconds > 0)) throw new Error(`Kafka driver: a malformed result ${JSON.stringify(r).slice(0, 300)}`);
  const timeline: TimelinePoint[] = Array.isArray(r.timeline) ? (r.timeline as Array<[number, number]>).map(([tS, n]) => ({ tS, records: n })) : [];
  return {
    records, bytes, seconds: Math.round(seconds * 100) / 100, recordsPerS: Math.round(records / seconds),
    mbPerS: Math.round((bytes / seconds / 1e6) * 100) / 100, timeline,
  };
}

/** Latencies (int32 µs, little endian) as the driver wrote them, as the suite's LatencyResult. */
export function latencyOfFile(file: string, ratePerS: number, measuredSeconds: number): LatencyResult {
  const buf = fs.readFileSync(file);
  const h = latencyHistogram();
  const n = Math.floor(buf.length / 4);
  for (let i = 0; i < n; i++) recordMs(h, buf.readInt32LE(i * 4) / 1000);
  return latencyResult(h, ratePerS, n, measuredSeconds);
}

/** How long past its own seconds a driver run may take (JVM start, metadata, the final flush or drain). */
const DRIVER_GRACE_MS = 90_000;

export interface KafkaClientConfig {
  /** Producer configs of the produce workloads (Kafka's names), e.g. acks, linger.ms, batch.size. */
  readonly producer: Readonly<Record<string, string>>;
  /** Producer configs of the e2e workload. */
  readonly e2eProducer: Readonly<Record<string, string>>;
}

/** The suite's three workloads against one Kafka-protocol bootstrap, through the Java driver. */
export class KafkaClientDriver {
  /** CPU seconds of the driver JVM during the last workload. */
  lastClientCpuSeconds = 0;

  constructor(private readonly bootstrap: string, private readonly config: KafkaClientConfig) {}

  /**
   * Creates `topic` and waits until every partition has a leader and a full ISR; `assignment`
   * (one partition only) names its replicas, the first the preferred leader.
   */
  async createTopic(topic: string, partitions: number, rf: number, minIsr: number, assignment?: readonly number[]): Promise<void> {
    const args: Record<string, string | number> = { bootstrap: this.bootstrap, topic, partitions, rf, minIsr };
    if (assignment !== undefined) args.assignment = assignment.join(',');
    await runDriver('topic', driverArgs(args), DRIVER_GRACE_MS);
  }

  /** `spec.producers` producers, producer i writing partition i of `topic`; records acknowledged per partition. */
  async produce(topic: string, spec: ProduceSpec, progress: Progress): Promise<{ result: ThroughputResult; acked: number[] }> {
    const r = await runDriver('produce', driverArgs({
      bootstrap: this.bootstrap, topic, producers: spec.producers, records: spec.records, seconds: spec.seconds, valueBytes: spec.valueBytes,
    }, this.config.producer), spec.seconds * 1000 + DRIVER_GRACE_MS, progress);
    this.lastClientCpuSeconds = Number(r.cpuSeconds) || 0;
    return { result: throughputOf(r), acked: (r.acked as number[]).map(Number) };
  }

  /** Reads partitions [0, ends[p]) of `topic`: one assigned consumer, or a group of `spec.consumers`. */
  async consume(topic: string, ends: readonly number[], spec: ConsumeSpec, groupId: string, progress: Progress): Promise<ThroughputResult> {
    const r = await runDriver('consume', driverArgs({
      bootstrap: this.bootstrap, topic, ends: ends.join(','), consumers: spec.consumers, seconds: spec.seconds, groupId,
    }), spec.seconds * 1000 + DRIVER_GRACE_MS, progress);
    this.lastClientCpuSeconds = Number(r.cpuSeconds) || 0;
    return throughputOf(r);
  }

  /** The paced e2e run on partition 0 of `topic`, producer and consumer in one JVM. */
  async e2e(topic: string, spec: E2eSpec, progress: Progress): Promise<LatencyResult> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-kafka-e2e-'));
    const file = path.join(dir, 'latencies.bin');
    try {
      const r = await runDriver('e2e', driverArgs({
        bootstrap: this.bootstrap, topic, rate: spec.ratePerS, seconds: spec.seconds, warmupSeconds: spec.warmupSeconds,
        valueBytes: spec.valueBytes, latencyFile: file,
      }, this.config.e2eProducer), (spec.warmupSeconds + spec.seconds) * 1000 + DRIVER_GRACE_MS, progress);
      this.lastClientCpuSeconds = Number(r.cpuSeconds) || 0;
      return latencyOfFile(file, spec.ratePerS, Math.max(1e-6, Number(r.sentSeconds) - spec.warmupSeconds));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

/**
 * The node id leading `topic`-`partition` (-1: none), its ISR size and the active controller
 * (the KRaft quorum's leader, -1 when unknown), as Kafka's Admin API describes them.
 */
export async function partitionLeader(bootstrap: string, topic: string, partition: number): Promise<{ leader: number; isr: number; controller: number }> {
  const r = await runDriver('leader', driverArgs({ bootstrap, topic, partition }), DRIVER_GRACE_MS);
  return { leader: Number(r.leader), isr: Number(r.isr), controller: Number(r.controller ?? -1) };
}

/** The active controller (the KRaft quorum's leader) as Kafka's Admin API describes it; -1 when unknown. */
export async function activeController(bootstrap: string): Promise<number> {
  const r = await runDriver('leader', driverArgs({ bootstrap }), DRIVER_GRACE_MS);
  return Number(r.controller ?? -1);
}

/** Waits (one driver run, bounded by `timeoutMs`) until `topic`-`partition` has a leader and `isr` ISR members. */
export async function awaitIsr(bootstrap: string, topic: string, partition: number, isr: number, timeoutMs: number): Promise<{ leader: number; isr: number }> {
  const r = await runDriver('isr', driverArgs({ bootstrap, topic, partition, isr, timeoutMs }), timeoutMs + DRIVER_GRACE_MS);
  return { leader: Number(r.leader), isr: Number(r.isr) };
}

/** One acknowledgement after a gap without any (failover measurements), on the driver's wall clock (ms since the epoch). */
export interface AckAfterGap {
  readonly atMs: number;
  readonly gapFromMs: number;
}

/**
 * A paced acks=all producer on partition 0 of a topic (driver mode `paced`),
 * running in its own JVM until stop(): what a failover measurement kills a
 * leader under. `gaps` fills as acknowledgements resume after a gap of at
 * least `gapMs`; `sendErrors` counts failed sends (the run goes on).
 */
export class PacedKafkaProducer {
  readonly gaps: AckAfterGap[] = [];
  sendErrors = 0;
  private started: Promise<void>;
  private readonly run: Promise<JvmRun>;
  private readonly child: ChildProcess;

  constructor(bootstrap: string, topic: string, opts: { readonly ratePerS: number; readonly gapMs: number; readonly secondsMax: number; readonly producer?: Readonly<Record<string, string>> }) {
    const cp = `${KAFKA_LIB}/*${path.delimiter}${DRIVER_CLASSES}`;
    const args = driverArgs({ bootstrap, topic, rate: opts.ratePerS, seconds: opts.secondsMax, gapMs: opts.gapMs }, { acks: 'all', ...opts.producer });
    this.child = spawn('java', [...DRIVER_JVM_OPTS, '-cp', cp, DRIVER_MAIN, 'paced', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    live.add(this.child);
    let markStarted!: () => void;
    this.started = new Promise((resolve) => { markStarted = resolve; });
    let partial = '';
    let output = '';
    this.child.stdout!.on('data', (b: Buffer) => {
      const lines = (partial + b.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const t = line.trim();
        if (!t.startsWith('{')) continue;
        try {
          const e = JSON.parse(t) as { event: string; atMs?: number; gapFromMs?: number };
          if (e.event === 'started') markStarted();
          else if (e.event === 'ack' && e.atMs !== undefined && e.gapFromMs !== undefined) this.gaps.push({ atMs: e.atMs, gapFromMs: e.gapFromMs });
          else if (e.event === 'send-error') this.sendErrors++;
        } catch { /* not a driver line */ }
      }
    });
    this.child.stderr!.on('data', (b: Buffer) => { output = (output + b.toString('utf8')).slice(-OUTPUT_CHARS_KEPT); });
    this.run = new Promise((resolve) => {
      this.child.once('close', (code) => {
        live.delete(this.child);
        markStarted();
        resolve({ status: code, output, timedOut: false });
      });
    });
  }

  /** Resolves once the producer sends (metadata loaded); throws when the JVM exited first. */
  async whenSending(timeoutMs = DRIVER_GRACE_MS): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.started, new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('the paced producer did not start')), timeoutMs); })])
      .finally(() => clearTimeout(timer));
    if (this.child.exitCode !== null) throw new Error(`the paced producer exited ${this.child.exitCode}: ${(await this.run).output.slice(-800)}`);
  }

  /** Ends the run (closes its stdin), waits for the JVM, kills it by PID after `timeoutMs`. */
  async stop(timeoutMs = 30_000): Promise<void> {
    this.child.stdin?.end();
    const timer = setTimeout(() => {
      if (this.child.pid !== undefined && this.child.exitCode === null) {
        try { process.kill(this.child.pid, 'SIGKILL'); } catch { /* gone */ }
      }
    }, timeoutMs);
    try {
      await this.run;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Polls until the cluster at `bootstrap` lists `brokers` brokers (one driver run, bounded). */
export async function waitForKafkaBrokers(bootstrap: string, brokers: number, timeoutMs: number): Promise<void> {
  await runDriver('ready', driverArgs({ bootstrap, brokers, timeoutMs }), timeoutMs + DRIVER_GRACE_MS);
}

// ---------------------------------------------------------------- Kafka's perf tools

/** kafka-producer-perf-test's summary line: "N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency, p50 ms 50th, ...". */
export interface ProducerPerfSummary {
  readonly records: number;
  readonly recordsPerS: number;
  readonly mbPerS: number;
  readonly avgLatencyMs: number;
  readonly maxLatencyMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export function parseProducerPerf(output: string): ProducerPerfSummary {
  const line = output.split('\n').reverse().find((l) => /records sent, .* records\/sec/.test(l) && /50th/.test(l));
  const m = line && /(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th/.exec(line);
  if (!m) throw new Error(`no kafka-producer-perf-test summary in its output: ${tail(output, 500)}`);
  return {
    records: Number(m[1]), recordsPerS: Number(m[2]), mbPerS: Number(m[3]), avgLatencyMs: Number(m[4]), maxLatencyMs: Number(m[5]),
    p50Ms: Number(m[6]), p99Ms: Number(m[8]),
  };
}

/**
 * kafka-consumer-perf-test's CSV line: start.time, end.time, data.consumed.in.MB, MB.sec,
 * data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec.
 */
export interface ConsumerPerfSummary {
  readonly records: number;
  readonly recordsPerS: number;
  readonly mbPerS: number;
  readonly rebalanceMs: number;
  readonly fetchMs: number;
  /** Records/s once fetching (rebalance excluded): the tool's own fetch.nMsg.sec. */
  readonly fetchRecordsPerS: number;
}

export function parseConsumerPerf(output: string): ConsumerPerfSummary {
  for (const line of output.split('\n').reverse()) {
    const f = line.split(',').map((s) => s.trim());
    if (f.length < 10 || !/^\d{4}-\d\d-\d\d/.test(f[0]!)) continue;
    const n = f.slice(2).map(Number);
    if (n.some((x) => !Number.isFinite(x))) continue;
    return { mbPerS: n[1]!, records: n[2]!, recordsPerS: n[3]!, rebalanceMs: n[4]!, fetchMs: n[5]!, fetchRecordsPerS: n[7]! };
  }
  throw new Error(`no kafka-consumer-perf-test result line in its output: ${tail(output, 500)}`);
}

/** Runs one of Kafka's tools by main class with the jars of the peer, to its end; its output. */
export async function runPerfTool(main: string, args: readonly string[], timeoutMs: number): Promise<string> {
  const run = await runJvm(TOOL_JVM_OPTS, `${KAFKA_LIB}/*`, main, args, timeoutMs);
  if (run.timedOut) throw new Error(`${main} did not finish within ${Math.round(timeoutMs / 1000)} s: ${tail(run.output, 500)}`);
  if (run.status !== 0) throw new Error(`${main} exited ${run.status}: ${tail(run.output, 500)}`);
  return run.output;
}
