// InitProducerId on the Kafka listener: the same producer ids as the
// WebSocket protocol's (producer-ids.ts). An idempotent producer (null
// transactional id) gets a fresh id at epoch 0; v3+ naming its id and epoch
// gets the epoch bumped (KIP-360). A transactional id is refused with
// INVALID_REQUEST at once: there is no transaction coordinator yet, and a
// retriable error would leave the producer retrying forever.

import { initProducerId as spec } from '../../protocol/kafka/apis/init-producer-id/schema.js';
import { Errors, SluiceError } from '../../util/errors.js';
import { initProducerId } from '../producer-ids.js';
import type { KafkaApiHandler } from './api.js';
import { NO_TRANSACTIONS } from './group-kit.js';

export const initProducerIdHandler: KafkaApiHandler = {
  spec,
  minVersion: 0,
  maxVersion: 5,
  async handle(req, ctx) {
    if (req.transactionalId !== null) throw new SluiceError(Errors.INVALID_REQUEST, NO_TRANSACTIONS);
    if (!ctx.deps.producerIds) throw new SluiceError(Errors.COORDINATOR_NOT_AVAILABLE, 'this broker hands out no producer ids');
    const res = await initProducerId({ producerId: req.producerId as number, producerEpoch: req.producerEpoch as number }, ctx.deps.producerIds);
    return { throttleTimeMs: 0, errorCode: res.errorCode, producerId: res.producerId, producerEpoch: res.producerEpoch };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, producerId: -1, producerEpoch: -1 };
  },
};
