// SyncGroup (key 14), v0-5, flexible from v4. The leader hands in every
// member's assignment; each member gets its own.
//
//   request  groupId, generationId, memberId, v3+: groupInstanceId (nullable),
//            v5+: protocolType (nullable), protocolName (nullable), assignments [memberId, assignment bytes]
//   response v1+: throttleTimeMs, errorCode, v5+: protocolType (nullable), protocolName (nullable), assignment bytes
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const syncGroup: KafkaApiSpec = {
  apiKey: 14,
  name: 'SyncGroup',
  request: message('SyncGroupRequest', 14, '0-5', '4+', [
    f.string('groupId'),
    f.int32('generationId'),
    f.string('memberId'),
    f.string('groupInstanceId', '3+', { nullable: '3+', default: null }),
    f.string('protocolType', '5+', { nullable: '5+', default: null }),
    f.string('protocolName', '5+', { nullable: '5+', default: null }),
    f.array('assignments', '0+', [f.string('memberId'), f.bytes('assignment')]),
  ]),
  response: message('SyncGroupResponse', 14, '0-5', '4+', [
    f.int32('throttleTimeMs', '1+'),
    f.int16('errorCode'),
    f.string('protocolType', '5+', { nullable: '5+', default: null }),
    f.string('protocolName', '5+', { nullable: '5+', default: null }),
    f.bytes('assignment'),
  ]),
};
