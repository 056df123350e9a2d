// Produce on the leaders of this broker (Kafka's ReplicaManager.appendRecords):
// each partition's batches are checked (CRC, decodable), checked against the
// partition's idempotent-producer state (a retried duplicate is answered
// with its original offsets instead of being appended again), stored in the
// topic's compression, and appended under the leader epoch. acks=0/1 are
// answered then; acks=all waits as a DelayedProduce (delayed-produce.ts) in
// this handler's purgatory until each batch's HW passes it, the ISR shrinks
// below min.insync.replicas, leadership moves, or the timeout.
//
// Durability: 'replication' (default, Kafka's) counts an appended batch
// toward the HW at once; 'fsync' counts it only once it is fsynced — by a
// group flush across partitions on the next scheduler turn after appends.

import type { Scheduler } from '../util/clock.js';
import { Errors } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { mutant } from '../util/mutants.js';
import { asBuffer } from '../util/node-bytes.js';
import { checkRecordBatches } from '../record/record-batch.js';
import { recompressBatches, topicCompression } from '../record/recompress.js';
import type { ProducePartitionResponse, ProduceRequest, ProduceResponse } from '../protocol/apis/produce.js';
import { Purgatory } from './delayed.js';
import { DelayedProduce, type ProduceWait } from './delayed-produce.js';
import type { HostedPartitions } from './hosted-partitions.js';
import type { Partition } from './partition.js';
import { failure, failureOf, NONE } from './partition-errors.js';
import type { ProducerStateStore } from './producer-state-store.js';

export type DurabilityMode = 'replication' | 'fsync';

export interface ProduceHandlerOptions {
  readonly hosted: HostedPartitions;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  readonly durability: DurabilityMode;
  readonly producerStates: ProducerStateStore;
  /** The HW of `p` moved (waiting produces and fetches re-check). */
  readonly onHighWatermarkMoved: (p: Partition) => void;
  /** New records in `p` (waiting fetches re-check). */
  readonly onAppended: (p: Partition) => void;
}

export class ProduceHandler {
  private readonly purgatory: Purgatory;
  /** Leader logs appended to since the last group flush (fsync mode). */
  private readonly unflushed = new Set<Partition>();
  private flushScheduled = false;
  private readonly hosted: HostedPartitions;

  constructor(private readonly opts: ProduceHandlerOptions) {
    this.hosted = opts.hosted;
    this.purgatory = new Purgatory(opts.scheduler);
  }

  /** acks=all produces waiting for replication (metrics). */
  get waiting(): number {
    return this.purgatory.size;
  }

  /** Appends to the leaders' logs; with acks=all, resolves once the HW passed every batch (or the timeout). */
  produce(req: ProduceRequest): Promise<ProduceResponse> | ProduceResponse {
    const waits: ProduceWait[] = [];
    const response: ProduceResponse = {
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((pd) => this.appendOne(req.acks, t.name, pd.partition, pd.records, waits)),
      })),
    };
    if (waits.length === 0) return response;
    return new Promise((resolve) => {
      const op = new DelayedProduce(waits, req.timeoutMs, response, resolve);
      this.purgatory.tryCompleteElseWatch(op, op.keys, req.timeoutMs);
    });
  }

  private appendOne(acks: number, topic: string, index: number, records: Buffer, waits: ProduceWait[]): ProducePartitionResponse {
    const out: ProducePartitionResponse = { partition: index, ...NONE, baseOffset: -1, logStartOffset: -1 };
    const p = this.hosted.find(topic, index);
    const problem = this.hosted.problemOf(p, topic, index, -1);
    if (problem) return Object.assign(out, failure(problem.error, problem.message));
    const leader = p!.leader!;
    const minIsr = this.hosted.minInsyncReplicas(topic);
    if (acks === -1 && !p!.hasEnoughReplicas(minIsr)) {
      return Object.assign(out, failure(Errors.NOT_ENOUGH_REPLICAS, `${p!.key} has ${p!.isr.length} in-sync replicas, min.insync.replicas is ${minIsr}`));
    }
    try {
      // Nothing is stored that a consumer could not decode: a CRC only
      // proves the bytes are what the producer sent (found by the fuzz test).
      checkRecordBatches(records);
      // Idempotence: a retried batch already in the log is answered with its original offsets, not appended again.
      const idem = this.opts.producerStates.checkProduce(p!, records);
      if (idem.kind === 'duplicate' && !mutant('idempotent-duplicate-append')) {
        out.baseOffset = idem.firstOffset;
        out.logStartOffset = p!.log.logStartOffset;
        if (acks === -1) waits.push({ p: p!, leader, lastOffset: idem.lastOffset, minIsr, out });
        return out;
      }
      const stored = this.storedForm(topic, records);
      // One CRC per append: checkRecordBatches verified it on `records`, and
      // a recompressed buffer's CRCs were just computed by its encoder.
      const info = p!.log.append(stored, { leaderEpoch: p!.leaderEpoch, crcChecked: true });
      out.baseOffset = info.baseOffset;
      out.logStartOffset = info.logStartOffset;
      this.afterLeaderAppend(p!);
      if (acks === -1) waits.push({ p: p!, leader, lastOffset: info.lastOffset, minIsr, out });
      // Last: should it fail, the batch is in the log and the table, behind it, is rebuilt at the next check.
      this.opts.producerStates.afterAppend(p!, stored);
    } catch (err) {
      Object.assign(out, failureOf(err));
    }
    return out;
  }

  /** The batches as the topic's compression.type stores them (recompress.ts): the same buffer for 'producer'. */
  private storedForm(topic: string, records: Buffer): Buffer {
    const type = this.hosted.topicConfig(topic, 'compression.type');
    if (type === null) return records;
    const target = topicCompression(type);
    return target === null ? records : asBuffer(recompressBatches(records, target));
  }

  /** The end of `p`'s log that counts toward the HW: the LEO, or in fsync mode the flushed end. */
  durableEnd(p: Partition): number {
    return this.opts.durability === 'fsync' ? p.log.recoveryPoint : p.log.logEndOffset;
  }

  /** Before `p` becomes leader in fsync mode: everything it holds is flushed, so it all counts. */
  flushForLeadership(p: Partition): void {
    if (this.opts.durability === 'fsync') p.log.flush();
  }

  private afterLeaderAppend(p: Partition): void {
    this.opts.onAppended(p);
    if (this.opts.durability === 'fsync') {
      this.unflushed.add(p);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        this.opts.scheduler.schedule(0, () => this.flushNow());
      }
      return;
    }
    if (p.onLocalAppend(p.log.logEndOffset)) this.opts.onHighWatermarkMoved(p);
  }

  /** Group commit: one fsync pass over every leader log appended to since the last pass. */
  flushNow(): void {
    this.flushScheduled = false;
    const batch = [...this.unflushed];
    this.unflushed.clear();
    for (const p of batch) {
      try {
        p.log.flushData();
      } catch (err) {
        this.opts.logger.error({ topic: p.topic, partition: p.index, err: (err as Error).message }, 'flush failed');
        continue;
      }
      if (p.onLocalAppend(p.log.recoveryPoint)) this.opts.onHighWatermarkMoved(p);
    }
  }

  /** Waiting produces of `p` re-check (its HW or ISR changed). */
  wake(p: Partition): void {
    this.purgatory.poke(p.key);
  }

  /** Waiting produces of `p` answer now (it changed hands). */
  answerNow(p: Partition): void {
    this.purgatory.completeKey(p.key);
  }

  /** `p` left this broker. */
  forget(p: Partition): void {
    this.unflushed.delete(p);
  }

  /** Shutdown: every waiting produce answers. */
  answerAll(): void {
    this.purgatory.completeAll();
  }
}
