// The Kafka path against the WebSocket path, in one run on one cluster: the
// same 100-byte records, acks=all, RF=3 (min.insync.replicas 2), one
// partition, through
//   - Kafka's own kafka-producer-perf-test / kafka-consumer-perf-test
//     (ProducerPerformance / ConsumerPerformance from kafka-tools, the Java
//     client) against the Kafka listener, and
//   - Sluice's own Producer (send() per record, as an application calls it)
//     and Consumer over WebSocket.
// Each row: records/s and the brokers' CPU seconds per million records
// (all three processes, from /proc) — the cost of the path, whichever client
// drives it. The ratio line is Kafka path / WebSocket path. The perf tools
// come from the interop toolchain (scripts/interop-tools.sh); without Java
// the Kafka rows are skipped with a reason.
//
// Run: node dist/bench/kafka-path.bench.js [--records N] [--json]

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { argValue, isMain } from './cli-args.js';
import { ProcessCluster, waitFor } from '../test/integration/harness.js';
import { ProcSampler } from './suite/proc-stats.js';
import { Client } from '../src/index.js';
import { consumeAll } from './consume-all.js';

const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const JAVA_LIB = path.join(process.env.SLUICE_INTEROP_CACHE ?? path.join(REPO_ROOT, 'node_modules/.cache/sluice-interop'), 'java/lib');
const VALUE_BYTES = 100;
const RUN_TIMEOUT_MS = 180_000;
const OUTSTANDING_MAX = 50_000;
/** The producer settings both paths use (Kafka's perf-test defaults, plus the linger and batch size stated). */
const LINGER_MS = 5;
const BATCH_BYTES = 65_536;

interface Row {
  readonly path: string;
  readonly client: string;
  readonly records: number;
  readonly seconds: number;
  readonly recordsPerS: number;
  readonly brokerCpuSPerM: number;
}

function javaCommand(mainClass: string, args: readonly string[]): { cmd: string; args: string[] } | null {
  if (!fs.existsSync(JAVA_LIB)) return null;
  return { cmd: 'java', args: ['-Xmx512m', '-cp', `${JAVA_LIB}/*`, mainClass, ...args] };
}

function run(cmd: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} exited ${code}: ${out.slice(-500)}`));
    });
  });
}

async function measured(cluster: ProcessCluster, label: Omit<Row, 'seconds' | 'recordsPerS' | 'brokerCpuSPerM'>, work: () => Promise<void>): Promise<Row> {
  const sampler = ProcSampler.start(cluster.nodes.map((n) => n.pid!));
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = sampler.stop().reduce((a, s) => a + s.cpuSeconds, 0);
  return { ...label, seconds, recordsPerS: label.records / seconds, brokerCpuSPerM: (cpu / label.records) * 1e6 };
}

async function sluiceProduce(bootstrap: string, topic: string, records: number): Promise<void> {
  const client = new Client({ bootstrap, clientId: 'bench-ws' });
  const producer = client.producer({ acks: -1, idempotent: true, lingerMs: LINGER_MS, batchBytes: BATCH_BYTES });
  const value = Buffer.alloc(VALUE_BYTES, 1);
  let outstanding = 0;
  let failed: unknown = null;
  try {
    for (let i = 0; i < records; i++) {
      while (outstanding >= OUTSTANDING_MAX) await new Promise((r) => setImmediate(r));
      outstanding++;
      producer.send({ topic, messages: [{ value }] }).then(() => { outstanding--; }, (err: unknown) => { outstanding--; failed = err; });
    }
    await producer.flush();
    await waitFor('every send answered', () => outstanding === 0, { timeoutMs: RUN_TIMEOUT_MS, intervalMs: 10 });
    if (failed) throw failed;
  } finally {
    await client.close();
  }
}

async function sluiceConsume(bootstrap: string, topic: string, records: number): Promise<void> {
  const client = new Client({ bootstrap, clientId: 'bench-ws-consumer' });
  try {
    await consumeAll(client, topic, records, 'bench-ws');
  } finally {
    await client.close();
  }
}

export async function kafkaPathBench(records: number, log: (s: string) => void): Promise<Row[]> {
  const cluster = await ProcessCluster.create({ size: 3, brokers: true, kafka: true, logLevel: 'warn' });
  cluster.startAll();
  const rows: Row[] = [];
  const client = new Client({ bootstrap: cluster.brokerUrls[0]! });
  try {
    await waitFor('3 brokers', async () => (await client.admin().describeCluster()).brokers.length === 3, { timeoutMs: 60_000, intervalMs: 200 });
    const admin = client.admin();
    for (const t of ['kpath-ws', 'kpath-kafka']) {
      await admin.createTopics({ topics: [{ topic: t, numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } }] });
    }
    const bootstrap = cluster.brokerUrls.join(',');
    log(`WebSocket path: Sluice Producer, ${records} records`);
    rows.push(await measured(cluster, { path: 'WebSocket', client: 'Sluice Producer.send() per record', records }, () => sluiceProduce(bootstrap, 'kpath-ws', records)));
    const perf = javaCommand('org.apache.kafka.tools.ProducerPerformance', [
      '--topic', 'kpath-kafka', '--num-records', String(records), '--record-size', String(VALUE_BYTES), '--throughput', '-1',
      '--producer-props', `bootstrap.servers=${cluster.kafkaBootstrap}`, 'acks=all', `linger.ms=${LINGER_MS}`, `batch.size=${BATCH_BYTES}`,
    ]);
    if (perf) {
      log(`Kafka path: kafka-producer-perf-test, ${records} records`);
      rows.push(await measured(cluster, { path: 'Kafka', client: 'kafka-producer-perf-test (Java client 4.x)', records }, async () => { log((await run(perf.cmd, perf.args)).trim().split('\n').at(-1) ?? ''); }));
    } else {
      log(`skipping the Kafka path: no Java client at ${JAVA_LIB} (scripts/interop-tools.sh installs it)`);
    }
    log('WebSocket path: Sluice Consumer');
    rows.push(await measured(cluster, { path: 'WebSocket', client: 'Sluice Consumer.run() in a group', records }, () => sluiceConsume(bootstrap, 'kpath-ws', records)));
    const cperf = javaCommand('org.apache.kafka.tools.ConsumerPerformance', [
      '--bootstrap-server', cluster.kafkaBootstrap, '--topic', 'kpath-kafka', '--messages', String(records), '--timeout', '60000',
    ]);
    if (perf && cperf) {
      log('Kafka path: kafka-consumer-perf-test');
      rows.push(await measured(cluster, { path: 'Kafka', client: 'kafka-consumer-perf-test (Java client 4.x)', records }, async () => { log((await run(cperf.cmd, cperf.args)).trim().split('\n').at(-1) ?? ''); }));
    }
  } finally {
    await client.close();
    await cluster.cleanup();
  }
  return rows;
}

function report(rows: readonly Row[]): string {
  const lines = ['| path | client | records | records/s | broker CPU s per 1M records |', '|---|---|---:|---:|---:|'];
  for (const r of rows) lines.push(`| ${r.path} | ${r.client} | ${r.records} | ${Math.round(r.recordsPerS).toLocaleString('en')} | ${r.brokerCpuSPerM.toFixed(2)} |`);
  const pair = (i: number, j: number, what: string): void => {
    const a = rows[i];
    const b = rows[j];
    if (a && b && a.path === 'WebSocket' && b.path === 'Kafka') {
      lines.push(`${what}: Kafka/WebSocket throughput ${(b.recordsPerS / a.recordsPerS).toFixed(2)}x, broker CPU per record ${(b.brokerCpuSPerM / a.brokerCpuSPerM).toFixed(2)}x`);
    }
  };
  lines.push('');
  pair(0, 1, 'produce');
  pair(2, 3, 'consume');
  return lines.join('\n');
}

if (isMain(import.meta.url)) {
  const records = Number(argValue('--records') ?? 1_000_000);
  const rows = await kafkaPathBench(records, (s) => process.stderr.write(`${s}\n`));
  process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(rows)}\n` : `${report(rows)}\n`);
}
