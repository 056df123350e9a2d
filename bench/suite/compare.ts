// `node dist/bench/suite/compare.js [--profile quick|full] [--systems sluice,nats,redis,kafka] [--out DIR]`
// (also `sluice bench compare`): runs the suite, writes DIR/results-<time>.json,
// .md and .html (DIR default bench-results/), prints the Markdown report and
// the paths on stdout; progress goes to stderr.
//
// Overrides for a custom size: --records N, --seconds S, --rates R1,R2,
// --e2e-seconds S, --e2e-warmup-seconds S, --parallel N (0 leaves out the parallel produce and the
// group consume), --only KEY,KEY (just those deployments, e.g. kafka-r1,sluice-rf3-client;
// `perf-tools` among them selects the perf-tool section: `--only perf-tools` runs it alone),
// --perf-tools on|off (Kafka's perf tools on Sluice's Kafka listener and on Kafka R3, same
// flags; default on when both sluice and kafka are selected and --only is not given),
// --perf-records N (records per perf-tool run). `--render FILE.json` runs nothing: it writes the .md and
// .html of an earlier results file next to it (after a report change).
// Exit code: 0 when every workload ran, 1 when one failed (a missed target
// is not a failure: the report says so), 2 for bad flags.
import fs from 'node:fs';
import path from 'node:path';
import { isMain } from '../cli-args.js';
import { renderHtml } from './report-html.js';
import { renderMarkdown } from './report-md.js';
import { DEPLOYMENT_KEYS, PROFILES, SYSTEM_FILTERS, type DeploymentKey, type Profile, type ProfileName, type SuiteResults, type SystemFilter } from './results.js';
import { runSuite } from './runner.js';

export const DEFAULT_OUT_DIR = 'bench-results';
/** The perf-tool section's name in --only. */
export const PERF_TOOLS_KEY = 'perf-tools';

export interface CompareArgs {
  readonly profile: Profile;
  readonly systems: readonly SystemFilter[];
  readonly outDir: string;
  /** A results JSON to re-render instead of running. */
  readonly render?: string;
  /** Only these deployments (null: all of the selected systems). */
  readonly only: readonly DeploymentKey[] | null;
  readonly perfTools: boolean;
}

class UsageError extends Error {}

const FLAGS = new Set(['--profile', '--systems', '--out', '--records', '--seconds', '--rates', '--e2e-seconds', '--e2e-warmup-seconds', '--parallel', '--render', '--only', '--perf-tools', '--perf-records']);

/** Parses the flags (each `--name value` or `--name=value`); throws UsageError naming the problem. */
export function parseCompareArgs(argv: readonly string[]): CompareArgs {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    if (!FLAGS.has(name)) throw new UsageError(`unknown argument ${argv[i]}; known: ${[...FLAGS].join(', ')}`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new UsageError(`${name} needs a value`);
    values.set(name, value);
  }
  const profileName = values.get('--profile') ?? 'quick';
  if (!Object.hasOwn(PROFILES, profileName)) throw new UsageError(`--profile must be one of ${Object.keys(PROFILES).join(', ')}`);
  const systems = (values.get('--systems') ?? SYSTEM_FILTERS.join(',')).split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  const bad = systems.filter((s) => !(SYSTEM_FILTERS as readonly string[]).includes(s));
  if (bad.length > 0 || systems.length === 0) throw new UsageError(`--systems takes a list of ${SYSTEM_FILTERS.join(', ')}`);
  const count = (flag: string, min: number): number | undefined => {
    const v = values.get(flag);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!(Number.isSafeInteger(n) && n >= min)) throw new UsageError(`${flag} must be an integer >= ${min}`);
    return n;
  };
  const rates = values.get('--rates')?.split(',').map((r) => Number(r));
  if (rates && !rates.every((r) => Number.isSafeInteger(r) && r > 0)) throw new UsageError('--rates takes positive integers, comma-separated');
  const base = PROFILES[profileName as ProfileName];
  const profile: Profile = {
    ...base,
    records: count('--records', 1) ?? base.records,
    seconds: count('--seconds', 1) ?? base.seconds,
    e2eSeconds: count('--e2e-seconds', 1) ?? base.e2eSeconds,
    e2eWarmupSeconds: count('--e2e-warmup-seconds', 0) ?? base.e2eWarmupSeconds ?? 0,
    parallel: count('--parallel', 0) ?? base.parallel,
    e2eRates: rates ?? base.e2eRates,
    perfToolRecords: count('--perf-records', 1) ?? base.perfToolRecords ?? base.records,
  };
  const onlyText = values.get('--only');
  const onlyList = (onlyText ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  const unknown = onlyList.filter((k) => k !== PERF_TOOLS_KEY && !(DEPLOYMENT_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0 || (onlyText !== undefined && onlyList.length === 0)) {
    throw new UsageError(`--only takes deployment keys (${DEPLOYMENT_KEYS.join(', ')}) and ${PERF_TOOLS_KEY}; unknown: ${unknown.join(', ')}`);
  }
  const only = onlyText === undefined ? null : onlyList.filter((k) => k !== PERF_TOOLS_KEY) as DeploymentKey[];
  const perf = values.get('--perf-tools');
  if (perf !== undefined && perf !== 'on' && perf !== 'off') throw new UsageError('--perf-tools must be on or off');
  const perfTools = perf !== undefined ? perf === 'on'
    : onlyText !== undefined ? onlyList.includes(PERF_TOOLS_KEY) : systems.includes('sluice') && systems.includes('kafka');
  const render = values.get('--render');
  return {
    profile, systems: systems as SystemFilter[], outDir: values.get('--out') ?? DEFAULT_OUT_DIR, ...(render !== undefined ? { render } : {}),
    only, perfTools,
  };
}

/** Writes the three files; their paths. */
export function writeReports(r: SuiteResults, outDir: string): { json: string; md: string; html: string } {
  fs.mkdirSync(outDir, { recursive: true });
  const stamp = r.startedAt.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
  const file = (ext: string): string => path.join(outDir, `results-${stamp}.${ext}`);
  const out = { json: file('json'), md: file('md'), html: file('html') };
  fs.writeFileSync(out.json, `${JSON.stringify(r, null, 2)}\n`);
  fs.writeFileSync(out.md, renderMarkdown(r));
  fs.writeFileSync(out.html, renderHtml(r));
  return out;
}

export async function main(argv: readonly string[]): Promise<number> {
  let args: CompareArgs;
  try {
    args = parseCompareArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench compare: ${err.message}\n`);
    return 2;
  }
  if (args.render !== undefined) {
    const results = JSON.parse(fs.readFileSync(args.render, 'utf8')) as SuiteResults;
    const base = args.render.replace(/\.json$/, '');
    fs.writeFileSync(`${base}.md`, renderMarkdown(results));
    fs.writeFileSync(`${base}.html`, renderHtml(results));
    process.stdout.write(`${renderMarkdown(results)}\nReport:  ${base}.md\nHTML:    ${base}.html\n`);
    return 0;
  }
  const results = await runSuite({ profile: args.profile, systems: args.systems, ...(args.only !== null ? { only: args.only } : {}), perfTools: args.perfTools });
  const files = writeReports(results, args.outDir);
  process.stdout.write(`${renderMarkdown(results)}\nResults: ${files.json}\nReport:  ${files.md}\nHTML:    ${files.html}\n`);
  if (results.failures > 0) process.stderr.write(`bench compare: ${results.failures} workload(s) failed (see the report)\n`);
  return results.failures > 0 ? 1 : 0;
}

if (isMain(import.meta.url)) {
  // Ctrl-C or SIGTERM: exit through process.exit so the harnesses' exit hooks SIGKILL every server started.
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench compare: ${signal}, stopping the servers\n`);
      process.exit(code);
    });
  }
  // Exit explicitly: a peer client's socket left half-closed must not keep the finished run alive.
  process.exit(await main(process.argv.slice(2)));
}
