// ListGroups on the Kafka listener: the groups this broker coordinates (the
// shared group coordinator's), filtered by state (v4+, case-insensitive as in
// Kafka) and by group type (v5+). Every Sluice group is a "classic" group
// (the JoinGroup/SyncGroup protocol; KIP-848 "consumer" groups are not
// served), so a types filter without "classic" lists nothing.

import { listGroups } from '../../protocol/kafka/apis/list-groups/schema.js';
import type { KafkaApiHandler } from './api.js';
import { coordinatorOf } from './group-kit.js';

const CLASSIC_GROUP_TYPE = 'classic';

export const listGroupsHandler: KafkaApiHandler = {
  spec: listGroups,
  minVersion: 0,
  maxVersion: 5,
  handle(req, ctx) {
    const res = coordinatorOf(ctx.deps).listGroups();
    const states = new Set((req.statesFilter as string[]).map((s) => s.toLowerCase()));
    const types = new Set((req.typesFilter as string[]).map((s) => s.toLowerCase()));
    const typeOk = types.size === 0 || types.has(CLASSIC_GROUP_TYPE);
    const groups = res.groups
      .filter((g) => typeOk && (states.size === 0 || states.has(g.groupState.toLowerCase())))
      .map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, groupState: g.groupState, groupType: CLASSIC_GROUP_TYPE }));
    return { throttleTimeMs: 0, errorCode: res.errorCode, groups };
  },
  errorResponse(_req, errorCode) {
    return { errorCode, groups: [] };
  },
};
