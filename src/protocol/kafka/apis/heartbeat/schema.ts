// Heartbeat (key 12), v0-4, flexible from v4. Keeps a member's session alive;
// REBALANCE_IN_PROGRESS tells it to rejoin.
//
//   request  groupId, generationId, memberId, v3+: groupInstanceId (nullable)
//   response v1+: throttleTimeMs, errorCode
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const heartbeat: KafkaApiSpec = {
  apiKey: 12,
  name: 'Heartbeat',
  request: message('HeartbeatRequest', 12, '0-4', '4+', [
    f.string('groupId'),
    f.int32('generationId'),
    f.string('memberId'),
    f.string('groupInstanceId', '3+', { nullable: '3+', default: null }),
  ]),
  response: message('HeartbeatResponse', 12, '0-4', '4+', [
    f.int32('throttleTimeMs', '1+'),
    f.int16('errorCode'),
  ]),
};
