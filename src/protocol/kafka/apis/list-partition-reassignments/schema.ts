// ListPartitionReassignments (key 46), v0, flexible. The partition moves in
// progress, of every partition (topics null) or of the partitions named.
//
//   request  timeoutMs int32 (60000), topics (nullable, default null) [name, partitionIndexes [int32]]
//   response throttleTimeMs, errorCode, errorMessage (nullable),
//            topics [name, partitions [partitionIndex, replicas [int32], addingReplicas [int32], removingReplicas [int32]]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const listPartitionReassignments: KafkaApiSpec = {
  apiKey: 46,
  name: 'ListPartitionReassignments',
  request: message('ListPartitionReassignmentsRequest', 46, '0', '0+', [
    f.int32('timeoutMs', '0+', { default: 60000 }),
    f.array('topics', '0+', [f.string('name'), f.array('partitionIndexes', '0+', 'int32')], { nullable: '0+', default: null }),
  ]),
  response: message('ListPartitionReassignmentsResponse', 46, '0', '0+', [
    f.int32('throttleTimeMs'),
    f.int16('errorCode'),
    f.string('errorMessage', '0+', { nullable: '0+' }),
    f.array('topics', '0+', [
      f.string('name'),
      f.array('partitions', '0+', [
        f.int32('partitionIndex'),
        f.array('replicas', '0+', 'int32'),
        f.array('addingReplicas', '0+', 'int32'),
        f.array('removingReplicas', '0+', 'int32'),
      ]),
    ]),
  ]),
};
