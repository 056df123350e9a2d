// AddOffsetsToTxn (key 25), v0-4, flexible from v3. A transactional producer
// adds a group's offsets partition (__consumer_offsets) to its transaction,
// before TxnOffsetCommit to the group coordinator. v2 adds PRODUCER_FENCED,
// v4 TRANSACTION_ABORTABLE (error codes only).
//
//   request  transactionalId, producerId int64, producerEpoch int16, groupId
//   response throttleTimeMs, errorCode
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const addOffsetsToTxn: KafkaApiSpec = {
  apiKey: 25,
  name: 'AddOffsetsToTxn',
  request: message('AddOffsetsToTxnRequest', 25, '0-4', '3+', [
    f.string('transactionalId'),
    f.int64('producerId'),
    f.int16('producerEpoch'),
    f.string('groupId'),
  ]),
  response: message('AddOffsetsToTxnResponse', 25, '0-4', '3+', [
    f.int32('throttleTimeMs'),
    f.int16('errorCode'),
  ]),
};
