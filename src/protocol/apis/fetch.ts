// Fetch (api key 1), used by consumers (replicaId -1: reads stop at the high
// watermark) and by follower replicas (replicaId = broker id: reads go to the
// log end, and the fetch offset tells the leader the follower's LEO).
//
//   request  { replicaId, brokerEpoch?, maxWaitMs, minBytes, maxBytes,
//              topics: [{ name, partitions: [{ partition, fetchOffset, currentLeaderEpoch, partitionMaxBytes }] }] }
//   response { errorCode, topics: [{ name, partitions: [{ partition, errorCode, errorMessage, highWatermark,
//              logStartOffset, logEndOffset?, records: bin }] }] }
// Whole batches as stored (the first may start below fetchOffset: the client
// skips records before it). currentLeaderEpoch -1 skips the epoch check.

import { badRequest, int, list, str, type Body } from '../body.js';

export const CONSUMER_REPLICA_ID = -1;

export interface FetchPartition {
  readonly partition: number;
  readonly fetchOffset: number;
  readonly currentLeaderEpoch: number;
  readonly partitionMaxBytes: number;
}
export interface FetchRequest {
  readonly replicaId: number;
  readonly brokerEpoch: number;
  readonly maxWaitMs: number;
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly FetchPartition[] }>;
}

export interface FetchPartitionResponse {
  partition: number;
  errorCode: number;
  errorMessage: string | null;
  highWatermark: number;
  logStartOffset: number;
  /** Only in answers to replicas. */
  logEndOffset?: number;
  records: Uint8Array;
}
export interface FetchResponse { errorCode: number; topics: Array<{ name: string; partitions: FetchPartitionResponse[] }> }

const FETCH_WAIT_MS_MAX = 60_000;

export function parseFetchRequest(b: Body): FetchRequest {
  const maxWaitMs = int(b, 'maxWaitMs', 0);
  if (maxWaitMs < 0 || maxWaitMs > FETCH_WAIT_MS_MAX) throw badRequest(`maxWaitMs must be within [0, ${FETCH_WAIT_MS_MAX}]`);
  const minBytes = int(b, 'minBytes', 1);
  const maxBytes = int(b, 'maxBytes', 50 * 1024 * 1024);
  if (minBytes < 0 || maxBytes < 0) throw badRequest('minBytes and maxBytes must be >= 0');
  const topics = list(b, 'topics').map((t) => ({
    name: str(t, 'name'),
    partitions: list(t, 'partitions').map((p) => {
      const fp = {
        partition: int(p, 'partition'),
        fetchOffset: int(p, 'fetchOffset'),
        currentLeaderEpoch: int(p, 'currentLeaderEpoch', -1),
        partitionMaxBytes: int(p, 'partitionMaxBytes', 1024 * 1024),
      };
      if (fp.partitionMaxBytes < 0) throw badRequest('partitionMaxBytes must be >= 0');
      return fp;
    }),
  }));
  return { replicaId: int(b, 'replicaId', -1), brokerEpoch: int(b, 'brokerEpoch', -1), maxWaitMs, minBytes, maxBytes, topics };
}
