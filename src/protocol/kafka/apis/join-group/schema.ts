// JoinGroup (key 11), v0-9, flexible from v6. A member joins (or rejoins) a
// group's rebalance; the answer comes at the join barrier.
//
//   request  groupId, sessionTimeoutMs, v1+: rebalanceTimeoutMs (default -1), memberId,
//            v5+: groupInstanceId (nullable), protocolType, protocols [name, metadata bytes],
//            v8+: reason (nullable)
//   response v2+: throttleTimeMs, errorCode, generationId (default -1), v7+: protocolType (nullable),
//            protocolName (nullable v7+), leader, v9+: skipAssignment, memberId,
//            members [memberId, v5+: groupInstanceId (nullable), metadata bytes]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const joinGroup: KafkaApiSpec = {
  apiKey: 11,
  name: 'JoinGroup',
  request: message('JoinGroupRequest', 11, '0-9', '6+', [
    f.string('groupId'),
    f.int32('sessionTimeoutMs'),
    f.int32('rebalanceTimeoutMs', '1+', { default: -1 }),
    f.string('memberId'),
    f.string('groupInstanceId', '5+', { nullable: '5+', default: null }),
    f.string('protocolType'),
    f.array('protocols', '0+', [f.string('name'), f.bytes('metadata')]),
    f.string('reason', '8+', { nullable: '8+', default: null }),
  ]),
  response: message('JoinGroupResponse', 11, '0-9', '6+', [
    f.int32('throttleTimeMs', '2+'),
    f.int16('errorCode'),
    f.int32('generationId', '0+', { default: -1 }),
    f.string('protocolType', '7+', { nullable: '7+', default: null }),
    f.string('protocolName', '0+', { nullable: '7+' }),
    f.string('leader'),
    f.bool('skipAssignment', '9+'),
    f.string('memberId'),
    f.array('members', '0+', [
      f.string('memberId'),
      f.string('groupInstanceId', '5+', { nullable: '5+', default: null }),
      f.bytes('metadata'),
    ]),
  ]),
};
