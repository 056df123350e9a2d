// A strict reader of the Prometheus text exposition format (0.0.4) for
// tests: every line is a HELP or TYPE comment or a sample of a declared
// family (histograms: _bucket/_sum/_count; counters may carry _total), label
// values are quoted with escapes, values are floats (or Inf/NaN in any case, as Go reads them).
// Anything else throws, naming the line — so "parses as Prometheus text" can fail.

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Exposition {
  readonly types: ReadonlyMap<string, string>;
  readonly samples: readonly Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, line: string): number {
  // Prometheus reads values with Go's ParseFloat: Inf and NaN in any case (prom-client writes 'Nan').
  const lower = text.toLowerCase();
  if (lower === '+inf' || lower === 'inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  if (lower === 'nan') return NaN;
  const v = Number(text);
  if (text === '' || Number.isNaN(v)) throw new Error(`bad sample value in: ${line}`);
  return v;
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const re = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;
  let pos = 0;
  while (pos < text.length) {
    re.lastIndex = pos;
    const m = re.exec(text);
    if (!m) throw new Error(`bad labels in: ${line}`);
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    pos = re.lastIndex;
  }
  return labels;
}

function familyOf(name: string, types: ReadonlyMap<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of ['_bucket', '_sum', '_count', '_total']) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const type = types.get(base);
    if (type === 'histogram' || type === 'summary' || (type === 'counter' && suffix === '_total')) return base;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!m || !NAME.test(m[2]!)) throw new Error(`bad comment line: ${line}`);
      if (m[1] === 'TYPE') {
        if (!TYPES.has(m[3] ?? '')) throw new Error(`bad type in: ${line}`);
        types.set(m[2]!, m[3]!);
      }
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    if (!familyOf(m[1]!, types)) throw new Error(`sample of an undeclared family: ${line}`);
    samples.push({ name: m[1]!, labels: parseLabels(m[2] ?? '', line), value: parseValue(m[3]!, line) });
  }
  return { types, samples };
}

/** The value of the sample `name` whose labels include `labels` (undefined if none). */
export function sampleValue(e: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const s = e.samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return s?.value;
}
