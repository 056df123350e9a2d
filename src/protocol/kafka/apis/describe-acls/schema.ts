// DescribeAcls (key 29), v0-3, flexible from v2. The ACLs a filter matches,
// grouped by resource pattern. Codes are Kafka's (src/security/acl.ts).
//
//   request  resourceTypeFilter, resourceNameFilter?, patternTypeFilter (v1+, default 3),
//            principalFilter?, hostFilter?, operation, permissionType
//   response throttleTimeMs, errorCode, errorMessage?,
//            resources [resourceType, resourceName, patternType (v1+), acls [principal, host, operation, permissionType]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const describeAcls: KafkaApiSpec = {
  apiKey: 29,
  name: 'DescribeAcls',
  request: message('DescribeAclsRequest', 29, '0-3', '2+', [
    f.int8('resourceTypeFilter'),
    f.string('resourceNameFilter', '0+', { nullable: '0+' }),
    f.int8('patternTypeFilter', '1+', { default: 3 }),
    f.string('principalFilter', '0+', { nullable: '0+' }),
    f.string('hostFilter', '0+', { nullable: '0+' }),
    f.int8('operation'),
    f.int8('permissionType'),
  ]),
  response: message('DescribeAclsResponse', 29, '0-3', '2+', [
    f.int32('throttleTimeMs'),
    f.int16('errorCode'),
    f.string('errorMessage', '0+', { nullable: '0+' }),
    f.array('resources', '0+', [
      f.int8('resourceType'),
      f.string('resourceName'),
      f.int8('patternType', '1+', { default: 3 }),
      f.array('acls', '0+', [f.string('principal'), f.string('host'), f.int8('operation'), f.int8('permissionType')]),
    ]),
  ]),
};
