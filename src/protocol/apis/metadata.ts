// Metadata (api key 3), DescribeCluster (60) and ApiVersions (18).
//
// Metadata    request  { topics: [names] | null (all) }
//             response { clusterId, controllerId, brokers: [{ nodeId, url, rack }],
//                        topics: [{ errorCode, errorMessage, name, topicId, partitions: [{ partition, errorCode,
//                        leader, leaderEpoch, replicas, isr, offlineReplicas }] }] }
// ApiVersions request  {}  response { errorCode, apiKeys: [{ apiKey, minVersion, maxVersion }] }
// Brokers are the registered, unfenced ones with a client listener; a
// partition whose leader is -1 carries LEADER_NOT_AVAILABLE.

import { strs, type Body } from '../body.js';

export interface MetadataBroker { nodeId: number; url: string; rack: string | null }
export interface MetadataPartition {
  partition: number; errorCode: number; leader: number; leaderEpoch: number;
  replicas: number[]; isr: number[]; offlineReplicas: number[];
}
export interface MetadataTopic { errorCode: number; errorMessage: string | null; name: string; topicId: string | null; partitions: MetadataPartition[] }
export interface MetadataResponse { clusterId: string | null; controllerId: number; brokers: MetadataBroker[]; topics: MetadataTopic[] }

export interface MetadataRequest { readonly topics: readonly string[] | null }

export function parseMetadataRequest(b: Body): MetadataRequest {
  const t = b.topics;
  return { topics: t === undefined || t === null ? null : strs(t, 'topics') };
}

export interface ApiVersionRange { apiKey: number; minVersion: number; maxVersion: number }
export interface ApiVersionsResponse { errorCode: number; apiKeys: ApiVersionRange[] }
