// Apache Kafka's side of issue 19's failover side by side (bench/failover.bench.ts
// --kafka-leader-kills N): Kafka R3 (three KRaft combined nodes on loopback,
// bench/peers/kafka.ts, every broker config at Kafka's default — so
// broker.session.timeout.ms 9000, broker.heartbeat.interval.ms 2000), and per
// round, as Sluice's side does it:
//
//   1. a fresh topic, 1 partition, RF 3, min.insync.replicas 2, whose preferred
//      (so first) leader is not the active controller: the kill measures the
//      partition's failover, not the controller's as well;
//   2. the Java driver's `failover` mode: one KafkaProducer (acks=all,
//      enable.idempotence=true — both Kafka 4.x's defaults, stated — and every
//      other config default: linger.ms 5, batch.size 16384, max.in.flight 5,
//      delivery.timeout.ms 120000, so records outlive the outage) sending
//      numbered records at `ratePerS`, a line per acknowledgement;
//   3. after `settleMs` of acknowledgements, SIGKILL of the leader's JVM by PID;
//   4. the first acknowledgement by the new leader (failover-analysis.ts:
//      after the kill, in a later leader epoch than the last pre-kill one), then
//      `settleMs` more, then the producer flushes and reads the partition
//      back: every acknowledged number must be there (lost writes = 0);
//   5. the victim restarts on its data dir and the round ends once it is back
//      in the ISR (a bounded wait on that condition).
//
// Bounded: each round's producer by `roundSecondsMax`, every wait by
// `waitTimeoutMs`; every JVM is stopped by PID (the deployment's nodes at the
// end, the producer when its stdin closes or, failing that, by SIGKILL).

import type { ChildProcess } from 'node:child_process';
import { firstAckByNewLeader, parseFailoverLine, quantile, type KafkaAck, type KafkaFailoverResult } from '../failover-analysis.js';
import { driverArgs, spawnDriver } from './kafka-driver.js';
import { KafkaDeployment, kafkaAvailability } from './kafka.js';

const POLL_MS = 5;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The failover producer's configs: Kafka 4.x's defaults, written out (nothing else is set). */
export const FAILOVER_PRODUCER: Readonly<Record<string, string>> = { acks: 'all', 'enable.idempotence': 'true' };

export interface KafkaLeaderKillOptions {
  readonly kills: number;
  readonly ratePerS: number;
  readonly valueBytes: number;
  readonly settleMs: number;
  readonly waitTimeoutMs: number;
  readonly roundSecondsMax: number;
  readonly log: (line: string) => void;
}

export const DEFAULT_KAFKA_LEADER_KILL: Omit<KafkaLeaderKillOptions, 'kills' | 'log'> = {
  ratePerS: 1_000,
  valueBytes: 100,
  settleMs: 1_000,
  waitTimeoutMs: 120_000,
  roundSecondsMax: 300,
};

export type KafkaLeaderKillResult =
  | { readonly skipped: string }
  | {
    readonly version: string;
    readonly kills: number;
    /** SIGKILL → first acknowledgement by the new leader, per round. */
    readonly samplesMs: readonly number[];
    readonly p50Ms: number;
    readonly p99Ms: number;
    readonly maxMs: number;
    /** Rounds whose victim was the active controller at the kill (0 unless the controller moved). */
    readonly victimWasController: number;
    readonly acked: number;
    readonly lost: number;
    readonly duplicates: number;
    readonly sendErrors: number;
    readonly ratePerS: number;
    readonly producer: Readonly<Record<string, string>>;
  };

/** The driver's `failover` mode on partition 0 of `topic`, until stop(). */
class FailoverProducer {
  readonly acks: KafkaAck[] = [];
  sendErrors = 0;
  startedAtMs: number | undefined;
  private result: KafkaFailoverResult | undefined;
  private error: string | undefined;
  private output = '';
  private readonly child: ChildProcess;
  private readonly closed: Promise<number | null>;

  constructor(bootstrap: string, topic: string, o: KafkaLeaderKillOptions) {
    this.child = spawnDriver('failover', driverArgs({ bootstrap, topic, rate: o.ratePerS, seconds: o.roundSecondsMax, valueBytes: o.valueBytes }, FAILOVER_PRODUCER));
    let partial = '';
    this.child.stdout!.on('data', (b: Buffer) => {
      const lines = (partial + b.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) this.onLine(line);
    });
    this.child.stderr!.on('data', (b: Buffer) => { this.output = (this.output + b.toString('utf8')).slice(-4_000); });
    this.closed = new Promise((resolve) => this.child.once('close', (code) => resolve(code)));
  }

  private onLine(line: string): void {
    const e = parseFailoverLine(line);
    if (e === null) return;
    if (e.event === 'ack') this.acks.push({ atMs: e.atMs, seq: e.seq, offset: e.offset });
    else if (e.event === 'started') this.startedAtMs = e.atMs;
    else if (e.event === 'send-error') this.sendErrors++;
    else if (e.event === 'error') this.error = e.message;
    else this.result = e;
  }

  /** The first acknowledgement matching `pred`, once there is one; fails at once if the driver exited. */
  async waitForAck(what: string, pred: (a: KafkaAck) => boolean, timeoutMs: number): Promise<KafkaAck> {
    const deadline = performance.now() + timeoutMs;
    // Acknowledgements arrive in order; each is tested once.
    for (let next = 0; ; await sleep(POLL_MS)) {
      for (; next < this.acks.length; next++) if (pred(this.acks[next]!)) return this.acks[next]!;
      this.throwIfExited(what);
      if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
  }

  /** Resolves once the producer sends (its metadata loaded); the driver's time of that. */
  async whenStarted(timeoutMs: number): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    for (; this.startedAtMs === undefined; await sleep(POLL_MS)) {
      this.throwIfExited('the failover producer to start');
      if (performance.now() > deadline) throw new Error(`the Kafka failover driver did not start within ${timeoutMs} ms`);
    }
    return this.startedAtMs;
  }

  private throwIfExited(what: string): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      throw new Error(`the Kafka failover driver exited (${this.child.exitCode ?? this.child.signalCode}) while waiting for ${what}: ${this.error ?? this.output.slice(-800)}`);
    }
  }

  /** The highest offset acknowledged at or before `atMs` (-1: none). */
  maxOffsetUntil(atMs: number): number {
    let max = -1;
    for (const a of this.acks) if (a.atMs <= atMs && a.offset > max) max = a.offset;
    return max;
  }

  /** Closes its stdin (the driver flushes and reads the partition back), SIGKILL by PID after `timeoutMs`; the read-back. */
  async stop(timeoutMs: number): Promise<KafkaFailoverResult> {
    this.child.stdin?.end();
    const timer = setTimeout(() => {
      if (this.child.pid !== undefined && this.child.exitCode === null) {
        try { process.kill(this.child.pid, 'SIGKILL'); } catch { /* gone */ }
      }
    }, timeoutMs);
    const code = await this.closed.finally(() => clearTimeout(timer));
    if (this.result === undefined) throw new Error(`the Kafka failover driver exited ${code} without a result: ${this.error ?? this.output.slice(-800)}`);
    return this.result;
  }
}

interface Round { readonly ms: number; readonly wasController: boolean; readonly result: KafkaFailoverResult; readonly sendErrors: number }

async function killRound(d: KafkaDeployment, round: number, o: KafkaLeaderKillOptions): Promise<Round> {
  const controller = await d.activeController();
  const victim = d.nodeIds.find((id) => id !== controller)!;
  const topic = await d.createTopic('failover', 1, [victim, ...d.nodeIds.filter((id) => id !== victim)]);
  const p = new FailoverProducer(d.bootstrap, topic, o);
  let stopped = false;
  try {
    const from = await p.whenStarted(o.waitTimeoutMs);
    await p.waitForAck('acknowledgements to flow', (a) => a.atMs - from >= o.settleMs, o.waitTimeoutMs);
    const now = await d.leaderOf(topic);
    if (now.leader < 0) throw new Error(`${topic} has no leader before the kill`);
    const killedAtMs = Date.now();
    await d.killNode(now.leader);
    const maxBefore = p.maxOffsetUntil(killedAtMs);
    const next = await p.waitForAck('an acknowledgement after the kill', (a) => a.atMs > killedAtMs && a.offset > maxBefore, o.waitTimeoutMs);
    await p.waitForAck('acknowledgements after the failover', (a) => a.atMs >= next.atMs + o.settleMs, o.waitTimeoutMs);
    stopped = true;
    const result = await p.stop(o.waitTimeoutMs);
    const first = firstAckByNewLeader(p.acks, killedAtMs, result.epochs);
    if (first === undefined) throw new Error(`${topic}: no acknowledgement in a leader epoch after the kill's (epochs ${JSON.stringify(result.epochs)})`);
    const ms = Math.round(first.ack.atMs - killedAtMs);
    o.log(`  Kafka kill ${round + 1}/${o.kills}: leader ${now.leader} (epoch ${first.preKillEpoch}) → epoch ${first.epoch} acknowledged after ${ms} ms;`
      + ` ${result.acked} acked, ${result.lost} lost, ${result.duplicates} duplicated, ${p.sendErrors} failed sends`);
    d.restartNode(now.leader);
    await d.awaitIsr(topic, d.nodeIds.length, o.waitTimeoutMs);
    return { ms, wasController: now.controller === now.leader, result, sendErrors: p.sendErrors };
  } finally {
    if (!stopped) await p.stop(5_000).catch(() => undefined);
  }
}

/** Kafka R3's leader kills (see the header), or why they were skipped (no jars, no Java). */
export async function kafkaLeaderKills(o: KafkaLeaderKillOptions): Promise<KafkaLeaderKillResult> {
  const a = kafkaAvailability();
  if (!a.available) {
    const reason = a.reason ?? 'Kafka is not available';
    o.log(`skipping Apache Kafka: ${reason}`);
    return { skipped: reason };
  }
  const d = new KafkaDeployment({ variant: 'R3 failover', nodes: 3, producer: FAILOVER_PRODUCER });
  o.log(`Apache Kafka ${a.version ?? ''} R3: ${o.kills} SIGKILLs of a partition leader under an acks=all idempotent producer (${o.ratePerS} records/s)`);
  await d.start();
  try {
    const rounds: Round[] = [];
    for (let r = 0; r < o.kills; r++) rounds.push(await killRound(d, r, o));
    const samplesMs = rounds.map((r) => r.ms);
    return {
      version: a.version ?? 'unknown', kills: rounds.length, samplesMs, p50Ms: quantile(samplesMs, 0.5), p99Ms: quantile(samplesMs, 0.99),
      maxMs: Math.max(0, ...samplesMs), victimWasController: rounds.filter((r) => r.wasController).length,
      acked: rounds.reduce((n, r) => n + r.result.acked, 0), lost: rounds.reduce((n, r) => n + r.result.lost, 0),
      duplicates: rounds.reduce((n, r) => n + r.result.duplicates, 0), sendErrors: rounds.reduce((n, r) => n + r.sendErrors, 0),
      ratePerS: o.ratePerS, producer: FAILOVER_PRODUCER,
    };
  } finally {
    await d.stop();
  }
}
