// Redis Streams as a benchmark peer (issue 8): one `redis-server` (Debian's
// package) on 127.0.0.1 with its data in a fresh temp dir. The workloads talk
// raw pipelined RESP (resp.ts) — the issue's "fastest way of driving them from
// Node"; ioredis pipelines cost ~10 µs of client CPU per XADD here, 5-10× what
// Redis itself spends, so they would measure ioredis. Set-up (PING, DEL,
// XGROUP) goes through ioredis.
//
// - redisAof: appendonly yes, appendfsync everysec — the durability closest to
//   a replicated log's without replication (at most ~1 s of writes lost).
// - redisNoAof: appendonly no, no RDB snapshots — memory only.
// Both disable RDB snapshots (`save ""`) so no background save forks in the
// middle of a run; the AOF variant keeps Redis's default AOF rewrite.
//
// Workloads: produce = XADD pipelined (PIPELINE_RECORDS per round trip,
// PIPELINES_IN_FLIGHT pipelines outstanding per connection), one connection
// per producer, all into stream `bench`; a record counts when its XADD
// returned an id. consume = XREADGROUP ... COUNT READ_BATCH_RECORDS with an
// XACK of each batch pipelined ahead of the next read (1 consumer = one
// member; N = N members of one fresh group on N connections). e2e = a paced
// publisher stamping the send time into each value, XREAD BLOCK from the last
// id seen timing arrivals. Values stay Buffers (never decoded as text).
//
// Invariants: produce() and e2e() write into a fresh stream (DEL first);
// every loop is bounded by the spec's records and seconds; stop() stops the
// server by PID and removes its data dir.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePorts } from '../../test/integration/harness.js';
import { assert } from '../../src/util/assert.js';
import { LatencyRecorder, ThroughputMeter, nowMs, randomValues } from '../suite/measure.js';
import type { Availability, ConsumeSpec, Deployment, E2eSpec, LatencyResult, ProduceSpec, Progress, ThroughputResult } from '../suite/types.js';
import { InFlightWindow, Tally, deadlineAfter, sendPaced, sentAtMs, splitRecords, stampedValue, withTimeout } from './load.js';
import { ReplySink, RespClient, arrayHeaderBytes, bulkBytes, encodeCommand, encodeValueCommands, writeBulk } from './resp.js';
import { ServerProcess, binaryVersion, findBinary, removeDir, waitForValue } from './server-process.js';

const BINARY = 'redis-server';
const STREAM = 'bench';
const FIELD = 'v';
/** XADDs per pipeline (one round trip), and pipelines outstanding per producer connection. */
const PIPELINE_RECORDS = 1_000;
const PIPELINES_IN_FLIGHT = 4;
/** Entries per XREADGROUP. */
const READ_BATCH_RECORDS = 5_000;
/** e2e: entries per XREAD, how long one blocks, and pipelines the paced publisher may have outstanding. */
const E2E_READ_RECORDS = 1_000;
const E2E_BLOCK_MS = 100;
const E2E_PIPELINES_IN_FLIGHT = 64;
/** How long e2e waits after the last reply for the reader to see every acknowledged record. */
const E2E_DRAIN_MS = 5_000;
const START_TIMEOUT_MS = 30_000;
/** How long any reply may take before the run fails (Redis answers in ms; an AOF fsync stall in seconds at worst). */
const REPLY_TIMEOUT_MS = 30_000;
/** Distinct values cycled through by producers (a power of two: indexed with a mask). */
const VALUE_POOL = 1024;

const XADD_PREFIX = ['XADD', STREAM, '*', FIELD];

export function redisAvailability(): Availability & { readonly version?: string } {
  const bin = findBinary(BINARY);
  if (bin === undefined) return { available: false, reason: `${BINARY} not found on PATH or in /usr/sbin (run make bench-peers)` };
  const version = binaryVersion(bin, ['--version'], /v=(\d+\.\d+\.\d+\S*)/);
  if (version === undefined) return { available: false, reason: `${bin} --version failed` };
  return { available: true, version };
}

export function redisAof(): Deployment {
  return new RedisDeployment(true);
}

export function redisNoAof(): Deployment {
  return new RedisDeployment(false);
}

class RedisDeployment implements Deployment {
  readonly system = 'redis-streams' as const;
  readonly variant: string;
  private server: ServerProcess | undefined;
  private root: string | undefined;
  private port = 0;
  private admin: Redis | undefined;
  private groupSeq = 0;

  constructor(private readonly aof: boolean) {
    this.variant = aof ? 'AOF everysec' : 'no AOF';
  }

  async start(): Promise<void> {
    assert(this.server === undefined, 'started twice');
    const bin = findBinary(BINARY);
    if (bin === undefined) throw new Error(`${BINARY} is not installed (run make bench-peers)`);
    try {
      this.root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-redis-'));
      [this.port] = await freePorts(1) as [number];
      const server = new ServerProcess('redis', bin, this.serverArgs());
      this.server = server;
      server.start();
      this.admin = await waitForValue('redis-server to answer PING', [server], async () => {
        const client = this.client();
        try {
          await client.connect();
          if ((await client.ping()) === 'PONG') return client;
        } catch { /* not listening yet */ }
        client.disconnect();
        return undefined;
      }, START_TIMEOUT_MS);
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  serverPids(): readonly number[] {
    const pid = this.server?.pid;
    return pid === undefined ? [] : [pid];
  }

  async produce(spec: ProduceSpec, progress: Progress): Promise<ThroughputResult> {
    await this.requireAdmin().del(STREAM);
    const values = randomValues(VALUE_POOL, spec.valueBytes);
    const quotas = splitRecords(spec.records, spec.producers);
    const conns = await this.connectAll(quotas.length);
    const meter = new ThroughputMeter();
    const tally = new Tally(meter, progress);
    const deadline = deadlineAfter(spec.seconds);
    try {
      await Promise.all(quotas.map((quota, i) => xaddPipelined(conns[i]!, quota, deadline, values, tally)));
    } finally {
      tally.flush();
      for (const c of conns) c.close();
    }
    return meter.result();
  }

  async consume(spec: ConsumeSpec, progress: Progress): Promise<ThroughputResult> {
    assert(spec.consumers >= 1, 'at least one consumer');
    const group = `group-${++this.groupSeq}`;
    await this.requireAdmin().xgroup('CREATE', STREAM, group, '0');
    const conns = await this.connectAll(spec.consumers);
    const meter = new ThroughputMeter();
    const tally = new Tally(meter, progress);
    const shared = { read: 0, target: spec.records, deadline: deadlineAfter(spec.seconds) };
    try {
      await Promise.all(conns.map((c, i) => readGroupMember(c, group, `member-${i}`, shared, tally)));
    } finally {
      tally.flush();
      for (const c of conns) c.close();
      await this.requireAdmin().xgroup('DESTROY', STREAM, group).catch(() => 0);
    }
    return meter.result();
  }

  async e2e(spec: E2eSpec, progress: Progress): Promise<LatencyResult> {
    await this.requireAdmin().del(STREAM);
    const latencies = new LatencyRecorder();
    const fillers = randomValues(VALUE_POOL, spec.valueBytes);
    const [pub, sub] = await this.connectAll(2) as [RespClient, RespClient];
    const window = new InFlightWindow(E2E_PIPELINES_IN_FLIGHT);
    const state = { acked: 0, received: 0, sending: true, failure: undefined as unknown };
    const fail = (err: unknown): void => { state.failure ??= err; };
    let next = 0;
    try {
      const reading = readTail(sub, state, (buf, start) => {
        latencies.record(sentAtMs(buf, start), nowMs());
        if ((++state.received & 511) === 0) progress(state.received);
      }).catch(fail);
      latencies.start(spec.warmupSeconds);
      const run = await sendPaced(spec.ratePerS, spec.warmupSeconds + spec.seconds, (due) => {
        if (!window.hasRoom() || state.failure !== undefined) return 0;
        const n = Math.min(due, PIPELINE_RECORDS);
        const batch = Array.from({ length: n }, () => stampedValue(fillers[next++ & (VALUE_POOL - 1)]!));
        const added = new XaddSink();
        window.acquire();
        pub.request(encodeValueCommands(XADD_PREFIX, batch), n, added)
          .then(() => { state.acked += added.ids; })
          .catch(fail)
          .finally(() => window.release());
        return n;
      });
      await window.settle(0, REPLY_TIMEOUT_MS, 'XADD pipelines');
      state.sending = false;
      await reading;
      if (state.failure !== undefined) throw state.failure;
      progress(state.received);
      return latencies.result(spec, run.seconds);
    } finally {
      state.sending = false;
      pub.close();
      sub.close();
    }
  }

  async stop(): Promise<void> {
    this.admin?.disconnect();
    this.admin = undefined;
    await this.server?.stop();
    removeDir(this.root);
    this.root = undefined;
  }

  private serverArgs(): string[] {
    assert(this.root !== undefined, 'args before the temp dir');
    return [
      '--port', String(this.port), '--bind', '127.0.0.1', '--protected-mode', 'yes', '--dir', this.root,
      '--daemonize', 'no', '--logfile', '', '--save', '',
      '--appendonly', this.aof ? 'yes' : 'no', '--appendfsync', 'everysec',
    ];
  }

  private client(): Redis {
    // No reconnects and no retries: a lost connection fails the run instead of hiding in it.
    const client = new Redis({ host: '127.0.0.1', port: this.port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    // Errors reach the caller through the failed command; the event would only be printed.
    client.on('error', () => undefined);
    return client;
  }

  private async connectAll(n: number): Promise<RespClient[]> {
    const settled = await Promise.allSettled(Array.from({ length: n }, () => RespClient.connect(this.port)));
    const conns = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      for (const c of conns) c.close();
      throw failed.reason;
    }
    return conns;
  }

  private requireAdmin(): Redis {
    if (!this.admin) throw new Error('redis deployment is not started');
    return this.admin;
  }
}

/** Counts the entry ids a pipeline of XADDs answers with (an error reply fails the request). */
class XaddSink extends ReplySink {
  ids = 0;

  override bulk(_buf: Buffer, start: number, _end: number, depth: number): void {
    if (depth === 0 && start >= 0) this.ids++;
  }
}

/**
 * Walks the reply to a one-stream XREAD/XREADGROUP without building it:
 * `[[key, [[id, [field, value]], ...]]]` puts ids at depth 4 and field/value
 * pairs at depth 5. Subclasses keep what they need of each entry.
 */
abstract class StreamEntriesSink extends ReplySink {
  entries = 0;
  private fieldIndex = 0;

  override bulk(buf: Buffer, start: number, end: number, depth: number): void {
    if (start < 0) return;
    if (depth === 4) {
      this.entries++;
      this.fieldIndex = 0;
      this.onId(buf, start, end);
    } else if (depth === 5 && (this.fieldIndex++ & 1) === 1) {
      this.onValue(buf, start, end);
    }
  }

  protected abstract onId(buf: Buffer, start: number, end: number): void;
  protected abstract onValue(buf: Buffer, start: number, end: number): void;
}

/** Entry ids are at most 41 bytes (two 64-bit numbers and a dash); as bulk strings at most 48. */
const ID_BULK_BYTES_MAX = 48;

/**
 * One group member's read: counts up to `budget` entries and their value
 * bytes, writes every id into the body of the XACK that follows, and takes
 * the XACK's integer reply when it shares the pipeline.
 */
class GroupReadSink extends StreamEntriesSink {
  counted = 0;
  countedBytes = 0;
  acked = -1;
  private budget = 0;
  private readonly ackBody = Buffer.allocUnsafe(READ_BATCH_RECORDS * ID_BULK_BYTES_MAX);
  private ackBodyBytes = 0;

  constructor(private readonly group: string) {
    super();
  }

  reset(budget: number): void {
    this.entries = 0;
    this.counted = 0;
    this.countedBytes = 0;
    this.acked = -1;
    this.budget = budget;
    this.ackBodyBytes = 0;
  }

  override integer(n: number, depth: number): void {
    if (depth === 0) this.acked = n;
  }

  /** XACK for every entry read (the caller checks entries > 0). */
  xackCommand(): Buffer {
    const args = ['XACK', STREAM, this.group].map((a) => Buffer.from(a));
    let prefixBytes = arrayHeaderBytes(args.length + this.entries);
    for (const a of args) prefixBytes += bulkBytes(a.length);
    const out = Buffer.allocUnsafe(prefixBytes + this.ackBodyBytes);
    let off = out.write(`*${args.length + this.entries}\r\n`, 0, 'latin1');
    for (const a of args) off = writeBulk(out, off, a, 0, a.length);
    off += this.ackBody.copy(out, off, 0, this.ackBodyBytes);
    assert(off === out.length, 'XACK size mismatch');
    return out;
  }

  protected onId(buf: Buffer, start: number, end: number): void {
    assert(end - start <= ID_BULK_BYTES_MAX - 7, 'stream entry id longer than Redis makes them');
    this.ackBodyBytes = writeBulk(this.ackBody, this.ackBodyBytes, buf, start, end);
  }

  protected onValue(_buf: Buffer, start: number, end: number): void {
    if (this.counted >= this.budget) return;
    this.counted++;
    this.countedBytes += end - start;
  }
}

/** produce() for one connection: `quota` XADDs in pipelines, PIPELINES_IN_FLIGHT at a time. */
async function xaddPipelined(redis: RespClient, quota: number, deadline: number, values: readonly Buffer[], tally: Tally): Promise<void> {
  const window = new InFlightWindow(PIPELINES_IN_FLIGHT);
  const bytes = values[0]?.length ?? 0;
  let failure: unknown;
  let sent = 0;
  while (sent < quota && failure === undefined && performance.now() < deadline) {
    if (!window.hasRoom()) {
      await window.settle(window.max - 1, REPLY_TIMEOUT_MS, 'XADD pipelines');
      continue;
    }
    const n = Math.min(PIPELINE_RECORDS, quota - sent);
    const batch = Array.from({ length: n }, (_, k) => values[(sent + k) & (VALUE_POOL - 1)]!);
    sent += n;
    const added = new XaddSink();
    window.acquire();
    redis.request(encodeValueCommands(XADD_PREFIX, batch), n, added).then(() => {
      assert(added.ids === n, `${n} XADDs answered with ${added.ids} ids`);
      tally.add(added.ids, added.ids * bytes);
    }).catch((err: unknown) => { failure ??= err; }).finally(() => window.release());
  }
  await window.settle(0, REPLY_TIMEOUT_MS, 'XADD pipelines');
  if (failure !== undefined) throw failure;
}

interface SharedRead {
  read: number;
  readonly target: number;
  readonly deadline: number;
}

/**
 * consume() for one group member: XREADGROUP batches until the group has read
 * `target` entries, the stream has nothing undelivered left (a read returns
 * nil), or the deadline passes. Each batch's XACK is written in the same
 * pipeline as the next read, so acknowledging costs no round trip of its own.
 */
async function readGroupMember(redis: RespClient, group: string, member: string, shared: SharedRead, tally: Tally): Promise<void> {
  const read = encodeCommand(['XREADGROUP', 'GROUP', group, member, 'COUNT', READ_BATCH_RECORDS, 'STREAMS', STREAM, '>']);
  const sink = new GroupReadSink(group);
  let pendingAck: { readonly command: Buffer; readonly ids: number } | undefined;
  while (shared.read < shared.target && performance.now() < shared.deadline) {
    sink.reset(shared.target - shared.read);
    await withTimeout(redis.request(pendingAck ? Buffer.concat([pendingAck.command, read]) : read, pendingAck ? 2 : 1, sink), REPLY_TIMEOUT_MS, 'XREADGROUP');
    if (pendingAck) assert(sink.acked === pendingAck.ids, `XACK acknowledged ${sink.acked} of ${pendingAck.ids} entries`);
    pendingAck = undefined;
    if (sink.entries === 0) break;
    pendingAck = { command: sink.xackCommand(), ids: sink.entries };
    // Another member may have counted meanwhile: count no more than the target leaves.
    const counted = Math.min(sink.counted, shared.target - shared.read);
    shared.read += counted;
    tally.add(counted, counted === sink.counted ? sink.countedBytes : Math.round((sink.countedBytes * counted) / sink.counted));
  }
  if (pendingAck) {
    sink.reset(0);
    await withTimeout(redis.request(pendingAck.command, 1, sink), REPLY_TIMEOUT_MS, 'XACK');
    assert(sink.acked === pendingAck.ids, `XACK acknowledged ${sink.acked} of ${pendingAck.ids} entries`);
  }
}

/** e2e reader's sink: hands each value's position on and remembers the last id (copied: ranges die with the call). */
class TailSink extends StreamEntriesSink {
  private readonly lastId = Buffer.allocUnsafe(ID_BULK_BYTES_MAX);
  private lastIdBytes = 0;

  constructor(private readonly onStampedValue: (buf: Buffer, start: number) => void) {
    super();
  }

  /** The id to read after: the last one seen, or `fallback` when this read had none. */
  nextId(fallback: Buffer | string): Buffer | string {
    return this.entries > 0 ? Buffer.from(this.lastId.subarray(0, this.lastIdBytes)) : fallback;
  }

  reset(): void {
    this.entries = 0;
  }

  protected onId(buf: Buffer, start: number, end: number): void {
    this.lastIdBytes = buf.copy(this.lastId, 0, start, end);
  }

  protected onValue(buf: Buffer, start: number): void {
    this.onStampedValue(buf, start);
  }
}

/** e2e reader: XREAD BLOCK from the last id seen until sending stopped and every acknowledged record arrived (or the drain time passed). */
async function readTail(redis: RespClient, state: { readonly acked: number; readonly received: number; readonly sending: boolean }, onValue: (buf: Buffer, start: number) => void): Promise<void> {
  const sink = new TailSink(onValue);
  let lastId: Buffer | string = '0-0';
  let drainDeadline = Number.POSITIVE_INFINITY;
  for (;;) {
    if (!state.sending) {
      if (state.received >= state.acked) return;
      drainDeadline = Math.min(drainDeadline, performance.now() + E2E_DRAIN_MS);
      if (performance.now() > drainDeadline) return;
    }
    sink.reset();
    const read = encodeCommand(['XREAD', 'BLOCK', E2E_BLOCK_MS, 'COUNT', E2E_READ_RECORDS, 'STREAMS', STREAM, lastId]);
    await withTimeout(redis.request(read, 1, sink), REPLY_TIMEOUT_MS, 'XREAD');
    lastId = sink.nextId(lastId);
  }
}
