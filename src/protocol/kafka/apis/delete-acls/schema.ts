// DeleteAcls (key 31), v0-3, flexible from v2. One result per filter, in
// order, with the ACLs it removed.
//
//   request  filters [resourceTypeFilter, resourceNameFilter?, patternTypeFilter (v1+, default 3),
//                     principalFilter?, hostFilter?, operation, permissionType]
//   response throttleTimeMs, filterResults [errorCode, errorMessage?, matchingAcls [errorCode, errorMessage?,
//            resourceType, resourceName, patternType (v1+), principal, host, operation, permissionType]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const deleteAcls: KafkaApiSpec = {
  apiKey: 31,
  name: 'DeleteAcls',
  request: message('DeleteAclsRequest', 31, '0-3', '2+', [
    f.array('filters', '0+', [
      f.int8('resourceTypeFilter'),
      f.string('resourceNameFilter', '0+', { nullable: '0+' }),
      f.int8('patternTypeFilter', '1+', { default: 3 }),
      f.string('principalFilter', '0+', { nullable: '0+' }),
      f.string('hostFilter', '0+', { nullable: '0+' }),
      f.int8('operation'),
      f.int8('permissionType'),
    ]),
  ]),
  response: message('DeleteAclsResponse', 31, '0-3', '2+', [
    f.int32('throttleTimeMs'),
    f.array('filterResults', '0+', [
      f.int16('errorCode'),
      f.string('errorMessage', '0+', { nullable: '0+' }),
      f.array('matchingAcls', '0+', [
        f.int16('errorCode'),
        f.string('errorMessage', '0+', { nullable: '0+' }),
        f.int8('resourceType'),
        f.string('resourceName'),
        f.int8('patternType', '1+', { default: 3 }),
        f.string('principal'),
        f.string('host'),
        f.int8('operation'),
        f.int8('permissionType'),
      ]),
    ]),
  ]),
};
