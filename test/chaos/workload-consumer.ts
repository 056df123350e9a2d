// The consumers of a chaos run: members of consumer groups (subscribed to
// every workload topic from the beginning, manual commits only) recording
// what they read, where they seek and what they commit:
//   ReadOp    one per batch delivered, records in delivery order, tagged with
//             the session and the group generation the member joined last.
//             A session is one member instance between two joins
//             (`<group>-m<k>.<instance>/j<join>`): a member that lost its
//             partitions (e.g. ILLEGAL_GENERATION after a coordinator moved)
//             and rejoined may get them back in the *same* generation and
//             start again from the committed offsets, which is a rebalance
//             all the same, so every join starts a new session;
//   SeekOp    now and then a member seeks back a little, so reads legitimately
//             go backwards (the checker allows that only after a seek);
//   CommitOp  every commitIntervalMs per partition, the next offset to read;
//   AssignOp  the member's assignment at each join (one member per partition
//             per generation).
// A member instance lives a while and is then closed (leaving the group, so
// the group rebalances) and replaced by a new session; one that crashes is
// replaced too.
//
// Commits never go below what the group may already have committed (an ok or
// unknown commit of any member): a member that sought back or took over a
// partition commits only past that, so every commit regression the checker
// finds is the cluster's, not the workload's.

import { Client, type Consumer, type EachBatchPayload } from '../../src/index.js';
import type { Rng } from '../../src/util/rng.js';
import type { CommitOp } from './history.js';
import { outcomeOf } from './workload-producer.js';
import type { WorkloadDeps } from './workload.js';
import { LoopWorker } from './worker.js';

/** Bound on closing a member (leaving the group may wait for an unreachable coordinator). */
const CLOSE_TIMEOUT_MS = 15_000;

export interface ConsumerSettings {
  readonly lifetimeMsMin: number;
  readonly lifetimeMsMax: number;
  readonly commitIntervalMs: number;
  /** Chance per batch of an explicit seek back. */
  readonly seekProbability: number;
  readonly seekBackMax: number;
}

export interface ConsumerCounts {
  reads: number;
  records: number;
  seeks: number;
  commits: number;
  commitsOk: number;
  sessions: number;
}

/** One member instance's view of its group membership. */
interface SessionState {
  /** The member instance and its join count. */
  session: string;
  generation: number;
  joins: number;
  readonly lastCommitMs: Map<string, number>;
}

/** What a group's members may have committed so far, per partition (shared by the group's members). */
export type GroupCommits = Map<string, number>;

export class ConsumerMember extends LoopWorker {
  readonly counts: ConsumerCounts = { reads: 0, records: 0, seeks: 0, commits: 0, commitsOk: 0, sessions: 0 };

  constructor(
    private readonly group: string,
    private readonly index: number,
    private readonly committed: GroupCommits,
    private readonly deps: WorkloadDeps,
    private readonly settings: ConsumerSettings,
    private readonly rng: Rng,
  ) {
    super();
  }

  protected async loop(): Promise<void> {
    for (let instance = 1; !this.stopped; instance++) {
      this.counts.sessions++;
      await this.runSession(`${this.group}-m${this.index}.${instance}`, this.rng.range(this.settings.lifetimeMsMin, this.settings.lifetimeMsMax));
    }
  }

  private async runSession(member: string, lifetimeMs: number): Promise<void> {
    const client = new Client({
      bootstrap: this.deps.bootstrap, clientId: member, requestTimeoutMs: 10_000, connectTimeoutMs: 3_000, metadataMaxAgeMs: 5_000,
      retry: { retries: 5, initialRetryTimeMs: 100, maxRetryTimeMs: 1_000 },
    });
    const consumer = client.consumer({
      groupId: this.group, autoCommit: false, autoOffsetReset: 'earliest', sessionTimeoutMs: 10_000, heartbeatIntervalMs: 1_000,
      rebalanceTimeoutMs: 20_000, metadataMaxAgeMs: 5_000, maxWaitMs: 250, maxBytesPerPartition: 64 * 1024,
    });
    const state: SessionState = { session: `${member}/j0`, generation: -1, joins: 0, lastCommitMs: new Map() };
    consumer.on('group.join', (e) => {
      state.generation = e.generationId;
      state.session = `${member}/j${++state.joins}`;
      const now = this.deps.clock();
      this.deps.record({
        kind: 'assign', invokeMs: now, completeMs: now, session: state.session, group: this.group, generation: e.generationId,
        member: e.memberId, partitions: e.assignment.flatMap((a) => a.partitions.map((partition) => ({ topic: a.topic, partition }))),
      });
    });
    let crashed = false;
    consumer.on('crash', () => {
      crashed = true;
      this.wakeUp();
    });
    try {
      await consumer.subscribe({ topics: this.deps.topicNames(), fromBeginning: true });
      await consumer.run({ eachBatch: (p) => this.onBatch(consumer, state, p) });
      const endMs = performance.now() + lifetimeMs;
      while (!this.stopped && !crashed && performance.now() < endMs) {
        await this.pause(Math.min(1_000, Math.max(1, endMs - performance.now())));
      }
    } catch {
      // A session that could not start (the cluster is in a fault): the next one tries again.
    } finally {
      await Promise.race([consumer.close().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, CLOSE_TIMEOUT_MS))]);
      client.close();
    }
  }

  private async onBatch(consumer: Consumer, state: SessionState, p: EachBatchPayload): Promise<void> {
    const { batch } = p;
    const session = state.session;
    if (batch.messages.length === 0) return;
    const now = this.deps.clock();
    const records = batch.messages.map((m) => ({ offset: m.offset, value: m.value?.toString('utf8') ?? '' }));
    this.deps.record({
      kind: 'read', invokeMs: now, completeMs: now, session, group: this.group, generation: state.generation,
      topic: batch.topic, partition: batch.partition, records,
    });
    this.counts.reads++;
    this.counts.records += records.length;
    if (this.rng.chance(this.settings.seekProbability)) {
      const offset = Math.max(0, records[0]!.offset - this.rng.range(1, this.settings.seekBackMax));
      const invokeMs = this.deps.clock();
      consumer.seek({ topic: batch.topic, partition: batch.partition, offset });
      this.deps.record({ kind: 'seek', invokeMs, completeMs: this.deps.clock(), session, group: this.group, topic: batch.topic, partition: batch.partition, offset });
      this.counts.seeks++;
      return;
    }
    const key = `${batch.topic}-${batch.partition}`;
    const next = records[records.length - 1]!.offset + 1;
    const last = state.lastCommitMs.get(key) ?? -Infinity;
    if (now - last < this.settings.commitIntervalMs || next <= (this.committed.get(key) ?? 0) || p.isStale()) return;
    state.lastCommitMs.set(key, now);
    await this.commit(consumer, session, state.generation, batch.topic, batch.partition, next);
  }

  private async commit(consumer: Consumer, session: string, generation: number, topic: string, partition: number, offset: number): Promise<void> {
    const key = `${topic}-${partition}`;
    // Taken before the answer: an unknown outcome may have been applied.
    this.committed.set(key, Math.max(offset, this.committed.get(key) ?? 0));
    const invokeMs = this.deps.clock();
    let outcome: CommitOp['outcome'];
    try {
      await consumer.commitOffsets([{ topic, partition, offset }]);
      outcome = { type: 'ok' };
      this.counts.commitsOk++;
    } catch (err) {
      outcome = outcomeOf(err);
    }
    this.counts.commits++;
    this.deps.record({ kind: 'commit', invokeMs, completeMs: this.deps.clock(), session, group: this.group, generation, topic, partition, offset, outcome });
  }
}
