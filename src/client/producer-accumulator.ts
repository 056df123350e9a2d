// Where send() leaves records: per-partition batches (producer-batch.ts)
// filling up until they are sealed, plus the buffer memory they hold.
//
// A partition's open batch is sealed when its records reach batchBytes, when
// a record with different acks arrives, when it is sent, while a flush is in
// progress, and while send() callers wait for buffer memory (holding records
// back then would only make them wait longer). Once lingerMs has passed since
// it was opened the batch is *ready*: the next request to its leader takes
// it. Until a request slot is free it keeps taking appends, as Kafka's
// accumulator does, so a producer whose requests are all in flight builds
// bigger batches instead of a queue of small ones (with lingerMs 0 under load
// that is what keeps batches large and latency flat). Sealing tells the
// partitioner, so a sticky partitioner moves on.
//
// A record is encoded into its batch's body buffer at append
// (src/record/batch-builder.ts): the accumulator keeps no record object,
// only the bytes and the record's outcome handlers, and the batch header is
// written when the sender takes the batch. batchBytes is compared with the
// records' real encoded (uncompressed) size: a record joins the open batch
// if its encoding fits in what is left, measured once as it is written. (The
// buffer memory still reserves an upper-bound estimate per record: it is
// reserved before the partition, and so the record's exact timestamp and
// offset deltas, is known.)
//
// A topic that refused a batch as too large (MESSAGE_TOO_LARGE: its
// max.message.bytes is below the batch) gets a smaller batch size from then
// on in this producer (splitRefused), so only the first batch pays for the
// split; the size never grows back (a producer does not learn that the
// topic's limit was raised).
//
// Invariant: a record's reserved bytes go back to the pool exactly once, when
// its batch is done (acknowledged or failed); a split batch hands its
// reservation to its pieces.

import { assert } from '../util/assert.js';
import type { Clock, Scheduler } from '../util/clock.js';
import type { Partitioner } from './partitioners.js';
import type { BodyBytes, BodyHeaders } from '../record/batch-builder.js';
import { PartitionQueue, type Acks, type PendingRecord, type ProducerBatch } from './producer-batch.js';
import { BufferPool } from './producer-memory.js';
import type { ResolvedProducerOptions } from './producer-options.js';

export class RecordAccumulator {
  readonly partitions = new Map<string, PartitionQueue>();
  /** The same queues by topic and partition index: looked up per record without building a key string. */
  private readonly byTopic = new Map<string, PartitionQueue[]>();
  readonly pool: BufferPool;
  private flushesInProgress = 0;
  private readonly doneListeners = new Map<ProducerBatch, Array<() => void>>();
  /** Batch sizes learned from MESSAGE_TOO_LARGE, by topic (below batchBytes). */
  private readonly learnedBatchBytes = new Map<string, number>();

  constructor(
    private readonly opts: ResolvedProducerOptions,
    private readonly partitioner: Partitioner,
    private readonly clock: Clock,
    scheduler: Scheduler,
  ) {
    this.pool = new BufferPool(opts.bufferBytesMax, scheduler);
  }

  queueFor(topic: string, partition: number): PartitionQueue {
    let queues = this.byTopic.get(topic);
    if (!queues) this.byTopic.set(topic, (queues = []));
    let q = queues[partition];
    if (!q) {
      q = new PartitionQueue(topic, partition, this.opts.idempotent, this.learnedBatchBytes.get(topic) ?? this.opts.batchBytes);
      queues[partition] = q;
      this.partitions.set(`${topic}\u0000${partition}`, q);
    }
    return q;
  }

  private existingQueue(topic: string, partition: number): PartitionQueue | undefined {
    return this.byTopic.get(topic)?.[partition];
  }

  /** Whether the record would open a new batch because the partition's open batch cannot take it. */
  openBatchRefuses(topic: string, partition: number, acks: Acks, key: BodyBytes, value: BodyBytes, headers: BodyHeaders | undefined, timestampMs: number): boolean {
    const q = this.existingQueue(topic, partition);
    const open = q?.openBatch();
    if (q === undefined || open === undefined || open.recordCount === 0) return false;
    return open.acks !== acks || open.recordBytes + open.body.measure(key, value, headers, timestampMs) > q.batchBytes;
  }

  /** Seals the partition's open batch, if any. */
  sealOpen(topic: string, partition: number): void {
    const open = this.existingQueue(topic, partition)?.openBatch();
    if (open) this.seal(open);
  }

  /**
   * Encodes a record (its memory, `reservedBytes`, already reserved) into
   * the partition's open batch, opening one if needed. `key`, `value` and
   * `headers` are copied into the batch: the caller may reuse them at once. Returns whether the sender has something
   * new to act on — a batch was opened (its linger timer, a transaction's
   * AddPartitions, a first InitProducerId) or sealed (it may go now) — so the
   * sender is woken per batch, not per record. An append to an open batch
   * changes nothing the sender waits for: a ready open batch that takes
   * appends is waiting for a request slot, and an answer wakes the sender.
   */
  append(
    topic: string, partition: number, acks: Acks, pending: PendingRecord, reservedBytes: number,
    key: BodyBytes, value: BodyBytes, headers: BodyHeaders | undefined, timestampMs: number,
  ): boolean {
    const q = this.queueFor(topic, partition);
    let batch = q.openBatch();
    let changed = false;
    if (batch && (batch.acks !== acks || batch.body.tryAppend(key, value, headers, timestampMs, q.batchBytes) < 0)) {
      this.seal(batch);
      batch = undefined;
    }
    if (!batch) {
      const now = this.clock.monotonicMs();
      batch = q.newBatch(acks, now + this.opts.lingerMs, now + this.opts.deliveryTimeoutMs);
      batch.body.append(key, value, headers, timestampMs);
      changed = true;
    }
    batch.records.push(pending);
    batch.reservedBytes += reservedBytes;
    if (batch.recordBytes >= q.batchBytes) {
      this.seal(batch);
      changed = true;
    }
    return changed;
  }

  /**
   * Seals every open batch while a flush or a memory waiter asks for it;
   * returns the earliest linger deadline still to come (Infinity if none),
   * when an open batch becomes ready to send.
   */
  sealDue(nowMs: number): number {
    const all = this.flushesInProgress > 0 || this.pool.hasWaiters;
    let next = Infinity;
    for (const q of this.partitions.values()) {
      const open = q.openBatch();
      if (!open) continue;
      if (all) this.seal(open);
      else if (open.lingerDeadlineMs > nowMs) next = Math.min(next, open.lingerDeadlineMs);
    }
    return next;
  }

  /** No more appends to `batch`: it goes out in a request now, or fails (a ready open batch is sealed here). */
  sealNow(batch: ProducerBatch): void {
    if (!batch.sealed) this.seal(batch);
  }

  /** Marks a batch done: its memory goes back to the pool and flush() waiters learn of it. */
  batchDone(batch: ProducerBatch): void {
    assert(!batch.done, 'a batch is done once');
    batch.done = true;
    this.pool.release(batch.reservedBytes);
    const listeners = this.doneListeners.get(batch);
    this.doneListeners.delete(batch);
    for (const l of listeners ?? []) l();
  }

  /**
   * Splits a batch the leader refused as too large (PartitionQueue.splitBatch,
   * pieces of at most half its records' bytes) and makes that the topic's
   * batch size from now on. The batch hands its memory and any flush()
   * waiting for it to its pieces: it is done once they all are.
   */
  splitRefused(q: PartitionQueue, batch: ProducerBatch): ProducerBatch[] {
    const limit = Math.max(1, Math.floor(batch.recordBytes / 2));
    if (limit < (this.learnedBatchBytes.get(q.topic) ?? this.opts.batchBytes)) {
      this.learnedBatchBytes.set(q.topic, limit);
      for (const other of this.byTopic.get(q.topic) ?? []) if (other !== undefined) other.batchBytes = Math.min(other.batchBytes, limit);
    }
    const pieces = q.splitBatch(batch, limit);
    batch.done = true;
    const listeners = this.doneListeners.get(batch);
    this.doneListeners.delete(batch);
    if (listeners !== undefined) {
      let left = pieces.length;
      const oneDone = (): void => {
        if (--left === 0) for (const l of listeners) l();
      };
      for (const piece of pieces) {
        const list = this.doneListeners.get(piece) ?? [];
        list.push(oneDone);
        this.doneListeners.set(piece, list);
      }
    }
    return pieces;
  }

  /**
   * Seals every batch and resolves once every batch that exists now is done
   * (acknowledged or failed). Batches opened meanwhile are sealed at once too.
   */
  async flush(wake: () => void): Promise<void> {
    this.flushesInProgress++;
    try {
      const batches = [...this.partitions.values()].flatMap((q) => [...q.inFlight, ...q.queue]);
      const waits = batches.filter((b) => !b.done).map((b) => new Promise<void>((resolve) => {
        const list = this.doneListeners.get(b) ?? [];
        list.push(resolve);
        this.doneListeners.set(b, list);
      }));
      wake();
      await Promise.all(waits);
    } finally {
      this.flushesInProgress--;
    }
  }

  private seal(batch: ProducerBatch): void {
    batch.sealed = true;
    this.partitioner.onBatchClosed?.(batch.topic, batch.partition);
  }
}
