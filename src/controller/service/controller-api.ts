// The controller's request API, served on the controller listener (op
// 'controller' of the quorum wire protocol): brokers register and heartbeat,
// leaders send AlterPartition, admin tools create topics and so on. Each call
// checks its body's shape (INVALID_REQUEST otherwise), runs the pure command
// on the active controller (NOT_CONTROLLER with a leader hint elsewhere) and
// answers with plain data: errors become { errorCode, errorMessage }.

import { Errors, SluiceError, type ErrorInfo } from '../../util/errors.js';
import { badRequest, bool, bytes, int, ints, list, str, strMap, type Body } from '../../protocol/body.js';
import { brokerHeartbeat, registerBroker, unregisterBroker } from '../cluster-control.js';
import {
  alterPartition, alterReassignments, createPartitions, createTopics, deleteTopics, electLeaders, listReassignments,
  type CreatableTopic, type ReassignmentItem, type TopicPartition,
} from '../replication-control.js';
import { allocateProducerIds, alterConfigs, describeConfigs, type AlterConfigsResource } from '../config-control.js';
import { alterClientQuotas, describeClientQuotas } from '../quota-control.js';
import { parseAlterClientQuotasRequest, parseDescribeClientQuotasRequest } from '../../protocol/apis/client-quotas.js';
import type { QuorumController } from './quorum-controller.js';
import { describeImage } from './describe.js';
import { alterUserScramCredentials } from '../scram-control.js';
import { generateReassignmentPlan } from '../decisions/reassignment-plan.js';
import { createAcls, deleteAcls } from '../acl-control.js';
import { parseCreateAclsRequest, parseDeleteAclsRequest } from '../../protocol/apis/acls.js';

const bad = badRequest;
/** More brokers than a heartbeat may report unreachable (a cluster has far fewer). */
const UNREACHABLE_BROKERS_MAX = 10_000;

function errorFields(error: ErrorInfo | null, message?: string): { errorCode: number; errorMessage: string | null } {
  return error ? { errorCode: error.code, errorMessage: message ? `${error.name}: ${message}` : error.message } : { errorCode: 0, errorMessage: null };
}

function topicPartitions(b: Body, k: string): TopicPartition[] {
  return list(b, k).map((tp) => ({ topic: str(tp, 'topic'), partition: int(tp, 'partition') }));
}

export function createControllerApi(controller: QuorumController): (api: string, body: Body) => Promise<unknown> {
  const handlers: Record<string, (b: Body) => Promise<unknown>> = {
    registerBroker: async (b) => {
      const endpoints = list(b, 'endpoints').map((e) => ({ name: str(e, 'name'), url: str(e, 'url') }));
      const rack = b.rack === undefined || b.rack === null ? null : str(b, 'rack');
      const req = { brokerId: int(b, 'brokerId'), incarnationId: str(b, 'incarnationId'), clusterId: str(b, 'clusterId'), endpoints, rack };
      const res = await controller.submit((c) => registerBroker(c, req));
      return res.error ? errorFields(res.error, res.message) : { ...errorFields(null), brokerEpoch: res.brokerEpoch };
    },
    brokerHeartbeat: async (b) => {
      const req = {
        brokerId: int(b, 'brokerId'), brokerEpoch: int(b, 'brokerEpoch'), currentMetadataOffset: int(b, 'currentMetadataOffset'), wantShutdown: bool(b, 'wantShutdown', false),
        // Absent from brokers that predate fast failover: they report nothing.
        unreachableBrokers: b.unreachableBrokers === undefined || b.unreachableBrokers === null ? [] : ints(b.unreachableBrokers, 'unreachableBrokers'),
      };
      if (req.unreachableBrokers.length > UNREACHABLE_BROKERS_MAX) throw bad(`unreachableBrokers lists more than ${UNREACHABLE_BROKERS_MAX} brokers`);
      const res = await controller.submit((c) => brokerHeartbeat(c, req));
      return res.error ? errorFields(res.error, res.message) : { ...errorFields(null), isFenced: res.isFenced, isCaughtUp: res.isCaughtUp, shouldShutdown: res.shouldShutdown };
    },
    unregisterBroker: async (b) => {
      const brokerId = int(b, 'brokerId');
      const res = await controller.submit((c) => unregisterBroker(c, brokerId));
      return errorFields(res.error);
    },
    createTopics: async (b) => {
      const topics: CreatableTopic[] = list(b, 'topics').map((t) => ({
        name: str(t, 'name'),
        numPartitions: t.numPartitions === undefined ? -1 : int(t, 'numPartitions'),
        replicationFactor: t.replicationFactor === undefined ? -1 : int(t, 'replicationFactor'),
        configs: strMap(t.configs, 'configs'),
        ...(t.assignments !== undefined ? { assignments: (t.assignments as unknown[]).map((r) => ints(r, 'assignments')) } : {}),
      }));
      const validateOnly = bool(b, 'validateOnly', false);
      return { topics: await controller.submit((c) => createTopics(c, topics, validateOnly)) };
    },
    deleteTopics: async (b) => {
      const v = b.names;
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw bad('names must be a list of strings');
      return { topics: await controller.submit((c) => deleteTopics(c, v as string[])) };
    },
    createPartitions: async (b) => {
      const topic = str(b, 'topic');
      const count = int(b, 'count');
      const raw = b.assignments;
      if (raw !== undefined && raw !== null && !Array.isArray(raw)) throw bad('assignments must be a list of replica lists');
      const assignments = Array.isArray(raw) ? raw.map((r) => ints(r, 'assignments')) : null;
      return controller.submit((c) => createPartitions(c, topic, count, bool(b, 'validateOnly', false), assignments));
    },
    alterPartition: async (b) => {
      const req = {
        brokerId: int(b, 'brokerId'), brokerEpoch: int(b, 'brokerEpoch'), topicId: str(b, 'topicId'), partition: int(b, 'partition'),
        leaderEpoch: int(b, 'leaderEpoch'), partitionEpoch: int(b, 'partitionEpoch'), newIsr: ints(b.newIsr, 'newIsr'),
      };
      return controller.submit((c) => alterPartition(c, req));
    },
    electLeaders: async (b) => {
      const parts = b.partitions === undefined || b.partitions === null ? null : topicPartitions(b, 'partitions');
      const type = b.electionType === undefined ? 'preferred' : str(b, 'electionType');
      if (type !== 'preferred' && type !== 'unclean') throw bad('electionType must be preferred or unclean');
      return { partitions: await controller.submit((c) => electLeaders(c, parts, type)) };
    },
    alterReassignments: async (b) => {
      const items: ReassignmentItem[] = list(b, 'partitions').map((p) => ({
        topic: str(p, 'topic'), partition: int(p, 'partition'), replicas: p.replicas === null ? null : ints(p.replicas, 'replicas'),
      }));
      return { partitions: await controller.submit((c) => alterReassignments(c, items)) };
    },
    generateReassignmentPlan: async (b) => {
      const topics = b.topics;
      if (!Array.isArray(topics) || !topics.every((t) => typeof t === 'string')) throw bad('topics must be a list of names');
      const brokers = ints(b.brokers, 'brokers');
      return controller.submit((c) => {
        const missing = (topics as string[]).filter((t) => !c.image.topic(t));
        if (missing.length > 0) return { records: [], response: errorFields(Errors.UNKNOWN_TOPIC_OR_PARTITION, `no topic ${missing.join(', ')}`) };
        const unknown = brokers.filter((id) => !c.image.brokers.has(id));
        if (unknown.length > 0 || brokers.length === 0) return { records: [], response: errorFields(Errors.INVALID_REPLICA_ASSIGNMENT, `brokers ${unknown.join(', ') || '(none)'} are not registered`) };
        const inputs = (topics as string[]).flatMap((t) => [...c.image.topic(t)!.partitions.entries()].map(([partition, r]) => ({ topic: t, partition, replicas: r.replicas })));
        if (inputs.some((p) => p.replicas.length > new Set(brokers).size)) {
          return { records: [], response: errorFields(Errors.INVALID_REPLICATION_FACTOR, 'a partition has more replicas than the brokers named') };
        }
        return { records: [], response: { ...errorFields(null), partitions: generateReassignmentPlan(inputs, brokers) } };
      });
    },
    listReassignments: async () => ({ reassignments: await controller.submit((c) => ({ records: [], response: listReassignments(c.image) })) }),
    alterConfigs: async (b) => {
      const resources: AlterConfigsResource[] = list(b, 'resources').map((r) => {
        const resourceType = str(r, 'resourceType');
        if (resourceType !== 'topic' && resourceType !== 'cluster') throw bad('resourceType must be topic or cluster');
        const del = r.delete === undefined ? [] : r.delete;
        if (!Array.isArray(del) || !del.every((x) => typeof x === 'string')) throw bad('delete must be a list of names');
        return { resourceType, resourceName: str(r, 'resourceName'), set: strMap(r.set, 'set'), delete: del as string[] };
      });
      return { resources: await controller.submit((c) => alterConfigs(c, resources, bool(b, 'validateOnly', false))) };
    },
    describeConfigs: async (b) => {
      const resourceType = str(b, 'resourceType');
      if (resourceType !== 'topic' && resourceType !== 'cluster') throw bad('resourceType must be topic or cluster');
      const name = str(b, 'resourceName');
      const configs = await controller.submit((c) => ({ records: [], response: describeConfigs(c.image, resourceType, name) }));
      return configs ? { ...errorFields(null), configs } : errorFields(Errors.UNKNOWN_TOPIC_OR_PARTITION, `topic ${name} does not exist`);
    },
    alterClientQuotas: async (b) => {
      const req = parseAlterClientQuotasRequest(b);
      return { throttleTimeMs: 0, entries: await controller.submit((c) => alterClientQuotas(c, req.entries, req.validateOnly)) };
    },
    describeClientQuotas: async (b) => {
      const req = parseDescribeClientQuotasRequest(b);
      const res = await controller.submit((c) => ({ records: [], response: describeClientQuotas(c.image, req.components, req.strict) }));
      return { throttleTimeMs: 0, ...res };
    },
    allocateProducerIds: async (b) => {
      const brokerId = int(b, 'brokerId');
      const brokerEpoch = int(b, 'brokerEpoch');
      const res = await controller.submit((c) => allocateProducerIds(c, brokerId, brokerEpoch));
      return res.error ? errorFields(res.error) : { ...errorFields(null), firstProducerId: res.firstProducerId, size: res.size };
    },
    createAcls: async (b) => {
      const creations = parseCreateAclsRequest(b);
      return { results: await controller.submit((c) => createAcls(c, creations)) };
    },
    deleteAcls: async (b) => {
      const filters = parseDeleteAclsRequest(b);
      return { results: await controller.submit((c) => deleteAcls(c, filters)) };
    },
    alterUserScramCredentials: async (b) => {
      const deletions = list(b, 'deletions').map((d) => ({ name: str(d, 'name'), mechanism: int(d, 'mechanism') }));
      const upsertions = list(b, 'upsertions').map((u) => ({
        name: str(u, 'name'), mechanism: int(u, 'mechanism'), iterations: int(u, 'iterations'),
        salt: bytes(u, 'salt'), storedKey: bytes(u, 'storedKey'), serverKey: bytes(u, 'serverKey'),
      }));
      return { results: await controller.submit((c) => alterUserScramCredentials(c, deletions, upsertions)) };
    },
    // KIP-853 (sluice cluster add-controller / remove-controller); answered once the change is done.
    addController: async (b) => controller.addController(int(b, 'nodeId'), str(b, 'url')),
    removeController: async (b) => controller.removeController(int(b, 'nodeId')),
    describeCluster: async () => controller.submit((c) => ({ records: [], response: describeImage(c.image, c.heartbeats) })),
  };
  return (api, body) => {
    const handler = Object.hasOwn(handlers, api) ? handlers[api] : undefined;
    if (!handler) return Promise.reject(new SluiceError(Errors.INVALID_REQUEST, `unknown controller api ${api.slice(0, 40)}`));
    try {
      return handler(body);
    } catch (err) {
      return Promise.reject(err);
    }
  };
}
