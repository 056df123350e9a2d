// DescribeAcls (29), CreateAcls (30), DeleteAcls (31) on the WebSocket
// protocol (docs/protocol.md): Kafka's fields and numeric codes
// (src/security/acl.ts) in msgpack maps. The same bodies go to the
// controller's createAcls/deleteAcls. Requests:
//   DescribeAcls {filter: AclFilter}
//   CreateAcls   {creations: [AclBinding]}
//   DeleteAcls   {filters: [AclFilter]}
// AclBinding {resourceType, resourceName, patternType, principal, host, operation, permissionType};
// AclFilter: the same with resourceName/principal/host nullable and ANY (1) codes.
// Responses:
//   DescribeAcls {errorCode, errorMessage, acls: [AclBinding]}
//   CreateAcls   {results: [{errorCode, errorMessage}]}
//   DeleteAcls   {results: [{errorCode, errorMessage, matchingAcls: [{errorCode, errorMessage, acl}]}]}

import { badRequest, int, list, optStr, str, type Body } from '../body.js';
import type {
  AclBinding, AclBindingFilter, AclOperationCode, AclPermissionCode, PatternTypeCode, ResourceTypeCode,
} from '../../security/acl.js';

export function parseAclBinding(b: Body): AclBinding {
  return {
    resourceType: int(b, 'resourceType') as ResourceTypeCode,
    resourceName: str(b, 'resourceName'),
    patternType: int(b, 'patternType') as PatternTypeCode,
    principal: str(b, 'principal'),
    host: str(b, 'host'),
    operation: int(b, 'operation') as AclOperationCode,
    permissionType: int(b, 'permissionType') as AclPermissionCode,
  };
}

export function parseAclFilter(b: Body): AclBindingFilter {
  return {
    resourceType: int(b, 'resourceType') as ResourceTypeCode,
    resourceName: optStr(b, 'resourceName'),
    patternType: int(b, 'patternType') as PatternTypeCode,
    principal: optStr(b, 'principal'),
    host: optStr(b, 'host'),
    operation: int(b, 'operation') as AclOperationCode,
    permissionType: int(b, 'permissionType') as AclPermissionCode,
  };
}

/** Upper bound on creations or filters in one request: every item becomes work for the controller. */
export const ACL_ITEMS_MAX = 1000;

export function parseCreateAclsRequest(b: Body): AclBinding[] {
  const items = list(b, 'creations');
  if (items.length > ACL_ITEMS_MAX) throw badRequest(`at most ${ACL_ITEMS_MAX} creations per request`);
  return items.map(parseAclBinding);
}

export function parseDeleteAclsRequest(b: Body): AclBindingFilter[] {
  const items = list(b, 'filters');
  if (items.length > ACL_ITEMS_MAX) throw badRequest(`at most ${ACL_ITEMS_MAX} filters per request`);
  return items.map(parseAclFilter);
}

export function parseDescribeAclsRequest(b: Body): AclBindingFilter {
  const f = b.filter;
  if (typeof f !== 'object' || f === null || Array.isArray(f)) throw badRequest('filter must be a map');
  return parseAclFilter(f as Body);
}
