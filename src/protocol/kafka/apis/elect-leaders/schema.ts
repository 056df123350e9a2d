// ElectLeaders (key 43), v0-2, flexible from v2. Elects leaders of the named
// partitions (null: every partition): electionType 0 preferred (the first
// replica), 1 unclean (any live replica of a partition without a leader).
//
//   request  v1+: electionType int8, topicPartitions (nullable) [topic, partitions [int32]], timeoutMs int32 (60000)
//   response throttleTimeMs, v1+: errorCode, replicaElectionResults [topic,
//            partitionResult [partitionId, errorCode, errorMessage (nullable)]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const electLeaders: KafkaApiSpec = {
  apiKey: 43,
  name: 'ElectLeaders',
  request: message('ElectLeadersRequest', 43, '0-2', '2+', [
    f.int8('electionType', '1+'),
    f.array('topicPartitions', '0+', [f.string('topic'), f.array('partitions', '0+', 'int32')], { nullable: '0+' }),
    f.int32('timeoutMs', '0+', { default: 60000 }),
  ]),
  response: message('ElectLeadersResponse', 43, '0-2', '2+', [
    f.int32('throttleTimeMs'),
    f.int16('errorCode', '1+'),
    f.array('replicaElectionResults', '0+', [
      f.string('topic'),
      f.array('partitionResult', '0+', [f.int32('partitionId'), f.int16('errorCode'), f.string('errorMessage', '0+', { nullable: '0+' })]),
    ]),
  ]),
};
