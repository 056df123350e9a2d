// AddOffsetsToTxn on the Kafka listener: the transaction coordinator adds the
// group's __consumer_offsets partition to the producer's transaction (before
// the producer's TxnOffsetCommit to the group coordinator). v0-4 are served;
// PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2 (txn-kit.ts).

import { addOffsetsToTxn } from '../../protocol/kafka/apis/add-offsets-to-txn/schema.js';
import { parseAddOffsetsToTxnRequest } from '../../protocol/apis/transactions.js';
import { transactionsOf } from '../txn-api.js';
import type { KafkaApiHandler } from './api.js';
import { clientCode } from './txn-kit.js';

const CODES = { producerFenced: 2, abortable: 4 };

export const addOffsetsToTxnHandler: KafkaApiHandler = {
  spec: addOffsetsToTxn,
  minVersion: 0,
  maxVersion: 4,
  async handle(req, ctx) {
    const res = await transactionsOf(ctx.deps).addOffsetsToTxn(parseAddOffsetsToTxnRequest(req));
    return { throttleTimeMs: 0, errorCode: clientCode(res.errorCode, ctx.version, CODES) };
  },
  errorResponse(_req, errorCode, _message, version) {
    return { throttleTimeMs: 0, errorCode: clientCode(errorCode, version, CODES) };
  },
};
