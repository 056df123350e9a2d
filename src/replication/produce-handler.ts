// Produce on the leaders of this broker (Kafka's ReplicaManager.appendRecords):
// each partition's batches are checked (CRC, decodable), checked against the
// partition's idempotent-producer state (a retried duplicate is answered
// with its original offsets instead of being appended again), stored in the
// topic's compression, and appended under the leader epoch. acks=0/1 are
// answered then; acks=all waits as a DelayedProduce (delayed-produce.ts) in
// this handler's purgatory until each batch's HW passes it, the ISR shrinks
// below min.insync.replicas, leadership moves, or the timeout.
//
// Transactions (KIP-98, KIP-890; docs/replication.md "Transactions"): a
// client may not write control batches (INVALID_RECORD) nor transactional
// ones without naming its transactionalId (INVALID_REQUEST); before the
// first transactional batch of a producer with no transaction open on the
// partition, the leader asks the TxnVerifier (the coordinator) whether the
// partition is in its open transaction, and appends only if so — and only if
// no marker for that producer landed meanwhile (INVALID_TXN_STATE). Batches
// of origin 'coordinator' skip the verification and the sequence rules.
// writeTxnMarkers appends the coordinator's COMMIT/ABORT markers (fenced by
// producer epoch and coordinator epoch), waits for them as acks=all, and
// tells the marker listeners of each one committed.
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
import { producerFactsIn } from './producer-state-scan.js';
import { recompressBatches, topicCompression } from '../record/recompress.js';
import type { ProducePartitionResponse, ProduceRequest, ProduceResponse } from '../protocol/apis/produce.js';
import type { TopicResults, TxnMarker, WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../protocol/apis/transactions.js';
import { encodeTxnMarker } from '../record/control-batch.js';
import type { TxnMarkerApplied, TxnRefusal, TxnVerifier } from './txn-seams.js';
import { Purgatory } from './delayed.js';
import { DelayedProduce, type ProduceWait } from './delayed-produce.js';
import type { HostedPartitions } from './hosted-partitions.js';
import { partitionKey, type Partition } from './partition.js';
import { failure, failureOf, NONE, type PartitionError } from './partition-errors.js';
import type { ProducerStateStore } from './producer-state-store.js';

export type DurabilityMode = 'replication' | 'fsync';

/**
 * Who asks for an append. 'client': a producer (every rule applies).
 * 'coordinator': a coordinator of this cluster writing to its internal topic
 * (the group coordinator's TxnOffsetCommit batches): transactional batches
 * with base sequence -1 are allowed and are not verified with the
 * transaction coordinator, which already checked the producer.
 */
export type ProduceOrigin = 'client' | 'coordinator';

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
  /** The coordinator to verify transactional writes with (KIP-890); none: they are appended unverified. */
  readonly txnVerifier: () => TxnVerifier | undefined;
  /** Every marker committed (the HW passed it) on a partition this broker leads. */
  readonly onMarkerCommitted: (m: TxnMarkerApplied) => void;
}

/** One partition of a produce request whose producer the coordinator must vouch for first. */
const verifyingKey = (topic: string, partition: number, producerId: number): string => `${partitionKey(topic, partition)}/${producerId}`;

interface Verification {
  readonly topic: string;
  readonly partition: number;
  readonly p: Partition;
  readonly producerId: number;
  readonly producerEpoch: number;
}

export class ProduceHandler {
  private readonly purgatory: Purgatory;
  /** Leader logs appended to since the last group flush (fsync mode). */
  private readonly unflushed = new Set<Partition>();
  private flushScheduled = false;
  private readonly hosted: HostedPartitions;
  /**
   * Verifications in flight, by partition and producer: a write of the same
   * producer to the same partition that arrives meanwhile (the client
   * pipelines up to five) waits until the verified one is appended, so it
   * neither overtakes it (an out-of-order sequence) nor asks the coordinator
   * again. Settled once the verified write's append has run.
   */
  private readonly verifying = new Map<string, Promise<void>>();

  constructor(private readonly opts: ProduceHandlerOptions) {
    this.hosted = opts.hosted;
    this.purgatory = new Purgatory(opts.scheduler);
  }

  /** acks=all produces waiting for replication (metrics). */
  get waiting(): number {
    return this.purgatory.size;
  }

  /**
   * Appends to the leaders' logs; with acks=all, resolves once the HW passed
   * every batch (or the timeout). Asynchronous also while the coordinator
   * verifies a transactional producer (KIP-890).
   */
  produce(req: ProduceRequest, origin: ProduceOrigin = 'client'): Promise<ProduceResponse> | ProduceResponse {
    const verifier = origin === 'client' && req.transactionalId ? this.opts.txnVerifier() : undefined;
    if (!verifier) return this.appendAll(req, origin, new Map());
    const ahead = this.verificationsAhead(req);
    // Checked again once they are appended: by then this write usually needs no question of its own.
    if (ahead.length > 0) return Promise.all(ahead).then(() => this.produce(req, origin));
    const checks = this.verificationsOf(req);
    if (checks.length === 0) return this.appendAll(req, origin, new Map());
    let settle!: () => void;
    const gate = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const keys = checks.map((c) => verifyingKey(c.topic, c.partition, c.producerId));
    for (const k of keys) this.verifying.set(k, gate);
    const done = (): void => {
      for (const k of keys) if (this.verifying.get(k) === gate) this.verifying.delete(k);
      settle();
    };
    return this.verify(verifier, req.transactionalId!, checks).then((refused) => {
      try {
        return this.appendAll(req, origin, refused);
      } finally {
        done();
      }
    }, (err: unknown) => {
      done();
      throw err;
    });
  }

  /** The verifications in flight that a transactional batch of `req` must wait for (same partition, same producer). */
  private verificationsAhead(req: ProduceRequest): Promise<void>[] {
    if (this.verifying.size === 0) return [];
    const out: Promise<void>[] = [];
    for (const t of req.topics) {
      for (const pd of t.partitions) {
        for (const b of producerFactsIn(pd.records) ?? []) {
          if (b.isTransactional !== true || b.producerId < 0) continue;
          const gate = this.verifying.get(verifyingKey(t.name, pd.partition, b.producerId));
          if (gate && !out.includes(gate)) out.push(gate);
        }
      }
    }
    return out;
  }

  private appendAll(req: ProduceRequest, origin: ProduceOrigin, refused: ReadonlyMap<string, PartitionError>): Promise<ProduceResponse> | ProduceResponse {
    const waits: ProduceWait[] = [];
    const response: ProduceResponse = {
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((pd) => {
          const refusal = refused.get(partitionKey(t.name, pd.partition));
          if (refusal) return { partition: pd.partition, ...refusal, baseOffset: -1, logStartOffset: -1 };
          return this.appendOne(req, origin, t.name, pd.partition, pd.records, waits);
        }),
      })),
    };
    return this.awaitReplication(waits, req.timeoutMs, response);
  }

  private awaitReplication<T>(waits: ProduceWait[], timeoutMs: number, response: T): Promise<T> | T {
    if (waits.length === 0) return response;
    return new Promise((resolve) => {
      const op = new DelayedProduce<T>(waits, timeoutMs, response, resolve);
      this.purgatory.tryCompleteElseWatch(op, op.keys, timeoutMs);
    });
  }

  /** The partitions of `req` whose transactional producer has no transaction open there yet (checked again at the append). */
  private verificationsOf(req: ProduceRequest): Verification[] {
    const out: Verification[] = [];
    for (const t of req.topics) {
      for (const pd of t.partitions) {
        const p = this.hosted.find(t.name, pd.partition);
        if (!p?.leader) continue;
        const facts = producerFactsIn(pd.records);
        if (facts === null) continue;
        const seen = new Set<number>();
        for (const b of facts) {
          if (b.isTransactional !== true || b.control !== undefined || b.producerId < 0 || seen.has(b.producerId)) continue;
          seen.add(b.producerId);
          try {
            if (this.opts.producerStates.needsVerification(p, b.producerId, b.producerEpoch)) {
              out.push({ topic: t.name, partition: pd.partition, p, producerId: b.producerId, producerEpoch: b.producerEpoch });
            }
          } catch {
            // The producer state could not be read (a storage error): appendOne answers it.
          }
        }
      }
    }
    return out;
  }

  /** Asks the coordinator about each partition; the refusals by partition key (a marker landing meanwhile is one too). */
  private async verify(verifier: TxnVerifier, transactionalId: string, checks: readonly Verification[]): Promise<Map<string, PartitionError>> {
    const refused = new Map<string, PartitionError>();
    await Promise.all(checks.map(async (c) => {
      const guard = this.opts.producerStates.txnGuard(c.p, c.producerId);
      let answer: TxnRefusal | null;
      try {
        answer = await verifier.verify({ transactionalId, producerId: c.producerId, producerEpoch: c.producerEpoch, topic: c.topic, partition: c.partition });
      } catch (err) {
        this.opts.logger.warn({ topic: c.topic, partition: c.partition, err: (err as Error).message }, 'transaction verification failed');
        answer = { error: Errors.COORDINATOR_NOT_AVAILABLE, message: `could not verify the transaction of ${transactionalId}: ${(err as Error).message}` };
      }
      const key = partitionKey(c.topic, c.partition);
      if (answer !== null) refused.set(key, failure(answer.error, answer.message));
      else if (c.p.log.isClosed || this.opts.producerStates.txnGuard(c.p, c.producerId) !== guard) {
        refused.set(key, failure(Errors.INVALID_TXN_STATE, `a transaction marker of producer ${c.producerId} reached ${key} while its transaction was verified`));
      }
    }));
    return refused;
  }

  /** Why a client may not append these batches (transactional rules), or null. */
  private clientProblem(req: ProduceRequest, records: Buffer): PartitionError | null {
    const facts = producerFactsIn(records);
    if (facts === null) return null; // the log's validation says why
    for (const b of facts) {
      if (b.control !== undefined) return failure(Errors.INVALID_RECORD, 'clients may not write control batches');
      if (b.isTransactional !== true) continue;
      if (b.producerId < 0) return failure(Errors.INVALID_RECORD, 'a transactional batch needs a producer id');
      if (!req.transactionalId) return failure(Errors.INVALID_REQUEST, 'transactional batches need the producer\'s transactionalId in the request');
    }
    return null;
  }

  private appendOne(req: ProduceRequest, origin: ProduceOrigin, topic: string, index: number, records: Buffer, waits: ProduceWait[]): ProducePartitionResponse {
    const acks = req.acks;
    const out: ProducePartitionResponse = { partition: index, ...NONE, baseOffset: -1, logStartOffset: -1 };
    const p = this.hosted.find(topic, index);
    const problem = this.hosted.problemOf(p, topic, index, -1);
    if (problem) return Object.assign(out, failure(problem.error, problem.message));
    if (origin === 'client') {
      const refusal = this.clientProblem(req, records);
      if (refusal) return Object.assign(out, refusal);
    }
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
      const idem = this.opts.producerStates.checkProduce(p!, records, origin);
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

  /**
   * Appends the coordinator's markers (WriteTxnMarkers) to the partitions this
   * broker leads and waits for each as acks=all, up to `timeoutMs`; every
   * marker committed is told to the marker listeners. Per-partition errors:
   * not the leader, too few in-sync replicas, INVALID_PRODUCER_EPOCH or
   * TRANSACTION_COORDINATOR_FENCED (producer-state rules), storage errors.
   */
  writeTxnMarkers(req: WriteTxnMarkersRequest, timeoutMs: number, nowMs: number): Promise<WriteTxnMarkersResponse> | WriteTxnMarkersResponse {
    const waits: ProduceWait[] = [];
    const written: Array<{ applied: Omit<TxnMarkerApplied, 'offset'>; out: ProducePartitionResponse }> = [];
    const response: WriteTxnMarkersResponse = {
      markers: req.markers.map((m) => ({
        producerId: m.producerId,
        topics: m.topics.map((t): TopicResults => ({
          name: t.name,
          partitions: t.partitions.map((index) => {
            const out = this.appendMarker(m, t.name, index, nowMs, waits);
            if (out.errorCode === 0) {
              written.push({
                applied: { topic: t.name, partition: index, producerId: m.producerId, producerEpoch: m.producerEpoch, committed: m.transactionResult, coordinatorEpoch: m.coordinatorEpoch },
                out,
              });
            }
            return out;
          }),
        })),
      })),
    };
    const finish = (): WriteTxnMarkersResponse => {
      for (const w of written) if (w.out.errorCode === 0) this.opts.onMarkerCommitted({ ...w.applied, offset: w.out.baseOffset });
      return {
        markers: response.markers.map((m) => ({
          producerId: m.producerId,
          topics: m.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((o) => ({ partition: o.partition, errorCode: o.errorCode, errorMessage: o.errorMessage })) })),
        })),
      };
    };
    const waited = this.awaitReplication(waits, timeoutMs, response);
    return waited instanceof Promise ? waited.then(finish) : finish();
  }

  private appendMarker(m: TxnMarker, topic: string, index: number, nowMs: number, waits: ProduceWait[]): ProducePartitionResponse {
    const out: ProducePartitionResponse = { partition: index, ...NONE, baseOffset: -1, logStartOffset: -1 };
    const p = this.hosted.find(topic, index);
    const problem = this.hosted.problemOf(p, topic, index, -1);
    if (problem) return Object.assign(out, failure(problem.error, problem.message));
    const leader = p!.leader!;
    const minIsr = this.hosted.minInsyncReplicas(topic);
    if (!p!.hasEnoughReplicas(minIsr)) {
      return Object.assign(out, failure(Errors.NOT_ENOUGH_REPLICAS, `${p!.key} has ${p!.isr.length} in-sync replicas, min.insync.replicas is ${minIsr}`));
    }
    try {
      const verdict = this.opts.producerStates.checkMarker(p!, m.producerId, m.producerEpoch, m.transactionResult, m.coordinatorEpoch);
      if (verdict.kind === 'reject') return Object.assign(out, failure(verdict.error, verdict.message));
      const marker = asBuffer(encodeTxnMarker({
        producerId: m.producerId, producerEpoch: m.producerEpoch, committed: m.transactionResult, coordinatorEpoch: m.coordinatorEpoch, timestampMs: nowMs,
      }));
      const info = p!.log.append(marker, { leaderEpoch: p!.leaderEpoch, crcChecked: true });
      out.baseOffset = info.baseOffset;
      out.logStartOffset = info.logStartOffset;
      this.afterLeaderAppend(p!);
      waits.push({ p: p!, leader, lastOffset: info.lastOffset, minIsr, out });
      this.opts.producerStates.afterAppend(p!, marker);
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
