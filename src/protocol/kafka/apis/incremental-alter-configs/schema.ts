// IncrementalAlterConfigs (key 44), v0-1, flexible from v1. Changes named
// configs only: configOperation 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT (the
// last two on list-valued configs).
//
//   request  resources [resourceType int8, resourceName, configs [name, configOperation int8, value (nullable)]],
//            validateOnly bool
//   response throttleTimeMs, responses [errorCode, errorMessage (nullable), resourceType int8, resourceName]
import { f, message, type KafkaApiSpec } from '../../schema.js';
import { alterConfigsResponseFields } from '../alter-configs/schema.js';

export const incrementalAlterConfigs: KafkaApiSpec = {
  apiKey: 44,
  name: 'IncrementalAlterConfigs',
  request: message('IncrementalAlterConfigsRequest', 44, '0-1', '1+', [
    f.array('resources', '0+', [
      f.int8('resourceType'),
      f.string('resourceName'),
      f.array('configs', '0+', [f.string('name'), f.int8('configOperation'), f.string('value', '0+', { nullable: '0+' })]),
    ]),
    f.bool('validateOnly'),
  ]),
  response: message('IncrementalAlterConfigsResponse', 44, '0-1', '1+', alterConfigsResponseFields),
};
