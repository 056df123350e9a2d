// JoinGroup on the Kafka listener, served by the shared group coordinator.
//
// Versions below 4 predate KIP-394: a first join with no member id must not
// get MEMBER_ID_REQUIRED (those clients do not know it), so the handler
// rejoins at once with the id the coordinator handed out, and the client
// sees one JoinGroup that joined. v0 has no rebalance timeout: Kafka uses
// the session timeout, and so does this. ProtocolName is nullable only from
// v7: older versions get '' for "none yet".

import { joinGroup } from '../../protocol/kafka/apis/join-group/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import { Errors } from '../../util/errors.js';
import type { JoinGroupRequest, JoinGroupResponse } from '../../protocol/apis/groups.js';
import type { ClientInfo, GroupOps as GroupCoordinator } from '../../groups/coordinator.js';
import type { KafkaApiHandler } from './api.js';
import { coordinatorOf } from './group-kit.js';

const KIP_394_VERSION = 4;

function toRequest(req: Struct, version: number): JoinGroupRequest {
  const sessionTimeoutMs = req.sessionTimeoutMs as number;
  return {
    groupId: req.groupId as string,
    sessionTimeoutMs,
    rebalanceTimeoutMs: version === 0 ? sessionTimeoutMs : req.rebalanceTimeoutMs as number,
    memberId: req.memberId as string,
    groupInstanceId: req.groupInstanceId as string | null,
    protocolType: req.protocolType as string,
    protocols: (req.protocols as Struct[]).map((p) => ({ name: p.name as string, metadata: p.metadata as Buffer })),
  };
}

async function join(groups: GroupCoordinator, r: JoinGroupRequest, client: ClientInfo, version: number): Promise<JoinGroupResponse> {
  const res = await groups.joinGroup(r, client);
  if (version >= KIP_394_VERSION || res.errorCode !== Errors.MEMBER_ID_REQUIRED.code || r.memberId !== '') return res;
  return groups.joinGroup({ ...r, memberId: res.memberId }, client);
}

function toKafka(res: JoinGroupResponse, version: number): Struct {
  return {
    throttleTimeMs: 0,
    errorCode: res.errorCode,
    generationId: res.generationId,
    protocolType: res.protocolType,
    protocolName: res.protocolName ?? (version >= 7 ? null : ''),
    leader: res.leader,
    skipAssignment: res.skipAssignment,
    memberId: res.memberId,
    members: res.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadata })),
  };
}

export const joinGroupHandler: KafkaApiHandler = {
  spec: joinGroup,
  minVersion: 0,
  maxVersion: 9,
  async handle(req, ctx) {
    const groups = coordinatorOf(ctx.deps);
    const client: ClientInfo = { clientId: ctx.header.clientId ?? '', clientHost: ctx.conn.remoteAddress };
    return toKafka(await join(groups, toRequest(req, ctx.version), client, ctx.version), ctx.version);
  },
  errorResponse(req, errorCode) {
    return { errorCode, generationId: -1, protocolName: '', leader: '', memberId: req.memberId, members: [] };
  },
};
