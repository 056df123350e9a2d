// ACL commands (pure), Kafka's CreateAcls and DeleteAcls as the controller
// runs them: each creation is checked (acl.ts bindingProblem: INVALID_REQUEST
// with the reason) and becomes an AccessControlEntryRecord with a fresh id;
// a binding that already exists is answered success with no new record (as
// Kafka's StandardAuthorizer does). Each deletion filter removes every ACL
// it matches that an earlier filter of the same request did not, and
// answers with the ACLs it removed. Results are one per item, in order.

import { bindingProblem, filterMatches, filterProblem, sameBinding, type AclBinding, type AclBindingFilter } from '../security/acl.js';
import type { MetadataRecord } from '../metadata/records.js';
import { Errors } from '../util/errors.js';
import type { CommandContext, CommandResult } from './context.js';
import { newTopicId } from './replication-control.js';

export interface AclCreationResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

export interface AclDeletionResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly matchingAcls: ReadonlyArray<{ readonly errorCode: number; readonly errorMessage: string | null; readonly acl: AclBinding }>;
}

const OK = { errorCode: 0, errorMessage: null };
const invalid = (message: string) => ({ errorCode: Errors.INVALID_REQUEST.code, errorMessage: `INVALID_REQUEST: ${message}` });

export function createAcls(ctx: CommandContext, creations: readonly AclBinding[]): CommandResult<AclCreationResult[]> {
  const records: MetadataRecord[] = [];
  const added: AclBinding[] = [];
  const existing = [...ctx.image.acls.values()];
  const response = creations.map((b): AclCreationResult => {
    const problem = bindingProblem(b);
    if (problem) return invalid(problem);
    if (existing.some((e) => sameBinding(e, b)) || added.some((e) => sameBinding(e, b))) return OK;
    let id = newTopicId(ctx.rng);
    while (ctx.image.acls.has(id) || records.some((r) => r.type === 'accessControlEntry' && r.id === id)) id = newTopicId(ctx.rng);
    records.push({ type: 'accessControlEntry', v: 1, id, ...b });
    added.push(b);
    return OK;
  });
  return { records, response };
}

export function deleteAcls(ctx: CommandContext, filters: readonly AclBindingFilter[]): CommandResult<AclDeletionResult[]> {
  const records: MetadataRecord[] = [];
  const removed = new Set<string>();
  const response = filters.map((f): AclDeletionResult => {
    const problem = filterProblem(f);
    if (problem) return { ...invalid(problem), matchingAcls: [] };
    const matching: AclDeletionResult['matchingAcls'][number][] = [];
    for (const [id, b] of [...ctx.image.acls.entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
      if (removed.has(id) || !filterMatches(f, b)) continue;
      removed.add(id);
      records.push({ type: 'removeAccessControlEntry', v: 1, id });
      matching.push({ ...OK, acl: b });
    }
    return { ...OK, matchingAcls: matching };
  });
  return { records, response };
}

/** DescribeAcls: every ACL the filter matches, from an image (served by any broker from its own image). */
export function describeAcls(acls: Iterable<AclBinding>, f: AclBindingFilter): AclBinding[] {
  return [...acls].filter((b) => filterMatches(f, b));
}
