// OffsetDelete (key 47), v0, not flexible. Deletes a group's committed
// offsets of partitions the group is not subscribed to.
//
//   request  groupId, topics [name, partitions [partitionIndex]]
//   response errorCode, throttleTimeMs, topics [name, partitions [partitionIndex, errorCode]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const offsetDelete: KafkaApiSpec = {
  apiKey: 47,
  name: 'OffsetDelete',
  request: message('OffsetDeleteRequest', 47, '0', 'none', [
    f.string('groupId'),
    f.array('topics', '0+', [f.string('name'), f.array('partitions', '0+', [f.int32('partitionIndex')])]),
  ]),
  response: message('OffsetDeleteResponse', 47, '0', 'none', [
    f.int16('errorCode'),
    f.int32('throttleTimeMs'),
    f.array('topics', '0+', [
      f.string('name'),
      f.array('partitions', '0+', [f.int32('partitionIndex'), f.int16('errorCode')]),
    ]),
  ]),
};
