// The active controller's state machine, as a pure driver: stepped by events
// (Raft role changes, commands submitted, ReadIndex and proposal outcomes) and
// by tick() (the injected clock's time), it returns what to do as effects —
// read, propose, answer — and never waits, arms a timer or touches a socket.
// The process (service/quorum-controller.ts) binds RaftNode promises and one
// Scheduler timer to it; the controller simulation (test/sim/controller-sim.ts)
// binds simulated Raft nodes and simulated time to the same code.
//
// Roles (one owner of every transition: this file):
//   standby ──roleChanged(leader, T)──▶ activating(T): a ReadIndex is issued
//   activating(T) ──readDone(ok) while still leader in T──▶ active(T):
//       every registered broker gets a full session (BrokerHeartbeats.resetAll,
//       so failover never fences at once); the first controller of a cluster
//       writes the cluster record (and any bootstrap records)
//   activating/active ──roleChanged(not leader, or another term)──▶ standby:
//       everything queued or in flight is answered NOT_CONTROLLER at once
//       (Kafka's QuorumController.renounce): the caller retries at the new
//       controller, whose image shows whatever became of an entry in flight.
//       The proposal in flight is forgotten: a later activation is in a later
//       term, whose ReadIndex settles every earlier entry
//   activating/active ──ReadIndex failed, or the barrier failed──▶ standby,
//       then activating again after reactivateDelayMs while Raft still leads
//       (no role change will come: Raft did not lose the lead)
//   any ──stop()──▶ stopped (final)
//
// While active, commands run serially in batches (at most batchCommandsMax)
// against the committed image; each sees the image the previous ones of its
// batch left, all their records go into ONE Raft entry, and every response is
// released only when that entry is applied (proposalDone ok): a caller never
// learns of a change that could still be lost. One proposal is in flight at a
// time, so the working image is always "committed image + this batch": a lost
// leadership leaves nothing to roll back. A batch without records is answered
// at once.
//
// Unknown outcomes: a proposal that failed with anything but NOT_CONTROLLER
// (a timeout, say) may still commit in its term. Until an empty barrier entry
// proposed after it is applied in that same term, no command runs against the
// committed image — also after a re-activation in the same term (ReadIndex
// covers only what is already committed). In a later term the new leader's
// first commit settles every earlier entry, so the activation's ReadIndex is
// enough.
//
// Timers (deadlines on the clock's monotonic time; nextWakeMs() says when to
// tick next): while active, a fencing check every fenceCheckIntervalMs (not
// while a proposal is in flight), also at the moment a broker that peers
// report unreachable has been silent for broker.suspect.timeout.ms (the
// corroborated-death rule of decisions/broker-heartbeats.ts: waiting for the
// next periodic check would add up to fenceCheckIntervalMs to every
// failover), and a preferred-leader rebalance every
// leaderRebalanceIntervalMs (when auto.leader.rebalance.enable); while
// standing by after a failed activation, the reactivation deadline.

import type { Clock } from '../util/clock.js';
import type { Rng } from '../util/rng.js';
import type { Logger } from '../util/logger.js';
import { imageWithRecords } from '../metadata/delta.js';
import type { MetadataImage } from '../metadata/image.js';
import type { MetadataRecord } from '../metadata/records.js';
import { encodeMetadataRecords } from '../metadata/codec.js';
import { BrokerHeartbeats } from './decisions/broker-heartbeats.js';
import { brokerSetting, type CommandContext, type CommandResult } from './context.js';
import { brokersToFence, fenceExpiredBrokers, sessionTimeoutMs, suspectTimeoutMs } from './cluster-control.js';
import { electPreferredLeaders, imbalancedPartitions } from './replication-control.js';

export const METADATA_VERSION = 1;

export type AnyCommand = (ctx: CommandContext) => CommandResult<unknown>;

/** What the driver reads from its node, synchronously (no I/O: both are in memory). */
export interface ControllerView {
  /** The committed, applied metadata image. */
  image(): MetadataImage;
  /** The Raft log's last index (the next proposal gets lastIndex + 1). */
  lastIndex(): number;
}

export interface ControllerDriverOptions {
  readonly clusterId: string;
  readonly view: ControllerView;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
  readonly fenceCheckIntervalMs?: number;
  /** Commands per Raft entry. */
  readonly batchCommandsMax?: number;
  /** Commands waiting to run; beyond this, submit() is refused at once (retriable). */
  readonly queuedCommandsMax?: number;
  /** How often the active controller moves leadership back to preferred replicas (auto.leader.rebalance.enable). */
  readonly leaderRebalanceIntervalMs?: number;
  /** Pause before retrying activation after a failed one while still the Raft leader. */
  readonly reactivateDelayMs?: number;
  /** Records the first controller of a cluster writes with the cluster record (KRaft's bootstrap records). */
  readonly bootstrapRecords?: readonly MetadataRecord[];
}

/** Why a command was not answered with its response. */
export type Refusal =
  | { readonly kind: 'notController' }
  | { readonly kind: 'queueFull' }
  /** Its entry's proposal failed in a way that may still commit it. */
  | { readonly kind: 'outcomeUnknown'; readonly cause: unknown }
  /** The command threw, or its records do not replay on the working image: a bug in the command. */
  | { readonly kind: 'commandFailed'; readonly stage: 'command' | 'replay'; readonly cause: unknown };

export type CommandOutcome = { readonly ok: true; readonly response: unknown } | { readonly ok: false; readonly refusal: Refusal };

/** Work the driver's host must do. */
export type ControllerEffect =
  /** Ask Raft for a read index; report with readDone(id, …) once the image has applied it (or it failed). */
  | { readonly kind: 'readIndex'; readonly id: number }
  /** Propose an entry; report with proposalDone(id, …) once it is applied locally (or failed). */
  | { readonly kind: 'propose'; readonly id: number; readonly data: Uint8Array; readonly barrier: boolean; readonly expectedIndex: number }
  /** The answer to submit()'s request `id`. */
  | { readonly kind: 'reply'; readonly id: number; readonly outcome: CommandOutcome }
  /** The answer to a command the driver submitted itself (bootstrap, fencing, rebalance). */
  | { readonly kind: 'internalDone'; readonly label: InternalLabel; readonly outcome: CommandOutcome }
  /** This node became the active controller in `term` (start the observer membership, checks record it). */
  | { readonly kind: 'activated'; readonly term: number; readonly metadataOffset: number }
  /** This node stopped being the active controller. */
  | { readonly kind: 'deactivated'; readonly term: number };

export type InternalLabel = 'bootstrap' | 'fenceExpiredBrokers' | 'rebalance';

/** A proposal's result as the Raft node reports it. */
export type ProposalResult =
  | { readonly ok: true; readonly index: number; readonly term: number }
  /** notController: refused or overwritten (the entry never commits); otherwise the outcome is unknown. */
  | { readonly ok: false; readonly notController: boolean; readonly cause: unknown };

type Phase =
  | { readonly kind: 'standby' }
  | { readonly kind: 'activating'; readonly term: number; readonly readId: number }
  | {
    readonly kind: 'active'; readonly term: number; readonly heartbeats: BrokerHeartbeats; fenceAtMs: number; rebalanceAtMs: number;
    /** A corroboration deadline wakes the driver no sooner than this (bounds re-checks while a fence cannot run yet). */
    corroborationNotBeforeMs: number;
  }
  | { readonly kind: 'stopped' };

type Caller = { readonly kind: 'request'; readonly id: number } | { readonly kind: 'internal'; readonly label: InternalLabel };

interface Queued {
  readonly command: AnyCommand;
  readonly caller: Caller;
}

interface Inflight {
  readonly id: number;
  /** The term the proposal was made in (a barrier is owed in it if the outcome is unknown). */
  readonly term: number;
  readonly barrier: boolean;
  readonly outcomes: ReadonlyArray<{ readonly caller: Caller; readonly outcome: CommandOutcome }>;
}

export interface ControllerCounters {
  activations: number;
  batches: number;
  barriers: number;
  /** Activations or barriers that failed while Raft still led (each followed by a reactivation). */
  termsGivenUp: number;
  /** Brokers this controller decided to fence on corroborated evidence before their session expired. */
  corroboratedFences: number;
}

/** Least pause between two corroboration-triggered fencing checks. */
const CORROBORATION_RECHECK_MS = 20;

export class ControllerDriver {
  private phase: Phase = { kind: 'standby' };
  /** The Raft role and term last reported by roleChanged. */
  private raft = { leader: false, term: -1 };
  private queue: Queued[] = [];
  private inflight: Inflight | undefined;
  /** Term in which a proposal's outcome became unknown, or -1 (see the header). */
  private unknownOutcomeTerm = -1;
  /** Monotonic deadline for the next activation attempt after a failed one, or undefined. */
  private reactivateAtMs: number | undefined;
  private nextId = 1;
  private effects: ControllerEffect[] = [];
  private heartbeats: BrokerHeartbeats;
  readonly counters: ControllerCounters = { activations: 0, batches: 0, barriers: 0, termsGivenUp: 0, corroboratedFences: 0 };

  constructor(private readonly opts: ControllerDriverOptions) {
    const image = opts.view.image();
    this.heartbeats = new BrokerHeartbeats(opts.clock, sessionTimeoutMs(image), suspectTimeoutMs(image));
  }

  get isActive(): boolean {
    return this.phase.kind === 'active';
  }

  /** The term this node is the active controller in, or undefined. */
  get activeTerm(): number | undefined {
    return this.phase.kind === 'active' ? this.phase.term : undefined;
  }

  /** The active term's broker sessions (heartbeat handlers record into them through CommandContext). */
  get brokerHeartbeats(): BrokerHeartbeats {
    return this.heartbeats;
  }

  /** The effects produced since the last call, in order. */
  takeEffects(): ControllerEffect[] {
    const out = this.effects;
    this.effects = [];
    return out;
  }

  /** The monotonic time at which tick() has something to do, or undefined. */
  nextWakeMs(): number | undefined {
    const p = this.phase;
    if (p.kind === 'active') {
      const due = this.corroborationDueMs(p);
      return Math.min(p.fenceAtMs, p.rebalanceAtMs, due ?? Infinity);
    }
    if (p.kind === 'standby') return this.reactivateAtMs;
    return undefined;
  }

  // ------------------------------------------------------------ events

  /** The Raft role or term changed (idempotent: the same report twice changes nothing). */
  roleChanged(role: string, term: number): void {
    if (this.phase.kind === 'stopped') return;
    // A pending reactivation belongs to one leadership: a new term or a lost lead cancels it.
    if (role !== 'leader' || term !== this.raft.term) this.reactivateAtMs = undefined;
    this.raft = { leader: role === 'leader', term };
    const p = this.phase;
    if (p.kind !== 'standby' && (!this.raft.leader || p.term !== term)) this.standby();
    if (this.raft.leader && this.phase.kind === 'standby' && this.reactivateAtMs === undefined) this.beginActivation(term);
  }

  /** Queues a command; its answer comes as a `reply` effect with the returned id. */
  submit(command: AnyCommand): number {
    const id = this.nextId++;
    this.enqueue({ command, caller: { kind: 'request', id } });
    return id;
  }

  /** The ReadIndex `id` is confirmed and applied (ok), or failed. */
  readDone(id: number, ok: boolean, cause?: unknown): void {
    const p = this.phase;
    if (p.kind !== 'activating' || p.readId !== id) return;
    if (!ok) {
      this.opts.logger.debug({ err: describe(cause), term: p.term }, 'activation aborted');
      return this.giveUp();
    }
    if (!this.raft.leader || this.raft.term !== p.term) return this.standby();
    this.activate(p.term);
  }

  /** The proposal `id` was applied locally (ok) or failed. */
  proposalDone(id: number, result: ProposalResult): void {
    const f = this.inflight;
    if (f === undefined || f.id !== id) return;
    this.inflight = undefined;
    if (f.barrier) {
      if (result.ok) {
        if (this.unknownOutcomeTerm === f.term) this.unknownOutcomeTerm = -1;
      } else {
        if (!result.notController) this.unknownOutcomeTerm = f.term;
        this.opts.logger.warn({ err: describe(result.cause) }, 'barrier after an unknown outcome failed; stepping down as controller');
        if (this.phase.kind === 'active' && this.phase.term === f.term) this.giveUp();
      }
      return this.runBatches();
    }
    let failure: Refusal | undefined;
    if (!result.ok) {
      // Anything but NOT_CONTROLLER may mean the entry still commits later.
      if (!result.notController) this.unknownOutcomeTerm = f.term;
      failure = result.notController ? { kind: 'notController' } : { kind: 'outcomeUnknown', cause: result.cause };
    }
    for (const o of f.outcomes) this.answer(o.caller, failure === undefined ? o.outcome : { ok: false, refusal: failure });
    this.runBatches();
  }

  /** Runs whatever is due at the clock's time. */
  tick(): void {
    const now = this.opts.clock.monotonicMs();
    const p = this.phase;
    if (p.kind === 'standby' && this.reactivateAtMs !== undefined && now >= this.reactivateAtMs) {
      this.reactivateAtMs = undefined;
      if (this.raft.leader) this.beginActivation(this.raft.term);
      return;
    }
    if (p.kind !== 'active') return;
    const due = this.corroborationDueMs(p);
    if (now >= p.fenceAtMs) {
      p.fenceAtMs = now + (this.opts.fenceCheckIntervalMs ?? 250);
      this.checkSessions(p);
    } else if (due !== undefined && now >= due) {
      p.corroborationNotBeforeMs = now + CORROBORATION_RECHECK_MS;
      this.checkSessions(p);
    }
    if (now >= p.rebalanceAtMs) {
      p.rebalanceAtMs = now + (this.opts.leaderRebalanceIntervalMs ?? 30_000);
      this.rebalanceLeaders();
    }
  }

  /** The node stops: nothing runs any more; queued commands are answered NOT_CONTROLLER. */
  stop(): void {
    if (this.phase.kind === 'stopped') return;
    this.standby();
    this.phase = { kind: 'stopped' };
    this.reactivateAtMs = undefined;
  }

  // ------------------------------------------------------------ transitions

  private beginActivation(term: number): void {
    const readId = this.nextId++;
    this.phase = { kind: 'activating', term, readId };
    this.effects.push({ kind: 'readIndex', id: readId });
  }

  private activate(term: number): void {
    const image = this.opts.view.image();
    this.heartbeats = new BrokerHeartbeats(this.opts.clock, sessionTimeoutMs(image), suspectTimeoutMs(image));
    this.heartbeats.resetAll(image.brokers.keys());
    const now = this.opts.clock.monotonicMs();
    this.phase = {
      kind: 'active', term, heartbeats: this.heartbeats,
      fenceAtMs: now + (this.opts.fenceCheckIntervalMs ?? 250), rebalanceAtMs: now + (this.opts.leaderRebalanceIntervalMs ?? 30_000),
      corroborationNotBeforeMs: now,
    };
    this.counters.activations++;
    this.opts.logger.info({ term, metadataOffset: image.offset }, 'became the active controller');
    this.effects.push({ kind: 'activated', term, metadataOffset: image.offset });
    if (!image.cluster) {
      const records: MetadataRecord[] = [
        { type: 'cluster', v: 1, clusterId: this.opts.clusterId, metadataVersion: METADATA_VERSION }, ...(this.opts.bootstrapRecords ?? []),
      ];
      this.enqueue({ command: () => ({ records, response: null }), caller: { kind: 'internal', label: 'bootstrap' } });
    } else {
      this.runBatches();
    }
  }

  /** Leaves activating/active; every command queued or in flight is answered NOT_CONTROLLER. */
  private standby(): void {
    const p = this.phase;
    if (p.kind === 'stopped' || p.kind === 'standby') return;
    this.phase = { kind: 'standby' };
    if (p.kind === 'active') {
      this.opts.logger.info({ term: p.term }, 'no longer the active controller');
      this.effects.push({ kind: 'deactivated', term: p.term });
    }
    const notController: CommandOutcome = { ok: false, refusal: { kind: 'notController' } };
    const inflight = this.inflight?.outcomes ?? [];
    this.inflight = undefined;
    for (const o of inflight) this.answer(o.caller, notController);
    for (const q of this.queue.splice(0)) this.answer(q.caller, notController);
  }

  /**
   * A failed activation or barrier steps down only as controller; Raft may
   * still lead and then no role change will come. Try again shortly while
   * this node leads, so the cluster is never left without an active
   * controller under a healthy Raft leader.
   */
  private giveUp(): void {
    this.standby();
    this.counters.termsGivenUp++;
    if (this.raft.leader) this.reactivateAtMs = this.opts.clock.monotonicMs() + (this.opts.reactivateDelayMs ?? 100);
  }

  // ------------------------------------------------------------ commands and batches

  private enqueue(q: Queued): void {
    if (this.phase.kind !== 'active') return this.answer(q.caller, { ok: false, refusal: { kind: 'notController' } });
    if (this.queue.length >= (this.opts.queuedCommandsMax ?? 10_000)) return this.answer(q.caller, { ok: false, refusal: { kind: 'queueFull' } });
    this.queue.push(q);
    this.runBatches();
  }

  private answer(caller: Caller, outcome: CommandOutcome): void {
    if (caller.kind === 'request') this.effects.push({ kind: 'reply', id: caller.id, outcome });
    else this.internalDone(caller.label, outcome);
  }

  /** Starts the next batch (or the barrier it owes) unless one is in flight. */
  private runBatches(): void {
    while (this.inflight === undefined && this.phase.kind === 'active' && this.queue.length > 0) {
      const term = this.phase.term;
      if (this.unknownOutcomeTerm !== -1 && this.unknownOutcomeTerm === term) {
        // Entries apply in order: once this one is applied, so is any earlier
        // entry whose outcome was unknown, and the image reflects it.
        this.counters.barriers++;
        this.propose(term, new Uint8Array(0), true, []);
        return;
      }
      const batch = this.queue.splice(0, this.opts.batchCommandsMax ?? 256);
      const { records, outcomes } = this.runCommands(batch);
      this.counters.batches++;
      if (records.length === 0) {
        for (const o of outcomes) this.answer(o.caller, o.outcome);
        continue;
      }
      // Commands that failed are answered now; the others when the entry is applied.
      const waiting = outcomes.filter((o) => o.outcome.ok);
      for (const o of outcomes) if (!o.outcome.ok) this.answer(o.caller, o.outcome);
      this.propose(term, encodeMetadataRecords(records), false, waiting);
    }
  }

  private propose(term: number, data: Uint8Array, barrier: boolean, outcomes: Inflight['outcomes']): void {
    const id = this.nextId++;
    this.inflight = { id, term, barrier, outcomes };
    this.effects.push({ kind: 'propose', id, data, barrier, expectedIndex: this.opts.view.lastIndex() + 1 });
  }

  /** Runs each command on the image the previous ones left. */
  private runCommands(batch: readonly Queued[]): { records: MetadataRecord[]; outcomes: Array<{ caller: Caller; outcome: CommandOutcome }> } {
    let image = this.opts.view.image();
    const nextOffset = this.opts.view.lastIndex() + 1;
    const records: MetadataRecord[] = [];
    const outcomes: Array<{ caller: Caller; outcome: CommandOutcome }> = [];
    const { clock, rng, logger } = this.opts;
    for (const q of batch) {
      let result: CommandResult<unknown>;
      try {
        result = q.command({ image, nextOffset, clock, rng, heartbeats: this.heartbeats, logger });
      } catch (err) {
        // A command that throws is a bug in it; fail that caller, keep the others.
        logger.error({ err }, 'controller command failed');
        outcomes.push({ caller: q.caller, outcome: { ok: false, refusal: { kind: 'commandFailed', stage: 'command', cause: err } } });
        continue;
      }
      try {
        image = imageWithRecords(image, result.records);
      } catch (err) {
        logger.error({ err }, 'controller command returned records that do not replay');
        outcomes.push({ caller: q.caller, outcome: { ok: false, refusal: { kind: 'commandFailed', stage: 'replay', cause: err } } });
        continue;
      }
      records.push(...result.records);
      outcomes.push({ caller: q.caller, outcome: { ok: true, response: result.response } });
    }
    return { records, outcomes };
  }

  // ------------------------------------------------------------ timers

  private checkSessions(p: Extract<Phase, { kind: 'active' }>): void {
    if (this.inflight !== undefined) return;
    const image = this.opts.view.image();
    p.heartbeats.setSessionTimeoutMs(sessionTimeoutMs(image));
    p.heartbeats.setSuspectTimeoutMs(suspectTimeoutMs(image));
    const { expired, corroborated } = brokersToFence({ image, heartbeats: p.heartbeats });
    if (expired.length === 0 && corroborated.length === 0) return;
    this.counters.corroboratedFences += corroborated.length;
    this.enqueue({ command: fenceExpiredBrokers, caller: { kind: 'internal', label: 'fenceExpiredBrokers' } });
  }

  /**
   * When a reported broker's silence reaches the suspect timeout (not while a
   * proposal is in flight: its outcome wakes the driver anyway, and a fence
   * could not run before it).
   */
  private corroborationDueMs(p: Extract<Phase, { kind: 'active' }>): number | undefined {
    if (this.inflight !== undefined) return undefined;
    const live = [...this.opts.view.image().brokers.values()].filter((b) => !b.fenced).map((b) => b.brokerId);
    const due = p.heartbeats.nextCorroborationAtMs(live);
    return due === undefined ? undefined : Math.max(due, p.corroborationNotBeforeMs);
  }

  private rebalanceLeaders(): void {
    const image = this.opts.view.image();
    if (brokerSetting(image, 'auto.leader.rebalance.enable') !== 'true') return;
    if (imbalancedPartitions(image).length === 0) return;
    this.enqueue({ command: (c) => electPreferredLeaders(c, imbalancedPartitions(c.image)), caller: { kind: 'internal', label: 'rebalance' } });
  }

  private internalDone(label: InternalLabel, outcome: CommandOutcome): void {
    const log = this.opts.logger;
    if (!outcome.ok) {
      const err = describeRefusal(outcome.refusal);
      if (label === 'bootstrap') log.warn({ err }, 'could not write the cluster record');
      else log.debug({ err }, label === 'rebalance' ? 'leader rebalance deferred' : 'fencing deferred');
    } else if (label === 'rebalance') {
      log.info('moved leadership back to preferred replicas');
    }
    this.effects.push({ kind: 'internalDone', label, outcome });
  }
}

function describe(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

export function describeRefusal(r: Refusal): string {
  switch (r.kind) {
    case 'notController': return 'not the active controller';
    case 'queueFull': return 'controller queue is full; retry later';
    case 'outcomeUnknown': return describe(r.cause);
    case 'commandFailed': return describe(r.cause);
  }
}
