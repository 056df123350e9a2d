// DeleteTopics on the Kafka listener, forwarded to the active controller:
// v1-5 name topics (topicNames), v6 names or topic ids (topics). An id this
// broker's image does not know is UNKNOWN_TOPIC_ID; a topic named twice is
// INVALID_REQUEST on each copy. v0 is below Kafka 4's range and not served.

import { deleteTopics } from '../../protocol/kafka/apis/delete-topics/schema.js';
import { ZERO_UUID } from '../../protocol/kafka/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import { Errors } from '../../util/errors.js';
import type { KafkaApiHandler } from './api.js';
import { duplicated, duplicateError, itemError } from './admin-items.js';
import { kafkaTopicId, topicNameById } from './cluster-view.js';

interface TopicRef { readonly name: string | null; readonly topicId: string }

function refsOf(req: Struct, version: number): TopicRef[] {
  if (version >= 6) return req.topics as TopicRef[];
  return (req.topicNames as string[]).map((name) => ({ name, topicId: ZERO_UUID }));
}

export const deleteTopicsHandler: KafkaApiHandler = {
  spec: deleteTopics,
  minVersion: 1,
  maxVersion: 6,
  async handle(req, ctx) {
    const image = ctx.deps.image();
    const refs = refsOf(req, ctx.version);
    const answers: Struct[] = refs.map((r) => {
      if (r.name !== null && r.name !== '') return { name: r.name, topicId: r.topicId, errorCode: 0, errorMessage: null };
      const name = r.topicId === ZERO_UUID ? null : topicNameById(image, r.topicId);
      if (name === null) return { name: null, topicId: r.topicId, ...itemError(Errors.UNKNOWN_TOPIC_ID, `no topic with id ${r.topicId}`) };
      return { name, topicId: r.topicId, errorCode: 0, errorMessage: null };
    });
    const twice = duplicated(answers.filter((a) => a.errorCode === 0).map((a) => a.name as string));
    for (const a of answers) if (a.errorCode === 0 && twice.has(a.name as string)) Object.assign(a, duplicateError(`topic ${String(a.name)}`));
    const asked = answers.filter((a) => a.errorCode === 0);
    for (const a of asked) {
      const t = image.topic(a.name as string);
      if (t && a.topicId === ZERO_UUID) a.topicId = kafkaTopicId(t.topicId);
    }
    if (asked.length > 0) {
      const res = await ctx.deps.controller<{ topics: Array<{ errorCode: number; errorMessage: string | null }> }>('deleteTopics', { names: asked.map((a) => a.name) });
      res.topics.forEach((r, i) => Object.assign(asked[i]!, { errorCode: r.errorCode, errorMessage: r.errorMessage }));
    }
    return { throttleTimeMs: 0, responses: answers };
  },
  errorResponse(req, errorCode, errorMessage) {
    // topics is empty below v6 (absent), topicNames empty from v6.
    const refs = [...(req.topics as TopicRef[]), ...(req.topicNames as string[]).map((name) => ({ name, topicId: ZERO_UUID }))];
    return { responses: refs.map((r) => ({ name: r.name, topicId: r.topicId, errorCode, errorMessage })) };
  },
};
