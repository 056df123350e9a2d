// The Consumer: KafkaJS's shape on top of the Client. Two ways to get
// partitions — subscribe() (a consumer group: the coordinator and the
// group's leader decide who reads what) or assign() (fixed partitions, no
// membership) — and two ways to read — run({ eachMessage | eachBatch }) or
// `for await (const m of consumer)`.
//
// Parts: consumer-fetcher.ts (positions, long-poll fetch sessions, bounded
// prefetch), consumer-group.ts (join/sync/heartbeat), consumer-delivery.ts
// (handing records over), consumer-offsets.ts (resolved and committed
// offsets), consumer-coordinator.ts (the coordinator and the offset APIs).
// This class owns the lifecycle and decides when offsets are committed:
//
// - A record is resolved once the application completed it (or the position
//   was sought past it). Auto-commit (every autoCommitIntervalMs), a revoke,
//   stop() and close() commit resolved offsets that differ from the
//   committed ones — never more than what was completed, so delivery is
//   at-least-once.
// - Lifecycle: idle → running (run() or the iterator) → idle (stop():
//   finishes the handler in progress, commits, leaves the group) → closed.
//   A fatal error (a non-retriable one) stops the consumer the same way and
//   is reported through the 'crash' event and to the iterator.
//
// Invariant: the Fetcher holds only partitions of the current assignment
// (group) or of the assign() list; a revoked partition leaves it before its
// offsets are committed, so nothing of it is delivered after the commit.

import { Errors, SluiceError } from '../util/errors.js';
import type { TopicPartitions } from '../groups/consumer-protocol.js';
import type { Client, ClientLogger } from './client.js';
import { CoordinatorLink, NO_MEMBERSHIP, type CommitContext, type OffsetToCommit } from './consumer-coordinator.js';
import {
  deliverEachBatch, deliverEachMessage, MessageCursor, type ConsumerMessage, type DeliveryHost, type RunOptions,
} from './consumer-delivery.js';
import { Fetcher, type Chunk, type TopicPartition } from './consumer-fetcher.js';
import { GroupMembership, type GroupJoinEvent, type MembershipHost } from './consumer-group.js';
import { partitionKey } from './consumer-list-offsets.js';
import { OffsetBook } from './consumer-offsets.js';
import type { ConsumerGroupMetadata } from './transaction.js';
import { READ_COMMITTED } from '../protocol/apis/fetch.js';
import { resolveConsumerOptions, type ConsumerOptions, type OffsetReset, type ResolvedConsumerOptions } from './consumer-options.js';

export type { ConsumerOptions, IsolationLevelName } from './consumer-options.js';
export type { Batch, ConsumerMessage, EachBatchPayload, EachMessagePayload, KafkaMessage, RunOptions } from './consumer-delivery.js';
export type { GroupJoinEvent } from './consumer-group.js';
export type { TopicPartition } from './consumer-fetcher.js';

export interface SubscribeOptions {
  readonly topics: string | RegExp | ReadonlyArray<string | RegExp>;
  /** Start partitions without a committed offset at the earliest offset (default: autoOffsetReset). */
  readonly fromBeginning?: boolean;
}

export interface ConsumerEvents {
  'group.join': GroupJoinEvent;
  'offsets.commit': { readonly offsets: readonly OffsetToCommit[] };
  /** A non-retriable error (a SluiceError), or the error a run() handler threw (as thrown). */
  crash: { readonly error: Error };
  stop: Record<string, never>;
}

type Listener<K extends keyof ConsumerEvents> = (event: ConsumerEvents[K]) => void;

/** Topics of a RegExp subscription never include internal ones (Kafka's exclude.internal.topics). */
const INTERNAL_TOPIC_PREFIX = '__';

export class Consumer {
  private readonly opts: ResolvedConsumerOptions;
  private readonly logger: ClientLogger;
  private readonly fetcher: Fetcher;
  private readonly coord: CoordinatorLink | null;
  private readonly membership: GroupMembership | null;
  private mode: 'none' | 'subscribe' | 'assign' = 'none';
  private readonly subscriptions: Array<{ readonly match: string | RegExp; readonly fromBeginning: boolean }> = [];
  private manual: Array<TopicPartition & { offset?: number }> = [];
  private state: 'idle' | 'running' | 'stopping' | 'closed' = 'idle';
  /** Who reads while running: one run() loop or iterators (never both). */
  private reader: 'run' | 'iterator' | null = null;
  /** Resolved and committed offsets; null without a groupId (nothing to commit to). */
  private readonly offsets: OffsetBook | null;
  private readonly pendingSeeks = new Map<string, number>();
  private readonly pausedTopics = new Set<string>();
  private readonly pausedKeys = new Set<string>();
  /** Cancels the next auto-commit check (a timer re-armed after each one); null while not running. */
  private cancelAutoCommit: (() => void) | null = null;
  private processing: Promise<void> | null = null;
  private loop: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | null = null;
  private fatalError: Error | null = null;
  private stopping: Promise<void> | null = null;
  private readonly listeners = new Map<keyof ConsumerEvents, Set<(e: never) => void>>();
  private readonly delivery: DeliveryHost;

  constructor(private readonly client: Client, options: ConsumerOptions = {}) {
    this.opts = resolveConsumerOptions(options);
    this.logger = client.logger;
    this.fetcher = new Fetcher(client, this.opts, {
      committedOffsets: this.opts.groupId === null ? null : (tps) => this.offsets!.fetchCommitted(tps),
      resetPolicy: (topic) => this.resetPolicy(topic),
      onReady: () => this.wake(),
      onFatal: (err) => this.crash(err),
    });
    this.coord = this.opts.groupId === null ? null : new CoordinatorLink(client, this.opts.groupId);
    this.membership = this.coord === null ? null : new GroupMembership(client, this.coord, this.opts, this.membershipHost(), this.logger);
    this.offsets = this.coord === null ? null : new OffsetBook({
      coord: this.coord, autoCommitIntervalMs: this.opts.autoCommitIntervalMs, clock: client.clock, context: () => this.commitContext(), logger: this.logger,
      onCommitted: (offsets) => this.emit('offsets.commit', { offsets }), onCommitError: (err) => this.membership?.noteCommitError(err),
      requireStable: this.opts.isolationLevel === READ_COMMITTED,
    });
    this.delivery = this.deliveryHost();
  }

  get groupId(): string | null {
    return this.opts.groupId;
  }

  // ---- what to read ------------------------------------------------------------

  /** Adds topics (names or patterns) to the group subscription; rejoins if already running. */
  async subscribe(s: SubscribeOptions): Promise<void> {
    this.ensureOpen();
    if (this.mode === 'assign') throw invalid('subscribe() after assign(): a consumer uses one or the other');
    if (this.membership === null) throw invalid('subscribe() needs a groupId');
    const list = Array.isArray(s.topics) ? s.topics : [s.topics as string | RegExp];
    if (list.length === 0) throw invalid('subscribe() names no topic');
    for (const match of list) {
      if (typeof match !== 'string' && !(match instanceof RegExp)) throw invalid('topics must be names or RegExps');
      this.subscriptions.push({ match, fromBeginning: s.fromBeginning ?? false });
    }
    this.mode = 'subscribe';
    if (this.state === 'running') this.membership.requestRejoin();
  }

  /** Reads these partitions without group membership (offsets still commit to groupId when set). */
  assign(tps: ReadonlyArray<TopicPartition & { readonly offset?: number }>): void {
    this.ensureOpen();
    if (this.mode === 'subscribe') throw invalid('assign() after subscribe(): a consumer uses one or the other');
    for (const tp of tps) {
      if (!(Number.isSafeInteger(tp.partition) && tp.partition >= 0)) throw invalid(`bad partition ${tp.partition}`);
      if (tp.offset !== undefined) checkOffset(tp.offset);
    }
    this.mode = 'assign';
    const before = new Set(this.manual.map((tp) => partitionKey(tp.topic, tp.partition)));
    this.manual = tps.map((tp) => ({ ...tp }));
    if (this.state !== 'running') return;
    const now = new Set(this.manual.map((tp) => partitionKey(tp.topic, tp.partition)));
    this.dropPartitions([...before].filter((k) => !now.has(k)));
    this.startPartitions(this.manual.filter((tp) => !before.has(partitionKey(tp.topic, tp.partition))));
  }

  /** The partitions this consumer reads now. */
  assignment(): TopicPartition[] {
    if (this.mode === 'assign') return this.manual.map(({ topic, partition }) => ({ topic, partition }));
    return this.membership?.assignment() ?? [];
  }

  // ---- reading -----------------------------------------------------------------

  /** Starts consuming; resolves once started (KafkaJS's contract). Failures arrive as 'crash' events. */
  async run(opts: RunOptions): Promise<void> {
    if (!opts.eachMessage === !opts.eachBatch) throw invalid('run() takes exactly one of eachMessage and eachBatch');
    this.start('run');
    this.loop = this.runLoop(opts);
  }

  [Symbol.asyncIterator](): AsyncIterator<ConsumerMessage> {
    if (this.state !== 'running' || this.reader !== 'iterator') this.start('iterator');
    const cursor = new MessageCursor(this.delivery);
    return {
      next: async (): Promise<IteratorResult<ConsumerMessage>> => {
        cursor.completeHeld();
        for (;;) {
          const m = cursor.next();
          if (m) return { value: m, done: false };
          const chunk = await this.nextChunk();
          if (chunk === null) return { value: undefined, done: true };
          cursor.load(chunk);
        }
      },
      return: async (): Promise<IteratorResult<ConsumerMessage>> => {
        cursor.completeHeld();
        await this.stop();
        return { value: undefined, done: true };
      },
    };
  }

  /** Moves a partition's position; applied when the partition is assigned if it is not yet. */
  seek(s: { readonly topic: string; readonly partition: number; readonly offset: number }): void {
    this.ensureOpen();
    checkOffset(s.offset);
    const key = partitionKey(s.topic, s.partition);
    if (this.state !== 'running' || !this.fetcher.seek(s.topic, s.partition, s.offset)) {
      this.pendingSeeks.set(key, s.offset);
      return;
    }
    this.offsets?.resolve(s, s.offset);
  }

  pause(tps: ReadonlyArray<{ readonly topic: string; readonly partitions?: readonly number[] }>): void {
    this.setPaused(tps, true);
  }

  resume(tps: ReadonlyArray<{ readonly topic: string; readonly partitions?: readonly number[] }>): void {
    this.setPaused(tps, false);
  }

  paused(): TopicPartitions[] {
    const byTopic = new Map<string, number[]>();
    for (const tp of this.assignment()) {
      if (this.isPausedTp(tp)) byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), tp.partition]);
    }
    return [...byTopic].map(([topic, partitions]) => ({ topic, partitions }));
  }

  // ---- offsets -----------------------------------------------------------------

  /** Commits these offsets (each the next offset to read) for the group. */
  async commitOffsets(offsets: readonly OffsetToCommit[]): Promise<void> {
    this.ensureOpen();
    if (this.offsets === null) throw invalid('commitOffsets() needs a groupId');
    for (const o of offsets) checkOffset(o.offset);
    await this.offsets.commit(offsets);
  }

  // ---- lifecycle ---------------------------------------------------------------

  /** Stops reading: the handler in progress finishes, completed offsets are committed, the group is left. */
  stop(): Promise<void> {
    if (this.state !== 'running') return this.stopping ?? Promise.resolve();
    this.state = 'stopping';
    this.stopping = this.shutdown().finally(() => {
      if (this.state === 'stopping') this.state = 'idle';
      this.stopping = null;
      this.emit('stop', {});
    });
    return this.stopping;
  }

  /** stop(), then the consumer cannot be used again. The Client is the caller's to close. */
  async close(): Promise<void> {
    await this.stop();
    this.state = 'closed';
  }

  on<K extends keyof ConsumerEvents>(event: K, listener: Listener<K>): () => void {
    const set = this.listeners.get(event) ?? new Set();
    set.add(listener as (e: never) => void);
    this.listeners.set(event, set);
    return () => set.delete(listener as (e: never) => void);
  }

  /**
   * The group and generation this consumer reads in now (Kafka's
   * groupMetadata(), KIP-447), for a transaction's sendOffsets({ consumer }):
   * the coordinator refuses the offsets of a member that is no longer in the
   * generation. An assign() consumer (or one not yet joined) answers
   * generation -1 and member '' (no check). Needs a groupId.
   */
  groupMetadata(): ConsumerGroupMetadata {
    if (this.opts.groupId === null) throw invalid('groupMetadata() needs a groupId');
    const ctx = this.commitContext() ?? NO_MEMBERSHIP;
    return { groupId: this.opts.groupId, generationId: ctx.generationId, memberId: ctx.memberId, groupInstanceId: ctx.groupInstanceId ?? this.opts.groupInstanceId };
  }

  /** The next offset to fetch for a partition; null while unknown (not assigned, or being looked up). */
  position(tp: TopicPartition): number | null {
    return this.fetcher.position(partitionKey(tp.topic, tp.partition)) ?? null;
  }

  /** Bytes fetched and not yet handed to the application (bounded by prefetchBytesMax). */
  get bufferedBytes(): number {
    return this.fetcher.bufferedBytes;
  }

  private start(reader: 'run' | 'iterator'): void {
    this.ensureOpen();
    if (this.state !== 'idle') throw invalid(`the consumer is already ${this.state}${this.reader ? ` (by ${this.reader === 'run' ? 'run()' : 'an iterator'})` : ''}`);
    if (this.mode === 'none') throw invalid('call subscribe() or assign() before consuming');
    this.state = 'running';
    this.reader = reader;
    this.fatalError = null;
    this.fetcher.start();
    if (this.mode === 'subscribe') this.membership!.start();
    else this.startPartitions(this.manual);
    if (this.opts.autoCommit && this.offsets !== null) {
      const book = this.offsets;
      const everyMs = Math.max(1, Math.floor(this.opts.autoCommitIntervalMs / 2));
      const arm = (): void => {
        this.cancelAutoCommit = this.client.scheduler.schedule(everyMs, () => {
          void book.commitIfDue();
          arm();
        });
      };
      arm();
    }
  }

  private async shutdown(): Promise<void> {
    this.cancelAutoCommit?.();
    this.cancelAutoCommit = null;
    this.wake();
    await this.loop.catch(() => undefined);
    this.fetcher.stop();
    if (this.membership && this.mode === 'subscribe') await this.membership.stop(true);
    else if (this.opts.autoCommit) await this.offsets?.commitResolved(null);
    this.dropPartitions(this.fetcher.keys());
  }

  private crash(error: Error): void {
    if (this.state !== 'running') return;
    this.logger.error({ groupId: this.opts.groupId, err: error.message }, 'consumer crashed');
    this.fatalError = error;
    this.emit('crash', { error });
    void this.stop();
  }

  // ---- the run loop ------------------------------------------------------------

  private async runLoop(opts: RunOptions): Promise<void> {
    for (;;) {
      let chunk: Chunk | null;
      try {
        chunk = await this.nextChunk();
      } catch {
        return; // fatal: already reported by crash()
      }
      if (chunk === null) return;
      const work = opts.eachMessage ? deliverEachMessage(this.delivery, chunk, opts.eachMessage) : deliverEachBatch(this.delivery, chunk, opts);
      this.processing = work;
      try {
        await work;
      } catch (err) {
        this.crash(err instanceof Error ? err : new Error(`the message handler failed: ${String(err)}`));
        return;
      } finally {
        this.processing = null;
      }
    }
  }

  /** The next current chunk; null once stopped; throws the fatal error after a crash. */
  private async nextChunk(): Promise<Chunk | null> {
    for (;;) {
      if (this.fatalError) throw this.fatalError;
      if (this.state !== 'running') return null;
      const chunk = this.fetcher.take();
      if (chunk && this.fetcher.version(chunk.key) === chunk.version) return chunk;
      if (chunk) continue;
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
      });
    }
  }

  private wake(): void {
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  private deliveryHost(): DeliveryHost {
    return {
      isRunning: () => this.state === 'running',
      isCurrent: (c) => this.fetcher.version(c.key) === c.version,
      isPaused: (c) => this.fetcher.isPaused(c.key),
      complete: (c, nextOffset) => {
        if (this.fetcher.version(c.key) === c.version) this.offsets?.resolve(c, nextOffset);
      },
      pausePartition: (c) => {
        this.pause([{ topic: c.topic, partitions: [c.partition] }]);
        return () => this.resume([{ topic: c.topic, partitions: [c.partition] }]);
      },
      rewind: (c, offset) => {
        this.fetcher.seek(c.topic, c.partition, offset);
      },
      commitIfDue: async () => {
        if (this.opts.autoCommit) await this.offsets?.commitIfDue();
      },
    };
  }

  // ---- partitions --------------------------------------------------------------

  private startPartitions(tps: ReadonlyArray<TopicPartition & { offset?: number }>): void {
    this.fetcher.add(tps.map((tp) => {
      const key = partitionKey(tp.topic, tp.partition);
      const seek = this.pendingSeeks.get(key);
      this.pendingSeeks.delete(key);
      const offset = seek ?? tp.offset;
      if (seek !== undefined) this.offsets?.resolve(tp, seek);
      return offset === undefined ? { topic: tp.topic, partition: tp.partition } : { topic: tp.topic, partition: tp.partition, offset };
    }));
    this.fetcher.setPaused(tps.filter((tp) => this.isPausedTp(tp)).map((tp) => partitionKey(tp.topic, tp.partition)), true);
  }

  private dropPartitions(keys: readonly string[]): void {
    this.fetcher.remove(keys);
    this.offsets?.forget(keys);
  }

  private setPaused(tps: ReadonlyArray<{ readonly topic: string; readonly partitions?: readonly number[] }>, paused: boolean): void {
    const keys: string[] = [];
    for (const t of tps) {
      if (t.partitions === undefined) {
        if (paused) this.pausedTopics.add(t.topic);
        else this.pausedTopics.delete(t.topic);
        for (const tp of this.assignment()) if (tp.topic === t.topic) keys.push(partitionKey(tp.topic, tp.partition));
        if (!paused) for (const k of [...this.pausedKeys]) if (k.startsWith(`${t.topic}\u0000`)) this.pausedKeys.delete(k);
        continue;
      }
      for (const p of t.partitions) {
        const key = partitionKey(t.topic, p);
        if (paused) this.pausedKeys.add(key);
        else this.pausedKeys.delete(key);
        keys.push(key);
      }
    }
    this.fetcher.setPaused(keys.filter((k) => paused || !this.isPausedKey(k)), paused);
  }

  private isPausedTp(tp: TopicPartition): boolean {
    return this.isPausedKey(partitionKey(tp.topic, tp.partition));
  }

  private isPausedKey(key: string): boolean {
    return this.pausedKeys.has(key) || this.pausedTopics.has(key.slice(0, key.indexOf('\u0000')));
  }

  private resetPolicy(topic: string): OffsetReset {
    const matches = (m: string | RegExp) => (typeof m === 'string' ? m === topic : new RegExp(m.source, m.flags.replace(/[gy]/g, '')).test(topic));
    return this.subscriptions.some((s) => s.fromBeginning && matches(s.match)) ? 'earliest' : this.opts.autoOffsetReset;
  }

  // ---- the group ---------------------------------------------------------------

  private membershipHost(): MembershipHost {
    return {
      subscribedTopics: () => this.subscribedTopics(),
      assigned: (added) => {
        if (this.state === 'running') this.startPartitions(added);
      },
      revoke: (tps) => this.revoke(tps),
      lost: (tps) => this.dropPartitions(tps.map((tp) => partitionKey(tp.topic, tp.partition))),
      joined: (e) => this.emit('group.join', e),
      fatal: (err) => this.crash(err),
    };
  }

  private async subscribedTopics(): Promise<string[]> {
    const names = new Set<string>();
    for (const s of this.subscriptions) if (typeof s.match === 'string') names.add(s.match);
    const patterns = this.subscriptions.map((s) => s.match).filter((m): m is RegExp => m instanceof RegExp);
    if (patterns.length > 0) {
      const all = await this.client.retry('Metadata', () => this.client.listTopics());
      for (const t of all) {
        if (t.name.startsWith(INTERNAL_TOPIC_PREFIX)) continue;
        if (patterns.some((p) => new RegExp(p.source, p.flags.replace(/[gy]/g, '')).test(t.name))) names.add(t.name);
      }
    }
    return [...names].sort();
  }

  /** Stop delivering, let the handler in progress finish, commit what was completed. */
  private async revoke(tps: readonly TopicPartition[]): Promise<void> {
    const keys = tps.map((tp) => partitionKey(tp.topic, tp.partition));
    this.fetcher.remove(keys);
    await this.processing?.catch(() => undefined);
    if (this.opts.autoCommit) await this.offsets?.commitResolved(new Set(keys));
    this.dropPartitions(keys);
  }

  // ---- commits -----------------------------------------------------------------

  private commitContext(): CommitContext | null {
    if (this.mode === 'assign') return NO_MEMBERSHIP;
    return this.membership?.commitContext() ?? null;
  }

  // ---- helpers -----------------------------------------------------------------

  private emit<K extends keyof ConsumerEvents>(event: K, e: ConsumerEvents[K]): void {
    for (const l of this.listeners.get(event) ?? []) {
      try {
        (l as Listener<K>)(e);
      } catch (err) {
        this.logger.warn({ event, err: String(err) }, 'consumer event listener threw');
      }
    }
  }

  private ensureOpen(): void {
    if (this.state === 'closed') throw invalid('the consumer is closed');
  }
}

function invalid(message: string): SluiceError {
  return new SluiceError(Errors.INVALID_CONFIG, message);
}

function checkOffset(offset: number): void {
  if (!(Number.isSafeInteger(offset) && offset >= 0)) throw invalid(`offset must be an integer >= 0, got ${offset}`);
}
