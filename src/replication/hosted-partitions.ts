// The partitions this broker hosts and the metadata image they follow: the
// state the replica manager's parts (image applier, produce, fetch, offsets,
// ISR requests) share, and the lookups they all make — a hosted partition by
// key, the error for one not hosted, the topic configs that replication
// reads (min.insync.replicas, compression, the throttle). Only the image
// applier adds or removes partitions and sets the image.

import type { MetadataImage } from '../metadata/image.js';
import { effectiveBrokerConfig, effectiveTopicConfig } from '../metadata/config-defs.js';
import { Errors, type ErrorInfo } from '../util/errors.js';
import { partitionKey, type Partition } from './partition.js';

export class HostedPartitions {
  private readonly byKey = new Map<string, Partition>();
  /** The latest image applied (null before the first). */
  image: MetadataImage | null = null;
  /** Set once at shutdown: the parts stop starting work. */
  stopped = false;

  constructor(readonly brokerId: number) {}

  get(key: string): Partition | undefined {
    return this.byKey.get(key);
  }

  find(topic: string, index: number): Partition | undefined {
    return this.byKey.get(partitionKey(topic, index));
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  add(p: Partition): void {
    this.byKey.set(p.key, p);
  }

  delete(p: Partition): void {
    this.byKey.delete(p.key);
  }

  values(): IterableIterator<Partition> {
    return this.byKey.values();
  }

  /** Why `topic`-`index` cannot be served here when it is not hosted. */
  unknownPartition(topic: string, index: number): { error: ErrorInfo; message: string } {
    const reg = this.image?.partition(topic, index);
    if (!reg) return { error: Errors.UNKNOWN_TOPIC_OR_PARTITION, message: `no partition ${topic}-${index}` };
    return { error: Errors.NOT_LEADER_OR_FOLLOWER, message: `broker ${this.brokerId} does not host ${topic}-${index} (leader: ${reg.leader})` };
  }

  /** The leader problem of a hosted partition (-1: no epoch check), or the not-hosted error. */
  problemOf(p: Partition | undefined, topic: string, index: number, currentLeaderEpoch: number): { error: ErrorInfo; message: string } | null {
    return p ? p.leaderProblem(currentLeaderEpoch) : this.unknownPartition(topic, index);
  }

  /** A topic's effective config value (topic, then cluster, then the default); null before any image. */
  topicConfig(topic: string, name: string): string | null {
    const image = this.image;
    if (!image) return null;
    return effectiveTopicConfig(name, image.config('topic', topic), image.config('cluster', ''));
  }

  minInsyncReplicas(topic: string): number {
    const v = this.topicConfig(topic, 'min.insync.replicas');
    return v === null ? 1 : Number(v);
  }

  /** A cluster-wide broker config value; null before any image. */
  clusterConfig(name: string): string | null {
    const image = this.image;
    return image ? String(effectiveBrokerConfig(name, image.config('cluster', ''))) : null;
  }
}
