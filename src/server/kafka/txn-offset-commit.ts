// TxnOffsetCommit on the Kafka listener, served by the shared group
// coordinator: the offsets are written inside the producer's transaction and
// become committed with its COMMIT marker (dropped with ABORT). v0-4 are
// served; v0-2 carry no member, which the coordinator takes as generation -1
// (no generation check, Kafka's pre-KIP-447 form). TRANSACTION_ABORTABLE is
// INVALID_TXN_STATE before v4 (txn-kit.ts).

import { txnOffsetCommit } from '../../protocol/kafka/apis/txn-offset-commit/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import { Errors, SluiceError } from '../../util/errors.js';
import { parseTxnOffsetCommitRequest } from '../../protocol/apis/transactions.js';
import type { KafkaApiHandler } from './api.js';
import { clientCode } from './txn-kit.js';

const CODES = { abortable: 4 };

export const txnOffsetCommitHandler: KafkaApiHandler = {
  spec: txnOffsetCommit,
  minVersion: 0,
  maxVersion: 4,
  async handle(req, ctx) {
    const parsed = parseTxnOffsetCommitRequest({
      transactionalId: req.transactionalId, groupId: req.groupId, producerId: req.producerId, producerEpoch: req.producerEpoch,
      generationId: req.generationId, memberId: req.memberId, groupInstanceId: req.groupInstanceId,
      topics: (req.topics as Struct[]).map((t) => ({
        name: t.name,
        partitions: (t.partitions as Struct[]).map((p) => ({
          partition: p.partitionIndex, committedOffset: p.committedOffset, committedLeaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata,
        })),
      })),
    });
    if (!ctx.deps.txnOffsets) throw new SluiceError(Errors.COORDINATOR_NOT_AVAILABLE, 'this broker runs no group coordinator');
    const res = await ctx.deps.txnOffsets.txnOffsetCommit(parsed);
    return {
      throttleTimeMs: 0,
      topics: res.topics.map((t) => ({
        name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, errorCode: clientCode(p.errorCode, ctx.version, CODES) })),
      })),
    };
  },
  errorResponse(req, errorCode, _message, version) {
    return {
      throttleTimeMs: 0,
      topics: (req.topics as Struct[]).map((t) => ({
        name: t.name, partitions: (t.partitions as Struct[]).map((p) => ({ partitionIndex: p.partitionIndex, errorCode: clientCode(errorCode, version, CODES) })),
      })),
    };
  },
};
