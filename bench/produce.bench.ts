// First data-plane figure: one producer, 100-byte random values, every record
// acknowledged, against three combined `sluice server` processes on loopback.
// Cases: RF=3 acks=all (min.insync.replicas 2) with the default durability
// (replication) and with --durability fsync, and RF=1 acks=1 for reference.
//
// The producer is the thin BrokerConnection (the batching Producer arrives with
// the client issue): batches of `batchRecords` records encoded as they are
// sent, up to `inFlight` requests pipelined on one connection — so this is the
// broker's and the replication path's speed, not a tuned client's. At the end
// the partition's high watermark must equal the records acknowledged.
// Bounded: `records` per case and `seconds` at most; every process is killed.
//
// Run: node dist/bench/produce.bench.js [--records N] [--seconds S] [--json]

import { randomBytes } from 'node:crypto';
import * as hdr from 'hdr-histogram-js';
import { argValue, isMain } from './cli-args.js';
import { ProcessCluster, waitFor } from '../test/integration/harness.js';
import { DataClient } from '../test/integration/data-client.js';
import { encodeMessages } from '../src/client/records.js';
import { LATEST_TIMESTAMP } from '../src/protocol/apis/offsets.js';

export interface ProduceBenchOptions {
  readonly records: number;
  readonly seconds: number;
  readonly valueBytes: number;
  readonly batchRecords: number;
  readonly inFlight: number;
  readonly log: (line: string) => void;
}

export const DEFAULT_PRODUCE_BENCH: ProduceBenchOptions = {
  records: 1_000_000,
  seconds: 30,
  valueBytes: 100,
  batchRecords: 500,
  inFlight: 8,
  log: (line) => process.stderr.write(`${line}\n`),
};

interface Case { readonly name: string; readonly rf: 1 | 3; readonly acks: -1 | 1; readonly durability: 'replication' | 'fsync' }

const CASES: readonly Case[] = [
  { name: 'RF=3 acks=all', rf: 3, acks: -1, durability: 'replication' },
  { name: 'RF=3 acks=all, fsync before ack', rf: 3, acks: -1, durability: 'fsync' },
  { name: 'RF=1 acks=1', rf: 1, acks: 1, durability: 'replication' },
];

export interface CaseResult {
  readonly name: string;
  readonly records: number;
  readonly seconds: number;
  readonly recordsPerS: number;
  readonly mbPerS: number;
  readonly batchLatency: { p50Ms: number; p99Ms: number; maxMs: number };
  readonly highWatermark: number;
}

async function runCase(c: Case, o: ProduceBenchOptions): Promise<CaseResult> {
  const cluster = await ProcessCluster.create({ size: 3, brokers: true, logLevel: 'warn', extraArgs: ['--durability', c.durability] });
  const client = new DataClient(() => cluster.brokerUrls);
  try {
    cluster.startAll();
    await waitFor('three unfenced brokers', async () => (await client.metadata(null)).brokers.length === 3, { timeoutMs: 60_000 });
    await client.createTopic('bench', { partitions: 1, replicationFactor: c.rf, configs: { 'min.insync.replicas': c.rf === 3 ? '2' : '1' } });
    const leader = await client.partition('bench', 0);
    const conn = await client.connection(leader.url!);
    const values = Array.from({ length: 1024 }, () => randomBytes(o.valueBytes));
    const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
    let acked = 0;
    let sent = 0;
    let next = 0;
    const start = performance.now();
    const deadline = start + o.seconds * 1000;
    const sendOne = async (): Promise<void> => {
      const messages = Array.from({ length: o.batchRecords }, () => ({ value: values[next++ & 1023]! }));
      sent += o.batchRecords;
      const t0 = performance.now();
      const res = await conn.produce({ acks: c.acks, timeoutMs: 30_000, topics: [{ name: 'bench', partitions: [{ partition: 0, records: encodeMessages(messages, { timestampMs: Date.now() }) }] }] });
      const p = res.topics[0]!.partitions[0]!;
      if (p.errorCode !== 0) throw new Error(`produce failed: ${p.errorMessage}`);
      histogram.recordValue(Math.max(1, Math.round((performance.now() - t0) * 1000)));
      acked += o.batchRecords;
    };
    const lane = async (): Promise<void> => {
      while (sent < o.records && performance.now() < deadline) await sendOne();
    };
    await Promise.all(Array.from({ length: o.inFlight }, lane));
    const seconds = (performance.now() - start) / 1000;
    const hw = await waitFor('the high watermark to reach every acknowledged record', async () => {
      const r = await conn.listOffsets({ topics: [{ name: 'bench', partitions: [{ partition: 0, timestamp: LATEST_TIMESTAMP }] }] });
      const off = r.topics[0]!.partitions[0]!.offset;
      return off >= acked ? off : undefined;
    }, { timeoutMs: 30_000 });
    const ms = (us: number) => Math.round(us / 10) / 100;
    return {
      name: c.name, records: acked, seconds: Math.round(seconds * 100) / 100,
      recordsPerS: Math.round(acked / seconds), mbPerS: Math.round((acked * o.valueBytes) / seconds / 1e4) / 100,
      batchLatency: { p50Ms: ms(histogram.getValueAtPercentile(50)), p99Ms: ms(histogram.getValueAtPercentile(99)), maxMs: ms(histogram.maxValue) },
      highWatermark: hw,
    };
  } finally {
    await client.close();
    await cluster.cleanup();
  }
}

export async function runProduceBench(opts: Partial<ProduceBenchOptions> = {}): Promise<CaseResult[]> {
  const o = { ...DEFAULT_PRODUCE_BENCH, ...opts };
  const out: CaseResult[] = [];
  for (const c of CASES) {
    o.log(`produce: ${c.name} (${o.valueBytes}-byte values, ${o.batchRecords} per batch, ${o.inFlight} in flight)`);
    out.push(await runCase(c, o));
  }
  return out;
}

function report(results: readonly CaseResult[], o: ProduceBenchOptions): string {
  return [
    `Produce (1 producer, ${o.valueBytes}-byte values, batches of ${o.batchRecords}, ${o.inFlight} in flight; 3 combined nodes on loopback)`,
    ...results.map((r) => `  ${r.name.padEnd(34)} ${r.recordsPerS.toLocaleString('en-US')} records/s (${r.mbPerS} MB/s of values), `
      + `batch latency p50 ${r.batchLatency.p50Ms} ms, p99 ${r.batchLatency.p99Ms} ms; ${r.records.toLocaleString('en-US')} records in ${r.seconds} s, HW ${r.highWatermark}`),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const records = argValue('--records');
  const seconds = argValue('--seconds');
  const opts = { ...(records !== undefined ? { records } : {}), ...(seconds !== undefined ? { seconds } : {}) };
  const results = await runProduceBench(opts);
  process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(results, null, 2)}\n` : `${report(results, { ...DEFAULT_PRODUCE_BENCH, ...opts })}\n`);
}
