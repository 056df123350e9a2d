// DeleteTopics (key 20), v0-6, flexible from v4. Deletes topics by name
// (v0-5: topicNames) or by name or topic id (v6+: topics).
//
//   request  v6+: topics [name (nullable, default null), topicId uuid],
//            v0-5: topicNames [string], timeoutMs int32
//   response v1+: throttleTimeMs, responses [name (nullable v6+), v6+: topicId uuid, errorCode,
//            v5+: errorMessage (nullable, default null)]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const deleteTopics: KafkaApiSpec = {
  apiKey: 20,
  name: 'DeleteTopics',
  request: message('DeleteTopicsRequest', 20, '0-6', '4+', [
    f.array('topics', '6+', [f.string('name', '6+', { nullable: '6+', default: null }), f.uuid('topicId', '6+')]),
    f.array('topicNames', '0-5', 'string'),
    f.int32('timeoutMs'),
  ]),
  response: message('DeleteTopicsResponse', 20, '0-6', '4+', [
    f.int32('throttleTimeMs', '1+'),
    f.array('responses', '0+', [
      f.string('name', '0+', { nullable: '6+' }),
      f.uuid('topicId', '6+'),
      f.int16('errorCode'),
      f.string('errorMessage', '5+', { nullable: '5+', default: null }),
    ]),
  ]),
};
