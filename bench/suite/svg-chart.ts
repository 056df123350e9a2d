// Inline SVG line charts for the HTML report: no script, no external asset,
// so the report is one file a person can open anywhere. Linear or log10
// axes with rounded ticks, one polyline per series, and a legend.
//
// Invariants: every coordinate written is finite (points with a non-finite
// or, on a log axis, non-positive value are dropped); text is XML-escaped.

export interface Series {
  readonly name: string;
  readonly points: ReadonlyArray<readonly [number, number]>;
}

export interface Tick {
  readonly value: number;
  readonly label: string;
}

export interface ChartOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
  readonly yLog?: boolean;
  /** Fixed x ticks (e.g. percentile "nines"); default rounded linear ticks. */
  readonly xTicks?: readonly Tick[];
  readonly width?: number;
  readonly height?: number;
}

export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
const MARGIN = { left: 72, right: 16, top: 34, bottom: 46 };
const LEGEND_ROW_PX = 18;
const TICKS_WANTED = 6;

export function escapeXml(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll('\'', '&#39;');
}

const fmt = (x: number): string => {
  const a = Math.abs(x);
  if (a >= 1e6) return `${+(x / 1e6).toFixed(2)}M`;
  if (a >= 1e4) return `${+(x / 1e3).toFixed(1)}k`;
  if (a >= 1) return String(+x.toFixed(2));
  return String(+x.toPrecision(2));
};

/** About `wanted` round ticks from the last one <= min to the first one >= max (the axis then ends on ticks). */
export function linearTicks(min: number, max: number, wanted = TICKS_WANTED): Tick[] {
  if (!(max > min)) return [{ value: min, label: fmt(min) }];
  const raw = (max - min) / wanted;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: Tick[] = [];
  const first = Math.floor(min / step + 1e-9) * step;
  for (let i = 0; out.length < 100; i++) {
    // Multiplying (not adding) keeps 0.1-steps from drifting into 0.30000000000000004.
    const v = Number((first + i * step).toPrecision(12));
    out.push({ value: v, label: fmt(v) });
    if (v >= max - step * 1e-9) break;
  }
  return out;
}

/** Powers of ten (and 2×, 5× when few) covering [min, max], min > 0. */
export function logTicks(min: number, max: number): Tick[] {
  const lo = Math.floor(Math.log10(min));
  const hi = Math.ceil(Math.log10(max));
  const mults = hi - lo <= 2 ? [1, 2, 5] : [1];
  const out: Tick[] = [];
  for (let e = lo; e <= hi; e++) {
    for (const m of mults) {
      const v = m * 10 ** e;
      if (v >= min / 1.0001 && v <= max * 1.0001) out.push({ value: v, label: fmt(v) });
    }
  }
  return out;
}

interface Scale {
  readonly to: (v: number) => number;
  readonly ticks: readonly Tick[];
}

function scale(values: readonly number[], from: number, to: number, log: boolean, fixed?: readonly Tick[]): Scale {
  const vs = fixed ? [...values, ...fixed.map((t) => t.value)] : values;
  let min = Math.min(...vs);
  let max = Math.max(...vs);
  if (log) {
    min = 10 ** Math.floor(Math.log10(min));
    max = 10 ** Math.ceil(Math.log10(max));
  } else if (!fixed) {
    min = Math.min(0, min);
  }
  if (!(max > min)) max = min + 1;
  const ticks = fixed ?? (log ? logTicks(min, max) : linearTicks(min, max));
  if (!log && !fixed) [min, max] = [Math.min(min, ticks[0]!.value), Math.max(max, ticks.at(-1)!.value)];
  const f = log ? Math.log10 : (v: number) => v;
  const [a, b] = [f(min), f(max)];
  return { to: (v) => from + ((f(v) - a) / (b - a)) * (to - from), ticks };
}

export function lineChart(o: ChartOptions): string {
  const width = o.width ?? 760;
  const legendPx = LEGEND_ROW_PX * Math.ceil(o.series.length / 3);
  const height = (o.height ?? 320) + legendPx;
  const plotBottom = height - MARGIN.bottom - legendPx;
  const keep = ([x, y]: readonly [number, number]): boolean => Number.isFinite(x) && Number.isFinite(y) && (!o.yLog || y > 0);
  const series = o.series.map((s) => ({ name: s.name, points: s.points.filter(keep) })).filter((s) => s.points.length > 0);
  const head = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(o.title)}">`
    + `<text x="${width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(o.title)}</text>`;
  if (series.length === 0) return `${head}<text x="${width / 2}" y="${height / 2}" text-anchor="middle" fill="#888">no data</text></svg>`;
  const xs = scale(series.flatMap((s) => s.points.map((p) => p[0])), MARGIN.left, width - MARGIN.right, false, o.xTicks);
  const ys = scale(series.flatMap((s) => s.points.map((p) => p[1])), plotBottom, MARGIN.top, o.yLog ?? false);
  const parts = [head, axes(o, xs, ys, width, plotBottom)];
  series.forEach((s, i) => {
    const d = s.points.map(([x, y]) => `${xs.to(x).toFixed(1)},${ys.to(y).toFixed(1)}`).join(' ');
    const color = PALETTE[i % PALETTE.length]!;
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${d}"><title>${escapeXml(s.name)}</title></polyline>`);
    const lx = MARGIN.left + (i % 3) * ((width - MARGIN.left) / 3);
    const ly = height - legendPx + LEGEND_ROW_PX * Math.floor(i / 3) + 4;
    parts.push(`<rect x="${lx}" y="${ly}" width="14" height="4" fill="${color}"/><text x="${lx + 20}" y="${ly + 6}" font-size="12">${escapeXml(s.name)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}

function axes(o: ChartOptions, xs: Scale, ys: Scale, width: number, plotBottom: number): string {
  const out: string[] = [`<g font-size="11" fill="#333" stroke="none">`];
  for (const t of ys.ticks) {
    const y = ys.to(t.value).toFixed(1);
    out.push(`<line x1="${MARGIN.left}" x2="${width - MARGIN.right}" y1="${y}" y2="${y}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${MARGIN.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${escapeXml(t.label)}</text>`);
  }
  for (const t of xs.ticks) {
    const x = xs.to(t.value).toFixed(1);
    out.push(`<line x1="${x}" x2="${x}" y1="${MARGIN.top}" y2="${plotBottom}" stroke="#f0f0f0"/>`);
    out.push(`<text x="${x}" y="${plotBottom + 16}" text-anchor="middle">${escapeXml(t.label)}</text>`);
  }
  out.push(`<line x1="${MARGIN.left}" x2="${width - MARGIN.right}" y1="${plotBottom}" y2="${plotBottom}" stroke="#333"/>`);
  out.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${plotBottom}" stroke="#333"/>`);
  out.push(`<text x="${(MARGIN.left + width - MARGIN.right) / 2}" y="${plotBottom + 34}" text-anchor="middle">${escapeXml(o.xLabel)}</text>`);
  const midY = (MARGIN.top + plotBottom) / 2;
  out.push(`<text x="14" y="${midY}" text-anchor="middle" transform="rotate(-90 14 ${midY})">${escapeXml(o.yLabel)}</text>`);
  out.push('</g>');
  return out.join('');
}
