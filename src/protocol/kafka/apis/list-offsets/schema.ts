// ListOffsets (key 2), v1-10 on this listener (v0's oldStyleOffsets list is
// not served), flexible from v6.
//
//   request  replicaId, v2+: isolationLevel int8,
//            topics [name, partitions [partitionIndex, v4+: currentLeaderEpoch (-1), timestamp int64,
//                    v0: maxNumOffsets (1)]], v10+: timeoutMs
//   response v2+: throttleTimeMs, topics [name, partitions [partitionIndex, errorCode, v0: oldStyleOffsets [int64],
//            v1+: timestamp (-1), v1+: offset (-1), v4+: leaderEpoch (-1)]]
// Timestamps: -1 latest, -2 earliest, v7+ -3 max timestamp, v8+ -4 earliest
// local, v9+ -5 latest tiered; else a time in ms.
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const listOffsets: KafkaApiSpec = {
  apiKey: 2,
  name: 'ListOffsets',
  request: message('ListOffsetsRequest', 2, '0-10', '6+', [
    f.int32('replicaId'),
    f.int8('isolationLevel', '2+'),
    f.array('topics', '0+', [
      f.string('name'),
      f.array('partitions', '0+', [
        f.int32('partitionIndex'),
        f.int32('currentLeaderEpoch', '4+', { default: -1 }),
        f.int64('timestamp'),
        f.int32('maxNumOffsets', '0', { default: 1 }),
      ]),
    ]),
    f.int32('timeoutMs', '10+'),
  ]),
  response: message('ListOffsetsResponse', 2, '0-10', '6+', [
    f.int32('throttleTimeMs', '2+'),
    f.array('topics', '0+', [
      f.string('name'),
      f.array('partitions', '0+', [
        f.int32('partitionIndex'),
        f.int16('errorCode'),
        f.array('oldStyleOffsets', '0', 'int64'),
        f.int64('timestamp', '1+', { default: -1 }),
        f.int64('offset', '1+', { default: -1 }),
        f.int32('leaderEpoch', '4+', { default: -1 }),
      ]),
    ]),
  ]),
};
