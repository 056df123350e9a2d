// Kafka's own perf tools against Sluice's Kafka listener and against Apache
// Kafka, with the same flags in the same run (issue 19): the fairest
// comparison there is, since neither side picks the client.
//
// For each system in turn (never both up at once) — Sluice RF=3 (three
// combined nodes, --kafka-listen on each) and Kafka R3 (bench/peers/kafka.ts)
// — one fresh topic per producer setting (1 partition, RF 3,
// min.insync.replicas=2, created through Kafka's Admin API on each), then
//   kafka-producer-perf-test --topic T --num-records N --record-size B --throughput -1
//     --producer-props bootstrap.servers=... acks=all [linger.ms=.. batch.size=..]
// for each producer setting (PRODUCER_SETTINGS: Kafka's defaults, and the
// tuned linger/batch), and
//   kafka-consumer-perf-test --bootstrap-server ... --topic T --messages N --timeout 60000
// on the defaults' topic. Each run is sampled like a suite workload (server
// CPU, peak RSS); the throughput is the tool's own summary (its clock, which
// starts before its first send or poll).
import type { DeploymentResult } from './results.js';
import type { ProgressSink } from './progress.js';
import { ProcSampler } from './proc-stats.js';
import { settleDisk } from './runner.js';
import { sluiceRf3KafkaClient } from './sluice.js';
import { DEFAULT_PRODUCER, TUNED_PRODUCER, kafkaAvailability, kafkaR3, type KafkaDeployment } from '../peers/kafka.js';
import { KafkaClientDriver, PERF_TOOLS, parseConsumerPerf, parseProducerPerf, runPerfTool } from '../peers/kafka-driver.js';
import type { SluiceDeployment } from './sluice.js';

/** How long one tool run may take beyond what its records need at 10,000 rec/s. */
const TOOL_GRACE_MS = 120_000;

export const PRODUCER_SETTINGS: ReadonlyArray<{ readonly name: string; readonly props: Readonly<Record<string, string>> }> = [
  { name: 'defaults', props: DEFAULT_PRODUCER },
  { name: 'tuned', props: TUNED_PRODUCER },
];

export interface PerfToolRow {
  readonly system: DeploymentResult['system'];
  readonly deployment: string;
  readonly tool: 'kafka-producer-perf-test' | 'kafka-consumer-perf-test';
  /** The flags, bootstrap servers left out (the same for both systems). */
  readonly flags: string;
  readonly status: 'ok' | 'failed';
  readonly error?: string;
  readonly records?: number;
  readonly recordsPerS?: number;
  readonly mbPerS?: number;
  /** Producer: the tool's p50/p99 send latency; consumer: its rate once fetching (rebalance excluded). */
  readonly p50Ms?: number;
  readonly p99Ms?: number;
  readonly fetchRecordsPerS?: number;
  readonly serverCpuSeconds: number;
  readonly serverCpuSPerM: number | null;
  readonly peakServerRssMb: number;
}

export interface PerfToolsResult {
  readonly records: number;
  readonly valueBytes: number;
  readonly rows: readonly PerfToolRow[];
  /** Why the section did not run (no Kafka jars here), when it did not. */
  readonly skipped?: string;
}

interface Target {
  readonly system: DeploymentResult['system'];
  readonly label: string;
  start(): Promise<{ bootstrap: string; pids: () => readonly number[]; stop: () => Promise<void> }>;
}

function targets(): Target[] {
  return [
    {
      system: 'sluice', label: 'Sluice RF=3 (Kafka listener)',
      start: async () => {
        const d: SluiceDeployment = sluiceRf3KafkaClient();
        try {
          await d.start();
        } catch (err) {
          await d.stop();
          throw err;
        }
        return { bootstrap: d.kafkaBootstrap, pids: () => d.serverPids(), stop: () => d.stop() };
      },
    },
    {
      system: 'apache-kafka', label: 'Kafka R3',
      start: async () => {
        const d = kafkaR3() as KafkaDeployment;
        await d.start();
        return { bootstrap: d.bootstrap, pids: () => d.serverPids(), stop: () => d.stop() };
      },
    },
  ];
}

/** Runs both tools on both systems, one system at a time. */
export async function runPerfTools(records: number, valueBytes: number, sink: ProgressSink): Promise<PerfToolsResult> {
  const available = kafkaAvailability();
  if (!available.available) {
    sink.log(`perf tools: skipped (${available.reason})`);
    return { records, valueBytes, rows: [], skipped: available.reason ?? 'not available' };
  }
  const rows: PerfToolRow[] = [];
  const capMs = (records / 10_000) * 1000 + TOOL_GRACE_MS;
  for (const t of targets()) {
    sink.log(`perf tools: starting ${t.label}`);
    let up: Awaited<ReturnType<Target['start']>>;
    try {
      up = await t.start();
    } catch (err) {
      const error = `could not start: ${(err as Error).message.split('\n')[0]}`;
      sink.log(`perf tools: ${t.label} ${error}`);
      rows.push({ system: t.system, deployment: t.label, tool: 'kafka-producer-perf-test', flags: '', status: 'failed', error, serverCpuSeconds: 0, serverCpuSPerM: null, peakServerRssMb: 0 });
      continue;
    }
    try {
      const admin = new KafkaClientDriver(up.bootstrap, { producer: {}, e2eProducer: {} });
      const topics: string[] = [];
      for (const setting of PRODUCER_SETTINGS) {
        const topic = `perf-tools-${setting.name}`;
        topics.push(topic);
        const flags = ['--topic', topic, '--num-records', String(records), '--record-size', String(valueBytes), '--throughput', '-1', '--producer-props',
          ...Object.entries(setting.props).map(([k, v]) => `${k}=${v}`)];
        rows.push(await measure(t, 'kafka-producer-perf-test', flags, up.pids, sink, async () => {
          await admin.createTopic(topic, 1, 3, 2);
          const [head, ...rest] = splitAt(flags, '--producer-props');
          const out = await runPerfTool(PERF_TOOLS.producer, [...head, '--producer-props', `bootstrap.servers=${up.bootstrap}`, ...rest], capMs);
          const s = parseProducerPerf(out);
          return { records: s.records, recordsPerS: s.recordsPerS, mbPerS: s.mbPerS, p50Ms: s.p50Ms, p99Ms: s.p99Ms };
        }));
      }
      const cflags = ['--topic', topics[0]!, '--messages', String(records), '--timeout', '60000'];
      rows.push(await measure(t, 'kafka-consumer-perf-test', cflags, up.pids, sink, async () => {
        const out = await runPerfTool(PERF_TOOLS.consumer, ['--bootstrap-server', up.bootstrap, ...cflags], capMs);
        const s = parseConsumerPerf(out);
        return { records: s.records, recordsPerS: s.recordsPerS, mbPerS: s.mbPerS, fetchRecordsPerS: s.fetchRecordsPerS };
      }));
    } finally {
      await up.stop();
    }
  }
  return { records, valueBytes, rows };
}

/** [before `flag`, from after `flag`]. */
function splitAt(args: readonly string[], flag: string): [string[], ...string[]] {
  const i = args.indexOf(flag);
  return [args.slice(0, i), ...args.slice(i + 1)];
}

type Figures = Pick<PerfToolRow, 'records' | 'recordsPerS' | 'mbPerS' | 'p50Ms' | 'p99Ms' | 'fetchRecordsPerS'>;

async function measure(
  t: Target, tool: PerfToolRow['tool'], flags: readonly string[], pids: () => readonly number[], sink: ProgressSink, work: () => Promise<Figures>,
): Promise<PerfToolRow> {
  settleDisk();
  const sampler = ProcSampler.start(pids());
  let figures: Figures | undefined;
  let error: string | undefined;
  try {
    figures = await work();
  } catch (err) {
    error = (err as Error).message;
  }
  const servers = sampler.stop();
  const cpu = Math.round(servers.reduce((s, p) => s + p.cpuSeconds, 0) * 100) / 100;
  const records = figures?.records ?? 0;
  const row: PerfToolRow = {
    system: t.system, deployment: t.label, tool, flags: flags.join(' '), status: error === undefined ? 'ok' : 'failed', ...(error !== undefined ? { error } : {}),
    ...figures, serverCpuSeconds: cpu, serverCpuSPerM: records > 0 ? Math.round((cpu / records) * 1e6 * 100) / 100 : null,
    peakServerRssMb: Math.max(0, ...servers.map((p) => Math.max(p.peakRssMb, p.lifetimePeakRssMb))),
  };
  sink.log(`perf tools: ${t.label} · ${tool} ${row.flags}: ${error ?? `${Math.round(row.recordsPerS ?? 0).toLocaleString('en-US')} rec/s, servers ${cpu} CPU s`}`);
  return row;
}
