// Heartbeat on the Kafka listener, served by the shared group coordinator.

import { heartbeat } from '../../protocol/kafka/apis/heartbeat/schema.js';
import type { KafkaApiHandler } from './api.js';
import { coordinatorOf } from './group-kit.js';

export const heartbeatHandler: KafkaApiHandler = {
  spec: heartbeat,
  minVersion: 0,
  maxVersion: 4,
  handle(req, ctx) {
    const res = coordinatorOf(ctx.deps).heartbeat({
      groupId: req.groupId as string, generationId: req.generationId as number,
      memberId: req.memberId as string, groupInstanceId: req.groupInstanceId as string | null,
    });
    return { throttleTimeMs: 0, errorCode: res.errorCode };
  },
  errorResponse(_req, errorCode) {
    return { errorCode };
  },
};
