// Client-side decoding of the group APIs' answers (src/protocol/apis/groups.ts),
// checked field by field like responses.ts does for the data plane. Whole-
// request failures were thrown before these run (BrokerConnection.call);
// per-partition, per-member and per-group errors stay in the data.

import type {
  DeleteGroupsResponse, DescribeGroupsResponse, FindCoordinatorResponse, GroupState, HeartbeatResponse, JoinGroupResponse,
  LeaveGroupResponse, ListGroupsResponse, OffsetCommitResponse, OffsetFetchResponse, SyncGroupResponse,
} from '../protocol/apis/groups.js';
import { Errors, SluiceError } from '../util/errors.js';
import { ResponseView } from './response-view.js';

const STATES: readonly GroupState[] = ['Empty', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead'];

function state(v: ResponseView, api: string): GroupState {
  const s = v.str('groupState');
  if (!STATES.includes(s as GroupState)) throw new SluiceError(Errors.UNKNOWN_SERVER_ERROR, `malformed ${api} response: unknown group state ${s}`);
  return s as GroupState;
}

const errorOf = (v: ResponseView) => ({ errorCode: v.int('errorCode'), errorMessage: v.strOrNull('errorMessage') });

export function parseFindCoordinatorResponse(body: unknown): FindCoordinatorResponse {
  const v = ResponseView.of('FindCoordinator', body);
  return { ...errorOf(v), nodeId: v.int('nodeId'), url: v.strOrNull('url') };
}

export function parseJoinGroupResponse(body: unknown): JoinGroupResponse {
  const v = ResponseView.of('JoinGroup', body);
  return {
    ...errorOf(v), generationId: v.int('generationId'), protocolType: v.strOrNull('protocolType'), protocolName: v.strOrNull('protocolName'),
    leader: v.str('leader'), memberId: v.str('memberId'), skipAssignment: v.bool('skipAssignment'),
    members: v.list('members').map((m) => ({ memberId: m.str('memberId'), groupInstanceId: m.strOrNull('groupInstanceId'), metadata: m.bin('metadata') })),
  };
}

export function parseSyncGroupResponse(body: unknown): SyncGroupResponse {
  const v = ResponseView.of('SyncGroup', body);
  return { ...errorOf(v), protocolType: v.strOrNull('protocolType'), protocolName: v.strOrNull('protocolName'), assignment: v.bin('assignment') };
}

export function parseHeartbeatResponse(body: unknown): HeartbeatResponse {
  return errorOf(ResponseView.of('Heartbeat', body));
}

export function parseLeaveGroupResponse(body: unknown): LeaveGroupResponse {
  const v = ResponseView.of('LeaveGroup', body);
  return { ...errorOf(v), members: v.list('members').map((m) => ({ memberId: m.str('memberId'), groupInstanceId: m.strOrNull('groupInstanceId'), ...errorOf(m) })) };
}

export function parseOffsetCommitResponse(body: unknown): OffsetCommitResponse {
  const v = ResponseView.of('OffsetCommit', body);
  return { topics: v.list('topics').map((t) => ({ name: t.str('name'), partitions: t.list('partitions').map((p) => ({ partition: p.int('partition'), ...errorOf(p) })) })) };
}

export function parseOffsetFetchResponse(body: unknown): OffsetFetchResponse {
  const v = ResponseView.of('OffsetFetch', body);
  return {
    ...errorOf(v),
    topics: v.list('topics').map((t) => ({
      name: t.str('name'),
      partitions: t.list('partitions').map((p) => ({
        partition: p.int('partition'), committedOffset: p.int('committedOffset'), committedLeaderEpoch: p.int('committedLeaderEpoch'),
        metadata: p.strOrNull('metadata'), ...errorOf(p),
      })),
    })),
  };
}

export function parseListGroupsResponse(body: unknown): ListGroupsResponse {
  const v = ResponseView.of('ListGroups', body);
  return { ...errorOf(v), groups: v.list('groups').map((g) => ({ groupId: g.str('groupId'), protocolType: g.str('protocolType'), groupState: state(g, 'ListGroups') })) };
}

export function parseDescribeGroupsResponse(body: unknown): DescribeGroupsResponse {
  const v = ResponseView.of('DescribeGroups', body);
  return {
    groups: v.list('groups').map((g) => ({
      ...errorOf(g), groupId: g.str('groupId'), groupState: state(g, 'DescribeGroups'), protocolType: g.str('protocolType'), protocolName: g.str('protocolName'),
      members: g.list('members').map((m) => ({
        memberId: m.str('memberId'), groupInstanceId: m.strOrNull('groupInstanceId'), clientId: m.str('clientId'), clientHost: m.str('clientHost'),
        metadata: m.bin('metadata'), assignment: m.bin('assignment'),
      })),
    })),
  };
}

export function parseDeleteGroupsResponse(body: unknown): DeleteGroupsResponse {
  const v = ResponseView.of('DeleteGroups', body);
  return { results: v.list('results').map((r) => ({ groupId: r.str('groupId'), ...errorOf(r) })) };
}
