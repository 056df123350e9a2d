// DeleteGroups (key 42), v0-2, flexible from v2. Deletes empty groups and
// their offsets.
//
//   request  groupsNames [string]
//   response throttleTimeMs, results [groupId, errorCode]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const deleteGroups: KafkaApiSpec = {
  apiKey: 42,
  name: 'DeleteGroups',
  request: message('DeleteGroupsRequest', 42, '0-2', '2+', [
    f.array('groupsNames', '0+', 'string'),
  ]),
  response: message('DeleteGroupsResponse', 42, '0-2', '2+', [
    f.int32('throttleTimeMs'),
    f.array('results', '0+', [f.string('groupId'), f.int16('errorCode')]),
  ]),
};
