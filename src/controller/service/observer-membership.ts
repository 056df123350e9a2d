// The active controller's half of "brokers as observers": it keeps the Raft
// membership's observers equal to the registered brokers that follow the
// metadata log (a METADATA_ENDPOINT endpoint, not a voter; see
// src/raft-node/observers.ts). A broker registers → addObserver, so the
// leader starts replicating the log to it (it must catch up to be unfenced);
// it is unregistered (or drops the endpoint) → removeObserver. A controller
// added at runtime (its ControllerEndpointRecord, sluice cluster
// add-controller) is followed the same way until it is a voter.
//
// Runs only while the controller is active (start/stop from QuorumController),
// so it compares the membership with a complete image: a new leader's image
// has applied everything committed before its term.
//
// One change at a time (Raft's one-server rule): the next change is proposed
// only after the previous one was applied. A refusal (configChangePending, a
// timeout) is retried after retryDelayMs; image changes and activation
// trigger a new comparison. `generation` ties callbacks to one activation, so
// a proposal settling after stop() cannot start work in a later activation.

import type { Scheduler } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import type { ConfChange, Membership } from '../../raft/types.js';
import type { MetadataStateMachine } from '../../metadata/state-machine.js';
import { metadataFollowers, nextObserverChange } from '../../raft-node/observers.js';

/** What it needs from the Raft node (RaftNode implements it). */
export interface ObserverQuorum {
  proposeConfChange(change: ConfChange): Promise<{ index: number; term: number }>;
  membership(): Membership;
}

export interface ObserverMembershipOptions {
  readonly quorum: ObserverQuorum;
  readonly metadata: MetadataStateMachine;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  /** Pause before trying again after a refused or failed change. */
  readonly retryDelayMs?: number;
}

const DEFAULT_RETRY_DELAY_MS = 200;

export class ObserverMembership {
  private running = false;
  private generation = 0;
  private inFlight = false;
  private retryTimer: (() => void) | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly opts: ObserverMembershipOptions) {}

  /** The controller became active: reconcile now and on every broker change. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.generation++;
    this.inFlight = false;
    // Image listeners run inside the Raft ready loop: propose on a later
    // microtask, after the driver has finished handling that Ready.
    this.unsubscribe = this.opts.metadata.subscribe((_image, changes) => {
      if (changes === null || changes.brokers.size > 0 || changes.controllerEndpoints) queueMicrotask(() => this.reconcile());
    });
    this.reconcile();
  }

  /** The controller stepped down (or stops). Idempotent. */
  stop(): void {
    this.running = false;
    this.generation++;
    this.inFlight = false;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.retryTimer?.();
    this.retryTimer = undefined;
  }

  /** Proposes the next needed change, if any and none is in flight. */
  reconcile(): void {
    if (!this.running || this.inFlight || this.retryTimer) return;
    const membership = this.opts.quorum.membership();
    const image = this.opts.metadata.image;
    const followers = metadataFollowers(image.brokers.values(), membership.voters);
    // Controllers added at runtime follow the log too until they are promoted (controller-membership.ts).
    for (const [id, url] of image.controllerEndpoints) if (!membership.voters.includes(id)) followers.set(id, url);
    const change = nextObserverChange(membership, followers);
    if (!change) return;
    const generation = this.generation;
    this.inFlight = true;
    this.opts.quorum.proposeConfChange(change).then(() => {
      if (generation !== this.generation) return;
      this.inFlight = false;
      this.opts.logger.info({ change: change.type, node: change.node, url: followers.get(change.node) }, 'metadata observers changed');
      this.reconcile();
    }, (err: unknown) => {
      if (generation !== this.generation) return;
      this.inFlight = false;
      this.opts.logger.debug({ change: change.type, node: change.node, err: (err as Error).message }, 'observer change deferred');
      this.scheduleRetry();
    });
  }

  private scheduleRetry(): void {
    if (!this.running || this.retryTimer) return;
    this.retryTimer = this.opts.scheduler.schedule(this.opts.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS, () => {
      this.retryTimer = undefined;
      this.reconcile();
    });
  }
}
