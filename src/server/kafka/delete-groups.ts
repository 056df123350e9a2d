// DeleteGroups on the Kafka listener, served by the shared group coordinator:
// an Empty group goes with its offsets (NON_EMPTY_GROUP otherwise,
// GROUP_ID_NOT_FOUND for a group that does not exist).

import { deleteGroups } from '../../protocol/kafka/apis/delete-groups/schema.js';
import type { KafkaApiHandler } from './api.js';
import { coordinatorOf } from './group-kit.js';

export const deleteGroupsHandler: KafkaApiHandler = {
  spec: deleteGroups,
  minVersion: 0,
  maxVersion: 2,
  async handle(req, ctx) {
    const res = await coordinatorOf(ctx.deps).deleteGroups({ groups: req.groupsNames as string[] });
    return { throttleTimeMs: 0, results: res.results.map((r) => ({ groupId: r.groupId, errorCode: r.errorCode })) };
  },
  errorResponse(req, errorCode) {
    return { results: [...new Set(req.groupsNames as string[])].map((groupId) => ({ groupId, errorCode })) };
  },
};
