// ListOffsets (api key 2) and OffsetForLeaderEpoch (api key 23).
//
// ListOffsets  request  { replicaId?, isolationLevel? (1 read_committed: latest is the last stable offset), topics: [{ name, partitions: [{ partition, currentLeaderEpoch?, timestamp }] }] }
//              timestamp: -1 latest (the high watermark for consumers), -2 earliest (log start), -3 the record
//              with the largest timestamp (below the high watermark for consumers), else the first
//              offset whose batch has a timestamp >= it (-1 offset when none).
//              response { topics: [{ name, partitions: [{ partition, errorCode, errorMessage, timestamp, offset, leaderEpoch }] }] }
// OffsetForLeaderEpoch (KIP-101/279: how a follower finds where its log diverges from the leader's)
//              request  { replicaId, topics: [{ name, partitions: [{ partition, currentLeaderEpoch, leaderEpoch }] }] }
//              response { topics: [{ name, partitions: [{ partition, errorCode, errorMessage, leaderEpoch, endOffset }] }] }
//              leaderEpoch/endOffset: the largest epoch <= the one asked for and the offset where it ends in the
//              leader's log (-1/-1 when the leader knows no such epoch).

import { badRequest, int, list, str, type Body } from '../body.js';

export const LATEST_TIMESTAMP = -1;
export const EARLIEST_TIMESTAMP = -2;
/** The offset and timestamp of the record with the largest timestamp (Kafka's KIP-734). */
export const MAX_TIMESTAMP = -3;

export interface ListOffsetsPartition { readonly partition: number; readonly currentLeaderEpoch: number; readonly timestamp: number }
export interface ListOffsetsRequest {
  readonly replicaId: number;
  /** 1 (read_committed): latest is the last stable offset, and -3 looks below it; 0 the default. */
  readonly isolationLevel?: 0 | 1;
  readonly topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly ListOffsetsPartition[] }>;
}
export interface ListOffsetsPartitionResponse {
  partition: number; errorCode: number; errorMessage: string | null; timestamp: number; offset: number; leaderEpoch: number;
}

export interface EpochQuery { readonly partition: number; readonly currentLeaderEpoch: number; readonly leaderEpoch: number }
export interface OffsetForLeaderEpochRequest {
  readonly replicaId: number;
  readonly topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly EpochQuery[] }>;
}
export interface EpochEndOffsetResponse {
  partition: number; errorCode: number; errorMessage: string | null; leaderEpoch: number; endOffset: number;
}

export function parseListOffsetsRequest(b: Body): ListOffsetsRequest {
  const isolationLevel = int(b, 'isolationLevel', 0);
  if (isolationLevel !== 0 && isolationLevel !== 1) throw badRequest('isolationLevel must be 0 (read_uncommitted) or 1 (read_committed)');
  return {
    replicaId: int(b, 'replicaId', -1),
    isolationLevel,
    topics: list(b, 'topics').map((t) => ({
      name: str(t, 'name'),
      partitions: list(t, 'partitions').map((p) => ({
        partition: int(p, 'partition'), currentLeaderEpoch: int(p, 'currentLeaderEpoch', -1), timestamp: int(p, 'timestamp'),
      })),
    })),
  };
}

export function parseOffsetForLeaderEpochRequest(b: Body): OffsetForLeaderEpochRequest {
  return {
    replicaId: int(b, 'replicaId', -1),
    topics: list(b, 'topics').map((t) => ({
      name: str(t, 'name'),
      partitions: list(t, 'partitions').map((p) => ({
        partition: int(p, 'partition'), currentLeaderEpoch: int(p, 'currentLeaderEpoch', -1), leaderEpoch: int(p, 'leaderEpoch'),
      })),
    })),
  };
}
