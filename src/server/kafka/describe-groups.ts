// DescribeGroups on the Kafka listener, served by the shared group
// coordinator. A group this coordinator does not know is answered as Kafka
// does: no error, state Dead, no members. Authorized operations are not
// computed (Sluice has no ACLs): Kafka's "unknown" value.

import { describeGroups } from '../../protocol/kafka/apis/describe-groups/schema.js';
import type { KafkaApiHandler } from './api.js';
import { coordinatorOf } from './group-kit.js';

export const describeGroupsHandler: KafkaApiHandler = {
  spec: describeGroups,
  minVersion: 0,
  maxVersion: 5,
  handle(req, ctx) {
    const res = coordinatorOf(ctx.deps).describeGroups({ groups: req.groups as string[] });
    return {
      throttleTimeMs: 0,
      groups: res.groups.map((g) => ({
        errorCode: g.errorCode, groupId: g.groupId, groupState: g.groupState, protocolType: g.protocolType, protocolData: g.protocolName,
        members: g.members.map((m) => ({
          memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
          memberMetadata: m.metadata, memberAssignment: m.assignment,
        })),
      })),
    };
  },
  errorResponse(req, errorCode) {
    return { groups: (req.groups as string[]).map((groupId) => ({ errorCode, groupId, groupState: '', protocolType: '', protocolData: '', members: [] })) };
  },
};
