// EndTxn on the Kafka listener: the transaction coordinator commits or
// aborts the producer's transaction (markers to every partition, then the
// answer once the decision is durable — the coordinator's business).
//
// - v0-4 are served: Kafka clients on this listener speak "transaction
//   version 1": the transaction ends at the producer's epoch (bumpEpoch
//   false) and its next transaction continues with the same epoch. v5
//   (KIP-890 part 2, an epoch bump per transaction, answered in the
//   response) is not advertised, nor is the transaction.version feature in
//   ApiVersions, so clients never ask for it (docs/kafka-compatibility.md).
// - PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2, TRANSACTION_ABORTABLE
//   INVALID_TXN_STATE before v4 (txn-kit.ts).

import { endTxn } from '../../protocol/kafka/apis/end-txn/schema.js';
import { parseEndTxnRequest } from '../../protocol/apis/transactions.js';
import { transactionsOf } from '../txn-api.js';
import type { KafkaApiHandler } from './api.js';
import { clientCode } from './txn-kit.js';

const CODES = { producerFenced: 2, abortable: 4 };

export const endTxnHandler: KafkaApiHandler = {
  spec: endTxn,
  minVersion: 0,
  maxVersion: 4,
  async handle(req, ctx) {
    const res = await transactionsOf(ctx.deps).endTxn(parseEndTxnRequest({ ...req, bumpEpoch: false }));
    return { throttleTimeMs: 0, errorCode: clientCode(res.errorCode, ctx.version, CODES) };
  },
  errorResponse(_req, errorCode, _message, version) {
    return { throttleTimeMs: 0, errorCode: clientCode(errorCode, version, CODES) };
  },
};
