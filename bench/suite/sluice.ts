// Sluice as a benchmark Deployment (types.ts): three combined `sluice server`
// processes (broker + controller) on loopback, started fresh per deployment
// by test/integration/harness.ts's ProcessCluster (log level warn) and killed
// by PID in stop(), which also removes their data dirs.
//
// Variants (issue 8): RF=1 acks=1; RF=3 acks=all with min.insync.replicas 2;
// the same with `--durability fsync` (each ISR member fsyncs before a batch
// counts). Every workload writes to a fresh topic: produce() to one with a
// partition per producer (remembered for consume()), e2e() to one with a
// single partition. The workloads themselves are in sluice-produce.ts,
// sluice-consume.ts and sluice-e2e.ts.
//
// Drivers (issue 19): 'raw' — the pipelined BrokerConnection workloads, the
// protocol's ceiling; 'client' — the real Producer (a loop of single-record
// send() calls, defaults or the tuned linger/batch) and Consumer.run() in a
// group (sluice-client.ts); 'kafka-java' — Kafka's own Java client on
// Sluice's Kafka listener (--kafka-listen on every node), the same driver
// as the Apache Kafka peer (bench/peers/kafka-driver.ts).
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import { connect, createTopic } from '../../test/integration/broker-kit.js';
import { ProcessCluster, waitFor } from '../../test/integration/harness.js';
import { assert } from '../../src/util/assert.js';
import { consumeGroup, consumePipelined } from './sluice-consume.js';
import { e2eLatency } from './sluice-e2e.js';
import { batchRecordsFor, producePipelined } from './sluice-produce.js';
import { produceWithClient, type ClientProducerOptions } from './sluice-client.js';
import { KafkaClientDriver } from '../peers/kafka-driver.js';
import { DEFAULT_PRODUCER } from '../peers/kafka.js';
import type { ConsumeSpec, Deployment, E2eSpec, LatencyResult, Progress, ProduceSpec, ThroughputResult } from './types.js';

const NODES = 3;
const START_TIMEOUT_MS = 60_000;

export interface SluiceConfig {
  readonly variant: string;
  readonly replicationFactor: 1 | 3;
  readonly acks: -1 | 1;
  readonly durability: 'replication' | 'fsync';
  /** How the workloads are driven; default 'raw'. */
  readonly driver?: 'raw' | 'client' | 'kafka-java';
  /** The Producer's options for driver 'client' (nothing: its defaults). */
  readonly producer?: ClientProducerOptions;
}

interface WrittenTopic {
  readonly name: string;
  readonly valueBytes: number;
  /** Acknowledged records per partition (index = partition): what consume() reads. */
  readonly ends: readonly number[];
}

export class SluiceDeployment implements Deployment {
  readonly system = 'sluice' as const;
  private cluster: ProcessCluster | null = null;
  /** Connections of the deployment itself (metadata, topic creation); workloads open their own. */
  private readonly conns = new Map<string, BrokerConnection>();
  private lastWritten: WrittenTopic | null = null;
  private topicSeq = 0;
  private kafkaDriver: KafkaClientDriver | null = null;
  private readonly warmupTopics = new Set<string>();

  constructor(readonly config: SluiceConfig) {}

  private get driver(): 'raw' | 'client' | 'kafka-java' {
    return this.config.driver ?? 'raw';
  }

  get variant(): string {
    return this.config.variant;
  }

  async start(): Promise<void> {
    assert(this.cluster === null, 'start() twice');
    this.cluster = await ProcessCluster.create({
      size: NODES, brokers: true, logLevel: 'warn', extraArgs: ['--durability', this.config.durability], kafka: this.driver === 'kafka-java',
    });
    this.cluster.startAll();
    await waitFor(`${NODES} brokers in every broker's metadata`, async () => {
      for (const url of this.brokerUrls()) if ((await (await this.conn(url)).metadata([])).brokers.length !== NODES) return false;
      return true;
    }, { timeoutMs: START_TIMEOUT_MS, intervalMs: 100 });
    if (this.driver === 'kafka-java') {
      const acks = this.config.acks === -1 ? 'all' : '1';
      this.kafkaDriver = new KafkaClientDriver(this.cluster.kafkaBootstrap, {
        producer: { ...DEFAULT_PRODUCER, acks }, e2eProducer: { ...DEFAULT_PRODUCER, acks, 'linger.ms': '0' },
      });
    }
  }

  externalClientCpuSeconds(): number {
    return this.kafkaDriver?.lastClientCpuSeconds ?? 0;
  }

  serverPids(): readonly number[] {
    return (this.cluster?.nodes ?? []).filter((n) => n.running && n.pid !== undefined).map((n) => n.pid!);
  }

  async produce(spec: ProduceSpec, progress: Progress): Promise<ThroughputResult> {
    const topic = await this.freshTopic('produce', spec.producers);
    if (this.driver !== 'raw') {
      const { result, acked } = this.kafkaDriver !== null
        ? await this.kafkaDriver.produce(topic.name, spec, progress)
        : await produceWithClient(this.brokerUrls(), topic.name, await this.warmupTopic(spec.producers), this.config.acks, this.config.producer ?? {}, spec, progress);
      this.lastWritten = { name: topic.name, valueBytes: spec.valueBytes, ends: acked };
      return result;
    }
    const targets = await Promise.all(topic.leaders.map(async (url, partition) => ({ partition, conn: await connect(url) })));
    try {
      const { result, acked } = await producePipelined(topic.name, targets, this.config.acks, spec, progress);
      this.lastWritten = { name: topic.name, valueBytes: spec.valueBytes, ends: acked };
      return result;
    } finally {
      for (const t of targets) t.conn.close();
    }
  }

  async consume(spec: ConsumeSpec, progress: Progress): Promise<ThroughputResult> {
    const w = this.lastWritten;
    if (w === null) throw new Error('consume() needs a produce() first');
    if (this.kafkaDriver !== null) return this.kafkaDriver.consume(w.name, w.ends, spec, `bench-group-${++this.topicSeq}`, progress);
    if (spec.consumers > 1 || this.driver === 'client') {
      if (w.ends.length < spec.consumers) throw new Error(`a ${spec.consumers}-member group needs ${spec.consumers} partitions; ${w.name} has ${w.ends.length}`);
      return consumeGroup({ bootstrap: this.brokerUrls(), topic: w.name, groupId: `bench-group-${++this.topicSeq}`, ends: w.ends }, spec, progress);
    }
    const leaders = await this.leaderUrls(w.name);
    const sources = await Promise.all(w.ends.map(async (end, partition) => ({ partition, end, conn: await connect(leaders[partition]!) })));
    try {
      return await consumePipelined(w.name, sources, w.valueBytes, spec, progress, batchRecordsFor(w.valueBytes));
    } finally {
      for (const s of sources) s.conn.close();
    }
  }

  async e2e(spec: E2eSpec, progress: Progress): Promise<LatencyResult> {
    const topic = await this.freshTopic('e2e', 1);
    if (this.kafkaDriver !== null) return this.kafkaDriver.e2e(topic.name, spec, progress);
    const leader = await connect(topic.leaders[0]!);
    try {
      return await e2eLatency({
        bootstrap: this.brokerUrls(), topic: topic.name, leader, acks: this.config.acks,
        ...(this.driver === 'client' ? { consumer: 'group' as const, producerOptions: { ...(this.config.producer?.batchBytes !== undefined ? { batchBytes: this.config.producer.batchBytes } : {}) } } : {}),
      }, spec, progress);
    } finally {
      leader.close();
    }
  }

  async stop(): Promise<void> {
    for (const c of this.conns.values()) c.close();
    this.conns.clear();
    const cluster = this.cluster;
    this.cluster = null;
    this.lastWritten = null;
    this.kafkaDriver = null;
    this.warmupTopics.clear();
    await cluster?.cleanup();
  }

  /** host:port,... of the Kafka listeners (driver 'kafka-java' only). */
  get kafkaBootstrap(): string {
    assert(this.cluster !== null && this.driver === 'kafka-java', 'no Kafka listeners: the deployment is not a started kafka-java one');
    return this.cluster.kafkaBootstrap;
  }

  private brokerUrls(): string[] {
    assert(this.cluster !== null, 'the deployment is not started');
    return this.cluster.brokerUrls;
  }

  private async conn(url: string): Promise<BrokerConnection> {
    const have = this.conns.get(url);
    if (have?.isOpen) return have;
    const c = await connect(url);
    this.conns.set(url, c);
    return c;
  }

  /** A new topic with a serving leader and a full ISR for each partition; its leaders' URLs by partition. */
  private async freshTopic(kind: string, partitions: number): Promise<{ name: string; leaders: string[] }> {
    const name = `bench-${kind}-${++this.topicSeq}`;
    const rf = this.config.replicationFactor;
    await createTopic(await this.conn(this.brokerUrls()[0]!), name, partitions, rf, { 'min.insync.replicas': rf === 3 ? '2' : '1' });
    return { name, leaders: await this.leaderUrls(name) };
  }

  /** A topic with `partitions` partitions for the producers' warm-up records (made once per count). */
  private async warmupTopic(partitions: number): Promise<string> {
    const name = `bench-warmup-${partitions}`;
    if (!this.warmupTopics.has(name)) {
      const rf = this.config.replicationFactor;
      await createTopic(await this.conn(this.brokerUrls()[0]!), name, partitions, rf, { 'min.insync.replicas': rf === 3 ? '2' : '1' });
      this.warmupTopics.add(name);
    }
    return name;
  }

  private async leaderUrls(topic: string): Promise<string[]> {
    const md = await (await this.conn(this.brokerUrls()[0]!)).metadata([topic]);
    const urls = new Map(md.brokers.map((b) => [b.nodeId, b.url]));
    const parts = [...(md.topics[0]?.partitions ?? [])].sort((a, b) => a.partition - b.partition);
    return parts.map((p) => {
      const url = urls.get(p.leader);
      if (url === undefined) throw new Error(`${topic}-${p.partition} has no leader`);
      return url;
    });
  }
}

/** RF=1, acks=1: no replication wait (paired with NATS R1 and Redis without AOF). */
export function sluiceRf1(): SluiceDeployment {
  return new SluiceDeployment({ variant: 'RF=1 acks=1', replicationFactor: 1, acks: 1, durability: 'replication' });
}

/** RF=3, acks=all, min.insync.replicas 2 (paired with NATS JetStream R3). */
export function sluiceRf3(): SluiceDeployment {
  return new SluiceDeployment({ variant: 'RF=3 acks=all', replicationFactor: 3, acks: -1, durability: 'replication' });
}

/** RF=3 acks=all with fsync before ack (paired with Redis AOF everysec). */
export function sluiceRf3Fsync(): SluiceDeployment {
  return new SluiceDeployment({ variant: 'RF=3 acks=all fsync', replicationFactor: 3, acks: -1, durability: 'fsync' });
}

/** RF=3 acks=all through the real Producer with its defaults (lingerMs 5, batchBytes 1,000,000) and Consumer.run(). */
export function sluiceRf3Client(): SluiceDeployment {
  return new SluiceDeployment({ variant: 'RF=3 acks=all, Producer defaults + Consumer.run()', replicationFactor: 3, acks: -1, durability: 'replication', driver: 'client' });
}

/**
 * The same with other Producer options: the tuned producer (lingerMs 10, batchBytes 262144: Kafka's tuned
 * variant), or Kafka's producer defaults (lingerMs 5, batchBytes 16384).
 */
export function sluiceRf3ClientTuned(producer: ClientProducerOptions): SluiceDeployment {
  return new SluiceDeployment({
    variant: `RF=3 acks=all, Producer lingerMs=${producer.lingerMs} batchBytes=${producer.batchBytes} + Consumer.run()`,
    replicationFactor: 3, acks: -1, durability: 'replication', driver: 'client', producer,
  });
}

/** RF=1 acks=1 through the real Producer (defaults) and Consumer.run(). */
export function sluiceRf1Client(): SluiceDeployment {
  return new SluiceDeployment({ variant: 'RF=1 acks=1, Producer defaults + Consumer.run()', replicationFactor: 1, acks: 1, durability: 'replication', driver: 'client' });
}

/** RF=3 acks=all on Sluice's Kafka listener, driven by Kafka's Java client with its defaults (as the Kafka peer is). */
export function sluiceRf3KafkaClient(): SluiceDeployment {
  return new SluiceDeployment({ variant: 'RF=3 acks=all via the Kafka listener, Kafka Java client defaults', replicationFactor: 3, acks: -1, durability: 'replication', driver: 'kafka-java' });
}
