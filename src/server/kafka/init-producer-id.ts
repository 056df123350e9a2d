// InitProducerId on the Kafka listener: the same producer ids as the
// WebSocket protocol's (producer-ids.ts). An idempotent producer (null
// transactional id) gets a fresh id at epoch 0; v3+ naming its id and epoch
// gets the epoch bumped (KIP-360). A transactional id goes to its
// transaction coordinator (the broker FindCoordinator key type 1 named; any
// other answers NOT_COORDINATOR), which fences the id's older producer and
// answers the id and epoch to use. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH
// before v4, TRANSACTION_ABORTABLE INVALID_TXN_STATE before v5 (txn-kit.ts).

import { initProducerId as spec } from '../../protocol/kafka/apis/init-producer-id/schema.js';
import { Errors, SluiceError } from '../../util/errors.js';
import { initProducerId } from '../producer-ids.js';
import { parseInitProducerIdRequest } from '../../protocol/apis/groups.js';
import type { KafkaApiHandler } from './api.js';
import { initTransactionalProducer } from '../txn-api.js';
import { clientCode } from './txn-kit.js';

const CODES = { producerFenced: 4, abortable: 5 };

export const initProducerIdHandler: KafkaApiHandler = {
  spec,
  minVersion: 0,
  maxVersion: 5,
  async handle(req, ctx) {
    if (req.transactionalId !== null) {
      const init = parseInitProducerIdRequest(req);
      const res = await initTransactionalProducer(ctx.deps, { ...init, transactionalId: init.transactionalId! });
      return { throttleTimeMs: 0, errorCode: clientCode(res.errorCode, ctx.version, CODES), producerId: res.producerId, producerEpoch: res.producerEpoch };
    }
    if (!ctx.deps.producerIds) throw new SluiceError(Errors.COORDINATOR_NOT_AVAILABLE, 'this broker hands out no producer ids');
    const res = await initProducerId({ producerId: req.producerId as number, producerEpoch: req.producerEpoch as number }, ctx.deps.producerIds);
    return { throttleTimeMs: 0, errorCode: res.errorCode, producerId: res.producerId, producerEpoch: res.producerEpoch };
  },
  errorResponse(_req, errorCode, _message, version) {
    return { throttleTimeMs: 0, errorCode: clientCode(errorCode, version, CODES), producerId: -1, producerEpoch: -1 };
  },
};
