// The readable report of a suite run: tables built from SuiteResults (a
// model the HTML report renders too) and their Markdown text.
//
// Pairings (issue 8): Sluice RF=3 acks=all vs NATS JetStream R3; Sluice RF=1
// acks=1 vs NATS JetStream R1 and Redis Streams without AOF; Sluice's fsync
// mode vs Redis Streams with AOF everysec. Issue 19 adds Apache Kafka: Sluice
// RF=3 (raw, then its real Producer with defaults and tuned, then Kafka's Java
// client on Sluice's Kafka listener) vs Kafka R3 with the same producer
// settings; RF=1 vs Kafka R1; the fsync modes; and one table of Sluice's real
// client as a share of the raw connection (the protocol's ceiling). Ratios always say how many times
// better Sluice is: throughput Sluice/peer, latency peer/Sluice, so > 1×
// favours Sluice either way. A peer that could not run shows "skipped" (its
// reason under the table), one not selected "not run", a failed workload
// "failed"; such cells have no ratio.
import { describeMachine } from './machine.js';
import { DEPLOYMENT_LABELS, type DeploymentKey, type DeploymentResult, type SuiteResults, type WorkloadDef, type WorkloadResult } from './results.js';

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
  /** 'advantage' (default): Sluice × peer; 'share': each peer's figure as a percentage of the first column's. */
  readonly ratio?: 'advantage' | 'share';
}

export const PAIRINGS: readonly Pairing[] = [
  { title: 'Sluice RF=3 acks=all vs NATS JetStream R3', sluice: 'sluice-rf3', peers: ['nats-r3'] },
  { title: 'Sluice RF=1 acks=1 vs NATS JetStream R1 and Redis Streams without AOF', sluice: 'sluice-rf1', peers: ['nats-r1', 'redis-noaof'] },
  { title: 'Sluice RF=3 acks=all with fsync before ack vs Redis Streams AOF everysec and Kafka R3 flushing every message', sluice: 'sluice-rf3-fsync', peers: ['redis-aof', 'kafka-r3-fsync'] },
  { title: 'Sluice RF=3 acks=all (raw connection) vs Apache Kafka R3 (Java client)', sluice: 'sluice-rf3', peers: ['kafka-r3', 'kafka-r3-tuned'] },
  { title: 'Sluice RF=3 acks=all through its Producer and Consumer.run() vs Kafka R3, producer defaults', sluice: 'sluice-rf3-client', peers: ['kafka-r3'] },
  { title: 'Sluice RF=3 acks=all through its Producer, tuned, vs Kafka R3, tuned (linger 10 ms, batch 256 KiB)', sluice: 'sluice-rf3-client-tuned', peers: ['kafka-r3-tuned'] },
  { title: 'Sluice RF=3 acks=all through its Producer with Kafka\'s producer defaults (linger 5 ms, batch 16 KiB) vs Kafka R3 with them', sluice: 'sluice-rf3-client-kafka-batch', peers: ['kafka-r3'] },
  { title: 'Kafka\'s Java client on Sluice\'s Kafka listener vs on Kafka R3 (same client, same settings)', sluice: 'sluice-rf3-kafka-client', peers: ['kafka-r3'] },
  { title: 'Sluice RF=1 acks=1 vs Kafka R1 acks=1', sluice: 'sluice-rf1', peers: ['kafka-r1'] },
  { title: 'Sluice RF=1 acks=1 through its Producer and Consumer.run() vs Kafka R1, producer defaults', sluice: 'sluice-rf1-client', peers: ['kafka-r1'] },
  { title: 'Sluice RF=3 through its real clients, as a share of the raw connection', sluice: 'sluice-rf3', peers: ['sluice-rf3-client', 'sluice-rf3-client-tuned', 'sluice-rf3-client-kafka-batch', 'sluice-rf3-kafka-client'], ratio: 'share' },
];

const RATIO_NOTE = 'Ratio = how many times better Sluice is: throughput Sluice/peer, latency peer/Sluice (> 1× favours Sluice).';
const SHARE_NOTE = '% of raw = the real client\'s figure / the raw connection\'s: for throughput the share of the ceiling it reaches, for latency how many times the raw latency (> 100% is slower).';

/** A figure as a percentage of the base figure ("83%"); "—" when either side has none. */
export function shareText(base: Figure, other: Figure): string {
  if (base.value === null || other.value === null || base.value <= 0) return '—';
  return `${Math.round((other.value / base.value) * 100)}%`;
}

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

/** Each deployment's own description of its configuration (producer settings, heap, ...). */
function variantNotes(ds: ReadonlyArray<DeploymentResult | undefined>): string[] {
  return ds.filter((d): d is DeploymentResult => d !== undefined && d.variant !== '').map((d) => `${d.label}: ${d.variant}.`);
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
    // A pairing whose peers were all left out of this run (not selected) says nothing.
    if (peers.every((x) => x.d === undefined)) return [];
    const share = p.ratio === 'share';
    const header = ['workload', s.label, ...peers.flatMap(({ key, d }) => [d?.label ?? labelOf(key), share ? '% of raw' : 'Sluice ×'])];
    const body = rows.map((row) => {
      const sf = figure(s, row);
      return [row.label, sf.text, ...peers.flatMap(({ d }) => {
        const pf = figure(d, row);
        return [pf.text, share ? shareText(sf, pf) : ratioText(sf, pf, lowerIsBetter(row.metric))];
      })];
    });
    return [{ title: p.title, header, rows: body, notes: [share ? SHARE_NOTE : RATIO_NOTE, ...variantNotes([s, ...peers.map((x) => x.d)]), ...skipNotes([s, ...peers.map((x) => x.d)])] }];
  });
}

function labelOf(key: DeploymentKey): string {
  return DEPLOYMENT_LABELS[key];
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
    header: ['deployment', 'workload', 'server CPU s', 'server CPU µs/record (= s per 1M records)', 'client CPU µs/record', 'peak RSS per server, MB'],
    rows,
    notes: ['Server CPU: utime+stime of every server process during the workload; client CPU: the benchmark process '
      + '(and, for the Kafka-client deployments, the Java driver\'s JVM from its clock start). '
      + 'Peak RSS: the higher of the sampled VmRSS (every 250 ms) and VmHWM (peak since the process started).'],
  };
}

/** Per deployment: the broker memory and the server CPU per million records of each workload (issue 19). */
export function brokerCostTable(r: SuiteResults): ReportTable {
  const ran = r.deployments.filter((d) => d.status !== 'skipped' && d.workloads.some((w) => w.status === 'ok'));
  const perM = (w: WorkloadResult | undefined): string => (w?.status === 'ok' && w.serverCpuUsPerRecord !== null ? w.serverCpuUsPerRecord.toFixed(2) : '—');
  return {
    title: 'Broker RSS and CPU seconds per million records',
    header: ['deployment', 'peak RSS per broker, MB (any workload)', ...r.plan.map((w) => `${w.label}: CPU s/1M`)],
    rows: ran.map((d) => {
      const ok = d.workloads.filter((w) => w.status === 'ok' && w.servers.length > 0);
      const rss = ok.length === 0 ? '—' : String(Math.round(Math.max(...ok.map((w) => w.peakServerRssMb))));
      return [d.label, rss, ...r.plan.map((w) => perM(findWorkload(d, w.id)))];
    }),
    notes: ['CPU s/1M: user+system seconds of all the deployment\'s server processes (every JVM of Kafka, every Node process of Sluice) per million records of the workload.'],
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
    ...kafkaTargetChecks(r),
  ];
}

/** Issue 19's targets: Sluice against Apache Kafka in the same run, and the real client against the raw connection. */
export function kafkaTargetChecks(r: SuiteResults): TargetCheck[] {
  const produceId = r.plan.find((w) => w.kind === 'produce')?.id ?? '';
  const consumeId = r.plan.find((w) => w.kind === 'consume' && w.consumers === 1)?.id ?? '';
  const ok = (key: DeploymentKey, id: string): WorkloadResult | undefined => {
    const w = findWorkload(findDeployment(r, key), id);
    return w?.status === 'ok' ? w : undefined;
  };
  const tput = (key: DeploymentKey, id: string): number | null => ok(key, id)?.throughput?.recordsPerS ?? null;
  const ratio = (a: number | null, b: number | null): number | null => (a === null || b === null || b <= 0 ? null : a / b);
  const times = (x: number): string => `${x.toFixed(2)}×`;
  const check = (target: string, v: number | null, pass: (x: number) => boolean, unit: (x: number) => string): TargetCheck =>
    v === null ? { target, measured: '—', status: 'not measured' } : { target, measured: unit(v), status: pass(v) ? 'met' : 'missed' };
  const best = (...xs: Array<number | null>): number | null => (xs.every((x) => x === null) ? null : Math.max(...xs.filter((x): x is number => x !== null)));
  const p99 = (key: DeploymentKey): number | null => ok(key, 'e2e-10000')?.latency?.p99Ms ?? null;
  // Broker RSS: Sluice's highest broker against Kafka's highest node, workload by workload; the worst ratio.
  const rssRatios = r.plan.map((w) => ratio(ok('sluice-rf3', w.id)?.peakServerRssMb ?? null, ok('kafka-r3', w.id)?.peakServerRssMb ?? null))
    .filter((x): x is number => x !== null);
  return [
    check('produce RF=3 acks=all, real Producer (defaults) ≥ Kafka R3 (producer defaults)', ratio(tput('sluice-rf3-client', produceId), tput('kafka-r3', produceId)),
      (x) => x >= 1, (x) => `${times(x)} of Kafka's`),
    check('produce RF=3 acks=all, real Producer tuned ≥ Kafka R3 tuned', ratio(tput('sluice-rf3-client-tuned', produceId), tput('kafka-r3-tuned', produceId)),
      (x) => x >= 1, (x) => `${times(x)} of Kafka's`),
    check('consume, 1 consumer, RF=3 (Consumer.run()) ≥ Kafka R3', ratio(tput('sluice-rf3-client', consumeId), tput('kafka-r3', consumeId)),
      (x) => x >= 1, (x) => `${times(x)} of Kafka's`),
    check('e2e at 10,000 rec/s, RF=3 acks=all: p99 ≤ Kafka R3\'s', ratio(p99('sluice-rf3'), p99('kafka-r3')), (x) => x <= 1, (x) => `${times(x)} of Kafka's`),
    check('broker RSS below Kafka R3\'s under every workload', rssRatios.length === 0 ? null : Math.max(...rssRatios), (x) => x < 1,
      (x) => `${times(x)} of Kafka's at worst`),
    check('real Producer within 80% of the raw pipelined produce (RF=3)', ratio(best(tput('sluice-rf3-client', produceId), tput('sluice-rf3-client-tuned', produceId)), tput('sluice-rf3', produceId)),
      (x) => x >= 0.8, (x) => `${Math.round(x * 100)}%`),
    check('a loop of single-record send() ≥ 500,000 rec/s (RF=3 acks=all)', best(tput('sluice-rf3-client', produceId), tput('sluice-rf3-client-tuned', produceId)),
      (x) => x >= 500_000, (x) => `${num(x)} rec/s`),
  ];
}

function maxSluiceRss(r: SuiteResults): number | null {
  const ws = r.deployments.filter((d) => d.system === 'sluice').flatMap((d) => d.workloads).filter((w) => w.servers.length > 0);
  return ws.length === 0 ? null : Math.max(...ws.map((w) => w.peakServerRssMb));
}

export function targetsTable(r: SuiteResults): ReportTable {
  return {
    title: 'Targets (issues 8 and 19)',
    header: ['target', 'measured', 'status'],
    rows: targetChecks(r).map((t) => [t.target, t.measured, t.status]),
    notes: ['Peak RSS counts VmHWM, the peak since the process started: a conservative reading of "during every workload".'],
  };
}

/** Kafka's perf tools with the same flags on Sluice's Kafka listener and on Kafka (issue 19); null when they did not run. */
export function perfToolsTable(r: SuiteResults): ReportTable | null {
  const p = r.perfTools;
  if (p === undefined) return null;
  const fig = (x: number | undefined, unit: string): string => (x === undefined ? '—' : `${num(x)} ${unit}`);
  const rows = p.rows.map((row) => [
    row.tool, row.flags, row.deployment,
    row.status === 'ok' ? `${fig(row.recordsPerS, 'rec/s')} (${row.mbPerS ?? '—'} MB/s)` : `failed: ${row.error ?? ''}`,
    row.tool === 'kafka-producer-perf-test' ? (row.p50Ms === undefined ? '—' : `p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms`) : fig(row.fetchRecordsPerS, 'rec/s once fetching'),
    row.serverCpuSPerM === null ? '—' : row.serverCpuSPerM.toFixed(2), row.peakServerRssMb > 0 ? String(Math.round(row.peakServerRssMb)) : '—',
  ]);
  // Sluice / Kafka for each tool and flags, when both have a figure.
  const ratios = p.rows.filter((row) => row.system === 'sluice').flatMap((s) => {
    const k = p.rows.find((row) => row.system === 'apache-kafka' && row.tool === s.tool && row.flags === s.flags);
    return s.recordsPerS && k?.recordsPerS ? [`${s.tool} ${s.flags}: Sluice/Kafka throughput ${(s.recordsPerS / k.recordsPerS).toFixed(2)}×`
      + (s.serverCpuSPerM !== null && k.serverCpuSPerM ? `, server CPU per record ${(s.serverCpuSPerM / k.serverCpuSPerM).toFixed(2)}×` : '')] : [];
  });
  return {
    title: 'Kafka\'s perf tools, same flags: Sluice\'s Kafka listener vs Kafka',
    header: ['tool', 'flags (plus the bootstrap servers)', 'system', 'throughput (the tool\'s figure)', 'latency / fetch rate', 'server CPU s/1M', 'peak RSS per server, MB'],
    rows,
    notes: [
      p.skipped !== undefined ? `Skipped: ${p.skipped}` : `${num(p.records)} records of ${p.valueBytes} B per run; topics with 1 partition, RF 3, min.insync.replicas=2; one system up at a time.`,
      ...ratios,
    ],
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
    ...(perfToolsTable(r) !== null ? [markdownTable(perfToolsTable(r)!), ''] : []),
    markdownTable(brokerCostTable(r)), '',
    markdownTable(costTable(r)), '',
    ...(failures.length > 0 ? ['### Failures', '', ...failures, ''] : []),
  ].join('\n');
}
