// The active controller's shell. Runs on every controller node; it is active
// only while its Raft node leads the metadata quorum and has applied the log
// up to its own term's first commit (so its image is complete).
//
// Commands (pure functions in src/controller/) are queued and run in batches:
// each command of a batch sees the image left by the previous ones, all their
// records go into ONE Raft entry (group commit), and every response is sent
// only after that entry is committed and applied — a caller never learns of
// a change that could still be lost. Because batches are serial, the working
// image is always "committed image + this batch": nothing uncommitted
// survives a lost leadership, so there is nothing to roll back.
//
// Standby controllers answer every command with NOT_CONTROLLER and the id of
// the current leader, so callers retry there.
//
// Timers: a fencing check every fenceCheckIntervalMs proposes fences for
// brokers whose session expired. On activation every broker gets a full new
// session (BrokerHeartbeats.resetAll) — failover never fences instantly.
//
// Observers: when the quorum can change membership (RaftNode can), the
// active controller also keeps the Raft observers equal to the registered
// brokers that follow the metadata log (observer-membership.ts).

import type { Clock } from '../../util/clock.js';
import type { Rng } from '../../util/rng.js';
import type { Logger } from '../../util/logger.js';
import { Errors, SluiceError } from '../../util/errors.js';
import { imageWithRecords } from '../../metadata/delta.js';
import type { MetadataImage } from '../../metadata/image.js';
import type { MetadataRecord } from '../../metadata/records.js';
import { encodeMetadataRecords } from '../../metadata/codec.js';
import type { MetadataStateMachine } from '../../metadata/state-machine.js';
import { BrokerHeartbeats } from '../decisions/broker-heartbeats.js';
import type { CommandContext, CommandResult } from '../context.js';
import { fenceExpiredBrokers, sessionTimeoutMs } from '../cluster-control.js';
import { electPreferredLeaders, imbalancedPartitions } from '../replication-control.js';
import { brokerSetting } from '../context.js';
import type { ConfChange, Membership } from '../../raft/types.js';
import { ObserverMembership } from './observer-membership.js';

/** What the controller needs from the Raft node (RaftNode implements it). */
export interface MetadataQuorum {
  propose(data: Uint8Array): Promise<{ index: number; term: number }>;
  readIndex(): Promise<number>;
  status(): { role: string; leader: number; term: number; lastIndex: number };
  on(event: 'roleChange', listener: (change: { role: string; term: number; leader: number }) => void): unknown;
  /** Membership changes and the membership in effect; without both the controller manages no observers. */
  proposeConfChange?(change: ConfChange): Promise<{ index: number; term: number }>;
  membership?(): Membership;
}

export interface QuorumControllerOptions {
  readonly quorum: MetadataQuorum;
  readonly metadata: MetadataStateMachine;
  readonly clusterId: string;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
  readonly fenceCheckIntervalMs?: number;
  /** Commands per Raft entry. */
  readonly batchCommandsMax?: number;
  /** Commands waiting to run; beyond this, submit() fails fast (retriable). */
  readonly queuedCommandsMax?: number;
  /** How often the active controller moves leadership back to preferred replicas (auto.leader.rebalance.enable). */
  readonly leaderRebalanceIntervalMs?: number;
  /** Pause before retrying activation after a failed one while still the Raft leader. */
  readonly reactivateDelayMs?: number;
  /** Controller listener URL of each voter, for leader hints in NOT_CONTROLLER answers. */
  readonly endpoints?: ReadonlyMap<number, string>;
  /** Pause before retrying a refused observer change (see observer-membership.ts). */
  readonly observerRetryDelayMs?: number;
}

type AnyCommand = (ctx: CommandContext) => CommandResult<unknown>;

interface Queued {
  readonly command: AnyCommand;
  readonly resolve: (response: unknown) => void;
  readonly reject: (err: Error) => void;
}

export const METADATA_VERSION = 1;

export class QuorumController {
  private active = false;
  /** Raft term in which this node became active; changes invalidate in-flight activation. */
  private activeTerm = -1;
  private readonly queue: Queued[] = [];
  private running = false;
  private fenceTimer: ReturnType<typeof setInterval> | undefined;
  private rebalanceTimer: ReturnType<typeof setInterval> | undefined;
  private heartbeats: BrokerHeartbeats;
  private stopped = false;
  /**
   * The Raft term in which a proposal's outcome became unknown (it timed out
   * while this node led), or -1. That entry may still commit in this term, so
   * no command may run against the committed image until an empty barrier
   * entry has been applied after it — also after a re-activation in the same
   * term (ReadIndex covers only what is already committed). In a later term
   * the new leader's first commit settles every earlier entry, so the
   * activation's ReadIndex is enough.
   */
  private unknownOutcomeTerm = -1;
  private reactivateTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly observers: ObserverMembership | undefined;

  constructor(private readonly opts: QuorumControllerOptions) {
    this.heartbeats = new BrokerHeartbeats(opts.clock, sessionTimeoutMs(opts.metadata.image));
    this.observers = observerMembership(opts);
    opts.quorum.on('roleChange', (change) => this.onRoleChange(change.role, change.term));
    const s = opts.quorum.status();
    if (s.role === 'leader') this.onRoleChange('leader', s.term);
  }

  get isActive(): boolean {
    return this.active;
  }

  /** The committed image (for queries that need no linearizability). */
  get image(): MetadataImage {
    return this.opts.metadata.image;
  }

  notControllerError(): SluiceError {
    const leader = this.opts.quorum.status().leader;
    const endpoint = leader > 0 ? this.opts.endpoints?.get(leader) : undefined;
    return new SluiceError(Errors.NOT_CONTROLLER, leader > 0 ? `the active controller is node ${leader}` : 'no active controller yet', {
      ...(leader > 0 ? { leader } : {}),
      ...(endpoint ? { leaderEndpoint: endpoint } : {}),
    });
  }

  /** Runs a command on the active controller; resolves with its response once its records are committed. */
  submit<R>(command: (ctx: CommandContext) => CommandResult<R>): Promise<R> {
    if (!this.active) return Promise.reject(this.notControllerError());
    if (this.queue.length >= (this.opts.queuedCommandsMax ?? 10_000)) {
      return Promise.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, 'controller queue is full; retry later'));
    }
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ command, resolve: resolve as (r: unknown) => void, reject });
      void this.runBatches();
    });
  }

  private onRoleChange(role: string, term: number): void {
    if (role === 'leader' && !this.active && this.activeTerm !== term) {
      this.activeTerm = term;
      void this.activate(term);
    } else if (role !== 'leader' && (this.active || this.activeTerm !== -1)) {
      this.deactivate();
    }
  }

  /** Waits until the image holds everything committed before this term, then takes over. */
  private async activate(term: number): Promise<void> {
    try {
      await this.opts.quorum.readIndex();
    } catch (err) {
      this.opts.logger.debug({ err: (err as Error).message, term }, 'activation aborted');
      if (this.activeTerm === term) {
        this.activeTerm = -1;
        this.scheduleReactivation();
      }
      return;
    }
    if (this.stopped || this.activeTerm !== term || this.opts.quorum.status().role !== 'leader') return;
    const image = this.opts.metadata.image;
    this.heartbeats = new BrokerHeartbeats(this.opts.clock, sessionTimeoutMs(image));
    this.heartbeats.resetAll(image.brokers.keys());
    this.active = true;
    this.opts.logger.info({ term, metadataOffset: image.offset }, 'became the active controller');
    this.fenceTimer = setInterval(() => this.checkSessions(), this.opts.fenceCheckIntervalMs ?? 250);
    this.rebalanceTimer = setInterval(() => this.rebalanceLeaders(), this.opts.leaderRebalanceIntervalMs ?? 30_000);
    this.observers?.start();
    if (!image.cluster) {
      this.submit((): CommandResult<null> => ({
        records: [{ type: 'cluster', v: 1, clusterId: this.opts.clusterId, metadataVersion: METADATA_VERSION }],
        response: null,
      })).catch((err) => this.opts.logger.warn({ err: (err as Error).message }, 'could not write the cluster record'));
    }
  }

  private deactivate(): void {
    if (this.active) this.opts.logger.info('no longer the active controller');
    this.active = false;
    this.activeTerm = -1;
    this.observers?.stop();
    if (this.fenceTimer) clearInterval(this.fenceTimer);
    if (this.rebalanceTimer) clearInterval(this.rebalanceTimer);
    this.fenceTimer = undefined;
    this.rebalanceTimer = undefined;
    const err = this.notControllerError();
    for (const q of this.queue.splice(0)) q.reject(err);
  }

  /**
   * A failed activation or barrier steps down only as controller; Raft may
   * still lead and then no role change will come. Try again shortly while
   * this node leads, so the cluster is never left without an active
   * controller under a healthy Raft leader.
   */
  private scheduleReactivation(): void {
    if (this.stopped || this.reactivateTimer) return;
    this.reactivateTimer = setTimeout(() => {
      this.reactivateTimer = undefined;
      const s = this.opts.quorum.status();
      if (this.stopped || this.active || this.activeTerm !== -1 || s.role !== 'leader') return;
      this.activeTerm = s.term;
      void this.activate(s.term);
    }, this.opts.reactivateDelayMs ?? 100);
  }

  private rebalanceLeaders(): void {
    if (!this.active) return;
    const image = this.opts.metadata.image;
    if (brokerSetting(image, 'auto.leader.rebalance.enable') !== 'true') return;
    const partitions = imbalancedPartitions(image);
    if (partitions.length === 0) return;
    this.submit((c) => electPreferredLeaders(c, imbalancedPartitions(c.image)))
      .then(() => this.opts.logger.info({ partitions: partitions.length }, 'moved leadership back to preferred replicas'))
      .catch((err) => this.opts.logger.debug({ err: (err as Error).message }, 'leader rebalance deferred'));
  }

  private checkSessions(): void {
    if (!this.active || this.running) return;
    const image = this.opts.metadata.image;
    this.heartbeats.setSessionTimeoutMs(sessionTimeoutMs(image));
    const live = [...image.brokers.values()].filter((b) => !b.fenced).map((b) => b.brokerId);
    if (this.heartbeats.expired(live).length === 0) return;
    this.submit(fenceExpiredBrokers).catch((err) => this.opts.logger.debug({ err: (err as Error).message }, 'fencing deferred'));
  }

  private async runBatches(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0 && this.active) {
        const batch = this.queue.splice(0, this.opts.batchCommandsMax ?? 256);
        await this.runBatch(batch);
      }
    } finally {
      this.running = false;
    }
  }

  private async runBatch(batch: Queued[]): Promise<void> {
    if (this.unknownOutcomeTerm !== -1 && this.unknownOutcomeTerm === this.activeTerm) {
      try {
        // Entries apply in order: once this one is applied, so is any earlier
        // entry whose outcome was unknown, and the image reflects it.
        await this.opts.quorum.propose(new Uint8Array(0));
        this.unknownOutcomeTerm = -1;
      } catch (err) {
        this.opts.logger.warn({ err: (err as Error).message }, 'barrier after an unknown outcome failed; stepping down as controller');
        for (const q of batch) q.reject(this.notControllerError());
        this.deactivate();
        this.scheduleReactivation();
        return;
      }
    }
    let image = this.opts.metadata.image;
    const nextOffset = this.opts.quorum.status().lastIndex + 1;
    const records: MetadataRecord[] = [];
    const outcomes: Array<{ q: Queued; ok: boolean; value: unknown }> = [];
    for (const q of batch) {
      try {
        const result = q.command({ image, nextOffset, clock: this.opts.clock, rng: this.opts.rng, heartbeats: this.heartbeats, logger: this.opts.logger });
        image = imageWithRecords(image, result.records);
        records.push(...result.records);
        outcomes.push({ q, ok: true, value: result.response });
      } catch (err) {
        // A command that throws is a bug in it; fail that caller, keep the others.
        this.opts.logger.error({ err }, 'controller command failed');
        outcomes.push({ q, ok: false, value: err });
      }
    }
    if (records.length > 0) {
      try {
        await this.opts.quorum.propose(encodeMetadataRecords(records));
      } catch (err) {
        const notController = err instanceof SluiceError && err.is(Errors.NOT_CONTROLLER);
        // Anything but NOT_CONTROLLER may mean the entry still commits later.
        if (!notController) this.unknownOutcomeTerm = this.activeTerm;
        const failure = notController ? this.notControllerError() : (err as Error);
        for (const o of outcomes) o.q.reject(failure);
        return;
      }
    }
    for (const o of outcomes) {
      if (o.ok) o.q.resolve(o.value);
      else o.q.reject(o.value as Error);
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.reactivateTimer) clearTimeout(this.reactivateTimer);
    this.deactivate();
  }
}

function observerMembership(opts: QuorumControllerOptions): ObserverMembership | undefined {
  const q = opts.quorum;
  if (!q.proposeConfChange || !q.membership) return undefined;
  const quorum = { proposeConfChange: q.proposeConfChange.bind(q), membership: q.membership.bind(q) };
  return new ObserverMembership({
    quorum, metadata: opts.metadata, logger: opts.logger.child({ component: 'observers' }),
    ...(opts.observerRetryDelayMs !== undefined ? { retryDelayMs: opts.observerRetryDelayMs } : {}),
  });
}
