// FindCoordinator on the Kafka listener: the coordinator of a group (key
// type 0) is the leader of its __consumer_offsets partition, that of a
// transactional id (key type 1) the leader of its __transaction_state
// partition — the group and transaction coordinators decide, as for the
// WebSocket protocol — given by its Kafka endpoint. v4+ answers many keys at
// once. Any other key type (2, share groups) is INVALID_REQUEST. A
// transactional id the principal may not describe is
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (access-control.ts).

import { findCoordinator } from '../../protocol/kafka/apis/find-coordinator/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import { Errors, type ErrorInfo } from '../../util/errors.js';
import { errorMessage } from '../../groups/membership/responses.js';
import type { KafkaApiHandler, KafkaDeps } from './api.js';
import { kafkaBrokers } from './cluster-view.js';
import { COORDINATOR_KEY_GROUP, COORDINATOR_KEY_TRANSACTION } from '../../protocol/apis/transactions.js';
import type { FindCoordinatorResponse } from '../../protocol/apis/groups.js';

interface Coordinator { key: string; nodeId: number; host: string; port: number; errorCode: number; errorMessage: string | null }

const refused = (key: string, error: ErrorInfo | number, message: string | null): Coordinator => ({
  key, nodeId: -1, host: '', port: -1,
  errorCode: typeof error === 'number' ? error : error.code,
  errorMessage: typeof error === 'number' ? message : errorMessage(error, message ?? undefined),
});

function find(deps: KafkaDeps, keyType: number, key: string): FindCoordinatorResponse | Coordinator {
  if (keyType === COORDINATOR_KEY_TRANSACTION) {
    if (!deps.transactions) return refused(key, Errors.COORDINATOR_NOT_AVAILABLE, 'this broker runs no transaction coordinator');
    return deps.transactions.findCoordinator({ key, keyType: COORDINATOR_KEY_TRANSACTION });
  }
  if (keyType !== COORDINATOR_KEY_GROUP) return refused(key, Errors.INVALID_REQUEST, `unknown coordinator key type ${keyType}`);
  if (!deps.groups) return refused(key, Errors.COORDINATOR_NOT_AVAILABLE, 'this broker runs no group coordinator');
  return deps.groups.findCoordinator({ key });
}

function coordinatorFor(deps: KafkaDeps, keyType: number, key: string): Coordinator {
  const found = find(deps, keyType, key);
  if ('key' in found) return found;
  if (found.errorCode !== 0) return refused(key, found.errorCode, found.errorMessage);
  const broker = kafkaBrokers(deps.image()).find((b) => b.nodeId === found.nodeId);
  if (!broker) return refused(key, Errors.COORDINATOR_NOT_AVAILABLE, `broker ${found.nodeId} coordinates ${key} but has no Kafka listener`);
  return { key, nodeId: broker.nodeId, host: broker.host, port: broker.port, errorCode: 0, errorMessage: null };
}

export const findCoordinatorHandler: KafkaApiHandler = {
  spec: findCoordinator,
  minVersion: 0,
  maxVersion: 6,
  handle(req, ctx) {
    const keyType = req.keyType as number;
    if (ctx.version >= 4) {
      return { throttleTimeMs: 0, coordinators: (req.coordinatorKeys as string[]).map((k) => coordinatorFor(ctx.deps, keyType, k)) };
    }
    const c = coordinatorFor(ctx.deps, keyType, req.key as string);
    return { throttleTimeMs: 0, errorCode: c.errorCode, errorMessage: c.errorMessage, nodeId: c.nodeId, host: c.host, port: c.port };
  },
  errorResponse(req, errorCode, message): Struct {
    const keys = (req.coordinatorKeys as string[] | undefined) ?? [];
    return {
      errorCode, errorMessage: message, nodeId: -1, host: '', port: -1,
      coordinators: keys.map((key) => ({ key, nodeId: -1, host: '', port: -1, errorCode, errorMessage: message })),
    };
  },
};
