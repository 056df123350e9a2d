// The client workload of a chaos run, running throughout the faults:
// idempotent producers (workload-producer.ts) writing unique values to
// several RF=3 topics with min.insync.replicas=2; consumers in two groups
// with manual commits (workload-consumer.ts); and an admin client creating
// and deleting topics of its own (never produced into). Everything goes
// through the proxy's client listeners and into the history.
//
// The workload owns the list of its topics and their partition counts:
// producers write to every partition it lists, and the nemesis tells it when
// a partition-count increase went through (addPartitions).
//
// Rates are bounded (records/s per producer, sends in flight per partition),
// and stop() waits for every operation in flight to resolve, bounded by the
// producers' delivery timeout and the consumers' close timeout.

import { Client } from '../../src/index.js';
import type { Rng } from '../../src/util/rng.js';
import { waitFor } from '../integration/harness.js';
import type { AdminOp, HistoryEntry } from './history.js';
import { ConsumerMember, type ConsumerSettings, type GroupCommits } from './workload-consumer.js';
import { ProducerWorker, outcomeOf, type ProducerSettings } from './workload-producer.js';
import { LoopWorker } from './worker.js';

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
  /** The topic is compacted (cleanup.policy=compact): producers write keyed records to it. */
  readonly compacted?: boolean;
}

/** What the workers share. */
export interface WorkloadDeps {
  readonly bootstrap: readonly string[];
  /** ms since the run started. */
  readonly clock: () => number;
  readonly record: (e: HistoryEntry) => void;
  /** Every workload partition now (grows when partitions are added). */
  readonly partitions: () => readonly TopicPartition[];
  readonly topicNames: () => string[];
}

export interface WorkloadOptions {
  readonly bootstrap: readonly string[];
  readonly clock: () => number;
  readonly record: (e: HistoryEntry) => void;
  readonly rng: Rng;
  /** Prefix of every topic name (unique per run). */
  readonly prefix?: string;
  readonly topics?: number;
  readonly partitionsPerTopic?: number;
  readonly producers?: number;
  readonly groups?: number;
  readonly membersPerGroup?: number;
  readonly producer?: Partial<ProducerSettings>;
  readonly consumer?: Partial<ConsumerSettings>;
  /** Pause between two admin operations. */
  readonly adminIntervalMs?: number;
}

interface WorkloadShape {
  readonly prefix: string;
  readonly topics: number;
  readonly partitionsPerTopic: number;
  readonly producers: number;
  readonly groups: number;
  readonly membersPerGroup: number;
  readonly adminIntervalMs: number;
  readonly producer: ProducerSettings;
  readonly consumer: ConsumerSettings;
}

export const WORKLOAD_DEFAULTS: WorkloadShape = {
  prefix: 'chaos',
  topics: 3,
  partitionsPerTopic: 2,
  producers: 3,
  groups: 2,
  membersPerGroup: 2,
  adminIntervalMs: 3_000,
  producer: { ratePerSecond: 100, inFlightPerPartitionMax: 20, lifetimeMsMin: 20_000, lifetimeMsMax: 60_000, deliveryTimeoutMsMin: 4_000, deliveryTimeoutMsMax: 30_000 },
  consumer: { lifetimeMsMin: 20_000, lifetimeMsMax: 60_000, commitIntervalMs: 1_000, seekProbability: 0.01, seekBackMax: 50 },
};

export const TOPIC_CONFIGS = { 'min.insync.replicas': '2' } as const;
/**
 * The compacted topic of the workload: small segments and a low dirty ratio,
 * so the cleaner of every replica runs during the faults. Its producers write
 * COMPACTED_KEYS keys over and over (workload-producer.ts).
 */
export const COMPACTED_TOPIC_CONFIGS = {
  ...TOPIC_CONFIGS, 'cleanup.policy': 'compact', 'segment.bytes': '16384', 'min.cleanable.dirty.ratio': '0.05',
} as const;
export const REPLICATION_FACTOR = 3;
/** Creating the workload topics and seeing every partition with a full ISR. */
const SETUP_TIMEOUT_MS = 60_000;

export interface WorkloadCounts {
  sends: number;
  sendsOk: number;
  sendsFailed: number;
  sendsUnknown: number;
  reads: number;
  recordsRead: number;
  seeks: number;
  commits: number;
  commitsOk: number;
  consumerSessions: number;
  adminOps: number;
  adminOk: number;
}

export class Workload {
  private readonly counts = new Map<string, number>();
  private readonly producers: ProducerWorker[] = [];
  private readonly members: ConsumerMember[] = [];
  private readonly admin: AdminWorker;
  private readonly deps: WorkloadDeps;
  private readonly o: WorkloadShape;

  constructor(opts: WorkloadOptions) {
    this.o = {
      ...WORKLOAD_DEFAULTS,
      ...definedOnly({ prefix: opts.prefix, topics: opts.topics, partitionsPerTopic: opts.partitionsPerTopic, producers: opts.producers, groups: opts.groups, membersPerGroup: opts.membersPerGroup, adminIntervalMs: opts.adminIntervalMs }),
      producer: { ...WORKLOAD_DEFAULTS.producer, ...opts.producer },
      consumer: { ...WORKLOAD_DEFAULTS.consumer, ...opts.consumer },
    };
    for (let t = 0; t < this.o.topics; t++) this.counts.set(`${this.o.prefix}-t${t}`, this.o.partitionsPerTopic);
    this.counts.set(this.compactedTopic, 1);
    this.deps = {
      bootstrap: opts.bootstrap, clock: opts.clock, record: opts.record,
      partitions: () => this.partitions(), topicNames: () => [...this.counts.keys()],
    };
    const rng = opts.rng;
    for (let i = 0; i < this.o.producers; i++) this.producers.push(new ProducerWorker(i, this.deps, this.o.producer, rng.fork()));
    for (let g = 0; g < this.o.groups; g++) {
      const committed: GroupCommits = new Map();
      for (let m = 0; m < this.o.membersPerGroup; m++) this.members.push(new ConsumerMember(`${this.o.prefix}-g${g}`, m, committed, this.deps, this.o.consumer, rng.fork()));
    }
    this.admin = new AdminWorker(`${this.o.prefix}-adm`, this.deps, this.o.adminIntervalMs, rng.fork());
  }

  /** The one compacted topic (one partition; never given more by the nemesis's partition adds, which pick -t topics). */
  get compactedTopic(): string {
    return `${this.o.prefix}-c0`;
  }

  /** Every workload partition. */
  partitions(): TopicPartition[] {
    return [...this.counts].flatMap(([topic, n]) => Array.from({ length: n }, (_, partition) => ({
      topic, partition, ...(topic === this.compactedTopic ? { compacted: true } : {}),
    })));
  }

  get topicNames(): string[] {
    return [...this.counts.keys()];
  }

  hasTopic(name: string): boolean {
    return this.counts.has(name);
  }

  partitionCount(topic: string): number {
    return this.counts.get(topic) ?? 0;
  }

  /** A partition-count increase went through: producers write to the new partitions from now on. */
  addPartitions(topic: string, count: number): void {
    if (count > (this.counts.get(topic) ?? 0)) this.counts.set(topic, count);
  }

  /** Creates the workload topics and waits until each partition has a leader and a full ISR. */
  async setup(): Promise<void> {
    const client = new Client({ bootstrap: this.deps.bootstrap, clientId: 'chaos-setup', requestTimeoutMs: 10_000 });
    try {
      const admin = client.admin();
      await admin.createTopics({
        topics: this.topicNames.map((topic) => topic === this.compactedTopic
          ? { topic, numPartitions: 1, replicationFactor: REPLICATION_FACTOR, configs: COMPACTED_TOPIC_CONFIGS }
          : { topic, numPartitions: this.o.partitionsPerTopic, replicationFactor: REPLICATION_FACTOR, configs: TOPIC_CONFIGS }),
      });
      await waitFor('workload topics with full ISRs', async () => {
        const described = await admin.describeTopics({ topics: this.topicNames });
        return described.every((t) => t.partitions.length === this.partitionCount(t.name) && t.partitions.every((p) => p.leader >= 0 && p.isr.length === REPLICATION_FACTOR));
      }, { timeoutMs: SETUP_TIMEOUT_MS, intervalMs: 200 });
    } finally {
      client.close();
    }
  }

  start(): void {
    for (const p of this.producers) p.start();
    for (const m of this.members) m.start();
    this.admin.start();
  }

  /** Stops every worker; resolves once every operation in flight has resolved. */
  async stop(): Promise<void> {
    await Promise.all([...this.producers.map((p) => p.stop()), ...this.members.map((m) => m.stop()), this.admin.stop()]);
  }

  /** Stops the producers only (consumers go on reading what was written). */
  async stopProducers(): Promise<void> {
    await Promise.all(this.producers.map((p) => p.stop()));
  }

  stats(): WorkloadCounts {
    const sum = <T>(xs: readonly T[], f: (x: T) => number) => xs.reduce((n, x) => n + f(x), 0);
    const ps = this.producers.map((p) => p.counts);
    const cs = this.members.map((m) => m.counts);
    return {
      sends: sum(ps, (c) => c.sends), sendsOk: sum(ps, (c) => c.ok), sendsFailed: sum(ps, (c) => c.failed), sendsUnknown: sum(ps, (c) => c.unknown),
      reads: sum(cs, (c) => c.reads), recordsRead: sum(cs, (c) => c.records), seeks: sum(cs, (c) => c.seeks),
      commits: sum(cs, (c) => c.commits), commitsOk: sum(cs, (c) => c.commitsOk), consumerSessions: sum(cs, (c) => c.sessions),
      adminOps: this.admin.ops, adminOk: this.admin.ok,
    };
  }
}

/** Creates topics of its own and deletes them again, one operation at a time. */
class AdminWorker extends LoopWorker {
  ops = 0;
  ok = 0;
  private readonly live: string[] = [];

  constructor(private readonly prefix: string, private readonly deps: WorkloadDeps, private readonly intervalMs: number, private readonly rng: Rng) {
    super();
  }

  protected async loop(): Promise<void> {
    const client = new Client({ bootstrap: this.deps.bootstrap, clientId: this.prefix, requestTimeoutMs: 10_000, connectTimeoutMs: 3_000, retry: { retries: 3 } });
    const admin = client.admin({ leaderWaitTimeoutMs: 10_000 });
    try {
      for (let n = 0; !this.stopped; n++) {
        if (this.live.length === 0 || (this.live.length < 3 && this.rng.chance(0.5))) {
          const topic = `${this.prefix}-${n}`;
          await this.op('create-topic', topic, () => admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: REPLICATION_FACTOR }], waitForLeaders: false }));
          // Even a failed create may have happened: delete it later all the same.
          this.live.push(topic);
        } else {
          const topic = this.live.shift()!;
          await this.op('delete-topic', topic, () => admin.deleteTopics({ topics: [topic] }));
        }
        await this.pause(this.intervalMs / 2 + this.rng.int(this.intervalMs));
      }
    } finally {
      client.close();
    }
  }

  private async op(op: string, topic: string, run: () => Promise<unknown>): Promise<void> {
    const invokeMs = this.deps.clock();
    let outcome: AdminOp['outcome'];
    try {
      await run();
      outcome = { type: 'ok' };
      this.ok++;
    } catch (err) {
      outcome = outcomeOf(err);
    }
    this.ops++;
    this.deps.record({ kind: 'admin', invokeMs, completeMs: this.deps.clock(), op, topic, outcome });
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
