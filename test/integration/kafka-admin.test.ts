// The Kafka listener's admin APIs on a real 3-node cluster, spoken with the
// raw Kafka client (test/protocol/kafka/raw-client.ts): topics created (and
// refused: existing, invalid name, bad replication factor, duplicates, bad
// configs, validateOnly), deleted by name and id, grown; configs described
// and altered for topics and brokers; the cluster and log dirs described;
// reassignments started, listed and cancelled; leader elections; records
// deleted, then checked through the Sluice client's WebSocket ListOffsets and
// Fetch, and deleted through the Sluice client's own DeleteRecords. Every wait is on a condition with a bound.

import { expect } from 'chai';
import { startBrokerCluster, connect, createTopic, Connections, produceOk } from './broker-kit.js';
import { waitFor, type ProcessCluster } from './harness.js';
import { RawKafkaClient } from '../protocol/kafka/raw-client.js';
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import type { Struct } from '../../src/protocol/kafka/message.js';
import type { KafkaApiSpec } from '../../src/protocol/kafka/schema.js';
import { metadata } from '../../src/protocol/kafka/apis/metadata/schema.js';
import { createTopics } from '../../src/protocol/kafka/apis/create-topics/schema.js';
import { deleteTopics } from '../../src/protocol/kafka/apis/delete-topics/schema.js';
import { createPartitions } from '../../src/protocol/kafka/apis/create-partitions/schema.js';
import { describeConfigs } from '../../src/protocol/kafka/apis/describe-configs/schema.js';
import { alterConfigs } from '../../src/protocol/kafka/apis/alter-configs/schema.js';
import { incrementalAlterConfigs } from '../../src/protocol/kafka/apis/incremental-alter-configs/schema.js';
import { describeCluster } from '../../src/protocol/kafka/apis/describe-cluster/schema.js';
import { describeLogDirs } from '../../src/protocol/kafka/apis/describe-log-dirs/schema.js';
import { alterPartitionReassignments } from '../../src/protocol/kafka/apis/alter-partition-reassignments/schema.js';
import { listPartitionReassignments } from '../../src/protocol/kafka/apis/list-partition-reassignments/schema.js';
import { electLeaders } from '../../src/protocol/kafka/apis/elect-leaders/schema.js';
import { deleteRecords } from '../../src/protocol/kafka/apis/delete-records/schema.js';
import { EARLIEST_TIMESTAMP } from '../../src/protocol/apis/offsets.js';
import { Errors, type SluiceError } from '../../src/util/errors.js';
import { Client } from '../../src/index.js';

const TOPIC = 2;
const BROKER = 4;
const WAIT = { timeoutMs: 20_000, intervalMs: 100 };

function hostPort(addr: string): [string, number] {
  const [h, p] = addr.split(':');
  return [h!, Number(p)];
}

const topicsOf = (res: Struct): Struct[] => res.topics as Struct[];

describe('Kafka listener admin APIs (real 3-node cluster)', function () {
  this.timeout(180_000);
  let cluster: ProcessCluster;
  let ws: BrokerConnection;
  const conns = new Connections();
  const clients = new Map<number, RawKafkaClient>();

  /** A raw Kafka client to broker `id` (ids are the nodes' ids). */
  async function kafka(id = cluster.nodes[0]!.id): Promise<RawKafkaClient> {
    const have = clients.get(id);
    if (have && !have.closed) return have;
    const node = cluster.nodes.find((n) => n.id === id)!;
    const c = await RawKafkaClient.connect(...hostPort(node.kafkaAddress));
    clients.set(id, c);
    return c;
  }
  const ask = async (spec: KafkaApiSpec, version: number, body: Struct, id?: number): Promise<Struct> => (await kafka(id)).request(spec, version, body);

  async function topicMeta(name: string): Promise<Struct> {
    return topicsOf(await ask(metadata, 12, { topics: [{ name }], allowAutoTopicCreation: false }))[0]!;
  }

  async function describeTopicConfig(name: string, key: string): Promise<Struct | undefined> {
    const res = await ask(describeConfigs, 4, { resources: [{ resourceType: TOPIC, resourceName: name, configurationKeys: [key] }], includeSynonyms: true });
    const r = (res.results as Struct[])[0]!;
    expect(r.errorCode, String(r.errorMessage)).to.equal(0);
    return (r.configs as Struct[])[0];
  }

  before(async () => {
    cluster = await startBrokerCluster(3, [], { kafka: true });
    ws = await connect(cluster.brokerUrls[0]!);
  });
  after(async () => {
    for (const c of clients.values()) c.close();
    ws?.close();
    conns.closeAll();
    await cluster?.cleanup();
  });

  it('creates topics at every served version, and refuses existing, invalid, duplicate and misconfigured ones', async () => {
    for (let v = 2; v <= 7; v++) {
      const res = await ask(createTopics, v, {
        topics: [{ name: `made-v${v}`, numPartitions: v >= 4 ? -1 : 2, replicationFactor: v >= 4 ? -1 : 2, configs: [{ name: 'retention.ms', value: '3600000' }] }],
        timeoutMs: 10_000,
      });
      const t = topicsOf(res)[0]!;
      expect(t, `v${v}`).to.include({ name: `made-v${v}`, errorCode: 0 });
      if (v >= 5) {
        expect(t.numPartitions, `v${v}`).to.equal(v >= 4 ? 1 : 2);
        const retention = (t.configs as Struct[]).find((c) => c.name === 'retention.ms');
        expect(retention, `v${v}`).to.include({ value: '3600000', configSource: 1 });
      }
      if (v >= 7) {
        expect(t.topicId).to.not.equal('0'.repeat(32));
        expect(t.topicId).to.equal((await topicMeta('made-v7')).topicId);
      }
    }
    const res = await ask(createTopics, 7, {
      topics: [
        { name: 'made-v7', numPartitions: 1, replicationFactor: 1 },
        { name: 'bad name!', numPartitions: 1, replicationFactor: 1 },
        { name: 'too-many-copies', numPartitions: 1, replicationFactor: 5 },
        { name: 'no-copies', numPartitions: 1, replicationFactor: 0 },
        { name: 'twice', numPartitions: 1, replicationFactor: 1 },
        { name: 'twice', numPartitions: 1, replicationFactor: 1 },
        { name: 'bad-config', numPartitions: 1, replicationFactor: 1, configs: [{ name: 'retention.ms', value: 'soon' }] },
        { name: 'unknown-config', numPartitions: 1, replicationFactor: 1, configs: [{ name: 'no.such.key', value: '1' }] },
        { name: 'both', numPartitions: 2, replicationFactor: 1, assignments: [{ partitionIndex: 0, brokerIds: [1] }] },
        { name: 'gap', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 1, brokerIds: [1] }] },
      ],
    });
    expect(topicsOf(res).map((t) => t.errorCode)).to.deep.equal([
      Errors.TOPIC_ALREADY_EXISTS.code, Errors.INVALID_TOPIC.code, Errors.INVALID_REPLICATION_FACTOR.code, Errors.INVALID_REPLICATION_FACTOR.code,
      Errors.INVALID_REQUEST.code, Errors.INVALID_REQUEST.code, Errors.INVALID_CONFIG.code, Errors.INVALID_CONFIG.code,
      Errors.INVALID_REQUEST.code, Errors.INVALID_REPLICA_ASSIGNMENT.code,
    ]);
    for (const t of topicsOf(res)) expect(t.errorMessage, String(t.name)).to.be.a('string');
    for (const name of ['bad-config', 'twice', 'too-many-copies']) expect((await topicMeta(name)).errorCode, `${name} not created`).to.equal(3);
  });

  it('validates without creating (validateOnly), and creates from an explicit assignment', async () => {
    const check = await ask(createTopics, 7, { topics: [{ name: 'dry-run', numPartitions: 4, replicationFactor: 3 }], validateOnly: true });
    expect(topicsOf(check)[0]).to.include({ errorCode: 0, numPartitions: 4, replicationFactor: 3 });
    expect((await topicMeta('dry-run')).errorCode, 'validateOnly creates nothing').to.equal(3);
    const placed = await ask(createTopics, 5, { topics: [{ name: 'placed', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 1, brokerIds: [3, 1] }, { partitionIndex: 0, brokerIds: [2, 3] }] }] });
    expect(topicsOf(placed)[0]).to.include({ errorCode: 0, numPartitions: 2, replicationFactor: 2 });
    const md = await waitFor('placed has leaders', async () => {
      const t = await topicMeta('placed');
      return t.errorCode === 0 && (t.partitions as Struct[]).length === 2 ? t : undefined;
    }, WAIT);
    const replicas = (md.partitions as Struct[]).sort((a, b) => (a.partitionIndex as number) - (b.partitionIndex as number)).map((p) => p.replicaNodes);
    expect(replicas).to.deep.equal([[2, 3], [3, 1]]);
  });

  it('deletes topics by name (v1-5) and by topic id (v6); unknown names and ids get their errors', async () => {
    await ask(createTopics, 7, { topics: [{ name: 'doomed-a', numPartitions: 1, replicationFactor: 1 }, { name: 'doomed-b', numPartitions: 1, replicationFactor: 1 }] });
    const byName = await ask(deleteTopics, 1, { topicNames: ['doomed-a', 'never-was'], timeoutMs: 10_000 });
    expect((byName.responses as Struct[]).map((r) => [r.name, r.errorCode])).to.deep.equal([['doomed-a', 0], ['never-was', 3]]);
    const id = (await topicMeta('doomed-b')).topicId as string;
    const byId = await ask(deleteTopics, 6, { topics: [{ name: null, topicId: id }, { name: null, topicId: 'ab'.repeat(16) }], timeoutMs: 10_000 });
    const [gone, unknown] = byId.responses as Struct[];
    expect(gone).to.include({ name: 'doomed-b', topicId: id, errorCode: 0 });
    expect(unknown).to.include({ errorCode: Errors.UNKNOWN_TOPIC_ID.code });
    await waitFor('both topics gone', async () => (await topicMeta('doomed-a')).errorCode === 3 && (await topicMeta('doomed-b')).errorCode === 3, WAIT);
  });

  it('adds partitions, placed or on the replica lists given, and refuses shrinking, unknown topics and bad lists', async () => {
    await ask(createTopics, 7, { topics: [{ name: 'growing', numPartitions: 2, replicationFactor: 2 }] });
    for (let v = 0; v <= 3; v++) {
      const dry = await ask(createPartitions, v, { topics: [{ name: 'growing', count: 3, assignments: null }], timeoutMs: 10_000, validateOnly: true });
      expect((dry.results as Struct[])[0], `v${v}`).to.include({ name: 'growing', errorCode: 0 });
    }
    const res = await ask(createPartitions, 3, {
      topics: [
        { name: 'growing', count: 4, assignments: [{ brokerIds: [1, 2] }, { brokerIds: [3, 1] }] },
        { name: 'made-v2', count: 1, assignments: null },
        { name: 'never-was', count: 3, assignments: null },
        { name: 'placed', count: 3, assignments: [{ brokerIds: [1, 1] }] },
      ],
      timeoutMs: 10_000,
    });
    expect((res.results as Struct[]).map((r) => r.errorCode)).to.deep.equal([0, Errors.INVALID_PARTITIONS.code, Errors.UNKNOWN_TOPIC_OR_PARTITION.code, Errors.INVALID_REPLICA_ASSIGNMENT.code]);
    const md = await waitFor('growing has 4 partitions', async () => {
      const t = await topicMeta('growing');
      return (t.partitions as Struct[]).length === 4 ? t : undefined;
    }, WAIT);
    const p3 = (md.partitions as Struct[]).find((p) => p.partitionIndex === 3)!;
    expect(p3.replicaNodes).to.deep.equal([3, 1]);
  });

  it('describes and alters topic configs (legacy and incremental), with sources, synonyms and documentation', async () => {
    await ask(createTopics, 7, { topics: [{ name: 'tuned', numPartitions: 1, replicationFactor: 1, configs: [{ name: 'segment.bytes', value: '1048576' }] }] });
    for (let v = 1; v <= 4; v++) {
      const res = await ask(describeConfigs, v, { resources: [{ resourceType: TOPIC, resourceName: 'tuned', configurationKeys: null }], includeSynonyms: true, includeDocumentation: true });
      const r = (res.results as Struct[])[0]!;
      expect(r, `v${v}`).to.include({ errorCode: 0, resourceName: 'tuned' });
      const seg = (r.configs as Struct[]).find((c) => c.name === 'segment.bytes')!;
      expect(seg, `v${v}`).to.include({ value: '1048576', configSource: 1, readOnly: false });
      expect((seg.synonyms as Struct[]).map((s) => [s.name, s.source]), `v${v}`).to.deep.equal([['segment.bytes', 1], ['log.segment.bytes', 5]]);
      if (v >= 3) expect(seg, `v${v}`).to.include({ configType: 3 }).and.to.have.property('documentation').that.is.a('string');
      expect((r.configs as Struct[]).find((c) => c.name === 'retention.ms'), `v${v}`).to.include({ configSource: 5, value: '604800000' });
    }
    // Legacy AlterConfigs replaces the whole set: segment.bytes goes back to its default.
    const legacy = await ask(alterConfigs, 2, { resources: [{ resourceType: TOPIC, resourceName: 'tuned', configs: [{ name: 'retention.ms', value: '120000' }] }] });
    expect((legacy.responses as Struct[])[0]).to.include({ errorCode: 0, resourceType: TOPIC, resourceName: 'tuned' });
    expect(await describeTopicConfig('tuned', 'retention.ms')).to.include({ value: '120000', configSource: 1 });
    expect(await describeTopicConfig('tuned', 'segment.bytes')).to.include({ value: '1073741824', configSource: 5 });

    const inc = await ask(incrementalAlterConfigs, 1, {
      resources: [{ resourceType: TOPIC, resourceName: 'tuned', configs: [
        { name: 'max.message.bytes', configOperation: 0, value: '2000000' },
        { name: 'retention.ms', configOperation: 1, value: null },
        { name: 'cleanup.policy', configOperation: 2, value: 'delete' },
      ] }],
    });
    expect((inc.responses as Struct[])[0], JSON.stringify(inc)).to.include({ errorCode: 0 });
    expect(await describeTopicConfig('tuned', 'max.message.bytes')).to.include({ value: '2000000', configSource: 1 });
    expect(await describeTopicConfig('tuned', 'retention.ms')).to.include({ value: '604800000', configSource: 5 });
    expect(await describeTopicConfig('tuned', 'cleanup.policy')).to.include({ value: 'delete', configType: 7 });
  });

  it('refuses invalid config changes with INVALID_CONFIG and changes nothing', async () => {
    const bad = await ask(incrementalAlterConfigs, 0, {
      resources: [
        { resourceType: TOPIC, resourceName: 'tuned', configs: [{ name: 'retention.ms', configOperation: 0, value: 'forever' }] },
        { resourceType: TOPIC, resourceName: 'made-v3', configs: [{ name: 'no.such.config', configOperation: 0, value: '1' }] },
        { resourceType: TOPIC, resourceName: 'made-v4', configs: [{ name: 'retention.ms', configOperation: 2, value: '5' }] },
        // Compaction exists (docs/compaction.md): appending an unknown policy is what is refused.
        { resourceType: TOPIC, resourceName: 'made-v5', configs: [{ name: 'cleanup.policy', configOperation: 2, value: 'zstd' }] },
        { resourceType: TOPIC, resourceName: 'never-was', configs: [{ name: 'retention.ms', configOperation: 0, value: '5' }] },
        { resourceType: BROKER, resourceName: '1', configs: [{ name: 'log.retention.ms', configOperation: 0, value: '5' }] },
        { resourceType: 99, resourceName: 'x', configs: [] },
      ],
    });
    expect((bad.responses as Struct[]).map((r) => r.errorCode)).to.deep.equal([
      Errors.INVALID_CONFIG.code, Errors.INVALID_CONFIG.code, Errors.INVALID_CONFIG.code, Errors.INVALID_CONFIG.code,
      Errors.UNKNOWN_TOPIC_OR_PARTITION.code, Errors.INVALID_REQUEST.code, Errors.INVALID_REQUEST.code,
    ]);
    expect(await describeTopicConfig('tuned', 'retention.ms')).to.include({ value: '604800000' });
    expect(await describeTopicConfig('made-v5', 'cleanup.policy')).to.include({ value: 'delete' });
    const legacy = await ask(alterConfigs, 0, { resources: [{ resourceType: TOPIC, resourceName: 'tuned', configs: [{ name: 'segment.bytes', value: '12' }] }] });
    expect((legacy.responses as Struct[])[0]).to.include({ errorCode: Errors.INVALID_CONFIG.code });
    const unknown = await ask(describeConfigs, 2, { resources: [{ resourceType: TOPIC, resourceName: 'never-was', configurationKeys: null }] });
    expect((unknown.results as Struct[])[0]).to.include({ errorCode: Errors.UNKNOWN_TOPIC_OR_PARTITION.code });
  });

  it('describes and alters broker configs cluster-wide (the default broker resource)', async () => {
    const set = await ask(incrementalAlterConfigs, 1, { resources: [{ resourceType: BROKER, resourceName: '', configs: [{ name: 'log.retention.ms', configOperation: 0, value: '86400000' }] }] });
    expect((set.responses as Struct[])[0]).to.include({ errorCode: 0 });
    const res = await ask(describeConfigs, 4, { resources: [{ resourceType: BROKER, resourceName: '2', configurationKeys: ['log.retention.ms', 'num.partitions'] }], includeSynonyms: true });
    const configs = (res.results as Struct[])[0]!.configs as Struct[];
    expect(configs.find((c) => c.name === 'log.retention.ms')).to.include({ value: '86400000', configSource: 3 });
    expect(configs.find((c) => c.name === 'num.partitions')).to.include({ configSource: 5 });
    // Topics without their own retention inherit it.
    expect(await describeTopicConfig('made-v6', 'retention.ms')).to.include({ value: '3600000', configSource: 1 });
    expect(await describeTopicConfig('placed', 'retention.ms')).to.include({ value: '86400000', configSource: 3 });
    const noBroker = await ask(describeConfigs, 4, { resources: [{ resourceType: BROKER, resourceName: '42', configurationKeys: null }] });
    expect((noBroker.results as Struct[])[0]).to.include({ errorCode: Errors.INVALID_REQUEST.code });
    // kafka-reassign-partitions clears throttles on each broker: deleting one broker's own keys holds at once (it has none) ...
    const clear = await ask(incrementalAlterConfigs, 1, { resources: [{ resourceType: BROKER, resourceName: '2', configs: [
      { name: 'leader.replication.throttled.rate', configOperation: 1, value: null }, { name: 'follower.replication.throttled.rate', configOperation: 1, value: null },
    ] }] });
    expect((clear.responses as Struct[])[0]).to.include({ errorCode: 0 });
    // ... and the cluster-wide value is left alone; setting one broker's own value is refused.
    const after = await ask(describeConfigs, 4, { resources: [{ resourceType: BROKER, resourceName: '', configurationKeys: ['log.retention.ms'] }] });
    expect(((after.results as Struct[])[0]!.configs as Struct[])[0]).to.include({ value: '86400000' });
    const setOne = await ask(incrementalAlterConfigs, 1, { resources: [{ resourceType: BROKER, resourceName: '2', configs: [{ name: 'log.retention.ms', configOperation: 0, value: '1' }] }] });
    expect((setOne.responses as Struct[])[0]).to.include({ errorCode: Errors.INVALID_REQUEST.code });
  });

  it('describes the cluster: every broker by its Kafka endpoint, the controller, and a controller endpoint refused', async () => {
    const addresses = cluster.nodes.map((n) => n.kafkaAddress).sort();
    for (let v = 0; v <= 1; v++) {
      const res = await ask(describeCluster, v, { includeClusterAuthorizedOperations: true }, cluster.nodes[v + 1]!.id);
      expect(res.errorCode, `v${v}`).to.equal(0);
      expect((res.brokers as Struct[]).map((b) => `${String(b.host)}:${String(b.port)}`).sort(), `v${v}`).to.deep.equal(addresses);
      expect(res.controllerId, `v${v}`).to.be.within(1, 3);
      expect(res.clusterId).to.be.a('string').with.length.greaterThan(0);
      expect((res.clusterAuthorizedOperations as number) & (1 << 7), 'ALTER allowed').to.not.equal(0);
    }
    expect((await ask(describeCluster, 1, { includeClusterAuthorizedOperations: false })).clusterAuthorizedOperations).to.equal(-2147483648);
    const controllers = await ask(describeCluster, 1, { endpointType: 2 });
    expect(controllers.errorCode).to.equal(Errors.MISMATCHED_ENDPOINT_TYPE.code);
  });

  it('describes each broker\'s log dir: its partitions, their sizes and lag', async () => {
    await createTopic(ws, 'sized', 1, 3);
    await produceOk(conns, ws, 'sized', 0, [{ value: 'x'.repeat(1000) }, { value: 'y'.repeat(1000) }]);
    for (const node of cluster.nodes) {
      await waitFor(`broker ${node.id} holds the records`, async () => {
        for (let v = 1; v <= 4; v++) {
          const res = await ask(describeLogDirs, v, { topics: [{ topic: 'sized', partitions: [0, 7] }] }, node.id);
          const dirs = res.results as Struct[];
          expect(dirs, `v${v}`).to.have.length(1);
          expect(dirs[0]!.logDir as string).to.be.a('string').with.length.greaterThan(0);
          if (v >= 4) expect(dirs[0]!.totalBytes as number).to.be.greaterThan(0);
          const parts = (dirs[0]!.topics as Struct[]).flatMap((t) => t.partitions as Struct[]);
          if (parts.length !== 1 || (parts[0]!.partitionSize as number) < 2000) return false;
          expect(parts[0]!.offsetLag).to.equal(0);
        }
        return true;
      }, WAIT);
    }
    const all = await ask(describeLogDirs, 2, { topics: null });
    const names = ((all.results as Struct[])[0]!.topics as Struct[]).map((t) => t.name);
    expect(names).to.include('sized');
  });

  it('starts, lists and cancels a partition reassignment, then completes one', async () => {
    await createTopic(ws, 'moving', 1, 1);
    await produceOk(conns, ws, 'moving', 0, Array.from({ length: 50 }, (_, i) => ({ value: `${i}-${'z'.repeat(2000)}` })));
    const from = ((await topicMeta('moving')).partitions as Struct[])[0]!.replicaNodes as number[];
    const to = [1, 2, 3].find((b) => !from.includes(b))!;
    // Throttle the new replica's catch-up to a trickle, so the move stays in progress while we look.
    const throttle = (value: string | null) => ask(incrementalAlterConfigs, 1, {
      resources: [{ resourceType: BROKER, resourceName: '', configs: [{ name: 'leader.replication.throttled.rate', configOperation: value === null ? 1 : 0, value }] }],
    });
    expect(((await throttle('1')).responses as Struct[])[0]).to.include({ errorCode: 0 });
    // The leader must hold the throttle before the move starts, or (on a busy machine) the copy finishes first.
    await waitFor('the leader to see the throttle', async () => {
      const res = await ask(describeConfigs, 4, { resources: [{ resourceType: BROKER, resourceName: '', configurationKeys: ['leader.replication.throttled.rate'] }], includeSynonyms: false }, from[0]);
      const configs = ((res.results as Struct[])[0]!.configs as Struct[] | null) ?? [];
      return configs.some((c) => c.name === 'leader.replication.throttled.rate' && c.value === '1');
    }, WAIT);
    const start = await ask(alterPartitionReassignments, 0, { topics: [{ name: 'moving', partitions: [{ partitionIndex: 0, replicas: [to] }, { partitionIndex: 5, replicas: [to] }] }] });
    expect(((start.responses as Struct[])[0]!.partitions as Struct[]).map((p) => p.errorCode)).to.deep.equal([0, Errors.UNKNOWN_TOPIC_OR_PARTITION.code]);
    const listed = await waitFor('the move is listed', async () => {
      const res = await ask(listPartitionReassignments, 0, { topics: null });
      return (res.topics as Struct[]).find((t) => t.name === 'moving');
    }, WAIT);
    expect((listed.partitions as Struct[])[0]).to.deep.include({ partitionIndex: 0, addingReplicas: [to], removingReplicas: from });
    const named = await ask(listPartitionReassignments, 0, { topics: [{ name: 'moving', partitionIndexes: [1] }] });
    expect(named.topics, 'a partition not moving is left out').to.deep.equal([]);
    const cancel = await ask(alterPartitionReassignments, 0, { topics: [{ name: 'moving', partitions: [{ partitionIndex: 0, replicas: null }] }] });
    expect(((cancel.responses as Struct[])[0]!.partitions as Struct[])[0]).to.include({ errorCode: 0 });
    await waitFor('the move is cancelled', async () => ((await ask(listPartitionReassignments, 0, { topics: null })).topics as Struct[]).length === 0, WAIT);
    const again = await ask(alterPartitionReassignments, 0, { topics: [{ name: 'moving', partitions: [{ partitionIndex: 0, replicas: null }] }] });
    expect(((again.responses as Struct[])[0]!.partitions as Struct[])[0]).to.include({ errorCode: Errors.NO_REASSIGNMENT_IN_PROGRESS.code });
    const empty = await ask(alterPartitionReassignments, 0, { topics: [{ name: 'moving', partitions: [{ partitionIndex: 0, replicas: [] }] }] });
    expect(((empty.responses as Struct[])[0]!.partitions as Struct[])[0]).to.include({ errorCode: Errors.INVALID_REPLICA_ASSIGNMENT.code });

    expect(((await throttle(null)).responses as Struct[])[0]).to.include({ errorCode: 0 });
    await ask(alterPartitionReassignments, 0, { topics: [{ name: 'moving', partitions: [{ partitionIndex: 0, replicas: [to] }] }] });
    await waitFor('the move completes', async () => {
      const p = ((await topicMeta('moving')).partitions as Struct[])[0]!;
      return JSON.stringify(p.replicaNodes) === JSON.stringify([to]) && p.leaderId === to;
    }, { timeoutMs: 60_000, intervalMs: 200 });
  });

  it('answers preferred and unclean elections: not needed where the leader is already the one asked for', async () => {
    await createTopic(ws, 'elected', 2, 3);
    for (let v = 0; v <= 2; v++) {
      const res = await ask(electLeaders, v, { electionType: 0, topicPartitions: [{ topic: 'elected', partitions: [0, 1] }, { topic: 'never-was', partitions: [0] }] });
      const results = (res.replicaElectionResults as Struct[]).flatMap((t) => (t.partitionResult as Struct[]).map((p) => [t.topic, p.partitionId, p.errorCode]));
      expect(results, `v${v}`).to.deep.equal([
        ['elected', 0, Errors.ELECTION_NOT_NEEDED.code], ['elected', 1, Errors.ELECTION_NOT_NEEDED.code], ['never-was', 0, Errors.UNKNOWN_TOPIC_OR_PARTITION.code],
      ]);
    }
    const unclean = await ask(electLeaders, 2, { electionType: 1, topicPartitions: [{ topic: 'elected', partitions: [0] }] });
    expect(((unclean.replicaElectionResults as Struct[])[0]!.partitionResult as Struct[])[0]).to.include({ errorCode: Errors.ELECTION_NOT_NEEDED.code });
    const all = await ask(electLeaders, 1, { electionType: 0, topicPartitions: null });
    expect(all.errorCode).to.equal(0);
    for (const t of all.replicaElectionResults as Struct[]) {
      for (const p of t.partitionResult as Struct[]) expect(p.errorCode, `${String(t.topic)}-${String(p.partitionId)}`).to.not.equal(Errors.ELECTION_NOT_NEEDED.code);
    }
    const bad = await ask(electLeaders, 2, { electionType: 7, topicPartitions: [{ topic: 'elected', partitions: [0] }] });
    expect(bad.errorCode).to.equal(Errors.INVALID_REQUEST.code);
  });

  it('deletes records: the log start moves on the leader (ListOffsets earliest), reads below fail, other brokers and bad offsets are refused', async () => {
    await createTopic(ws, 'trimmed', 1, 3);
    await produceOk(conns, ws, 'trimmed', 0, Array.from({ length: 10 }, (_, i) => ({ value: `r${i}` })));
    const leader = ((await topicMeta('trimmed')).partitions as Struct[])[0]!.leaderId as number;
    const follower = cluster.nodes.map((n) => n.id).find((id) => id !== leader)!;
    const leaderWs = await conns.get(cluster.nodes.find((n) => n.id === leader)!.brokerUrl);
    const earliest = async (): Promise<number> => (await leaderWs.listOffsets({ topics: [{ name: 'trimmed', partitions: [{ partition: 0, timestamp: EARLIEST_TIMESTAMP }] }] })).topics[0]!.partitions[0]!.offset;
    const del = async (v: number, offset: number, id = leader): Promise<Struct> => {
      const res = await ask(deleteRecords, v, { topics: [{ name: 'trimmed', partitions: [{ partitionIndex: 0, offset }] }], timeoutMs: 10_000 }, id);
      return ((topicsOf(res)[0]!.partitions as Struct[])[0])!;
    };
    expect(await earliest()).to.equal(0);
    expect(await del(0, 3)).to.include({ errorCode: 0, lowWatermark: 3 });
    expect(await earliest()).to.equal(3);
    expect(await del(1, 5)).to.include({ errorCode: 0, lowWatermark: 5 });
    expect(await del(2, 4), 'below the start: nothing moves').to.include({ errorCode: 0, lowWatermark: 5 });
    expect(await earliest()).to.equal(5);
    const below = await leaderWs.fetch({ maxWaitMs: 0, topics: [{ name: 'trimmed', partitions: [{ partition: 0, fetchOffset: 2 }] }] });
    expect(below.topics[0]!.partitions[0]!.errorCode).to.equal(Errors.OFFSET_OUT_OF_RANGE.code);
    expect(await del(2, 11), 'past the high watermark').to.include({ errorCode: Errors.OFFSET_OUT_OF_RANGE.code, lowWatermark: -1 });
    expect(await del(2, 7, follower), 'not the leader').to.include({ errorCode: Errors.NOT_LEADER_OR_FOLLOWER.code });
    expect(await earliest(), 'refusals change nothing').to.equal(5);
    expect(await del(2, -1), 'up to the high watermark').to.include({ errorCode: 0, lowWatermark: 10 });
    const unknown = await ask(deleteRecords, 2, { topics: [{ name: 'never-was', partitions: [{ partitionIndex: 0, offset: 1 }] }], timeoutMs: 1000 });
    expect((topicsOf(unknown)[0]!.partitions as Struct[])[0]).to.include({ errorCode: Errors.UNKNOWN_TOPIC_OR_PARTITION.code });
    await produceOk(conns, ws, 'trimmed', 0, [{ value: 'after' }]);
    expect(await earliest()).to.equal(10);

    // The same operation through Sluice's own client (WebSocket DeleteRecords).
    const client = new Client({ bootstrap: cluster.brokerUrls });
    try {
      expect(await client.admin().deleteRecords({ topic: 'trimmed', partitions: [{ partition: 0, offset: 11 }] })).to.deep.equal([{ partition: 0, lowWatermark: 11 }]);
      expect(await earliest()).to.equal(11);
      const refused = await client.admin().deleteRecords({ topic: 'trimmed', partitions: [{ partition: 0, offset: 99 }] }).then(() => null, (err: SluiceError) => err);
      expect(refused?.code).to.equal(Errors.OFFSET_OUT_OF_RANGE.code);
    } finally {
      client.close();
    }
  });
});
