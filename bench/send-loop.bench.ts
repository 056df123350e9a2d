// The Producer's cost per send() call (issue 19): a loop of single-record
// `producer.send({ topic, messages: [{ value, partition }] })` calls — what an
// application writes — against the raw pipelined figure (sluice-produce.ts:
// batches hand-built on one BrokerConnection, 8 requests in flight), on the
// same 3-node cluster in the same run, so the ratio does not depend on the
// machine's load of the day. RF=3, acks=all (min.insync.replicas 2), 100-byte
// values, one partition.
//
// The loop does not await each send: at most `windowBytes` of values are
// outstanding (sent, not yet resolved); when the window is full the loop
// waits until half of it is answered. A record counts once its send()
// resolves. Client CPU is this process's process.cpuUsage() over the run,
// per record (the servers are other processes): in the raw case that is the
// encoder and the socket, in the Producer case everything the Producer adds.
//
// `--compare <dir>`: also runs the Producer of another build (<dir> is its
// output directory, holding src/index.js) on the same cluster, right after
// this build's, e.g. the base of a change: before/after in one run.
//
// Bounded: `--records` per case (default 1,000,000), `--seconds` per case
// (default 30); every server is killed by PID at the end.
//
// Run: node dist/bench/send-loop.bench.js [--records N] [--seconds S] [--window-bytes B] [--batch-bytes B] [--compare DIR] [--json]
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { argValue, isMain } from './cli-args.js';
import { Client } from '../src/index.js';
import { connect, createTopic } from '../test/integration/broker-kit.js';
import { ProcessCluster, waitFor } from '../test/integration/harness.js';
import { producePipelined } from './suite/sluice-produce.js';
import { ThroughputMeter, randomValues } from './suite/measure.js';
import { ProcSampler } from './suite/proc-stats.js';

const VALUE_BYTES = 100;
const VALUE_POOL_SIZE = 1024;
const START_TIMEOUT_MS = 60_000;
const ANSWER_WAIT_MS = 60_000;

export interface SendLoopOptions {
  readonly records: number;
  readonly seconds: number;
  /** Bytes of values outstanding at most in the send() loop. */
  readonly windowBytes: number;
  /** Another build's output directory whose Producer also runs (before/after). */
  readonly compareDir: string | null;
  /** The Producer's batchBytes; null: its default (the figure the issue asks for). */
  readonly batchBytes: number | null;
  readonly log: (line: string) => void;
}

export const DEFAULT_SEND_LOOP: SendLoopOptions = {
  records: 1_000_000, seconds: 30, windowBytes: 1024 * 1024, compareDir: null, batchBytes: null, log: (line) => process.stderr.write(`${line}\n`),
};

export interface SendLoopRow {
  readonly name: string;
  readonly records: number;
  readonly seconds: number;
  readonly recordsPerS: number;
  /** This process's CPU (user + system) per record. */
  readonly clientCpuUsPerRecord: number;
  /** The three servers' CPU (user + system, from /proc) per record. */
  readonly brokerCpuUsPerRecord: number;
}

/** The constructor of a Client, from this build or another one (--compare). */
type ClientClass = typeof Client;

/**
 * A loop of single-record send() calls with the Producer's defaults (acks=all, idempotent) but `o.batchBytes`,
 * at most `o.windowBytes` of values unanswered (also bench/broker-cpu.bench.ts's load).
 */
export async function sendLoop(ClientCtor: ClientClass, bootstrap: readonly string[], topic: string, o: SendLoopOptions): Promise<{ records: number; seconds: number; cpuUs: number }> {
  const client = new ClientCtor({ bootstrap: [...bootstrap], clientId: 'bench-send-loop' });
  const producer = client.producer(o.batchBytes === null ? {} : { batchBytes: o.batchBytes });
  const windowRecords = Math.max(1, Math.floor(o.windowBytes / VALUE_BYTES));
  const values = randomValues(VALUE_POOL_SIZE, VALUE_BYTES);
  let failure: unknown = null;
  let outstanding = 0;
  let wakeAt = -1;
  let wake: (() => void) | null = null;
  const answered = (): void => {
    outstanding--;
    if (wake !== null && outstanding <= wakeAt) {
      const w = wake;
      wake = null;
      w();
    }
  };
  const drainTo = async (atMost: number): Promise<void> => {
    if (outstanding <= atMost) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        wakeAt = atMost;
        wake = resolve;
        timer = setTimeout(() => reject(new Error(`${outstanding} sends unanswered after ${ANSWER_WAIT_MS} ms`)), ANSWER_WAIT_MS);
      });
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    // Connections, metadata and the producer id before the clock.
    await producer.send({ topic, messages: [{ value: values[0]!, partition: 0 }] });
    const meter = new ThroughputMeter();
    const cpu0 = process.cpuUsage();
    const deadline = performance.now() + o.seconds * 1000;
    const onOk = (): void => {
      meter.add(1, VALUE_BYTES);
      answered();
    };
    const onErr = (err: unknown): void => {
      failure ??= err;
      answered();
    };
    let sent = 0;
    while (failure === null && sent < o.records) {
      if (outstanding >= windowRecords) {
        await drainTo(windowRecords >> 1);
        if (performance.now() >= deadline) break;
        continue;
      }
      outstanding++;
      producer.send({ topic, messages: [{ value: values[sent++ % VALUE_POOL_SIZE]!, partition: 0 }] }).then(onOk, onErr);
    }
    await drainTo(0);
    const cpu = process.cpuUsage(cpu0);
    if (failure !== null) throw failure instanceof Error ? failure : new Error(String(failure));
    const r = meter.result();
    return { records: r.records, seconds: r.seconds, cpuUs: cpu.user + cpu.system };
  } finally {
    await producer.close().catch(() => undefined);
    client.close();
  }
}

function row(name: string, records: number, seconds: number, cpuUs: number, brokerCpuS: number): SendLoopRow {
  const perRecord = (us: number): number => Math.round((us / Math.max(1, records)) * 100) / 100;
  return { name, records, seconds, recordsPerS: Math.round(records / seconds), clientCpuUsPerRecord: perRecord(cpuUs), brokerCpuUsPerRecord: perRecord(brokerCpuS * 1e6) };
}

export async function runSendLoop(opts: Partial<SendLoopOptions> = {}): Promise<SendLoopRow[]> {
  const o = { ...DEFAULT_SEND_LOOP, ...opts };
  const cluster = await ProcessCluster.create({ size: 3, brokers: true, logLevel: 'warn' });
  const rows: SendLoopRow[] = [];
  let topicSeq = 0;
  const freshTopic = async (): Promise<{ name: string; leaderUrl: string }> => {
    const name = `send-loop-${++topicSeq}`;
    const admin = await connect(cluster.brokerUrls[0]!);
    try {
      const parts = await createTopic(admin, name, 1, 3, { 'min.insync.replicas': '2' });
      const md = await admin.metadata([name]);
      const url = md.brokers.find((b) => b.nodeId === parts[0]!.leader)?.url;
      if (url === undefined) throw new Error(`no URL for the leader of ${name}-0`);
      return { name, leaderUrl: url };
    } finally {
      admin.close();
    }
  };
  try {
    cluster.startAll();
    await waitFor('3 brokers in the metadata', async () => {
      const c = await connect(cluster.brokerUrls[0]!);
      try {
        return (await c.metadata([])).brokers.length === 3;
      } finally {
        c.close();
      }
    }, { timeoutMs: START_TIMEOUT_MS, intervalMs: 200 });

    const raw = await freshTopic();
    o.log(`raw pipelined: BrokerConnection, batches of 500, 8 in flight, up to ${o.records} records / ${o.seconds} s`);
    const conn = await connect(raw.leaderUrl);
    try {
      const sampler = ProcSampler.start(cluster.nodes.map((n) => n.pid!));
      const cpu0 = process.cpuUsage();
      const { result } = await producePipelined(raw.name, [{ partition: 0, conn }], -1, { records: o.records, seconds: o.seconds, valueBytes: VALUE_BYTES, producers: 1 }, () => undefined);
      const cpu = process.cpuUsage(cpu0);
      const brokerCpuS = sampler.stop().reduce((a, st) => a + st.cpuSeconds, 0);
      rows.push(row('raw pipelined (sluice-produce.ts)', result.records, result.seconds, cpu.user + cpu.system, brokerCpuS));
    } finally {
      conn.close();
    }

    const builds: Array<{ name: string; ctor: ClientClass }> = [{ name: 'Producer.send() loop', ctor: Client }];
    if (o.compareDir !== null) {
      const mod = await import(pathToFileURL(path.join(path.resolve(o.compareDir), 'src/index.js')).href) as { Client: ClientClass };
      builds.push({ name: `Producer.send() loop, ${o.compareDir}`, ctor: mod.Client });
    }
    for (const b of builds) {
      const t = await freshTopic();
      o.log(`${b.name}: window ${o.windowBytes} B of values, up to ${o.records} records / ${o.seconds} s`);
      const sampler = ProcSampler.start(cluster.nodes.map((n) => n.pid!));
      const r = await sendLoop(b.ctor, cluster.brokerUrls, t.name, o);
      const brokerCpuS = sampler.stop().reduce((a, st) => a + st.cpuSeconds, 0);
      rows.push(row(b.name, r.records, r.seconds, r.cpuUs, brokerCpuS));
    }
  } finally {
    await cluster.cleanup();
  }
  return rows;
}

function report(rows: readonly SendLoopRow[], o: SendLoopOptions): string {
  const raw = rows[0]!;
  return [
    `Single-record send() loop vs raw pipelined (RF=3 acks=all, ${VALUE_BYTES}-byte values, 1 partition, 3 nodes on loopback; window ${o.windowBytes} B`
      + `, batchBytes ${o.batchBytes ?? 'default'})`,
    '| case | records | s | records/s | client CPU µs/record | broker CPU µs/record (3 nodes) | × raw |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${r.records} | ${r.seconds} | ${r.recordsPerS.toLocaleString('en-US')} | ${r.clientCpuUsPerRecord} | ${r.brokerCpuUsPerRecord} `
      + `| ${(r.recordsPerS / raw.recordsPerS).toFixed(2)} |`),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const records = argValue('--records');
  const seconds = argValue('--seconds');
  const windowBytes = argValue('--window-bytes');
  const batchBytes = argValue('--batch-bytes');
  const ci = process.argv.indexOf('--compare');
  const opts: Partial<SendLoopOptions> = {
    ...(records !== undefined ? { records } : {}), ...(seconds !== undefined ? { seconds } : {}), ...(windowBytes !== undefined ? { windowBytes } : {}),
    ...(batchBytes !== undefined ? { batchBytes } : {}),
    ...(ci >= 0 && process.argv[ci + 1] !== undefined ? { compareDir: process.argv[ci + 1]! } : {}),
  };
  const rows = await runSendLoop(opts);
  process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(rows, null, 2)}\n` : `${report(rows, { ...DEFAULT_SEND_LOOP, ...opts })}\n`);
}
