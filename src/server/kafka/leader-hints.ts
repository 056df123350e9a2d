// Leader discovery for Produce v10+ and Fetch v12+ (KIP-951): a partition
// answered NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH carries the leader
// and leader epoch this node's image knows, and the response lists that
// leader's Kafka endpoint, so the client can go there without a Metadata
// round trip. Both are hints: a client that ignores them refreshes metadata.

import type { MetadataImage } from '../../metadata/image.js';
import type { Struct } from '../../protocol/kafka/message.js';
import { Errors } from '../../util/errors.js';
import { kafkaBrokers } from './cluster-view.js';

const HINTED: ReadonlySet<number> = new Set([Errors.NOT_LEADER_OR_FOLLOWER.code, Errors.FENCED_LEADER_EPOCH.code]);

export const needsLeaderHint = (errorCode: number): boolean => HINTED.has(errorCode);

/** The partition's leader and epoch in `image`, or -1/-1 when it has none. */
export function currentLeader(image: MetadataImage, topic: string, partition: number): { leaderId: number; leaderEpoch: number } {
  const reg = image.partition(topic, partition);
  return reg && reg.leader >= 0 ? { leaderId: reg.leader, leaderEpoch: reg.leaderEpoch } : { leaderId: -1, leaderEpoch: -1 };
}

/** The Kafka endpoints of `ids` (the leaders named in hints), by node id. */
export function nodeEndpoints(image: MetadataImage, ids: ReadonlySet<number>): Struct[] {
  if (ids.size === 0) return [];
  return kafkaBrokers(image).filter((b) => ids.has(b.nodeId)).map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack }));
}
