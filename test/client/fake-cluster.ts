// An in-process stand-in for a Sluice cluster, for Producer unit tests that
// need to steer failures precisely: N WebSocket listeners on loopback (one
// per "broker") sharing in-memory partition logs. It answers Metadata,
// InitProducerId and Produce; produce checks idempotent batches with the
// brokers' own pure rules (src/replication/rules/producer-state.ts), so
// duplicates get their original offset and gaps OUT_OF_ORDER_SEQUENCE_NUMBER
// exactly as on a real leader.
//
// Fault injection: `onProduce` sees every partition of every produce request
// before it is handled and may refuse it with an error code (nothing
// appended), append it but never answer the request (a dropped response),
// or append it (or refuse it) and hold the answer until a promise settles.
// Real-cluster behaviour is covered by test/integration/producer.test.ts.

import { WsServer } from '../../src/net/ws-server.js';
import { NO_RESPONSE } from '../../src/net/server-connection.js';
import type { RequestEnvelope } from '../../src/protocol/envelope.js';
import { ApiKey } from '../../src/protocol/api-keys.js';
import { parseMetadataRequest } from '../../src/protocol/apis/metadata.js';
import { parseProduceRequest } from '../../src/protocol/apis/produce.js';
import type { Body } from '../../src/protocol/body.js';
import { readBatchHeader, stampBatch, validateBatch, type BatchHeader } from '../../src/record/batch-header.js';
import { ProducerStateTable } from '../../src/replication/rules/producer-state.js';
import { decodeFetchedRecords, type ConsumedRecord } from '../../src/client/records.js';
import { Errors, SluiceError } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';

export type ProduceAction =
  | { readonly kind: 'error'; readonly code: number; readonly until?: Promise<void> }
  | { readonly kind: 'drop' }
  | { readonly kind: 'delay'; readonly until: Promise<void> };

export interface ProduceEvent {
  readonly brokerId: number;
  readonly topic: string;
  readonly partition: number;
  readonly header: BatchHeader;
  /** 0 when appended or answered as a duplicate. */
  readonly errorCode: number;
  readonly duplicate: boolean;
  readonly action: ProduceAction['kind'] | 'none';
}

interface PartitionLog {
  readonly batches: Buffer[];
  state: ProducerStateTable;
  endOffset: number;
}

export class FakeCluster {
  readonly urls: string[] = [];
  readonly events: ProduceEvent[] = [];
  readonly initCalls: Array<{ producerId: number; producerEpoch: number }> = [];
  onProduce: ((e: { brokerId: number; topic: string; partition: number; header: BatchHeader; attempt: number }) => ProduceAction | undefined) | null = null;
  private readonly servers: WsServer[] = [];
  private readonly logs = new Map<string, PartitionLog>();
  private readonly leaders = new Map<string, number>();
  private readonly attempts = new Map<string, number>();
  private nextProducerId = 1000;

  private constructor(private readonly topics: Map<string, number>) {}

  static async start(brokers: number, topics: Record<string, number>): Promise<FakeCluster> {
    const c = new FakeCluster(new Map(Object.entries(topics)));
    for (let id = 1; id <= brokers; id++) {
      const server = new WsServer((req) => c.handle(id, req), silentLogger);
      const addr = await server.listen({ host: '127.0.0.1', port: 0 });
      c.servers.push(server);
      c.urls.push(`ws://127.0.0.1:${addr.port}`);
    }
    for (const [t, n] of c.topics) for (let p = 0; p < n; p++) c.leaders.set(`${t}/${p}`, 1);
    return c;
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.close()));
  }

  /** -1: no leader (Metadata says LEADER_NOT_AVAILABLE). */
  setLeader(topic: string, partition: number, brokerId: number): void {
    this.leaders.set(`${topic}/${partition}`, brokerId);
  }

  /** Forgets the producer state of a partition (as if it expired): the next batch of a known producer gets UNKNOWN_PRODUCER_ID. */
  forgetProducers(topic: string, partition: number): void {
    const log = this.log(topic, partition);
    log.state = new ProducerStateTable(log.endOffset);
  }

  /** Every record of a partition, in offset order. */
  read(topic: string, partition: number): ConsumedRecord[] {
    return this.log(topic, partition).batches.flatMap((b) => decodeFetchedRecords(b, 0));
  }

  batchesOf(topic: string, partition: number): Buffer[] {
    return this.log(topic, partition).batches;
  }

  private log(topic: string, partition: number): PartitionLog {
    const key = `${topic}/${partition}`;
    let log = this.logs.get(key);
    if (!log) {
      log = { batches: [], state: new ProducerStateTable(0), endOffset: 0 };
      this.logs.set(key, log);
    }
    return log;
  }

  private handle(brokerId: number, req: RequestEnvelope): unknown {
    const body = req.body as Body;
    switch (req.apiKey) {
      case ApiKey.Metadata: return this.metadata(body);
      case ApiKey.InitProducerId: {
        const producerId = body.producerId as number;
        const producerEpoch = body.producerEpoch as number;
        this.initCalls.push({ producerId, producerEpoch });
        return producerId >= 0
          ? { errorCode: 0, errorMessage: null, producerId, producerEpoch: producerEpoch + 1 }
          : { errorCode: 0, errorMessage: null, producerId: this.nextProducerId++, producerEpoch: 0 };
      }
      case ApiKey.Produce: return this.produce(brokerId, body);
      default: throw new SluiceError(Errors.UNSUPPORTED_VERSION, `fake cluster: no api ${req.apiKey}`);
    }
  }

  private metadata(body: Body): unknown {
    const names = parseMetadataRequest(body).topics ?? [...this.topics.keys()];
    return {
      clusterId: 'fake', controllerId: 1,
      brokers: this.urls.map((url, i) => ({ nodeId: i + 1, url, rack: null })),
      topics: names.map((name) => {
        const n = this.topics.get(name);
        if (n === undefined) return { errorCode: Errors.UNKNOWN_TOPIC_OR_PARTITION.code, errorMessage: 'no such topic', name, topicId: null, partitions: [] };
        return {
          errorCode: 0, errorMessage: null, name, topicId: `id-${name}`,
          partitions: Array.from({ length: n }, (_, partition) => {
            const leader = this.leaders.get(`${name}/${partition}`) ?? -1;
            return {
              partition, errorCode: leader < 0 ? Errors.LEADER_NOT_AVAILABLE.code : 0, leader, leaderEpoch: 1,
              replicas: leader < 0 ? [] : [leader], isr: leader < 0 ? [] : [leader], offlineReplicas: [],
            };
          }),
        };
      }),
    };
  }

  private produce(brokerId: number, body: Body): unknown {
    const req = parseProduceRequest(body);
    const waits: Array<Promise<void>> = [];
    let drop = false;
    const topics = req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => {
        const r = this.producePartition(brokerId, t.name, p.partition, Buffer.from(p.records));
        if (r.action?.kind === 'drop') drop = true;
        if (r.action && 'until' in r.action && r.action.until) waits.push(r.action.until);
        return r.answer;
      }),
    }));
    if (drop || req.acks === 0) return NO_RESPONSE;
    return waits.length === 0 ? { topics } : Promise.all(waits).then(() => ({ topics }));
  }

  private producePartition(brokerId: number, topic: string, partition: number, batch: Buffer) {
    const answer = (errorCode: number, baseOffset = -1) => ({ partition, errorCode, errorMessage: errorCode === 0 ? null : `fake error ${errorCode}`, baseOffset, logStartOffset: 0 });
    if (!this.topics.has(topic) || partition >= this.topics.get(topic)!) return { answer: answer(Errors.UNKNOWN_TOPIC_OR_PARTITION.code), action: undefined };
    validateBatch(batch);
    const header = readBatchHeader(batch);
    const key = `${topic}/${partition}/${header.producerEpoch}/${header.baseSequence}`;
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    const record = (errorCode: number, duplicate: boolean, action: ProduceAction | undefined) =>
      this.events.push({ brokerId, topic, partition, header, errorCode, duplicate, action: action?.kind ?? 'none' });
    if (this.leaders.get(`${topic}/${partition}`) !== brokerId) {
      record(Errors.NOT_LEADER_OR_FOLLOWER.code, false, undefined);
      return { answer: answer(Errors.NOT_LEADER_OR_FOLLOWER.code), action: undefined };
    }
    const action = this.onProduce?.({ brokerId, topic, partition, header, attempt });
    if (action?.kind === 'error') {
      record(action.code, false, action);
      return { answer: answer(action.code), action };
    }
    const log = this.log(topic, partition);
    const facts = {
      producerId: Number(header.producerId), producerEpoch: header.producerEpoch, baseSequence: header.baseSequence,
      lastOffsetDelta: header.lastOffsetDelta, maxTimestamp: header.maxTimestamp,
    };
    const verdict = log.state.checkAppend([facts]);
    if (verdict.kind === 'reject') {
      record(verdict.error.code, false, action);
      return { answer: answer(verdict.error.code), action };
    }
    if (verdict.kind === 'duplicate') {
      record(0, true, action);
      return { answer: answer(0, verdict.firstOffset), action };
    }
    const baseOffset = log.endOffset;
    stampBatch(batch, 0, baseOffset, 1);
    log.batches.push(batch);
    log.state.apply({ ...facts, baseOffset });
    log.endOffset = baseOffset + header.lastOffsetDelta + 1;
    record(0, false, action);
    return { answer: answer(0, baseOffset), action };
  }
}
