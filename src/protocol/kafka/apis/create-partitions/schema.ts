// CreatePartitions (key 37), v0-3, flexible from v2. Raises topics' partition
// counts, optionally with the new partitions' replica lists.
//
//   request  topics [name, count int32, assignments (nullable) [brokerIds [int32]]],
//            timeoutMs int32, validateOnly bool
//   response throttleTimeMs, results [name, errorCode, errorMessage (nullable)]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const createPartitions: KafkaApiSpec = {
  apiKey: 37,
  name: 'CreatePartitions',
  request: message('CreatePartitionsRequest', 37, '0-3', '2+', [
    f.array('topics', '0+', [
      f.string('name'),
      f.int32('count'),
      f.array('assignments', '0+', [f.array('brokerIds', '0+', 'int32')], { nullable: '0+' }),
    ]),
    f.int32('timeoutMs'),
    f.bool('validateOnly'),
  ]),
  response: message('CreatePartitionsResponse', 37, '0-3', '2+', [
    f.int32('throttleTimeMs'),
    f.array('results', '0+', [f.string('name'), f.int16('errorCode'), f.string('errorMessage', '0+', { nullable: '0+' })]),
  ]),
};
