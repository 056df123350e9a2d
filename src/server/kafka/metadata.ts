// Metadata on the Kafka listener: brokers by their Kafka endpoints, topics and
// partitions from this node's metadata image.
//
// Topic lists: v0 with no topics, or v1+ with null, means every topic; an
// empty list (v1+) means none. A topic by id (v10+) is looked up in the image.
// Auto-creation (auto.create.topics.enable, default true, and the request's
// allowAutoTopicCreation, true before v4): a missing topic with a valid name
// is created with the cluster defaults through the active controller and
// answered LEADER_NOT_AVAILABLE (retriable) until it has leaders, as Kafka
// does; one creation per name is in flight at a time.

import { metadata } from '../../protocol/kafka/apis/metadata/schema.js';
import { ZERO_UUID } from '../../protocol/kafka/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import { Errors } from '../../util/errors.js';
import { topicNameProblem } from '../../controller/decisions/topic-rules.js';
import type { MetadataImage } from '../../metadata/image.js';
import type { KafkaApiHandler, KafkaDeps } from './api.js';
import type { RequestAccess } from '../access-control.js';
import { ApiKey } from '../../protocol/api-keys.js';
import { isInternalTopic, kafkaBrokers, kafkaControllerId, kafkaTopicId, topicNameById } from './cluster-view.js';

interface TopicRef { readonly topicId: string; readonly name: string | null }

const creating = new Set<string>();

function autoCreate(deps: KafkaDeps, name: string): void {
  if (creating.has(name)) return;
  creating.add(name);
  void deps.controller('createTopics', { topics: [{ name }] })
    .catch(() => undefined)
    .finally(() => creating.delete(name));
}

function partitionsOf(image: MetadataImage, name: string): Struct[] {
  const t = image.topic(name)!;
  const live = (id: number): boolean => image.brokers.get(id)?.fenced === false;
  return [...t.partitions.entries()].sort((a, b) => a[0] - b[0]).map(([partitionIndex, r]) => ({
    errorCode: r.leader < 0 ? Errors.LEADER_NOT_AVAILABLE.code : 0,
    partitionIndex,
    leaderId: r.leader,
    leaderEpoch: r.leaderEpoch,
    replicaNodes: [...r.replicas],
    isrNodes: [...r.isr],
    offlineReplicas: r.replicas.filter((id) => !live(id)),
  }));
}

function topicAnswer(deps: KafkaDeps, access: RequestAccess | null, image: MetadataImage, ref: TopicRef, mayCreate: boolean, version: number): Struct {
  const name = ref.name ?? (ref.topicId !== ZERO_UUID ? topicNameById(image, ref.topicId) : null);
  // Names are nullable in answers from v12 on only; v10-11 have the field but Kafka serves ids from v12.
  if (name === null) return { errorCode: Errors.UNKNOWN_TOPIC_ID.code, name: version >= 12 ? null : '', topicId: ref.topicId, partitions: [] };
  if (access && !access.topicAllowed(ApiKey.Metadata, name)) return { errorCode: Errors.TOPIC_AUTHORIZATION_FAILED.code, name, topicId: ref.topicId, partitions: [] };
  const t = image.topic(name);
  if (!t) {
    const invalid = topicNameProblem(name);
    if (invalid) return { errorCode: Errors.INVALID_TOPIC.code, name, partitions: [] };
    // Auto-creation needs Create on the cluster or the topic (Kafka's rule); without it, TOPIC_AUTHORIZATION_FAILED.
    if (mayCreate && ref.name !== null && access && !access.topicAllowed(ApiKey.CreateTopics, name)) {
      return { errorCode: Errors.TOPIC_AUTHORIZATION_FAILED.code, name, partitions: [] };
    }
    if (mayCreate && ref.name !== null) {
      autoCreate(deps, name);
      return { errorCode: Errors.LEADER_NOT_AVAILABLE.code, name, partitions: [] };
    }
    return { errorCode: Errors.UNKNOWN_TOPIC_OR_PARTITION.code, name, partitions: [] };
  }
  return { errorCode: 0, name, topicId: kafkaTopicId(t.topicId), isInternal: isInternalTopic(name), partitions: partitionsOf(image, name) };
}

export const metadataHandler: KafkaApiHandler = {
  spec: metadata,
  minVersion: 0,
  maxVersion: 12,
  handle(req, ctx) {
    const image = ctx.deps.image();
    const brokers = kafkaBrokers(image);
    const asked = req.topics as TopicRef[] | null;
    const all = asked === null || (ctx.version === 0 && asked.length === 0);
    // Every topic: those the principal may not describe are left out.
    const listed = [...image.topicsByName.keys()].sort().filter((name) => !ctx.access || ctx.access.topicAllowed(ApiKey.Metadata, name));
    const refs: TopicRef[] = all ? listed.map((name) => ({ topicId: ZERO_UUID, name })) : asked;
    const mayCreate = !all && ctx.deps.autoCreateTopics && req.allowAutoTopicCreation === true;
    return {
      throttleTimeMs: 0,
      brokers: brokers.map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
      clusterId: image.cluster?.clusterId ?? null,
      controllerId: kafkaControllerId(image, ctx.deps.controllerId(), brokers),
      topics: refs.map((ref) => topicAnswer(ctx.deps, ctx.access, image, ref, mayCreate, ctx.version)),
    };
  },
  errorResponse(req, errorCode) {
    const topics = (req.topics as TopicRef[] | null) ?? [];
    return { brokers: [], topics: topics.map((t) => ({ errorCode, name: t.name ?? '', topicId: t.topicId, partitions: [] })) };
  },
};
