// CreatePartitions on the Kafka listener: one controller call per topic (the
// controller's command takes one topic), optionally with the new partitions'
// replica lists. A topic named twice is INVALID_REQUEST on each copy.

import { createPartitions } from '../../protocol/kafka/apis/create-partitions/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { KafkaApiHandler } from './api.js';
import { duplicated, duplicateError, errorOf, type KafkaItemError } from './admin-items.js';

interface Topic { readonly name: string; readonly count: number; readonly assignments: Array<{ brokerIds: number[] }> | null }

export const createPartitionsHandler: KafkaApiHandler = {
  spec: createPartitions,
  minVersion: 0,
  maxVersion: 3,
  async handle(req, ctx) {
    const topics = req.topics as Topic[];
    const twice = duplicated(topics.map((t) => t.name));
    const results = await Promise.all(topics.map(async (t): Promise<Struct> => {
      if (twice.has(t.name)) return { name: t.name, ...duplicateError(`topic ${t.name}`) };
      try {
        const res = await ctx.deps.controller<KafkaItemError>('createPartitions', {
          topic: t.name, count: t.count, validateOnly: req.validateOnly === true,
          ...(t.assignments !== null ? { assignments: t.assignments.map((a) => a.brokerIds) } : {}),
        });
        return { name: t.name, errorCode: res.errorCode, errorMessage: res.errorMessage };
      } catch (err) {
        return { name: t.name, ...errorOf(err) };
      }
    }));
    return { throttleTimeMs: 0, results };
  },
  errorResponse(req, errorCode, errorMessage) {
    return { results: (req.topics as Topic[]).map((t) => ({ name: t.name, errorCode, errorMessage })) };
  },
};
