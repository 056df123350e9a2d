// Fetch (api key 1), used by consumers (replicaId -1: reads stop at the high
// watermark) and by follower replicas (replicaId = broker id: reads go to the
// log end, and the fetch offset tells the leader the follower's LEO).
//
//   request  { replicaId, brokerEpoch?, maxWaitMs, minBytes, maxBytes, isolationLevel? (0 read_uncommitted, the default;
//              1 read_committed), sessionId?, sessionEpoch?,
//              topics: [{ name, partitions: [{ partition, fetchOffset, currentLeaderEpoch, partitionMaxBytes }] }],
//              forgotten?: [{ name, partitions: [int] }] }
//   response { errorCode, sessionId?, topics: [{ name, partitions: [{ partition, errorCode, errorMessage, highWatermark,
//              logStartOffset, logEndOffset?, lastStableOffset, abortedTransactions: [{ producerId, firstOffset }] | null,
//              records: bin }] }] }
// A read_committed fetch (consumers only) reads up to the last stable offset
// (the first offset of the oldest open transaction, or the high watermark) and
// lists the aborted transactions that overlap the answer's batches, so the
// client can skip their records (docs/transactions.md); read_uncommitted
// answers abortedTransactions null.
// Whole batches as stored (the first may start below fetchOffset: the client
// skips records before it). currentLeaderEpoch -1 skips the epoch check.
//
// Fetch sessions (Kafka's KIP-227; follower fetches only): sessionEpoch -1
// (the default) is a sessionless full fetch. Epoch 0 opens a session: the
// request lists every partition and the answer carries the new sessionId.
// Then each request names that session and the next epoch (1, 2, ...) and
// lists only the partitions whose fetch position changed or that are new,
// plus the ones to drop (forgotten); the answer lists only the partitions
// with something to tell — records, a new high watermark or log start, an
// error, or a first answer. The leader keeps reading every partition of the
// session. An unknown session or a wrong epoch is a whole-request error
// (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH): the follower
// opens a new session. replication/fetch-sessions.ts has the leader's side.

import { badRequest, int, ints, list, str, type Body } from '../body.js';

export const CONSUMER_REPLICA_ID = -1;

export interface FetchPartition {
  readonly partition: number;
  readonly fetchOffset: number;
  readonly currentLeaderEpoch: number;
  readonly partitionMaxBytes: number;
}
export const READ_UNCOMMITTED = 0;
export const READ_COMMITTED = 1;
export type IsolationLevel = typeof READ_UNCOMMITTED | typeof READ_COMMITTED;

export interface FetchRequest {
  readonly replicaId: number;
  /** READ_COMMITTED: stop at the last stable offset and list aborted transactions (consumer fetches only). */
  readonly isolationLevel?: IsolationLevel;
  readonly brokerEpoch: number;
  readonly maxWaitMs: number;
  readonly minBytes: number;
  readonly maxBytes: number;
  /** The session a follower fetch continues (NO_FETCH_SESSION when it opens one or has none). */
  readonly sessionId: number;
  /** SESSIONLESS_EPOCH: a full fetch without a session; 0 opens one; >= 1 continues sessionId. */
  readonly sessionEpoch: number;
  readonly topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly FetchPartition[] }>;
  /** Partitions to drop from the session. */
  readonly forgotten: ReadonlyArray<{ readonly name: string; readonly partitions: readonly number[] }>;
}

export const NO_FETCH_SESSION = 0;
export const SESSIONLESS_EPOCH = -1;
export const INITIAL_SESSION_EPOCH = 0;

/** The epoch after `epoch` in a fetch session: they wrap from 2^31 - 1 back to 1 (0 opens a session). */
export function nextSessionEpoch(epoch: number): number {
  return epoch >= 0x7fffffff ? 1 : epoch + 1;
}

export interface FetchPartitionResponse {
  partition: number;
  errorCode: number;
  errorMessage: string | null;
  highWatermark: number;
  logStartOffset: number;
  /** Only in answers to replicas. */
  logEndOffset?: number;
  /** The first offset of the oldest open transaction, or the high watermark when none is open (-1 on error). */
  lastStableOffset: number;
  /** read_committed: the aborted transactions overlapping the answer's records; null for read_uncommitted. */
  abortedTransactions: AbortedTransaction[] | null;
  records: Uint8Array;
}
/** An aborted transaction of one producer: its records from firstOffset up to its abort marker are not to be read. */
export interface AbortedTransaction { producerId: number; firstOffset: number }
export interface FetchResponse {
  errorCode: number;
  /** The follower's fetch session (absent for sessionless fetches). */
  sessionId?: number;
  topics: Array<{ name: string; partitions: FetchPartitionResponse[] }>;
}

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
  const replicaId = int(b, 'replicaId', -1);
  const isolationLevel = int(b, 'isolationLevel', READ_UNCOMMITTED);
  if (isolationLevel !== READ_UNCOMMITTED && isolationLevel !== READ_COMMITTED) throw badRequest('isolationLevel must be 0 (read_uncommitted) or 1 (read_committed)');
  const sessionId = int(b, 'sessionId', NO_FETCH_SESSION);
  const sessionEpoch = int(b, 'sessionEpoch', SESSIONLESS_EPOCH);
  if (sessionEpoch < SESSIONLESS_EPOCH || sessionId < 0) throw badRequest('sessionId must be >= 0 and sessionEpoch >= -1');
  if (sessionEpoch !== SESSIONLESS_EPOCH && replicaId < 0) throw badRequest('fetch sessions are for follower fetches (replicaId >= 0)');
  const forgotten = b.forgotten === undefined ? [] : list(b, 'forgotten').map((t) => ({ name: str(t, 'name'), partitions: ints(t.partitions, 'forgotten partitions') }));
  return { replicaId, isolationLevel, brokerEpoch: int(b, 'brokerEpoch', -1), maxWaitMs, minBytes, maxBytes, sessionId, sessionEpoch, topics, forgotten };
}
