// Fetch (key 1), v4-17 on this listener, flexible from v12; topic ids
// instead of names from v13.
//
//   request  v12+ tag 0: clusterId (nullable), v0-14: replicaId (-1),
//            v15+ tag 1: replicaState {replicaId (-1), replicaEpoch int64 (-1)},
//            maxWaitMs, minBytes, v3+: maxBytes (0x7fffffff), v4+: isolationLevel int8,
//            v7+: sessionId (0), sessionEpoch (-1),
//            topics [v0-12: topic, v13+: topicId, partitions [partition, v9+: currentLeaderEpoch (-1), fetchOffset int64,
//                    v12+: lastFetchedEpoch (-1), v5+: logStartOffset int64 (-1), partitionMaxBytes,
//                    v17+ tag 0: replicaDirectoryId uuid]],
//            v7+: forgottenTopicsData [v7-12: topic, v13+: topicId, partitions [int32]], v11+: rackId ('')
//   response v1+: throttleTimeMs, v7+: errorCode, sessionId (0),
//            responses [v0-12: topic, v13+: topicId, partitions [partitionIndex, errorCode, highWatermark,
//                       v4+: lastStableOffset (-1), v5+: logStartOffset (-1),
//                       v12+ tag 0: divergingEpoch {epoch (-1), endOffset (-1)},
//                       v12+ tag 1: currentLeader {leaderId (-1), leaderEpoch (-1)},
//                       v12+ tag 2: snapshotId {endOffset (-1), epoch (-1)},
//                       v4+: abortedTransactions [producerId, firstOffset] (nullable), v11+: preferredReadReplica (-1),
//                       records (nullable)]],
//            v16+ tag 0: nodeEndpoints [nodeId, host, port, rack (nullable)]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const fetch: KafkaApiSpec = {
  apiKey: 1,
  name: 'Fetch',
  request: message('FetchRequest', 1, '0-17', '12+', [
    f.string('clusterId', '12+', { nullable: '12+', tag: 0, default: null }),
    f.int32('replicaId', '0-14', { default: -1 }),
    f.struct('replicaState', '15+', [f.int32('replicaId', '15+', { default: -1 }), f.int64('replicaEpoch', '15+', { default: -1 })], { tag: 1 }),
    f.int32('maxWaitMs'),
    f.int32('minBytes'),
    f.int32('maxBytes', '3+', { default: 0x7fffffff }),
    f.int8('isolationLevel', '4+'),
    f.int32('sessionId', '7+'),
    f.int32('sessionEpoch', '7+', { default: -1 }),
    f.array('topics', '0+', [
      f.string('topic', '0-12'),
      f.uuid('topicId', '13+'),
      f.array('partitions', '0+', [
        f.int32('partition'),
        f.int32('currentLeaderEpoch', '9+', { default: -1 }),
        f.int64('fetchOffset'),
        f.int32('lastFetchedEpoch', '12+', { default: -1 }),
        f.int64('logStartOffset', '5+', { default: -1 }),
        f.int32('partitionMaxBytes'),
        f.uuid('replicaDirectoryId', '17+', { tag: 0 }),
      ]),
    ]),
    f.array('forgottenTopicsData', '7+', [f.string('topic', '7-12'), f.uuid('topicId', '13+'), f.array('partitions', '7+', 'int32')]),
    f.string('rackId', '11+'),
  ]),
  response: message('FetchResponse', 1, '0-17', '12+', [
    f.int32('throttleTimeMs', '1+'),
    f.int16('errorCode', '7+'),
    f.int32('sessionId', '7+'),
    f.array('responses', '0+', [
      f.string('topic', '0-12'),
      f.uuid('topicId', '13+'),
      f.array('partitions', '0+', [
        f.int32('partitionIndex'),
        f.int16('errorCode'),
        f.int64('highWatermark'),
        f.int64('lastStableOffset', '4+', { default: -1 }),
        f.int64('logStartOffset', '5+', { default: -1 }),
        f.struct('divergingEpoch', '12+', [f.int32('epoch', '12+', { default: -1 }), f.int64('endOffset', '12+', { default: -1 })], { tag: 0 }),
        f.struct('currentLeader', '12+', [f.int32('leaderId', '12+', { default: -1 }), f.int32('leaderEpoch', '12+', { default: -1 })], { tag: 1 }),
        f.struct('snapshotId', '12+', [f.int64('endOffset', '0+', { default: -1 }), f.int32('epoch', '0+', { default: -1 })], { tag: 2 }),
        f.array('abortedTransactions', '4+', [f.int64('producerId', '4+'), f.int64('firstOffset', '4+')], { nullable: '4+' }),
        f.int32('preferredReadReplica', '11+', { default: -1 }),
        f.records('records', '0+', { nullable: '0+' }),
      ]),
    ]),
    f.array('nodeEndpoints', '16+', [
      f.int32('nodeId', '16+'), f.string('host', '16+'), f.int32('port', '16+'), f.string('rack', '16+', { nullable: '16+', default: null }),
    ], { tag: 0 }),
  ]),
};
