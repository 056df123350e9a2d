// The group APIs of the broker listener: parse each body with its API's
// validator (src/protocol/apis/groups.ts) and hand it to the coordinator.
// broker-api.ts routes every key in GROUP_APIS here. A broker built without a
// coordinator (tests of other layers) answers COORDINATOR_NOT_AVAILABLE.
// FindCoordinator of a transactional id (keyType 1) is the transaction
// coordinator's (src/server/txn-api.ts), reached through `transactions`.

import { Errors, SluiceError } from '../util/errors.js';
import { ApiKey } from '../protocol/api-keys.js';
import type { Body } from '../protocol/body.js';
import type { RequestEnvelope } from '../protocol/envelope.js';
import {
  parseFindCoordinatorRequest, parseGroupsRequest, parseHeartbeatRequest, parseJoinGroupRequest, parseLeaveGroupRequest,
  parseOffsetCommitRequest, parseOffsetDeleteRequest, parseOffsetFetchRequest, parseSyncGroupRequest,
} from '../protocol/apis/groups.js';
import type { GroupOps as GroupCoordinator } from './coordinator.js';
import { COORDINATOR_KEY_TRANSACTION, type TransactionOps } from '../protocol/apis/transactions.js';

export const GROUP_APIS: ReadonlySet<number> = new Set([
  ApiKey.FindCoordinator, ApiKey.JoinGroup, ApiKey.SyncGroup, ApiKey.Heartbeat, ApiKey.LeaveGroup,
  ApiKey.OffsetCommit, ApiKey.OffsetFetch, ApiKey.ListGroups, ApiKey.DescribeGroups, ApiKey.DeleteGroups, ApiKey.OffsetDelete,
]);

export function serveGroupApi(
  groups: GroupCoordinator | undefined, req: RequestEnvelope, remoteAddress: string, txn: { readonly transactions?: TransactionOps } = {},
): unknown {
  const body = req.body as Body;
  if (req.apiKey === ApiKey.FindCoordinator) {
    const find = parseFindCoordinatorRequest(body);
    if (find.keyType === COORDINATOR_KEY_TRANSACTION) {
      if (!txn.transactions) throw new SluiceError(Errors.COORDINATOR_NOT_AVAILABLE, 'this broker runs no transaction coordinator');
      return txn.transactions.findCoordinator(find);
    }
  }
  if (!groups) throw new SluiceError(Errors.COORDINATOR_NOT_AVAILABLE, 'this broker runs no group coordinator');
  switch (req.apiKey) {
    case ApiKey.FindCoordinator:
      return groups.findCoordinator(parseFindCoordinatorRequest(body));
    case ApiKey.JoinGroup:
      return groups.joinGroup(parseJoinGroupRequest(body), { clientId: req.clientId ?? '', clientHost: remoteAddress });
    case ApiKey.SyncGroup:
      return groups.syncGroup(parseSyncGroupRequest(body));
    case ApiKey.Heartbeat:
      return groups.heartbeat(parseHeartbeatRequest(body));
    case ApiKey.LeaveGroup:
      return groups.leaveGroup(parseLeaveGroupRequest(body));
    case ApiKey.OffsetCommit:
      return groups.offsetCommit(parseOffsetCommitRequest(body));
    case ApiKey.OffsetFetch:
      return groups.offsetFetch(parseOffsetFetchRequest(body));
    case ApiKey.ListGroups:
      return groups.listGroups();
    case ApiKey.DescribeGroups:
      return groups.describeGroups(parseGroupsRequest(body));
    case ApiKey.DeleteGroups:
      return groups.deleteGroups(parseGroupsRequest(body));
    case ApiKey.OffsetDelete:
      return groups.offsetDelete(parseOffsetDeleteRequest(body));
    default:
      throw new SluiceError(Errors.UNSUPPORTED_VERSION, `${req.apiKey} is not a group API`);
  }
}
