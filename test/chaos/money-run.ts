// One tx_money chaos round (issue 18), and the `make chaos-money` entry point:
//
//   cluster (proxy + real `sluice server` processes) → money and audit topics
//   → the tx_money workload (money-workload.ts) → coordinator, leader and
//   controller kills for N seconds (money-nemesis.ts) → heal → transfers
//   stopped, the audit stage drained → settle and final state
//   (money-final.ts) → the money checker → history and summary in the run dir.
//
// Usage: node dist/test/chaos/money-run.js [--seconds 300] [--seed x] [--rounds N] [--out DIR]
// Round r runs seed+r. A failed round prints the seed, the fault schedule
// and the history's path, keeps its run dir, and the process exits 1.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '../../src/index.js';
import { SeededRng } from '../../src/util/rng.js';
import { waitFor } from '../integration/harness.js';
import { ChaosCluster, type Profile } from './cluster.js';
import { checkMoney, summarizeMoney, type MoneyCheckStats } from './money-checker.js';
import { collectMoneyFinal } from './money-final.js';
import type { MoneyEntry } from './money-history.js';
import { MoneyNemesis, formatMoneyPlan, planMoneyFaults, type MoneyFault } from './money-nemesis.js';
import { MoneyWorkload, type MoneyCounts, type MoneyEnv, type MoneyOptions } from './money-workload.js';
import { seedFrom } from './run.js';

export interface MoneyRoundOptions {
  readonly seed: number;
  readonly seconds: number;
  readonly profile?: Profile;
  readonly dir?: string;
  readonly workload?: MoneyOptions;
  readonly log?: (line: string) => void;
}

export interface MoneyRoundResult {
  readonly seed: number;
  readonly dir: string;
  readonly historyPath: string;
  readonly plan: readonly MoneyFault[];
  readonly anomalies: ReadonlyArray<{ readonly type: string; readonly detail: string }>;
  readonly error: string | null;
  readonly crashes: readonly string[];
  readonly stats: MoneyCheckStats | null;
  readonly workload: MoneyCounts | null;
  readonly faultsInjected: number;
  readonly faults: Readonly<Record<string, number>>;
  readonly summary: readonly string[];
  readonly durationMs: number;
}

/**
 * The coordinator's internal topic sized for a 2-core loopback cluster (as
 * the chaos cluster does __consumer_offsets), RF 3 and min ISR 2 as Kafka's
 * defaults; coordinator retries and timeouts short enough for a round.
 */
export const MONEY_BROKER_CONFIG: Readonly<Record<string, string>> = {
  'transaction.state.log.num.partitions': '6',
  'transaction.state.log.replication.factor': '3',
  'transaction.state.log.min.isr': '2',
  'transaction.abort.timed.out.transaction.cleanup.interval.ms': '1000',
};

const CLUSTER_UP_MS = 60_000;
const SETUP_TIMEOUT_MS = 60_000;
const RECOVERY_MS = 5_000;
/** How long the audit stage may take to catch up once the transfers stopped. */
const DRAIN_MS = 30_000;
const SETTLE_TIMEOUT_MS = 120_000;
const TOPIC_CONFIGS = { 'min.insync.replicas': '2' } as const;

export async function runMoneyRound(o: MoneyRoundOptions): Promise<MoneyRoundResult> {
  const started = performance.now();
  const log = o.log ?? (() => undefined);
  const dir = o.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-money-'));
  fs.mkdirSync(dir, { recursive: true });
  const historyPath = path.join(dir, 'history.jsonl');
  const history: MoneyEntry[] = [];
  const notes: string[] = [];
  const clock = (): number => Math.round((performance.now() - started) * 10) / 10;
  const record = (e: MoneyEntry): void => {
    history.push(e);
  };
  const plan = planMoneyFaults(o.seed, o.seconds);
  log(`money round seed ${o.seed}: ${o.seconds} s of faults, run dir ${dir}`);
  const cluster = await ChaosCluster.start({ profile: o.profile ?? 'combined', root: path.join(dir, 'cluster'), extraConfig: MONEY_BROKER_CONFIG });
  let workload: MoneyWorkload | null = null;
  let nemesis: MoneyNemesis | null = null;
  let error: string | null = null;
  let result: ReturnType<typeof checkMoney> | null = null;
  try {
    await cluster.waitReady(CLUSTER_UP_MS);
    const env: MoneyEnv = {
      now: clock, record,
      client: (_host, clientId) => new Client({
        bootstrap: cluster.bootstrap, clientId, requestTimeoutMs: 10_000, connectTimeoutMs: 3_000, metadataMaxAgeMs: 5_000,
        retry: { retries: 5, initialRetryTimeMs: 100, maxRetryTimeMs: 1_000 },
      }),
      sleep: (_host, ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
      monotonicMs: () => performance.now(),
      note: (line) => notes.push(`${clock()} ${line}`),
    };
    const w = (workload = new MoneyWorkload(env, new SeededRng(o.seed), { prefix: `tm${o.seed % 10_000}`, ...o.workload }));
    await createTopics(cluster, w);
    w.start();
    log(`cluster up, workload running (${w.transactionalIds().length} transactional ids)`);
    nemesis = new MoneyNemesis({ cluster, transactionalIds: w.transactionalIds(), topic: w.topic, record, clock, log });
    await nemesis.run(plan, o.seconds);
    log(`faults over (${nemesis.faultsInjected} injected); healing`);
    cluster.proxy.heal();
    cluster.reviveAll();
    await new Promise((resolve) => setTimeout(resolve, RECOVERY_MS));
    await w.stopTransfers();
    await waitFor('the audit stage to catch up', async () => w.caughtUp(), { timeoutMs: DRAIN_MS, intervalMs: 200 }).catch(() => log('the audit stage did not catch up: checking up to its committed offsets'));
    await w.stop();
    log(`workload stopped: ${JSON.stringify(w.counts)}`);
    const final = await collectMoneyFinal(cluster, w.partitions(), { timeoutMs: SETTLE_TIMEOUT_MS, auditGroup: w.auditGroup, inputTopic: w.topic });
    fs.writeFileSync(path.join(dir, 'final.json'), `${JSON.stringify(final)}\n`);
    result = checkMoney(history, final);
  } catch (err) {
    error = `${(err as Error).message} [${cluster.describeNodes()}]`;
    log(`round failed: ${error}`);
  } finally {
    await workload?.stop().catch(() => undefined);
    await cluster.cleanup();
    fs.writeFileSync(historyPath, history.map((e) => `${JSON.stringify(e)}\n`).join(''));
    fs.writeFileSync(path.join(dir, 'notes.txt'), notes.map((l) => `${l}\n`).join(''));
  }
  const r: MoneyRoundResult = {
    seed: o.seed, dir, historyPath, plan, anomalies: result?.anomalies ?? [], error, crashes: cluster.crashes(), stats: result?.stats ?? null,
    workload: workload?.counts ?? null, faultsInjected: nemesis?.faultsInjected ?? 0, faults: nemesis?.byKind ?? {},
    summary: result ? summarizeMoney(result) : [`not checked: ${error}`], durationMs: Math.round(performance.now() - started),
  };
  fs.writeFileSync(path.join(dir, 'summary.json'), `${JSON.stringify({ ...r, plan: formatMoneyPlan(plan).split('\n') }, null, 2)}\n`);
  if (!moneyFailed(r)) fs.rmSync(path.join(dir, 'cluster'), { recursive: true, force: true, maxRetries: 3 });
  return r;
}

async function createTopics(cluster: ChaosCluster, w: MoneyWorkload): Promise<void> {
  const client = new Client({ bootstrap: cluster.bootstrap, clientId: 'money-setup', requestTimeoutMs: 10_000 });
  try {
    const admin = client.admin();
    await admin.createTopics({ topics: w.topics().map((t) => ({ topic: t.topic, numPartitions: t.partitions, replicationFactor: 3, configs: TOPIC_CONFIGS })) });
    const names = w.topics().map((t) => t.topic);
    await waitFor('money topics with full ISRs', async () => {
      const d = await admin.describeTopics({ topics: names });
      return d.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0 && p.isr.length === 3));
    }, { timeoutMs: SETUP_TIMEOUT_MS, intervalMs: 200 });
  } finally {
    client.close();
  }
}

/**
 * An anomaly, an unchecked round, a crashed node, or a round that proves
 * nothing: no commit verified, no zombie refused, no input copied exactly once.
 */
export function moneyFailed(r: Pick<MoneyRoundResult, 'anomalies' | 'error' | 'crashes' | 'stats'>): boolean {
  return r.anomalies.length > 0 || r.error !== null || r.crashes.length > 0 || moneyUnchecked(r) !== null;
}

export function moneyUnchecked(r: Pick<MoneyRoundResult, 'error' | 'stats'>): string | null {
  if (r.error !== null || r.stats === null) return null;
  if (r.stats.commitsVerified === 0) return 'no committed transfer verified';
  if (r.stats.zombieTxns === 0) return 'no zombie transaction was tried';
  if (r.stats.eosInputsChecked === 0) return 'no input checked as copied exactly once';
  return null;
}

export function moneyReport(r: MoneyRoundResult): string[] {
  const bad = moneyFailed(r);
  const lines = [
    `${bad ? 'FAILED' : 'ok'}: money seed ${r.seed}, ${(r.durationMs / 1000).toFixed(0)} s, ${r.faultsInjected} faults injected (${Object.entries(r.faults).map(([k, n]) => `${k} ${n}`).join(', ')})`,
    ...r.summary.map((l) => `  ${l}`),
    ...r.crashes.map((c) => `  crash: ${c}`),
    ...[moneyUnchecked(r)].filter((x): x is string => x !== null).map((x) => `  not a pass: ${x}`),
  ];
  if (bad) lines.push(`  seed: ${r.seed}`, '  fault schedule:', formatMoneyPlan(r.plan), `  history: ${r.historyPath}`, `  run dir (node logs, data): ${r.dir}`);
  else lines.push(`  history: ${r.historyPath}`);
  return lines;
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { seconds: { type: 'string', default: '300' }, seed: { type: 'string' }, rounds: { type: 'string', default: '1' }, out: { type: 'string' } },
  });
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  if (!(seconds > 0 && Number.isInteger(rounds) && rounds > 0)) throw new Error('--seconds and --rounds must be positive');
  const base = values.seed === undefined || values.seed === '' ? (Date.now() % 1_000_000) : seedFrom(values.seed);
  const root = values.out ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-money-'));
  const log = (line: string): void => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
  let failures = 0;
  for (let r = 0; r < rounds; r++) {
    const result = await runMoneyRound({ seed: (base + r) >>> 0, seconds, dir: path.join(root, `round-${r + 1}`), log });
    for (const line of moneyReport(result)) console.log(line);
    if (moneyFailed(result)) failures++;
  }
  console.log(`${rounds} round(s), ${failures} failed; results under ${root}`);
  return failures > 0 ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
  main(process.argv.slice(2)).then((code) => process.exit(code), (err: unknown) => {
    console.error(`chaos-money: ${(err as Error).message}`);
    process.exit(2);
  });
}
