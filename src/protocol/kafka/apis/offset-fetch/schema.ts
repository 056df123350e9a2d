// OffsetFetch (key 9), v0-9, flexible from v6. A group's committed offsets;
// v8+ asks about many groups at once. (v10 names topics by id: not here.)
//
//   request  v0-7: groupId, topics [name, partitionIndexes [int32]] (nullable v2-7: null = all),
//            v8+: groups [groupId, v9+: memberId (nullable), v9+: memberEpoch (default -1),
//                         topics [name, partitionIndexes [int32]] (nullable: all)],
//            v7+: requireStable bool
//   response v3+: throttleTimeMs,
//            v0-7: topics [name, partitions [partitionIndex, committedOffset int64, v5-7: committedLeaderEpoch (default -1),
//                          metadata (nullable), errorCode]], v2-7: errorCode,
//            v8+: groups [groupId, topics [name, partitions [partitionIndex, committedOffset, committedLeaderEpoch,
//                          metadata (nullable), errorCode]], errorCode]
import { f, message, type KafkaApiSpec } from '../../schema.js';

const requestTopics = (v: string): ReturnType<typeof f.array> => f.array('topics', v, [
  f.string('name', v), f.array('partitionIndexes', v, 'int32'),
], { nullable: v === '8+' ? '8+' : '2-7' });

const responsePartitions = (v: string, epoch: string): ReturnType<typeof f.array> => f.array('partitions', v, [
  f.int32('partitionIndex', v),
  f.int64('committedOffset', v),
  f.int32('committedLeaderEpoch', epoch, { default: -1 }),
  f.string('metadata', v, { nullable: v }),
  f.int16('errorCode', v),
]);

export const offsetFetch: KafkaApiSpec = {
  apiKey: 9,
  name: 'OffsetFetch',
  request: message('OffsetFetchRequest', 9, '0-9', '6+', [
    f.string('groupId', '0-7'),
    requestTopics('0-7'),
    f.array('groups', '8+', [
      f.string('groupId', '8+'),
      f.string('memberId', '9+', { nullable: '9+', default: null }),
      f.int32('memberEpoch', '9+', { default: -1 }),
      requestTopics('8+'),
    ]),
    f.bool('requireStable', '7+'),
  ]),
  response: message('OffsetFetchResponse', 9, '0-9', '6+', [
    f.int32('throttleTimeMs', '3+'),
    f.array('topics', '0-7', [f.string('name', '0-7'), responsePartitions('0-7', '5-7')]),
    f.int16('errorCode', '2-7'),
    f.array('groups', '8+', [
      f.string('groupId', '8+'),
      f.array('topics', '8+', [f.string('name', '8+'), responsePartitions('8+', '8+')]),
      f.int16('errorCode', '8+'),
    ]),
  ]),
};
