// An in-process cluster for the replica-manager tests, built from real parts:
// per broker a LogManager in its own temp directory, a ReplicaManager, and a
// WsServer on 127.0.0.1:0 serving the broker API. The test plays the
// controller: it writes metadata records, builds each image with the delta
// path (imageFromRecords / imageWithRecords) and applies it to every running
// manager; AlterPartition calls land here and are committed (as a
// partitionChange in the next image), held unanswered, or checked the way
// the real controller checks them (leader, leader epoch, partition epoch).

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ClientLink } from '../../src/net/client-link.js';
import { WsServer } from '../../src/net/ws-server.js';
import { nodeWebSocketFactory } from '../../src/client/node-websocket.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import type { FetchResponse } from '../../src/protocol/apis/fetch.js';
import type { ProduceResponse } from '../../src/protocol/apis/produce.js';
import { createBrokerApi } from '../../src/server/broker-api.js';
import { LogManager } from '../../src/storage/log-manager.js';
import { DEFAULT_LOG_CONFIG } from '../../src/storage/log-config.js';
import { encodeRecordBatch, decodeRecordBatches } from '../../src/record/record-batch.js';
import { imageFromRecords, MetadataDelta } from '../../src/metadata/delta.js';
import type { MetadataImage, PartitionRegistration } from '../../src/metadata/image.js';
import type { MetadataRecord, PartitionChangeRecord } from '../../src/metadata/records.js';
import { ReplicaManager, type AlterPartitionAnswer, type AlterPartitionCall, type DurabilityMode } from '../../src/replication/replica-manager.js';
import { BROKER_ENDPOINT } from '../../src/replication/replica-fetcher.js';
import type { TxnVerifier } from '../../src/replication/txn-seams.js';
import { SystemClock, SystemScheduler, type Clock, type ManualScheduler, type Scheduler } from '../../src/util/clock.js';
import { Errors } from '../../src/util/errors.js';
import { createLogger, silentLogger, type LogLevel, type Logger } from '../../src/util/logger.js';
import { asBuffer } from '../../src/util/node-bytes.js';

/** SLUICE_TEST_LOG=debug shows the brokers' logs when a test needs explaining. */
const logger: Logger = process.env.SLUICE_TEST_LOG ? createLogger({ level: process.env.SLUICE_TEST_LOG as LogLevel }) : silentLogger;

const REQUEST_TIMEOUT_MS = 30_000;

export async function waitFor(what: string, cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Waits for `cond` while simulated time moves: each real poll advances the
 * brokers' ManualScheduler by `stepMs`, so timers (lag checks, deadlines,
 * long polls) fire in simulated time while sockets and disks work in real
 * time between the steps. The real-time bound is a guard, not a timing.
 */
export async function waitAdvancing(scheduler: ManualScheduler, what: string, cond: () => boolean, stepMs = 10, timeoutMs = 15_000): Promise<void> {
  await waitFor(what, () => {
    if (cond()) return true;
    scheduler.advance(stepMs);
    return cond();
  }, timeoutMs);
}

/** Resolves with `p`, or fails the test if it has not settled within `timeoutMs` (a guard, not a timing). */
export async function within<T>(what: string, p: Promise<T>, timeoutMs = 15_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for: ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([p, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/** One record batch of string values, stamped now (old timestamps would make segments roll by age). */
export function batchOf(...values: string[]): Buffer {
  const now = Date.now();
  return asBuffer(encodeRecordBatch({ records: values.map((v) => ({ value: Buffer.from(v), timestamp: now })) }));
}

/** The values of every record in fetched bytes, from `fromOffset` on. */
export function valuesIn(records: Uint8Array, fromOffset = 0): string[] {
  const buf = Buffer.from(records.buffer, records.byteOffset, records.byteLength);
  const out: string[] = [];
  for (const b of decodeRecordBatches(buf)) {
    b.records.forEach((r, i) => {
      if (b.header.baseOffset + i >= fromOffset) out.push(r.value?.toString() ?? '<null>');
    });
  }
  return out;
}

/** A broker's LogManager over `dataDir`, on the given time (default: the system's). */
export function openLogs(dataDir: string, time: { clock?: Clock; scheduler?: Scheduler } = {}): LogManager {
  return LogManager.open({ dataDir, logConfig: {}, clock: time.clock ?? SystemClock, scheduler: time.scheduler ?? SystemScheduler, logger });
}

export interface TestNode {
  readonly id: number;
  readonly dataDir: string;
  logs: LogManager;
  rm: ReplicaManager;
  server: WsServer;
  url: string;
  brokerEpoch: number;
  running: boolean;
}

export interface ClusterOptions {
  readonly durability?: DurabilityMode;
  readonly replicaLagTimeMaxMs?: number;
  /**
   * The brokers' time (default: the system's). A test that reasons about lag
   * times or rates passes a ManualScheduler and its clock, and moves them
   * itself; sockets and disks stay real.
   */
  readonly clock?: Clock;
  readonly scheduler?: Scheduler;
  /** The transaction coordinator each broker's replica manager asks (KIP-890); none: transactional writes are not verified. */
  readonly txnVerifier?: (brokerId: number) => TxnVerifier;
  /** How long WriteTxnMarkers waits for the ISR (default 10 s). */
  readonly txnMarkerTimeoutMs?: number;
}

export type ControllerMode = 'commit' | 'hold';

export interface HeldCall {
  readonly req: AlterPartitionCall;
  readonly answer: (a: AlterPartitionAnswer) => void;
}

export class TestCluster {
  readonly nodes = new Map<number, TestNode>();
  /** Every AlterPartition call any broker sent, in order. */
  readonly alterCalls: AlterPartitionCall[] = [];
  /** 'commit': accept valid changes and publish them; 'hold': keep them unanswered in `held`. */
  controllerMode: ControllerMode = 'commit';
  /** Held AlterPartition calls, until the test answers them (answerHeld) or never. */
  readonly held: HeldCall[] = [];
  image: MetadataImage = imageFromRecords([{ type: 'cluster', v: 1, clusterId: 'repl-test', metadataVersion: 1 }], 1);
  private readonly links = new Map<string, ClientLink>();
  private nextBrokerEpoch = 100;

  private constructor(readonly root: string, private readonly opts: ClusterOptions) {}

  static async start(ids: readonly number[], opts: ClusterOptions = {}): Promise<TestCluster> {
    const cluster = new TestCluster(fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-repl-')), opts);
    try {
      for (const id of ids) await cluster.startNode(id);
    } catch (err) {
      await cluster.close();
      throw err;
    }
    return cluster;
  }

  node(id: number): TestNode {
    const n = this.nodes.get(id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  /** Starts (or restarts, over the same data directory) broker `id` and registers it with its new URL. */
  async startNode(id: number): Promise<TestNode> {
    const old = this.nodes.get(id);
    if (old?.running) throw new Error(`node ${id} is running`);
    const dataDir = path.join(this.root, `broker-${id}`);
    const logs = openLogs(dataDir, this.opts);
    const node = { id, dataDir, logs, brokerEpoch: this.nextBrokerEpoch++, running: true } as TestNode;
    node.rm = new ReplicaManager({
      brokerId: id, logs, brokerLogConfig: DEFAULT_LOG_CONFIG, clock: this.opts.clock ?? SystemClock, scheduler: this.opts.scheduler ?? SystemScheduler,
      logger: logger.child({ nodeId: id }),
      replicaLagTimeMaxMs: this.opts.replicaLagTimeMaxMs ?? 500,
      durability: this.opts.durability ?? 'replication',
      alterPartition: (req) => this.onAlterPartition(req),
      brokerEpoch: () => node.brokerEpoch,
      fetcher: { maxWaitMs: 100, backoffMs: 50, requestTimeoutMs: 5000 },
      ...(this.opts.txnVerifier ? { txnVerifier: this.opts.txnVerifier(id) } : {}),
      txnMarkerTimeoutMs: this.opts.txnMarkerTimeoutMs ?? 10_000,
    });
    node.server = new WsServer(
      createBrokerApi({
        image: () => this.image, controllerId: () => 1000, replicas: node.rm,
        controller: () => Promise.reject(new Error('no controller in this test')),
      }),
      logger.child({ nodeId: id, component: 'listener' }),
    );
    const bound = await node.server.listen({ host: '127.0.0.1', port: 0 });
    node.url = `ws://127.0.0.1:${bound.port}`;
    this.nodes.set(id, node);
    this.publish([{
      type: 'registerBroker', v: 1, brokerId: id, incarnationId: `inc-${id}-${node.brokerEpoch}`, brokerEpoch: node.brokerEpoch,
      endpoints: [{ name: BROKER_ENDPOINT, url: node.url }], rack: null, fenced: false,
    }]);
    node.rm.start(); // publish() above gave it the image
    return node;
  }

  /** Stops broker `id` like a crash of its process would: manager, listener and logs go away; its data stays. */
  async stopNode(id: number): Promise<void> {
    const node = this.node(id);
    if (!node.running) return;
    node.running = false;
    await node.rm.stop();
    await node.server.close();
    node.logs.close();
  }

  /** Next image = current + `records`; applied to every running manager (with its changes, or null: from scratch). */
  publish(records: readonly MetadataRecord[], opts: { withChanges?: boolean } = {}): MetadataImage {
    const delta = new MetadataDelta(this.image);
    delta.replayBatch(records, this.image.offset + 1);
    this.image = delta.apply();
    const changes = opts.withChanges ? delta.changes() : null;
    for (const n of this.nodes.values()) if (n.running) n.rm.applyImage(this.image, changes);
    return this.image;
  }

  createTopic(name: string, topicId: string, partitions: ReadonlyArray<{ replicas: number[]; isr?: number[]; leader?: number }>): void {
    this.publish([
      { type: 'topic', v: 1, name, topicId },
      ...partitions.map((p, partition): MetadataRecord => ({
        type: 'partition', v: 1, topicId, partition, replicas: p.replicas, isr: p.isr ?? p.replicas,
        leader: p.leader ?? p.replicas[0]!, leaderEpoch: 0, partitionEpoch: 0, addingReplicas: [], removingReplicas: [],
      })),
    ]);
  }

  changePartition(topicId: string, partition: number, change: Omit<PartitionChangeRecord, 'type' | 'v' | 'topicId' | 'partition'>): void {
    this.publish([{ type: 'partitionChange', v: 1, topicId, partition, ...change }]);
  }

  setTopicConfig(topic: string, name: string, value: string): void {
    this.publish([{ type: 'config', v: 1, resourceType: 'topic', resourceName: topic, name, value }]);
  }

  registration(topic: string, partition = 0): PartitionRegistration {
    const reg = this.image.partition(topic, partition);
    if (!reg) throw new Error(`no partition ${topic}-${partition}`);
    return reg;
  }

  private onAlterPartition(req: AlterPartitionCall): Promise<AlterPartitionAnswer> {
    this.alterCalls.push(req);
    if (this.controllerMode === 'hold') return new Promise((answer) => this.held.push({ req, answer }));
    // Like a real controller: the answer and the image come after a commit, not within the call.
    return new Promise((resolve) => setImmediate(() => resolve(this.decideAlterPartition(req))));
  }

  /** Answers a held call: with `answer`, or as the controller would decide it now. */
  answerHeld(call: HeldCall, answer?: AlterPartitionAnswer): void {
    call.answer(answer ?? this.decideAlterPartition(call.req));
  }

  private decideAlterPartition(req: AlterPartitionCall): AlterPartitionAnswer {
    const reg = this.image.topicsById.get(req.topicId)?.partitions.get(req.partition);
    const reject = (code: number, errorMessage: string): AlterPartitionAnswer => ({ errorCode: code, errorMessage });
    if (!reg) return reject(Errors.UNKNOWN_TOPIC_OR_PARTITION.code, 'no such partition');
    if (reg.leader !== req.brokerId) return reject(Errors.NOT_LEADER_OR_FOLLOWER.code, `broker ${req.brokerId} does not lead`);
    if (req.leaderEpoch !== reg.leaderEpoch) return reject(Errors.FENCED_LEADER_EPOCH.code, 'stale leader epoch');
    if (req.partitionEpoch !== reg.partitionEpoch) return reject(Errors.INVALID_UPDATE_VERSION.code, 'stale partition epoch');
    this.changePartition(req.topicId, req.partition, { isr: [...req.newIsr] });
    return { errorCode: 0, partitionEpoch: reg.partitionEpoch + 1 };
  }

  // ---- a client ---------------------------------------------------------------

  async link(id: number): Promise<ClientLink> {
    const url = this.node(id).url;
    const cached = this.links.get(url);
    if (cached?.isOpen) return cached;
    const link = await ClientLink.connect(url, { factory: nodeWebSocketFactory, clientId: 'test-client' });
    this.links.set(url, link);
    return link;
  }

  async produce(id: number, topic: string, acks: -1 | 1, records: Buffer, opts: { partition?: number; timeoutMs?: number } = {}) {
    const link = await this.link(id);
    const res = await link.request<ProduceResponse>(ApiKey.Produce, 0, {
      acks, timeoutMs: opts.timeoutMs ?? 10_000,
      topics: [{ name: topic, partitions: [{ partition: opts.partition ?? 0, records }] }],
    }, REQUEST_TIMEOUT_MS);
    return res.topics[0]!.partitions[0]!;
  }

  async fetch(id: number, topic: string, fetchOffset: number, opts: { replicaId?: number; currentLeaderEpoch?: number; maxWaitMs?: number; partition?: number } = {}) {
    const link = await this.link(id);
    const res = await link.request<FetchResponse>(ApiKey.Fetch, 0, {
      replicaId: opts.replicaId ?? -1, maxWaitMs: opts.maxWaitMs ?? 0, minBytes: 1, maxBytes: 1 << 20,
      // A replica fetch carries the follower's current broker epoch (the leader checks it).
      brokerEpoch: opts.replicaId === undefined ? -1 : this.nodes.get(opts.replicaId)!.brokerEpoch,
      topics: [{ name: topic, partitions: [{ partition: opts.partition ?? 0, fetchOffset, currentLeaderEpoch: opts.currentLeaderEpoch ?? -1, partitionMaxBytes: 1 << 20 }] }],
    }, REQUEST_TIMEOUT_MS);
    return res.topics[0]!.partitions[0]!;
  }

  /** Every committed value of a partition, as a consumer reads it (a fetch returns one segment at most). */
  async consume(id: number, topic: string, partition = 0): Promise<string[]> {
    const out: string[] = [];
    for (let offset = 0, round = 0; ; round++) {
      if (round > 1000) throw new Error('consume: no end');
      const r = await this.fetch(id, topic, offset, { partition });
      if (r.errorCode !== 0) throw new Error(`consume ${topic}-${partition} from ${id}: error ${r.errorCode}`);
      if (r.records.length === 0) return out;
      const buf = Buffer.from(r.records.buffer, r.records.byteOffset, r.records.byteLength);
      for (const b of decodeRecordBatches(buf)) {
        b.records.forEach((rec, i) => {
          if (b.header.baseOffset + i >= offset) out.push(rec.value?.toString() ?? '<null>');
        });
        offset = Math.max(offset, b.header.baseOffset + b.records.length);
      }
    }
  }

  async request<T>(id: number, apiKey: number, body: object): Promise<T> {
    return (await this.link(id)).request<T>(apiKey, 0, body, REQUEST_TIMEOUT_MS);
  }

  async close(): Promise<void> {
    for (const link of this.links.values()) link.close();
    for (const id of this.nodes.keys()) await this.stopNode(id);
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}
