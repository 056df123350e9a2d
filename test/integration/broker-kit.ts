// Helpers for integration tests that speak the client protocol to real
// broker processes (bad-input and fuzz tests): a combined-node cluster with
// every broker registered, topic creation that waits for leaders and a full
// ISR, well-behaved produce/read-back through the typed client, and raw
// WebSocket access for frames no well-behaved client would send.
//
// Waits are on conditions with timeouts (harness.waitFor), never fixed sleeps.

import { WebSocket } from 'ws';
import { ProcessCluster, waitFor } from './harness.js';
import { BrokerConnection } from '../../src/client/broker-connection.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { ClientLink } from '../../src/net/client-link.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import type { MetadataPartition } from '../../src/protocol/apis/metadata.js';
import { LATEST_TIMESTAMP } from '../../src/protocol/apis/offsets.js';
import { batchSizeAt, lastOffsetOf, baseOffsetOf } from '../../src/record/batch-header.js';
import { decodeFetchedRecords, encodeMessages, type ConsumedRecord, type Message } from '../../src/client/records.js';

export const CLUSTER_UP_MS = 30_000;
const CONNECT_TIMEOUT_MS = 2_000;

/**
 * A cluster of `size` combined nodes (plus `brokerOnly` broker-only nodes)
 * whose brokers are all registered, unfenced and listed in every broker's
 * Metadata. replica.lag.time.max.ms is 10 s unless `extraArgs` sets it.
 */
export async function startBrokerCluster(
  size: number,
  extraArgs: readonly string[] = [],
  opts: { readonly brokerOnly?: number; readonly timeoutMs?: number; readonly kafka?: boolean; readonly nodeArgs?: (id: number) => readonly string[] } = {},
): Promise<ProcessCluster> {
  const lag = extraArgs.includes('--replica-lag-time-max-ms') ? [] : ['--replica-lag-time-max-ms', '10000'];
  const cluster = await ProcessCluster.create({
    size, brokers: true, brokerOnly: opts.brokerOnly, kafka: opts.kafka, extraArgs: [...lag, ...extraArgs], ...(opts.nodeArgs ? { nodeArgs: opts.nodeArgs } : {}),
  });
  cluster.startAll();
  const brokers = size + (opts.brokerOnly ?? 0);
  await waitFor(`${brokers} brokers in every broker's metadata`, async () => {
    for (const url of cluster.brokerUrls) {
      const conn = await connect(url);
      try {
        if ((await conn.metadata([])).brokers.length !== brokers) return false;
      } finally {
        conn.close();
      }
    }
    return true;
  }, { timeoutMs: opts.timeoutMs ?? CLUSTER_UP_MS, intervalMs: 200 });
  return cluster;
}

export function connect(url: string): Promise<BrokerConnection> {
  return BrokerConnection.connect(url, { factory: nodeWebSocketFactory, connectTimeoutMs: CONNECT_TIMEOUT_MS, requestTimeoutMs: 10_000 });
}

/** A bare link for requests the typed client does not build (unknown APIs, wrong shapes). */
export function connectLink(url: string): Promise<ClientLink> {
  return ClientLink.connect(url, { factory: nodeWebSocketFactory, connectTimeoutMs: CONNECT_TIMEOUT_MS });
}

/** Leader and replicas per partition, once every partition has a leader and its ISR is all its replicas. */
export async function createTopic(
  conn: BrokerConnection, name: string, numPartitions: number, replicationFactor: number, configs: Record<string, string> = {},
): Promise<MetadataPartition[]> {
  const res = await conn.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions, replicationFactor, configs }] });
  const code = res.topics[0]?.errorCode;
  if (code !== 0) throw new Error(`CreateTopics ${name} failed: ${JSON.stringify(res.topics[0])}`);
  return waitForFullIsr(conn, name, numPartitions);
}

/**
 * Leader and replicas per partition, once every partition has a leader and a full ISR and every
 * leader serves its partition itself: the broker answering Metadata may have applied the new
 * image before the leader's replica manager has acted on it, and a produce sent in that window
 * gets NOT_LEADER_OR_FOLLOWER or UNKNOWN_TOPIC_OR_PARTITION.
 */
export function waitForFullIsr(conn: BrokerConnection, name: string, numPartitions: number): Promise<MetadataPartition[]> {
  return waitFor(`topic ${name}: a serving leader and a full ISR for every partition`, async () => {
    const md = await conn.metadata([name]);
    const t = md.topics[0];
    if (!t || t.errorCode !== 0 || t.partitions.length !== numPartitions) return undefined;
    if (!t.partitions.every((p) => p.leader >= 0 && p.isr.length === p.replicas.length)) return undefined;
    const urls = new Map(md.brokers.map((b) => [b.nodeId, b.url]));
    for (const p of t.partitions) {
      const url = urls.get(p.leader);
      if (url === undefined) return undefined;
      const leader = await connect(url);
      try {
        const res = await leader.listOffsets({ topics: [{ name, partitions: [{ partition: p.partition, timestamp: LATEST_TIMESTAMP }] }] });
        if (res.topics[0]?.partitions[0]?.errorCode !== 0) return undefined;
      } finally {
        leader.close();
      }
    }
    return t.partitions;
  }, { timeoutMs: CLUSTER_UP_MS, intervalMs: 100 });
}

/** Broker URL by node id, from Metadata. */
export async function brokerUrls(conn: BrokerConnection): Promise<Map<number, string>> {
  return new Map((await conn.metadata([])).brokers.map((b) => [b.nodeId, b.url]));
}

/** One connection per broker, opened on demand and reopened if it was lost. */
export class Connections {
  private readonly open = new Map<string, BrokerConnection>();

  async get(url: string): Promise<BrokerConnection> {
    const have = this.open.get(url);
    if (have?.isOpen) return have;
    const conn = await connect(url);
    this.open.set(url, conn);
    return conn;
  }

  closeAll(): void {
    for (const c of this.open.values()) c.close();
    this.open.clear();
  }
}

/**
 * Produces `messages` as one batch with acks=all to the partition's leader,
 * retrying retriable partition errors (a leader still taking over) until
 * `timeoutMs`; returns the base offset.
 */
export async function produceOk(conns: Connections, bootstrap: BrokerConnection, topic: string, partition: number, messages: readonly Message[], timeoutMs = 20_000): Promise<number> {
  const records = encodeMessages(messages, { timestampMs: 1_700_000_000_000 });
  return waitFor(`produce to ${topic}-${partition}`, async () => {
    const leader = (await bootstrap.metadata([topic])).topics[0]?.partitions.find((p) => p.partition === partition)?.leader ?? -1;
    const url = (await brokerUrls(bootstrap)).get(leader);
    if (!url) throw new Error(`no leader for ${topic}-${partition}`);
    const res = await (await conns.get(url)).produce({ acks: -1, timeoutMs: 5_000, topics: [{ name: topic, partitions: [{ partition, records }] }] });
    const p = res.topics[0]!.partitions[0]!;
    if (p.errorCode === 0) return p.baseOffset;
    // Retried until the timeout (a leader still taking over); the last error names the cause.
    throw new Error(`error ${p.errorCode} ${p.errorMessage ?? ''}`);
  }, { timeoutMs, intervalMs: 100 });
}

export interface PartitionContent {
  /** The fetched batches, each as one Buffer, in offset order. */
  readonly batches: Buffer[];
  readonly records: ConsumedRecord[];
  readonly highWatermark: number;
}

/**
 * Everything below the high watermark of one partition, read as a consumer
 * from offset 0 on `conn` (the leader). With `decode: false` the records are
 * not decoded (nor their CRCs checked): for logs that may hold bad batches.
 */
export async function readPartition(conn: BrokerConnection, topic: string, partition: number, opts: { decode?: boolean } = {}): Promise<PartitionContent> {
  const batches: Buffer[] = [];
  const records: ConsumedRecord[] = [];
  let offset = 0;
  for (let rounds = 0; rounds < 100_000; rounds++) {
    const res = await conn.fetch({ maxWaitMs: 0, topics: [{ name: topic, partitions: [{ partition, fetchOffset: offset }] }] });
    const p = res.topics[0]!.partitions[0]!;
    if (p.errorCode !== 0) throw new Error(`fetch ${topic}-${partition}@${offset}: error ${p.errorCode} ${p.errorMessage ?? ''}`);
    if (offset >= p.highWatermark) return { batches, records, highWatermark: p.highWatermark };
    const buf = Buffer.from(p.records);
    if (buf.length === 0) throw new Error(`fetch ${topic}-${partition}@${offset} below HW ${p.highWatermark} returned nothing`);
    for (let pos = 0; pos < buf.length;) {
      const size = batchSizeAt(buf, pos);
      if (pos + size > buf.length) break; // a partial batch at the end of a size-limited response
      const batch = buf.subarray(pos, pos + size);
      if (lastOffsetOf(batch) >= offset) {
        batches.push(batch);
        if (opts.decode !== false) records.push(...decodeFetchedRecords(batch, offset));
        offset = lastOffsetOf(batch) + 1;
      }
      pos += size;
    }
    if (baseOffsetOf(buf) > offset) throw new Error(`fetch ${topic}-${partition}: gap before ${baseOffsetOf(buf)}`);
  }
  throw new Error(`reading ${topic}-${partition} did not end`);
}

/** The high watermark a consumer sees (ListOffsets latest), asked of the leader. */
export async function latestOffset(conn: BrokerConnection, topic: string, partition: number): Promise<number> {
  const res = await conn.listOffsets({ topics: [{ name: topic, partitions: [{ partition, timestamp: LATEST_TIMESTAMP }] }] });
  const p = res.topics[0]!.partitions[0]!;
  if (p.errorCode !== 0) throw new Error(`ListOffsets ${topic}-${partition}: error ${p.errorCode} ${p.errorMessage ?? ''}`);
  return p.offset;
}

// ---------------------------------------------------------------- raw sockets

export interface RawSocket {
  readonly ws: WebSocket;
  /** Resolves with the close code once the socket is closed (by either side). */
  readonly closed: Promise<number>;
}

/** A plain `ws` client socket, open, without the protocol's client on top. */
export function openRaw(url: string): Promise<RawSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    ws.on('error', () => {});
    ws.once('open', () => resolve({ ws, closed }));
    ws.once('unexpected-response', () => reject(new Error(`unexpected HTTP response from ${url}`)));
    void closed.then(() => reject(new Error(`connection to ${url} closed before it opened`)));
  });
}
