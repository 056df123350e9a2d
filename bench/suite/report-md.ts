// The readable report of a suite run: tables built from SuiteResults (a
// model the HTML report renders too) and their Markdown text.
//
// Pairings (issue 8): Sluice RF=3 acks=all vs NATS JetStream R3; Sluice RF=1
// acks=1 vs NATS JetStream R1 and Redis Streams without AOF; Sluice's fsync
// mode vs Redis Streams with AOF everysec. Ratios always say how many times
// better Sluice is: throughput Sluice/peer, latency peer/Sluice, so > 1×
// favours Sluice either way. A peer that could not run shows "skipped" (its
// reason under the table), one not selected "not run", a failed workload
// "failed"; such cells have no ratio.
import { describeMachine } from './machine.js';
import type { DeploymentKey, DeploymentResult, SuiteResults, WorkloadDef, WorkloadResult } from './results.js';

export interface ReportTable {
  readonly title: string;
  readonly header: readonly string[];
  readonly rows: ReadonlyArray<readonly string[]>;
  readonly notes: readonly string[];
}

type Metric = 'throughput' | 'p50' | 'p99' | 'p999';

interface RowDef {
  readonly label: string;
  readonly workloadId: string;
  readonly metric: Metric;
}

interface Figure {
  readonly value: number | null;
  readonly text: string;
}

interface Pairing {
  readonly title: string;
  readonly sluice: DeploymentKey;
  readonly peers: readonly DeploymentKey[];
}

export const PAIRINGS: readonly Pairing[] = [
  { title: 'Sluice RF=3 acks=all vs NATS JetStream R3', sluice: 'sluice-rf3', peers: ['nats-r3'] },
  { title: 'Sluice RF=1 acks=1 vs NATS JetStream R1 and Redis Streams without AOF', sluice: 'sluice-rf1', peers: ['nats-r1', 'redis-noaof'] },
  { title: 'Sluice RF=3 acks=all with fsync before ack vs Redis Streams AOF everysec', sluice: 'sluice-rf3-fsync', peers: ['redis-aof'] },
];

const RATIO_NOTE = 'Ratio = how many times better Sluice is: throughput Sluice/peer, latency peer/Sluice (> 1× favours Sluice).';

export const num = (x: number): string => Math.round(x).toLocaleString('en-US');
const ms = (x: number): string => `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms`;

function rowDefs(plan: readonly WorkloadDef[]): RowDef[] {
  return plan.flatMap((w): RowDef[] => w.kind !== 'e2e'
    ? [{ label: w.label, workloadId: w.id, metric: 'throughput' }]
    : (['p50', 'p99', 'p999'] as const).map((metric) => ({ label: `${w.label}, ${metric === 'p999' ? 'p99.9' : metric}`, workloadId: w.id, metric })));
}

const lowerIsBetter = (m: Metric): boolean => m !== 'throughput';

export function findDeployment(r: SuiteResults, key: DeploymentKey): DeploymentResult | undefined {
  return r.deployments.find((d) => d.key === key);
}

export function findWorkload(d: DeploymentResult | undefined, id: string): WorkloadResult | undefined {
  return d?.workloads.find((w) => w.id === id);
}

function figure(d: DeploymentResult | undefined, row: RowDef): Figure {
  if (d === undefined) return { value: null, text: 'not run' };
  if (d.status === 'skipped') return { value: null, text: 'skipped' };
  const w = findWorkload(d, row.workloadId);
  if (w === undefined) return { value: null, text: d.status === 'failed' ? 'failed' : 'not run' };
  if (w.status !== 'ok') return { value: null, text: w.status };
  if (row.metric === 'throughput') {
    const t = w.throughput;
    return t ? { value: t.recordsPerS, text: `${num(t.recordsPerS)} rec/s (${t.mbPerS} MB/s)` } : { value: null, text: '—' };
  }
  const l = w.latency;
  if (!l) return { value: null, text: '—' };
  const v = row.metric === 'p50' ? l.p50Ms : row.metric === 'p99' ? l.p99Ms : l.p999Ms;
  return { value: v, text: ms(v) };
}

/** Sluice's advantage as "2.31×"; "—" when either side has no figure. */
export function ratioText(sluice: Figure, peer: Figure, lowerBetter: boolean): string {
  if (sluice.value === null || peer.value === null || sluice.value <= 0 || peer.value <= 0) return '—';
  const r = lowerBetter ? peer.value / sluice.value : sluice.value / peer.value;
  return `${r >= 10 ? r.toFixed(1) : r.toFixed(2)}×`;
}

function skipNotes(ds: ReadonlyArray<DeploymentResult | undefined>): string[] {
  return ds.filter((d): d is DeploymentResult => d !== undefined && d.status !== 'ok' && d.reason !== undefined)
    .map((d) => `${d.label} ${d.status}: ${d.reason}`);
}

export function pairingTables(r: SuiteResults): ReportTable[] {
  const rows = rowDefs(r.plan);
  return PAIRINGS.flatMap((p): ReportTable[] => {
    const s = findDeployment(r, p.sluice);
    if (s === undefined) return [];
    const peers = p.peers.map((k) => ({ key: k, d: findDeployment(r, k) }));
    const header = ['workload', s.label, ...peers.flatMap(({ key, d }) => [d?.label ?? labelOf(key), 'Sluice ×'])];
    const body = rows.map((row) => {
      const sf = figure(s, row);
      return [row.label, sf.text, ...peers.flatMap(({ d }) => {
        const pf = figure(d, row);
        return [pf.text, ratioText(sf, pf, lowerIsBetter(row.metric))];
      })];
    });
    return [{ title: p.title, header, rows: body, notes: [RATIO_NOTE, ...skipNotes([s, ...peers.map((x) => x.d)])] }];
  });
}

const LABELS: Record<DeploymentKey, string> = {
  'sluice-rf1': 'Sluice RF=1 acks=1', 'sluice-rf3': 'Sluice RF=3 acks=all', 'sluice-rf3-fsync': 'Sluice RF=3 acks=all fsync',
  'nats-r1': 'NATS JetStream R1', 'nats-r3': 'NATS JetStream R3', 'redis-aof': 'Redis Streams AOF everysec', 'redis-noaof': 'Redis Streams no AOF',
};

function labelOf(key: DeploymentKey): string {
  return LABELS[key];
}

/** Every deployment's figure for every workload. */
export function allFiguresTable(r: SuiteResults): ReportTable {
  const rows = rowDefs(r.plan);
  return {
    title: 'All figures',
    header: ['workload', ...r.deployments.map((d) => d.label)],
    rows: rows.map((row) => [row.label, ...r.deployments.map((d) => figure(d, row).text)]),
    notes: skipNotes(r.deployments),
  };
}

/** CPU and memory per deployment and workload: what each record costs. */
export function costTable(r: SuiteResults): ReportTable {
  const rows = r.deployments.filter((d) => d.status !== 'skipped').flatMap((d) => d.workloads.filter((w) => w.status === 'ok').map((w) => [
    d.label, w.label, String(w.serverCpuSeconds), w.serverCpuUsPerRecord === null ? '—' : String(w.serverCpuUsPerRecord),
    w.clientCpuUsPerRecord === null ? '—' : String(w.clientCpuUsPerRecord),
    w.servers.map((p) => Math.round(Math.max(p.peakRssMb, p.lifetimePeakRssMb))).join(' / ') || '—',
  ]));
  return {
    title: 'Cost: CPU and memory',
    header: ['deployment', 'workload', 'server CPU s', 'server CPU µs/record', 'client CPU µs/record', 'peak RSS per server, MB'],
    rows,
    notes: ['Server CPU: utime+stime of every server process during the workload; client CPU: the benchmark process. '
      + 'Peak RSS: the higher of the sampled VmRSS (every 250 ms) and VmHWM (peak since the process started).'],
  };
}

export type TargetStatus = 'met' | 'missed' | 'not measured';

export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  readonly status: TargetStatus;
}

const RSS_LIMIT_MB = 500;

/** Issue 8's targets, each met, missed, or not measured in this run. */
export function targetChecks(r: SuiteResults): TargetCheck[] {
  const produceId = r.plan.find((w) => w.kind === 'produce')?.id ?? '';
  const consumeId = r.plan.find((w) => w.kind === 'consume' && w.consumers === 1)?.id ?? '';
  const tput = (key: DeploymentKey, id: string): number | null => {
    const w = findWorkload(findDeployment(r, key), id);
    return w?.status === 'ok' ? w.throughput?.recordsPerS ?? null : null;
  };
  const p99 = (key: DeploymentKey, rate: number): number | null => {
    const w = findWorkload(findDeployment(r, key), `e2e-${rate}`);
    return w?.status === 'ok' ? w.latency?.p99Ms ?? null : null;
  };
  const atLeast = (target: string, v: number | null, min: number, unit: (x: number) => string): TargetCheck =>
    v === null ? { target, measured: '—', status: 'not measured' } : { target, measured: unit(v), status: v >= min ? 'met' : 'missed' };
  const atMost = (target: string, v: number | null, max: number, unit: (x: number) => string): TargetCheck =>
    v === null ? { target, measured: '—', status: 'not measured' } : { target, measured: unit(v), status: v <= max ? 'met' : 'missed' };
  const ratio = (a: number | null, b: number | null): number | null => (a === null || b === null || b <= 0 ? null : a / b);
  const recs = (x: number): string => `${num(x)} rec/s`;
  const times = (x: number): string => `${x.toFixed(2)}×`;
  const rss = maxSluiceRss(r);
  return [
    atLeast('produce RF=3 acks=all ≥ 500,000 rec/s', tput('sluice-rf3', produceId), 500_000, recs),
    atLeast('produce RF=3 acks=all ≥ 6× NATS JetStream R3', ratio(tput('sluice-rf3', produceId), tput('nats-r3', produceId)), 6, times),
    atLeast('produce RF=1 acks=1 ≥ 1,000,000 rec/s', tput('sluice-rf1', produceId), 1_000_000, recs),
    atLeast('produce RF=1 acks=1 ≥ Redis Streams no AOF', ratio(tput('sluice-rf1', produceId), tput('redis-noaof', produceId)), 1, times),
    atLeast('consume, 1 consumer (RF=1) ≥ 1,000,000 rec/s', tput('sluice-rf1', consumeId), 1_000_000, recs),
    atLeast('consume, 1 consumer (RF=1) ≥ 2× Redis Streams no AOF', ratio(tput('sluice-rf1', consumeId), tput('redis-noaof', consumeId)), 2, times),
    atMost('e2e at 10,000 rec/s, RF=3 acks=all: p99 ≤ 3 ms', p99('sluice-rf3', 10_000), 3, ms),
    atMost('e2e at 10,000 rec/s: p99 below NATS JetStream R3\'s', ratio(p99('sluice-rf3', 10_000), p99('nats-r3', 10_000)), 0.999_999, (x) => `${times(x)} of NATS's`),
    atMost('e2e at 100,000 rec/s, RF=3 acks=all: p99 ≤ 10 ms', p99('sluice-rf3', 100_000), 10, ms),
    atLeast('fsync mode ≥ 50% of the default mode\'s produce', ratio(tput('sluice-rf3-fsync', produceId), tput('sluice-rf3', produceId)), 0.5,
      (x) => `${Math.round(x * 100)}%`),
    atMost(`broker RSS < ${RSS_LIMIT_MB} MB during every workload`, rss, RSS_LIMIT_MB - 1e-9, (x) => `${Math.round(x)} MB at most`),
  ];
}

function maxSluiceRss(r: SuiteResults): number | null {
  const ws = r.deployments.filter((d) => d.system === 'sluice').flatMap((d) => d.workloads).filter((w) => w.servers.length > 0);
  return ws.length === 0 ? null : Math.max(...ws.map((w) => w.peakServerRssMb));
}

export function targetsTable(r: SuiteResults): ReportTable {
  return {
    title: 'Targets (issue 8)',
    header: ['target', 'measured', 'status'],
    rows: targetChecks(r).map((t) => [t.target, t.measured, t.status]),
    notes: ['Peak RSS counts VmHWM, the peak since the process started: a conservative reading of "during every workload".'],
  };
}

function escapeCell(s: string): string {
  return s.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

export function markdownTable(t: ReportTable): string {
  const lines = [
    `### ${t.title}`, '',
    `| ${t.header.map(escapeCell).join(' | ')} |`,
    `|${t.header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...t.rows.map((row) => `| ${row.map(escapeCell).join(' | ')} |`),
  ];
  if (t.notes.length > 0) lines.push('', ...t.notes.map((n) => `- ${n}`));
  return lines.join('\n');
}

function failureLines(r: SuiteResults): string[] {
  return r.deployments.flatMap((d) => [
    ...(d.status === 'failed' && d.reason ? [`- ${d.label}: ${d.reason}`] : []),
    ...d.workloads.filter((w) => w.status === 'failed').map((w) => `- ${d.label} · ${w.label}: ${w.error ?? 'failed'}`),
  ]);
}

export function renderMarkdown(r: SuiteResults): string {
  const failures = failureLines(r);
  return [
    `## Benchmark comparison — profile ${r.profile.name}`, '',
    `Machine: ${describeMachine(r.machine)}.`,
    `Run: ${r.startedAt} → ${r.finishedAt} (${r.durationS} s). Produce/consume: up to ${num(r.profile.records)} records or ${r.profile.seconds} s each; `
      + `e2e: ${r.profile.e2eRates.map(num).join(', ')} rec/s for ${r.profile.e2eSeconds} s each`
      + `${r.profile.e2eWarmupSeconds ? ` after ${r.profile.e2eWarmupSeconds} s of warm-up at the same rate (sent, not measured)` : ''}.`,
    '',
    ...pairingTables(r).flatMap((t) => [markdownTable(t), '']),
    markdownTable(targetsTable(r)), '',
    markdownTable(allFiguresTable(r)), '',
    markdownTable(costTable(r)), '',
    ...(failures.length > 0 ? ['### Failures', '', ...failures, ''] : []),
  ].join('\n');
}
