// AlterConfigs (key 33), v0-2, flexible from v2. Replaces the whole set of
// dynamic configs of each resource (keys not named go back to their default).
//
//   request  resources [resourceType int8, resourceName, configs [name, value (nullable)]], validateOnly bool
//   response throttleTimeMs, responses [errorCode, errorMessage (nullable), resourceType int8, resourceName]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const alterConfigsResponseFields = [
  f.int32('throttleTimeMs'),
  f.array('responses', '0+', [
    f.int16('errorCode'), f.string('errorMessage', '0+', { nullable: '0+' }), f.int8('resourceType'), f.string('resourceName'),
  ]),
];

export const alterConfigs: KafkaApiSpec = {
  apiKey: 33,
  name: 'AlterConfigs',
  request: message('AlterConfigsRequest', 33, '0-2', '2+', [
    f.array('resources', '0+', [
      f.int8('resourceType'),
      f.string('resourceName'),
      f.array('configs', '0+', [f.string('name'), f.string('value', '0+', { nullable: '0+' })]),
    ]),
    f.bool('validateOnly'),
  ]),
  response: message('AlterConfigsResponse', 33, '0-2', '2+', alterConfigsResponseFields),
};
