// One chaos round, and the `make chaos` entry point:
//
//   cluster (proxy + processes) → workload topics → workload running →
//   nemesis for N seconds → heal → workload stopped → settle and final state
//   → checker → history and summary in the run dir.
//
// Usage: node dist/test/chaos/run.js [--seconds 600] [--seed x]
//          [--profile combined|with-brokers] [--rounds N] [--out DIR] [--rate R]
// Round r runs seed+r; without --profile the rounds alternate between the
// two profiles. On an anomaly (or a cluster that does not settle) it prints
// the seed, the fault schedule and the history's path, keeps the run dir, and
// exits 1. A clean round keeps the history, summary and node logs, and drops
// the nodes' data dirs.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SeededRng } from '../../src/util/rng.js';
import { check, type CheckStats } from './checker.js';
import { ChaosCluster, PROFILES, type Profile } from './cluster.js';
import { collectFinal } from './final.js';
import { HistoryWriter, readHistory, summarize } from './history-file.js';
import type { Anomaly, HistoryEntry } from './history.js';
import { Nemesis, formatSchedule, planSchedule, type PlannedFault } from './nemesis.js';
import { Workload, type WorkloadCounts, type WorkloadOptions } from './workload.js';

export interface RoundOptions {
  readonly seed: number;
  readonly seconds: number;
  readonly profile: Profile;
  /** The run dir (created); default a new dir under os.tmpdir(). */
  readonly dir?: string;
  /** Records/s per producer. */
  readonly rate?: number;
  readonly workload?: Partial<Pick<WorkloadOptions, 'topics' | 'partitionsPerTopic' | 'producers' | 'groups' | 'membersPerGroup'>>;
  /** Healing, settling and the final reads. */
  readonly settleTimeoutMs?: number;
  /** The workload goes on this long on the healed cluster before it stops. */
  readonly recoveryMs?: number;
  readonly log?: (line: string) => void;
}

export interface RoundResult {
  readonly seed: number;
  readonly profile: Profile;
  readonly dir: string;
  readonly historyPath: string;
  readonly plan: readonly PlannedFault[];
  readonly anomalies: readonly Anomaly[];
  /** Set when the round could not be checked (e.g. the cluster did not settle): a failure too. */
  readonly error: string | null;
  /** Node processes that exited by themselves: a failure too. */
  readonly crashes: readonly string[];
  readonly stats: CheckStats | null;
  readonly workload: WorkloadCounts | null;
  readonly faultsInjected: number;
  readonly faults: Readonly<Record<string, number>>;
  readonly summary: readonly string[];
  readonly durationMs: number;
}

const SETTLE_TIMEOUT_MS = 120_000;
const RECOVERY_MS = 5_000;
const CLUSTER_UP_MS = 60_000;

/** Seeds given as text (e.g. a commit hash) map to a number. */
export function seedFrom(text: string): number {
  if (/^\d+$/.test(text)) return Number(text) >>> 0;
  let h = 0x811c9dc5;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

export async function runRound(o: RoundOptions): Promise<RoundResult> {
  const started = performance.now();
  const log = o.log ?? (() => undefined);
  const dir = o.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-chaos-'));
  fs.mkdirSync(dir, { recursive: true });
  const historyPath = path.join(dir, 'history.jsonl');
  const history = new HistoryWriter(historyPath);
  let recordError: Error | null = null;
  const record = (e: HistoryEntry): void => {
    try {
      history.record(e);
    } catch (err) {
      recordError ??= err as Error;
    }
  };
  const faults: Record<string, number> = {};
  const recordCounting = (e: HistoryEntry): void => {
    if (e.kind === 'fault') faults[e.fault] = (faults[e.fault] ?? 0) + 1;
    record(e);
  };
  const clock = (): number => Math.round((performance.now() - started) * 10) / 10;
  const plan = planSchedule(o.seed, o.seconds, o.profile);
  log(`round seed ${o.seed} profile ${o.profile}: ${o.seconds} s of faults, run dir ${dir}`);
  const cluster = await ChaosCluster.start({ profile: o.profile, root: path.join(dir, 'cluster') });
  let workload: Workload | null = null;
  let nemesis: Nemesis | null = null;
  let error: string | null = null;
  let result: ReturnType<typeof check> | null = null;
  try {
    await cluster.waitReady(CLUSTER_UP_MS);
    const rng = new SeededRng(o.seed);
    workload = new Workload({
      bootstrap: cluster.bootstrap, clock, record, rng: rng.fork(), prefix: `chaos${o.seed % 10_000}`,
      ...o.workload, ...(o.rate === undefined ? {} : { producer: { ratePerSecond: o.rate } }),
    });
    await workload.setup();
    workload.start();
    log(`cluster up, workload running (${workload.partitions().length} partitions)`);
    nemesis = new Nemesis({ cluster, workload, record: recordCounting, clock, log });
    await nemesis.run(plan, o.seconds);
    log(`faults over (${nemesis.faultsInjected} injected); healing`);
    cluster.proxy.heal();
    cluster.reviveAll();
    await new Promise((resolve) => setTimeout(resolve, o.recoveryMs ?? RECOVERY_MS));
    await workload.stop();
    log(`workload stopped: ${JSON.stringify(workload.stats())}`);
    const final = await collectFinal(cluster, workload.partitions(), { timeoutMs: o.settleTimeoutMs ?? SETTLE_TIMEOUT_MS });
    fs.writeFileSync(path.join(dir, 'final.json'), `${JSON.stringify(final)}\n`);
    await history.close();
    if (recordError) throw recordError;
    result = check(readHistory(historyPath), final);
  } catch (err) {
    error = `${(err as Error).message} [${cluster.describeNodes()}]`;
    log(`round failed: ${error}`);
  } finally {
    await workload?.stop().catch(() => undefined);
    await cluster.cleanup();
    await history.close().catch(() => undefined);
  }
  const anomalies = result?.anomalies ?? [];
  const crashes = cluster.crashes();
  const summary = result ? summarize(result) : [`not checked: ${error}`];
  const round: RoundResult = {
    seed: o.seed, profile: o.profile, dir, historyPath, plan, anomalies, error, crashes, stats: result?.stats ?? null,
    workload: workload?.stats() ?? null, faultsInjected: nemesis?.faultsInjected ?? 0, faults, summary,
    durationMs: Math.round(performance.now() - started),
  };
  fs.writeFileSync(path.join(dir, 'summary.json'), `${JSON.stringify({ ...round, plan: formatSchedule(plan).split('\n') }, null, 2)}\n`);
  if (!failed(round)) fs.rmSync(path.join(dir, 'cluster'), { recursive: true, force: true, maxRetries: 3 });
  return round;
}

/**
 * An anomaly, a round that could not be checked, a node that crashed, or a
 * round whose checker verified no acknowledged write at its offset: a round
 * in which nothing was acknowledged (or nothing acknowledged was found where
 * checked) proves nothing, and must not pass as green.
 */
export function failed(r: Pick<RoundResult, 'anomalies' | 'error' | 'crashes' | 'stats'>): boolean {
  return r.anomalies.length > 0 || r.error !== null || r.crashes.length > 0 || uncheckedReason(r) !== null;
}

/** Why a checked round proves nothing (null when it checked acknowledged writes). */
export function uncheckedReason(r: Pick<RoundResult, 'error' | 'stats'>): string | null {
  if (r.error !== null || r.stats === null) return null;
  return r.stats.acksChecked > 0 ? null : `the checker checked no acknowledged write (${r.stats.sendsOk} sends ok)`;
}

/** The lines printed for a round. */
export function report(r: RoundResult): string[] {
  const bad = failed(r);
  const lines = [
    `${bad ? 'FAILED' : 'ok'}: seed ${r.seed}, profile ${r.profile}, ${(r.durationMs / 1000).toFixed(0)} s, ` +
      `${r.faultsInjected} faults injected (${Object.entries(r.faults).map(([k, n]) => `${k} ${n}`).join(', ')})`,
    ...r.summary.map((l) => `  ${l}`),
    ...r.crashes.map((c) => `  crash: ${c}`),
    ...[uncheckedReason(r)].filter((x): x is string => x !== null).map((x) => `  not a pass: ${x}`),
  ];
  if (bad) {
    lines.push(`  seed: ${r.seed}`, '  fault schedule:', formatSchedule(r.plan), `  history: ${r.historyPath}`, `  run dir (node logs, data): ${r.dir}`);
  } else {
    lines.push(`  history: ${r.historyPath}`);
  }
  return lines;
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '600' },
      seed: { type: 'string' },
      profile: { type: 'string' },
      rounds: { type: 'string', default: '1' },
      out: { type: 'string' },
      rate: { type: 'string' },
    },
  });
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  if (!(seconds > 0 && Number.isInteger(rounds) && rounds > 0)) throw new Error('--seconds and --rounds must be positive');
  if (values.profile !== undefined && !PROFILES.includes(values.profile as Profile)) throw new Error(`--profile must be one of ${PROFILES.join(', ')}`);
  const base = values.seed === undefined || values.seed === '' ? (Date.now() % 1_000_000) : seedFrom(values.seed);
  const root = values.out ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-chaos-'));
  const log = (line: string): void => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
  let failures = 0;
  for (let r = 0; r < rounds; r++) {
    const profile = (values.profile as Profile | undefined) ?? PROFILES[r % PROFILES.length]!;
    const result = await runRound({
      seed: (base + r) >>> 0, seconds, profile, dir: path.join(root, `round-${r + 1}`), log,
      ...(values.rate === undefined ? {} : { rate: Number(values.rate) }),
    });
    for (const line of report(result)) console.log(line);
    if (failed(result)) failures++;
  }
  console.log(`${rounds} round(s), ${failures} failed; results under ${root}`);
  return failures > 0 ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // The cluster module kills every node on exit; a signal must go through exit too.
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
  main(process.argv.slice(2)).then((code) => process.exit(code), (err: unknown) => {
    console.error(`chaos: ${(err as Error).message}`);
    process.exit(2);
  });
}
