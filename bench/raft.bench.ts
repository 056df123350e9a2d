// Raft quorum benchmark: three `sluice server --roles controller` processes on
// loopback with real fsync (their own temp data dirs), driven through the
// quorum client. Not a test: it measures and reports, it asserts nothing.
//
//   1. throughput  — committed entries/s with many concurrent proposers
//                    (64-byte entries, `outstanding` proposals in flight);
//   2. latency     — p50/p99 commit latency at a fixed offered rate, measured
//                    open-loop from each proposal's scheduled send time, so a
//                    stall is charged to every proposal it delays (no
//                    coordinated omission);
//   3. re-election — time from SIGKILL of the leader until a survivor leads,
//                    over `kills` rounds (the victim is restarted and caught
//                    up before the next round).
// Every phase is bounded in count and time; every process is killed at the end.
//
// Run: node dist/bench/raft.bench.js [--duration-ms N] [--kills N] [--json]

import fs from 'node:fs';
import os from 'node:os';
import { argValue, isMain } from './cli-args.js';
import * as hdr from 'hdr-histogram-js';
import { ProcessCluster, waitFor } from '../test/integration/harness.js';
import type { QuorumClient } from '../src/raft-node/quorum-client.js';
import { DEFAULT_NODE_LIMITS, electionTimeoutMaxMs } from '../src/raft-node/quorum-config.js';

export interface RaftBenchOptions {
  readonly entryBytes: number;
  readonly throughputDurationMs: number;
  /** Proposals in flight during the throughput phase (spread over `connections`). */
  readonly outstanding: number;
  /** Client connections the proposers share. */
  readonly connections: number;
  readonly latencyRatePerS: number;
  readonly latencyDurationMs: number;
  readonly kills: number;
  /** Upper bound for any single wait (leader, catch-up). */
  readonly waitTimeoutMs: number;
  readonly log: (line: string) => void;
}

export const DEFAULT_RAFT_BENCH: RaftBenchOptions = {
  entryBytes: 64,
  throughputDurationMs: 10_000,
  outstanding: 256,
  connections: 4,
  latencyRatePerS: 2_000,
  latencyDurationMs: 10_000,
  kills: 20,
  waitTimeoutMs: 30_000,
  log: (line) => process.stderr.write(`${line}\n`),
};

/** CPU spent per committed entry (servers from /proc, Linux only; the bench client itself), and what it implies. */
export interface CpuCost {
  readonly serverUsPerEntry: number | undefined;
  readonly clientUsPerEntry: number;
  /** Entries/s all cores could commit if nothing else ran: cores · 1e6 / (server + client µs per entry). */
  readonly impliedEntriesPerS: number | undefined;
  readonly cores: number;
  /** 1-minute load average at the end of the phase: a busy machine lowers the measured rate, not the CPU cost. */
  readonly loadAverage: number;
}

export interface RaftBenchResult {
  readonly throughput: {
    readonly entriesPerS: number; readonly committed: number; readonly failed: number; readonly durationMs: number;
    readonly outstanding: number; readonly cpu: CpuCost;
  };
  readonly latency: { readonly ratePerS: number; readonly count: number; readonly failed: number; readonly p50Ms: number; readonly p99Ms: number; readonly p999Ms: number; readonly maxMs: number };
  readonly reelection: { readonly kills: number; readonly medianMs: number; readonly p99Ms: number; readonly maxMs: number; readonly samplesMs: number[] };
  readonly electionTimeoutMaxMs: number;
  readonly targets: { readonly throughputOk: boolean; readonly reelectionOk: boolean };
}

function payload(bytes: number, seq: number): Buffer {
  const b = Buffer.alloc(bytes, 0x61);
  b.writeUInt32BE(seq >>> 0, 0);
  return b;
}

/** User+system CPU ms of a process from /proc (undefined where /proc is absent). */
function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ticksPerS = 100; // USER_HZ on Linux
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerS;
  } catch {
    return undefined;
  }
}

function serversCpuMs(cluster: ProcessCluster): number | undefined {
  let total = 0;
  for (const n of cluster.nodes) {
    const ms = processCpuMs(n.pid);
    if (ms === undefined) return undefined;
    total += ms;
  }
  return total;
}

function cpuCost(serverMs: number | undefined, client: NodeJS.CpuUsage, committed: number): CpuCost {
  const cores = os.availableParallelism();
  const serverUs = serverMs === undefined || committed === 0 ? undefined : (serverMs * 1000) / committed;
  const clientUs = committed === 0 ? 0 : (client.user + client.system) / committed;
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    serverUsPerEntry: serverUs === undefined ? undefined : round(serverUs),
    clientUsPerEntry: round(clientUs),
    impliedEntriesPerS: serverUs === undefined ? undefined : Math.round((cores * 1e6) / (serverUs + clientUs)),
    cores,
    loadAverage: round(os.loadavg()[0] ?? 0),
  };
}

async function measureThroughput(cluster: ProcessCluster, o: RaftBenchOptions): Promise<RaftBenchResult['throughput']> {
  const clients = Array.from({ length: o.connections }, () => cluster.client());
  let committed = 0;
  let failed = 0;
  let seq = 0;
  // Warm-up: connections up and pointing at the leader.
  await Promise.all(clients.map((c) => c.propose(payload(o.entryBytes, seq++))));
  const serverCpu0 = serversCpuMs(cluster);
  const clientCpu0 = process.cpuUsage();
  const start = performance.now();
  const end = start + o.throughputDurationMs;
  const worker = async (client: QuorumClient) => {
    while (performance.now() < end) {
      try {
        await client.propose(payload(o.entryBytes, seq++));
        committed++;
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: o.outstanding }, (_, i) => worker(clients[i % clients.length] as QuorumClient)));
  const durationMs = performance.now() - start;
  const serverCpu1 = serversCpuMs(cluster);
  const serverMs = serverCpu0 === undefined || serverCpu1 === undefined ? undefined : serverCpu1 - serverCpu0;
  const cpu = cpuCost(serverMs, process.cpuUsage(clientCpu0), committed);
  for (const c of clients) c.close();
  return { entriesPerS: Math.round(committed / (durationMs / 1000)), committed, failed, durationMs: Math.round(durationMs), outstanding: o.outstanding, cpu };
}

async function measureLatency(cluster: ProcessCluster, o: RaftBenchOptions): Promise<RaftBenchResult['latency']> {
  const client = cluster.client();
  await client.propose(payload(o.entryBytes, 0));
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 });
  const total = Math.floor((o.latencyRatePerS * o.latencyDurationMs) / 1000);
  const intervalMs = 1000 / o.latencyRatePerS;
  const start = performance.now();
  const inflight: Promise<void>[] = [];
  let failed = 0;
  for (let sent = 0; sent < total;) {
    const now = performance.now();
    // Send everything whose scheduled time has come (open loop).
    while (sent < total && start + sent * intervalMs <= now) {
      const scheduled = start + sent * intervalMs;
      inflight.push(client.propose(payload(o.entryBytes, sent)).then(
        () => histogram.recordValue(Math.max(1, Math.round((performance.now() - scheduled) * 1000))),
        () => { failed++; },
      ));
      sent++;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(inflight);
  client.close();
  const ms = (us: number) => Math.round(us / 10) / 100;
  const result = {
    ratePerS: o.latencyRatePerS, count: histogram.totalCount, failed,
    p50Ms: ms(histogram.getValueAtPercentile(50)), p99Ms: ms(histogram.getValueAtPercentile(99)),
    p999Ms: ms(histogram.getValueAtPercentile(99.9)), maxMs: ms(histogram.maxValue),
  };
  histogram.destroy();
  return result;
}

async function measureReelection(cluster: ProcessCluster, o: RaftBenchOptions): Promise<RaftBenchResult['reelection']> {
  const client = cluster.client();
  const samplesMs: number[] = [];
  for (let round = 0; round < o.kills; round++) {
    const old = await cluster.waitForLeader(client, { timeoutMs: o.waitTimeoutMs });
    const victim = cluster.node(old.id);
    const survivors = cluster.nodes.filter((n) => n !== victim);
    const killedAt = performance.now();
    await victim.kill('SIGKILL');
    await waitFor('a survivor to lead', async () => {
      const views = await Promise.all(survivors.map((n) => client.status(n.url).catch(() => undefined)));
      return views.some((s) => s?.role === 'leader' && s.term > old.term);
    }, { timeoutMs: o.waitTimeoutMs, intervalMs: 2 });
    samplesMs.push(performance.now() - killedAt);
    o.log(`  kill ${round + 1}/${o.kills}: node ${old.id} (term ${old.term}) → new leader after ${Math.round(samplesMs.at(-1) ?? 0)} ms`);
    victim.start();
    await cluster.waitForLeader(client, { timeoutMs: o.waitTimeoutMs });
  }
  client.close();
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0);
  return { kills: samplesMs.length, medianMs: at(0.5), p99Ms: at(0.99), maxMs: Math.round(sorted.at(-1) ?? 0), samplesMs: samplesMs.map(Math.round) };
}

export async function runRaftBench(opts: Partial<RaftBenchOptions> = {}): Promise<RaftBenchResult> {
  const o = { ...DEFAULT_RAFT_BENCH, ...opts };
  const cluster = await ProcessCluster.create({ size: 3, logLevel: 'warn', extraArgs: ['--raft-only'] });
  try {
    cluster.startAll();
    const bootstrap = cluster.client();
    await cluster.waitForLeader(bootstrap, { timeoutMs: o.waitTimeoutMs });
    bootstrap.close();
    o.log(`throughput: ${o.outstanding} proposals in flight, ${o.entryBytes}-byte entries, ${o.throughputDurationMs} ms`);
    const throughput = await measureThroughput(cluster, o);
    o.log(`  ${throughput.entriesPerS} committed entries/s; CPU per entry ${throughput.cpu.serverUsPerEntry} µs servers + ${throughput.cpu.clientUsPerEntry} µs client`);
    o.log(`latency: ${o.latencyRatePerS}/s offered for ${o.latencyDurationMs} ms`);
    const latency = await measureLatency(cluster, o);
    o.log(`  p50 ${latency.p50Ms} ms, p99 ${latency.p99Ms} ms`);
    o.log(`re-election: ${o.kills} SIGKILLs of the leader`);
    const reelection = await measureReelection(cluster, o);
    const timeoutMaxMs = electionTimeoutMaxMs(DEFAULT_NODE_LIMITS);
    return {
      throughput, latency, reelection, electionTimeoutMaxMs: timeoutMaxMs,
      targets: { throughputOk: throughput.entriesPerS >= 20_000, reelectionOk: reelection.p99Ms <= 1.5 * timeoutMaxMs },
    };
  } finally {
    await cluster.cleanup();
  }
}


function report(r: RaftBenchResult): string {
  return [
    'Raft quorum (3 voters, loopback, fsync on)',
    `  committed entries/s     ${r.throughput.entriesPerS}  (${r.throughput.outstanding} in flight; target ≥ 20000: ${r.targets.throughputOk ? 'met' : 'MISSED'})`,
    `  CPU per entry           ${r.throughput.cpu.serverUsPerEntry ?? '?'} µs (3 servers) + ${r.throughput.cpu.clientUsPerEntry} µs (client)`
      + ` → ${r.throughput.cpu.impliedEntriesPerS ?? '?'}/s on ${r.throughput.cpu.cores} idle cores; load average ${r.throughput.cpu.loadAverage}`,
    `  commit latency @${r.latency.ratePerS}/s  p50 ${r.latency.p50Ms} ms, p99 ${r.latency.p99Ms} ms, p99.9 ${r.latency.p999Ms} ms, max ${r.latency.maxMs} ms`,
    `  re-election (${r.reelection.kills} kills)  median ${r.reelection.medianMs} ms, p99 ${r.reelection.p99Ms} ms, max ${r.reelection.maxMs} ms`
      + ` (target p99 ≤ ${1.5 * r.electionTimeoutMaxMs} ms: ${r.targets.reelectionOk ? 'met' : 'MISSED'})`,
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const duration = argValue('--duration-ms');
  const kills = argValue('--kills');
  const result = await runRaftBench({
    ...(duration !== undefined ? { throughputDurationMs: duration, latencyDurationMs: duration } : {}),
    ...(kills !== undefined ? { kills } : {}),
  });
  process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(result, null, 2)}\n` : `${report(result)}\n`);
}
