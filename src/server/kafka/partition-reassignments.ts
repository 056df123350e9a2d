// AlterPartitionReassignments and ListPartitionReassignments on the Kafka
// listener, forwarded to the active controller (KIP-455): start a move to new
// replicas, cancel one (replicas null), and list those in progress — of every
// partition (topics null) or of the partitions named (others are left out,
// as Kafka does). An empty replica list is INVALID_REPLICA_ASSIGNMENT.

import { alterPartitionReassignments } from '../../protocol/kafka/apis/alter-partition-reassignments/schema.js';
import { listPartitionReassignments } from '../../protocol/kafka/apis/list-partition-reassignments/schema.js';
import type { OngoingReassignment } from '../../controller/replication-control.js';
import { Errors } from '../../util/errors.js';
import type { KafkaApiHandler } from './api.js';
import { byTopic, itemError, type KafkaItemError } from './admin-items.js';

interface ReassignableTopic { readonly name: string; readonly partitions: Array<{ partitionIndex: number; replicas: number[] | null }> }
interface Item { readonly topic: string; readonly partition: number; readonly replicas: number[] | null }
type Result = { readonly topic: string; readonly partition: number } & KafkaItemError;

export const alterPartitionReassignmentsHandler: KafkaApiHandler = {
  spec: alterPartitionReassignments,
  minVersion: 0,
  maxVersion: 0,
  async handle(req, ctx) {
    const items: Item[] = (req.topics as ReassignableTopic[]).flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, replicas: p.replicas })));
    const results: Result[] = items.map((i) => ({ topic: i.topic, partition: i.partition, errorCode: 0, errorMessage: null }));
    const forward: number[] = [];
    items.forEach((item, i) => {
      if (item.replicas !== null && item.replicas.length === 0) results[i] = { ...results[i]!, ...itemError(Errors.INVALID_REPLICA_ASSIGNMENT, 'the target replica list is empty') };
      else forward.push(i);
    });
    if (forward.length > 0) {
      const res = await ctx.deps.controller<{ partitions: KafkaItemError[] }>('alterReassignments', { partitions: forward.map((i) => items[i]) });
      res.partitions.forEach((r, k) => { results[forward[k]!] = { ...results[forward[k]!]!, errorCode: r.errorCode, errorMessage: r.errorMessage }; });
    }
    return {
      throttleTimeMs: 0, errorCode: 0, errorMessage: null,
      responses: byTopic(results, (r) => r.topic).map(([name, rs]) => ({
        name, partitions: rs.map((r) => ({ partitionIndex: r.partition, errorCode: r.errorCode, errorMessage: r.errorMessage })),
      })),
    };
  },
  errorResponse(req, errorCode, errorMessage) {
    return {
      errorCode, errorMessage,
      responses: (req.topics as ReassignableTopic[]).map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode, errorMessage })) })),
    };
  },
};

interface ListTopic { readonly name: string; readonly partitionIndexes: number[] }

export const listPartitionReassignmentsHandler: KafkaApiHandler = {
  spec: listPartitionReassignments,
  minVersion: 0,
  maxVersion: 0,
  async handle(req, ctx) {
    const asked = req.topics as ListTopic[] | null;
    const wanted = asked === null ? null : new Set(asked.flatMap((t) => t.partitionIndexes.map((p) => `${t.name}\u0000${p}`)));
    const res = await ctx.deps.controller<{ reassignments: OngoingReassignment[] }>('listReassignments', {});
    const ongoing = res.reassignments.filter((r) => wanted === null || wanted.has(`${r.topic}\u0000${r.partition}`));
    return {
      throttleTimeMs: 0, errorCode: 0, errorMessage: null,
      topics: byTopic(ongoing, (r) => r.topic).map(([name, rs]) => ({
        name,
        partitions: rs.map((r) => ({ partitionIndex: r.partition, replicas: [...r.replicas], addingReplicas: [...r.addingReplicas], removingReplicas: [...r.removingReplicas] })),
      })),
    };
  },
  errorResponse(_req, errorCode, errorMessage) {
    return { errorCode, errorMessage, topics: [] };
  },
};
