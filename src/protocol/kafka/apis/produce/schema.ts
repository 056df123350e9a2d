// Produce (key 0), v3-11 on this listener (v0-2 carry message sets and are
// not served, as in Kafka 4.0), flexible from v9.
//
//   request  transactionalId (nullable), acks int16, timeoutMs int32,
//            topicData [name, partitionData [index, records (nullable)]]
//   response responses [name, partitionResponses [index, errorCode, baseOffset, v2+: logAppendTimeMs (-1),
//                        v5+: logStartOffset (-1), v8+: recordErrors [batchIndex, batchIndexErrorMessage (nullable)],
//                        v8+: errorMessage (nullable), v10+ tag 0: currentLeader {leaderId, leaderEpoch}]],
//            v1+: throttleTimeMs, v10+ tag 0: nodeEndpoints [nodeId, host, port, rack (nullable)]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const produce: KafkaApiSpec = {
  apiKey: 0,
  name: 'Produce',
  request: message('ProduceRequest', 0, '0-11', '9+', [
    f.string('transactionalId', '3+', { nullable: '3+', default: null }),
    f.int16('acks'),
    f.int32('timeoutMs'),
    f.array('topicData', '0+', [
      f.string('name'),
      f.array('partitionData', '0+', [f.int32('index'), f.records('records', '0+', { nullable: '0+' })]),
    ]),
  ]),
  response: message('ProduceResponse', 0, '0-11', '9+', [
    f.array('responses', '0+', [
      f.string('name'),
      f.array('partitionResponses', '0+', [
        f.int32('index'),
        f.int16('errorCode'),
        f.int64('baseOffset'),
        f.int64('logAppendTimeMs', '2+', { default: -1 }),
        f.int64('logStartOffset', '5+', { default: -1 }),
        f.array('recordErrors', '8+', [
          f.int32('batchIndex', '8+'), f.string('batchIndexErrorMessage', '8+', { nullable: '8+', default: null }),
        ]),
        f.string('errorMessage', '8+', { nullable: '8+', default: null }),
        f.struct('currentLeader', '10+', [
          f.int32('leaderId', '10+', { default: -1 }), f.int32('leaderEpoch', '10+', { default: -1 }),
        ], { tag: 0 }),
      ]),
    ]),
    f.int32('throttleTimeMs', '1+'),
    f.array('nodeEndpoints', '10+', [
      f.int32('nodeId', '10+'), f.string('host', '10+'), f.int32('port', '10+'), f.string('rack', '10+', { nullable: '10+', default: null }),
    ], { tag: 0 }),
  ]),
};
