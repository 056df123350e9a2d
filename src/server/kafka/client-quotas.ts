// DescribeClientQuotas and AlterClientQuotas on the Kafka listener: the
// request's fields are the WebSocket API's (src/protocol/apis/client-quotas.ts)
// and go to the active controller unchanged; its answer is the Kafka response.
// This is what `kafka-configs.sh --entity-type users|clients` sends.

import { describeClientQuotas } from '../../protocol/kafka/apis/describe-client-quotas/schema.js';
import { alterClientQuotas } from '../../protocol/kafka/apis/alter-client-quotas/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { KafkaApiHandler } from './api.js';
import { errorOf } from './admin-items.js';

interface Entry { readonly entity: Struct[]; readonly ops: Struct[] }

export const describeClientQuotasHandler: KafkaApiHandler = {
  spec: describeClientQuotas,
  minVersion: 0,
  maxVersion: 1,
  async handle(req, ctx) {
    return ctx.deps.controller<Struct>('describeClientQuotas', { components: req.components, strict: req.strict });
  },
  errorResponse(_req, errorCode, errorMessage) {
    return { errorCode, errorMessage, entries: null };
  },
};

export const alterClientQuotasHandler: KafkaApiHandler = {
  spec: alterClientQuotas,
  minVersion: 0,
  maxVersion: 1,
  async handle(req, ctx) {
    const entries = req.entries as Entry[];
    try {
      return await ctx.deps.controller<Struct>('alterClientQuotas', { entries, validateOnly: req.validateOnly });
    } catch (err) {
      return { entries: entries.map((e) => ({ entity: e.entity, ...errorOf(err) })) };
    }
  },
  errorResponse(req, errorCode, errorMessage) {
    return { entries: (req.entries as Entry[]).map((e) => ({ entity: e.entity, errorCode, errorMessage })) };
  },
};
