// What every controller command sees, and what it returns. Commands are pure
// (Kafka's QuorumController model): given the working image — committed
// metadata plus the records this controller has proposed but not yet seen
// committed — they return the records to append and the response to send
// once those records commit. They change nothing themselves; state changes
// only by replaying the records (metadata/delta.ts) on every node.

import type { MetadataImage } from '../metadata/image.js';
import type { BrokerId, MetadataRecord } from '../metadata/records.js';
import { effectiveBrokerConfig, effectiveTopicConfig } from '../metadata/config-defs.js';
import type { Clock } from '../util/clock.js';
import type { Rng } from '../util/rng.js';
import type { Logger } from '../util/logger.js';
import type { BrokerHeartbeats } from './decisions/broker-heartbeats.js';
import type { ElectionContext } from './decisions/election.js';

export interface CommandContext {
  /** Committed image plus this controller's uncommitted records. */
  readonly image: MetadataImage;
  /** The metadata log index the command's entry will get if proposed now (broker epochs use it). */
  readonly nextOffset: number;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly heartbeats: BrokerHeartbeats;
  readonly logger: Logger;
}

export interface CommandResult<R> {
  readonly records: MetadataRecord[];
  readonly response: R;
}

export const noRecords = <R>(response: R): CommandResult<R> => ({ records: [], response });

export function clusterConfigs(image: MetadataImage): ReadonlyMap<string, string> {
  return image.config('cluster', '');
}

export function brokerSetting(image: MetadataImage, name: string): string {
  return effectiveBrokerConfig(name, clusterConfigs(image));
}

export function topicSetting(image: MetadataImage, topic: string, name: string): string {
  return effectiveTopicConfig(name, image.config('topic', topic), clusterConfigs(image));
}

/** A broker may lead when it is registered, unfenced and not shutting down. */
export function isAcceptableLeader(image: MetadataImage, broker: BrokerId): boolean {
  const reg = image.brokers.get(broker);
  return reg !== undefined && !reg.fenced && !reg.inControlledShutdown;
}

export function electionContext(image: MetadataImage, topic: string): ElectionContext {
  return {
    isAcceptableLeader: (b) => isAcceptableLeader(image, b),
    uncleanLeaderElectionEnabled: topicSetting(image, topic, 'unclean.leader.election.enable') === 'true',
  };
}
