// AlterPartitionReassignments (key 45), v0, flexible. Starts moving
// partitions to new replica lists, or cancels a move (replicas null).
//
//   request  timeoutMs int32 (60000), topics [name, partitions [partitionIndex, replicas [int32] (nullable, default null)]]
//   response throttleTimeMs, errorCode, errorMessage (nullable),
//            responses [name, partitions [partitionIndex, errorCode, errorMessage (nullable)]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const alterPartitionReassignments: KafkaApiSpec = {
  apiKey: 45,
  name: 'AlterPartitionReassignments',
  request: message('AlterPartitionReassignmentsRequest', 45, '0', '0+', [
    f.int32('timeoutMs', '0+', { default: 60000 }),
    f.array('topics', '0+', [
      f.string('name'),
      f.array('partitions', '0+', [f.int32('partitionIndex'), f.array('replicas', '0+', 'int32', { nullable: '0+', default: null })]),
    ]),
  ]),
  response: message('AlterPartitionReassignmentsResponse', 45, '0', '0+', [
    f.int32('throttleTimeMs'),
    f.int16('errorCode'),
    f.string('errorMessage', '0+', { nullable: '0+' }),
    f.array('responses', '0+', [
      f.string('name'),
      f.array('partitions', '0+', [f.int32('partitionIndex'), f.int16('errorCode'), f.string('errorMessage', '0+', { nullable: '0+' })]),
    ]),
  ]),
};
