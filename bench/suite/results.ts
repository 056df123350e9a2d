// The shape of one suite run's results (the JSON file, and the input of the
// Markdown and HTML reports), and the profiles and workload plan that
// produce it. Plain data only, so a results file from an older run can be
// re-rendered.
import type { MachineInfo } from './machine.js';
import type { PerfToolsResult } from './perf-tools.js';
import type { ProcessStats } from './proc-stats.js';
import type { ConsumeSpec, E2eSpec, LatencyResult, ProduceSpec, SystemName, ThroughputResult } from './types.js';

export const RESULTS_FORMAT_VERSION = 1;

/** The sizes of one run. */
export interface Profile {
  readonly name: string;
  /** Records per produce workload (and so per consume). */
  readonly records: number;
  /** Time cap of each produce and consume workload. */
  readonly seconds: number;
  readonly smallValueBytes: number;
  readonly largeValueBytes: number;
  /** Producers of the parallel produce and members of the group that reads it back; 0 leaves the pair out. */
  readonly parallel: number;
  /** Offered rates of the e2e latency workloads, records/s. */
  readonly e2eRates: readonly number[];
  readonly e2eSeconds: number;
  /** Sent before each e2e measurement, not measured (absent in results of older runs: none). */
  readonly e2eWarmupSeconds?: number;
  /** Records per run of Kafka's perf tools (issue 19; absent in older results). */
  readonly perfToolRecords?: number;
}

export type ProfileName = 'quick' | 'full';

export const PROFILES: Readonly<Record<ProfileName, Profile>> = {
  quick: {
    name: 'quick', records: 50_000, seconds: 5, smallValueBytes: 100, largeValueBytes: 1024, parallel: 3, e2eRates: [10_000], e2eSeconds: 3, e2eWarmupSeconds: 1,
    perfToolRecords: 50_000,
  },
  // 3,000,000 records: the fastest systems (~1.4 million records/s) then run 2 s or more, so the first
  // fraction of a second (JIT compilation, connection set-up) no longer weighs on their rate against
  // the slowest, which ran 25 s either way (1,000,000 took the fastest under a second).
  full: {
    name: 'full', records: 3_000_000, seconds: 30, smallValueBytes: 100, largeValueBytes: 1024, parallel: 3,
    e2eRates: [10_000, 50_000, 100_000], e2eSeconds: 10, e2eWarmupSeconds: 2, perfToolRecords: 3_000_000,
  },
};

/** The kinds of systems `--systems` selects. */
export type SystemFilter = 'sluice' | 'nats' | 'redis' | 'kafka';
export const SYSTEM_FILTERS: readonly SystemFilter[] = ['sluice', 'nats', 'redis', 'kafka'];

/** Every deployment the suite knows, in run order; the reports pair them by key. */
export type DeploymentKey =
  | 'sluice-rf1' | 'sluice-rf3' | 'sluice-rf3-fsync'
  | 'sluice-rf3-client' | 'sluice-rf3-client-tuned' | 'sluice-rf3-client-kafka-batch' | 'sluice-rf1-client' | 'sluice-rf3-kafka-client'
  | 'nats-r1' | 'nats-r3' | 'redis-aof' | 'redis-noaof'
  | 'kafka-r1' | 'kafka-r3' | 'kafka-r3-tuned' | 'kafka-r3-fsync';

export const DEPLOYMENT_KEYS: readonly DeploymentKey[] = [
  'sluice-rf1', 'sluice-rf3', 'sluice-rf3-fsync', 'sluice-rf3-client', 'sluice-rf3-client-tuned', 'sluice-rf3-client-kafka-batch', 'sluice-rf1-client', 'sluice-rf3-kafka-client',
  'nats-r1', 'nats-r3', 'redis-aof', 'redis-noaof', 'kafka-r1', 'kafka-r3', 'kafka-r3-tuned', 'kafka-r3-fsync',
];

/** How the reports name each deployment. */
export const DEPLOYMENT_LABELS: Readonly<Record<DeploymentKey, string>> = {
  'sluice-rf1': 'Sluice RF=1 acks=1', 'sluice-rf3': 'Sluice RF=3 acks=all', 'sluice-rf3-fsync': 'Sluice RF=3 acks=all fsync',
  'sluice-rf3-client': 'Sluice RF=3 acks=all, Producer', 'sluice-rf3-client-tuned': 'Sluice RF=3 acks=all, Producer tuned',
  'sluice-rf3-client-kafka-batch': 'Sluice RF=3 acks=all, Producer at Kafka\'s defaults (linger 5 ms, batch 16 KiB)',
  'sluice-rf1-client': 'Sluice RF=1 acks=1, Producer', 'sluice-rf3-kafka-client': 'Sluice RF=3 acks=all, Kafka Java client',
  'nats-r1': 'NATS JetStream R1', 'nats-r3': 'NATS JetStream R3', 'redis-aof': 'Redis Streams AOF everysec', 'redis-noaof': 'Redis Streams no AOF',
  'kafka-r1': 'Kafka R1 acks=1', 'kafka-r3': 'Kafka R3 acks=all', 'kafka-r3-tuned': 'Kafka R3 acks=all, producer tuned',
  'kafka-r3-fsync': 'Kafka R3 acks=all flush every message',
};

export type WorkloadDef =
  | { readonly id: string; readonly label: string; readonly kind: 'produce'; readonly spec: ProduceSpec }
  /** Reads back the preceding produce; `records` comes from its acknowledged count at run time. */
  | { readonly id: string; readonly label: string; readonly kind: 'consume'; readonly consumers: number; readonly seconds: number }
  | { readonly id: string; readonly label: string; readonly kind: 'e2e'; readonly spec: E2eSpec };

const sizeLabel = (bytes: number): string => (bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} B`);

/** The workloads every deployment runs, in order (issue 8). */
export function planWorkloads(p: Profile): WorkloadDef[] {
  const produce = (valueBytes: number, producers: number): WorkloadDef => ({
    id: `produce-${sizeLabel(valueBytes).replace(' ', '')}${producers > 1 ? `-x${producers}` : ''}`,
    label: `produce ${sizeLabel(valueBytes)}${producers > 1 ? `, ${producers} producers` : ''}`,
    kind: 'produce',
    spec: { records: p.records, seconds: p.seconds, valueBytes, producers },
  });
  const plan: WorkloadDef[] = [
    produce(p.smallValueBytes, 1),
    { id: 'consume-1', label: 'consume, 1 consumer', kind: 'consume', consumers: 1, seconds: p.seconds },
    produce(p.largeValueBytes, 1),
  ];
  if (p.parallel > 1) {
    plan.push(produce(p.smallValueBytes, p.parallel));
    plan.push({ id: `consume-group-${p.parallel}`, label: `consume, ${p.parallel}-member group`, kind: 'consume', consumers: p.parallel, seconds: p.seconds });
  }
  for (const ratePerS of p.e2eRates) {
    plan.push({
      id: `e2e-${ratePerS}`, label: `e2e latency at ${ratePerS.toLocaleString('en-US')} rec/s`, kind: 'e2e',
      spec: { ratePerS, seconds: p.e2eSeconds, warmupSeconds: p.e2eWarmupSeconds ?? 0, valueBytes: p.smallValueBytes },
    });
  }
  return plan;
}

export interface WorkloadResult {
  readonly id: string;
  readonly label: string;
  readonly kind: WorkloadDef['kind'];
  readonly spec: ProduceSpec | ConsumeSpec | E2eSpec;
  readonly status: 'ok' | 'failed' | 'skipped';
  readonly error?: string;
  /** Seconds from the deployment's start to this workload's start (places RSS timelines on one axis). */
  readonly startedAtS: number;
  readonly throughput?: ThroughputResult;
  readonly latency?: LatencyResult;
  /** Per server process, in serverPids() order. */
  readonly servers: readonly ProcessStats[];
  readonly serverCpuSeconds: number;
  /** CPU of the benchmark process itself (the clients). */
  readonly clientCpuSeconds: number;
  /** Server CPU per record done; null when no record was done. */
  readonly serverCpuUsPerRecord: number | null;
  readonly clientCpuUsPerRecord: number | null;
  /** Highest RSS of any server process during the workload (sampled or VmHWM). */
  readonly peakServerRssMb: number;
}

export interface DeploymentResult {
  readonly key: DeploymentKey;
  readonly system: SystemName;
  readonly label: string;
  /** The deployment's own description of its configuration (empty when it was not created). */
  readonly variant: string;
  /** 'skipped': not available here (reason says why); 'failed': could not start, or a workload failed. */
  readonly status: 'ok' | 'failed' | 'skipped';
  readonly reason?: string;
  readonly startSeconds?: number;
  readonly workloads: readonly WorkloadResult[];
}

export interface SuiteResults {
  readonly formatVersion: number;
  readonly profile: Profile;
  readonly plan: readonly WorkloadDef[];
  readonly machine: MachineInfo;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly durationS: number;
  readonly deployments: readonly DeploymentResult[];
  /** Workloads that failed (and deployments that could not start): the exit code is non-zero when > 0. */
  readonly failures: number;
  /** Kafka's perf tools on Sluice's Kafka listener and on Kafka (issue 19), when they ran. */
  readonly perfTools?: PerfToolsResult;
}
