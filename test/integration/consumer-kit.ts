// Helpers for the consumer's tests on real clusters: a 3-node cluster with a
// small __consumer_offsets (3 partitions, so its creation is quick), Clients
// on it, test data produced with acks=all (one batch per partition), a
// record collector that checks per-partition order, and a consumer running
// in a child process that a test can SIGKILL.
//
// Waits are on conditions with timeouts (harness.waitFor), never fixed sleeps.

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { Client } from '../../src/client/client.js';
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import type { KafkaMessage, TopicPartition } from '../../src/client/consumer.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { Connections, connect, createTopic, produceOk, startBrokerCluster } from './broker-kit.js';
import { waitFor, type ProcessCluster } from './harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHILD_JS = path.join(here, 'consumer-child.js');

/** Short group timeouts so failures are detected within seconds. */
export const GROUP_TIMEOUTS = { sessionTimeoutMs: 4_000, rebalanceTimeoutMs: 6_000, heartbeatIntervalMs: 300 } as const;
export const WAIT_MS = 60_000;

export interface ConsumerCluster {
  readonly cluster: ProcessCluster;
  readonly admin: BrokerConnection;
  readonly conns: Connections;
}

export async function startConsumerCluster(): Promise<ConsumerCluster> {
  const cluster = await startBrokerCluster(3);
  const admin = await connect(cluster.brokerUrls[0]!);
  const res = await admin.admin(ApiKey.AlterConfigs, {
    resources: [{ resourceType: 'cluster', resourceName: '', set: { 'offsets.topic.num.partitions': '3', 'broker.session.timeout.ms': '3000' } }],
  });
  expect(res.resources[0]!.errorCode, JSON.stringify(res.resources[0])).to.equal(0);
  return { cluster, admin, conns: new Connections() };
}

/** A Client over the cluster's running brokers, retrying patiently (brokers die in these tests). */
export function newClient(cluster: ProcessCluster, clientId = 'consumer-test'): Client {
  return new Client({
    bootstrap: cluster.nodes.filter((n) => n.running).map((n) => n.brokerUrl), clientId, webSocketFactory: nodeWebSocketFactory,
    connectTimeoutMs: 2_000, requestTimeoutMs: 10_000, retry: { retries: 30, initialRetryTimeMs: 50, maxRetryTimeMs: 1_000 },
  });
}

export async function makeTopic(cc: ConsumerCluster, name: string, partitions: number): Promise<void> {
  await createTopic(cc.admin, name, partitions, 3);
}

/** Produces `perPartition` records to every partition, valued `${tag}/${partition}/${i}`; returns the values. */
export async function produceTo(cc: ConsumerCluster, topic: string, partitions: number, perPartition: number, tag: string): Promise<string[]> {
  const all: string[] = [];
  const bootstrap = await cc.conns.get(cc.cluster.nodes.find((n) => n.running)!.brokerUrl);
  for (let p = 0; p < partitions; p++) {
    const values = Array.from({ length: perPartition }, (_, i) => `${tag}/${p}/${i}`);
    await produceOk(cc.conns, bootstrap, topic, p, values.map((value) => ({ key: `k${p}`, value })));
    all.push(...values);
  }
  return all;
}

export interface Seen {
  readonly who: string;
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly value: string;
}

/**
 * Everything some consumers processed, and every time a consumer read a
 * partition out of offset order (a test asserts there were none).
 */
export class Collector {
  readonly seen: Seen[] = [];
  readonly disorder: string[] = [];
  private readonly last = new Map<string, number>();

  add(who: string, topic: string, partition: number, m: Pick<KafkaMessage, 'offset' | 'value'>): void {
    const key = `${who}|${topic}|${partition}`;
    const prev = this.last.get(key) ?? -1;
    if (m.offset <= prev) this.disorder.push(`${who} read ${topic}-${partition} offset ${m.offset} after ${prev}`);
    this.last.set(key, m.offset);
    this.seen.push({ who, topic, partition, offset: m.offset, value: m.value?.toString('utf8') ?? '' });
  }

  values(who?: string): Set<string> {
    return new Set(this.seen.filter((s) => who === undefined || s.who === who).map((s) => s.value));
  }

  count(value: string): number {
    return this.seen.filter((s) => s.value === value).length;
  }

  waitForAll(values: readonly string[], what: string, who?: string): Promise<true> {
    return waitFor(what, () => {
      const have = this.values(who);
      return values.every((v) => have.has(v)) || undefined;
    }, { timeoutMs: WAIT_MS, intervalMs: 50 });
  }
}

export function labels(tps: readonly TopicPartition[]): string[] {
  return tps.map((tp) => `${tp.topic}-${tp.partition}`).sort();
}

// ---------------------------------------------------------------- a consumer in a child process

export interface ChildEvent {
  readonly ev: 'join' | 'rec' | 'ready' | 'crash';
  readonly assignment?: Array<{ topic: string; partitions: number[] }>;
  readonly generationId?: number;
  readonly topic?: string;
  readonly p?: number;
  readonly o?: number;
  readonly v?: string;
  readonly error?: string;
}

/** A consumer in its own process (test/integration/consumer-child.ts), reporting on stdout as JSON lines. */
export class ChildConsumer {
  readonly events: ChildEvent[] = [];
  readonly stderr: string[] = [];
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  constructor(readonly name: string, config: { bootstrap: string[]; groupId: string; topic: string; options: Record<string, unknown> }, collector: Collector) {
    this.child = spawn(process.execPath, [CHILD_JS, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.startsWith('{')) continue;
        const e = JSON.parse(line) as ChildEvent;
        this.events.push(e);
        if (e.ev === 'rec') collector.add(name, e.topic!, e.p!, { offset: e.o!, value: Buffer.from(e.v!) });
      }
    });
    this.child.stderr!.on('data', (chunk: Buffer) => this.stderr.push(chunk.toString('utf8')));
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
  }

  /** The partitions of its last join. */
  assignment(): string[] {
    const joins = this.events.filter((e) => e.ev === 'join');
    const last = joins[joins.length - 1];
    return (last?.assignment ?? []).flatMap((t) => t.partitions.map((p) => `${t.topic}-${p}`)).sort();
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null && this.child.pid !== undefined) process.kill(this.child.pid, 'SIGKILL');
    await this.exited;
  }
}
