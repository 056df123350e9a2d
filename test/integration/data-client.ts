// A small data-plane client for integration tests: finds partition leaders
// through Metadata, produces to them and reads partitions back, over the typed
// BrokerConnection. It retries nothing on its own — tests decide what a
// failure means — except that reads follow the current leader.

import { BrokerConnection } from '../../src/client/broker-connection.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { decodeFetchedRecords, encodeMessages } from '../../src/client/records.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import type { MetadataPartition, MetadataResponse } from '../../src/protocol/apis/metadata.js';
import type { ProducePartitionResponse } from '../../src/protocol/apis/produce.js';
import { waitFor, type ProcessCluster } from './harness.js';
import { startBrokerCluster } from './broker-kit.js';

export class DataClient {
  private readonly conns = new Map<string, Promise<BrokerConnection>>();

  /** `bootstrap` returns the broker URLs worth trying now (e.g. of running nodes). */
  constructor(private readonly bootstrap: () => string[]) {}

  connection(url: string): Promise<BrokerConnection> {
    let c = this.conns.get(url);
    if (!c) {
      c = BrokerConnection.connect(url, { factory: nodeWebSocketFactory, connectTimeoutMs: 2000, requestTimeoutMs: 10_000 });
      this.conns.set(url, c);
      c.then((conn) => conn.onClose(() => this.conns.delete(url)), () => this.conns.delete(url));
    }
    return c;
  }

  async metadata(topics: string[] | null): Promise<MetadataResponse> {
    let last: unknown;
    for (const url of this.bootstrap()) {
      try {
        return await (await this.connection(url)).metadata(topics);
      } catch (err) {
        last = err;
      }
    }
    throw new Error(`no broker answered Metadata: ${(last as Error)?.message ?? 'no brokers'}`);
  }

  async partition(topic: string, partition: number): Promise<MetadataPartition & { url: string | null }> {
    const md = await this.metadata([topic]);
    const p = md.topics[0]?.partitions.find((x) => x.partition === partition);
    if (!p) throw new Error(`no partition ${topic}-${partition} in metadata`);
    return { ...p, url: md.brokers.find((b) => b.nodeId === p.leader)?.url ?? null };
  }

  /** Waits until the partition's metadata satisfies `cond` (asking any broker). */
  waitForPartition(topic: string, partition: number, what: string, cond: (p: MetadataPartition) => boolean, timeoutMs = 30_000) {
    return waitFor(what, async () => {
      const p = await this.partition(topic, partition);
      return cond(p) && p.url !== null ? p : undefined;
    }, { timeoutMs, intervalMs: 50 });
  }

  async createTopic(name: string, opts: { partitions?: number; replicationFactor?: number; assignments?: number[][]; configs?: Record<string, string> }): Promise<void> {
    const conn = await this.connection(this.bootstrap()[0]!);
    const body = {
      topics: [{
        name, configs: opts.configs ?? {},
        ...(opts.assignments ? { assignments: opts.assignments } : { numPartitions: opts.partitions ?? 1, replicationFactor: opts.replicationFactor ?? 3 }),
      }],
    };
    const res = await conn.admin(ApiKey.CreateTopics, body);
    const t = res.topics[0];
    if (!t || t.errorCode !== 0) throw new Error(`create ${name} failed: ${t?.errorMessage ?? 'no answer'}`);
    await this.waitForTopic(name, opts.assignments?.length ?? opts.partitions ?? 1);
  }

  /** Waits until every broker worth trying knows a leader for each partition of `name`. */
  waitForTopic(name: string, partitions: number, timeoutMs = 30_000): Promise<true> {
    return waitFor(`every broker to know a leader for each partition of ${name}`, async () => {
      for (const url of this.bootstrap()) {
        const md = await (await this.connection(url)).metadata([name]);
        const ps = md.topics[0]?.partitions ?? [];
        if (ps.length !== partitions || ps.some((p) => p.leader < 0)) return false;
      }
      return true;
    }, { timeoutMs, intervalMs: 50 });
  }

  /** Produces `values` as one batch to the current leader; the partition's answer. */
  async produce(topic: string, partition: number, values: string[], acks: -1 | 1, timeoutMs = 5000): Promise<ProducePartitionResponse> {
    const leader = await this.partition(topic, partition);
    if (!leader.url) throw new Error(`${topic}-${partition} has no leader`);
    const conn = await this.connection(leader.url);
    const records = encodeMessages(values.map((v) => ({ value: v })), { timestampMs: Date.now() });
    const res = await conn.produce({ acks, timeoutMs, topics: [{ name: topic, partitions: [{ partition, records }] }] });
    return res.topics[0]!.partitions[0]!;
  }

  /** Every record below the high watermark, read from `url` (default: the current leader). */
  async readAll(topic: string, partition: number, url?: string): Promise<Array<{ offset: number; value: string }>> {
    const target = url ?? (await this.partition(topic, partition)).url;
    if (!target) throw new Error(`${topic}-${partition} has no leader`);
    const conn = await this.connection(target);
    const out: Array<{ offset: number; value: string }> = [];
    let offset = 0;
    for (let rounds = 0; rounds < 100_000; rounds++) {
      const res = await conn.fetch({ maxWaitMs: 0, topics: [{ name: topic, partitions: [{ partition, fetchOffset: offset }] }] });
      const p = res.topics[0]!.partitions[0]!;
      if (p.errorCode !== 0) throw new Error(`fetch ${topic}-${partition}@${offset} from ${target}: ${p.errorMessage}`);
      const records = decodeFetchedRecords(p.records, offset);
      for (const r of records) out.push({ offset: r.offset, value: r.value?.toString('utf8') ?? '' });
      if (records.length > 0) offset = records[records.length - 1]!.offset + 1;
      if (offset >= p.highWatermark || records.length === 0) return out;
    }
    throw new Error('readAll did not finish');
  }

  /**
   * readAll once at least `count` records are visible: after a leader change
   * the new leader's high watermark catches up only when its followers fetch,
   * so acknowledged records may take a moment to become readable again.
   */
  readAtLeast(topic: string, partition: number, count: number, url?: string, timeoutMs = 30_000): Promise<Array<{ offset: number; value: string }>> {
    return waitFor(`${count} readable records in ${topic}-${partition}`, async () => {
      const all = await this.readAll(topic, partition, url);
      return all.length >= count ? all : undefined;
    }, { timeoutMs, intervalMs: 50 });
  }

  async close(): Promise<void> {
    const all = [...this.conns.values()];
    this.conns.clear();
    for (const c of all) await c.then((conn) => conn.close(), () => undefined);
  }
}

/**
 * A broker cluster (broker-kit's startBrokerCluster: every broker registered,
 * unfenced and in every broker's Metadata) with a DataClient over its running
 * brokers, and optionally the cluster's broker.session.timeout.ms set so
 * failovers in tests take seconds, not the default nine.
 */
export async function startDataCluster(opts: {
  readonly size: number;
  readonly brokerOnly?: number;
  readonly extraArgs?: readonly string[];
  readonly sessionTimeoutMs?: number;
}): Promise<{ cluster: ProcessCluster; client: DataClient }> {
  const cluster = await startBrokerCluster(opts.size, opts.extraArgs, { brokerOnly: opts.brokerOnly, timeoutMs: 60_000 });
  const client = new DataClient(() => cluster.nodes.filter((n) => n.running).map((n) => n.brokerUrl));
  if (opts.sessionTimeoutMs !== undefined) {
    const conn = await client.connection(cluster.nodes[0]!.brokerUrl);
    const res = await conn.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 'cluster', resourceName: '', set: { 'broker.session.timeout.ms': String(opts.sessionTimeoutMs) } }] });
    const failed = res.resources.find((r) => r.errorCode !== 0);
    if (failed) throw new Error(`setting broker.session.timeout.ms failed: ${failed.errorMessage}`);
  }
  return { cluster, client };
}
