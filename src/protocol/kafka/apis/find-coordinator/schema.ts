// FindCoordinator (key 10), v0-6, flexible from v3. Which broker coordinates
// a group (key type 0) or a transactional id (key type 1); v4+ asks for many
// keys at once and answers one coordinator per key.
//
//   request  v0-3: key string, v1+: keyType int8, v4+: coordinatorKeys [string]
//   response v1+: throttleTimeMs, v0-3: errorCode, v1-3: errorMessage (nullable), nodeId, host, port,
//            v4+: coordinators [key, nodeId, host, port, errorCode, errorMessage (nullable)]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const findCoordinator: KafkaApiSpec = {
  apiKey: 10,
  name: 'FindCoordinator',
  request: message('FindCoordinatorRequest', 10, '0-6', '3+', [
    f.string('key', '0-3'),
    f.int8('keyType', '1+'),
    f.array('coordinatorKeys', '4+', 'string'),
  ]),
  response: message('FindCoordinatorResponse', 10, '0-6', '3+', [
    f.int32('throttleTimeMs', '1+'),
    f.int16('errorCode', '0-3'),
    f.string('errorMessage', '1-3', { nullable: '1-3' }),
    f.int32('nodeId', '0-3'),
    f.string('host', '0-3'),
    f.int32('port', '0-3'),
    f.array('coordinators', '4+', [
      f.string('key', '4+'),
      f.int32('nodeId', '4+'),
      f.string('host', '4+'),
      f.int32('port', '4+'),
      f.int16('errorCode', '4+'),
      f.string('errorMessage', '4+', { nullable: '4+' }),
    ]),
  ]),
};
