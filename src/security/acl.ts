// Kafka's ACL model as plain data (docs/security.md, "Authorization"): an
// ACL binding is a resource pattern (resource type, name, literal or
// prefixed) and an access control entry (principal, host, operation,
// allow/deny). The numeric codes are Kafka's own (ResourceType, PatternType,
// AclOperation, AclPermissionType), so they go on the Kafka wire unchanged
// and the WebSocket protocol carries the same numbers.
//
// Also here: which operations imply which (Describe by Read/Write/Delete/
// Alter, DescribeConfigs by AlterConfigs, everything by All), Kafka's binding
// filters (DescribeAcls/DeleteAcls) and the checks a binding must pass to be
// created. Pure: no I/O, no clock.

export const ResourceType = {
  UNKNOWN: 0, ANY: 1, TOPIC: 2, GROUP: 3, CLUSTER: 4, TRANSACTIONAL_ID: 5, DELEGATION_TOKEN: 6, USER: 7,
} as const;
export type ResourceTypeCode = (typeof ResourceType)[keyof typeof ResourceType];

export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
export type PatternTypeCode = (typeof PatternType)[keyof typeof PatternType];

export const AclOperation = {
  UNKNOWN: 0, ANY: 1, ALL: 2, READ: 3, WRITE: 4, CREATE: 5, DELETE: 6, ALTER: 7, DESCRIBE: 8, CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10, ALTER_CONFIGS: 11, IDEMPOTENT_WRITE: 12, CREATE_TOKENS: 13, DESCRIBE_TOKENS: 14,
} as const;
export type AclOperationCode = (typeof AclOperation)[keyof typeof AclOperation];

export const AclPermission = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;
export type AclPermissionCode = (typeof AclPermission)[keyof typeof AclPermission];

/** The one name the cluster resource has (Kafka's "kafka-cluster"). */
export const CLUSTER_RESOURCE_NAME = 'kafka-cluster';
/** A literal resource name, principal or host that matches every one. */
export const WILDCARD = '*';
export const WILDCARD_PRINCIPAL = 'User:*';

/** One ACL: who may (or may not) do what to which resources. */
export interface AclBinding {
  readonly resourceType: ResourceTypeCode;
  readonly resourceName: string;
  /** LITERAL or PREFIXED. */
  readonly patternType: PatternTypeCode;
  /** "User:alice", or "User:*" for every user. */
  readonly principal: string;
  /** The client's IP address, or "*" for any. */
  readonly host: string;
  readonly operation: AclOperationCode;
  /** ALLOW or DENY. */
  readonly permissionType: AclPermissionCode;
}

/** Kafka's AclBindingFilter: null strings and ANY codes match everything. */
export interface AclBindingFilter {
  readonly resourceType: ResourceTypeCode;
  readonly resourceName: string | null;
  /** ANY, MATCH (every pattern that would apply to resourceName), LITERAL or PREFIXED. */
  readonly patternType: PatternTypeCode;
  readonly principal: string | null;
  readonly host: string | null;
  readonly operation: AclOperationCode;
  readonly permissionType: AclPermissionCode;
}

export const MATCH_ALL_FILTER: AclBindingFilter = Object.freeze({
  resourceType: ResourceType.ANY, resourceName: null, patternType: PatternType.ANY,
  principal: null, host: null, operation: AclOperation.ANY, permissionType: AclPermission.ANY,
});

const OPERATION_NAMES: ReadonlyMap<number, string> = new Map([
  [AclOperation.ALL, 'All'], [AclOperation.READ, 'Read'], [AclOperation.WRITE, 'Write'], [AclOperation.CREATE, 'Create'],
  [AclOperation.DELETE, 'Delete'], [AclOperation.ALTER, 'Alter'], [AclOperation.DESCRIBE, 'Describe'],
  [AclOperation.CLUSTER_ACTION, 'ClusterAction'], [AclOperation.DESCRIBE_CONFIGS, 'DescribeConfigs'],
  [AclOperation.ALTER_CONFIGS, 'AlterConfigs'], [AclOperation.IDEMPOTENT_WRITE, 'IdempotentWrite'],
  [AclOperation.CREATE_TOKENS, 'CreateTokens'], [AclOperation.DESCRIBE_TOKENS, 'DescribeTokens'], [AclOperation.ANY, 'Any'],
]);
const RESOURCE_NAMES: ReadonlyMap<number, string> = new Map([
  [ResourceType.TOPIC, 'Topic'], [ResourceType.GROUP, 'Group'], [ResourceType.CLUSTER, 'Cluster'],
  [ResourceType.TRANSACTIONAL_ID, 'TransactionalId'], [ResourceType.DELEGATION_TOKEN, 'DelegationToken'],
  [ResourceType.USER, 'User'], [ResourceType.ANY, 'Any'],
]);
const PATTERN_NAMES: ReadonlyMap<number, string> = new Map([
  [PatternType.LITERAL, 'Literal'], [PatternType.PREFIXED, 'Prefixed'], [PatternType.ANY, 'Any'], [PatternType.MATCH, 'Match'],
]);
const PERMISSION_NAMES: ReadonlyMap<number, string> = new Map([[AclPermission.ALLOW, 'Allow'], [AclPermission.DENY, 'Deny'], [AclPermission.ANY, 'Any']]);

export const operationName = (op: number): string => OPERATION_NAMES.get(op) ?? `Unknown(${op})`;
export const resourceTypeName = (t: number): string => RESOURCE_NAMES.get(t) ?? `Unknown(${t})`;
export const patternTypeName = (t: number): string => PATTERN_NAMES.get(t) ?? `Unknown(${t})`;
export const permissionName = (p: number): string => PERMISSION_NAMES.get(p) ?? `Unknown(${p})`;

function byName<T extends number>(names: ReadonlyMap<number, string>, text: string, what: string): T {
  const wanted = text.replace(/[_\s-]/g, '').toLowerCase();
  for (const [code, name] of names) if (name.toLowerCase() === wanted) return code as T;
  throw new Error(`unknown ${what} "${text}" (one of ${[...names.values()].filter((n) => n !== 'Any' && n !== 'Match').join(', ')})`);
}
/** "Read", "read", "DESCRIBE_CONFIGS", "describe-configs" → the code. */
export const parseOperation = (text: string): AclOperationCode => byName(OPERATION_NAMES, text, 'operation');
export const parseResourceType = (text: string): ResourceTypeCode => byName(RESOURCE_NAMES, text, 'resource type');
export const parsePatternType = (text: string): PatternTypeCode => byName(PATTERN_NAMES, text, 'pattern type');

/**
 * Whether an ACL with operation `aclOp` covers a request for `op`. An allow
 * of Read, Write, Delete or Alter also allows Describe, and AlterConfigs
 * allows DescribeConfigs (Kafka's implied operations); a deny covers only
 * its own operation (and All covers everything either way).
 */
export function operationCovers(aclOp: number, op: number, permission: number): boolean {
  if (aclOp === op || aclOp === AclOperation.ALL) return true;
  if (permission !== AclPermission.ALLOW) return false;
  if (op === AclOperation.DESCRIBE) {
    return aclOp === AclOperation.READ || aclOp === AclOperation.WRITE || aclOp === AclOperation.DELETE || aclOp === AclOperation.ALTER;
  }
  if (op === AclOperation.DESCRIBE_CONFIGS) return aclOp === AclOperation.ALTER_CONFIGS;
  return false;
}

/** Whether a binding's resource pattern applies to the resource `name` (literal, the "*" wildcard, or a prefix). */
export function patternMatches(b: Pick<AclBinding, 'patternType' | 'resourceName'>, name: string): boolean {
  if (b.patternType === PatternType.PREFIXED) return name.startsWith(b.resourceName);
  return b.resourceName === name || b.resourceName === WILDCARD;
}

/** Kafka's ResourcePatternFilter.matches and AccessControlEntryFilter.matches together. */
export function filterMatches(f: AclBindingFilter, b: AclBinding): boolean {
  if (f.resourceType !== ResourceType.ANY && f.resourceType !== b.resourceType) return false;
  if (f.patternType !== PatternType.ANY && f.patternType !== PatternType.MATCH && f.patternType !== b.patternType) return false;
  if (f.resourceName !== null) {
    if (f.patternType === PatternType.MATCH) {
      if (!patternMatches(b, f.resourceName)) return false;
    } else if (f.resourceName !== b.resourceName) {
      return false;
    }
  }
  if (f.principal !== null && f.principal !== b.principal) return false;
  if (f.host !== null && f.host !== b.host) return false;
  if (f.operation !== AclOperation.ANY && f.operation !== b.operation) return false;
  if (f.permissionType !== AclPermission.ANY && f.permissionType !== b.permissionType) return false;
  return true;
}

const CONCRETE_RESOURCES: ReadonlySet<number> = new Set([ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER, ResourceType.TRANSACTIONAL_ID]);
const CONCRETE_OPERATIONS: ReadonlySet<number> = new Set([
  AclOperation.ALL, AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE, AclOperation.ALTER,
  AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE,
]);

function principalProblem(text: string): string | null {
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) return `principal "${text}" is not Type:name (e.g. User:alice, or User:* for everyone)`;
  return null;
}

/** Why a binding cannot be created (Kafka's INVALID_REQUEST reasons), or null. */
export function bindingProblem(b: AclBinding): string | null {
  if (!CONCRETE_RESOURCES.has(b.resourceType)) return `resource type ${resourceTypeName(b.resourceType)} is not one of Topic, Group, Cluster, TransactionalId`;
  if (b.patternType !== PatternType.LITERAL && b.patternType !== PatternType.PREFIXED) return `pattern type ${patternTypeName(b.patternType)} is not Literal or Prefixed`;
  if (b.resourceName === '') return 'the resource name is empty';
  if (b.resourceType === ResourceType.CLUSTER && (b.resourceName !== CLUSTER_RESOURCE_NAME || b.patternType !== PatternType.LITERAL)) {
    return `the cluster resource is the literal name ${CLUSTER_RESOURCE_NAME}`;
  }
  if (b.patternType === PatternType.PREFIXED && b.resourceName === WILDCARD) return 'a prefixed pattern cannot be "*" (use a literal "*")';
  if (!CONCRETE_OPERATIONS.has(b.operation)) return `operation ${operationName(b.operation)} cannot be granted`;
  if (b.permissionType !== AclPermission.ALLOW && b.permissionType !== AclPermission.DENY) return `permission ${permissionName(b.permissionType)} is not Allow or Deny`;
  const p = principalProblem(b.principal);
  if (p) return p;
  if (b.host === '') return 'the host is empty (use * for any host)';
  return null;
}

/** Why a filter is unusable (an UNKNOWN code anywhere), or null. */
export function filterProblem(f: AclBindingFilter): string | null {
  if (f.resourceType === ResourceType.UNKNOWN || !RESOURCE_NAMES.has(f.resourceType)) return `unknown resource type ${f.resourceType}`;
  if (f.patternType === PatternType.UNKNOWN || !PATTERN_NAMES.has(f.patternType)) return `unknown pattern type ${f.patternType}`;
  if (f.operation === AclOperation.UNKNOWN || !OPERATION_NAMES.has(f.operation)) return `unknown operation ${f.operation}`;
  if (f.permissionType === AclPermission.UNKNOWN || !PERMISSION_NAMES.has(f.permissionType)) return `unknown permission type ${f.permissionType}`;
  return null;
}

export function sameBinding(a: AclBinding, b: AclBinding): boolean {
  return a.resourceType === b.resourceType && a.resourceName === b.resourceName && a.patternType === b.patternType
    && a.principal === b.principal && a.host === b.host && a.operation === b.operation && a.permissionType === b.permissionType;
}

/** One line in kafka-acls' words, for logs and the CLI. */
export function describeBinding(b: AclBinding): string {
  return `${b.principal} ${permissionName(b.permissionType)} ${operationName(b.operation)} from ${b.host} on `
    + `${resourceTypeName(b.resourceType)}:${patternTypeName(b.patternType)}:${b.resourceName}`;
}
