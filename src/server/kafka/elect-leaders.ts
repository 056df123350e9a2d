// ElectLeaders on the Kafka listener, forwarded to the active controller:
// electionType 0 preferred (the first replica leads), 1 unclean (a
// leaderless partition gets any live replica). As in Kafka, a partition that
// already has the leader asked for is ELECTION_NOT_NEEDED — judged from this
// broker's image before forwarding — and, when every partition was asked
// for (null), such partitions are left out of the answer.

import { electLeaders } from '../../protocol/kafka/apis/elect-leaders/schema.js';
import type { Struct } from '../../protocol/kafka/message.js';
import type { MetadataImage } from '../../metadata/image.js';
import { Errors } from '../../util/errors.js';
import type { KafkaApiHandler } from './api.js';
import { byTopic, itemError, type KafkaItemError } from './admin-items.js';

interface TopicPartitions { readonly topic: string; readonly partitions: number[] }
interface Target { readonly topic: string; readonly partition: number }
type Result = Target & KafkaItemError;

const PREFERRED = 0;
const UNCLEAN = 1;

function notNeeded(image: MetadataImage, t: Target, type: number): boolean {
  const reg = image.topic(t.topic)?.partitions.get(t.partition);
  if (!reg) return false;
  return type === PREFERRED ? reg.leader === reg.replicas[0] : reg.leader >= 0;
}

function answer(results: readonly Result[]): Struct[] {
  return byTopic(results, (r) => r.topic).map(([topic, rs]) => ({
    topic,
    partitionResult: rs.map((r) => ({ partitionId: r.partition, errorCode: r.errorCode, errorMessage: r.errorMessage })),
  }));
}

export const electLeadersHandler: KafkaApiHandler = {
  spec: electLeaders,
  minVersion: 0,
  maxVersion: 2,
  async handle(req, ctx) {
    const type = req.electionType as number;
    const asked = req.topicPartitions as TopicPartitions[] | null;
    const image = ctx.deps.image();
    const targets: Target[] = asked === null
      ? [...image.topicsByName.values()].flatMap((t) => [...t.partitions.keys()].sort((a, b) => a - b).map((partition) => ({ topic: t.name, partition })))
      : asked.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
    if (type !== PREFERRED && type !== UNCLEAN) {
      const bad = itemError(Errors.INVALID_REQUEST, `unknown election type ${type}`);
      return { throttleTimeMs: 0, errorCode: bad.errorCode, replicaElectionResults: answer(targets.map((t) => ({ ...t, ...bad }))) };
    }
    const results = new Map<Target, Result>();
    const forward: Target[] = [];
    for (const t of targets) {
      if (!notNeeded(image, t, type)) forward.push(t);
      else if (asked !== null) results.set(t, { ...t, ...itemError(Errors.ELECTION_NOT_NEEDED, `${t.topic}-${t.partition} already has the leader asked for`) });
    }
    if (forward.length > 0) {
      const res = await ctx.deps.controller<{ partitions: Result[] }>('electLeaders', {
        partitions: forward, electionType: type === PREFERRED ? 'preferred' : 'unclean',
      });
      res.partitions.forEach((r, i) => results.set(forward[i]!, { ...forward[i]!, errorCode: r.errorCode, errorMessage: r.errorMessage }));
    }
    return { throttleTimeMs: 0, errorCode: 0, replicaElectionResults: answer(targets.flatMap((t) => results.get(t) ?? [])) };
  },
  errorResponse(req, errorCode, errorMessage) {
    const asked = (req.topicPartitions as TopicPartitions[] | null) ?? [];
    return {
      errorCode,
      replicaElectionResults: asked.map((t) => ({ topic: t.topic, partitionResult: t.partitions.map((p) => ({ partitionId: p, errorCode, errorMessage })) })),
    };
  },
};
