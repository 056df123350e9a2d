// InitProducerId (key 22), v0-5, flexible from v2. A producer id and epoch
// for an idempotent (or transactional) producer; v3+ may name the current id
// and epoch to bump the epoch (KIP-360).
//
//   request  transactionalId (nullable), transactionTimeoutMs, v3+: producerId int64 (default -1),
//            v3+: producerEpoch int16 (default -1)
//   response throttleTimeMs, errorCode, producerId int64 (default -1), producerEpoch int16
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const initProducerId: KafkaApiSpec = {
  apiKey: 22,
  name: 'InitProducerId',
  request: message('InitProducerIdRequest', 22, '0-5', '2+', [
    f.string('transactionalId', '0+', { nullable: '0+' }),
    f.int32('transactionTimeoutMs'),
    f.int64('producerId', '3+', { default: -1 }),
    f.int16('producerEpoch', '3+', { default: -1 }),
  ]),
  response: message('InitProducerIdResponse', 22, '0-5', '2+', [
    f.int32('throttleTimeMs'),
    f.int16('errorCode'),
    f.int64('producerId', '0+', { default: -1 }),
    f.int16('producerEpoch'),
  ]),
};
