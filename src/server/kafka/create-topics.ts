// CreateTopics on the Kafka listener, forwarded to the active controller.
//
// Kafka's request rules checked here, before the controller sees the topic:
// a name given twice (INVALID_REQUEST on each), an assignment together with a
// count or replication factor (INVALID_REQUEST), assignments whose partition
// indexes are not 0..n-1 (INVALID_REPLICA_ASSIGNMENT), a config with a null
// value (INVALID_CONFIG). Everything else (name rules, existing topics,
// counts, replication factor, config values) is the controller's, whose error
// codes are Kafka's. v5+ answers carry the created topic's partition count,
// replication factor and every topic config with its source; v7 its topic id.
// v0-1 are below Kafka 4's range and not served.

import { createTopics } from '../../protocol/kafka/apis/create-topics/schema.js';
import { ZERO_UUID } from '../../protocol/kafka/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { CreatedTopic } from '../../controller/replication-control.js';
import { effectiveTopicConfig, TOPIC_CONFIGS } from '../../metadata/config-defs.js';
import type { MetadataImage } from '../../metadata/image.js';
import { Errors } from '../../util/errors.js';
import type { KafkaApiHandler } from './api.js';
import { duplicated, duplicateError, itemError, type KafkaItemError } from './admin-items.js';
import { kafkaSource } from './config-resources.js';
import { kafkaTopicId } from './cluster-view.js';

interface Assignment { readonly partitionIndex: number; readonly brokerIds: number[] }
interface CreatableTopic {
  readonly name: string;
  readonly numPartitions: number;
  readonly replicationFactor: number;
  readonly assignments: Assignment[];
  readonly configs: Array<{ name: string; value: string | null }>;
}

function requestProblem(t: CreatableTopic): KafkaItemError | null {
  if (t.assignments.length > 0) {
    if (t.numPartitions !== -1 || t.replicationFactor !== -1) {
      return itemError(Errors.INVALID_REQUEST, 'both numPartitions or replicationFactor and replica assignments were set');
    }
    const indexes = t.assignments.map((a) => a.partitionIndex).sort((a, b) => a - b);
    if (indexes.some((p, i) => p !== i)) return itemError(Errors.INVALID_REPLICA_ASSIGNMENT, 'partition indexes of the assignment must be 0 to n-1, each once');
  }
  const nulls = t.configs.filter((c) => c.value === null).map((c) => c.name);
  if (nulls.length > 0) return itemError(Errors.INVALID_CONFIG, `null value for ${nulls.join(', ')}`);
  return null;
}

function controllerTopic(t: CreatableTopic): Struct {
  const configs = Object.fromEntries(t.configs.map((c) => [c.name, c.value!]));
  if (t.assignments.length > 0) {
    const ordered = [...t.assignments].sort((a, b) => a.partitionIndex - b.partitionIndex);
    return { name: t.name, configs, assignments: ordered.map((a) => a.brokerIds) };
  }
  return { name: t.name, numPartitions: t.numPartitions, replicationFactor: t.replicationFactor, configs };
}

/** Every topic config of a topic created with `own`, as CreateTopics v5+ lists them. */
function createdConfigs(image: MetadataImage, own: ReadonlyMap<string, string>): Struct[] {
  const cluster = image.config('cluster', '');
  return TOPIC_CONFIGS.map((d) => {
    const source = own.has(d.name) ? 'topic' : d.brokerKey && cluster.has(d.brokerKey) ? 'cluster' : 'default';
    return { name: d.name, value: effectiveTopicConfig(d.name, own, cluster), readOnly: false, configSource: kafkaSource(source), isSensitive: false };
  });
}

function answerOf(image: MetadataImage, t: CreatableTopic, created: CreatedTopic): Struct {
  if (created.errorCode !== 0) return { name: t.name, errorCode: created.errorCode, errorMessage: created.errorMessage, configs: null };
  return {
    name: t.name,
    topicId: created.topicId ? kafkaTopicId(created.topicId) : ZERO_UUID,
    errorCode: 0,
    errorMessage: null,
    numPartitions: created.numPartitions,
    replicationFactor: created.replicationFactor,
    configs: createdConfigs(image, new Map(t.configs.map((c) => [c.name, c.value!]))),
  };
}

export const createTopicsHandler: KafkaApiHandler = {
  spec: createTopics,
  minVersion: 2,
  maxVersion: 7,
  async handle(req, ctx) {
    const topics = req.topics as CreatableTopic[];
    const twice = duplicated(topics.map((t) => t.name));
    const answers: Struct[] = topics.map((t) => ({ name: t.name, configs: null }));
    const asked: number[] = [];
    topics.forEach((t, i) => {
      const problem = twice.has(t.name) ? duplicateError(`topic ${t.name}`) : requestProblem(t);
      if (problem) Object.assign(answers[i]!, problem);
      else asked.push(i);
    });
    if (asked.length > 0) {
      const res = await ctx.deps.controller<{ topics: CreatedTopic[] }>('createTopics', {
        topics: asked.map((i) => controllerTopic(topics[i]!)), validateOnly: req.validateOnly === true,
      });
      const image = ctx.deps.image();
      res.topics.forEach((created, k) => { answers[asked[k]!] = answerOf(image, topics[asked[k]!]!, created); });
    }
    return { throttleTimeMs: 0, topics: answers };
  },
  errorResponse(req, errorCode, errorMessage) {
    return { topics: (req.topics as CreatableTopic[]).map((t) => ({ name: t.name, errorCode, errorMessage, configs: null })) };
  },
};
