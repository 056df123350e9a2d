// OffsetCommit (key 8), v0-9, flexible from v8. A group's committed offsets.
// (v10 names topics by id, KIP-848: not in this table.)
//
//   request  groupId, v1+: generationIdOrMemberEpoch (default -1), v1+: memberId,
//            v7+: groupInstanceId (nullable), v2-4: retentionTimeMs int64 (default -1),
//            topics [name, partitions [partitionIndex, committedOffset int64,
//                    v6+: committedLeaderEpoch (default -1), v1: commitTimestamp int64 (default -1),
//                    committedMetadata (nullable)]]
//   response v3+: throttleTimeMs, topics [name, partitions [partitionIndex, errorCode]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const offsetCommit: KafkaApiSpec = {
  apiKey: 8,
  name: 'OffsetCommit',
  request: message('OffsetCommitRequest', 8, '0-9', '8+', [
    f.string('groupId'),
    f.int32('generationIdOrMemberEpoch', '1+', { default: -1 }),
    f.string('memberId', '1+'),
    f.string('groupInstanceId', '7+', { nullable: '7+', default: null }),
    f.int64('retentionTimeMs', '2-4', { default: -1 }),
    f.array('topics', '0+', [
      f.string('name'),
      f.array('partitions', '0+', [
        f.int32('partitionIndex'),
        f.int64('committedOffset'),
        f.int32('committedLeaderEpoch', '6+', { default: -1 }),
        f.int64('commitTimestamp', '1', { default: -1 }),
        f.string('committedMetadata', '0+', { nullable: '0+' }),
      ]),
    ]),
  ]),
  response: message('OffsetCommitResponse', 8, '0-9', '8+', [
    f.int32('throttleTimeMs', '3+'),
    f.array('topics', '0+', [
      f.string('name'),
      f.array('partitions', '0+', [f.int32('partitionIndex'), f.int16('errorCode')]),
    ]),
  ]),
};
