// CreateTopics (key 19), v0-7, flexible from v5. Creates topics with a count
// and replication factor (-1 = the cluster defaults, v4+) or an explicit
// assignment, and per-topic configs; validateOnly (v1+) checks without creating.
//
//   request  topics [name, numPartitions int32, replicationFactor int16,
//                    assignments [partitionIndex int32, brokerIds [int32]],
//                    configs [name, value (nullable)]],
//            timeoutMs int32 (default 60000), v1+: validateOnly bool
//   response v2+: throttleTimeMs, topics [name, v7+: topicId uuid, errorCode,
//            v1+: errorMessage (nullable), v5+ tagged 0: topicConfigErrorCode int16,
//            v5+: numPartitions int32 (-1), replicationFactor int16 (-1),
//                 configs (nullable) [name, value (nullable), readOnly bool, configSource int8 (-1), isSensitive bool]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const createTopics: KafkaApiSpec = {
  apiKey: 19,
  name: 'CreateTopics',
  request: message('CreateTopicsRequest', 19, '0-7', '5+', [
    f.array('topics', '0+', [
      f.string('name'),
      f.int32('numPartitions'),
      f.int16('replicationFactor'),
      f.array('assignments', '0+', [f.int32('partitionIndex'), f.array('brokerIds', '0+', 'int32')]),
      f.array('configs', '0+', [f.string('name'), f.string('value', '0+', { nullable: '0+' })]),
    ]),
    f.int32('timeoutMs', '0+', { default: 60000 }),
    f.bool('validateOnly', '1+'),
  ]),
  response: message('CreateTopicsResponse', 19, '0-7', '5+', [
    f.int32('throttleTimeMs', '2+'),
    f.array('topics', '0+', [
      f.string('name'),
      f.uuid('topicId', '7+'),
      f.int16('errorCode'),
      f.string('errorMessage', '1+', { nullable: '0+' }),
      f.int16('topicConfigErrorCode', '5+', { tag: 0 }),
      f.int32('numPartitions', '5+', { default: -1 }),
      f.int16('replicationFactor', '5+', { default: -1 }),
      f.array('configs', '5+', [
        f.string('name', '5+'),
        f.string('value', '5+', { nullable: '5+' }),
        f.bool('readOnly', '5+'),
        f.int8('configSource', '5+', { default: -1 }),
        f.bool('isSensitive', '5+'),
      ], { nullable: '5+' }),
    ]),
  ]),
};
