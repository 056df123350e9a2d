// CreateAcls (key 30), v0-3, flexible from v2. One result per creation, in order.
//
//   request  creations [resourceType, resourceName, resourcePatternType (v1+, default 3),
//                       principal, host, operation, permissionType]
//   response throttleTimeMs, results [errorCode, errorMessage?]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const createAcls: KafkaApiSpec = {
  apiKey: 30,
  name: 'CreateAcls',
  request: message('CreateAclsRequest', 30, '0-3', '2+', [
    f.array('creations', '0+', [
      f.int8('resourceType'),
      f.string('resourceName'),
      f.int8('resourcePatternType', '1+', { default: 3 }),
      f.string('principal'),
      f.string('host'),
      f.int8('operation'),
      f.int8('permissionType'),
    ]),
  ]),
  response: message('CreateAclsResponse', 30, '0-3', '2+', [
    f.int32('throttleTimeMs'),
    f.array('results', '0+', [f.int16('errorCode'), f.string('errorMessage', '0+', { nullable: '0+' })]),
  ]),
};
