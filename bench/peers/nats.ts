// NATS JetStream as a benchmark peer (issue 8): `nats-server` (Debian's
// package) on 127.0.0.1 with JetStream file storage in a fresh temp dir,
// driven by the npm `nats` client the fastest way it allows from Node.
//
// - natsR1: one server, stream `bench` with one replica.
// - natsR3: three servers in one cluster (routes on loopback, distinct server
//   names and store dirs), stream `bench` with three replicas; ready once the
//   stream has a leader and both followers report current.
// JetStream's file store fsyncs on its own interval (sync_interval, default
// 2 min), not per publish: the default a user gets.
//
// How it is driven (JetStream's wire API — subjects carrying JSON — over the
// client's core connection, as the issue asks for "raw protocol, pipelined"):
// - produce: each record is published to `bench.<producer>` with a reply
//   inbox; the server answers every stored record with a PubAck on it. Up to
//   PUBLISH_WINDOW records per producer await their PubAck; a record counts
//   only when its PubAck arrives and says stored. This is what `js.publish()`
//   does, without a promise and a timer per record: on this machine
//   js.publish() reached ~14k records/s (R1) where this reaches ~80k, so
//   js.publish() would measure the client, not JetStream ('js-publish' mode
//   keeps it available for comparison).
// - consume: a pull consumer (AckPolicy None, R1 in memory — what an ordered
//   consumer is) read with `CONSUMER.MSG.NEXT` requests for big batches, two
//   outstanding per reader; N readers share one durable consumer (JetStream's
//   "queue"). No per-record acks: the counterpart of Kafka-style offsets.
// - e2e: a paced publisher stamping the send time into each value (as above,
//   acknowledged) and a pull reader timing arrivals.
// Clients connect to the stream leader's server: the shortest path a NATS
// client can take, as Sluice's client talks to the partition leader.
//
// Invariants: produce() and e2e() write into a fresh stream; a record counts
// only once its PubAck is in; every loop is bounded by the spec's records and
// seconds; stop() stops every server by PID and removes the data dirs.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AckPolicy, DeliverPolicy, StorageType, connect, createInbox, type JetStreamManager, type Msg, type NatsConnection, type Subscription } from 'nats';
import { freePorts } from '../../test/integration/harness.js';
import { assert } from '../../src/util/assert.js';
import { LatencyRecorder, ThroughputMeter, nowMs, randomValues } from '../suite/measure.js';
import type { Availability, ConsumeSpec, Deployment, E2eSpec, LatencyResult, ProduceSpec, Progress, ThroughputResult } from '../suite/types.js';
import { BoundedWait, InFlightWindow, Tally, deadlineAfter, sendPaced, sentAtMs, splitRecords, stampedValue } from './load.js';
import { ServerProcess, binaryVersion, findBinary, removeDir, waitForValue } from './server-process.js';

const BINARY = 'nats-server';
const STREAM = 'bench';
const CLUSTER_NAME = 'bench';
/**
 * Records per producer connection awaiting their PubAck. Measured here: R1 is
 * indifferent between 1k and 4k, while R3 spends ~30% less server CPU per
 * record with 1k outstanding than with 4k (~38 vs ~53 µs across 3 servers).
 */
const PUBLISH_WINDOW = 1024;
/** How long a producer waits for PubAcks (for room in its window, or at the end) before the run fails. */
const PUBLISH_ACK_TIMEOUT_MS = 30_000;
/** Messages asked for per pull request when reading back; READ_PULLS_OUTSTANDING requests per reader. */
const READ_BATCH_MESSAGES = 10_000;
const READ_PULLS_OUTSTANDING = 2;
/** Smaller pulls for e2e: a waiting pull request is handed each record as soon as it is stored. */
const E2E_BATCH_MESSAGES = 1_000;
const E2E_WINDOW = 10_000;
/** How long e2e waits after the last PubAck for the reader to see every acknowledged record. */
const E2E_DRAIN_MS = 5_000;
/** A pull request the server holds (waiting for records) at most this long, then answers 408. */
const PULL_EXPIRES_MS = 1_000;
const START_TIMEOUT_MS = 30_000;
const STREAM_READY_TIMEOUT_MS = 30_000;
/** Distinct values cycled through by producers (a power of two: indexed with a mask). */
const VALUE_POOL = 1024;
/** Every stored record's PubAck starts so (the server writes `{"stream":"bench", "seq":N}`); errors start `{"error"`. */
const PUBACK_OK_PREFIX = Buffer.from('{"stream":');
/** Pull-request statuses that end a request without an error: no messages (404), expired (408). */
const PULL_END_CODES = new Set([404, 408]);

/** How produce() publishes: pipelined with reply inboxes (default), or through js.publish() promises. */
export type NatsPublishMode = 'pipelined' | 'js-publish';

export interface NatsOptions {
  readonly publish?: NatsPublishMode;
}

export function natsAvailability(): Availability & { readonly version?: string } {
  const bin = findBinary(BINARY);
  if (bin === undefined) return { available: false, reason: `${BINARY} not found on PATH or in /usr/sbin (run make bench-peers)` };
  const version = binaryVersion(bin, ['--version'], /v(\d+\.\d+\.\d+\S*)/);
  if (version === undefined) return { available: false, reason: `${bin} --version failed` };
  return { available: true, version };
}

export function natsR1(opts: NatsOptions = {}): Deployment {
  return new NatsDeployment(1, opts.publish ?? 'pipelined');
}

export function natsR3(opts: NatsOptions = {}): Deployment {
  return new NatsDeployment(3, opts.publish ?? 'pipelined');
}

interface NodePorts {
  readonly name: string;
  readonly client: number;
  readonly cluster: number;
}

class NatsDeployment implements Deployment {
  readonly system = 'nats-jetstream' as const;
  readonly variant: string;
  private servers: ServerProcess[] = [];
  private nodes: NodePorts[] = [];
  private root: string | undefined;
  private admin: NatsConnection | undefined;
  private jsm: JetStreamManager | undefined;
  /** The client URL of the server leading the stream. */
  private leaderUrl = '';
  /** Whether the stream has been written since it was (re)created. */
  private streamUsed = true;
  private consumerSeq = 0;

  constructor(private readonly replicas: 1 | 3, private readonly publishMode: NatsPublishMode) {
    this.variant = `R${replicas} file storage${publishMode === 'js-publish' ? ', js.publish' : ''}`;
  }

  async start(): Promise<void> {
    assert(this.servers.length === 0, 'started twice');
    const bin = findBinary(BINARY);
    if (bin === undefined) throw new Error(`${BINARY} is not installed (run make bench-peers)`);
    try {
      this.root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-nats-'));
      const ports = await freePorts(2 * this.replicas);
      this.nodes = Array.from({ length: this.replicas }, (_, i) => ({ name: `nats-${i + 1}`, client: ports[2 * i]!, cluster: ports[2 * i + 1]! }));
      this.servers = this.nodes.map((n) => new ServerProcess(n.name, bin, ['-c', this.writeConfig(n)]));
      for (const s of this.servers) s.start();
      const admin = await this.connectWhenServing();
      this.admin = admin;
      this.jsm = await waitForValue('JetStream to be enabled', this.servers, () => admin.jetstreamManager(), START_TIMEOUT_MS);
      await this.freshStream();
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  serverPids(): readonly number[] {
    return this.servers.map((s) => s.pid).filter((pid): pid is number => pid !== undefined);
  }

  async produce(spec: ProduceSpec, progress: Progress): Promise<ThroughputResult> {
    await this.freshStream();
    this.streamUsed = true;
    const values = randomValues(VALUE_POOL, spec.valueBytes);
    const quotas = splitRecords(spec.records, spec.producers);
    const conns = await Promise.all(quotas.map(() => connect({ servers: this.leaderUrl })));
    const meter = new ThroughputMeter();
    const tally = new Tally(meter, progress);
    const deadline = deadlineAfter(spec.seconds);
    const publishAll = this.publishMode === 'js-publish' ? publishWithPromises : publishPipelined;
    try {
      await Promise.all(quotas.map((quota, i) => publishAll(conns[i]!, `${STREAM}.${i}`, quota, deadline, values, tally)));
    } finally {
      tally.flush();
      await Promise.all(conns.map((c) => c.close()));
    }
    return meter.result();
  }

  async consume(spec: ConsumeSpec, progress: Progress): Promise<ThroughputResult> {
    assert(spec.consumers >= 1, 'at least one consumer');
    const name = await this.addPullConsumer();
    const conns = await Promise.all(Array.from({ length: spec.consumers }, () => connect({ servers: this.leaderUrl })));
    const meter = new ThroughputMeter();
    const tally = new Tally(meter, progress);
    const finished = new BoundedWait(spec.seconds * 1000);
    let read = 0;
    const onRecord = (data: Uint8Array): void => {
      if (read >= spec.records) return;
      read++;
      tally.add(1, data.length);
      if (read >= spec.records) finished.finish();
    };
    const readers = conns.map((c) => new PullReader(c, name, READ_BATCH_MESSAGES, onRecord, (err) => finished.fail(err)));
    try {
      if (spec.records === 0) finished.finish();
      for (const r of readers) r.start();
      await finished.done;
    } finally {
      finished.finish();
      for (const r of readers) r.stop();
      tally.flush();
      await Promise.all(conns.map((c) => c.close()));
      await this.requireJsm().consumers.delete(STREAM, name).catch(() => false);
    }
    return meter.result();
  }

  async e2e(spec: E2eSpec, progress: Progress): Promise<LatencyResult> {
    await this.freshStream();
    this.streamUsed = true;
    const latencies = new LatencyRecorder();
    const fillers = randomValues(VALUE_POOL, spec.valueBytes);
    const name = await this.addPullConsumer();
    const [pubConn, subConn] = await Promise.all([connect({ servers: this.leaderUrl }), connect({ servers: this.leaderUrl })]);
    let received = 0;
    let readError: Error | undefined;
    let drained: BoundedWait | undefined;
    const publisher = new AckedPublisher(pubConn, E2E_WINDOW, () => undefined);
    const reader = new PullReader(subConn, name, E2E_BATCH_MESSAGES, (data) => {
      latencies.record(sentAtMs(data), nowMs());
      received++;
      if ((received & 511) === 0) progress(received);
      if (drained && received >= publisher.acked) drained.finish();
    }, (err) => {
      readError ??= err;
      drained?.fail(err);
    });
    try {
      reader.start();
      let next = 0;
      latencies.start(spec.warmupSeconds);
      const run = await sendPaced(spec.ratePerS, spec.warmupSeconds + spec.seconds, (due) => {
        let n = 0;
        for (; n < due && publisher.hasRoom(); n++) publisher.publish(`${STREAM}.e2e`, stampedValue(fillers[next++ & (VALUE_POOL - 1)]!));
        return n;
      });
      await publisher.drain();
      if (readError) throw readError;
      drained = new BoundedWait(E2E_DRAIN_MS);
      if (received >= publisher.acked) drained.finish();
      await drained.done;
      progress(received);
      return latencies.result(spec, run.seconds);
    } finally {
      drained?.finish();
      reader.stop();
      await Promise.all([pubConn.close(), subConn.close()]);
      await this.requireJsm().consumers.delete(STREAM, name).catch(() => false);
    }
  }

  async stop(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    this.jsm = undefined;
    if (admin) await admin.close().catch(() => undefined);
    await Promise.all(this.servers.map((s) => s.stop()));
    removeDir(this.root);
    this.root = undefined;
  }

  private writeConfig(n: NodePorts): string {
    assert(this.root !== undefined, 'config before the temp dir');
    const lines = [
      `server_name: ${JSON.stringify(n.name)}`,
      `listen: "127.0.0.1:${n.client}"`,
      `jetstream { store_dir: ${JSON.stringify(path.join(this.root, n.name))} }`,
    ];
    if (this.replicas > 1) {
      const routes = this.nodes.filter((o) => o !== n).map((o) => JSON.stringify(`nats-route://127.0.0.1:${o.cluster}`));
      lines.push(`cluster { name: ${JSON.stringify(CLUSTER_NAME)}, listen: "127.0.0.1:${n.cluster}", routes: [${routes.join(', ')}] }`);
    }
    const file = path.join(this.root, `${n.name}.conf`);
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  }

  private async connectWhenServing(): Promise<NatsConnection> {
    const servers = this.nodes.map((n) => `127.0.0.1:${n.client}`);
    // One connection per server proves each accepts clients; the admin one spans them all.
    const probes = await Promise.all(servers.map((s) => waitForValue(`${s} to accept clients`, this.servers, () => connect({ servers: s, reconnect: false }), START_TIMEOUT_MS)));
    await Promise.all(probes.map((c) => c.close()));
    return connect({ servers, maxReconnectAttempts: -1 });
  }

  private requireJsm(): JetStreamManager {
    if (!this.jsm) throw new Error('nats deployment is not started');
    return this.jsm;
  }

  /** A pull consumer from the stream's start, without acks, kept in memory on one server (like an ordered consumer). */
  private async addPullConsumer(): Promise<string> {
    const name = `read-${++this.consumerSeq}`;
    await this.requireJsm().consumers.add(STREAM, {
      durable_name: name, ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All, num_replicas: 1, mem_storage: true,
    });
    return name;
  }

  /** (Re)creates the stream unless it is still unwritten, and waits until its replicas are current. */
  private async freshStream(): Promise<void> {
    if (!this.streamUsed) return;
    const jsm = this.requireJsm();
    await jsm.streams.delete(STREAM).catch(() => false);
    await waitForValue(`stream ${STREAM} to be created`, this.servers, () => jsm.streams.add({
      name: STREAM, subjects: [`${STREAM}.>`], storage: StorageType.File, num_replicas: this.replicas,
    }), STREAM_READY_TIMEOUT_MS);
    const leader = await waitForValue(`stream ${STREAM} to have a leader and current replicas`, this.servers, async () => {
      if (this.replicas === 1) return this.nodes[0]!.name;
      const info = await jsm.streams.info(STREAM);
      const followers = info.cluster?.replicas ?? [];
      const current = followers.length === this.replicas - 1 && followers.every((r) => r.current && !r.offline);
      return current ? info.cluster?.leader : undefined;
    }, STREAM_READY_TIMEOUT_MS);
    const node = this.nodes.find((n) => n.name === leader);
    assert(node !== undefined, `stream leader ${leader} is not one of ours`);
    this.leaderUrl = `127.0.0.1:${node.client}`;
    this.streamUsed = false;
  }
}

/**
 * Publishes with a reply inbox and counts the PubAcks that come back on it.
 * At most `window` records await theirs; one that is not a success fails the run.
 */
class AckedPublisher {
  private readonly window: InFlightWindow;
  private readonly inbox = createInbox();
  private failure: Error | undefined;
  acked = 0;

  constructor(private readonly nc: NatsConnection, windowRecords: number, private readonly onAck: () => void) {
    this.window = new InFlightWindow(windowRecords);
    // Subscribed before the first publish: the server handles one connection's commands in order.
    nc.subscribe(this.inbox, { callback: (err, m) => this.handleAck(err, m) });
  }

  hasRoom(): boolean {
    return this.window.hasRoom() && this.failure === undefined;
  }

  get failed(): boolean {
    return this.failure !== undefined;
  }

  waitForRoom(): Promise<void> {
    return this.window.waitForRoom(PUBLISH_ACK_TIMEOUT_MS, 'published records awaiting a PubAck');
  }

  /** Sends one record; the caller checked hasRoom(). */
  publish(subject: string, value: Uint8Array): void {
    this.window.acquire();
    this.nc.publish(subject, value, { reply: this.inbox });
  }

  /** Waits until every record sent has its PubAck; throws the first failure. */
  async drain(): Promise<void> {
    await this.window.settle(0, PUBLISH_ACK_TIMEOUT_MS, 'published records awaiting a PubAck');
    if (this.failure) throw this.failure;
  }

  private handleAck(err: Error | null, m: Msg): void {
    if (err || !isPubAckOk(m)) {
      this.failure ??= err ?? new Error(`publish failed: ${m.headers?.status ?? ''} ${m.string()}`);
    } else {
      this.acked++;
      this.onAck();
    }
    this.window.release();
  }
}

function isPubAckOk(m: Msg): boolean {
  const d = m.data;
  if (d.length < PUBACK_OK_PREFIX.length) return false;
  for (let i = 0; i < PUBACK_OK_PREFIX.length; i++) if (d[i] !== PUBACK_OK_PREFIX[i]) return false;
  return true;
}

/** produce() for one producer connection: `quota` records, pipelined, each counted at its PubAck. */
async function publishPipelined(nc: NatsConnection, subject: string, quota: number, deadline: number, values: readonly Buffer[], tally: Tally): Promise<void> {
  const bytes = values[0]?.length ?? 0;
  const publisher = new AckedPublisher(nc, PUBLISH_WINDOW, () => tally.add(1, bytes));
  let sent = 0;
  while (sent < quota && !publisher.failed && performance.now() < deadline) {
    if (!publisher.hasRoom()) {
      await publisher.waitForRoom();
      continue;
    }
    publisher.publish(subject, values[sent++ & (VALUE_POOL - 1)]!);
  }
  await publisher.drain();
}

/** produce() through js.publish(): one promise (and ack timer) per record, at most PUBLISH_WINDOW pending. */
async function publishWithPromises(nc: NatsConnection, subject: string, quota: number, deadline: number, values: readonly Buffer[], tally: Tally): Promise<void> {
  const js = nc.jetstream();
  const window = new InFlightWindow(PUBLISH_WINDOW);
  let failure: unknown;
  let sent = 0;
  while (sent < quota && failure === undefined && performance.now() < deadline) {
    if (!window.hasRoom()) {
      await window.waitForRoom(PUBLISH_ACK_TIMEOUT_MS, 'js.publish() calls');
      continue;
    }
    const value = values[sent++ & (VALUE_POOL - 1)]!;
    window.acquire();
    js.publish(subject, value, { timeout: PUBLISH_ACK_TIMEOUT_MS }).then(() => {
      tally.add(1, value.length);
      window.release();
    }, (err: unknown) => {
      failure ??= err;
      window.release();
    });
  }
  await window.settle(0, PUBLISH_ACK_TIMEOUT_MS, 'js.publish() calls');
  if (failure !== undefined) throw failure;
}

/**
 * Reads a pull consumer with `CONSUMER.MSG.NEXT` requests of `batch` records,
 * READ_PULLS_OUTSTANDING at a time. Each request has its own reply
 * subscription — delivered records carry their stream subject, so only the
 * subscription tells which request a record answers — and the reader asks for
 * the next batch when one is used up: all its records came, or the server
 * ended it with a 404 (no messages) or 408 (expired) status.
 */
class PullReader {
  private readonly inbox = createInbox();
  private readonly subs = new Set<Subscription>();
  private requestSeq = 0;
  private stopped = false;
  private readonly request: Uint8Array;

  constructor(
    private readonly nc: NatsConnection,
    private readonly consumer: string,
    private readonly batch: number,
    private readonly onRecord: (data: Uint8Array) => void,
    private readonly onError: (err: Error) => void,
  ) {
    this.request = Buffer.from(JSON.stringify({ batch, expires: PULL_EXPIRES_MS * 1_000_000 }));
  }

  start(): void {
    for (let i = 0; i < READ_PULLS_OUTSTANDING; i++) this.pull();
  }

  /** No more pull requests; ones the server still holds expire on their own. */
  stop(): void {
    this.stopped = true;
    for (const sub of this.subs) sub.unsubscribe();
    this.subs.clear();
  }

  private pull(): void {
    if (this.stopped) return;
    const reply = `${this.inbox}.${++this.requestSeq}`;
    let left = this.batch;
    const sub = this.nc.subscribe(reply, {
      callback: (err, m) => {
        if (this.stopped) return;
        if (err) return this.onError(err);
        const code = m.headers?.code ?? 0;
        if (code === 0) {
          this.onRecord(m.data);
          if (--left > 0) return;
        } else if (!PULL_END_CODES.has(code)) {
          return this.onError(new Error(`pull from ${this.consumer} failed: ${m.headers?.status}`));
        }
        this.subs.delete(sub);
        sub.unsubscribe();
        this.pull();
      },
    });
    this.subs.add(sub);
    this.nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${STREAM}.${this.consumer}`, this.request, { reply });
  }
}
