// The ISR changes this broker's leaders ask the controller for
// (AlterPartition, Kafka's AlterPartitionManager): a leader whose rules want
// a change (LeaderState.isrChangeToRequest: shrink the laggards, or take in
// a caught-up follower) marks it pending and sends one call; the change
// takes effect only when the image shows it (image-applier.ts). Checked on
// every follower fetch from outside the ISR and on a timer every half
// replica.lag.time.max.ms (replica-manager.ts binds it to the scheduler).
//
// Invariant: at most one call per leader in flight, and only that call's
// answer may clear the pending change — an image can clear it first and a
// newer call go out, and a late answer to the older one must not release that.

import type { Logger } from '../util/logger.js';
import type { HostedPartitions } from './hosted-partitions.js';
import type { Partition } from './partition.js';
import type { LeaderState } from './rules/leader-state.js';

export interface AlterPartitionCall {
  readonly brokerId: number;
  readonly brokerEpoch: number;
  readonly topicId: string;
  readonly partition: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  readonly newIsr: readonly number[];
}

export interface AlterPartitionAnswer {
  readonly errorCode: number;
  readonly errorMessage?: string | null;
  readonly partitionEpoch?: number;
}

export interface IsrRequestsOptions {
  readonly brokerId: number;
  readonly brokerEpoch: () => number;
  readonly hosted: HostedPartitions;
  readonly logger: Logger;
  readonly alterPartition: (req: AlterPartitionCall) => Promise<AlterPartitionAnswer>;
}

export class IsrRequests {
  /** The AlterPartition call each leader has in flight. */
  private readonly inFlight = new WeakMap<LeaderState, AlterPartitionCall>();

  constructor(private readonly opts: IsrRequestsOptions) {}

  /** The timer's pass: every leader that wants a change asks for it. */
  checkAll(): void {
    for (const p of this.opts.hosted.values()) if (p.leader) this.maybeRequest(p);
  }

  /** Sends the ISR change `p`'s leader wants now, if any and none is in flight. */
  maybeRequest(p: Partition): void {
    const leader = p.leader;
    if (!leader || this.opts.hosted.stopped) return;
    const change = leader.isrChangeToRequest();
    if (!change) return;
    leader.markIsrChangePending(change.newIsr);
    const sentEpoch = p.partitionEpoch;
    this.opts.logger.info({ topic: p.topic, partition: p.index, reason: change.reason, brokers: change.brokers, newIsr: change.newIsr }, 'asking the controller to change the ISR');
    const call: AlterPartitionCall = {
      brokerId: this.opts.brokerId, brokerEpoch: this.opts.brokerEpoch(), topicId: p.topicId, partition: p.index,
      leaderEpoch: p.leaderEpoch, partitionEpoch: sentEpoch, newIsr: change.newIsr,
    };
    this.inFlight.set(leader, call);
    const settle = (why: string | null): void => {
      if (p.leader !== leader || this.inFlight.get(leader) !== call || !leader.hasPendingIsrChange) return;
      if (why) this.opts.logger.warn({ topic: p.topic, partition: p.index, why }, 'ISR change not accepted');
      leader.clearPendingIsrChange();
    };
    this.opts.alterPartition(call).then(
      (res) => {
        if (res.errorCode !== 0) settle(res.errorMessage ?? `error ${res.errorCode}`);
        else if (res.partitionEpoch === sentEpoch || p.partitionEpoch !== sentEpoch) settle(null);
        // else: committed; the image carrying it calls onIsrCommitted.
      },
      (err: Error) => settle(err.message),
    );
  }
}
