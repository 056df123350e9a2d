// Partition changes that follow from a broker's state: fencing removes it
// from ISRs and moves its leaderships away, controlled shutdown moves its
// leaderships away, and a broker coming back may take over offline partitions
// (and, with auto.leader.rebalance.enable, its preferred leaderships). Each
// sweep returns PartitionChange records built by buildPartitionChange, on an
// image where the broker's registration change is already applied.

import type { MetadataImage, TopicImage } from '../metadata/image.js';
import { NO_LEADER, type BrokerId, type PartitionChangeRecord } from '../metadata/records.js';
import type { Logger } from '../util/logger.js';
import { mutant } from '../util/mutants.js';
import { brokerSetting, electionContext } from './context.js';
import { buildPartitionChange, type ChangeRequest } from './decisions/partition-change.js';

function sweep(
  image: MetadataImage,
  logger: Logger,
  want: (topic: TopicImage, partition: number, isr: readonly BrokerId[], leader: BrokerId, replicas: readonly BrokerId[]) => ChangeRequest | null,
): PartitionChangeRecord[] {
  const out: PartitionChangeRecord[] = [];
  for (const topic of image.topicsByName.values()) {
    const ctx = electionContext(image, topic.name);
    for (const [p, reg] of topic.partitions) {
      const req = want(topic, p, reg.isr, reg.leader, reg.replicas);
      if (!req) continue;
      const change = buildPartitionChange(topic.topicId, p, reg, req, ctx);
      if (!change.record) continue;
      if (change.election === 'unclean') {
        logger.warn({ topic: topic.name, partition: p, leader: change.after.leader }, 'UNCLEAN leader election: committed records may be lost');
      }
      out.push(change.record);
    }
  }
  return out;
}

/** The broker is fenced (or re-registered): out of every ISR where another member remains, and out of leadership. */
export function fenceSweep(image: MetadataImage, broker: BrokerId, logger: Logger): PartitionChangeRecord[] {
  return sweep(image, logger, (_t, _p, isr, leader) => {
    if (!isr.includes(broker) && leader !== broker) return null;
    // Deliberate bug (test-only switch): the fenced broker's own partitions stay as they are, led by it.
    if (leader === broker && mutant('fenced-broker-keeps-leadership')) return null;
    return { isr: isr.filter((b) => b !== broker), excludeLeaders: new Set([broker]) };
  });
}

/** Controlled shutdown: move every leadership away; leave the ISR to the lag rules. */
export function shutdownSweep(image: MetadataImage, broker: BrokerId, logger: Logger): PartitionChangeRecord[] {
  return sweep(image, logger, (_t, _p, isr, leader) => {
    if (leader !== broker) return null;
    return { isr: isr.length > 1 ? isr.filter((b) => b !== broker) : isr, excludeLeaders: new Set([broker]) };
  });
}

/** Leaderships the broker still holds (controlled shutdown waits for zero). */
export function leadershipsOf(image: MetadataImage, broker: BrokerId): number {
  let n = 0;
  for (const topic of image.topicsByName.values()) for (const reg of topic.partitions.values()) if (reg.leader === broker) n++;
  return n;
}

/** The broker is back: lead offline partitions it is in the ISR of, and (optionally) its preferred ones. */
export function unfenceSweep(image: MetadataImage, broker: BrokerId, logger: Logger): PartitionChangeRecord[] {
  const rebalance = brokerSetting(image, 'auto.leader.rebalance.enable') === 'true';
  return sweep(image, logger, (_t, _p, isr, leader, replicas) => {
    if (leader === NO_LEADER && (isr.includes(broker) || replicas.includes(broker))) return {};
    if (rebalance && replicas[0] === broker && leader !== broker && isr.includes(broker)) return { preferredLeader: true };
    return null;
  });
}
