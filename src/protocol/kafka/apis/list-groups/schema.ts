// ListGroups (key 16), v0-5, flexible from v3. The groups this broker
// coordinates; v4+ filters by state, v5+ by group type.
//
//   request  v4+: statesFilter [string], v5+: typesFilter [string]
//   response v1+: throttleTimeMs, errorCode, groups [groupId, protocolType, v4+: groupState, v5+: groupType]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const listGroups: KafkaApiSpec = {
  apiKey: 16,
  name: 'ListGroups',
  request: message('ListGroupsRequest', 16, '0-5', '3+', [
    f.array('statesFilter', '4+', 'string'),
    f.array('typesFilter', '5+', 'string'),
  ]),
  response: message('ListGroupsResponse', 16, '0-5', '3+', [
    f.int32('throttleTimeMs', '1+'),
    f.int16('errorCode'),
    f.array('groups', '0+', [
      f.string('groupId'),
      f.string('protocolType'),
      f.string('groupState', '4+'),
      f.string('groupType', '5+'),
    ]),
  ]),
};
