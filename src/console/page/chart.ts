// Hand-drawn SVG line charts for the console's live throughput and lag: one
// polyline per series over the last `windowSec` seconds, a y axis from 0 to
// the largest value seen in the window, and a legend. No library: the charts
// are a few dozen lines and redrawn whole on every sample.

import { h, svg } from './dom.js';
import type { Series } from './model.js';

const WIDTH = 640;
const HEIGHT = 200;
const PAD = { left: 56, right: 12, top: 12, bottom: 24 };
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function label(v: number): string {
  return v >= 1000 ? `${(v / 1000).toFixed(v >= 10_000 ? 0 : 1)}k` : v >= 10 || v === 0 ? v.toFixed(0) : v.toFixed(1);
}

export function lineChart(opts: { id: string; title: string; unit: string; windowSec: number; series: readonly Series[] }): HTMLElement {
  const inWindow = opts.series.map((s) => ({ ...s, points: s.points.filter(([t]) => t >= -opts.windowSec) }));
  const max = niceMax(Math.max(0, ...inWindow.flatMap((s) => s.points.map(([, v]) => v))));
  const x = (t: number) => PAD.left + ((t + opts.windowSec) / opts.windowSec) * (WIDTH - PAD.left - PAD.right);
  const y = (v: number) => HEIGHT - PAD.bottom - (v / max) * (HEIGHT - PAD.top - PAD.bottom);
  const grid = [0, max / 2, max].map((v) => [
    svg('line', { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(v), y2: y(v), class: 'grid' }),
    svg('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' }, label(v)),
  ]).flat();
  const xLabels = [-opts.windowSec, -opts.windowSec / 2, 0].map((t) => svg('text', { x: x(t), y: HEIGHT - 6, 'text-anchor': 'middle', class: 'axis' }, t === 0 ? 'now' : `${t}s`));
  const lines = inWindow.map((s, i) => svg('polyline', {
    points: s.points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' '),
    fill: 'none', stroke: COLORS[i % COLORS.length]!, 'stroke-width': 2, 'data-series': s.name,
  }));
  const legend = h('ul', { class: 'legend' }, ...inWindow.map((s, i) => {
    const last = s.points[s.points.length - 1];
    return h('li', { 'data-series': s.name },
      h('span', { class: 'swatch', style: `background:${COLORS[i % COLORS.length]}` }),
      `${s.name}: ${last ? label(last[1]) : '–'} ${opts.unit}`);
  }));
  return h('figure', { class: 'chart', id: opts.id },
    h('figcaption', {}, opts.title),
    svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, role: 'img', 'aria-label': opts.title }, ...grid, ...xLabels, ...lines) as unknown as Node,
    inWindow.length === 0 ? h('p', { class: 'muted' }, 'no data yet') : legend);
}
