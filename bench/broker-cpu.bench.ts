// The brokers' CPU per record, leader and followers apart (issue 19): the
// raw pipelined produce (sluice-produce.ts: hand-built 500-record batches on
// one BrokerConnection) and a loop of single-record `Producer.send()` calls
// with 16 KiB batches (Kafka's batch.size, the Producer's default until it
// became 1,000,000; acks=all, idempotent), on one
// 3-node cluster, RF=3, `min.insync.replicas` 2, one partition, 100-byte
// values. Each node's CPU is user + system from /proc over the case, per
// record; what send-loop.bench.ts sums over the three, this splits by role.
//
// `--brokers <dir>`: the servers are another build's (<dir> is its output
// directory, holding test/integration/harness.js and src/cli/main.js) while
// the client stays this one — a broker change's before/after, one cluster at
// a time. `--cases raw,producer,...` sets the cases and their order (a case
// may repeat). Profile the servers with SLUICE_IT_NODE_ARGS='--cpu-prof
// --cpu-prof-dir=DIR' (test/integration/harness.ts): they then stop with
// SIGTERM and write their profiles.
//
// Bounded: `--records` per case (default 1,000,000) and 30 s per case; every
// server is killed by PID at the end.
//
// Run: node dist/bench/broker-cpu.bench.js [--records N] [--cases raw,producer] [--brokers DIR]
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { argValue, isMain } from './cli-args.js';
import { Client } from '../src/index.js';
import { connect, createTopic } from '../test/integration/broker-kit.js';
import * as thisHarness from '../test/integration/harness.js';
import { producePipelined } from './suite/sluice-produce.js';
import { clockTicks, cpuTicksOf } from './suite/proc-stats.js';
import { DEFAULT_SEND_LOOP, sendLoop } from './send-loop.bench.js';

const VALUE_BYTES = 100;
/** The batch size this bench studies: per-request costs show at Kafka's default batch.size. */
const KAFKA_BATCH_BYTES = 16_384;
const CASE_SECONDS = 30;
/** Unanswered send() calls at most (the loop waits for half of them then). */
const WINDOW_RECORDS = 10_000;
const START_TIMEOUT_MS = 60_000;

export interface BrokerCpuRow {
  readonly name: string;
  readonly records: number;
  readonly recordsPerS: number;
  /** CPU µs per record: the partition's leader, then its followers. */
  readonly leaderUs: number;
  readonly followerUs: readonly number[];
}

type Harness = typeof thisHarness;

export async function runBrokerCpu(records: number, cases: readonly string[], brokersDir: string | null, log: (line: string) => void): Promise<BrokerCpuRow[]> {
  const harness: Harness = brokersDir === null ? thisHarness
    : await import(pathToFileURL(path.join(path.resolve(brokersDir), 'test/integration/harness.js')).href) as Harness;
  const cluster = await harness.ProcessCluster.create({ size: 3, brokers: true, logLevel: 'warn' });
  const hz = clockTicks();
  const cpuSeconds = (): number[] => cluster.nodes.map((n) => {
    const t = cpuTicksOf(n.pid!);
    return (t.user + t.system) / hz;
  });
  const rows: BrokerCpuRow[] = [];
  try {
    cluster.startAll();
    await harness.waitFor('3 brokers in the metadata', async () => {
      const c = await connect(cluster.brokerUrls[0]!);
      try {
        return (await c.metadata([])).brokers.length === 3;
      } finally {
        c.close();
      }
    }, { timeoutMs: START_TIMEOUT_MS, intervalMs: 200 });
    let seq = 0;
    for (const kind of cases) {
      const name = `broker-cpu-${++seq}`;
      const admin = await connect(cluster.brokerUrls[0]!);
      let leader: number;
      let leaderUrl: string | undefined;
      try {
        leader = (await createTopic(admin, name, 1, 3, { 'min.insync.replicas': '2' }))[0]!.leader;
        leaderUrl = (await admin.metadata([name])).brokers.find((b) => b.nodeId === leader)?.url;
      } finally {
        admin.close();
      }
      if (leaderUrl === undefined) throw new Error(`no URL for the leader of ${name}-0`);
      log(`${kind}: up to ${records} records, leader ${leader}`);
      const cpu0 = cpuSeconds();
      const t0 = performance.now();
      let done: number;
      if (kind === 'raw') {
        const conn = await connect(leaderUrl);
        try {
          done = (await producePipelined(name, [{ partition: 0, conn }], -1, { records, seconds: CASE_SECONDS, valueBytes: VALUE_BYTES, producers: 1 }, () => undefined)).result.records;
        } finally {
          conn.close();
        }
      } else if (kind === 'producer') {
        done = (await sendLoop(Client, cluster.brokerUrls, name, {
          ...DEFAULT_SEND_LOOP, records, seconds: CASE_SECONDS, windowBytes: WINDOW_RECORDS * VALUE_BYTES, batchBytes: KAFKA_BATCH_BYTES,
        })).records;
      } else {
        throw new Error(`unknown case ${kind} (raw, producer)`);
      }
      const seconds = (performance.now() - t0) / 1000;
      const cpu1 = cpuSeconds();
      const us = cpu1.map((c, i) => Math.round(((c - cpu0[i]!) * 1e6 / Math.max(1, done)) * 100) / 100);
      rows.push({
        name: kind, records: done, recordsPerS: Math.round(done / seconds),
        leaderUs: us[leader - 1]!, followerUs: us.filter((_, i) => i !== leader - 1),
      });
    }
  } finally {
    await cluster.cleanup();
  }
  return rows;
}

function report(rows: readonly BrokerCpuRow[], brokersDir: string | null): string {
  const total = (r: BrokerCpuRow): number => r.leaderUs + r.followerUs.reduce((a, b) => a + b, 0);
  return [
    `Broker CPU per record, servers of ${brokersDir ?? 'this build'} (RF=3 acks=all, ${VALUE_BYTES}-byte values, 1 partition, 3 nodes on loopback)`,
    '| case | records | records/s | leader µs/record | followers µs/record | all three µs/record |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${r.records} | ${r.recordsPerS.toLocaleString('en-US')} | ${r.leaderUs} | ${r.followerUs.join(' / ')} | ${total(r).toFixed(2)} |`),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const records = argValue('--records') ?? 1_000_000;
  const ci = process.argv.indexOf('--cases');
  const cases = ci >= 0 && process.argv[ci + 1] !== undefined ? process.argv[ci + 1]!.split(',') : ['raw', 'producer'];
  const bi = process.argv.indexOf('--brokers');
  const brokersDir = bi >= 0 && process.argv[bi + 1] !== undefined ? process.argv[bi + 1]! : null;
  const rows = await runBrokerCpu(records, cases, brokersDir, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`${report(rows, brokersDir)}\n`);
}
