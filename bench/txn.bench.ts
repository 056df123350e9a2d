// What transactions cost, through the client users call (issue 18). One
// 3-node cluster of combined `sluice server` processes on loopback, RF=3,
// acks=all, min.insync.replicas 2, 100-byte values; in one run:
//   (a) baseline: the idempotent, non-transactional Producer sends K records
//       per unit (one send() of K records, awaited);
//   (b) the same units, each in a transaction: transaction(), send(K), commit()
//       — records/s and commit() latency (p50/p99/max), for each K and to a
//       topic of 1 and of 3 partitions (the K records spread over the three,
//       so each transaction spans 3 partitions);
//   (c) read-process-write: a read_committed Consumer in a group copies a
//       committed topic to another, each fetched chunk in one transaction
//       with sendOffsets (the exactly-once copy), records/s end to end; the
//       copy is then read back read_committed and must hold every record;
//   (d) read_committed vs read_uncommitted consume throughput over the same
//       committed data (a fresh group reading from the beginning).
// Baseline and transactional cases run back to back per (K, partitions), so
// a load change on a shared machine hits both; ratios are transactional /
// baseline. Every loop is bounded by --units and by --seconds per case;
// the cluster's processes are killed by PID at the end.
//
// Run: nice -n 19 node dist/bench/txn.bench.js [--units N] [--seconds S] [--k 1,100,1000] [--json]

import * as hdr from 'hdr-histogram-js';
import { randomBytes } from 'node:crypto';
import { argValue, isMain } from './cli-args.js';
import { ProcessCluster, waitFor } from '../test/integration/harness.js';
import { Client, type Producer } from '../src/index.js';

export interface TxnBenchOptions {
  /** Units (send calls / transactions) per case at most. */
  readonly units: number;
  /** Wall-clock cap per case, seconds. */
  readonly seconds: number;
  /** Records per unit, one case each. */
  readonly ks: readonly number[];
  readonly partitions: readonly number[];
  readonly valueBytes: number;
  /** Transactions of the read-process-write copy at most. */
  readonly copyTransactions: number;
  readonly log: (line: string) => void;
}

export const DEFAULT_TXN_BENCH: TxnBenchOptions = {
  units: 2_000,
  seconds: 10,
  ks: [1, 100, 1000],
  partitions: [1, 3],
  valueBytes: 100,
  copyTransactions: 2_000,
  log: (line) => process.stderr.write(`${line}\n`),
};

const RUN_TIMEOUT_MS = 120_000;

export interface Latency { readonly p50Ms: number; readonly p99Ms: number; readonly maxMs: number }

export interface ProduceRow {
  readonly k: number;
  readonly partitions: number;
  readonly baseline: { readonly units: number; readonly recordsPerS: number; readonly unitLatency: Latency };
  readonly txn: { readonly units: number; readonly recordsPerS: number; readonly unitLatency: Latency; readonly commitLatency: Latency };
  /** txn records/s ÷ baseline records/s. */
  readonly ratio: number;
}

export interface CopyResult {
  readonly input: string;
  readonly transactions: number;
  readonly records: number;
  readonly seconds: number;
  readonly recordsPerS: number;
  readonly commitLatency: Latency;
  /** Records a read_committed read of the output found (must equal `records`). */
  readonly outputRecords: number;
}

export interface ConsumeRow {
  readonly topic: string;
  readonly records: number;
  readonly transactions: number;
  readonly readCommittedPerS: number;
  readonly readUncommittedPerS: number;
  /** read_committed ÷ read_uncommitted. */
  readonly ratio: number;
}

export interface TxnBenchResult {
  readonly produce: ProduceRow[];
  readonly copy: CopyResult;
  readonly consume: ConsumeRow[];
}

const histogram = (): hdr.Histogram => hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
const record = (h: hdr.Histogram, t0: number): void => h.recordValue(Math.max(1, Math.round((performance.now() - t0) * 1000)));
const ms = (us: number): number => Math.round(us / 10) / 100;
const latency = (h: hdr.Histogram): Latency => ({ p50Ms: ms(h.getValueAtPercentile(50)), p99Ms: ms(h.getValueAtPercentile(99)), maxMs: ms(h.maxValue) });

/** K messages, round-robin over the partitions (explicit: the sticky partitioner would put them all on one). */
function unitMessages(k: number, partitions: number, values: readonly Buffer[], unit: number): Array<{ value: Buffer; partition: number }> {
  return Array.from({ length: k }, (_, i) => ({ value: values[(unit * k + i) & 1023]!, partition: i % partitions }));
}

interface Loop { readonly units: number; readonly seconds: number; readonly unitLatency: hdr.Histogram }

/** Runs `unit(i)` until `units` ran or `seconds` passed; one warm-up unit first, not counted. */
async function timedUnits(o: TxnBenchOptions, unit: (i: number) => Promise<void>): Promise<Loop> {
  await unit(-1);
  const h = histogram();
  const start = performance.now();
  const deadline = start + o.seconds * 1000;
  let n = 0;
  while (n < o.units && performance.now() < deadline) {
    const t0 = performance.now();
    await unit(n++);
    record(h, t0);
  }
  return { units: n, seconds: (performance.now() - start) / 1000, unitLatency: h };
}

async function produceCase(client: Client, k: number, partitions: number, o: TxnBenchOptions, values: readonly Buffer[]): Promise<ProduceRow> {
  const baseTopic = `base-k${k}-p${partitions}`;
  const txnTopic = `txn-k${k}-p${partitions}`;
  const base = client.producer({ acks: -1, idempotent: true });
  let b: Loop;
  try {
    b = await timedUnits(o, async (i) => { await base.send({ topic: baseTopic, messages: unitMessages(k, partitions, values, i) }); });
  } finally {
    await base.close();
  }
  const producer: Producer = client.producer({ transactionalId: `bench-${txnTopic}`, acks: -1 });
  const commits = histogram();
  let t: Loop;
  try {
    await producer.initTransactions();
    t = await timedUnits(o, async (i) => {
      const tx = await producer.transaction();
      await tx.send({ topic: txnTopic, messages: unitMessages(k, partitions, values, i) });
      const t0 = performance.now();
      await tx.commit();
      if (i >= 0) record(commits, t0);
    });
  } finally {
    await producer.close();
  }
  const perS = (l: Loop): number => Math.round((l.units * k) / l.seconds);
  return {
    k, partitions,
    baseline: { units: b.units, recordsPerS: perS(b), unitLatency: latency(b.unitLatency) },
    txn: { units: t.units, recordsPerS: perS(t), unitLatency: latency(t.unitLatency), commitLatency: latency(commits) },
    ratio: Math.round((perS(t) / perS(b)) * 1000) / 1000,
  };
}

/** Reads `topic` from the beginning with a fresh group until `records` arrived; records/s after the first chunk. */
async function consumeCount(client: Client, topic: string, records: number, isolationLevel: 'read_committed' | 'read_uncommitted'): Promise<{ perS: number; seen: number }> {
  const consumer = client.consumer({ groupId: `bench-read-${isolationLevel}-${topic}-${Date.now()}`, isolationLevel, autoOffsetReset: 'earliest', autoCommit: false });
  let seen = 0;
  // Timed from the end of the first chunk: the group's join (a second or so) is not read throughput.
  let firstSeen = 0;
  let t0 = 0;
  const subscribed = performance.now();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${isolationLevel} read of ${topic}: ${seen} of ${records} records in ${RUN_TIMEOUT_MS} ms`)), RUN_TIMEOUT_MS);
      consumer.on('crash', ({ error }) => { clearTimeout(timer); reject(error); });
      consumer.run({
        eachBatch: async ({ batch }) => {
          seen += batch.messages.length;
          if (t0 === 0) { t0 = performance.now(); firstSeen = seen; }
          if (seen >= records) { clearTimeout(timer); resolve(); }
        },
      }).catch((err: unknown) => { clearTimeout(timer); reject(err); });
    });
    const end = performance.now();
    // One chunk held everything: fall back to the time from subscribe (join included).
    const perS = seen > firstSeen ? (seen - firstSeen) / ((end - t0) / 1000) : seen / ((end - subscribed) / 1000);
    return { perS: Math.round(perS), seen };
  } finally {
    await consumer.close();
  }
}

/**
 * The exactly-once copy: each chunk the read_committed consumer hands over
 * becomes one transaction (send to the same partition of `output`,
 * sendOffsets with the consumer, commit). Stops after `copyTransactions`
 * transactions, `seconds`, or the whole input.
 */
async function copyCase(client: Client, input: string, inputRecords: number, output: string, o: TxnBenchOptions): Promise<CopyResult> {
  const consumer = client.consumer({ groupId: 'bench-copy', isolationLevel: 'read_committed', autoOffsetReset: 'earliest', autoCommit: false });
  const producer = client.producer({ transactionalId: 'bench-copy', acks: -1 });
  const commits = histogram();
  let transactions = 0;
  let copied = 0;
  let first = 0;
  let last = 0;
  let done = false;
  try {
    await producer.initTransactions();
    await consumer.subscribe({ topics: [input], fromBeginning: true });
    const deadline = performance.now() + o.seconds * 1000 + RUN_TIMEOUT_MS / 4; // the group's first join is not the copy's time
    await new Promise<void>((resolve, reject) => {
      const finish = (): void => { done = true; resolve(); };
      consumer.on('crash', ({ error }) => reject(error));
      consumer.run({
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch, resolveOffset }) => {
          if (done || batch.messages.length === 0) return;
          if (first === 0) first = performance.now();
          const tx = await producer.transaction();
          await tx.send({ topic: output, messages: batch.messages.map((m) => ({ value: m.value, partition: batch.partition })) });
          const next = batch.messages[batch.messages.length - 1]!.offset + 1;
          await tx.sendOffsets({ consumer, topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }] });
          const t0 = performance.now();
          await tx.commit();
          record(commits, t0);
          last = performance.now();
          resolveOffset(next - 1);
          transactions++;
          copied += batch.messages.length;
          const now = performance.now();
          if (copied >= inputRecords || transactions >= o.copyTransactions || now - first >= o.seconds * 1000 || now >= deadline) finish();
        },
      }).catch(reject);
    });
  } finally {
    await consumer.close();
    await producer.close();
  }
  const seconds = (last - first) / 1000;
  const check = await consumeCount(client, output, copied, 'read_committed');
  return {
    input, transactions, records: copied, seconds: Math.round(seconds * 100) / 100,
    recordsPerS: Math.round(copied / seconds), commitLatency: latency(commits), outputRecords: check.seen,
  };
}

async function consumeCase(client: Client, topic: string, records: number, transactions: number): Promise<ConsumeRow> {
  // Alternating order would be fairer still; one warm read first puts the segments in the page cache for both.
  await consumeCount(client, topic, records, 'read_uncommitted');
  const rc = await consumeCount(client, topic, records, 'read_committed');
  const ru = await consumeCount(client, topic, records, 'read_uncommitted');
  return { topic, records, transactions, readCommittedPerS: rc.perS, readUncommittedPerS: ru.perS, ratio: Math.round((rc.perS / ru.perS) * 1000) / 1000 };
}

export async function runTxnBench(opts: Partial<TxnBenchOptions> = {}): Promise<TxnBenchResult> {
  const o = { ...DEFAULT_TXN_BENCH, ...opts };
  const cluster = await ProcessCluster.create({ size: 3, brokers: true, logLevel: 'warn' });
  let client: Client | undefined;
  try {
    cluster.startAll();
    client = new Client({ bootstrap: cluster.brokerUrls.join(','), clientId: 'bench-txn' });
    const admin = client.admin();
    await waitFor('3 unfenced brokers', async () => (await admin.describeCluster()).brokers.filter((b) => !b.fenced).length === 3, { timeoutMs: 60_000, intervalMs: 200 });
    const configs = { 'min.insync.replicas': '2' };
    const topics = o.partitions.flatMap((p) => o.ks.flatMap((k) => [`base-k${k}-p${p}`, `txn-k${k}-p${p}`].map((topic) => ({ topic, numPartitions: p }))));
    const copyPartitions = Math.max(...o.partitions);
    await admin.createTopics({ topics: [...topics, { topic: 'copy-out', numPartitions: copyPartitions }].map((t) => ({ ...t, replicationFactor: 3, configs })) });
    const values = Array.from({ length: 1024 }, () => randomBytes(o.valueBytes));
    const produce: ProduceRow[] = [];
    for (const p of o.partitions) {
      for (const k of o.ks) {
        o.log(`txn: K=${k}, ${p} partition(s): baseline, then transactions`);
        produce.push(await produceCase(client, k, p, o, values));
      }
    }
    // Each case's topic holds the warm-up unit too.
    const held = (r: ProduceRow): number => (r.txn.units + 1) * r.k;
    const input = produce.filter((r) => r.partitions === copyPartitions).reduce((a, r) => (held(r) > held(a) ? r : a));
    o.log(`txn: exactly-once copy of txn-k${input.k}-p${copyPartitions} (${held(input)} records)`);
    const copy = await copyCase(client, `txn-k${input.k}-p${copyPartitions}`, held(input), 'copy-out', o);
    const consume: ConsumeRow[] = [];
    // The marker-heaviest data (one marker per partition per K=min records) and the largest.
    const reads = [...new Set([produce.find((r) => r.k === Math.min(...o.ks) && r.partitions === copyPartitions)!, input])];
    for (const r of reads) {
      o.log(`txn: read_committed vs read_uncommitted over txn-k${r.k}-p${r.partitions}`);
      consume.push(await consumeCase(client, `txn-k${r.k}-p${r.partitions}`, held(r), r.txn.units + 1));
    }
    return { produce, copy, consume };
  } finally {
    client?.close();
    await cluster.cleanup();
  }
}

function report(r: TxnBenchResult, o: TxnBenchOptions): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  const lat = (l: Latency): string => `${l.p50Ms} / ${l.p99Ms} / ${l.maxMs}`;
  return [
    `Transactions (Producer/Consumer, ${o.valueBytes}-byte values, RF=3 acks=all min.insync 2; 3 combined nodes on loopback; ≤ ${o.units} units or ${o.seconds} s per case)`,
    '  K     parts  baseline rec/s  txn rec/s  ratio  commit p50 / p99 / max ms  unit p50 ms base / txn',
    ...r.produce.map((p) => `  ${String(p.k).padEnd(5)} ${String(p.partitions).padEnd(6)} ${n(p.baseline.recordsPerS).padStart(14)} ${n(p.txn.recordsPerS).padStart(10)}  ${p.ratio.toFixed(3)}  ${lat(p.txn.commitLatency).padEnd(25)}  ${p.baseline.unitLatency.p50Ms} / ${p.txn.unitLatency.p50Ms}`
      + `   (${p.baseline.units} / ${p.txn.units} units)`),
    `  exactly-once copy of ${r.copy.input}: ${n(r.copy.recordsPerS)} records/s (${n(r.copy.records)} records in ${r.copy.transactions} transactions, ${r.copy.seconds} s; `
      + `commit p50 / p99 / max ${lat(r.copy.commitLatency)} ms; read back read_committed: ${n(r.copy.outputRecords)})`,
    ...r.consume.map((c) => `  consume ${c.topic} (${n(c.records)} records, ${n(c.transactions)} transactions): read_committed ${n(c.readCommittedPerS)} records/s, `
      + `read_uncommitted ${n(c.readUncommittedPerS)} records/s, ratio ${c.ratio.toFixed(3)}`),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const units = argValue('--units');
  const seconds = argValue('--seconds');
  const kArg = process.argv.indexOf('--k');
  const ks = kArg >= 0 ? (process.argv[kArg + 1] ?? '').split(',').map(Number).filter((k) => Number.isSafeInteger(k) && k > 0) : undefined;
  const opts: Partial<TxnBenchOptions> = {
    ...(units !== undefined ? { units, copyTransactions: units } : {}),
    ...(seconds !== undefined ? { seconds } : {}),
    ...(ks && ks.length > 0 ? { ks } : {}),
  };
  const result = await runTxnBench(opts);
  process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(result, null, 2)}\n` : `${report(result, { ...DEFAULT_TXN_BENCH, ...opts })}\n`);
}
