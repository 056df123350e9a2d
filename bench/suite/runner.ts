// Runs the suite's plan: for each selected deployment in catalogue order
// (Sluice's, then each peer's; an unavailable peer is recorded as
// skipped with its reason), start → produce 100 B → consume (1 consumer) →
// produce 1 KiB → produce with N producers → consume with an N-member group
// → e2e at each offered rate → stop. Each workload runs with the server
// processes sampled (proc-stats.ts) and the client process's CPU counted,
// (plus a JVM driver's, for the Kafka-client deployments), and everything
// lands in one SuiteResults object.
//
// Before each workload the kernel writes back every dirty page (sync(1),
// settleDisk): the produce workloads leave a few GB of page cache to write
// back, and on a 2-core machine that write-back (kernel threads, and write(2)
// calls throttled behind it) fell into the next workload's measurement —
// e2e p99 at 10,000 rec/s 4.0 ms right after the produce workloads, 3.3 ms
// after a sync. Every system gets the same step.
//
// Bounds and failures: every workload has a time cap of its own seconds plus
// WORKLOAD_GRACE_MS (topic creation, the final high-watermark check, a
// group's join); a workload that throws is recorded as failed and the next
// one runs; one that overruns its cap (or a deployment that cannot start)
// ends that deployment — its remaining workloads are skipped — because its
// state is unknown. stop() always runs, bounded too; any server PID still
// alive after it is killed by PID and the deployment is marked failed.
import { execFileSync } from 'node:child_process';
import { catalogue, type DeploymentEntry } from './catalogue.js';
import { describeMachine, machineInfo } from './machine.js';
import { ProcSampler, type ProcessStats } from './proc-stats.js';
import { progressSink, type ProgressMode, type ProgressSink } from './progress.js';
import {
  RESULTS_FORMAT_VERSION, SYSTEM_FILTERS, planWorkloads, type DeploymentKey, type DeploymentResult, type Profile, type SuiteResults, type SystemFilter, type WorkloadDef,
  type WorkloadResult,
} from './results.js';
import type { Deployment, LatencyResult, Progress, ThroughputResult } from './types.js';
import type { PerfToolsResult } from './perf-tools.js';

const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 60_000;
/** Beyond a workload's own seconds: set-up (fresh topic/stream), the final checks, a group's join. */
const WORKLOAD_GRACE_MS = 120_000;

export interface RunOptions {
  readonly profile: Profile;
  /** Which systems run; default all. */
  readonly systems?: readonly SystemFilter[];
  /** Only these deployments (of the selected systems; [] none); default every one. */
  readonly only?: readonly DeploymentKey[];
  /** Default the full catalogue (tests pass their own). */
  readonly deployments?: readonly DeploymentEntry[];
  readonly progress?: ProgressMode;
  /** Also run Kafka's perf tools on Sluice's Kafka listener and on Kafka R3 (perf-tools.ts), after the deployments. */
  readonly perfTools?: boolean;
}

class TimeoutError extends Error {}

async function withTimeout<T>(what: string, work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} did not finish within ${Math.round(ms / 1000)} s`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** How long the write-back before a workload may take. */
const SETTLE_TIMEOUT_MS = 120_000;

/** Writes back the kernel's dirty pages (sync(1)); a machine without `sync` just goes on. */
export function settleDisk(): void {
  try {
    execFileSync('sync', [], { timeout: SETTLE_TIMEOUT_MS, stdio: 'ignore' });
  } catch {
    // No sync(1), or it overran: the workload runs anyway, as it did before this step.
  }
}

export async function runSuite(opts: RunOptions): Promise<SuiteResults> {
  const started = new Date();
  const t0 = performance.now();
  const machine = machineInfo();
  const plan = planWorkloads(opts.profile);
  const sink = progressSink(opts.progress ?? 'auto');
  const systems = new Set(opts.systems ?? SYSTEM_FILTERS);
  const only = opts.only !== undefined ? new Set(opts.only) : null;
  const deployments: DeploymentResult[] = [];
  let perfTools: PerfToolsResult | undefined;
  sink.log(`bench compare (${opts.profile.name}): ${describeMachine(machine)}`);
  try {
    for (const entry of opts.deployments ?? catalogue()) {
      if (!systems.has(entry.filter) || (only !== null && !only.has(entry.key))) continue;
      deployments.push(await runDeployment(entry, plan, sink));
    }
    if (opts.perfTools === true) {
      const { runPerfTools } = await import('./perf-tools.js');
      perfTools = await runPerfTools(opts.profile.perfToolRecords ?? opts.profile.records, opts.profile.smallValueBytes, sink);
    }
  } finally {
    sink.stop();
  }
  // Failed workloads, plus deployments that failed on their own (not created, not started, not stopped cleanly).
  const failures = deployments.reduce((n, d) => n + d.workloads.filter((w) => w.status === 'failed').length
    + (d.status === 'failed' && d.reason !== undefined ? 1 : 0), 0) + (perfTools?.rows.filter((row) => row.status === 'failed').length ?? 0);
  return {
    formatVersion: RESULTS_FORMAT_VERSION, profile: opts.profile, plan, machine,
    startedAt: started.toISOString(), finishedAt: new Date().toISOString(),
    durationS: Math.round((performance.now() - t0) / 100) / 10, deployments, failures, ...(perfTools !== undefined ? { perfTools } : {}),
  };
}

async function runDeployment(entry: DeploymentEntry, plan: readonly WorkloadDef[], sink: ProgressSink): Promise<DeploymentResult> {
  const base = { key: entry.key, label: entry.label };
  const availability = await entry.availability();
  if (!availability.available) {
    sink.log(`${entry.label}: skipped (${availability.reason ?? 'not available'})`);
    return { ...base, system: systemOf(entry), variant: '', status: 'skipped', reason: availability.reason ?? 'not available', workloads: [] };
  }
  let d: Deployment;
  try {
    d = await entry.create();
  } catch (err) {
    sink.log(`${entry.label}: could not be created: ${message(err)}`);
    return { ...base, system: systemOf(entry), variant: '', status: 'failed', reason: `could not be created: ${message(err)}`, workloads: [] };
  }
  const t0 = performance.now();
  const workloads: WorkloadResult[] = [];
  let reason: string | undefined;
  let startSeconds: number | undefined;
  try {
    sink.log(`${entry.label}: starting`);
    await withTimeout(`${entry.label} start`, d.start(), START_TIMEOUT_MS);
    startSeconds = Math.round((performance.now() - t0) / 100) / 10;
    let ended: string | undefined;
    let lastProduce: WorkloadResult | undefined;
    for (const w of plan) {
      const startedAtS = Math.round(performance.now() - t0) / 1000;
      const skip = ended ?? (w.kind === 'consume' && lastProduce?.status !== 'ok' ? 'the produce before it did not succeed' : undefined);
      if (skip !== undefined) {
        workloads.push(skipped(w, startedAtS, skip));
        continue;
      }
      const records = w.kind === 'consume' ? lastProduce!.throughput!.records : 0;
      const r = await runWorkload(d, entry.label, w, records, startedAtS, sink);
      workloads.push(r.result);
      if (w.kind === 'produce') lastProduce = r.result;
      if (r.timedOut) ended = `${w.label} overran its time cap`;
    }
  } catch (err) {
    reason = message(err);
    sink.log(`${entry.label}: ${reason}`);
  } finally {
    reason = (await stopDeployment(d, entry.label, sink)) ?? reason;
  }
  const failed = reason !== undefined || workloads.some((w) => w.status === 'failed');
  return {
    ...base, system: d.system, variant: d.variant, status: failed ? 'failed' : 'ok',
    ...(reason !== undefined ? { reason } : {}), ...(startSeconds !== undefined ? { startSeconds } : {}), workloads,
  };
}

function systemOf(entry: DeploymentEntry): DeploymentResult['system'] {
  const names: Record<SystemFilter, DeploymentResult['system']> = { sluice: 'sluice', nats: 'nats-jetstream', redis: 'redis-streams', kafka: 'apache-kafka' };
  return names[entry.filter];
}

/** stop(), bounded; then any server PID still alive is killed. A problem is returned as the deployment's reason. */
async function stopDeployment(d: Deployment, label: string, sink: ProgressSink): Promise<string | undefined> {
  const pids = [...d.serverPids()];
  let problem: string | undefined;
  try {
    await withTimeout(`${label} stop`, d.stop(), STOP_TIMEOUT_MS);
  } catch (err) {
    problem = message(err);
  }
  const alive = pids.filter(isAlive);
  for (const pid of alive) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch { /* gone meanwhile */ }
  }
  if (alive.length > 0) problem = `${problem ?? 'stop()'}: server PIDs ${alive.join(', ')} were still running and were killed`;
  if (problem !== undefined) sink.log(`${label}: ${problem}`);
  return problem;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function skipped(w: WorkloadDef, startedAtS: number, why: string): WorkloadResult {
  return {
    id: w.id, label: w.label, kind: w.kind, spec: specOf(w, 0), status: 'skipped', error: why, startedAtS, servers: [],
    serverCpuSeconds: 0, clientCpuSeconds: 0, serverCpuUsPerRecord: null, clientCpuUsPerRecord: null, peakServerRssMb: 0,
  };
}

function specOf(w: WorkloadDef, consumeRecords: number): WorkloadResult['spec'] {
  return w.kind === 'consume' ? { records: consumeRecords, seconds: w.seconds, consumers: w.consumers } : w.spec;
}

/** What the bar counts to: records for produce/consume, records offered for e2e. */
function totalOf(w: WorkloadDef, consumeRecords: number): number {
  if (w.kind === 'produce') return w.spec.records;
  if (w.kind === 'consume') return consumeRecords;
  return Math.round(w.spec.ratePerS * w.spec.seconds);
}

async function runWorkload(
  d: Deployment, label: string, w: WorkloadDef, consumeRecords: number, startedAtS: number, sink: ProgressSink,
): Promise<{ result: WorkloadResult; timedOut: boolean }> {
  const spec = specOf(w, consumeRecords);
  settleDisk();
  const bar = sink.begin(`${label} · ${w.label}`, totalOf(w, consumeRecords), 'records');
  const progress: Progress = (done) => bar.update(done);
  const sampler = ProcSampler.start(d.serverPids());
  const cpu0 = process.cpuUsage();
  const capMs = ('seconds' in spec ? spec.seconds : 0) * 1000 + WORKLOAD_GRACE_MS;
  let throughput: ThroughputResult | undefined;
  let latency: LatencyResult | undefined;
  let error: string | undefined;
  let timedOut = false;
  try {
    if (w.kind === 'produce') throughput = await withTimeout(w.label, d.produce(w.spec, progress), capMs);
    else if (w.kind === 'consume') throughput = await withTimeout(w.label, d.consume({ records: consumeRecords, seconds: w.seconds, consumers: w.consumers }, progress), capMs);
    else latency = await withTimeout(w.label, d.e2e(w.spec, progress), capMs);
  } catch (err) {
    error = message(err);
    timedOut = err instanceof TimeoutError;
  }
  const servers = sampler.stop();
  const cpu = process.cpuUsage(cpu0);
  // A JVM driver's CPU (the Kafka client) counts as client CPU too.
  const external = error === undefined ? d.externalClientCpuSeconds?.() ?? 0 : 0;
  const result = workloadResult(w, spec, startedAtS, servers, (cpu.user + cpu.system) / 1e6 + external, throughput, latency, error);
  bar.end(error !== undefined ? `FAILED: ${error}` : summarize(result));
  return { result, timedOut };
}

function workloadResult(
  w: WorkloadDef, spec: WorkloadResult['spec'], startedAtS: number, servers: ProcessStats[], clientCpuSeconds: number,
  throughput: ThroughputResult | undefined, latency: LatencyResult | undefined, error: string | undefined,
): WorkloadResult {
  const records = throughput?.records ?? latency?.records ?? 0;
  const serverCpuSeconds = Math.round(servers.reduce((s, p) => s + p.cpuSeconds, 0) * 100) / 100;
  const perRecord = (cpuS: number): number | null => (records > 0 ? Math.round((cpuS * 1e6 / records) * 100) / 100 : null);
  return {
    id: w.id, label: w.label, kind: w.kind, spec, status: error === undefined ? 'ok' : 'failed', ...(error !== undefined ? { error } : {}),
    startedAtS, ...(throughput ? { throughput } : {}), ...(latency ? { latency } : {}), servers, serverCpuSeconds,
    clientCpuSeconds: Math.round(clientCpuSeconds * 100) / 100,
    serverCpuUsPerRecord: perRecord(serverCpuSeconds), clientCpuUsPerRecord: perRecord(clientCpuSeconds),
    peakServerRssMb: Math.max(0, ...servers.map((p) => Math.max(p.peakRssMb, p.lifetimePeakRssMb))),
  };
}

const num = (x: number): string => x.toLocaleString('en-US');

/** One line per finished workload, for the progress output. */
export function summarize(r: WorkloadResult): string {
  const cost = `servers ${r.serverCpuSeconds} CPU s (${r.serverCpuUsPerRecord ?? '-'} µs/record), peak RSS ${r.servers.map((p) => Math.round(p.peakRssMb)).join('/')} MB`;
  if (r.throughput) {
    const t = r.throughput;
    return `${num(t.recordsPerS)} rec/s, ${t.mbPerS} MB/s (${num(t.records)} records in ${t.seconds} s); ${cost}`;
  }
  if (r.latency) {
    const l = r.latency;
    return `p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms, p99.9 ${l.p999Ms} ms, max ${l.maxMs} ms at ${num(l.achievedPerS)} rec/s (${num(l.records)} records); ${cost}`;
  }
  return r.status;
}
