// The authorizer: Kafka's StandardAuthorizer rules over the ACLs of one
// metadata image, as a pure function of (principal, host, operation,
// resource). Order of the decision, as in Kafka:
//   1. a super user (super.users) may do anything;
//   2. a DENY binding that matches principal (or User:*), host (or *),
//      operation (or All) and resource (literal name, literal "*", or a
//      prefix of the name) refuses — deny always wins;
//   3. a matching ALLOW binding (implied operations count: acl.ts) allows;
//   4. otherwise refused — unless no binding at all names the resource and
//      allow.everyone.if.no.acl.found is on.
// An AclIndex is built once per set of bindings (per metadata image) and
// shared by every request until the ACLs change.

import { principalString, type Principal } from './principal.js';
import {
  AclPermission, PatternType, WILDCARD, WILDCARD_PRINCIPAL, operationCovers,
  type AclBinding, type AclOperationCode, type ResourceTypeCode,
} from './acl.js';

export interface AuthorizerConfig {
  /** super.users: principals ("User:admin") allowed everything, whatever the ACLs say. */
  readonly superUsers: readonly string[];
  /** allow.everyone.if.no.acl.found: a resource no ACL names is open to all (default false). */
  readonly allowEveryoneIfNoAclFound: boolean;
}

interface ByType {
  readonly literal: Map<string, AclBinding[]>;
  readonly prefixed: AclBinding[];
}

/** The bindings of one image, indexed by resource type and literal name. */
export class AclIndex {
  private readonly types = new Map<number, ByType>();
  readonly size: number;

  constructor(bindings: Iterable<AclBinding>) {
    let n = 0;
    for (const b of bindings) {
      n++;
      let t = this.types.get(b.resourceType);
      if (!t) this.types.set(b.resourceType, t = { literal: new Map(), prefixed: [] });
      if (b.patternType === PatternType.PREFIXED) t.prefixed.push(b);
      else {
        const list = t.literal.get(b.resourceName);
        if (list) list.push(b);
        else t.literal.set(b.resourceName, [b]);
      }
    }
    this.size = n;
  }

  /** Every binding whose pattern applies to the resource. */
  matching(type: number, name: string): AclBinding[] {
    const t = this.types.get(type);
    if (!t) return [];
    const out = [...(t.literal.get(name) ?? [])];
    if (name !== WILDCARD) out.push(...(t.literal.get(WILDCARD) ?? []));
    for (const b of t.prefixed) if (name.startsWith(b.resourceName)) out.push(b);
    return out;
  }

  /** Every binding of a resource type. */
  ofType(type: number): AclBinding[] {
    const t = this.types.get(type);
    if (!t) return [];
    return [...[...t.literal.values()].flat(), ...t.prefixed];
  }
}

export const EMPTY_ACL_INDEX = new AclIndex([]);

function entryApplies(b: AclBinding, principal: string, host: string, op: number): boolean {
  return (b.principal === principal || b.principal === WILDCARD_PRINCIPAL)
    && (b.host === host || b.host === WILDCARD)
    && operationCovers(b.operation, op, b.permissionType);
}

export class Authorizer {
  private readonly superUsers: ReadonlySet<string>;

  constructor(readonly config: AuthorizerConfig, readonly acls: AclIndex) {
    this.superUsers = new Set(config.superUsers);
  }

  isSuperUser(principal: Principal): boolean {
    return this.superUsers.has(principalString(principal));
  }

  /** Whether `principal`, connected from `host`, may do `op` to the resource. */
  authorize(principal: Principal, host: string, op: AclOperationCode, type: ResourceTypeCode, name: string): boolean {
    if (this.isSuperUser(principal)) return true;
    const who = principalString(principal);
    const bindings = this.acls.matching(type, name);
    let allowed = false;
    for (const b of bindings) {
      if (!entryApplies(b, who, host, op)) continue;
      if (b.permissionType === AclPermission.DENY) return false;
      if (b.permissionType === AclPermission.ALLOW) allowed = true;
    }
    if (allowed) return true;
    return bindings.length === 0 && this.config.allowEveryoneIfNoAclFound;
  }

  /**
   * Whether the principal may do `op` to at least one resource of `type`
   * (Kafka's authorizeByResourceType: an idempotent producer with Write on
   * some topic needs no IdempotentWrite on the cluster). An allow counts
   * unless a deny for the same principal covers its whole pattern: the
   * literal "*", the same literal name, or a prefix of its name.
   */
  authorizeAny(principal: Principal, host: string, op: AclOperationCode, type: ResourceTypeCode): boolean {
    if (this.isSuperUser(principal)) return true;
    const who = principalString(principal);
    const all = this.acls.ofType(type);
    if (all.length === 0) return this.config.allowEveryoneIfNoAclFound;
    const denies = all.filter((b) => b.permissionType === AclPermission.DENY && entryApplies(b, who, host, op));
    const covered = (allow: AclBinding): boolean => denies.some((d) => {
      if (d.patternType === PatternType.LITERAL && d.resourceName === WILDCARD) return true;
      if (d.patternType === PatternType.PREFIXED) return allow.resourceName.startsWith(d.resourceName);
      return allow.patternType === PatternType.LITERAL && d.resourceName === allow.resourceName;
    });
    return all.some((b) => b.permissionType === AclPermission.ALLOW && entryApplies(b, who, host, op) && !covered(b));
  }
}

/** An authorizer with no bindings: only super users (and, with allow.everyone.if.no.acl.found, everyone). */
export function emptyAuthorizer(config: AuthorizerConfig): Authorizer {
  return new Authorizer(config, EMPTY_ACL_INDEX);
}
