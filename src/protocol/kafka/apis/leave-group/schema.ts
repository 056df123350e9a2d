// LeaveGroup (key 13), v0-5, flexible from v4. One member (v0-2) or a batch
// of members (v3+, static ones by group instance id) leave a group.
//
//   request  groupId, v0-2: memberId, v3+: members [memberId, groupInstanceId (nullable), v5+: reason (nullable)]
//   response v1+: throttleTimeMs, errorCode, v3+: members [memberId, groupInstanceId (nullable), errorCode]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const leaveGroup: KafkaApiSpec = {
  apiKey: 13,
  name: 'LeaveGroup',
  request: message('LeaveGroupRequest', 13, '0-5', '4+', [
    f.string('groupId'),
    f.string('memberId', '0-2'),
    f.array('members', '3+', [
      f.string('memberId', '3+'),
      f.string('groupInstanceId', '3+', { nullable: '3+', default: null }),
      f.string('reason', '5+', { nullable: '5+', default: null }),
    ]),
  ]),
  response: message('LeaveGroupResponse', 13, '0-5', '4+', [
    f.int32('throttleTimeMs', '1+'),
    f.int16('errorCode'),
    f.array('members', '3+', [
      f.string('memberId', '3+'),
      f.string('groupInstanceId', '3+', { nullable: '3+' }),
      f.int16('errorCode', '3+'),
    ]),
  ]),
};
