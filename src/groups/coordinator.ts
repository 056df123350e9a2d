// The group coordinator of one broker (Kafka's GroupCoordinator and
// GroupMetadataManager): the shell around the pure membership state machine
// (membership/group.ts). It owns the timers, the pending JoinGroup/SyncGroup
// answers, and the groups' durable state in __consumer_offsets.
//
// - Placement: a group lives on partition abs(hash(groupId)) mod N of
//   __consumer_offsets (placement.ts); this broker coordinates the groups of
//   the partitions it leads. The topic is created on the first FindCoordinator.
// - Shards: one per offsets partition this broker leads. Becoming leader
//   (the replica manager tells us) starts loading the partition's log
//   (COORDINATOR_LOAD_IN_PROGRESS meanwhile); losing leadership unloads it
//   (pending requests get NOT_COORDINATOR, as does every later request).
// - Writes: offset commits, group assignments, deletions are keyed records
//   appended through the replica manager with acks=all; a commit is answered
//   and applied in memory only once replicated. In memory, a later log offset
//   wins, so answers that race each other cannot reorder what is stored.
//
// - Transactions: TxnOffsetCommit (txn-offsets.ts) writes a transactional
//   batch; its offsets stay pending per producer (txn-pending.ts) until the
//   replica manager reports the producer's COMMIT or ABORT marker on the
//   partition (onTxnMarker), which commits or drops them. Markers reported
//   while a shard loads are replayed once it has loaded.
//
// Invariant: a shard's in-memory groups and offsets are what its log says,
// less writes not yet acknowledged (a write that failed may still be in the
// log; a reload would show it, as in Kafka). The same holds for its pending
// transactional offsets, markers included.

import '../node.js'; // Node runtime: native CRC32C, every codec, Buffer bytes
import { Errors, errorForCode, type ErrorInfo } from '../util/errors.js';
import type { Clock, Scheduler } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { Rng } from '../util/rng.js';
import type { MetadataImage } from '../metadata/image.js';
import { effectiveBrokerConfig } from '../metadata/config-defs.js';
import type { ReplicaManager } from '../replication/replica-manager.js';
import type { Partition } from '../replication/partition.js';
import { BROKER_ENDPOINT } from '../replication/replica-fetcher.js';
import { encodeRecordBatch, type RecordInput } from '../record/record-batch.js';
import {
  CONSUMER_OFFSETS_TOPIC, GROUP_ID_LENGTH_MAX,
  type DeleteGroupsResponse, type DescribeGroupsResponse, type FindCoordinatorRequest, type FindCoordinatorResponse,
  type GroupsRequest, type HeartbeatRequest, type HeartbeatResponse, type JoinGroupRequest, type JoinGroupResponse,
  type LeaveGroupRequest, type LeaveGroupResponse, type ListGroupsResponse, type OffsetCommitRequest, type OffsetCommitResponse,
  type OffsetDeleteRequest, type OffsetDeleteResponse, type OffsetFetchRequest, type OffsetFetchResponse, type SyncGroupRequest, type SyncGroupResponse,
} from '../protocol/apis/groups.js';
import { GROUP_DEFAULTS, OFFSETS_TOPIC_CONFIGS, type CoordinatorLimits } from './defaults.js';
import { Group, type Refusal } from './membership/group.js';
import { computeServerAssignment } from './server-assignment.js';
import { errorMessage, joinError, syncError } from './membership/responses.js';
import type { GroupOutput, Token } from './membership/types.js';
import { coordinatorPartition } from './placement.js';
import { groupKey, groupValue } from './records.js';
import { loadOffsetsPartition, type GroupOffsets } from './loader.js';
import { commitOffsets, deleteOffsets, fetchOffsets, offsetTombstones, store } from './offsets.js';
import { asBuffer } from '../util/node-bytes.js';
import type { TxnMarkerApplied, TxnVerifier } from '../replication/txn-seams.js';
import type { TxnOffsetCommitRequest, TxnOffsetCommitResponse } from '../protocol/apis/transactions.js';
import { PendingTxnOffsets, type MarkerOutcome } from './txn-pending.js';
import { commitTxnOffsets, type TxnOffsetsHost } from './txn-offsets.js';

export type ControllerCall = <T>(api: string, body: Record<string, unknown>) => Promise<T>;

export interface GroupCoordinatorOptions {
  readonly brokerId: number;
  readonly replicas: ReplicaManager;
  readonly image: () => MetadataImage;
  /** The active controller, for creating __consumer_offsets. */
  readonly admin: ControllerCall;
  readonly clock: Clock;
  /** The groups' session and rebalance timers, and the loader's steps. */
  readonly scheduler: Scheduler;
  readonly rng: Rng;
  readonly logger: Logger;
  readonly limits?: Partial<CoordinatorLimits>;
  /**
   * Asks the transaction coordinator whether this group's offsets partition
   * is in a producer's open transaction (TxnOffsetCommit, KIP-890 part 1).
   * A getter, since the transaction coordinator may be built after the
   * groups; absent or null: TxnOffsetCommit answers COORDINATOR_NOT_AVAILABLE.
   */
  readonly txnVerifier?: () => TxnVerifier | null;
}

/** Who sent a request (DescribeGroups shows it). */
export interface ClientInfo {
  readonly clientId: string;
  readonly clientHost: string;
}

export interface GroupEntry {
  readonly group: Group;
  readonly offsets: GroupOffsets;
  /** Cancels the group's armed timer (it runs tick() at timerAtMs); undefined when none is armed. */
  cancelTimer: (() => void) | undefined;
  timerAtMs: number;
}

export interface Shard {
  readonly partition: number;
  readonly leaderEpoch: number;
  state: 'loading' | 'active' | 'unloaded';
  readonly groups: Map<string, GroupEntry>;
  /** Transactional offsets not yet ended; replaced by the loaded ones when loading ends. */
  txn: PendingTxnOffsets;
  /**
   * Markers reported while loading, replayed after it (a load reads the log
   * only up to where it started). Bounded by what the partition commits
   * during one load: at most one marker per transaction ended meanwhile.
   */
  readonly markersDuringLoad: TxnMarkerApplied[];
}

/** A transactional append (TxnOffsetCommit): the producer's batch, and which refusals it sees as they are. */
export interface TxnAppend {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  /** Error codes of the append answered as they are instead of through appendErrorFor. */
  readonly passThrough: ReadonlySet<number>;
}

export type AppendResult = { readonly error: null; readonly baseOffset: number } | { readonly error: Refusal };

export class GroupCoordinator implements TxnOffsetsHost {
  readonly limits: CoordinatorLimits;
  private readonly shards = new Map<number, Shard>();
  private readonly pending = new Map<Token, (response: never) => void>();
  private nextToken = 1;
  private creatingTopic = false;
  private stopped = false;
  private unsubscribe: () => void = () => undefined;
  private unsubscribeMarkers: () => void = () => undefined;
  private readonly log: Logger;

  constructor(private readonly opts: GroupCoordinatorOptions) {
    this.limits = { ...GROUP_DEFAULTS, ...opts.limits };
    this.log = opts.logger;
  }

  /** Follows this broker's leadership of __consumer_offsets partitions (call before the replica manager applies images). */
  start(): void {
    this.unsubscribe = this.opts.replicas.onLeadershipChange((p, leading) => this.onLeadership(p, leading));
    this.unsubscribeMarkers = this.opts.replicas.onTxnMarker((m) => this.onMarker(m));
    for (const p of this.opts.replicas.hostedPartitions) if (p.topic === CONSUMER_OFFSETS_TOPIC && p.isLeader) this.onLeadership(p, true);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe();
    this.unsubscribeMarkers();
    for (const shard of [...this.shards.values()]) this.unload(shard, 'the broker is shutting down');
  }

  /** Committed offsets of every group in the loaded shards (metrics: consumer lag). */
  *committedOffsets(): Iterable<{ readonly groupId: string; readonly offsets: GroupOffsets }> {
    for (const shard of this.shards.values()) {
      if (shard.state !== 'active') continue;
      for (const [groupId, entry] of shard.groups) yield { groupId, offsets: entry.offsets };
    }
  }

  /** Offsets partitions this broker coordinates, with their state (tests, describe). */
  get shardStates(): ReadonlyMap<number, Shard['state']> {
    return new Map([...this.shards].map(([p, s]) => [p, s.state] as const));
  }

  // ---- leadership: load and unload -------------------------------------------------

  private onLeadership(p: Partition, leading: boolean): void {
    if (p.topic !== CONSUMER_OFFSETS_TOPIC || this.stopped) return;
    const current = this.shards.get(p.index);
    if (!leading) {
      if (current) this.unload(current, `broker ${this.opts.brokerId} no longer leads ${p.key}`);
      return;
    }
    if (current && current.leaderEpoch === p.leaderEpoch && current.state !== 'unloaded') return;
    if (current) this.unload(current, `${p.key} has a new leader epoch`);
    const shard: Shard = { partition: p.index, leaderEpoch: p.leaderEpoch, state: 'loading', groups: new Map(), txn: new PendingTxnOffsets(), markersDuringLoad: [] };
    this.shards.set(p.index, shard);
    void this.load(shard, p);
  }

  private async load(shard: Shard, p: Partition): Promise<void> {
    const startedMs = this.opts.clock.monotonicMs();
    const endOffset = p.log.logEndOffset;
    try {
      const loaded = await loadOffsetsPartition(p.log, {
        endOffset, readBytesMax: this.limits.loadReadBytesMax, cancelled: () => shard.state !== 'loading', scheduler: this.opts.scheduler,
      });
      if (loaded === null || shard.state !== 'loading') return;
      for (const [groupId, g] of loaded.groups) {
        const group = g.snapshot ? Group.restore(groupId, g.snapshot, this.groupDeps()) : new Group(groupId, this.groupDeps());
        const entry: GroupEntry = { group, offsets: g.offsets, cancelTimer: undefined, timerAtMs: 0 };
        shard.groups.set(groupId, entry);
        this.reschedule(shard, entry);
      }
      shard.txn = loaded.pending;
      // A group only an open transaction wrote to exists, Empty, as it did when its TxnOffsetCommit was served.
      for (const groupId of loaded.pending.groupIds()) if (!shard.groups.has(groupId)) this.newEntry(shard, groupId);
      shard.state = 'active';
      for (const m of shard.markersDuringLoad.splice(0)) if (m.offset >= endOffset) this.onMarker(m);
      const ms = Math.round(this.opts.clock.monotonicMs() - startedMs);
      this.log.info({ partition: shard.partition, leaderEpoch: shard.leaderEpoch, groups: loaded.groups.size, openProducers: loaded.pending.openProducers.length, records: loaded.records, skipped: loaded.skipped, endOffset, ms }, 'loaded groups');
    } catch (err) {
      this.log.error({ partition: shard.partition, err: (err as Error).message }, 'could not load groups; not coordinating them');
      if (shard.state === 'loading') this.unload(shard, 'loading failed');
    }
  }

  private unload(shard: Shard, why: string): void {
    const wasActive = shard.state === 'active';
    shard.state = 'unloaded';
    if (this.shards.get(shard.partition) === shard) this.shards.delete(shard.partition);
    for (const entry of shard.groups.values()) {
      this.disarm(entry);
      this.dispatch(shard, entry, entry.group.shutdown(Errors.NOT_COORDINATOR, why));
    }
    shard.groups.clear();
    shard.markersDuringLoad.length = 0;
    if (wasActive) this.log.info({ partition: shard.partition, why }, 'unloaded groups');
  }

  private groupDeps(): ConstructorParameters<typeof Group>[1] {
    return {
      clock: this.opts.clock, rng: this.opts.rng, limits: this.limits,
      serverAssign: (protocol, generationId, members) =>
        computeServerAssignment(protocol, generationId, members, (topic) => this.opts.image().topic(topic)?.partitions.size),
    };
  }

  // ---- finding a group -------------------------------------------------------------

  /** The shard that holds `groupId` on this broker, or why there is none. */
  lookup(groupId: string): { shard: Shard } | Refusal {
    if (groupId.length === 0 || groupId.length > GROUP_ID_LENGTH_MAX) {
      return { error: Errors.INVALID_GROUP_ID, message: `a group id has 1-${GROUP_ID_LENGTH_MAX} characters` };
    }
    const topic = this.opts.image().topic(CONSUMER_OFFSETS_TOPIC);
    if (!topic || topic.partitions.size === 0) return { error: Errors.COORDINATOR_NOT_AVAILABLE, message: `${CONSUMER_OFFSETS_TOPIC} does not exist yet` };
    const partition = coordinatorPartition(groupId, topic.partitions.size);
    const shard = this.shards.get(partition);
    if (!shard) {
      const leader = topic.partitions.get(partition)?.leader ?? -1;
      return { error: Errors.NOT_COORDINATOR, message: `group ${groupId} is coordinated by the leader of ${CONSUMER_OFFSETS_TOPIC}-${partition} (broker ${leader}), not broker ${this.opts.brokerId}` };
    }
    if (shard.state === 'loading') return { error: Errors.COORDINATOR_LOAD_IN_PROGRESS, message: `loading the groups of ${CONSUMER_OFFSETS_TOPIC}-${partition}` };
    return { shard };
  }

  private newEntry(shard: Shard, groupId: string): GroupEntry {
    const entry: GroupEntry = { group: new Group(groupId, this.groupDeps()), offsets: new Map(), cancelTimer: undefined, timerAtMs: 0 };
    shard.groups.set(groupId, entry);
    return entry;
  }

  /** The shard still serves (this broker leads its partition at the epoch it loaded), and `entry` is still its group. */
  isCurrent(shard: Shard, entry?: GroupEntry): boolean {
    if (shard.state !== 'active' || this.shards.get(shard.partition) !== shard) return false;
    return entry === undefined || shard.groups.get(entry.group.groupId) === entry;
  }

  // ---- FindCoordinator ---------------------------------------------------------------

  findCoordinator(req: FindCoordinatorRequest): FindCoordinatorResponse {
    const unavailable = (error: ErrorInfo, message: string): FindCoordinatorResponse => ({ errorCode: error.code, errorMessage: errorMessage(error, message), nodeId: -1, url: null });
    if (req.key.length === 0 || req.key.length > GROUP_ID_LENGTH_MAX) return unavailable(Errors.INVALID_GROUP_ID, `a group id has 1-${GROUP_ID_LENGTH_MAX} characters`);
    const image = this.opts.image();
    const topic = image.topic(CONSUMER_OFFSETS_TOPIC);
    if (!topic || topic.partitions.size === 0) {
      this.createOffsetsTopic(image);
      return unavailable(Errors.COORDINATOR_NOT_AVAILABLE, `creating ${CONSUMER_OFFSETS_TOPIC}`);
    }
    const partition = coordinatorPartition(req.key, topic.partitions.size);
    const leader = topic.partitions.get(partition)?.leader ?? -1;
    const broker = image.brokers.get(leader);
    const url = broker && !broker.fenced ? broker.endpoints.find((e) => e.name === BROKER_ENDPOINT)?.url : undefined;
    if (url === undefined) return unavailable(Errors.COORDINATOR_NOT_AVAILABLE, `${CONSUMER_OFFSETS_TOPIC}-${partition} has no live leader`);
    return { errorCode: 0, errorMessage: null, nodeId: leader, url };
  }

  /**
   * Asks for __consumer_offsets if it does not exist yet (AddOffsetsToTxn
   * may come before any FindCoordinator for a group, as the Java client
   * sends it); true when it exists.
   */
  ensureOffsetsTopic(): boolean {
    const image = this.opts.image();
    const topic = image.topic(CONSUMER_OFFSETS_TOPIC);
    if (topic && topic.partitions.size > 0) return true;
    this.createOffsetsTopic(image);
    return false;
  }

  /** Asks the controller for __consumer_offsets (once at a time); FindCoordinator answers COORDINATOR_NOT_AVAILABLE meanwhile. */
  private createOffsetsTopic(image: MetadataImage): void {
    if (this.creatingTopic) return;
    const cluster = image.config('cluster', '');
    const live = image.unfencedBrokers().length;
    if (live === 0) return;
    const numPartitions = Number(effectiveBrokerConfig('offsets.topic.num.partitions', cluster));
    const replicationFactor = Math.min(Number(effectiveBrokerConfig('offsets.topic.replication.factor', cluster)), live);
    this.creatingTopic = true;
    const body = { topics: [{ name: CONSUMER_OFFSETS_TOPIC, numPartitions, replicationFactor, configs: { ...OFFSETS_TOPIC_CONFIGS } }] };
    this.log.info({ numPartitions, replicationFactor }, `creating ${CONSUMER_OFFSETS_TOPIC}`);
    this.opts.admin<{ topics: Array<{ errorCode: number; errorMessage: string | null }> }>('createTopics', body).then(
      (res) => {
        const t = res.topics[0];
        if (t && t.errorCode !== 0 && t.errorCode !== Errors.TOPIC_ALREADY_EXISTS.code) this.log.warn({ error: t.errorMessage }, `could not create ${CONSUMER_OFFSETS_TOPIC}`);
      },
      (err: Error) => this.log.warn({ err: err.message }, `could not create ${CONSUMER_OFFSETS_TOPIC}`),
    ).finally(() => {
      this.creatingTopic = false;
    });
  }

  // ---- membership ------------------------------------------------------------------

  joinGroup(req: JoinGroupRequest, client: ClientInfo): JoinGroupResponse | Promise<JoinGroupResponse> {
    const found = this.lookup(req.groupId);
    if ('error' in found) return joinError(found.error, req.memberId, found.message);
    let entry = found.shard.groups.get(req.groupId);
    if (!entry) {
      if (req.memberId !== '') return joinError(Errors.UNKNOWN_MEMBER_ID, req.memberId, `group ${req.groupId} does not exist`);
      entry = this.newEntry(found.shard, req.groupId);
    }
    const target = entry;
    return this.parked<JoinGroupResponse>((token) => target.group.join(token, {
      memberId: req.memberId, groupInstanceId: req.groupInstanceId, clientId: client.clientId, clientHost: client.clientHost,
      sessionTimeoutMs: req.sessionTimeoutMs, rebalanceTimeoutMs: req.rebalanceTimeoutMs, protocolType: req.protocolType,
      // Copies: the parsed bytes are views into the request frame, and the group keeps them for its lifetime.
      protocols: req.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
    }), found.shard, target);
  }

  syncGroup(req: SyncGroupRequest): SyncGroupResponse | Promise<SyncGroupResponse> {
    const found = this.lookup(req.groupId);
    if ('error' in found) return syncError(found.error, found.message);
    const entry = found.shard.groups.get(req.groupId);
    if (!entry) return syncError(Errors.UNKNOWN_MEMBER_ID, `group ${req.groupId} does not exist`);
    // The protocol the member names is checked after its membership and generation (group.ts), as Kafka does.
    const assignments = req.assignments.map((a) => ({ memberId: a.memberId, assignment: Buffer.from(a.assignment) }));
    return this.parked<SyncGroupResponse>((token) => entry.group.sync(token, { ...req, assignments }), found.shard, entry);
  }

  heartbeat(req: HeartbeatRequest): HeartbeatResponse {
    const found = this.lookup(req.groupId);
    const entry = 'error' in found ? undefined : found.shard.groups.get(req.groupId);
    const problem = 'error' in found ? found
      : entry ? entry.group.heartbeat(req) : { error: Errors.UNKNOWN_MEMBER_ID, message: `group ${req.groupId} does not exist` };
    return problem ? { errorCode: problem.error.code, errorMessage: errorMessage(problem.error, problem.message) } : { errorCode: 0, errorMessage: null };
  }

  leaveGroup(req: LeaveGroupRequest): LeaveGroupResponse {
    const found = this.lookup(req.groupId);
    if ('error' in found) return { errorCode: found.error.code, errorMessage: errorMessage(found.error, found.message), members: [] };
    const entry = found.shard.groups.get(req.groupId);
    const missing: Refusal = { error: Errors.UNKNOWN_MEMBER_ID, message: `group ${req.groupId} does not exist` };
    const left = entry ? entry.group.leave(req.members) : { results: req.members.map(() => missing), outputs: [] };
    if (entry) this.dispatch(found.shard, entry, left.outputs);
    return {
      errorCode: 0, errorMessage: null,
      members: req.members.map((m, i) => {
        const r = left.results[i] ?? null;
        return { memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: r ? r.error.code : 0, errorMessage: r ? errorMessage(r.error, r.message) : null };
      }),
    };
  }

  /** Runs a call whose answer may wait (JoinGroup, SyncGroup): its token resolves the returned promise. */
  private parked<R>(call: (token: Token) => GroupOutput[], shard: Shard, entry: GroupEntry): Promise<R> {
    const token = this.nextToken++;
    const answer = new Promise<R>((resolve) => this.pending.set(token, resolve as (r: never) => void));
    this.dispatch(shard, entry, call(token));
    return answer;
  }

  /** Carries out a group's outputs, then re-arms its timer. */
  private dispatch(shard: Shard, entry: GroupEntry, outputs: readonly GroupOutput[]): void {
    for (const o of outputs) {
      if (o.kind === 'persist') {
        void this.persistGroup(shard, entry, o.seq, o);
        continue;
      }
      const resolve = this.pending.get(o.token);
      this.pending.delete(o.token);
      resolve?.(o.response as never);
    }
    if (!this.isCurrent(shard, entry)) return;
    this.reschedule(shard, entry);
    this.forgetIfVacant(shard, entry);
  }

  /** A group that never had a generation and holds nothing is not worth keeping (its id may have been a typo). */
  forgetIfVacant(shard: Shard, entry: GroupEntry): void {
    if (!entry.group.isVacant || [...entry.offsets.values()].some((m) => m.size > 0) || shard.txn.hasPending(entry.group.groupId)) return;
    this.disarm(entry);
    if (shard.groups.get(entry.group.groupId) === entry) shard.groups.delete(entry.group.groupId);
  }

  private async persistGroup(shard: Shard, entry: GroupEntry, seq: number, o: GroupOutput & { kind: 'persist' }): Promise<void> {
    const res = await this.append(shard, [{ key: groupKey(entry.group.groupId), value: groupValue(o.snapshot) }], Errors.UNKNOWN_SERVER_ERROR);
    if (res.error) this.log.warn({ groupId: entry.group.groupId, error: res.error.message }, 'could not write group metadata');
    if (this.isCurrent(shard, entry)) this.dispatch(shard, entry, entry.group.persisted(seq, res.error));
  }

  private reschedule(shard: Shard, entry: GroupEntry): void {
    const at = entry.group.nextDeadlineMs();
    if (at === null) {
      this.disarm(entry);
      return;
    }
    // A timer that fires early is harmless (tick() finds nothing due and this re-arms it); one that fires late is not.
    if (entry.cancelTimer !== undefined && entry.timerAtMs <= at) return;
    this.disarm(entry);
    const delayMs = Math.max(0, Math.ceil(at - this.opts.clock.monotonicMs()));
    entry.timerAtMs = at;
    entry.cancelTimer = this.opts.scheduler.schedule(delayMs, () => {
      entry.cancelTimer = undefined;
      if (this.isCurrent(shard, entry)) this.dispatch(shard, entry, entry.group.tick());
    });
  }

  private disarm(entry: GroupEntry): void {
    entry.cancelTimer?.();
    entry.cancelTimer = undefined;
  }

  // ---- offsets -----------------------------------------------------------------------

  offsetCommit(req: OffsetCommitRequest): OffsetCommitResponse | Promise<OffsetCommitResponse> {
    return commitOffsets(this, req);
  }

  /** TxnOffsetCommit (KIP-98/447): the offsets of a producer's transaction, pending until its marker lands (txn-offsets.ts). */
  txnOffsetCommit(req: TxnOffsetCommitRequest): Promise<TxnOffsetCommitResponse> {
    return commitTxnOffsets(this, req);
  }

  txnVerifier(): TxnVerifier | null {
    return this.opts.txnVerifier?.() ?? null;
  }

  /** A marker the replica manager committed: ends the producer's pending offsets on that partition, if this broker coordinates it. */
  private onMarker(m: TxnMarkerApplied): void {
    if (m.topic !== CONSUMER_OFFSETS_TOPIC || this.stopped) return;
    const shard = this.shards.get(m.partition);
    if (!shard) return;
    if (shard.state === 'loading') {
      shard.markersDuringLoad.push(m);
      return;
    }
    if (!this.isCurrent(shard)) return;
    const outcome = shard.txn.marker(m.producerId, m.offset, m.committed);
    this.log.debug({ partition: m.partition, producerId: m.producerId, committed: m.committed, offsets: outcome.committed.length, groups: outcome.groups.size }, 'transaction marker');
    this.applyTxnOutcome(shard, outcome);
  }

  applyTxnOutcome(shard: Shard, outcome: MarkerOutcome): void {
    for (const c of outcome.committed) store(this.entryFor(shard, c.groupId, true)!.offsets, c.topic, c.partition, c.value);
    for (const groupId of outcome.groups) {
      const entry = shard.groups.get(groupId);
      if (entry) this.forgetIfVacant(shard, entry);
    }
  }

  offsetFetch(req: OffsetFetchRequest): OffsetFetchResponse {
    return fetchOffsets(this, req);
  }

  offsetDelete(req: OffsetDeleteRequest): Promise<OffsetDeleteResponse> {
    return deleteOffsets(this, req);
  }

  currentImage(): MetadataImage {
    return this.opts.image();
  }

  /** Wall-clock whole milliseconds (commit and record timestamps): a simulated or offset clock may read fractions. */
  nowMs(): number {
    return Math.floor(this.opts.clock.nowMs());
  }

  /** The group's entry, made (Empty, for offsets only) when `create` and missing. */
  entryFor(shard: Shard, groupId: string, create: boolean): GroupEntry | undefined {
    return shard.groups.get(groupId) ?? (create ? this.newEntry(shard, groupId) : undefined);
  }

  // ---- admin -------------------------------------------------------------------------

  listGroups(): ListGroupsResponse {
    const loading = [...this.shards.values()].some((s) => s.state === 'loading');
    const groups = [...this.shards.values()].filter((s) => s.state === 'active').flatMap((s) => [...s.groups.values()])
      .map((e) => ({ groupId: e.group.groupId, protocolType: e.group.protocolType ?? '', groupState: e.group.state }))
      .sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
    const error = loading ? Errors.COORDINATOR_LOAD_IN_PROGRESS : null;
    return { errorCode: error?.code ?? 0, errorMessage: error ? errorMessage(error, 'some groups are still loading') : null, groups };
  }

  describeGroups(req: GroupsRequest): DescribeGroupsResponse {
    return {
      groups: req.groups.map((groupId) => {
        const found = this.lookup(groupId);
        const none = { groupId, groupState: 'Dead' as const, protocolType: '', protocolName: '', members: [] };
        if ('error' in found) return { ...none, errorCode: found.error.code, errorMessage: errorMessage(found.error, found.message) };
        const entry = found.shard.groups.get(groupId);
        if (!entry) return { ...none, errorCode: 0, errorMessage: null };
        const d = entry.group.describe();
        return { errorCode: 0, errorMessage: null, groupId, groupState: d.state, protocolType: d.protocolType, protocolName: d.protocolName, members: d.members };
      }),
    };
  }

  async deleteGroups(req: GroupsRequest): Promise<DeleteGroupsResponse> {
    const ids = [...new Set(req.groups)];
    const results = await Promise.all(ids.map(async (groupId) => {
      const problem = await this.deleteGroup(groupId);
      return { groupId, errorCode: problem ? problem.error.code : 0, errorMessage: problem ? errorMessage(problem.error, problem.message) : null };
    }));
    return { results };
  }

  /** Writes tombstones for the group and its offsets, then forgets it. Only an Empty group can go. */
  private async deleteGroup(groupId: string): Promise<Refusal | null> {
    const found = this.lookup(groupId);
    if ('error' in found) return found;
    const entry = found.shard.groups.get(groupId);
    if (!entry) return { error: Errors.GROUP_ID_NOT_FOUND, message: `group ${groupId} does not exist` };
    const problem = entry.group.deletionProblem();
    if (problem) return problem;
    // Its pending offsets would come back when their transaction commits.
    if (found.shard.txn.hasPending(groupId)) return { error: Errors.NON_EMPTY_GROUP, message: `group ${groupId} has offsets in a transaction not yet ended` };
    entry.group.markDead();
    const records: RecordInput[] = [{ key: groupKey(groupId), value: null }, ...offsetTombstones(groupId, entry.offsets)];
    const res = await this.append(found.shard, records, Errors.UNKNOWN_SERVER_ERROR);
    if (res.error) {
      if (this.isCurrent(found.shard, entry)) entry.group.revive();
      return res.error;
    }
    if (this.isCurrent(found.shard, entry)) {
      this.disarm(entry);
      found.shard.groups.delete(groupId);
    }
    return null;
  }

  // ---- writing to __consumer_offsets -----------------------------------------------------

  /**
   * Appends `records` as one batch to the shard's partition with acks=all and
   * resolves once the ISR has it — or with the coordinator error a client
   * should see (Kafka's mapping; `tooLarge` for MESSAGE_TOO_LARGE).
   */
  async append(shard: Shard, records: RecordInput[], tooLarge: ErrorInfo, txn?: TxnAppend): Promise<AppendResult> {
    const notCoordinator: AppendResult = { error: { error: Errors.NOT_COORDINATOR, message: `broker ${this.opts.brokerId} no longer coordinates ${CONSUMER_OFFSETS_TOPIC}-${shard.partition}` } };
    if (!this.isCurrent(shard)) return notCoordinator;
    const now = this.nowMs();
    const stamped = records.map((r) => ({ ...r, timestamp: now }));
    // A transactional batch carries the producer's id and epoch and no sequence (Kafka's coordinator writes baseSequence -1).
    const batch = encodeRecordBatch(txn
      ? { records: stamped, producerId: BigInt(txn.producerId), producerEpoch: txn.producerEpoch, baseSequence: -1, isTransactional: true }
      : { records: stamped });
    let answer;
    try {
      const res = await this.opts.replicas.produce({
        acks: -1, timeoutMs: this.limits.commitTimeoutMs,
        topics: [{ name: CONSUMER_OFFSETS_TOPIC, partitions: [{ partition: shard.partition, records: asBuffer(batch) }] }],
        ...(txn ? { transactionalId: txn.transactionalId } : {}),
      }, txn ? 'coordinator' : 'client');
      answer = res.topics[0]?.partitions[0];
    } catch (err) {
      return { error: { error: Errors.UNKNOWN_SERVER_ERROR, message: (err as Error).message } };
    }
    if (!answer) return { error: { error: Errors.UNKNOWN_SERVER_ERROR, message: 'no answer for the offsets partition' } };
    if (answer.errorCode !== 0) {
      const error = txn?.passThrough.has(answer.errorCode) ? errorForCode(answer.errorCode) : appendErrorFor(answer.errorCode, tooLarge);
      return { error: { error, message: answer.errorMessage ?? `append failed (${answer.errorCode})` } };
    }
    if (!this.isCurrent(shard)) return notCoordinator;
    return { error: null, baseOffset: answer.baseOffset };
  }
}

/** What a failed write to __consumer_offsets means to a group client (Kafka's GroupMetadataManager mapping). */
export function appendErrorFor(code: number, tooLarge: ErrorInfo): ErrorInfo {
  switch (code) {
    case Errors.UNKNOWN_TOPIC_OR_PARTITION.code:
    case Errors.NOT_ENOUGH_REPLICAS.code:
    case Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND.code:
      return Errors.COORDINATOR_NOT_AVAILABLE;
    case Errors.NOT_LEADER_OR_FOLLOWER.code:
    case Errors.KAFKA_STORAGE_ERROR.code:
    case Errors.FENCED_LEADER_EPOCH.code:
    case Errors.UNKNOWN_LEADER_EPOCH.code:
      return Errors.NOT_COORDINATOR;
    case Errors.MESSAGE_TOO_LARGE.code:
    case Errors.RECORD_LIST_TOO_LARGE.code:
      return tooLarge;
    case Errors.REQUEST_TIMED_OUT.code:
      return Errors.REQUEST_TIMED_OUT;
    default:
      return Errors.UNKNOWN_SERVER_ERROR;
  }
}

/** The coordinator's operations the request layers of both protocols call (access-control.ts guards them). */
export type GroupOps = Pick<GroupCoordinator,
  'findCoordinator' | 'joinGroup' | 'syncGroup' | 'heartbeat' | 'leaveGroup' | 'offsetCommit' | 'txnOffsetCommit' | 'offsetFetch'
  | 'listGroups' | 'describeGroups' | 'deleteGroups' | 'offsetDelete'>;
