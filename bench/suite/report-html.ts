// The HTML report of a suite run: one self-contained file (inline CSS and
// SVG, no script, nothing fetched) with the machine, the comparison and
// target tables of report-md.ts, and charts:
// - throughput over time per throughput workload, one line per deployment
//   (records/s between consecutive timeline samples; a run too short for two
//   samples is drawn flat at its average);
// - latency percentile curves per e2e rate, one line per deployment: x is
//   the percentile on a "nines" scale (-log10(1 - p/100): p90 = 1, p99 = 2,
//   p99.9 = 3 ...; max one step beyond), y is ms on a log scale;
// - RSS over time per deployment, one line per server process, on the
//   deployment's own time axis (seconds since it started).
import { describeMachine } from './machine.js';
import { allFiguresTable, brokerCostTable, costTable, pairingTables, perfToolsTable, targetChecks, type ReportTable } from './report-md.js';
import type { DeploymentResult, SuiteResults } from './results.js';
import { escapeXml, lineChart, type Series, type Tick } from './svg-chart.js';
import type { TimelinePoint } from './types.js';

/** Timeline steps shorter than this (the final sample) make noisy rates: merged away. */
const RATE_STEP_S_MIN = 0.1;
const MAX_NINES = 4;

const esc = escapeXml;

/** Records/s between consecutive cumulative samples, placed at each step's end. */
export function ratePoints(timeline: readonly TimelinePoint[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let prev = timeline[0];
  for (const p of timeline.slice(1)) {
    if (prev === undefined) break;
    const dt = p.tS - prev.tS;
    if (dt < RATE_STEP_S_MIN) continue;
    out.push([p.tS, (p.records - prev.records) / dt]);
    prev = p;
  }
  return out;
}

/** The "nines" of a percentile: 90 → 1, 99 → 2, 99.9 → 3; 100 (the max) is placed one step beyond MAX_NINES. */
export function nines(percentile: number): number {
  if (percentile >= 100) return MAX_NINES + 1;
  return Math.min(MAX_NINES, -Math.log10(1 - percentile / 100));
}

const NINES_TICKS: readonly Tick[] = [
  { value: 0, label: 'p0' }, { value: 1, label: 'p90' }, { value: 2, label: 'p99' }, { value: 3, label: 'p99.9' },
  { value: 4, label: 'p99.99' }, { value: 5, label: 'max' },
];

function htmlTable(t: ReportTable, cellClass: (row: number, col: number, text: string) => string = () => ''): string {
  const head = `<tr>${t.header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>`;
  const body = t.rows.map((row, r) => `<tr>${row.map((c, i) => {
    const cls = cellClass(r, i, c);
    return `<td${cls ? ` class="${cls}"` : ''}>${esc(c)}</td>`;
  }).join('')}</tr>`).join('\n');
  const notes = t.notes.length > 0 ? `<ul class="notes">${t.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>` : '';
  return `<h3>${esc(t.title)}</h3>\n<table>\n${head}\n${body}\n</table>\n${notes}`;
}

function throughputCharts(r: SuiteResults): string[] {
  return r.plan.filter((w) => w.kind !== 'e2e').map((w) => {
    const series: Series[] = r.deployments.flatMap((d) => {
      const t = d.workloads.find((x) => x.id === w.id && x.status === 'ok')?.throughput;
      if (!t) return [];
      const points = ratePoints(t.timeline);
      // A run shorter than two timeline steps draws its average rate over its duration.
      return [{ name: d.label, points: points.length >= 2 ? points : [[0, t.recordsPerS], [t.seconds, t.recordsPerS]] }];
    });
    return lineChart({ title: `Throughput over time: ${w.label}`, xLabel: 'seconds', yLabel: 'records/s', series });
  });
}

function latencyCharts(r: SuiteResults): string[] {
  return r.plan.filter((w) => w.kind === 'e2e').map((w) => {
    const series: Series[] = r.deployments.flatMap((d) => {
      const l = d.workloads.find((x) => x.id === w.id && x.status === 'ok')?.latency;
      return l ? [{ name: d.label, points: l.curve.map((c): [number, number] => [nines(c.percentile), Math.max(c.ms, 0.001)]) }] : [];
    });
    return lineChart({ title: `Latency percentiles: ${w.label}`, xLabel: 'percentile', yLabel: 'ms (log scale)', series, yLog: true, xTicks: NINES_TICKS });
  });
}

function rssChart(d: DeploymentResult): string {
  const byServer: Array<Array<[number, number]>> = [];
  const pids: number[] = [];
  for (const w of d.workloads) {
    w.servers.forEach((p, i) => {
      byServer[i] ??= [];
      pids[i] = p.pid;
      for (const pt of p.rssTimeline) byServer[i]!.push([w.startedAtS + pt.tS, pt.rssMb]);
    });
  }
  const series = byServer.map((points, i) => ({ name: `server ${i + 1} (pid ${pids[i]})`, points }));
  return lineChart({ title: `RSS over time: ${d.label}`, xLabel: 'seconds since the deployment started', yLabel: 'RSS, MB', series });
}

const STYLE = `
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1200px; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f3f3; }
td.met { background: #e3f6e3; } td.missed { background: #fbe3e3; } td.skip { color: #888; }
ul.notes { font-size: 12px; color: #555; }
.charts svg { display: block; margin: 1em 0; border: 1px solid #eee; }
`;

export function renderHtml(r: SuiteResults): string {
  const targets = targetChecks(r);
  const targetsTable: ReportTable = { title: 'Targets (issues 8 and 19)', header: ['target', 'measured', 'status'], rows: targets.map((t) => [t.target, t.measured, t.status]), notes: [] };
  const statusClass = (_row: number, col: number, text: string): string => (col === 2 && (text === 'met' || text === 'missed') ? text : '');
  const skipClass = (_row: number, _col: number, text: string): string => (['skipped', 'not run', 'failed', '—'].includes(text) ? 'skip' : '');
  const m = r.machine;
  const ran = r.deployments.filter((d) => d.workloads.some((w) => w.servers.length > 0));
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Sluice benchmark comparison ${esc(r.startedAt)}</title>
<style>${STYLE}</style></head>
<body>
<h1>Sluice benchmark comparison</h1>
<p>Profile <b>${esc(r.profile.name)}</b>; run ${esc(r.startedAt)} → ${esc(r.finishedAt)} (${r.durationS} s).</p>
<h2>Machine</h2>
<table>
<tr><th>CPU</th><td>${esc(m.cpuModel)}</td></tr><tr><th>cores</th><td>${m.cores}</td></tr>
<tr><th>memory</th><td>${m.memoryMb.toLocaleString('en-US')} MB</td></tr><tr><th>Node.js</th><td>${esc(m.node)}</td></tr>
<tr><th>OS</th><td>${esc(m.os)}</td></tr><tr><th>kernel</th><td>${esc(m.kernel)}</td></tr>
<tr><th>load average at start</th><td>${esc(m.loadAverage.join(' '))}</td></tr>
</table>
<p>${esc(describeMachine(m))}</p>
<h2>Comparison</h2>
${pairingTables(r).map((t) => htmlTable(t, skipClass)).join('\n')}
${htmlTable(targetsTable, statusClass)}
${htmlTable(allFiguresTable(r), skipClass)}
<h2>Throughput over time</h2>
<div class="charts">${throughputCharts(r).join('\n')}</div>
<h2>Latency percentiles</h2>
<div class="charts">${latencyCharts(r).join('\n')}</div>
<h2>Memory of the server processes</h2>
<div class="charts">${ran.map(rssChart).join('\n')}</div>
${perfToolsTable(r) !== null ? htmlTable(perfToolsTable(r)!) : ''}
${htmlTable(brokerCostTable(r))}
${htmlTable(costTable(r))}
</body></html>
`;
}
