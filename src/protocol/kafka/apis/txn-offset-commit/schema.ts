// TxnOffsetCommit (key 28), v0-4, flexible from v3. A transactional producer
// commits a group's offsets inside its transaction (to the group
// coordinator): they become committed with the transaction's COMMIT marker.
// v2 adds the committed leader epoch, v3 the member (KIP-447: the group's
// generation is checked), v4 TRANSACTION_ABORTABLE.
//
//   request  transactionalId, groupId, producerId int64, producerEpoch int16,
//            v3+: generationId (default -1), v3+: memberId (default ''), v3+: groupInstanceId (nullable, default null),
//            topics [name, partitions [partitionIndex, committedOffset int64,
//                    v2+: committedLeaderEpoch (default -1), committedMetadata (nullable)]]
//   response throttleTimeMs, topics [name, partitions [partitionIndex, errorCode]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const txnOffsetCommit: KafkaApiSpec = {
  apiKey: 28,
  name: 'TxnOffsetCommit',
  request: message('TxnOffsetCommitRequest', 28, '0-4', '3+', [
    f.string('transactionalId'),
    f.string('groupId'),
    f.int64('producerId'),
    f.int16('producerEpoch'),
    f.int32('generationId', '3+', { default: -1 }),
    f.string('memberId', '3+', { default: '' }),
    f.string('groupInstanceId', '3+', { nullable: '3+', default: null }),
    f.array('topics', '0+', [
      f.string('name'),
      f.array('partitions', '0+', [
        f.int32('partitionIndex'),
        f.int64('committedOffset'),
        f.int32('committedLeaderEpoch', '2+', { default: -1 }),
        f.string('committedMetadata', '0+', { nullable: '0+' }),
      ]),
    ]),
  ]),
  response: message('TxnOffsetCommitResponse', 28, '0-4', '3+', [
    f.int32('throttleTimeMs'),
    f.array('topics', '0+', [
      f.string('name'),
      f.array('partitions', '0+', [f.int32('partitionIndex'), f.int16('errorCode')]),
    ]),
  ]),
};
