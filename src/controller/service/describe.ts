// A JSON-safe summary of the metadata image for `describeCluster` (status
// tools and tests): brokers with state and endpoints, topics with every
// partition's leader, epochs, replicas and ISR, plus counts of offline and
// under-replicated partitions.

import type { MetadataImage } from '../../metadata/image.js';
import type { BrokerHeartbeats } from '../decisions/broker-heartbeats.js';

export interface ClusterDescription {
  readonly clusterId: string | null;
  readonly metadataOffset: number;
  readonly brokers: Array<{ id: number; fenced: boolean; inControlledShutdown: boolean; brokerEpoch: number; endpoints: Array<{ name: string; url: string }>; rack: string | null; alive: boolean }>;
  readonly topics: Array<{ name: string; topicId: string; partitions: Array<{ partition: number; leader: number; leaderEpoch: number; partitionEpoch: number; replicas: number[]; isr: number[]; addingReplicas: number[]; removingReplicas: number[] }> }>;
  readonly offlinePartitions: number;
  readonly underReplicatedPartitions: number;
}

export function describeImage(image: MetadataImage, heartbeats: BrokerHeartbeats): ClusterDescription {
  let offline = 0;
  let under = 0;
  const topics = [...image.topicsByName.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map((t) => ({
    name: t.name,
    topicId: t.topicId,
    partitions: [...t.partitions.entries()].sort((a, b) => a[0] - b[0]).map(([partition, r]) => {
      if (r.leader < 0) offline++;
      if (r.isr.length < r.replicas.length) under++;
      return { partition, leader: r.leader, leaderEpoch: r.leaderEpoch, partitionEpoch: r.partitionEpoch, replicas: [...r.replicas], isr: [...r.isr], addingReplicas: [...r.addingReplicas], removingReplicas: [...r.removingReplicas] };
    }),
  }));
  return {
    clusterId: image.cluster?.clusterId ?? null,
    metadataOffset: image.offset,
    brokers: [...image.brokers.values()].sort((a, b) => a.brokerId - b.brokerId).map((b) => ({
      id: b.brokerId, fenced: b.fenced, inControlledShutdown: b.inControlledShutdown, brokerEpoch: b.brokerEpoch,
      endpoints: b.endpoints.map((e) => ({ ...e })), rack: b.rack, alive: heartbeats.isAlive(b.brokerId),
    })),
    topics,
    offlinePartitions: offline,
    underReplicatedPartitions: under,
  };
}
