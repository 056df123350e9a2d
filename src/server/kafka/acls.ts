// DescribeAcls, CreateAcls and DeleteAcls on the Kafka listener (kafka-acls.sh,
// the Java AdminClient's describeAcls/createAcls/deleteAcls). The same work
// as the WebSocket protocol's ACL APIs (../acl-api.ts): describe from this
// broker's image, create and delete through the active controller; without
// an authorizer, SECURITY_DISABLED. v1-3 are served (v0 predates prefixed
// patterns and is gone from Kafka 4).

import { describeAcls } from '../../protocol/kafka/apis/describe-acls/schema.js';
import { createAcls } from '../../protocol/kafka/apis/create-acls/schema.js';
import { deleteAcls } from '../../protocol/kafka/apis/delete-acls/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import { Errors } from '../../util/errors.js';
import { filterProblem, type AclBinding, type AclBindingFilter } from '../../security/acl.js';
import { aclsMatching, createAclsThrough, deleteAclsThrough } from '../acl-api.js';
import type { KafkaApiHandler } from './api.js';

function filterOf(s: Struct): AclBindingFilter {
  return {
    resourceType: s.resourceTypeFilter, resourceName: s.resourceNameFilter, patternType: s.patternTypeFilter,
    principal: s.principalFilter, host: s.hostFilter, operation: s.operation, permissionType: s.permissionType,
  } as AclBindingFilter;
}

/** Kafka groups a DescribeAcls answer by resource pattern. */
function byResource(acls: readonly AclBinding[]): Struct[] {
  const out = new Map<string, Struct & { acls: Struct[] }>();
  for (const b of acls) {
    const key = `${b.resourceType}\u0000${b.patternType}\u0000${b.resourceName}`;
    let r = out.get(key);
    if (!r) out.set(key, r = { resourceType: b.resourceType, resourceName: b.resourceName, patternType: b.patternType, acls: [] });
    r.acls.push({ principal: b.principal, host: b.host, operation: b.operation, permissionType: b.permissionType });
  }
  return [...out.values()];
}

export const describeAclsHandler: KafkaApiHandler = {
  spec: describeAcls,
  minVersion: 1,
  maxVersion: 3,
  handle(req, ctx) {
    const filter = filterOf(req);
    const problem = filterProblem(filter);
    if (problem) return { throttleTimeMs: 0, errorCode: Errors.INVALID_REQUEST.code, errorMessage: `INVALID_REQUEST: ${problem}`, resources: [] };
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, resources: byResource(aclsMatching(ctx.deps, filter)) };
  },
  errorResponse(_req, errorCode, errorMessage) {
    return { throttleTimeMs: 0, errorCode, errorMessage, resources: [] };
  },
};

export const createAclsHandler: KafkaApiHandler = {
  spec: createAcls,
  minVersion: 1,
  maxVersion: 3,
  async handle(req, ctx) {
    const creations: AclBinding[] = (req.creations as Struct[]).map((c) => ({
      resourceType: c.resourceType, resourceName: c.resourceName, patternType: c.resourcePatternType,
      principal: c.principal, host: c.host, operation: c.operation, permissionType: c.permissionType,
    }) as AclBinding);
    const results = await createAclsThrough(ctx.deps, creations);
    return { throttleTimeMs: 0, results: results.map((r) => ({ errorCode: r.errorCode, errorMessage: r.errorMessage })) };
  },
  errorResponse(req, errorCode, errorMessage) {
    return { throttleTimeMs: 0, results: (req.creations as Struct[]).map(() => ({ errorCode, errorMessage })) };
  },
};

export const deleteAclsHandler: KafkaApiHandler = {
  spec: deleteAcls,
  minVersion: 1,
  maxVersion: 3,
  async handle(req, ctx) {
    const results = await deleteAclsThrough(ctx.deps, (req.filters as Struct[]).map(filterOf));
    return {
      throttleTimeMs: 0,
      filterResults: results.map((r) => ({
        errorCode: r.errorCode, errorMessage: r.errorMessage,
        matchingAcls: r.matchingAcls.map((m) => ({ errorCode: m.errorCode, errorMessage: m.errorMessage, ...m.acl })),
      })),
    };
  },
  errorResponse(req, errorCode, errorMessage) {
    return { throttleTimeMs: 0, filterResults: (req.filters as Struct[]).map(() => ({ errorCode, errorMessage, matchingAcls: [] })) };
  },
};
