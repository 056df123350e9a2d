// The active controller's process shell: binds the pure ControllerDriver
// (src/controller/controller-driver.ts — roles, batching, the barrier after an
// unknown outcome, the fencing and rebalance schedule) to a RaftNode's
// promises, one Scheduler timer, and the callers' promises. It decides
// nothing itself: every event goes to the driver, and every effect the driver
// returns is carried out here, in order.
//
// Standby controllers answer every command with NOT_CONTROLLER and the id
// (and endpoint) of the current leader, so callers retry there.
//
// Observers: when the quorum can change membership (RaftNode can), the
// active controller also keeps the Raft observers equal to the registered
// brokers that follow the metadata log (observer-membership.ts), started and
// stopped with the driver's activated/deactivated effects.

import type { Scheduler } from '../../util/clock.js';
import { Errors, SluiceError } from '../../util/errors.js';
import type { MetadataImage } from '../../metadata/image.js';
import type { MetadataStateMachine } from '../../metadata/state-machine.js';
import type { CommandContext, CommandResult } from '../context.js';
import type { ConfChange, Membership } from '../../raft/types.js';
import { ControllerDriver, describeRefusal, type CommandOutcome, type ControllerCounters, type ControllerDriverOptions, type ControllerEffect } from '../controller-driver.js';
import type { BrokerHeartbeats } from '../decisions/broker-heartbeats.js';
import { ObserverMembership } from './observer-membership.js';
import { ControllerMembership, type ControllerChangeResult, type MembershipQuorum } from './controller-membership.js';

export { METADATA_VERSION } from '../controller-driver.js';

/** What the controller needs from the Raft node (RaftNode implements it). */
export interface MetadataQuorum {
  propose(data: Uint8Array): Promise<{ index: number; term: number }>;
  readIndex(): Promise<number>;
  status(): { role: string; leader: number; term: number; lastIndex: number };
  on(event: 'roleChange', listener: (change: { role: string; term: number; leader: number }) => void): unknown;
  /** Membership changes and the membership in effect; without both the controller manages no observers. */
  proposeConfChange?(change: ConfChange): Promise<{ index: number; term: number }>;
  membership?(): Membership;
  /** With the two above: operators may add and remove controllers (controller-membership.ts). */
  raftStatus?(): ReturnType<MembershipQuorum['raftStatus']>;
  transferLeadership?(to: number): boolean;
}

/** The driver's settings (clusterId, clock, rng, logger, batching, fencing and rebalance intervals, bootstrap records), and the shell's own. */
export interface QuorumControllerOptions extends Omit<ControllerDriverOptions, 'view'> {
  readonly quorum: MetadataQuorum;
  readonly metadata: MetadataStateMachine;
  readonly scheduler: Scheduler;
  /** Controller listener URL of each voter, for leader hints in NOT_CONTROLLER answers. */
  readonly endpoints?: ReadonlyMap<number, string>;
  /** Pause before retrying a refused observer change (see observer-membership.ts). */
  readonly observerRetryDelayMs?: number;
  /** How long an add-controller or remove-controller may take (controller-membership.ts). */
  readonly controllerChangeTimeoutMs?: number;
}

interface Caller {
  readonly resolve: (response: unknown) => void;
  readonly reject: (err: Error) => void;
}

export class QuorumController {
  private readonly driver: ControllerDriver;
  private readonly callers = new Map<number, Caller>();
  private readonly observers: ObserverMembership | undefined;
  private readonly controllers: ControllerMembership | undefined;
  /** The armed tick timer: its deadline and its cancel function. */
  private wake: { atMs: number; cancel: () => void } | undefined;
  private draining = false;
  private stopped = false;

  constructor(private readonly opts: QuorumControllerOptions) {
    this.driver = new ControllerDriver({
      clusterId: opts.clusterId, clock: opts.clock, rng: opts.rng, logger: opts.logger,
      view: { image: () => opts.metadata.image, lastIndex: () => opts.quorum.status().lastIndex },
      fenceCheckIntervalMs: opts.fenceCheckIntervalMs, batchCommandsMax: opts.batchCommandsMax, queuedCommandsMax: opts.queuedCommandsMax,
      leaderRebalanceIntervalMs: opts.leaderRebalanceIntervalMs, reactivateDelayMs: opts.reactivateDelayMs, bootstrapRecords: opts.bootstrapRecords,
    });
    this.observers = observerMembership(opts);
    this.controllers = this.controllerMembership();
    opts.quorum.on('roleChange', (change) => this.step(() => this.driver.roleChanged(change.role, change.term)));
    const s = opts.quorum.status();
    this.step(() => this.driver.roleChanged(s.role, s.term));
  }

  get isActive(): boolean {
    return this.driver.isActive;
  }

  /** The driver's counters (activations, batches, barriers, corroborated fences), for metrics and simulations. */
  get counters(): Readonly<ControllerCounters> {
    return this.driver.counters;
  }

  /** The active term's view of broker liveness (sessions and peers' reports), read-only use. */
  get brokerHeartbeats(): BrokerHeartbeats {
    return this.driver.brokerHeartbeats;
  }

  /** The committed image (for queries that need no linearizability). */
  get image(): MetadataImage {
    return this.opts.metadata.image;
  }

  notControllerError(message?: string): SluiceError {
    const leader = this.opts.quorum.status().leader;
    const endpoint = leader > 0 ? this.opts.endpoints?.get(leader) ?? this.opts.metadata.image.controllerEndpoints.get(leader) : undefined;
    return new SluiceError(Errors.NOT_CONTROLLER, message ?? (leader > 0 ? `the active controller is node ${leader}` : 'no active controller yet'), {
      ...(leader > 0 ? { leader } : {}),
      ...(endpoint ? { leaderEndpoint: endpoint } : {}),
    });
  }

  /** Runs a command on the active controller; resolves with its response once its records are committed. */
  submit<R>(command: (ctx: CommandContext) => CommandResult<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.step(() => {
        const id = this.driver.submit(command);
        this.callers.set(id, { resolve: resolve as (r: unknown) => void, reject });
      });
    });
  }

  /** Adds a controller (KIP-853): it joins as an observer, catches up, then is promoted to voter. */
  addController(nodeId: number, url: string): Promise<ControllerChangeResult> {
    const c = this.membershipChanges();
    return c instanceof Error ? Promise.reject(c) : c.addController(nodeId, url);
  }

  /** Removes a controller from the voters (KIP-853). */
  removeController(nodeId: number): Promise<ControllerChangeResult> {
    const c = this.membershipChanges();
    return c instanceof Error ? Promise.reject(c) : c.removeController(nodeId);
  }

  private membershipChanges(): ControllerMembership | SluiceError {
    if (!this.controllers) return new SluiceError(Errors.INVALID_REQUEST, 'this controller quorum cannot change its membership');
    if (!this.isActive) return this.notControllerError();
    return this.controllers;
  }

  private controllerMembership(): ControllerMembership | undefined {
    const q = this.opts.quorum;
    if (!q.proposeConfChange || !q.membership || !q.raftStatus || !q.transferLeadership) return undefined;
    const quorum: MembershipQuorum = {
      proposeConfChange: q.proposeConfChange.bind(q), membership: q.membership.bind(q),
      raftStatus: q.raftStatus.bind(q), transferLeadership: q.transferLeadership.bind(q),
    };
    return new ControllerMembership({
      quorum, submit: (command) => this.submit(command), image: () => this.opts.metadata.image,
      notController: (message) => this.notControllerError(message),
      clock: this.opts.clock, scheduler: this.opts.scheduler, logger: this.opts.logger.child({ component: 'controller-membership' }),
      changeTimeoutMs: this.opts.controllerChangeTimeoutMs,
    });
  }

  stop(): void {
    this.stopped = true;
    this.step(() => this.driver.stop());
    this.wake?.cancel();
    this.wake = undefined;
    this.observers?.stop();
  }

  // ------------------------------------------------------------ binding the driver

  /** Feeds one event to the driver, then carries out every effect (effects may feed more events). */
  private step(event: () => void): void {
    event();
    if (this.draining) return;
    this.draining = true;
    try {
      for (let effects = this.driver.takeEffects(); effects.length > 0; effects = this.driver.takeEffects()) {
        for (const e of effects) this.carryOut(e);
      }
    } finally {
      this.draining = false;
    }
    this.armTimer();
  }

  private carryOut(e: ControllerEffect): void {
    switch (e.kind) {
      case 'readIndex':
        this.opts.quorum.readIndex().then(
          () => this.step(() => this.driver.readDone(e.id, true)),
          (err: unknown) => this.step(() => this.driver.readDone(e.id, false, err)));
        return;
      case 'propose':
        this.opts.quorum.propose(e.data).then(
          (r) => this.step(() => this.driver.proposalDone(e.id, { ok: true, index: r.index, term: r.term })),
          (err: unknown) => this.step(() => this.driver.proposalDone(e.id, {
            ok: false, notController: err instanceof SluiceError && err.is(Errors.NOT_CONTROLLER), cause: err,
          })));
        return;
      case 'reply': {
        const caller = this.callers.get(e.id);
        this.callers.delete(e.id);
        if (caller) settle(caller, e.outcome, () => this.notControllerError());
        return;
      }
      case 'activated':
        if (!this.stopped) this.observers?.start();
        return;
      case 'deactivated':
        this.observers?.stop();
        return;
      case 'internalDone':
        return;
      default: {
        const never: never = e;
        throw new Error(`unknown controller effect ${JSON.stringify(never)}`);
      }
    }
  }

  /** Keeps one timer armed for the driver's next deadline. */
  private armTimer(): void {
    const at = this.stopped ? undefined : this.driver.nextWakeMs();
    if (this.wake && (at === undefined || this.wake.atMs !== at)) {
      this.wake.cancel();
      this.wake = undefined;
    }
    if (at === undefined || this.wake) return;
    const cancel = this.opts.scheduler.schedule(Math.max(0, at - this.opts.clock.monotonicMs()), () => {
      this.wake = undefined;
      this.step(() => this.driver.tick());
    });
    this.wake = { atMs: at, cancel };
  }
}

function settle(caller: Caller, outcome: CommandOutcome, notController: () => SluiceError): void {
  if (outcome.ok) return caller.resolve(outcome.response);
  const r = outcome.refusal;
  switch (r.kind) {
    case 'notController': return caller.reject(notController());
    case 'queueFull': return caller.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, describeRefusal(r)));
    case 'outcomeUnknown':
    case 'commandFailed':
      return caller.reject(r.cause instanceof Error ? r.cause : new SluiceError(Errors.UNKNOWN_SERVER_ERROR, describeRefusal(r)));
  }
}

function observerMembership(opts: QuorumControllerOptions): ObserverMembership | undefined {
  const q = opts.quorum;
  if (!q.proposeConfChange || !q.membership) return undefined;
  const quorum = { proposeConfChange: q.proposeConfChange.bind(q), membership: q.membership.bind(q) };
  return new ObserverMembership({
    quorum, metadata: opts.metadata, scheduler: opts.scheduler, logger: opts.logger.child({ component: 'observers' }),
    ...(opts.observerRetryDelayMs !== undefined ? { retryDelayMs: opts.observerRetryDelayMs } : {}),
  });
}
