// SyncGroup on the Kafka listener, served by the shared group coordinator.
// v5's protocolType/protocolName, when given, must be the group's
// (INCONSISTENT_GROUP_PROTOCOL otherwise): the coordinator checks them.

import { syncGroup } from '../../protocol/kafka/apis/sync-group/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { KafkaApiHandler } from './api.js';
import { coordinatorOf } from './group-kit.js';

export const syncGroupHandler: KafkaApiHandler = {
  spec: syncGroup,
  minVersion: 0,
  maxVersion: 5,
  async handle(req, ctx) {
    const res = await coordinatorOf(ctx.deps).syncGroup({
      groupId: req.groupId as string,
      generationId: req.generationId as number,
      memberId: req.memberId as string,
      groupInstanceId: req.groupInstanceId as string | null,
      protocolType: req.protocolType as string | null,
      protocolName: req.protocolName as string | null,
      assignments: (req.assignments as Struct[]).map((a) => ({ memberId: a.memberId as string, assignment: a.assignment as Buffer })),
    });
    return { throttleTimeMs: 0, errorCode: res.errorCode, protocolType: res.protocolType, protocolName: res.protocolName, assignment: res.assignment };
  },
  errorResponse(_req, errorCode) {
    return { errorCode, assignment: Buffer.alloc(0) };
  },
};
