// Applies metadata images to the partitions this broker hosts (the part of
// Kafka's ReplicaManager.applyDelta): every `become*` transition of a
// hosted partition happens here, and only here.
//
//   becomeLeader    image names this broker leader at a new leader epoch:
//                   stop fetching, a new LeaderState (HW = the old one),
//                   waiters of the old epoch answered, leadership listeners told
//   becomeFollower  image names another leader (or none), or a new epoch of
//                   it: waiters answered, handed to the fetcher of that leader
//   (same epoch)    a new ISR/replicas/partition epoch: the leader rules
//                   take the committed ISR (may move the HW)
//   removeReplica   image no longer assigns it here (reassigned, topic
//                   deleted, or deleted and created again): stop, delete the log
//
// Topic configs from the image go to the logs (applyTopicConfig).
//
// The partitions an image touches are queued and handled in slices of about
// APPLY_SLICE_MS (at least APPLY_SLICE_ITEMS_MIN each), yielding (on the
// injected Scheduler) in between: creating or deleting thousands of logs at
// once would otherwise stall Raft and the heartbeats of this node for
// seconds. Each queued partition is handled against the latest image, so a
// partition changed twice while queued is handled once, in its latest state.

import type { ReplicaManagerOptions } from './replica-manager.js';
import type { Logger } from '../util/logger.js';
import { logConfigFrom, type LogConfig } from '../storage/log-config.js';
import type { MetadataImage, PartitionRegistration, TopicImage } from '../metadata/image.js';
import type { MetadataChanges } from '../metadata/delta.js';
import { Partition, partitionKey } from './partition.js';
import type { HostedPartitions } from './hosted-partitions.js';
import type { ReplicaFetcherManager } from './replica-fetcher.js';
import type { ProducerStateStore } from './producer-state-store.js';

/** Image work per slice: about this long, and at least this many partitions. */
const APPLY_SLICE_MS = 20;
const APPLY_SLICE_ITEMS_MIN = 16;

export type LeadershipListener = (p: Partition, leading: boolean) => void;

/** What the other parts do when a partition changes role (the replica manager wires them). */
export interface RoleChangeEffects {
  /** The HW of `p` moved: waiting produces and fetches re-check. */
  highWatermarkMoved(p: Partition): void;
  /** A new committed ISR: waiting acks=all produces re-check (the ISR may now be below the minimum). */
  registrationChanged(p: Partition): void;
  /** `p` changed hands: its waiting produces answer now. */
  answerProducesNow(p: Partition): void;
  /** `p` changed hands: its waiting fetches answer now. */
  answerFetchesNow(p: Partition): void;
  /** `p` has a new leader here: its waiting fetches re-check. */
  wakeFetches(p: Partition): void;
  /** The durable end that counts toward the HW (LEO, or flushed end in fsync mode). */
  durableEnd(p: Partition): number;
  /** Before becoming leader in fsync mode: the log is flushed. */
  flushForLeadership(p: Partition): void;
  /** `p` is gone from this broker: forget per-partition state. */
  forget(p: Partition): void;
}

/** The replica manager's own settings it needs, and the parts it shares with the others. */
export interface ImageApplierOptions
  extends Pick<ReplicaManagerOptions, 'brokerId' | 'logs' | 'brokerLogConfig' | 'clock' | 'scheduler' | 'logger' | 'replicaLagTimeMaxMs'> {
  readonly hosted: HostedPartitions;
  readonly fetchers: ReplicaFetcherManager;
  readonly producerStates: ProducerStateStore;
  readonly effects: RoleChangeEffects;
}

export class ImageApplier {
  /** Partitions (topic id, index) that images changed and applyPartition has not handled yet. */
  private readonly queue: Array<{ topicId: string; index: number; name: string }> = [];
  private queueHead = 0;
  private readonly queued = new Set<string>();
  private drainScheduled = false;
  /** The topic id whose config each topic's logs were given. */
  private readonly configuredTopics = new Map<string, string>();
  /** Told when this broker starts or stops leading a partition (the group coordinator follows __consumer_offsets). */
  private readonly leadershipListeners = new Set<LeadershipListener>();
  private readonly hosted: HostedPartitions;
  private readonly log: Logger;

  constructor(private readonly opts: ImageApplierOptions) {
    this.hosted = opts.hosted;
    this.log = opts.logger;
  }

  /** Applies a new image: queues the partitions it changed (all, when `changes` is null) and handles a first slice. */
  applyImage(image: MetadataImage, changes: MetadataChanges | null): void {
    if (this.hosted.stopped) return;
    this.hosted.image = image;
    const me = this.opts.brokerId;
    if (changes) {
      for (const [topicId] of changes.removedTopics) {
        for (const p of this.hosted.values()) if (p.topicId === topicId) this.enqueue(p.topicId, p.index, p.topic);
      }
      for (const topicId of changes.topics) {
        const t = image.topicsById.get(topicId);
        if (t) for (const index of t.partitions.keys()) this.enqueue(topicId, index, t.name);
      }
      for (const key of changes.configs) {
        if (key.startsWith('topic:')) this.applyTopicConfig(image, key.slice('topic:'.length));
        else for (const t of image.topicsByName.values()) this.applyTopicConfig(image, t.name);
      }
      if (changes.brokers.size > 0) this.opts.fetchers.refreshEndpoints(image);
    } else {
      // No changes to go by (start, snapshot restore): look at everything, configs included.
      for (const t of image.topicsByName.values()) {
        this.applyTopicConfig(image, t.name);
        for (const index of t.partitions.keys()) this.enqueue(t.topicId, index, t.name);
      }
      for (const p of this.hosted.values()) {
        if (image.topicsById.get(p.topicId)?.partitions.get(p.index)?.replicas.includes(me) !== true) this.enqueue(p.topicId, p.index, p.topic);
      }
      this.opts.fetchers.refreshEndpoints(image);
    }
    this.drainQueue();
  }

  /** Partitions queued by images and not handled yet (0 once caught up). */
  get pendingImageWork(): number {
    return this.queued.size;
  }

  /**
   * Deletes logs on disk that the image does not assign to this broker (a
   * topic deleted while it was down). Call only once the image has caught up.
   */
  deleteStrayLogs(image: MetadataImage): number {
    let n = 0;
    for (const m of this.opts.logs.allLogs()) {
      const reg = image.partition(m.topic, m.partition);
      if (reg && (reg.replicas.includes(this.opts.brokerId) || reg.addingReplicas.includes(this.opts.brokerId))) continue;
      if (this.hosted.has(partitionKey(m.topic, m.partition))) continue;
      this.log.info({ topic: m.topic, partition: m.partition }, 'deleting stray log');
      this.opts.logs.deleteLog(m.topic, m.partition);
      n++;
    }
    return n;
  }

  /**
   * Calls `listener(p, true)` each time this broker becomes leader of a
   * partition (also at a new leader epoch) and `listener(p, false)` when it
   * stops leading one — after the change took effect. Returns the unsubscribe.
   */
  onLeadershipChange(listener: LeadershipListener): () => void {
    this.leadershipListeners.add(listener);
    return () => this.leadershipListeners.delete(listener);
  }

  private enqueue(topicId: string, index: number, name: string): void {
    const key = `${topicId}:${index}`;
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push({ topicId, index, name });
  }

  private drainQueue(): void {
    this.drainScheduled = false;
    const clock = this.opts.clock;
    const deadline = clock.monotonicMs() + APPLY_SLICE_MS;
    let handled = 0;
    while (this.queueHead < this.queue.length && !this.hosted.stopped && (handled < APPLY_SLICE_ITEMS_MIN || clock.monotonicMs() < deadline)) {
      const item = this.queue[this.queueHead++]!;
      this.queued.delete(`${item.topicId}:${item.index}`);
      this.applyPartition(item.topicId, item.index, item.name);
      handled++;
    }
    if (this.queueHead >= this.queue.length) {
      this.queue.length = 0;
      this.queueHead = 0;
    } else if (!this.drainScheduled && !this.hosted.stopped) {
      this.drainScheduled = true;
      this.opts.scheduler.schedule(0, () => this.drainQueue());
    }
  }

  /** Brings one partition in line with the latest image. */
  private applyPartition(topicId: string, index: number, name: string): void {
    const image = this.hosted.image!;
    const t = image.topicsById.get(topicId);
    const reg = t?.partitions.get(index);
    if (!t || !reg || !reg.replicas.includes(this.opts.brokerId)) {
      const hosted = this.hosted.find(name, index);
      if (hosted && hosted.topicId === topicId) this.removeReplica(hosted);
      return;
    }
    let p = this.hosted.find(t.name, index);
    if (p && p.topicId !== topicId) {
      this.removeReplica(p); // the topic was deleted and created again under the same name
      p = undefined;
    }
    if (!p) p = this.createPartition(image, t, index);
    this.applyRegistration(p, reg);
  }

  private createPartition(image: MetadataImage, t: TopicImage, index: number): Partition {
    // Once per topic id (not per partition: that re-applied the config to every open log of the topic each time).
    if (this.configuredTopics.get(t.name) !== t.topicId) {
      this.opts.logs.updateTopicConfig(t.name, this.topicLogConfig(image, t.name));
      this.configuredTopics.set(t.name, t.topicId);
    }
    const log = this.opts.logs.getOrCreateLog(t.name, index);
    const p = new Partition(t.name, index, t.topicId, log, this.opts.brokerId);
    this.hosted.add(p);
    this.opts.producerStates.open(p);
    return p;
  }

  private applyRegistration(p: Partition, reg: PartitionRegistration): void {
    const me = this.opts.brokerId;
    if (reg.leader === me) {
      if (!p.leader || p.leaderEpoch !== reg.leaderEpoch) return this.becomeLeader(p, reg);
      if (p.partitionEpoch !== reg.partitionEpoch) {
        if (p.onRegistrationChanged(reg)) this.opts.effects.highWatermarkMoved(p);
        this.opts.effects.registrationChanged(p);
      }
      return;
    }
    if (p.leader || p.leaderEpoch !== reg.leaderEpoch || p.leaderId !== reg.leader) return this.becomeFollower(p, reg);
    p.setRegistration(reg);
  }

  private becomeLeader(p: Partition, reg: PartitionRegistration): void {
    const fx = this.opts.effects;
    this.opts.fetchers.removePartition(p);
    fx.flushForLeadership(p);
    p.makeLeader(reg, fx.durableEnd(p), this.opts.clock, this.opts.replicaLagTimeMaxMs);
    this.log.info({ topic: p.topic, partition: p.index, leaderEpoch: reg.leaderEpoch, isr: reg.isr, leo: p.log.logEndOffset }, 'became leader');
    // Waiters of the previous epoch (if this broker led before) must not complete under the new one.
    fx.answerProducesNow(p);
    fx.wakeFetches(p);
    if (p.onLocalAppend(fx.durableEnd(p))) fx.highWatermarkMoved(p);
    this.notifyLeadership(p, true);
  }

  private becomeFollower(p: Partition, reg: PartitionRegistration): void {
    const wasLeader = p.isLeader;
    const fx = this.opts.effects;
    p.makeFollower(reg);
    fx.answerProducesNow(p);
    fx.answerFetchesNow(p);
    const image = this.hosted.image;
    if (reg.leader >= 0 && image) this.opts.fetchers.addPartition(p, reg.leader, reg.leaderEpoch, image);
    else this.opts.fetchers.removePartition(p);
    this.log.info({ topic: p.topic, partition: p.index, leader: reg.leader, leaderEpoch: reg.leaderEpoch, wasLeader }, 'became follower');
    if (wasLeader) this.notifyLeadership(p, false);
  }

  private removeReplica(p: Partition): void {
    const wasLeader = p.isLeader;
    const fx = this.opts.effects;
    this.opts.fetchers.removePartition(p);
    p.leader = null;
    this.hosted.delete(p);
    this.opts.producerStates.forget(p);
    fx.forget(p);
    fx.answerProducesNow(p);
    fx.answerFetchesNow(p);
    this.opts.logs.deleteLog(p.topic, p.index);
    this.log.info({ topic: p.topic, partition: p.index }, 'removed replica');
    if (wasLeader) this.notifyLeadership(p, false);
  }

  private notifyLeadership(p: Partition, leading: boolean): void {
    for (const listener of this.leadershipListeners) {
      try {
        listener(p, leading);
      } catch (err) {
        this.log.error({ topic: p.topic, partition: p.index, err: (err as Error).message }, 'leadership listener failed');
      }
    }
  }

  private topicLogConfig(image: MetadataImage, topic: string): Partial<LogConfig> {
    const props: Record<string, string> = {};
    for (const [k, v] of image.config('cluster', '')) props[k] = v;
    for (const [k, v] of image.config('topic', topic)) props[k] = v;
    try {
      return logConfigFrom(props, this.opts.brokerLogConfig);
    } catch (err) {
      this.log.error({ topic, err: (err as Error).message }, 'ignoring invalid topic config');
      return this.opts.brokerLogConfig;
    }
  }

  private applyTopicConfig(image: MetadataImage, topic: string): void {
    if (!image.topic(topic)) return;
    this.opts.logs.updateTopicConfig(topic, this.topicLogConfig(image, topic));
  }
}
