// OffsetForLeaderEpoch (key 23), v2-4 on this listener (Kafka 4.x's range
// starts at v2), flexible from v4.
//
//   request  v3+: replicaId (-2: a consumer, not a replica; Kafka's default),
//            topics [topic, partitions [partition, v2+: currentLeaderEpoch (-1), leaderEpoch]]
//   response v2+: throttleTimeMs, topics [topic, partitions [errorCode, partition, v1+: leaderEpoch (-1), endOffset (-1)]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const offsetForLeaderEpoch: KafkaApiSpec = {
  apiKey: 23,
  name: 'OffsetForLeaderEpoch',
  request: message('OffsetForLeaderEpochRequest', 23, '0-4', '4+', [
    f.int32('replicaId', '3+', { default: -2 }),
    f.array('topics', '0+', [
      f.string('topic'),
      f.array('partitions', '0+', [
        f.int32('partition'),
        f.int32('currentLeaderEpoch', '2+', { default: -1 }),
        f.int32('leaderEpoch'),
      ]),
    ]),
  ]),
  response: message('OffsetForLeaderEpochResponse', 23, '0-4', '4+', [
    f.int32('throttleTimeMs', '2+'),
    f.array('topics', '0+', [
      f.string('topic'),
      f.array('partitions', '0+', [
        f.int16('errorCode'),
        f.int32('partition'),
        f.int32('leaderEpoch', '1+', { default: -1 }),
        f.int64('endOffset', '0+', { default: -1 }),
      ]),
    ]),
  ]),
};
