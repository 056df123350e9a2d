// The client workload of a simulated cluster run: the REAL client classes
// (Client, Producer, Consumer from src/client/) living on client hosts of the
// simulated world (their clock, scheduler, rng and WebSocket factory come
// from SimCluster.client(name)), recording every operation in the chaos
// history format (test/chaos/history.ts) so the one checker reads it:
//   - idempotent producers, acks=all, writing unique values
//     `p<k>.<instance>-<topic>-<partition>-<seq>` round-robin over every
//     workload partition (RF 3, min.insync.replicas 2), a bounded number of
//     sends in flight per partition; an instance lives a while and is then
//     closed and replaced (a new producer id);
//   - consumer groups with manual commits, recording each delivered batch
//     (ReadOp), explicit seeks back (SeekOp), commits (CommitOp) and the
//     assignment of each join (AssignOp); members are replaced now and then,
//     so groups rebalance under the faults. A member instance commits only
//     past what it committed (or tried to) itself — so its own seeks back
//     never regress — but not past the rest of its group: a stale member
//     committing below a newer owner is the commit the coordinator must
//     refuse (ILLEGAL_GENERATION), and the checker's commit-regress sees it
//     if it does not.
// History times are the world's true time (SimCluster.now()), one time line
// for every host; a client's own clock may be offset, as a real one is.

import { Client, Errors, isSluiceError, type Consumer, type EachBatchPayload, type Producer } from '../../../src/index.js';
import type { ClientOptions } from '../../../src/client/client.js';
import type { Rng } from '../../../src/util/rng.js';
import { AckTracer, TracingClient } from '../../chaos/ack-tracer.js';
import { SendPacer } from '../../chaos/workload-producer.js';
import type { CommitOp, HistoryEntry, Outcome, SendOp } from '../../chaos/history.js';
import type { ClientEnv, SimCluster } from './api.js';

/** The members' group session timeout (faults.ts pauses a consumer host for longer). */
export const CONSUMER_SESSION_TIMEOUT = 6_000;

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export interface SimWorkloadOptions {
  readonly prefix?: string;
  readonly topics?: number;
  readonly partitionsPerTopic?: number;
  readonly producers?: number;
  readonly groups?: number;
  readonly membersPerGroup?: number;
  /** Records/s per producer. */
  readonly ratePerSecond?: number;
  readonly inFlightPerPartitionMax?: number;
  /** Producer and consumer instance lifetimes (ms of the client's clock). */
  readonly lifetimeMs?: { readonly min: number; readonly max: number };
  readonly deliveryTimeoutMs?: { readonly min: number; readonly max: number };
  readonly commitIntervalMs?: number;
  readonly seekProbability?: number;
}

const DEFAULTS: Required<SimWorkloadOptions> = {
  prefix: 'sim',
  topics: 2,
  partitionsPerTopic: 2,
  producers: 2,
  groups: 1,
  membersPerGroup: 2,
  ratePerSecond: 40,
  inFlightPerPartitionMax: 8,
  lifetimeMs: { min: 8_000, max: 25_000 },
  deliveryTimeoutMs: { min: 3_000, max: 15_000 },
  commitIntervalMs: 500,
  seekProbability: 0.01,
};

export const TOPIC_CONFIGS = { 'min.insync.replicas': '2' } as const;
export const REPLICATION_FACTOR = 3;
const TICK_MS = 50;
const CLOSE_TIMEOUT_MS = 10_000;
const SEEK_BACK_MAX = 20;
/** Errors that leave a send's fate open (the checker decides the rest). */
const INDEFINITE_CODES: ReadonlySet<number> = new Set([Errors.REQUEST_TIMED_OUT.code, Errors.NETWORK_EXCEPTION.code]);

export function outcomeOf(err: unknown): Outcome {
  if (isSluiceError(err)) return INDEFINITE_CODES.has(err.code) ? { type: 'unknown', error: err.message } : { type: 'fail', error: err.message };
  return { type: 'unknown', error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
}

export interface SimWorkloadCounts {
  sends: number;
  sendsOk: number;
  sendsFailed: number;
  sendsUnknown: number;
  reads: number;
  records: number;
  commits: number;
  commitsOk: number;
  joins: number;
  producerInstances: number;
  consumerSessions: number;
}

function sleep(env: ClientEnv, ms: number): Promise<void> {
  return new Promise<void>((resolve) => { env.scheduler.schedule(Math.max(0, ms), resolve); });
}

function clientOptions(env: ClientEnv, clientId: string): ClientOptions {
  // clock and rng are the client's own injected time and randomness (lane client); extra fields are ignored by older clients.
  return {
    bootstrap: env.bootstrap, clientId, webSocketFactory: env.webSocketFactory, scheduler: env.scheduler, rng: env.rng.fork(),
    requestTimeoutMs: 5_000, connectTimeoutMs: 2_000, metadataMaxAgeMs: 2_000,
    retry: { retries: 5, initialRetryTimeMs: 50, maxRetryTimeMs: 500 },
    ...({ clock: env.clock } as object),
  } as ClientOptions;
}

export class SimWorkload {
  readonly history: HistoryEntry[] = [];
  readonly counts: SimWorkloadCounts = {
    sends: 0, sendsOk: 0, sendsFailed: 0, sendsUnknown: 0, reads: 0, records: 0, commits: 0, commitsOk: 0, joins: 0, producerInstances: 0, consumerSessions: 0,
  };
  private readonly o: Required<SimWorkloadOptions>;
  private readonly partitionCounts = new Map<string, number>();
  private readonly running: Promise<void>[] = [];
  private stopped = false;

  constructor(private readonly cluster: SimCluster, private readonly rng: Rng, opts: SimWorkloadOptions = {}) {
    this.o = { ...DEFAULTS, ...definedOnly(opts) };
    for (let t = 0; t < this.o.topics; t++) this.partitionCounts.set(`${this.o.prefix}-t${t}`, this.o.partitionsPerTopic);
  }

  /** Called with every entry as it is recorded (the on-the-fly monitors). */
  onRecord: (e: HistoryEntry) => void = () => undefined;

  record = (e: HistoryEntry): void => {
    this.history.push(e);
    this.onRecord(e);
  };

  partitions(): TopicPartition[] {
    return [...this.partitionCounts].flatMap(([topic, n]) => Array.from({ length: n }, (_, partition) => ({ topic, partition })));
  }

  topics(): Array<{ topic: string; partitions: number }> {
    return [...this.partitionCounts].map(([topic, partitions]) => ({ topic, partitions }));
  }

  addPartitions(topic: string, count: number): void {
    if (count > (this.partitionCounts.get(topic) ?? 0)) this.partitionCounts.set(topic, count);
  }

  /** Creates the topics through the real admin path and waits for full ISRs. */
  async setup(): Promise<void> {
    for (const topic of this.partitionCounts.keys()) {
      await this.cluster.await(this.cluster.createTopic(topic, this.o.partitionsPerTopic, REPLICATION_FACTOR, { ...TOPIC_CONFIGS }), 60_000);
    }
    const full = (): boolean => this.partitions().every((tp) => {
      const st = this.cluster.partitionState(tp.topic, tp.partition);
      return st !== undefined && st.leader >= 0 && st.isr.length === REPLICATION_FACTOR;
    });
    if (!(await this.cluster.runUntil(full, 60_000))) throw new Error('workload topics did not get full ISRs within 60 s');
  }

  start(): void {
    for (let i = 0; i < this.o.producers; i++) this.running.push(this.producerLoop(i, this.rng.fork()));
    let host = 0;
    for (let g = 0; g < this.o.groups; g++) {
      for (let m = 0; m < this.o.membersPerGroup; m++) this.running.push(this.memberLoop(`${this.o.prefix}-c${host++}`, `${this.o.prefix}-g${g}`, m, this.rng.fork()));
    }
  }

  /** Stops every worker and runs the world until each has finished (bounded). */
  async stop(timeoutMs = 60_000): Promise<void> {
    this.stopped = true;
    await this.cluster.await(Promise.all(this.running).then(() => undefined), timeoutMs);
  }

  /** Client host names (partitions may cut them off). */
  clientHosts(): string[] {
    return [
      ...Array.from({ length: this.o.producers }, (_, i) => `${this.o.prefix}-p${i}`),
      ...Array.from({ length: this.o.groups * this.o.membersPerGroup }, (_, i) => `${this.o.prefix}-c${i}`),
    ];
  }

  // ---- producers ----

  private async producerLoop(index: number, rng: Rng): Promise<void> {
    const env = this.cluster.client(`${this.o.prefix}-p${index}`);
    const tracer = new AckTracer();
    for (let instance = 1; !this.stopped; instance++) {
      this.counts.producerInstances++;
      await this.producerInstance(env, tracer, `p${index}.${instance}`, rng).catch((err: unknown) => {
        this.cluster.note(`producer p${index}.${instance} ended: ${(err as Error).message}`);
      });
      if (!this.stopped) await sleep(env, rng.range(10, 200));
    }
  }

  private async producerInstance(env: ClientEnv, tracer: AckTracer, name: string, rng: Rng): Promise<void> {
    const client = new TracingClient(clientOptions(env, name), tracer);
    const producer = client.producer({
      idempotent: true, acks: -1, lingerMs: 2, ackTimeoutMs: 3_000, rng: rng.fork(),
      deliveryTimeoutMs: rng.range(this.o.deliveryTimeoutMs.min, this.o.deliveryTimeoutMs.max),
      maxBlockMs: 5_000, retryBackoffMs: 50, retryBackoffMaxMs: 500,
    });
    const pacer = new SendPacer<TopicPartition>(this.o.inFlightPerPartitionMax);
    const inFlight = new Set<Promise<void>>();
    const endMs = env.clock.monotonicMs() + rng.range(this.o.lifetimeMs.min, this.o.lifetimeMs.max);
    const perTick = (this.o.ratePerSecond * TICK_MS) / 1000;
    try {
      while (!this.stopped && env.clock.monotonicMs() < endMs) {
        for (const { tp, seq, done } of pacer.tick(this.partitions(), perTick)) {
          const p = this.send(producer, tracer, name, tp, seq).finally(() => {
            done();
            inFlight.delete(p);
          });
          inFlight.add(p);
        }
        await sleep(env, TICK_MS);
      }
      await Promise.all(inFlight);
      await Promise.race([producer.close().catch(() => undefined), sleep(env, CLOSE_TIMEOUT_MS)]);
    } finally {
      client.close();
    }
  }

  private async send(producer: Producer, tracer: AckTracer, name: string, tp: TopicPartition, seq: number): Promise<void> {
    const { topic, partition } = tp;
    const value = `${name}-${topic}-${partition}-${seq}`;
    const invokeMs = this.cluster.now();
    this.counts.sends++;
    let op: SendOp;
    try {
      const [meta] = await producer.send({ topic, messages: [{ value, partition }] });
      const offset = meta && meta.offset >= 0 ? meta.offset : undefined;
      const broker = offset === undefined ? undefined : tracer.take(topic, partition, offset);
      op = {
        kind: 'send', invokeMs, completeMs: this.cluster.now(), producer: name, topic, partition, seq, value, outcome: { type: 'ok' },
        ...(offset === undefined ? {} : { offset }), ...(broker === undefined ? {} : { broker }),
      };
      this.counts.sendsOk++;
    } catch (err) {
      const outcome = outcomeOf(err);
      if (outcome.type === 'fail') this.counts.sendsFailed++;
      else this.counts.sendsUnknown++;
      op = { kind: 'send', invokeMs, completeMs: this.cluster.now(), producer: name, topic, partition, seq, value, outcome };
    }
    this.record(op);
  }

  // ---- consumers ----

  private async memberLoop(host: string, group: string, index: number, rng: Rng): Promise<void> {
    const env = this.cluster.client(host);
    for (let instance = 1; !this.stopped; instance++) {
      this.counts.consumerSessions++;
      await this.memberSession(env, group, `${group}-m${index}.${instance}`, new Map<string, number>(), rng).catch((err: unknown) => {
        this.cluster.note(`member ${group}-m${index}.${instance} ended: ${(err as Error).message}`);
      });
      if (!this.stopped) await sleep(env, rng.range(10, 300));
    }
  }

  private async memberSession(env: ClientEnv, group: string, member: string, committed: Map<string, number>, rng: Rng): Promise<void> {
    const client = new Client(clientOptions(env, member));
    const consumer = client.consumer({
      groupId: group, autoCommit: false, autoOffsetReset: 'earliest', sessionTimeoutMs: CONSUMER_SESSION_TIMEOUT, heartbeatIntervalMs: 500,
      rebalanceTimeoutMs: 10_000, metadataMaxAgeMs: 2_000, maxWaitMs: 100, maxBytesPerPartition: 32 * 1024,
    });
    const state = { session: `${member}/j0`, generation: -1, joins: 0, lastCommitMs: new Map<string, number>() };
    consumer.on('group.join', (e) => {
      state.generation = e.generationId;
      state.session = `${member}/j${++state.joins}`;
      this.counts.joins++;
      const now = this.cluster.now();
      this.record({
        kind: 'assign', invokeMs: now, completeMs: now, session: state.session, group, generation: e.generationId, member: e.memberId,
        partitions: e.assignment.flatMap((a) => a.partitions.map((partition) => ({ topic: a.topic, partition }))),
      });
    });
    let crashed = false;
    consumer.on('crash', () => { crashed = true; });
    const endMs = env.clock.monotonicMs() + rng.range(this.o.lifetimeMs.min, this.o.lifetimeMs.max);
    try {
      await consumer.subscribe({ topics: [...this.partitionCounts.keys()], fromBeginning: true });
      await consumer.run({ eachBatch: (p) => this.onBatch(consumer, group, state, committed, rng, p) });
      while (!this.stopped && !crashed && env.clock.monotonicMs() < endMs) await sleep(env, 250);
    } finally {
      await Promise.race([consumer.close().catch(() => undefined), sleep(env, CLOSE_TIMEOUT_MS)]);
      client.close();
    }
  }

  private async onBatch(
    consumer: Consumer, group: string, state: { session: string; generation: number; lastCommitMs: Map<string, number> },
    committed: Map<string, number>, rng: Rng, p: EachBatchPayload,
  ): Promise<void> {
    const { batch } = p;
    const session = state.session;
    if (batch.messages.length === 0) return;
    const now = this.cluster.now();
    const records = batch.messages.map((m) => ({ offset: m.offset, value: m.value?.toString('utf8') ?? '' }));
    this.record({ kind: 'read', invokeMs: now, completeMs: now, session, group, generation: state.generation, topic: batch.topic, partition: batch.partition, records });
    this.counts.reads++;
    this.counts.records += records.length;
    if (rng.chance(this.o.seekProbability)) {
      const offset = Math.max(0, records[0]!.offset - rng.range(1, SEEK_BACK_MAX));
      consumer.seek({ topic: batch.topic, partition: batch.partition, offset });
      this.record({ kind: 'seek', invokeMs: now, completeMs: this.cluster.now(), session, group, topic: batch.topic, partition: batch.partition, offset });
      return;
    }
    const key = `${batch.topic}-${batch.partition}`;
    const next = records[records.length - 1]!.offset + 1;
    const last = state.lastCommitMs.get(key) ?? -Infinity;
    // Only past what this member instance committed (or tried to) itself: after a seek back it waits until it is past
    // again. Not past the group's: a stale member's commit below a newer owner's is what the coordinator must refuse.
    if (now - last < this.o.commitIntervalMs || next <= (committed.get(key) ?? 0) || p.isStale()) return;
    state.lastCommitMs.set(key, now);
    committed.set(key, Math.max(next, committed.get(key) ?? 0));
    const invokeMs = this.cluster.now();
    let outcome: CommitOp['outcome'];
    try {
      await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }]);
      outcome = { type: 'ok' };
      this.counts.commitsOk++;
    } catch (err) {
      outcome = outcomeOf(err);
    }
    this.counts.commits++;
    this.record({
      kind: 'commit', invokeMs, completeMs: this.cluster.now(), session, group, generation: state.generation, topic: batch.topic, partition: batch.partition, offset: next, outcome,
    });
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
