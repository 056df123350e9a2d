// Fetch on the Kafka listener, for consumers: the replica manager's fetch
// (reads up to the high watermark, long poll on maxWaitMs/minBytes in the
// fetch purgatory, whole batches as stored from the one holding the fetch
// offset, at least one batch even when it is larger than the partition's or
// the response's max bytes) with its answer laid out per topic and partition.
// Records pass through as the log's bytes, never copied.
//
// - v4-17 are served (v4 is librdkafka's MsgVer2 floor); v13+ name topics by
//   id, looked up in the image (an unknown id is UNKNOWN_TOPIC_ID).
// - Fetch sessions (KIP-227): this listener creates none. Every request is
//   served as a full fetch and answered sessionId 0, which Kafka's protocol
//   allows (a broker may refuse a session; the client then keeps sending
//   full fetches). A request continuing a session (sessionId != 0, epoch > 0)
//   names one this broker never gave and is answered FETCH_SESSION_ID_NOT_FOUND.
//   Forgotten topics only matter within a session and are ignored.
// - isolationLevel (v4+) goes to the replica manager: read_committed reads up
//   to the last stable offset and gets the aborted transactions overlapping
//   the answer (an empty list when there are none; null for
//   read_uncommitted, as Kafka answers it). The client drops the aborted
//   transactions' records and the control batches (docs/transactions.md).
// - Replica fetches (replicaId >= 0) are refused with INVALID_REQUEST:
//   followers replicate over Sluice's own protocol, never this listener.
// - v12+: partitions answered NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH
//   carry the current leader; v16+ nodeEndpoints has its address.

import { fetch } from '../../protocol/kafka/apis/fetch/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import { ZERO_UUID } from '../../protocol/kafka/schema.js';
import {
  CONSUMER_REPLICA_ID, NO_FETCH_SESSION, READ_COMMITTED, READ_UNCOMMITTED, SESSIONLESS_EPOCH, type FetchPartitionResponse, type FetchResponse,
} from '../../protocol/apis/fetch.js';
import type { MetadataImage } from '../../metadata/image.js';
import { Errors, SluiceError } from '../../util/errors.js';
import type { KafkaApiHandler } from './api.js';
import { kafkaTopicId } from './cluster-view.js';
import { currentLeader, needsLeaderHint, nodeEndpoints } from './leader-hints.js';

interface FetchPartitionIn { readonly partition: number; readonly currentLeaderEpoch: number; readonly fetchOffset: number; readonly partitionMaxBytes: number }
interface FetchTopicIn { readonly topic: string; readonly topicId: string; readonly partitions: readonly FetchPartitionIn[] }

/** Kafka's replica.fetch.wait.max.ms-style bound on one consumer long poll. */
const FETCH_WAIT_MS_MAX = 60_000;
const TOPIC_IDS_FROM_VERSION = 13;
/** Error answers carry empty records, not null: some clients (KafkaJS) do not expect null there. */
const NO_RECORDS = new Uint8Array(0);

/** A request topic resolved to its name (null: an unknown topic id). */
interface Resolved { readonly name: string | null; readonly topicId: string; readonly partitions: readonly FetchPartitionIn[] }

function resolveTopics(image: MetadataImage, version: number, topics: readonly FetchTopicIn[]): Resolved[] {
  if (version < TOPIC_IDS_FROM_VERSION) return topics.map((t) => ({ name: t.topic, topicId: ZERO_UUID, partitions: t.partitions }));
  const byId = new Map<string, string>();
  for (const t of image.topicsByName.values()) byId.set(kafkaTopicId(t.topicId), t.name);
  return topics.map((t) => ({ name: t.topicId === ZERO_UUID ? null : byId.get(t.topicId) ?? null, topicId: t.topicId, partitions: t.partitions }));
}

function partitionOut(p: FetchPartitionResponse, readCommitted: boolean): Struct {
  const aborted = readCommitted ? (p.abortedTransactions ?? []).map((a) => ({ producerId: a.producerId, firstOffset: a.firstOffset })) : null;
  return {
    partitionIndex: p.partition, errorCode: p.errorCode, highWatermark: p.highWatermark, lastStableOffset: p.lastStableOffset,
    logStartOffset: p.logStartOffset, abortedTransactions: aborted, preferredReadReplica: -1, records: p.records,
  };
}

function answer(image: MetadataImage, version: number, resolved: readonly Resolved[], res: FetchResponse, readCommitted: boolean): Struct {
  const read = new Map(res.topics.map((t) => [t.name, new Map(t.partitions.map((p) => [p.partition, p]))]));
  const leaders = new Set<number>();
  const responses = resolved.map((t) => ({
    topic: t.name ?? '',
    topicId: t.topicId,
    partitions: t.partitions.map((fp) => {
      const p = t.name === null ? undefined : read.get(t.name)?.get(fp.partition);
      if (!p) return { partitionIndex: fp.partition, errorCode: Errors.UNKNOWN_TOPIC_ID.code, highWatermark: -1, records: NO_RECORDS };
      const out = partitionOut(p, readCommitted);
      if (version >= 12 && needsLeaderHint(p.errorCode)) {
        const leader = currentLeader(image, t.name!, fp.partition);
        out.currentLeader = leader;
        if (leader.leaderId >= 0) leaders.add(leader.leaderId);
      }
      return out;
    }),
  }));
  return { throttleTimeMs: 0, errorCode: 0, sessionId: NO_FETCH_SESSION, responses, nodeEndpoints: version >= 16 ? nodeEndpoints(image, leaders) : [] };
}

function replicaIdOf(req: Struct): number {
  const state = req.replicaState as { replicaId: number } | undefined;
  return state ? state.replicaId : (req.replicaId as number);
}

export const fetchHandler: KafkaApiHandler = {
  spec: fetch,
  minVersion: 4,
  maxVersion: 17,
  handle(req, ctx) {
    if (replicaIdOf(req) >= 0) throw new SluiceError(Errors.INVALID_REQUEST, 'replica fetches are not served on the Kafka listener (followers use Sluice\'s replication protocol)');
    const sessionId = req.sessionId as number;
    const sessionEpoch = req.sessionEpoch as number;
    if (sessionId !== NO_FETCH_SESSION && sessionEpoch > 0) {
      return { throttleTimeMs: 0, errorCode: Errors.FETCH_SESSION_ID_NOT_FOUND.code, sessionId: NO_FETCH_SESSION, responses: [] };
    }
    const image = ctx.deps.image();
    const resolved = resolveTopics(image, ctx.version, req.topics as FetchTopicIn[]);
    const known = resolved.filter((t): t is Resolved & { name: string } => t.name !== null);
    const minBytes = req.minBytes as number;
    const readCommitted = req.isolationLevel === READ_COMMITTED;
    const result = ctx.deps.replicas.fetch({
      replicaId: CONSUMER_REPLICA_ID, brokerEpoch: -1, isolationLevel: readCommitted ? READ_COMMITTED : READ_UNCOMMITTED,
      // minBytes 0 asks for an answer at once, whatever there is (Kafka's meaning).
      maxWaitMs: minBytes <= 0 ? 0 : Math.min(Math.max(0, req.maxWaitMs as number), FETCH_WAIT_MS_MAX),
      minBytes: Math.max(0, minBytes),
      maxBytes: Math.max(0, req.maxBytes as number),
      sessionId: NO_FETCH_SESSION, sessionEpoch: SESSIONLESS_EPOCH,
      topics: known.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ ...p, partitionMaxBytes: Math.max(0, p.partitionMaxBytes) })) })),
      forgotten: [],
    }, () => ctx.conn.closed);
    const build = (res: FetchResponse): Struct => answer(ctx.deps.image(), ctx.version, resolved, res, readCommitted);
    return result instanceof Promise ? result.then(build) : build(result);
  },
  errorResponse(req, errorCode) {
    return {
      throttleTimeMs: 0, errorCode, sessionId: NO_FETCH_SESSION,
      responses: (req.topics as FetchTopicIn[]).map((t) => ({
        topic: t.topic, topicId: t.topicId,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, errorCode, highWatermark: -1, records: NO_RECORDS })),
      })),
    };
  },
};
