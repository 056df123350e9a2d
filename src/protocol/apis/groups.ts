// Consumer-group APIs (Kafka's shapes, msgpack bodies). The coordinator of a
// group is the broker leading partition hash(groupId) mod N of the internal
// topic __consumer_offsets (FindCoordinator says which). Member metadata and
// assignments are opaque `bin` to the broker: only clients encode them
// (src/groups/consumer-protocol.ts).
//
// FindCoordinator (10)  { key: groupId | transactionalId, keyType?: 0 group (default) | 1 transaction }
//                       → { errorCode, errorMessage, nodeId, url }
// JoinGroup (11)        { groupId, sessionTimeoutMs, rebalanceTimeoutMs, memberId ('' on first join), groupInstanceId|null,
//                         protocolType, protocols: [{ name, metadata: bin }] }
//                       → { errorCode, errorMessage, generationId, protocolName, leader, memberId,
//                           members: [{ memberId, groupInstanceId, metadata: bin }] (the leader only) }
//                       A first join without a member id gets MEMBER_ID_REQUIRED with the id to rejoin with (KIP-394).
// SyncGroup (14)        { groupId, generationId, memberId, groupInstanceId, protocolType?, protocolName? (checked when given),
//                         assignments: [{ memberId, assignment: bin }] (leader) }
//                       → { errorCode, errorMessage, protocolName, assignment: bin }
// Heartbeat (12)        { groupId, generationId, memberId, groupInstanceId } → { errorCode, errorMessage }
// LeaveGroup (13)       { groupId, members: [{ memberId, groupInstanceId }] } → { errorCode, errorMessage, members: [{ memberId, errorCode }] }
// OffsetCommit (8)      { groupId, generationId (-1: a consumer without group membership), memberId, groupInstanceId,
//                         topics: [{ name, partitions: [{ partition, committedOffset, committedLeaderEpoch, metadata }] }] }
//                       → { topics: [{ name, partitions: [{ partition, errorCode, errorMessage }] }] }
// OffsetFetch (9)       { groupId, topics: [{ name, partitions: [int] }] | null (all), requireStable?: bool }
//                       → { errorCode, errorMessage, topics: [{ name, partitions: [{ partition, committedOffset (-1: none),
//                           committedLeaderEpoch, metadata, errorCode }] }] }
// ListGroups (16)       {} → { errorCode, groups: [{ groupId, protocolType, groupState }] }
// DescribeGroups (15)   { groups: [ids] } → { groups: [{ errorCode, groupId, groupState, protocolType, protocolName,
//                           members: [{ memberId, groupInstanceId, clientId, clientHost, metadata: bin, assignment: bin }] }] }
// DeleteGroups (42)     { groups: [ids] } → { results: [{ groupId, errorCode, errorMessage }] }
// OffsetDelete (47)     { groupId, topics: [{ name, partitions: [int] }] }
//                       → { errorCode, errorMessage, topics: [{ name, partitions: [{ partition, errorCode, errorMessage }] }] }

import { badRequest, bool, bytes, int, ints, list, optStr, str, strs, type Body } from '../body.js';

export const CONSUMER_OFFSETS_TOPIC = '__consumer_offsets';
/** A group id is 1-249 printable characters (Kafka allows any non-empty string; we bound it). */
export const GROUP_ID_LENGTH_MAX = 249;

export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

export interface FindCoordinatorRequest { readonly key: string; /** 0 a group (COORDINATOR_KEY_GROUP), 1 a transactional id (transactions.ts). */ readonly keyType?: 0 | 1 }
export interface JoinGroupRequest {
  readonly groupId: string;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly protocolType: string;
  readonly protocols: ReadonlyArray<{ readonly name: string; readonly metadata: Buffer }>;
}
export interface SyncGroupRequest {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  /** When given (Kafka's SyncGroup v5+), must be the group's protocol type and chosen protocol. */
  readonly protocolType?: string | null;
  readonly protocolName?: string | null;
  readonly assignments: ReadonlyArray<{ readonly memberId: string; readonly assignment: Buffer }>;
}
export interface HeartbeatRequest { readonly groupId: string; readonly generationId: number; readonly memberId: string; readonly groupInstanceId: string | null }
export interface LeaveGroupRequest { readonly groupId: string; readonly members: ReadonlyArray<{ readonly memberId: string; readonly groupInstanceId: string | null }> }
export interface OffsetCommitPartition { readonly partition: number; readonly committedOffset: number; readonly committedLeaderEpoch: number; readonly metadata: string | null }
export interface OffsetCommitRequest {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly OffsetCommitPartition[] }>;
}
export interface OffsetFetchRequest {
  readonly groupId: string;
  readonly topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly number[] }> | null;
  /**
   * KIP-447: a partition with a transactional commit not yet ended answers
   * UNSTABLE_OFFSET_COMMIT (retriable) instead of the last committed offset.
   * Absent: false, as Kafka's OffsetFetch before v7.
   */
  readonly requireStable?: boolean;
}
export interface GroupsRequest { readonly groups: readonly string[] }
export interface OffsetDeleteRequest { readonly groupId: string; readonly topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly number[] }> }

function groupId(b: Body): string {
  const id = str(b, 'groupId');
  if (id.length === 0 || id.length > GROUP_ID_LENGTH_MAX) throw badRequest(`groupId must be 1-${GROUP_ID_LENGTH_MAX} characters`);
  return id;
}

export function parseFindCoordinatorRequest(b: Body): FindCoordinatorRequest {
  const keyType = int(b, 'keyType', 0);
  if (keyType !== 0 && keyType !== 1) throw badRequest('keyType must be 0 (group) or 1 (transaction)');
  return { key: str(b, 'key'), keyType };
}

export function parseJoinGroupRequest(b: Body): JoinGroupRequest {
  return {
    groupId: groupId(b),
    sessionTimeoutMs: int(b, 'sessionTimeoutMs'),
    rebalanceTimeoutMs: int(b, 'rebalanceTimeoutMs', int(b, 'sessionTimeoutMs')),
    memberId: str(b, 'memberId'),
    groupInstanceId: optStr(b, 'groupInstanceId'),
    protocolType: str(b, 'protocolType'),
    protocols: list(b, 'protocols').map((p) => ({ name: str(p, 'name'), metadata: bytes(p, 'metadata') })),
  };
}

export function parseSyncGroupRequest(b: Body): SyncGroupRequest {
  return {
    groupId: groupId(b), generationId: int(b, 'generationId'), memberId: str(b, 'memberId'), groupInstanceId: optStr(b, 'groupInstanceId'),
    protocolType: optStr(b, 'protocolType'), protocolName: optStr(b, 'protocolName'),
    assignments: b.assignments === undefined ? [] : list(b, 'assignments').map((a) => ({ memberId: str(a, 'memberId'), assignment: bytes(a, 'assignment') })),
  };
}

export function parseHeartbeatRequest(b: Body): HeartbeatRequest {
  return { groupId: groupId(b), generationId: int(b, 'generationId'), memberId: str(b, 'memberId'), groupInstanceId: optStr(b, 'groupInstanceId') };
}

export function parseLeaveGroupRequest(b: Body): LeaveGroupRequest {
  return { groupId: groupId(b), members: list(b, 'members').map((m) => ({ memberId: str(m, 'memberId'), groupInstanceId: optStr(m, 'groupInstanceId') })) };
}

export function parseOffsetCommitRequest(b: Body): OffsetCommitRequest {
  return {
    groupId: groupId(b), generationId: int(b, 'generationId', -1), memberId: b.memberId === undefined ? '' : str(b, 'memberId'),
    groupInstanceId: optStr(b, 'groupInstanceId'),
    topics: list(b, 'topics').map((t) => ({
      name: str(t, 'name'),
      partitions: list(t, 'partitions').map((p) => ({
        partition: int(p, 'partition'), committedOffset: int(p, 'committedOffset'),
        committedLeaderEpoch: int(p, 'committedLeaderEpoch', -1), metadata: optStr(p, 'metadata'),
      })),
    })),
  };
}

export function parseOffsetFetchRequest(b: Body): OffsetFetchRequest {
  const topics = b.topics === undefined || b.topics === null ? null
    : list(b, 'topics').map((t) => ({ name: str(t, 'name'), partitions: ints(t.partitions, 'partitions') }));
  return { groupId: groupId(b), topics, requireStable: b.requireStable === null ? false : bool(b, 'requireStable', false) };
}

export function parseOffsetDeleteRequest(b: Body): OffsetDeleteRequest {
  return { groupId: groupId(b), topics: list(b, 'topics').map((t) => ({ name: str(t, 'name'), partitions: ints(t.partitions, 'partitions') })) };
}

export function parseGroupsRequest(b: Body): GroupsRequest {
  return { groups: strs(b.groups, 'groups') };
}

/**
 * InitProducerId (22): { transactionalId: string|null, transactionTimeoutMs?, producerId: -1, producerEpoch: -1 }
 * → { errorCode, errorMessage, producerId, producerEpoch }. A null transactionalId is an idempotent producer
 * (any broker answers); a transactional id goes to its transaction coordinator (transactions.ts).
 */
export interface InitProducerIdRequest {
  readonly transactionalId?: string | null;
  /** The producer's transaction.timeout.ms (transactional producers; default 60 s). */
  readonly transactionTimeoutMs?: number;
  readonly producerId: number;
  readonly producerEpoch: number;
}

export function parseInitProducerIdRequest(b: Body): InitProducerIdRequest {
  const transactionalId = optStr(b, 'transactionalId');
  if (transactionalId !== null && (transactionalId.length === 0 || transactionalId.length > GROUP_ID_LENGTH_MAX)) {
    throw badRequest(`transactionalId must have 1-${GROUP_ID_LENGTH_MAX} characters`);
  }
  return { transactionalId, transactionTimeoutMs: int(b, 'transactionTimeoutMs', 60_000), producerId: int(b, 'producerId', -1), producerEpoch: int(b, 'producerEpoch', -1) };
}

// ---- responses (the shapes src/groups/coordinator.ts answers with) ---------
// Binary fields are typed Uint8Array so the client core needs no Node Buffer.
// Fields added to the contract above: JoinGroup's `protocolType` and
// `skipAssignment` (KIP-814: a static leader that rejoined without a
// rebalance must not compute a new assignment), SyncGroup's `protocolType`,
// LeaveGroup's per-member `groupInstanceId`/`errorMessage`, OffsetFetch's
// per-partition `errorMessage`, ListGroups' `errorMessage`, DescribeGroups'
// per-group `errorMessage`.

export interface FindCoordinatorResponse { errorCode: number; errorMessage: string | null; nodeId: number; url: string | null }
export interface JoinGroupMember { memberId: string; groupInstanceId: string | null; metadata: Uint8Array }
export interface JoinGroupResponse {
  errorCode: number;
  errorMessage: string | null;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  memberId: string;
  skipAssignment: boolean;
  /** Every member with its metadata for the chosen protocol — for the leader only; empty for the others. */
  members: JoinGroupMember[];
}
export interface SyncGroupResponse { errorCode: number; errorMessage: string | null; protocolType: string | null; protocolName: string | null; assignment: Uint8Array }
export interface HeartbeatResponse { errorCode: number; errorMessage: string | null }
export interface LeaveGroupMemberResponse { memberId: string; groupInstanceId: string | null; errorCode: number; errorMessage: string | null }
export interface LeaveGroupResponse { errorCode: number; errorMessage: string | null; members: LeaveGroupMemberResponse[] }
export interface OffsetCommitPartitionResponse { partition: number; errorCode: number; errorMessage: string | null }
export interface OffsetCommitResponse { topics: Array<{ name: string; partitions: OffsetCommitPartitionResponse[] }> }
export interface OffsetFetchPartitionResponse {
  partition: number;
  /** -1: nothing committed. */
  committedOffset: number;
  committedLeaderEpoch: number;
  metadata: string | null;
  errorCode: number;
  errorMessage: string | null;
}
export interface OffsetFetchResponse { errorCode: number; errorMessage: string | null; topics: Array<{ name: string; partitions: OffsetFetchPartitionResponse[] }> }
export interface ListedGroup { groupId: string; protocolType: string; groupState: GroupState }
export interface ListGroupsResponse { errorCode: number; errorMessage: string | null; groups: ListedGroup[] }
export interface DescribedGroupMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  /** The member's metadata for the chosen protocol, and its assignment: only while the group is Stable (empty otherwise). */
  metadata: Uint8Array;
  assignment: Uint8Array;
}
export interface DescribedGroup {
  errorCode: number;
  errorMessage: string | null;
  groupId: string;
  groupState: GroupState;
  protocolType: string;
  protocolName: string;
  members: DescribedGroupMember[];
}
export interface DescribeGroupsResponse { groups: DescribedGroup[] }
export interface OffsetDeleteResponse {
  errorCode: number;
  errorMessage: string | null;
  topics: Array<{ name: string; partitions: Array<{ partition: number; errorCode: number; errorMessage: string | null }> }>;
}
export interface DeleteGroupsResponse { results: Array<{ groupId: string; errorCode: number; errorMessage: string | null }> }
