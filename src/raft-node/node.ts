// The Raft driver: owns a pure `Raft` core, its durable state (RaftDisk), a
// transport and the state machine, and does the I/O the core asks for.
//
// Timers: a tick every `tickMs` (raft.tick()), on the injected Scheduler.
// Ready loop: whenever the core has a Ready, one zero-delay event is
// scheduled (coalescing: many proposals or
// messages arriving in one event-loop turn land in one Ready); it handles one
// Ready strictly in the order of the contract in src/raft/types.ts:
//   1. save the snapshot (atomic + fsynced), append entries, set hard state,
//      then ONE disk.sync() for all of it (group commit);
//   2. send the messages (a leader sends them before step 1 when that is
//      safe: see maySendBeforePersist);
//   3. restore the state machine from the snapshot, apply committed entries
//      in order (each exactly once per lifetime after restore; asserted);
//   4. raft.advance(ready); then snapshot+compact if snapshotIntervalEntries
//      entries were applied since the last snapshot.
// Deviation, on purpose: a hard state whose only change is `commit` is
// persisted at most every commitPersistIntervalMs (and at stop). The commit
// index is volatile in Raft (a restarted node relearns it from the leader),
// and writing quorum-state costs two fsyncs; term and vote changes are always
// persisted before any message leaves.
//
// Observers: a node whose id is not among `voters` (a broker-only node)
// starts as an observer-to-be. The core never lets a non-voter campaign; once
// the active controller adds it (proposeConfChange addObserver) the leader
// replicates the log to it and it applies entries and snapshots exactly like
// a voter. status() then shows role 'observer', its applied index and the
// leader it follows.
//
// Any exception in the ready loop (a disk error, a broken invariant) is fatal:
// the node stops processing and emits 'fatal' — continuing could violate the
// promises already made to peers.

import { EventEmitter } from 'node:events';
import { assert } from '../util/assert.js';
import { SystemClock, SystemScheduler, type Clock, type Scheduler } from '../util/clock.js';
import { mutant } from '../util/mutants.js';
import { Errors, SluiceError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { Rng } from '../util/rng.js';
import { Raft } from '../raft/raft.js';
import {
  DEFAULT_RAFT_CONFIG, NO_NODE,
  type ConfChange, type Entry, type HardState, type Membership, type Message, type NodeId, type RaftConfig,
  type RaftInitialState, type RaftStatus, type Ready, type Role, type Snapshot,
} from '../raft/types.js';
import { RaftDisk } from './raft-disk.js';
import type { StateMachine } from './state-machine.js';
import { ProposalTracker, ReadTracker, type Proposed } from './pending.js';
import type { RaftNodeLimits } from './quorum-config.js';
import type { FileSystem } from '../util/file-system.js';

/** What the driver needs from a transport. */
export interface MessageSender {
  send(messages: readonly Message[]): void;
  close(): Promise<void>;
}

export interface RaftNodeOptions {
  readonly id: NodeId;
  /** Voters of a fresh cluster (used when neither snapshot nor log names the membership). */
  readonly voters: readonly NodeId[];
  /** The metadata log directory (`<data-dir>/__cluster_metadata-0`). */
  readonly raftDir: string;
  readonly stateMachine: StateMachine;
  readonly transport: MessageSender;
  readonly limits: RaftNodeLimits;
  readonly rng: Rng;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Ticks, the ready loop and the transfer timeout (default real timers). */
  readonly scheduler?: Scheduler;
  /** The disk of the metadata log (default the real one; the simulation passes its own). */
  readonly fs?: FileSystem;
  /** Controller listeners by node id, for leader hints in NOT_CONTROLLER errors. */
  readonly endpoints?: ReadonlyMap<NodeId, string>;
  /** Core settings beyond the limits (tests). */
  readonly raftConfig?: Partial<Omit<RaftConfig, 'id'>>;
}

export interface RaftNodeStatus {
  readonly nodeId: NodeId;
  readonly role: Role;
  readonly term: number;
  readonly leader: NodeId;
  readonly commit: number;
  readonly applied: number;
  readonly lastIndex: number;
  readonly snapshotIndex: number;
  readonly voters: readonly NodeId[];
  readonly observers: readonly NodeId[];
  readonly pendingProposals: number;
  readonly pendingReads: number;
}

export interface RoleChange {
  readonly role: Role;
  readonly term: number;
  readonly leader: NodeId;
}

export interface RaftNodeEvents {
  roleChange: [RoleChange];
  leaderChange: [RoleChange];
  fatal: [Error];
}

const SWEEP_EVERY_TICKS = 10;

export class RaftNode extends EventEmitter<RaftNodeEvents> {
  private readonly raft: Raft;
  private readonly disk: RaftDisk;
  private readonly sm: StateMachine;
  private readonly clock: Clock;
  private readonly scheduler: Scheduler;
  private readonly logger: Logger;
  private readonly proposals = new ProposalTracker();
  private readonly reads = new ReadTracker();
  private cancelTick: (() => void) | undefined;
  private ticks = 0;
  private readyScheduled = false;
  private stopped = false;
  private stopping: Promise<void> | undefined;
  private soft: RoleChange = { role: 'follower', term: 0, leader: 0 };
  private appliedSinceSnapshot = 0;
  private persistedHardState: HardState;
  private unpersistedHardState: HardState | undefined;
  private lastHardStateWriteMs: number;

  private constructor(private readonly opts: RaftNodeOptions) {
    super();
    this.clock = opts.clock ?? SystemClock;
    this.scheduler = opts.scheduler ?? SystemScheduler;
    this.logger = opts.logger;
    this.sm = opts.stateMachine;
    this.disk = RaftDisk.open(opts.raftDir, { segmentBytesMax: opts.limits.segmentBytesMax, logger: opts.logger.child({ component: 'raft-disk' }), ...(opts.fs ? { fs: opts.fs } : {}) });
    try {
      const initial = this.restore();
      this.persistedHardState = initial.hardState;
      this.lastHardStateWriteMs = this.clock.monotonicMs();
      this.raft = new Raft(this.raftConfig(), initial, opts.rng, opts.logger.child({ component: 'raft' }));
    } catch (err) {
      this.disk.close();
      throw err;
    }
  }

  /** Opens the durable state, restores the state machine and starts ticking. */
  static start(opts: RaftNodeOptions): RaftNode {
    const node = new RaftNode(opts);
    node.armTick();
    const s = node.raft.status();
    node.logger.info({ term: s.term, commit: s.commit, lastIndex: s.lastIndex, snapshotIndex: s.snapshotIndex }, 'raft node started');
    node.scheduleReady();
    return node;
  }

  private raftConfig(): RaftConfig {
    const l = this.opts.limits;
    return {
      ...DEFAULT_RAFT_CONFIG,
      electionTimeoutTicks: l.electionTimeoutTicks,
      heartbeatTicks: l.heartbeatTicks,
      ...this.opts.raftConfig,
      id: this.opts.id,
    };
  }

  /** Builds the core's initial state from what the disk loaded, restoring the state machine first. */
  private restore(): RaftInitialState {
    const loaded = this.disk.loaded;
    const snap = loaded.snapshot;
    if (snap) this.sm.restore(snap);
    const applied = snap?.meta.index ?? 0;
    assert(this.sm.appliedIndex === applied, `state machine at ${this.sm.appliedIndex} after restoring snapshot ${applied}`);
    // The commit index is persisted lazily (see the header); never below what the snapshot proves.
    const hardState = { ...loaded.hardState, commit: Math.max(loaded.hardState.commit, applied) };
    return {
      hardState,
      entries: loaded.entries,
      bootstrapMembership: { voters: [...this.opts.voters].sort((a, b) => a - b), observers: [] },
      applied,
      ...(snap ? { snapshotMeta: snap.meta, snapshotData: snap.data } : {}),
    };
  }

  // ------------------------------------------------------------ inputs

  /** A message from a peer (the transport checked its shape and sender). */
  receive(msg: Message): void {
    if (this.stopped) return;
    this.raft.step(msg);
    this.scheduleReady();
  }

  /** Appends `data` to the log; resolves once it is applied locally. */
  propose(data: Uint8Array): Promise<Proposed> {
    if (this.stopped) return Promise.reject(this.notController('node is stopping'));
    if (data.length > this.opts.limits.proposalBytesMax) {
      return Promise.reject(new SluiceError(Errors.MESSAGE_TOO_LARGE, `proposal of ${data.length} bytes exceeds ${this.opts.limits.proposalBytesMax}`));
    }
    if (this.proposals.size >= this.opts.limits.proposalsPendingMax) {
      return Promise.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, `too many proposals pending (${this.proposals.size}); retry later`));
    }
    const r = this.raft.propose(data);
    if (!r.ok) return Promise.reject(this.proposeRejected(r.reason, r.leader));
    this.scheduleReady();
    return this.proposals.add(r.index, r.term, this.clock.monotonicMs() + this.opts.limits.proposalTimeoutMs);
  }

  /**
   * Proposes a one-server membership change (e.g. addObserver for a broker
   * node); resolves once its Config entry is applied locally (the change took
   * effect on append, and is now committed). Rejects like propose(), and
   * also: retriable REQUEST_TIMED_OUT with `details.reason =
   * 'configChangePending'` while an earlier change is uncommitted (or before
   * this leader committed an entry of its term); INVALID_REQUEST when the
   * change does not apply to the current membership (adding a member, removing
   * a non-member or the last voter).
   */
  proposeConfChange(change: ConfChange): Promise<Proposed> {
    if (this.stopped) return Promise.reject(this.notController('node is stopping'));
    if (this.proposals.size >= this.opts.limits.proposalsPendingMax) {
      return Promise.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, `too many proposals pending (${this.proposals.size}); retry later`));
    }
    const r = this.raft.proposeConfChange(change);
    if (!r.ok) return Promise.reject(this.proposeRejected(r.reason, r.leader));
    this.scheduleReady();
    return this.proposals.add(r.index, r.term, this.clock.monotonicMs() + this.opts.limits.proposalTimeoutMs);
  }

  /** A linearizable read point: resolves with an index the state machine has applied, once leadership is confirmed. */
  readIndex(): Promise<number> {
    if (this.stopped) return Promise.reject(this.notController('node is stopping'));
    if (this.reads.size >= this.opts.limits.readsPendingMax) {
      return Promise.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, 'too many reads pending; retry later'));
    }
    const { id, done } = this.reads.add(this.clock.monotonicMs() + this.opts.limits.readTimeoutMs);
    if (!this.raft.readIndex(id)) this.reads.cancel(id, this.notController());
    else this.scheduleReady();
    return done;
  }

  /** Asks the leader (this node) to hand leadership to `to`; false if not leader or `to` is not a voter. */
  transferLeadership(to: NodeId): boolean {
    if (this.stopped) return false;
    const ok = this.raft.transferLeadership(to);
    this.scheduleReady();
    return ok;
  }

  status(): RaftNodeStatus {
    const s: RaftStatus = this.raft.status();
    return {
      nodeId: this.opts.id,
      role: s.role,
      term: s.term,
      leader: s.leader,
      commit: s.commit,
      applied: this.sm.appliedIndex,
      lastIndex: s.lastIndex,
      snapshotIndex: s.snapshotIndex,
      voters: s.membership.voters,
      observers: s.membership.observers,
      pendingProposals: this.proposals.size,
      pendingReads: this.reads.size,
    };
  }

  /** The membership in effect (the latest Config entry appended, committed or not). */
  membership(): Membership {
    return this.raft.status().membership;
  }

  /** The core's own status (progress of followers on the leader). */
  raftStatus(): RaftStatus {
    return this.raft.status();
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  // ------------------------------------------------------------ errors

  /** NOT_CONTROLLER naming the leader this node knows of (and its endpoint), for callers to follow. */
  notController(message?: string): SluiceError {
    const leader = this.soft.leader === this.opts.id ? 0 : this.soft.leader;
    const leaderEndpoint = this.opts.endpoints?.get(leader);
    return new SluiceError(Errors.NOT_CONTROLLER, message ?? (leader ? `the active controller is node ${leader}` : 'no active controller is known'),
      { leader, ...(leaderEndpoint ? { leaderEndpoint } : {}) });
  }

  private proposeRejected(reason: string, leader: NodeId): SluiceError {
    switch (reason) {
      case 'notLeader': return this.notController(leader ? `the active controller is node ${leader}` : undefined);
      case 'transferring': return this.notController('leadership is being transferred');
      case 'tooManyUncommitted': return new SluiceError(Errors.REQUEST_TIMED_OUT, 'too many uncommitted entries; retry later');
      case 'configChangePending':
        return new SluiceError(Errors.REQUEST_TIMED_OUT, 'a membership change is still uncommitted; retry later', { reason: 'configChangePending' });
      case 'invalidConfChange': return new SluiceError(Errors.INVALID_REQUEST, 'membership change does not apply to the current membership');
      default: return new SluiceError(Errors.INVALID_REQUEST, `proposal rejected: ${reason}`);
    }
  }

  private overwritten = (): SluiceError => this.notController('the entry was overwritten by a new leader');

  // ------------------------------------------------------------ timers and the ready loop

  private armTick(): void {
    this.cancelTick = this.scheduler.schedule(this.opts.limits.tickMs, () => {
      if (this.stopped) return;
      this.onTick();
      this.armTick();
    });
  }

  private onTick(): void {
    if (this.stopped) return;
    this.raft.tick();
    if (++this.ticks % SWEEP_EVERY_TICKS === 0) {
      const now = this.clock.monotonicMs();
      this.proposals.expire(now);
      this.reads.expire(now);
    }
    this.scheduleReady();
  }

  private scheduleReady(): void {
    if (this.readyScheduled || this.stopped || !this.raft.hasReady()) return;
    this.readyScheduled = true;
    this.scheduler.schedule(0, () => {
      this.readyScheduled = false;
      if (this.stopped) return;
      try {
        this.handleReady(this.raft.ready());
      } catch (err) {
        this.fail(err as Error);
        return;
      }
      this.scheduleReady();
    });
  }

  private handleReady(rd: Ready): void {
    // The mutant answers first and leaves this Ready's writes unsynced (a
    // later Ready's sync covers them): a crash in between forgets a vote or
    // term the peers were already told about (test/sim/mutants.test.ts).
    const answerBeforeSync = mutant('raft-answer-before-sync');
    const early = answerBeforeSync || this.maySendBeforePersist(rd);
    if (early) this.opts.transport.send(rd.messages);
    this.persist(rd, !answerBeforeSync);
    if (!early) this.opts.transport.send(rd.messages);
    if (rd.snapshot) this.installSnapshot(rd.snapshot);
    // A leader never truncates its own log; anyone else may have overwritten our proposals.
    if (rd.entries.length > 0 && (rd.softState?.role ?? this.soft.role) !== 'leader' && this.proposals.size > 0) {
      this.proposals.onTruncation(rd.entries[0]?.index ?? 0, (i) => this.raft.termAt(i), this.overwritten);
    }
    for (const entry of rd.committedEntries) this.apply(entry);
    if (rd.committedEntries.length > 0) this.reads.onApplied(this.sm.appliedIndex);
    for (const rs of rd.readStates) this.reads.onReadState(rs.requestId, rs.index, this.sm.appliedIndex);
    if (rd.softState) this.onSoftState(rd.softState);
    this.raft.advance(rd);
    if (this.appliedSinceSnapshot >= this.opts.limits.snapshotIntervalEntries) this.takeSnapshot();
  }

  /**
   * A leader may replicate entries while it writes them (thesis §10.2.1): the
   * core counts the leader's own copy toward commit only up to what advance()
   * reported durable. A leader's messages (appends, heartbeats, snapshots,
   * rejections) promise nothing about its own disk — unless this Ready also
   * changes term or vote, or installs a snapshot; then the strict order holds.
   */
  private maySendBeforePersist(rd: Ready): boolean {
    if (rd.snapshot || (rd.softState?.role ?? this.soft.role) !== 'leader') return false;
    const hs = rd.hardState;
    return hs === undefined || (hs.term === this.persistedHardState.term && hs.vote === this.persistedHardState.vote);
  }

  /** Step 1 of the contract: everything durable, with one fsync for the log and hard state. */
  private persist(rd: Ready, sync = true): void {
    if (rd.snapshot) this.disk.saveSnapshot(rd.snapshot);
    let dirty = false;
    if (rd.entries.length > 0) {
      this.disk.appendEntries(rd.entries);
      dirty = true;
    }
    if (rd.hardState && this.hardStateToWrite(rd.hardState)) dirty = true;
    if (dirty && sync) this.disk.sync();
  }

  /** Queues a hard state for the next sync unless only `commit` changed recently (see the header). */
  private hardStateToWrite(hs: HardState): boolean {
    const p = this.persistedHardState;
    const now = this.clock.monotonicMs();
    const termOrVote = hs.term !== p.term || hs.vote !== p.vote;
    if (!termOrVote && now - this.lastHardStateWriteMs < this.opts.limits.commitPersistIntervalMs) {
      this.unpersistedHardState = hs;
      return false;
    }
    this.disk.setHardState(hs);
    this.persistedHardState = hs;
    this.unpersistedHardState = undefined;
    this.lastHardStateWriteMs = now;
    return true;
  }

  private installSnapshot(snap: Snapshot): void {
    this.sm.restore(snap);
    assert(this.sm.appliedIndex === snap.meta.index, 'state machine did not restore to the snapshot index');
    this.appliedSinceSnapshot = 0;
    this.proposals.onSnapshotInstalled(snap.meta.index);
    this.reads.onApplied(this.sm.appliedIndex);
    this.logger.info({ index: snap.meta.index, term: snap.meta.term }, 'installed snapshot from the leader');
  }

  private apply(entry: Entry): void {
    assert(entry.index === this.sm.appliedIndex + 1, `committed entry ${entry.index} does not follow applied ${this.sm.appliedIndex}`);
    this.sm.apply(entry);
    this.appliedSinceSnapshot++;
    this.proposals.onApplied(entry.index, entry.term, this.overwritten);
  }

  private takeSnapshot(): void {
    const index = this.sm.appliedIndex;
    const term = this.raft.termAt(index);
    assert(term !== undefined, `no term for applied index ${index}`);
    const snap: Snapshot = { meta: { index, term, membership: this.raft.membershipAt(index) }, data: this.sm.snapshot() };
    this.disk.saveSnapshot(snap);
    this.raft.compact(snap);
    this.appliedSinceSnapshot = 0;
    this.logger.debug({ index, term }, 'snapshot taken; log compacted');
  }

  private onSoftState(s: RoleChange): void {
    const prev = this.soft;
    this.soft = { role: s.role, term: s.term, leader: s.leader };
    if (prev.role === 'leader' && s.role !== 'leader') this.reads.onLostLeadership(this.notController('leadership lost'));
    if (prev.role !== s.role) {
      this.logger.info({ role: s.role, term: s.term, leader: s.leader }, 'role changed');
      this.emit('roleChange', this.soft);
    }
    if (prev.leader !== s.leader) {
      if (s.role !== 'leader') this.logger.info({ leader: s.leader, term: s.term }, 'leader changed');
      this.emit('leaderChange', this.soft);
    }
  }

  private fail(err: Error): void {
    this.logger.error({ err: err.message, stack: err.stack }, 'raft node failed; stopping');
    this.halt(new SluiceError(Errors.KAFKA_STORAGE_ERROR, `raft node failed: ${err.message}`));
    void this.opts.transport.close().catch(() => undefined);
    this.emit('fatal', err);
  }

  /** Stops timers and settles every waiter; idempotent. */
  private halt(err: SluiceError): void {
    this.stopped = true;
    this.cancelTick?.();
    this.proposals.rejectAll(err);
    this.reads.rejectAll(err);
  }

  // ------------------------------------------------------------ shutdown

  /**
   * Controlled stop: if leader (and there is another voter), hand leadership to
   * the most caught-up follower first, waiting at most transferTimeoutMs; then
   * persist the latest commit index, close the transport and the disk.
   */
  stop(opts: { transferLeadership?: boolean } = {}): Promise<void> {
    this.stopping ??= this.doStop(opts.transferLeadership ?? true);
    return this.stopping;
  }

  private async doStop(transfer: boolean): Promise<void> {
    if (transfer && !this.stopped) await this.handOffLeadership();
    const wasFailed = this.stopped;
    this.halt(this.notController('node stopped'));
    await this.opts.transport.close();
    if (!wasFailed && this.unpersistedHardState) {
      try {
        this.disk.setHardState(this.unpersistedHardState);
        this.disk.sync();
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'could not persist the commit index at stop');
      }
    }
    this.disk.close();
    this.logger.info({}, 'raft node stopped');
  }

  private async handOffLeadership(): Promise<void> {
    const target = this.transferTarget();
    if (target === undefined || !this.transferLeadership(target)) return;
    this.logger.info({ target }, 'transferring leadership before stopping');
    await new Promise<void>((resolve) => {
      // Wait for the successor to be known (not merely for our step-down), so
      // the cluster is not left mid-election when this node goes away.
      const onLeader = (c: RoleChange): void => {
        if (c.leader !== NO_NODE && c.leader !== this.opts.id) done();
      };
      const done = (): void => {
        cancelTimer();
        this.off('leaderChange', onLeader);
        resolve();
      };
      const cancelTimer = this.scheduler.schedule(this.opts.limits.transferTimeoutMs, done);
      this.on('leaderChange', onLeader);
    });
  }

  /** The most caught-up recently active voter, if this node leads. */
  private transferTarget(): NodeId | undefined {
    const s = this.raft.status();
    if (s.role !== 'leader' || !s.progress) return undefined;
    let best: NodeId | undefined;
    let bestMatch = -1;
    for (const [id, p] of s.progress) {
      if (!s.membership.voters.includes(id) || !p.recentActive) continue;
      if (p.match > bestMatch) {
        best = id;
        bestMatch = p.match;
      }
    }
    return best;
  }
}
