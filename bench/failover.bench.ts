// Failover benchmark (issue 8, "failover"):
//
//   a. controller — controller.bench's own measurement (three controller-only
//      nodes, brokers played through the controller API): SIGKILL the active
//      controller, time until a new one has committed a CreateTopics;
//   b. partition leader — three combined nodes; one producer (a BrokerConnection,
//      acks=all, one batch in flight) writes continuously to a partition with
//      RF 3 and min.insync.replicas 2 whose leader is not the active controller;
//      SIGKILL that leader; time from the kill until the first acknowledgement
//      by the new leader, p50 and p99 (issue 19's target: p99 ≤ 2 s). The
//      controller moves leaderships once the victim is fenced: after
//      broker.suspect.timeout.ms of silence when its followers report their
//      links to it down (docs/replication.md, "Failover"), else after the
//      broker session timeout. One fresh topic per round; the victim restarts
//      and rejoins the ISR between rounds; then the partition is read back
//      and every acknowledged record (numbered in its value) must be there;
//   b'. the same on Apache Kafka R3 (--kafka-leader-kills N, default 0; three
//      KRaft combined nodes at Kafka's default configs, an acks=all idempotent
//      KafkaProducer: bench/peers/kafka-failover.ts), in the same run, so the
//      two figures are side by side; skipped with the reason when Kafka's jars
//      (scripts/bench-peers.sh) or Java are missing;
//   c. controlled shutdown — the same producer; SIGTERM the partition leader
//      (its leaderships move before it stops): the longest gap between
//      consecutive acknowledgements from `settleMs` before the signal until
//      `settleMs` after both the first acknowledgement by the new leader and the
//      victim's exit, and every failed produce, retriable or not.
//
// The producer retries every retriable failure after `retryBackoffMs`, asking
// a running broker for the partition's leader again; it never gives up within
// a round, so a non-retriable error is counted, not fatal. Measures and
// reports; asserts nothing. Bounded: every wait by `waitTimeoutMs`, each
// producer by `producerRunMsMax`; every process is killed at the end.
//
// Run: node dist/bench/failover.bench.js [--kills N] [--leader-kills N] [--shutdowns N] [--session-timeout-ms MS]
//        [--suspect-timeout-ms MS] [--kafka-leader-kills N] [--kafka-rate RECORDS_PER_S] [--json]
// (--kills 0 / --shutdowns 0 skip those parts). Issue 19's leader-kill figure alone, 20 kills at the defaults
// (session 9 s as Kafka's, suspect 1 s):
//   npx tsc -p tsconfig.json && node dist/bench/failover.bench.js --kills 0 --leader-kills 20 --shutdowns 0
// and side by side with Kafka (after ./scripts/bench-peers.sh):
//   node dist/bench/failover.bench.js --kills 0 --leader-kills 20 --shutdowns 0 --kafka-leader-kills 20

import { randomBytes } from 'node:crypto';
import { argValue, isMain } from './cli-args.js';
import {
  DEFAULT_CONTROLLER_BENCH, heartbeatLoop, measureFailover, registerBrokers, type ControllerBenchResult,
} from './controller.bench.js';
import { ProcessCluster, waitFor } from '../test/integration/harness.js';
import { BrokerConns } from './scale.bench.js';
import type { BrokerConnection } from '../src/client/broker-connection.js';
import { encodeMessages } from '../src/client/records.js';
import { ApiKey } from '../src/protocol/api-keys.js';
import { LATEST_TIMESTAMP } from '../src/protocol/apis/offsets.js';
import type { QuorumClient } from '../src/raft-node/quorum-client.js';
import type { ClusterDescription } from '../src/controller/service/describe.js';
import { Errors, SluiceError, errorForCode } from '../src/util/errors.js';
import { decodeFetchedRecords } from '../src/client/records.js';
import { batchSizeAt, lastOffsetOf } from '../src/record/batch-header.js';
import { lostWrites, quantile, type SeqRange } from './failover-analysis.js';
import { DEFAULT_KAFKA_LEADER_KILL, kafkaLeaderKills, type KafkaLeaderKillResult } from './peers/kafka-failover.js';

export interface FailoverBenchOptions {
  /** SIGKILLs of the active controller (a). */
  readonly controllerKills: number;
  /** SIGKILLs of a partition leader under load (b). */
  readonly leaderKills: number;
  /** SIGTERMs of a partition leader under load (c). */
  readonly controlledShutdowns: number;
  readonly sessionTimeoutMs: number;
  /** broker.suspect.timeout.ms for the run (0 turns fast failover off); undefined: the cluster default. */
  readonly suspectTimeoutMs?: number;
  readonly batchRecords: number;
  readonly valueBytes: number;
  /** How long the leader may wait for acks=all before answering REQUEST_TIMED_OUT. */
  readonly ackTimeoutMs: number;
  readonly retryBackoffMs: number;
  /** Producing with acknowledgements before a kill, and after the new leader's first acknowledgement. */
  readonly settleMs: number;
  /** How long a node may take over its controlled shutdown before it is SIGKILLed. */
  readonly stopTimeoutMs: number;
  readonly producerRunMsMax: number;
  readonly waitTimeoutMs: number;
  /** SIGKILLs of a partition leader of Apache Kafka R3 under load (b'); 0 skips Kafka. */
  readonly kafkaLeaderKills: number;
  /** The Kafka producer's send rate (records/s). */
  readonly kafkaRatePerS: number;
  readonly log: (line: string) => void;
}

export const DEFAULT_FAILOVER_BENCH: FailoverBenchOptions = {
  controllerKills: 5,
  leaderKills: 5,
  controlledShutdowns: 3,
  sessionTimeoutMs: 9_000,
  batchRecords: 10,
  valueBytes: 100,
  ackTimeoutMs: 5_000,
  retryBackoffMs: 10,
  settleMs: 1_000,
  stopTimeoutMs: 30_000,
  producerRunMsMax: 180_000,
  waitTimeoutMs: 120_000,
  kafkaLeaderKills: 0,
  kafkaRatePerS: DEFAULT_KAFKA_LEADER_KILL.ratePerS,
  log: (line) => process.stderr.write(`${line}\n`),
};

export interface FailoverBenchResult {
  readonly controller: ControllerBenchResult['failover'];
  readonly leaderKill: {
    readonly kills: number;
    readonly sessionTimeoutMs: number;
    /** SIGKILL → first acknowledgement by the new leader, per round. */
    readonly samplesMs: readonly number[];
    readonly p50Ms: number;
    readonly p99Ms: number;
    readonly maxMs: number;
    /** broker.suspect.timeout.ms in force ('default' when the run left the cluster default). */
    readonly suspectTimeoutMs: number | 'default';
    /**
     * p50 less the session timeout (negative when fast failover fenced the victim before its session expired;
     * the session runs from the victim's last heartbeat, before the kill).
     */
    readonly afterSessionExpiryP50Ms: number;
    /** Rounds in which the victim had become the active controller by the time of the kill. */
    readonly victimWasController: number;
    readonly nonRetriableErrors: number;
    /** Records acknowledged over all rounds, and those of them missing from the partition read back after the round. */
    readonly ackedRecords: number;
    readonly lostWrites: number;
  };
  /** (b') on Apache Kafka R3; `skipped` when not run (0 kills, or no jars/Java). */
  readonly kafkaLeaderKill: KafkaLeaderKillResult;
  readonly controlledShutdown: {
    readonly shutdowns: number;
    /** Longest gap between consecutive acknowledgements around each SIGTERM. */
    readonly gapsMs: readonly number[];
    readonly maxGapMs: number;
    /** p99 of the gaps in the `settleMs` before each SIGTERM, for comparison. */
    readonly baselineGapP99Ms: number;
    /** SIGTERM → first acknowledgement by the new leader, per round. */
    readonly toNewLeaderMs: readonly number[];
    /** Victims that exited 0 within stopTimeoutMs. */
    readonly cleanExits: number;
    readonly retriableErrors: Readonly<Record<string, number>>;
    readonly nonRetriableErrors: number;
    readonly nonRetriableSamples: readonly string[];
    readonly ackedRecords: number;
    readonly lostWrites: number;
  };
  readonly producer: { readonly batchRecords: number; readonly valueBytes: number; readonly inFlight: 1; readonly acks: 'all'; readonly minInsyncReplicas: 2 };
}

const TOPIC_PARTITION = 0;
const NON_RETRIABLE_SAMPLES_MAX = 10;
const ACKS_MAX = 2_000_000;
const READ_BACK_BYTES = 1 << 20;
const READ_BACK_ROUNDS_MAX = 100_000;

/** One acknowledged batch: when, by whom, and its records' sequence numbers [from, from + count). */
interface Ack extends SeqRange { readonly atMs: number; readonly brokerId: number }

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One producer writing `batchRecords`-record batches to partition 0 of `topic`, one in flight,
 * acks=all, until stop() or `producerRunMsMax`. Every acknowledgement is kept with its time and
 * the broker that gave it; every failure is counted by name, retriable or not, then retried.
 * Each record's value starts with its sequence number (uint64 big endian), a fresh one per
 * attempt, so the log read back tells which acknowledged records it holds.
 */
class ContinuousProducer {
  readonly acks: Ack[] = [];
  readonly retriable = new Map<string, number>();
  nonRetriable = 0;
  readonly nonRetriableSamples: string[] = [];
  private stopped = false;
  private nextSeq = 0;
  private readonly values: Buffer[];
  private readonly running: Promise<void>;

  constructor(private readonly cluster: ProcessCluster, private readonly conns: BrokerConns, private readonly topic: string, private readonly o: FailoverBenchOptions) {
    this.values = Array.from({ length: o.batchRecords }, () => randomBytes(o.valueBytes));
    this.running = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  /** The first acknowledgement matching `pred`, once there is one. */
  waitForAck(what: string, pred: (a: Ack) => boolean, timeoutMs: number): Promise<Ack> {
    return waitFor(what, () => this.acks.find(pred), { timeoutMs, intervalMs: 5 });
  }

  private async run(): Promise<void> {
    const deadline = performance.now() + this.o.producerRunMsMax;
    let leader: { id: number; conn: BrokerConnection } | undefined;
    while (!this.stopped && performance.now() < deadline && this.acks.length < ACKS_MAX) {
      try {
        leader ??= await this.locate();
        const from = this.nextSeq;
        this.nextSeq += this.values.length;
        const records = encodeMessages(this.values.map((v, i) => ({ value: numbered(v, from + i) })), { timestampMs: Date.now() });
        const res = await leader.conn.produce({ acks: -1, timeoutMs: this.o.ackTimeoutMs, topics: [{ name: this.topic, partitions: [{ partition: TOPIC_PARTITION, records }] }] });
        const p = res.topics[0]!.partitions[0]!;
        if (p.errorCode === Errors.NONE.code) {
          this.acks.push({ atMs: performance.now(), brokerId: leader.id, from, count: this.values.length });
          continue;
        }
        this.failed(new SluiceError(errorForCode(p.errorCode), p.errorMessage ?? undefined));
      } catch (err) {
        this.failed(err);
      }
      leader = undefined;
      await sleep(this.o.retryBackoffMs);
    }
  }

  /** The partition's leader as a running broker sees it, and a connection to it. */
  private async locate(): Promise<{ id: number; conn: BrokerConnection }> {
    let last: unknown = new SluiceError(Errors.NETWORK_EXCEPTION, 'no running broker');
    for (const n of this.cluster.nodes.filter((x) => x.running)) {
      try {
        const md = await (await this.conns.get(n.brokerUrl)).metadata([this.topic]);
        const leaderId = md.topics[0]?.partitions.find((p) => p.partition === TOPIC_PARTITION)?.leader ?? -1;
        const url = md.brokers.find((b) => b.nodeId === leaderId)?.url;
        if (url === undefined) throw new SluiceError(Errors.LEADER_NOT_AVAILABLE, `${this.topic}-${TOPIC_PARTITION} has no leader in broker ${n.id}'s metadata`);
        return { id: leaderId, conn: await this.conns.get(url) };
      } catch (err) {
        last = err;
      }
    }
    throw last;
  }

  private failed(err: unknown): void {
    if (err instanceof SluiceError && err.retriable) {
      this.retriable.set(err.errorName, (this.retriable.get(err.errorName) ?? 0) + 1);
      return;
    }
    this.nonRetriable++;
    if (this.nonRetriableSamples.length < NON_RETRIABLE_SAMPLES_MAX) this.nonRetriableSamples.push((err as Error)?.message ?? String(err));
  }
}

/** A copy of `template` whose first 8 bytes are `seq` (uint64 big endian). */
function numbered(template: Buffer, seq: number): Buffer {
  const v = Buffer.from(template);
  v.writeBigUInt64BE(BigInt(seq), 0);
  return v;
}

// ---------------------------------------------------------------- (a) controller

async function controllerFailover(o: FailoverBenchOptions): Promise<ControllerBenchResult['failover']> {
  const cluster = await ProcessCluster.create({ size: 3, logLevel: 'warn' });
  try {
    cluster.startAll();
    const client = cluster.client();
    await cluster.waitForLeader(client, { timeoutMs: o.waitTimeoutMs });
    const beats = heartbeatLoop(client, await registerBrokers(client, o.sessionTimeoutMs));
    try {
      await waitFor('brokers unfenced', async () => (await describe(client)).brokers.every((b) => !b.fenced), { timeoutMs: o.waitTimeoutMs, intervalMs: 100 });
      return await measureFailover(cluster, client, { ...DEFAULT_CONTROLLER_BENCH, kills: o.controllerKills, waitTimeoutMs: o.waitTimeoutMs, log: o.log });
    } finally {
      await beats.stop();
    }
  } finally {
    await cluster.cleanup();
  }
}

// ---------------------------------------------------------------- (b), (c) partition leader

function describe(client: QuorumClient): Promise<ClusterDescription> {
  return client.controller<ClusterDescription>('describeCluster', {});
}

interface DataCluster { readonly cluster: ProcessCluster; readonly client: QuorumClient; readonly conns: BrokerConns }

/** A connection to a running broker other than `exceptId` (one just restarted may not listen yet). */
function runningBroker(dc: DataCluster, exceptId = -1): Promise<BrokerConnection> {
  const n = dc.cluster.nodes.find((x) => x.running && x.id !== exceptId);
  if (!n) throw new Error('no running broker');
  return dc.conns.get(n.brokerUrl);
}

/**
 * A fresh RF 3 topic (min.insync.replicas 2) whose partition is led by a broker that is not the
 * active controller, so a kill measures the partition's failover, not the controller's as well.
 */
async function freshTopic(dc: DataCluster, name: string, o: FailoverBenchOptions): Promise<number> {
  const controllerId = (await dc.cluster.waitForLeader(dc.client, { timeoutMs: o.waitTimeoutMs })).id;
  const ids = dc.cluster.nodes.map((n) => n.id);
  const leaderId = ids.find((id) => id !== controllerId)!;
  const conn = await runningBroker(dc);
  const res = await conn.admin(ApiKey.CreateTopics, { topics: [{ name, assignments: [[leaderId, ...ids.filter((id) => id !== leaderId)]], configs: { 'min.insync.replicas': '2' } }] });
  if (res.topics[0]?.errorCode !== 0) throw new Error(`CreateTopics ${name} failed: ${JSON.stringify(res.topics[0])}`);
  return waitForFullIsr(dc, name, -1, o);
}

/**
 * The partition's leader once its ISR is all its replicas and the leader serves it (answers
 * ListOffsets), asking a running broker other than `exceptId` for the metadata.
 */
function waitForFullIsr(dc: DataCluster, topic: string, exceptId: number, o: FailoverBenchOptions): Promise<number> {
  return waitFor(`${topic}-${TOPIC_PARTITION}: a serving leader and a full ISR`, async () => {
    const md = await (await runningBroker(dc, exceptId)).metadata([topic]);
    const p = md.topics[0]?.partitions.find((x) => x.partition === TOPIC_PARTITION);
    const url = md.brokers.find((b) => b.nodeId === p?.leader)?.url;
    if (!p || url === undefined || p.isr.length !== p.replicas.length) return undefined;
    const res = await (await dc.conns.get(url)).listOffsets({ topics: [{ name: topic, partitions: [{ partition: TOPIC_PARTITION, timestamp: LATEST_TIMESTAMP }] }] });
    return res.topics[0]?.partitions[0]?.errorCode === Errors.NONE.code ? p.leader : undefined;
  }, { timeoutMs: o.waitTimeoutMs, intervalMs: 50 });
}

/**
 * The sequence numbers in `topic`'s partition below its high watermark, read from its leader
 * (after the round: the producer stopped, the ISR full again).
 */
async function readBackSeqs(dc: DataCluster, topic: string): Promise<Set<number>> {
  const md = await (await runningBroker(dc)).metadata([topic]);
  const leaderId = md.topics[0]?.partitions.find((p) => p.partition === TOPIC_PARTITION)?.leader;
  const url = md.brokers.find((b) => b.nodeId === leaderId)?.url;
  if (url === undefined) throw new Error(`${topic}-${TOPIC_PARTITION} has no leader to read back from`);
  const conn = await dc.conns.get(url);
  const found = new Set<number>();
  let offset = 0;
  for (let round = 0; ; round++) {
    if (round >= READ_BACK_ROUNDS_MAX) throw new Error(`reading back ${topic} did not end`);
    const res = await conn.fetch({ maxWaitMs: 0, topics: [{ name: topic, partitions: [{ partition: TOPIC_PARTITION, fetchOffset: offset, partitionMaxBytes: READ_BACK_BYTES }] }] });
    const p = res.topics[0]?.partitions[0];
    if (!p || p.errorCode !== Errors.NONE.code) throw new Error(`read-back fetch ${topic}@${offset}: ${p?.errorMessage ?? `error ${p?.errorCode}`}`);
    if (offset >= p.highWatermark) return found;
    const buf = Buffer.from(p.records.buffer, p.records.byteOffset, p.records.byteLength);
    let next = offset;
    for (let pos = 0; pos + 12 <= buf.length;) {
      const size = batchSizeAt(buf, pos);
      if (pos + size > buf.length) break; // a partial last batch: fetched again from `next`
      for (const r of decodeFetchedRecords(buf.subarray(pos, pos + size), next)) {
        if (r.offset < p.highWatermark && r.value !== null && r.value.length >= 8) found.add(Number(r.value.readBigUInt64BE(0)));
      }
      next = Math.max(next, lastOffsetOf(buf, pos) + 1);
      pos += size;
    }
    if (next === offset) throw new Error(`read-back fetch ${topic}@${offset} below the high watermark ${p.highWatermark} returned no whole batch`);
    offset = next;
  }
}

/** The acknowledged records of `producer` missing from `topic` read back, logged when any are. */
async function checkLoss(dc: DataCluster, topic: string, producer: ContinuousProducer, o: FailoverBenchOptions): Promise<{ acked: number; lost: number }> {
  const loss = lostWrites(producer.acks, await readBackSeqs(dc, topic));
  if (loss.lost > 0) o.log(`  LOST ${loss.lost} of ${loss.acked} acknowledged records of ${topic}, e.g. sequence numbers ${loss.sample.join(', ')}`);
  return loss;
}

/** Restarts `nodeId` and waits until it is back in the ISR of `topic`'s partition. */
async function rejoin(dc: DataCluster, nodeId: number, topic: string, o: FailoverBenchOptions): Promise<void> {
  dc.cluster.node(nodeId).start();
  await waitForFullIsr(dc, topic, nodeId, o);
}

interface KillRound { ms: number; wasController: boolean; nonRetriable: number; acked: number; lost: number }

async function leaderKillRound(dc: DataCluster, round: number, o: FailoverBenchOptions): Promise<KillRound> {
  const topic = `leader-kill-${round}`;
  const leaderId = await freshTopic(dc, topic, o);
  const producer = new ContinuousProducer(dc.cluster, dc.conns, topic, o);
  try {
    const startedAt = performance.now();
    await producer.waitForAck('acknowledgements to flow', (a) => a.atMs - startedAt >= o.settleMs, o.waitTimeoutMs);
    const wasController = (await dc.cluster.waitForLeader(dc.client, { timeoutMs: o.waitTimeoutMs })).id === leaderId;
    const killedAt = performance.now();
    await dc.cluster.node(leaderId).kill('SIGKILL');
    const ack = await producer.waitForAck('an acknowledgement by the new leader', (a) => a.atMs > killedAt && a.brokerId !== leaderId, o.waitTimeoutMs);
    await producer.stop();
    const ms = Math.round(ack.atMs - killedAt);
    o.log(`  kill ${round + 1}/${o.leaderKills}: leader ${leaderId} → broker ${ack.brokerId} acknowledged after ${ms} ms`);
    await rejoin(dc, leaderId, topic, o);
    const loss = await checkLoss(dc, topic, producer, o);
    return { ms, wasController, nonRetriable: producer.nonRetriable, ...loss };
  } finally {
    await producer.stop();
  }
}

interface ShutdownRound { gapMs: number; baselineGapsMs: number[]; toNewLeaderMs: number; clean: boolean; producer: ContinuousProducer; acked: number; lost: number }

async function controlledShutdownRound(dc: DataCluster, round: number, o: FailoverBenchOptions): Promise<ShutdownRound> {
  const topic = `controlled-shutdown-${round}`;
  const leaderId = await freshTopic(dc, topic, o);
  const producer = new ContinuousProducer(dc.cluster, dc.conns, topic, o);
  try {
    const startedAt = performance.now();
    await producer.waitForAck('acknowledgements to flow', (a) => a.atMs - startedAt >= o.settleMs, o.waitTimeoutMs);
    const termAt = performance.now();
    const exited = dc.cluster.node(leaderId).kill('SIGTERM', o.stopTimeoutMs).then((code) => ({ code, atMs: performance.now() }));
    const ack = await producer.waitForAck('an acknowledgement by the new leader', (a) => a.atMs > termAt && a.brokerId !== leaderId, o.waitTimeoutMs);
    const exit = await exited;
    const endAt = Math.max(ack.atMs, exit.atMs) + o.settleMs;
    await producer.waitForAck('acknowledgements after the shutdown', (a) => a.atMs >= endAt, o.waitTimeoutMs);
    await producer.stop();
    const gapsIn = (from: number, to: number): number[] => {
      const times = producer.acks.map((a) => a.atMs).filter((t) => t >= from && t <= to);
      return times.slice(1).map((t, i) => t - times[i]!);
    };
    const gapMs = Math.round(Math.max(0, ...gapsIn(termAt - o.settleMs, endAt)));
    const toNewLeaderMs = Math.round(ack.atMs - termAt);
    o.log(`  SIGTERM ${round + 1}/${o.controlledShutdowns}: leader ${leaderId} → broker ${ack.brokerId} after ${toNewLeaderMs} ms; longest gap ${gapMs} ms; exit ${exit.code}`);
    await rejoin(dc, leaderId, topic, o);
    const loss = await checkLoss(dc, topic, producer, o);
    return { gapMs, baselineGapsMs: gapsIn(termAt - o.settleMs, termAt), toNewLeaderMs, clean: exit.code === 0, producer, ...loss };
  } finally {
    await producer.stop();
  }
}

async function startDataCluster(o: FailoverBenchOptions): Promise<DataCluster> {
  const cluster = await ProcessCluster.create({ size: 3, brokers: true, logLevel: 'warn' });
  cluster.startAll();
  const client = cluster.client();
  await cluster.waitForLeader(client, { timeoutMs: o.waitTimeoutMs });
  await waitFor('three unfenced brokers', async () => {
    const d = await describe(client);
    return d.brokers.length === 3 && d.brokers.every((b) => !b.fenced);
  }, { timeoutMs: o.waitTimeoutMs, intervalMs: 100 });
  const set: Record<string, string> = { 'broker.session.timeout.ms': String(o.sessionTimeoutMs) };
  if (o.suspectTimeoutMs !== undefined) set['broker.suspect.timeout.ms'] = String(o.suspectTimeoutMs);
  await client.controller('alterConfigs', { resources: [{ resourceType: 'cluster', resourceName: '', set }] });
  return { cluster, client, conns: new BrokerConns() };
}

async function partitionFailover(o: FailoverBenchOptions): Promise<Pick<FailoverBenchResult, 'leaderKill' | 'controlledShutdown'>> {
  const dc = await startDataCluster(o);
  try {
    o.log(`partition leader: ${o.leaderKills} SIGKILLs under an acks=all producer`);
    const kills = [];
    for (let r = 0; r < o.leaderKills; r++) kills.push(await leaderKillRound(dc, r, o));
    o.log(`controlled shutdown: ${o.controlledShutdowns} SIGTERMs under an acks=all producer`);
    const shutdowns: ShutdownRound[] = [];
    for (let r = 0; r < o.controlledShutdowns; r++) shutdowns.push(await controlledShutdownRound(dc, r, o));
    const samplesMs = kills.map((k) => k.ms);
    const retriableErrors: Record<string, number> = {};
    for (const s of shutdowns) for (const [name, n] of s.producer.retriable) retriableErrors[name] = (retriableErrors[name] ?? 0) + n;
    return {
      leaderKill: {
        kills: kills.length, sessionTimeoutMs: o.sessionTimeoutMs, samplesMs, p50Ms: quantile(samplesMs, 0.5), p99Ms: quantile(samplesMs, 0.99),
        maxMs: Math.max(0, ...samplesMs), suspectTimeoutMs: o.suspectTimeoutMs ?? 'default',
        afterSessionExpiryP50Ms: quantile(samplesMs, 0.5) - o.sessionTimeoutMs, victimWasController: kills.filter((k) => k.wasController).length,
        nonRetriableErrors: kills.reduce((n, k) => n + k.nonRetriable, 0),
        ackedRecords: kills.reduce((n, k) => n + k.acked, 0), lostWrites: kills.reduce((n, k) => n + k.lost, 0),
      },
      controlledShutdown: {
        shutdowns: shutdowns.length, gapsMs: shutdowns.map((s) => s.gapMs), maxGapMs: Math.max(0, ...shutdowns.map((s) => s.gapMs)),
        baselineGapP99Ms: quantile(shutdowns.flatMap((s) => s.baselineGapsMs), 0.99), toNewLeaderMs: shutdowns.map((s) => s.toNewLeaderMs),
        cleanExits: shutdowns.filter((s) => s.clean).length, retriableErrors,
        nonRetriableErrors: shutdowns.reduce((n, s) => n + s.producer.nonRetriable, 0),
        nonRetriableSamples: shutdowns.flatMap((s) => s.producer.nonRetriableSamples).slice(0, NON_RETRIABLE_SAMPLES_MAX),
        ackedRecords: shutdowns.reduce((n, s) => n + s.acked, 0), lostWrites: shutdowns.reduce((n, s) => n + s.lost, 0),
      },
    };
  } catch (err) {
    o.log(dc.cluster.dumpLogs());
    throw err;
  } finally {
    dc.conns.closeAll();
    await dc.cluster.cleanup();
  }
}

export async function runFailoverBench(opts: Partial<FailoverBenchOptions> = {}): Promise<FailoverBenchResult> {
  const o = { ...DEFAULT_FAILOVER_BENCH, ...opts };
  o.log(`controller: ${o.controllerKills} SIGKILLs of the active controller`);
  const controller = o.controllerKills > 0 ? await controllerFailover(o) : { kills: 0, medianMs: 0, p99Ms: 0, maxMs: 0, samplesMs: [] };
  const partition = await partitionFailover(o);
  const kafkaLeaderKill: KafkaLeaderKillResult = o.kafkaLeaderKills > 0
    ? await kafkaLeaderKills({ ...DEFAULT_KAFKA_LEADER_KILL, kills: o.kafkaLeaderKills, ratePerS: o.kafkaRatePerS, waitTimeoutMs: o.waitTimeoutMs, settleMs: o.settleMs, log: o.log })
    : { skipped: 'not asked for (--kafka-leader-kills 0)' };
  return { controller, ...partition, kafkaLeaderKill, producer: { batchRecords: o.batchRecords, valueBytes: o.valueBytes, inFlight: 1, acks: 'all', minInsyncReplicas: 2 } };
}

export function failoverReport(r: FailoverBenchResult): string {
  const l = r.leaderKill;
  const c = r.controlledShutdown;
  const errors = Object.entries(c.retriableErrors).map(([name, n]) => `${name} ×${n}`).join(', ') || 'none';
  return [
    `Failover (3 nodes on loopback; producer: batches of ${r.producer.batchRecords} × ${r.producer.valueBytes} B, acks=all, RF 3, min ISR 2, one in flight)`,
    `  controller SIGKILL (${r.controller.kills})        → CreateTopics committed: median ${r.controller.medianMs} ms, p99 ${r.controller.p99Ms} ms, max ${r.controller.maxMs} ms`,
    `  partition leader SIGKILL (${l.kills}) → first ack by the new leader: p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms, max ${l.maxMs} ms`
      + ` (session timeout ${l.sessionTimeoutMs} ms, suspect timeout ${l.suspectTimeoutMs}${l.suspectTimeoutMs === 'default' ? '' : ' ms'});`
      + ` samples ${l.samplesMs.join(', ')} ms; non-retriable errors ${l.nonRetriableErrors}; lost writes ${l.lostWrites} of ${l.ackedRecords} acknowledged`,
    `  partition leader SIGTERM (${c.shutdowns}) → longest gap between acks ${c.maxGapMs} ms (per round ${c.gapsMs.join(', ')} ms; p99 gap before ${c.baselineGapP99Ms} ms);`
      + ` new leader acked after ${c.toNewLeaderMs.join(', ')} ms; ${c.cleanExits}/${c.shutdowns} clean exits;`
      + ` retriable errors: ${errors}; non-retriable: ${c.nonRetriableErrors}${c.nonRetriableSamples.length > 0 ? ` (${c.nonRetriableSamples[0]})` : ''};`
      + ` lost writes ${c.lostWrites} of ${c.ackedRecords} acknowledged`,
    kafkaLine(r.kafkaLeaderKill, l),
  ].join('\n');
}

function kafkaLine(k: KafkaLeaderKillResult, sluice: FailoverBenchResult['leaderKill']): string {
  if ('skipped' in k) return `  Apache Kafka R3 partition leader SIGKILL: skipped (${k.skipped})`;
  return `  Apache Kafka ${k.version} R3 partition leader SIGKILL (${k.kills}) → first ack by the new leader: p50 ${k.p50Ms} ms, p99 ${k.p99Ms} ms, max ${k.maxMs} ms`
    + ` (Kafka's defaults: broker.session.timeout.ms 9000; producer ${Object.entries(k.producer).map(([n, v]) => `${n}=${v}`).join(' ')}, ${k.ratePerS} records/s);`
    + ` samples ${k.samplesMs.join(', ')} ms; victim was the active controller ${k.victimWasController}×; failed sends ${k.sendErrors};`
    + ` lost writes ${k.lost} of ${k.acked} acknowledged, duplicates ${k.duplicates}`
    + (sluice.kills > 0 ? `\n  side by side, p50 / p99: Sluice ${sluice.p50Ms} / ${sluice.p99Ms} ms, Kafka ${k.p50Ms} / ${k.p99Ms} ms` : '');
}

if (isMain(import.meta.url)) {
  const controllerKills = argValue('--kills');
  const leaderKills = argValue('--leader-kills');
  const controlledShutdowns = argValue('--shutdowns');
  const sessionTimeoutMs = argValue('--session-timeout-ms');
  const suspectTimeoutMs = argValue('--suspect-timeout-ms');
  const kafkaLeaderKills = argValue('--kafka-leader-kills');
  const kafkaRatePerS = argValue('--kafka-rate');
  const result = await runFailoverBench({
    ...(kafkaLeaderKills !== undefined ? { kafkaLeaderKills } : {}), ...(kafkaRatePerS !== undefined ? { kafkaRatePerS } : {}),
    ...(suspectTimeoutMs !== undefined ? { suspectTimeoutMs } : {}),
    ...(controllerKills !== undefined ? { controllerKills } : {}), ...(leaderKills !== undefined ? { leaderKills } : {}),
    ...(controlledShutdowns !== undefined ? { controlledShutdowns } : {}), ...(sessionTimeoutMs !== undefined ? { sessionTimeoutMs } : {}),
  });
  process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(result, null, 2)}\n` : `${failoverReport(result)}\n`);
}
