// FindCoordinator on the Kafka listener: the coordinator of a group is the
// leader of its __consumer_offsets partition (the group coordinator decides,
// as for the WebSocket protocol), given by its Kafka endpoint. v4+ answers
// many keys at once. Key type 1 (a transactional id) is refused with
// INVALID_REQUEST, and any other key type too: Sluice has no transaction
// coordinator yet, and a retriable code would make a transactional producer
// retry forever.

import { findCoordinator } from '../../protocol/kafka/apis/find-coordinator/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import { Errors, type ErrorInfo } from '../../util/errors.js';
import { errorMessage } from '../../groups/membership/responses.js';
import type { KafkaApiHandler, KafkaDeps } from './api.js';
import { kafkaBrokers } from './cluster-view.js';
import { NO_TRANSACTIONS } from './group-kit.js';

const KEY_TYPE_GROUP = 0;
const KEY_TYPE_TRANSACTION = 1;

interface Coordinator { key: string; nodeId: number; host: string; port: number; errorCode: number; errorMessage: string | null }

const refused = (key: string, error: ErrorInfo | number, message: string | null): Coordinator => ({
  key, nodeId: -1, host: '', port: -1,
  errorCode: typeof error === 'number' ? error : error.code,
  errorMessage: typeof error === 'number' ? message : errorMessage(error, message ?? undefined),
});

function coordinatorFor(deps: KafkaDeps, keyType: number, key: string): Coordinator {
  if (keyType === KEY_TYPE_TRANSACTION) return refused(key, Errors.INVALID_REQUEST, NO_TRANSACTIONS);
  if (keyType !== KEY_TYPE_GROUP) return refused(key, Errors.INVALID_REQUEST, `unknown coordinator key type ${keyType}`);
  if (!deps.groups) return refused(key, Errors.COORDINATOR_NOT_AVAILABLE, 'this broker runs no group coordinator');
  const found = deps.groups.findCoordinator({ key });
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
