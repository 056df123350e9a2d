// Apache Kafka as a benchmark peer (issue 19): Kafka 4.x's broker from the
// jars of bench/peers/kafka/pom.xml (fetched by `make bench-peers`), run on
// 127.0.0.1 as KRaft combined nodes (process.roles=broker,controller, a
// static controller.quorum.voters), storage formatted with the StorageTool
// main class (`kafka-storage format`), fresh data dirs per deployment, and
// driven by Kafka's own Java client (kafka-driver.ts).
//
// - kafkaR1: one node; topics RF 1, producer acks=1 (paired with Sluice RF=1 acks=1).
// - kafkaR3: three nodes; topics RF 3, min.insync.replicas=2, acks=all, the
//   producer's defaults (Kafka 4.x: linger.ms=5, batch.size=16384, idempotent).
// - kafkaR3Tuned: the same with linger.ms=10, batch.size=262144 (TUNED_PRODUCER).
// - kafkaR3Fsync: the same as kafkaR3 with log.flush.interval.messages=1
//   (every append fsynced before it counts toward the high watermark on each replica).
// Every node's JVM runs as kafka-server-start.sh starts it: -Xmx1G -Xms1G and
// KAFKA_JVM_PERFORMANCE_OPTS' G1 settings (SERVER_JVM_OPTS; override the heap
// with SLUICE_BENCH_KAFKA_HEAP, e.g. 512m). The e2e workload's producer uses
// linger.ms=0 on every system (the low-latency setting; Sluice's too).
//
// For failover measurements (bench/failover.bench.ts, issue 19): createTopic()
// with a replica assignment, leaderOf() (with the active controller),
// awaitIsr(), killNode() (SIGKILL by PID), restartNode() and pacedProducer()
// (acks=all, acknowledgement gaps as they happen) on a started
// KafkaDeployment; bench/peers/kafka-failover.ts runs the leader kills.
//
// Invariants: produce() and e2e() write into a fresh topic (a partition per
// producer; one for e2e), consume() reads back what the last produce()
// acknowledged per partition; stop() stops every node by PID (SIGTERM, then
// SIGKILL) and removes the data dirs.

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePorts } from '../../test/integration/harness.js';
import { assert } from '../../src/util/assert.js';
import type { Availability, ConsumeSpec, Deployment, E2eSpec, LatencyResult, ProduceSpec, Progress, ThroughputResult } from '../suite/types.js';
import {
  KAFKA_LIB, KafkaClientDriver, activeController, PacedKafkaProducer, awaitIsr as awaitKafkaIsr, kafkaJarsMissing, kafkaVersion, partitionLeader, runJvm, waitForKafkaBrokers, type KafkaClientConfig,
} from './kafka-driver.js';
import { ServerProcess, removeDir } from './server-process.js';

const START_TIMEOUT_MS = 90_000;
const FORMAT_TIMEOUT_MS = 60_000;
/** kafka-server-start.sh's default heap and kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS. */
export function serverJvmOpts(heap = process.env.SLUICE_BENCH_KAFKA_HEAP ?? '1G'): string[] {
  return [
    `-Xmx${heap}`, `-Xms${heap}`, '-server', '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-XX:InitiatingHeapOccupancyPercent=35',
    '-XX:+ExplicitGCInvokesConcurrent', '-XX:MaxInlineLevel=15', '-Djava.awt.headless=true',
  ];
}

/** Kafka 4.x's producer defaults, written out: what a user who sets nothing gets. */
export const DEFAULT_PRODUCER: Readonly<Record<string, string>> = { acks: 'all', 'linger.ms': '5', 'batch.size': '16384' };
/** The tuned variant, the same on Sluice's Producer (lingerMs 10, batchBytes 262144). */
export const TUNED_PRODUCER: Readonly<Record<string, string>> = { acks: 'all', 'linger.ms': '10', 'batch.size': '262144' };

export function kafkaAvailability(): Availability {
  const missing = kafkaJarsMissing();
  if (missing !== null) return { available: false, reason: missing };
  const version = kafkaVersion();
  return { available: true, ...(version !== undefined ? { version } : {}) };
}

export interface KafkaConfig {
  readonly variant: string;
  readonly nodes: 1 | 3;
  /** Producer configs of the produce workloads. */
  readonly producer: Readonly<Record<string, string>>;
  /** Broker configs beyond the base ones (e.g. log.flush.interval.messages). */
  readonly brokerExtra?: Readonly<Record<string, string>>;
}

export function kafkaR1(): Deployment {
  return new KafkaDeployment({ variant: 'R1 acks=1, producer defaults', nodes: 1, producer: { ...DEFAULT_PRODUCER, acks: '1' } });
}

export function kafkaR3(): Deployment {
  return new KafkaDeployment({ variant: 'R3 acks=all min.insync.replicas=2, producer defaults (linger.ms=5, batch.size=16384)', nodes: 3, producer: DEFAULT_PRODUCER });
}

export function kafkaR3Tuned(): Deployment {
  return new KafkaDeployment({ variant: 'R3 acks=all, tuned producer (linger.ms=10, batch.size=262144)', nodes: 3, producer: TUNED_PRODUCER });
}

export function kafkaR3Fsync(): Deployment {
  return new KafkaDeployment({
    variant: 'R3 acks=all, log.flush.interval.messages=1', nodes: 3, producer: DEFAULT_PRODUCER, brokerExtra: { 'log.flush.interval.messages': '1' },
  });
}

interface NodePorts {
  readonly id: number;
  readonly port: number;
  readonly controllerPort: number;
}

/** A fresh cluster id in Kafka's form (a UUID in URL-safe base64, 22 characters). */
export function newClusterId(): string {
  return randomBytes(16).toString('base64url');
}

/** One node's server.properties. */
export function serverProperties(n: NodePorts, all: readonly NodePorts[], dataDir: string, extra: Readonly<Record<string, string>> = {}): string {
  const rf = all.length;
  const minIsr = rf >= 3 ? 2 : 1;
  const props: Record<string, string> = {
    'process.roles': 'broker,controller',
    'node.id': String(n.id),
    'controller.quorum.voters': all.map((o) => `${o.id}@127.0.0.1:${o.controllerPort}`).join(','),
    listeners: `PLAINTEXT://127.0.0.1:${n.port},CONTROLLER://127.0.0.1:${n.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${n.port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'log.dirs': dataDir,
    'num.partitions': '1',
    'default.replication.factor': String(rf),
    'min.insync.replicas': String(minIsr),
    'offsets.topic.replication.factor': String(rf),
    'transaction.state.log.replication.factor': String(rf),
    'transaction.state.log.min.isr': String(minIsr),
    'share.coordinator.state.topic.replication.factor': String(rf),
    'share.coordinator.state.topic.min.isr': String(minIsr),
    ...extra,
  };
  return `${Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n')}\n`;
}

export class KafkaDeployment implements Deployment {
  readonly system = 'apache-kafka' as const;
  private servers: ServerProcess[] = [];
  /** Each node's java command line (kept for restartNode). */
  private serverArgs: string[][] = [];
  private nodes: NodePorts[] = [];
  private root: string | undefined;
  private driver: KafkaClientDriver | undefined;
  private lastWritten: { readonly topic: string; readonly ends: readonly number[] } | null = null;
  private seq = 0;

  constructor(readonly config: KafkaConfig) {}

  get variant(): string {
    return this.config.variant;
  }

  get bootstrap(): string {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
  }

  async start(): Promise<void> {
    assert(this.servers.length === 0, 'started twice');
    const missing = kafkaJarsMissing();
    if (missing !== null) throw new Error(missing);
    try {
      this.root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-kafka-'));
      const ports = await freePorts(2 * this.config.nodes);
      this.nodes = Array.from({ length: this.config.nodes }, (_, i) => ({ id: i + 1, port: ports[2 * i]!, controllerPort: ports[2 * i + 1]! }));
      const clusterId = newClusterId();
      const cp = `${KAFKA_LIB}/*`;
      const files = this.nodes.map((n) => {
        const file = path.join(this.root!, `server-${n.id}.properties`);
        fs.writeFileSync(file, serverProperties(n, this.nodes, path.join(this.root!, `node-${n.id}`), this.config.brokerExtra));
        return file;
      });
      for (const file of files) {
        const r = await runJvm(['-Xmx256m'], cp, 'kafka.tools.StorageTool', ['format', '-t', clusterId, '-c', file], FORMAT_TIMEOUT_MS);
        if (r.status !== 0) throw new Error(`kafka.tools.StorageTool format -c ${file} failed: ${r.output.trim().slice(-800)}`);
      }
      this.serverArgs = files.map((file) => [...serverJvmOpts(), '-cp', cp, 'kafka.Kafka', file]);
      this.servers = this.nodes.map((n, i) => new ServerProcess(`kafka-${n.id}`, 'java', this.serverArgs[i]!));
      for (const s of this.servers) s.start();
      await Promise.race([
        waitForKafkaBrokers(this.bootstrap, this.config.nodes, START_TIMEOUT_MS),
        this.exitOfAnyServer(),
      ]);
      this.driver = new KafkaClientDriver(this.bootstrap, { producer: this.config.producer, e2eProducer: { ...this.config.producer, 'linger.ms': '0' } });
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /** Rejects when a node exits (with its last output); never resolves otherwise. */
  private async exitOfAnyServer(): Promise<never> {
    for (;;) {
      const dead = this.servers.find((s) => !s.running);
      if (dead) throw new Error(`${dead.name} exited while starting:\n${dead.tail()}`);
      await new Promise((r) => setTimeout(r, 200).unref());
    }
  }

  serverPids(): readonly number[] {
    return this.servers.map((s) => s.pid).filter((pid): pid is number => pid !== undefined);
  }

  // ---- node control, for failover measurements (bench/failover.bench.ts)

  /** Node ids, 1..nodes. */
  get nodeIds(): number[] {
    return this.nodes.map((n) => n.id);
  }

  /** The PID of node `id` while it runs. */
  pidOf(id: number): number | undefined {
    return this.servers[id - 1]?.pid;
  }

  /**
   * Creates a fresh topic (RF = nodes, min ISR 2 on R3) with a full ISR; its name. `assignment`
   * (one partition) names the replicas, the first the preferred leader.
   */
  createTopic(kind: string, partitions: number, assignment?: readonly number[]): Promise<string> {
    return this.freshTopic(kind, partitions, assignment);
  }

  /** The node leading `topic`-`partition` (-1: none), the ISR size and the active controller. */
  leaderOf(topic: string, partition = 0): Promise<{ leader: number; isr: number; controller: number }> {
    return partitionLeader(this.bootstrap, topic, partition);
  }

  /** The active controller's node id (-1: unknown). */
  activeController(): Promise<number> {
    return activeController(this.bootstrap);
  }

  /** Waits (bounded) until `topic`-`partition` has a leader and `isr` ISR members. */
  awaitIsr(topic: string, isr: number, timeoutMs: number, partition = 0): Promise<{ leader: number; isr: number }> {
    return awaitKafkaIsr(this.bootstrap, topic, partition, isr, timeoutMs);
  }

  /** SIGKILL of node `id` by PID; resolves once it has exited. */
  async killNode(id: number): Promise<void> {
    const s = this.servers[id - 1];
    if (!s) throw new Error(`no Kafka node ${id}`);
    await s.kill();
  }

  /** Starts node `id` again on its data dir and ports (after killNode); does not wait for it to rejoin. */
  restartNode(id: number): void {
    const old = this.servers[id - 1];
    if (!old) throw new Error(`no Kafka node ${id}`);
    if (old.running) throw new Error(`Kafka node ${id} is running`);
    const s = new ServerProcess(old.name, 'java', this.serverArgs[id - 1]!);
    this.servers[id - 1] = s;
    s.start();
  }

  /** A paced acks=all producer on partition 0 of `topic`, in its own JVM (see PacedKafkaProducer). */
  pacedProducer(topic: string, opts: { readonly ratePerS: number; readonly gapMs: number; readonly secondsMax: number }): PacedKafkaProducer {
    return new PacedKafkaProducer(this.bootstrap, topic, { ...opts, producer: this.config.producer });
  }

  externalClientCpuSeconds(): number {
    return this.driver?.lastClientCpuSeconds ?? 0;
  }

  async produce(spec: ProduceSpec, progress: Progress): Promise<ThroughputResult> {
    const topic = await this.freshTopic('produce', spec.producers);
    const { result, acked } = await this.requireDriver().produce(topic, spec, progress);
    this.lastWritten = { topic, ends: acked };
    return result;
  }

  async consume(spec: ConsumeSpec, progress: Progress): Promise<ThroughputResult> {
    const w = this.lastWritten;
    if (w === null) throw new Error('consume() needs a produce() first');
    if (spec.consumers > w.ends.length) throw new Error(`a ${spec.consumers}-member group needs ${spec.consumers} partitions; ${w.topic} has ${w.ends.length}`);
    return this.requireDriver().consume(w.topic, w.ends, spec, `bench-group-${++this.seq}`, progress);
  }

  async e2e(spec: E2eSpec, progress: Progress): Promise<LatencyResult> {
    const topic = await this.freshTopic('e2e', 1);
    return this.requireDriver().e2e(topic, spec, progress);
  }

  async stop(): Promise<void> {
    this.driver = undefined;
    this.lastWritten = null;
    await Promise.all(this.servers.map((s) => s.stop(15_000)));
    removeDir(this.root);
    this.root = undefined;
  }

  private requireDriver(): KafkaClientDriver {
    if (!this.driver) throw new Error('the Kafka deployment is not started');
    return this.driver;
  }

  private async freshTopic(kind: string, partitions: number, assignment?: readonly number[]): Promise<string> {
    const topic = `bench-${kind}-${++this.seq}`;
    const rf = this.config.nodes;
    await this.requireDriver().createTopic(topic, partitions, rf, rf >= 3 ? 2 : 1, assignment);
    return topic;
  }
}

export type { KafkaClientConfig };
