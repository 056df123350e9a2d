// Operator-driven changes of the controller quorum's voters (KIP-853;
// `sluice cluster add-controller` / `remove-controller`), run by the active
// controller. The rules are in decisions/controller-membership.ts; this shell
// does the steps, one change at a time across the whole node (a second
// request while one runs is refused at once, retriable, naming the one in
// flight), waiting on the injected scheduler and clock:
//
//   add N at U:    commit ControllerEndpointRecord {N, U} (every voter now
//                  dials N; the observer membership adds N as an observer) →
//                  wait until N is an observer → wait until the leader knows
//                  N holds everything committed → promoteObserver N
//   remove N:      N is this node (the leader): hand leadership to the most
//                  caught-up other voter and answer NOT_CONTROLLER, so the
//                  caller retries at the new leader, which removes N as a
//                  peer it does not depend on → removeVoter N → drop N's
//                  endpoint record (if it was added at runtime)
//
// Each step is idempotent, so a request retried at a new leader after a
// failover (NOT_CONTROLLER) picks up where the old one stopped. A step that
// does not finish within changeTimeoutMs fails with REQUEST_TIMED_OUT and
// leaves the quorum as it was after the last finished step (an added node
// stays an observer; remove it with remove-controller or retry the add).

import type { Clock, Scheduler } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import { Errors, SluiceError, isSluiceError } from '../../util/errors.js';
import type { MetadataImage } from '../../metadata/image.js';
import type { MetadataRecord } from '../../metadata/records.js';
import type { ConfChange, Membership, NodeId } from '../../raft/types.js';
import type { CommandContext, CommandResult } from '../context.js';
import { caughtUp, checkAddController, checkRemoveController } from '../decisions/controller-membership.js';

/** What the membership changes need from the Raft node (RaftNode implements it). */
export interface MembershipQuorum {
  proposeConfChange(change: ConfChange): Promise<{ index: number; term: number }>;
  membership(): Membership;
  raftStatus(): { readonly id: NodeId; readonly commit: number; readonly progress?: ReadonlyMap<NodeId, { readonly match: number; readonly recentActive: boolean }> };
  transferLeadership(to: NodeId): boolean;
}

export interface ControllerMembershipOptions {
  readonly quorum: MembershipQuorum;
  /** Runs a controller command (QuorumController.submit). */
  submit<R>(command: (ctx: CommandContext) => CommandResult<R>): Promise<R>;
  image(): MetadataImage;
  /** NOT_CONTROLLER naming the current leader. */
  notController(message: string): SluiceError;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  /** How long one change may take, catch-up included. */
  readonly changeTimeoutMs?: number;
  /** How often progress is checked while waiting. */
  readonly pollIntervalMs?: number;
}

export interface ControllerChangeResult {
  readonly nodeId: NodeId;
  readonly voters: readonly NodeId[];
  readonly observers: readonly NodeId[];
}

const DEFAULT_CHANGE_TIMEOUT_MS = 60_000;
const DEFAULT_POLL_INTERVAL_MS = 100;

export class ControllerMembership {
  /** The change running, for the refusal message; undefined when none. */
  private running: string | undefined;

  constructor(private readonly opts: ControllerMembershipOptions) {}

  /** Adds `nodeId` (listening at `url`) as a voter: observer first, promoted once caught up. */
  async addController(nodeId: NodeId, url: string): Promise<ControllerChangeResult> {
    return this.exclusive(`adding node ${nodeId}`, async (deadline) => {
      const checked = checkAddController(this.opts.quorum.membership(), this.opts.image(), nodeId, url);
      if ('error' in checked) throw checked.error;
      const endpoint = checked.url;
      await this.opts.submit((ctx): CommandResult<null> => {
        const again = checkAddController(this.opts.quorum.membership(), ctx.image, nodeId, endpoint);
        if ('error' in again) throw again.error;
        const records: MetadataRecord[] = ctx.image.controllerEndpoints.get(nodeId) === endpoint ? [] : [{ type: 'controllerEndpoint', v: 1, nodeId, url: endpoint }];
        return { records, response: null };
      });
      this.opts.logger.info({ node: nodeId, url: endpoint }, 'controller endpoint committed; waiting for the node to follow the log');
      await this.until(deadline, () => this.isObserver(nodeId) || this.isVoter(nodeId), `node ${nodeId} did not become an observer (is it running at ${endpoint}?)`);
      if (!this.isVoter(nodeId)) {
        await this.until(deadline, () => {
          const s = this.opts.quorum.raftStatus();
          return caughtUp(s.progress, nodeId, s.commit);
        }, `node ${nodeId} did not catch up with the metadata log`);
        await this.confChange({ type: 'promoteObserver', node: nodeId }, deadline);
        this.opts.logger.info({ node: nodeId }, 'controller added: promoted to voter');
      }
      return this.result(nodeId);
    });
  }

  /** Removes voter `nodeId`; on the leader itself, hands leadership away first (NOT_CONTROLLER: retry there). */
  async removeController(nodeId: NodeId): Promise<ControllerChangeResult> {
    return this.exclusive(`removing node ${nodeId}`, async (deadline) => {
      const membership = this.opts.quorum.membership();
      if (membership.voters.includes(nodeId)) {
        const refused = checkRemoveController(membership, nodeId);
        if (refused) throw refused;
        if (nodeId === this.opts.quorum.raftStatus().id) this.handOver(nodeId);
        await this.confChange({ type: 'removeVoter', node: nodeId }, deadline);
        this.opts.logger.info({ node: nodeId }, 'controller removed from the voters');
      } else if (!this.opts.image().controllerEndpoints.has(nodeId)) {
        throw checkRemoveController(membership, nodeId) ?? new SluiceError(Errors.INVALID_REQUEST, `node ${nodeId} is not a controller`);
      }
      await this.opts.submit((ctx): CommandResult<null> => ({
        records: ctx.image.controllerEndpoints.has(nodeId) ? [{ type: 'controllerEndpoint', v: 1, nodeId, url: null }] : [],
        response: null,
      }));
      return this.result(nodeId);
    });
  }

  // ------------------------------------------------------------ steps

  private async exclusive<T>(what: string, run: (deadlineMs: number) => Promise<T>): Promise<T> {
    if (this.running !== undefined) {
      throw new SluiceError(Errors.REQUEST_TIMED_OUT, `another controller membership change is in progress (${this.running}); retry when it is done`,
        { reason: 'membershipChangeInProgress' });
    }
    this.running = what;
    try {
      return await run(this.opts.clock.monotonicMs() + (this.opts.changeTimeoutMs ?? DEFAULT_CHANGE_TIMEOUT_MS));
    } finally {
      this.running = undefined;
    }
  }

  /** Leadership goes to the other voter the leader knows to be furthest along; the caller retries there. */
  private handOver(self: NodeId): never {
    const s = this.opts.quorum.raftStatus();
    const others = [...(s.progress ?? new Map()).entries()]
      .filter(([id, p]) => id !== self && p.recentActive && this.isVoter(id))
      .sort((a, b) => b[1].match - a[1].match);
    const target = others[0]?.[0];
    if (target === undefined || !this.opts.quorum.transferLeadership(target)) {
      throw new SluiceError(Errors.REQUEST_TIMED_OUT, `node ${self} is the active controller and no other voter can take over now; retry later`);
    }
    this.opts.logger.info({ node: self, to: target }, 'removing the active controller: leadership handed over first');
    throw this.opts.notController(`node ${self} is handing the active controller role to node ${target}; retry there`);
  }

  /** Proposes a one-server change, retrying while an earlier change is still uncommitted. */
  private async confChange(change: ConfChange, deadline: number): Promise<void> {
    for (;;) {
      try {
        await this.opts.quorum.proposeConfChange(change);
        return;
      } catch (err) {
        const pending = isSluiceError(err, Errors.REQUEST_TIMED_OUT) && (err as SluiceError).details.reason === 'configChangePending';
        if (!pending || this.opts.clock.monotonicMs() >= deadline) throw err;
        await this.sleep();
      }
    }
  }

  private async until(deadline: number, done: () => boolean, failure: string): Promise<void> {
    while (!done()) {
      if (this.opts.clock.monotonicMs() >= deadline) throw new SluiceError(Errors.REQUEST_TIMED_OUT, `${failure} within ${this.opts.changeTimeoutMs ?? DEFAULT_CHANGE_TIMEOUT_MS} ms`);
      await this.sleep();
    }
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => this.opts.scheduler.schedule(this.opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS, resolve));
  }

  private isVoter(id: NodeId): boolean {
    return this.opts.quorum.membership().voters.includes(id);
  }

  private isObserver(id: NodeId): boolean {
    return this.opts.quorum.membership().observers.includes(id);
  }

  private result(nodeId: NodeId): ControllerChangeResult {
    const m = this.opts.quorum.membership();
    return { nodeId, voters: m.voters, observers: m.observers };
  }
}
