// The client side of consumer-group membership: one background loop per
// consumer that joins the group, runs the assignor when it is the leader,
// syncs, heartbeats, and rejoins when the coordinator says so.
//
// The loop, one step at a time (never two group requests of one member at
// once, so a heartbeat cannot race a join):
//   rebalance: [eager: revoke everything] → JoinGroup (MEMBER_ID_REQUIRED:
//     rejoin with the id given) → the leader assigns (the assignor the
//     coordinator chose, over every member's subscription and the topics'
//     partition counts) → SyncGroup → revoke what is no longer ours, start
//     what is new. Cooperative: when something was revoked, rejoin at once
//     so the follow-up rebalance can hand it to its new owner (KIP-429).
//   stable: Heartbeat every heartbeatIntervalMs. REBALANCE_IN_PROGRESS →
//     rebalance; UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION → our partitions are
//     lost (someone else may own them: no commit) → rebalance with a fresh
//     id. Every metadataMaxAgeMs the subscription (RegExp) and, on the
//     leader, the partition counts are checked: a change → rebalance.
// Coordinator moves (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, a lost
// connection) are retried by CoordinatorLink after finding it again. Errors
// no retry can fix (FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL,
// INVALID_SESSION_TIMEOUT, ...) stop the loop and are reported (onFatal).
//
// Invariant: `owned` is exactly the partitions handed to the host
// (assigned()) and not yet taken back (revoke()/lost()).

import { Errors, isSluiceError, SluiceError } from '../util/errors.js';
import type { Rng } from '../util/rng.js';
import type { JoinGroupResponse } from '../protocol/apis/groups.js';
import type { MemberSubscription, PartitionAssignor, RebalanceProtocol } from '../groups/assignors.js';
import {
  CONSUMER_PROTOCOL_TYPE, decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription, type TopicPartitions,
} from '../groups/consumer-protocol.js';
import { backoffMs, type Client, type ClientLogger } from './client.js';
import { checked, type CommitContext, type CoordinatorLink } from './consumer-coordinator.js';
import type { TopicPartition } from './consumer-fetcher.js';
import type { ResolvedConsumerOptions } from './consumer-options.js';

export interface GroupJoinEvent {
  readonly groupId: string;
  readonly memberId: string;
  readonly generationId: number;
  readonly leaderId: string;
  readonly isLeader: boolean;
  readonly protocol: string;
  /** The whole assignment of this member in the new generation. */
  readonly assignment: readonly TopicPartitions[];
  readonly revoked: readonly TopicPartition[];
  readonly added: readonly TopicPartition[];
}

export interface MembershipHost {
  /** The topics to subscribe to now (a RegExp subscription resolved against the cluster). */
  subscribedTopics(): Promise<string[]>;
  assigned(added: readonly TopicPartition[]): void;
  /** Stop delivering these partitions, wait for the application's current work on them, commit. */
  revoke(tps: readonly TopicPartition[]): Promise<void>;
  /** Drop these partitions without committing (the generation is gone). */
  lost(tps: readonly TopicPartition[]): void;
  joined(event: GroupJoinEvent): void;
  fatal(err: SluiceError): void;
}

/** Errors after which the member must rejoin from scratch (fresh id, partitions lost). */
const MEMBERSHIP_LOST: ReadonlySet<number> = new Set([Errors.UNKNOWN_MEMBER_ID.code, Errors.ILLEGAL_GENERATION.code]);
const HEARTBEAT_RETRIES = 2;
/** Backoff bounds after a failed rebalance step. */
const REJOIN_BACKOFF = { retries: 0, initialRetryTimeMs: 100, maxRetryTimeMs: 5_000 };

class Stopped extends Error {}

export class GroupMembership {
  private memberId = '';
  private generationId = -1;
  private owned: TopicPartition[] = [];
  private protocol: RebalanceProtocol | null = null;
  private needsRejoin = true;
  private active = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | null = null;
  private stopSignal: Promise<never> = new Promise<never>(() => undefined);
  private stopNow: () => void = () => undefined;
  private joinedTopics: string[] = [];
  /** On the leader: the group's topics and their partition counts (missing: no such topic) at the last assignment. */
  private leaderView: { topics: string[]; counts: Map<string, number> } | null = null;
  private nextMetadataCheckMs = 0;
  private failures = 0;
  /** The jitter of rejoin backoff: forked from the client's Rng. */
  private readonly rng: Rng;

  constructor(
    private readonly client: Client,
    private readonly coord: CoordinatorLink,
    private readonly opts: ResolvedConsumerOptions,
    private readonly host: MembershipHost,
    private readonly logger: ClientLogger,
  ) {
    this.rng = client.rng.fork();
  }

  start(): void {
    if (this.active) return;
    this.active = true;
    this.needsRejoin = true;
    this.stopSignal = new Promise<never>((_, reject) => {
      this.stopNow = () => reject(new Stopped('stopped'));
    });
    this.stopSignal.catch(() => undefined);
    this.loopDone = this.loop();
  }

  /** Stops the loop; with `leave`, revokes (committing) and leaves the group (static members do not leave: KIP-345). */
  async stop(leave: boolean): Promise<void> {
    if (this.active) {
      this.active = false;
      this.stopNow();
      this.wake();
      await this.loopDone;
    }
    if (!leave || this.memberId === '') return;
    if (this.owned.length > 0) await this.host.revoke(this.owned).catch((err: unknown) => this.logger.warn({ err: String(err) }, 'commit on leave failed'));
    this.owned = [];
    if (this.opts.groupInstanceId === null) {
      await this.coord.call('LeaveGroup', async (conn) => checked('LeaveGroup', await conn.leaveGroup({
        groupId: this.coord.groupId, members: [{ memberId: this.memberId, groupInstanceId: null }],
      })), 1).catch((err: unknown) => this.logger.warn({ err: String(err) }, 'LeaveGroup failed; the coordinator will expire the member'));
    }
    this.memberId = '';
    this.generationId = -1;
  }

  /** Asks for a rebalance (e.g. the subscription changed). */
  requestRejoin(): void {
    this.needsRejoin = true;
    this.wake();
  }

  /** The generation commits are made in; null before the first join. */
  commitContext(): CommitContext | null {
    if (this.memberId === '' || this.generationId < 0) return null;
    return { generationId: this.generationId, memberId: this.memberId, groupInstanceId: this.opts.groupInstanceId };
  }

  assignment(): TopicPartition[] {
    return [...this.owned];
  }

  /**
   * A commit failed because the generation is over: rejoin now rather than at
   * the next heartbeat. (REBALANCE_IN_PROGRESS needs nothing: the heartbeat
   * says so too, and a commit refused while this member's own rebalance
   * completes must not start another one.)
   */
  noteCommitError(err: unknown): void {
    if (isSluiceError(err) && MEMBERSHIP_LOST.has(err.code)) this.requestRejoin();
  }

  // ---- the loop ----------------------------------------------------------------

  private async loop(): Promise<void> {
    let nextHeartbeatMs = 0;
    while (this.active) {
      try {
        if (this.needsRejoin) {
          await this.abortable(this.rebalance());
          nextHeartbeatMs = this.client.clock.monotonicMs() + this.opts.heartbeatIntervalMs;
        } else {
          await this.pause(nextHeartbeatMs - this.client.clock.monotonicMs());
          if (!this.active || this.needsRejoin) continue;
          nextHeartbeatMs = this.client.clock.monotonicMs() + this.opts.heartbeatIntervalMs;
          await this.abortable(this.heartbeat());
          await this.abortable(this.checkMetadata());
        }
        this.failures = 0;
      } catch (err) {
        if (err instanceof Stopped || !this.active) break;
        if (!this.recover(err)) return;
        await this.pause(backoffMs(this.failures++, REJOIN_BACKOFF, () => this.rng.next()));
      }
    }
  }

  /** Decides what an error means; false when it is fatal (reported, loop ends). */
  private recover(err: unknown): boolean {
    const e = isSluiceError(err) ? err : new SluiceError(Errors.UNKNOWN_SERVER_ERROR, (err as Error)?.message ?? String(err));
    if (MEMBERSHIP_LOST.has(e.code)) {
      this.loseAll(e);
      return true;
    }
    if ((e.is(Errors.REBALANCE_IN_PROGRESS) || e.retriable) && !this.client.isClosed) {
      this.needsRejoin ||= e.is(Errors.REBALANCE_IN_PROGRESS);
      this.logger.debug({ groupId: this.coord.groupId, err: e.message }, 'group step failed; retrying');
      return true;
    }
    this.active = false;
    this.host.fatal(e);
    return false;
  }

  private loseAll(e: SluiceError): void {
    this.logger.info({ groupId: this.coord.groupId, memberId: this.memberId, err: e.message }, 'group membership lost; rejoining');
    if (this.owned.length > 0) this.host.lost(this.owned);
    this.owned = [];
    if (e.is(Errors.UNKNOWN_MEMBER_ID)) this.memberId = '';
    this.generationId = -1;
    this.needsRejoin = true;
  }

  private async heartbeat(): Promise<void> {
    await this.coord.call('Heartbeat', async (conn) => checked('Heartbeat', await conn.heartbeat({
      groupId: this.coord.groupId, generationId: this.generationId, memberId: this.memberId, groupInstanceId: this.opts.groupInstanceId,
    })), HEARTBEAT_RETRIES);
  }

  /** Subscription (RegExp) and, on the leader, partition counts: a change means a rebalance. */
  private async checkMetadata(): Promise<void> {
    const now = this.client.clock.monotonicMs();
    if (now < this.nextMetadataCheckMs) return;
    this.nextMetadataCheckMs = now + this.opts.metadataMaxAgeMs;
    const topics = await this.host.subscribedTopics();
    if (topics.join('\n') !== this.joinedTopics.join('\n')) {
      this.requestRejoin();
      return;
    }
    const view = this.leaderView;
    if (view === null) return;
    const counts = await this.partitionCounts(view.topics);
    if (view.topics.some((t) => counts.get(t) !== view.counts.get(t))) this.requestRejoin();
  }

  // ---- rebalance ---------------------------------------------------------------

  private async rebalance(): Promise<void> {
    this.needsRejoin = false;
    if (this.protocol !== 'cooperative' && this.owned.length > 0) {
      // Eager: give everything up (committing) before joining.
      const all = this.owned;
      this.owned = [];
      await this.host.revoke(all);
    }
    const topics = await this.host.subscribedTopics();
    const join = await this.join(topics);
    this.ensureActive();
    const assignor = this.opts.assignors.find((a) => a.name === join.protocolName);
    if (!assignor) throw new SluiceError(Errors.INCONSISTENT_GROUP_PROTOCOL, `the coordinator chose protocol '${join.protocolName}', which this consumer does not offer`);
    const isLeader = join.leader === join.memberId;
    const assignments = isLeader && !join.skipAssignment ? await this.assign(assignor, join) : [];
    if (!isLeader) this.leaderView = null;
    const sync = await this.coord.call('SyncGroup', async (conn) => checked('SyncGroup', await conn.syncGroup({
      groupId: this.coord.groupId, generationId: join.generationId, memberId: join.memberId, groupInstanceId: this.opts.groupInstanceId, assignments,
      rebalanceTimeoutMs: this.opts.rebalanceTimeoutMs,
    })));
    this.ensureActive();
    this.generationId = join.generationId;
    this.protocol = assignor.protocol;
    this.joinedTopics = topics;
    await this.apply(join, assignor, decodeAssignment(sync.assignment).partitions);
  }

  private async join(topics: string[]): Promise<JoinGroupResponse> {
    const metadata = encodeSubscription({
      topics, ownedPartitions: byTopic(this.owned), generationId: this.owned.length > 0 ? this.generationId : -1, userData: null,
    });
    for (let attempt = 0; ; attempt++) {
      try {
        const join = await this.coord.call('JoinGroup', async (conn) => checked('JoinGroup', await conn.joinGroup({
          groupId: this.coord.groupId, sessionTimeoutMs: this.opts.sessionTimeoutMs, rebalanceTimeoutMs: this.opts.rebalanceTimeoutMs,
          memberId: this.memberId, groupInstanceId: this.opts.groupInstanceId, protocolType: CONSUMER_PROTOCOL_TYPE,
          protocols: this.opts.assignors.map((a) => ({ name: a.name, metadata })),
        })));
        this.memberId = join.memberId;
        return join;
      } catch (err) {
        // KIP-394: the first join is answered with the id to join with.
        const id = isSluiceError(err, Errors.MEMBER_ID_REQUIRED) ? err.details.memberId : undefined;
        if (attempt > 0 || typeof id !== 'string' || id === '') throw err;
        this.memberId = id;
      }
    }
  }

  /** The leader's part: every member's subscription through the chosen assignor. */
  private async assign(assignor: PartitionAssignor, join: JoinGroupResponse): Promise<Array<{ memberId: string; assignment: Uint8Array }>> {
    const members: MemberSubscription[] = join.members.map((m) => {
      try {
        const s = decodeSubscription(m.metadata);
        return { memberId: m.memberId, groupInstanceId: m.groupInstanceId, topics: s.topics, ownedPartitions: s.ownedPartitions, generationId: s.generationId };
      } catch (err) {
        // One member speaking garbage gets nothing rather than stopping the group.
        this.logger.warn({ groupId: this.coord.groupId, memberId: m.memberId, err: String(err) }, 'unreadable member subscription');
        return { memberId: m.memberId, groupInstanceId: m.groupInstanceId, topics: [], ownedPartitions: [], generationId: -1 };
      }
    });
    const topics = [...new Set(members.flatMap((m) => m.topics))];
    const counts = await this.partitionCounts(topics);
    this.leaderView = { topics, counts };
    const result = assignor.assign(members, counts);
    return [...result].map(([memberId, tps]) => ({ memberId, assignment: encodeAssignment({ partitions: tps, userData: null }) }));
  }

  /** Partition counts of the topics that exist (missing ones are left out). */
  private async partitionCounts(topics: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    await Promise.all(topics.map(async (t) => {
      try {
        counts.set(t, (await this.client.topic(t)).partitions.length);
      } catch (err) {
        if (!(isSluiceError(err) && err.is(Errors.UNKNOWN_TOPIC_OR_PARTITION))) throw err;
      }
    }));
    return counts;
  }

  private async apply(join: JoinGroupResponse, assignor: PartitionAssignor, partitions: readonly TopicPartitions[]): Promise<void> {
    const next = partitions.flatMap((tp) => tp.partitions.map((partition) => ({ topic: tp.topic, partition })));
    const has = (list: readonly TopicPartition[], x: TopicPartition) => list.some((y) => y.topic === x.topic && y.partition === x.partition);
    const revoked = this.owned.filter((x) => !has(next, x));
    const added = next.filter((x) => !has(this.owned, x));
    this.owned = this.owned.filter((x) => has(next, x));
    if (revoked.length > 0) await this.host.revoke(revoked);
    this.owned = next;
    this.host.assigned(added);
    // KIP-429: what we gave up goes to its new owner in a follow-up round.
    if (assignor.protocol === 'cooperative' && revoked.length > 0) this.needsRejoin = true;
    this.host.joined({
      groupId: this.coord.groupId, memberId: join.memberId, generationId: join.generationId, leaderId: join.leader,
      isLeader: join.leader === join.memberId, protocol: assignor.name, assignment: byTopic(next), revoked, added,
    });
  }

  /** After stop(), a rebalance still in flight must not hand out partitions. */
  private ensureActive(): void {
    if (!this.active) throw new Stopped('stopped');
  }

  // ---- waiting -----------------------------------------------------------------

  /** Resolves with `p`, or rejects with Stopped as soon as stop() is called. */
  private abortable<T>(p: Promise<T>): Promise<T> {
    p.catch(() => undefined);
    return Promise.race([p, this.stopSignal]);
  }

  /** Waits `ms` or until woken (requestRejoin, stop). */
  private pause(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const cancel = this.client.scheduler.schedule(ms, done);
      function done(): void {
        cancel();
        resolve();
      }
      this.wakeUp = done;
    });
  }

  private wake(): void {
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }
}

function byTopic(tps: readonly TopicPartition[]): TopicPartitions[] {
  const m = new Map<string, number[]>();
  for (const tp of tps) m.set(tp.topic, [...(m.get(tp.topic) ?? []), tp.partition]);
  return [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([topic, partitions]) => ({ topic, partitions: partitions.sort((a, b) => a - b) }));
}

