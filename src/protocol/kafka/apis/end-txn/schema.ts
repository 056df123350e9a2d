// EndTxn (key 26), v0-5, flexible from v3. A transactional producer commits
// or aborts its transaction. v2 adds PRODUCER_FENCED, v4
// TRANSACTION_ABORTABLE; v5 (KIP-890 part 2, "transaction version 2") has the
// coordinator bump the epoch on every transaction and answer the new id and
// epoch — the Kafka listener does not serve v5 (docs/kafka-compatibility.md).
//
//   request  transactionalId, producerId int64, producerEpoch int16, committed bool
//   response throttleTimeMs, errorCode, v5+: producerId int64 (default -1), v5+: producerEpoch int16 (default -1)
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const endTxn: KafkaApiSpec = {
  apiKey: 26,
  name: 'EndTxn',
  request: message('EndTxnRequest', 26, '0-5', '3+', [
    f.string('transactionalId'),
    f.int64('producerId'),
    f.int16('producerEpoch'),
    f.bool('committed'),
  ]),
  response: message('EndTxnResponse', 26, '0-5', '3+', [
    f.int32('throttleTimeMs'),
    f.int16('errorCode'),
    f.int64('producerId', '5+', { default: -1 }),
    f.int16('producerEpoch', '5+', { default: -1 }),
  ]),
};
