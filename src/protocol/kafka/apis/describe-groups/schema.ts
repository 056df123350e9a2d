// DescribeGroups (key 15), v0-5, flexible from v5. State, protocol and
// members of each named group.
//
//   request  groups [string], v3+: includeAuthorizedOperations bool
//   response v1+: throttleTimeMs, groups [errorCode, groupId, groupState, protocolType, protocolData,
//            members [memberId, v4+: groupInstanceId (nullable), clientId, clientHost, memberMetadata bytes,
//                     memberAssignment bytes], v3+: authorizedOperations int32 (default INT32_MIN)]
import { f, message, type KafkaApiSpec } from '../../schema.js';

const UNKNOWN_OPERATIONS = -2147483648;

export const describeGroups: KafkaApiSpec = {
  apiKey: 15,
  name: 'DescribeGroups',
  request: message('DescribeGroupsRequest', 15, '0-5', '5+', [
    f.array('groups', '0+', 'string'),
    f.bool('includeAuthorizedOperations', '3+'),
  ]),
  response: message('DescribeGroupsResponse', 15, '0-5', '5+', [
    f.int32('throttleTimeMs', '1+'),
    f.array('groups', '0+', [
      f.int16('errorCode'),
      f.string('groupId'),
      f.string('groupState'),
      f.string('protocolType'),
      f.string('protocolData'),
      f.array('members', '0+', [
        f.string('memberId'),
        f.string('groupInstanceId', '4+', { nullable: '4+', default: null }),
        f.string('clientId'),
        f.string('clientHost'),
        f.bytes('memberMetadata'),
        f.bytes('memberAssignment'),
      ]),
      f.int32('authorizedOperations', '3+', { default: UNKNOWN_OPERATIONS }),
    ]),
  ]),
};
