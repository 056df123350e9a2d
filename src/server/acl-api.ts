// The ACL APIs of the broker listener (WebSocket protocol), and what the
// Kafka listener's handlers of the same APIs share with them. DescribeAcls is
// answered from this broker's image (every node replays the same ACL
// records); CreateAcls and DeleteAcls are forwarded to the active
// controller, which writes the records. Without an authorizer configured
// they answer SECURITY_DISABLED, as Kafka does. Who may call them (Describe
// or Alter on the cluster) is the access rules' business, checked before.

import { Errors, SluiceError } from '../util/errors.js';
import { ApiKey } from '../protocol/api-keys.js';
import type { Body } from '../protocol/body.js';
import { parseCreateAclsRequest, parseDeleteAclsRequest, parseDescribeAclsRequest } from '../protocol/apis/acls.js';
import { describeAcls, type AclCreationResult, type AclDeletionResult } from '../controller/acl-control.js';
import type { AclBinding, AclBindingFilter } from '../security/acl.js';
import type { BrokerApiDeps } from './broker-api.js';

export const ACL_APIS: ReadonlySet<number> = new Set([ApiKey.DescribeAcls, ApiKey.CreateAcls, ApiKey.DeleteAcls]);

export function requireAuthorizer(deps: BrokerApiDeps): void {
  if (!deps.authorizer?.()) throw new SluiceError(Errors.SECURITY_DISABLED, 'no authorizer is configured (set authorizer.class.name, docs/security.md)');
}

export function aclsMatching(deps: BrokerApiDeps, filter: AclBindingFilter): AclBinding[] {
  requireAuthorizer(deps);
  return describeAcls(deps.image().acls.values(), filter);
}

export async function createAclsThrough(deps: BrokerApiDeps, creations: readonly AclBinding[]): Promise<AclCreationResult[]> {
  requireAuthorizer(deps);
  if (creations.length === 0) return [];
  return (await deps.controller<{ results: AclCreationResult[] }>('createAcls', { creations })).results;
}

export async function deleteAclsThrough(deps: BrokerApiDeps, filters: readonly AclBindingFilter[]): Promise<AclDeletionResult[]> {
  requireAuthorizer(deps);
  if (filters.length === 0) return [];
  return (await deps.controller<{ results: AclDeletionResult[] }>('deleteAcls', { filters })).results;
}

export function serveAclApi(deps: BrokerApiDeps, apiKey: number, body: Body): unknown {
  switch (apiKey) {
    case ApiKey.DescribeAcls:
      return { errorCode: 0, errorMessage: null, acls: aclsMatching(deps, parseDescribeAclsRequest(body)) };
    case ApiKey.CreateAcls:
      return createAclsThrough(deps, parseCreateAclsRequest(body)).then((results) => ({ results }));
    case ApiKey.DeleteAcls:
      return deleteAclsThrough(deps, parseDeleteAclsRequest(body)).then((results) => ({ results }));
    default:
      throw new SluiceError(Errors.UNSUPPORTED_VERSION, `${apiKey} is not an ACL API`);
  }
}
