// LeaveGroup on the Kafka listener, served by the shared group coordinator.
// v0-2 name one member and answer with one error code (the member's, when
// the group itself was found); v3+ name a batch, static members by group
// instance id, and answer per member.

import { leaveGroup } from '../../protocol/kafka/apis/leave-group/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { KafkaApiHandler } from './api.js';
import { coordinatorOf } from './group-kit.js';

const BATCHED_VERSION = 3;

export const leaveGroupHandler: KafkaApiHandler = {
  spec: leaveGroup,
  minVersion: 0,
  maxVersion: 5,
  handle(req, ctx) {
    const batched = ctx.version >= BATCHED_VERSION;
    const members = batched
      ? (req.members as Struct[]).map((m) => ({ memberId: m.memberId as string, groupInstanceId: m.groupInstanceId as string | null }))
      : [{ memberId: req.memberId as string, groupInstanceId: null }];
    const res = coordinatorOf(ctx.deps).leaveGroup({ groupId: req.groupId as string, members });
    if (!batched) return { throttleTimeMs: 0, errorCode: res.errorCode || (res.members[0]?.errorCode ?? 0) };
    return {
      throttleTimeMs: 0,
      errorCode: res.errorCode,
      members: res.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: m.errorCode })),
    };
  },
  errorResponse(_req, errorCode) {
    return { errorCode, members: [] };
  },
};
