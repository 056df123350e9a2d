// Handing fetched records to the application, in KafkaJS's shapes:
// `eachMessage` (one record at a time, awaited), `eachBatch` (one fetched
// chunk of a partition at a time), and the messages of the async iterator.
//
// Ordering: a partition's records are handed over in offset order and one
// at a time (the next handler call starts after the previous one resolved).
// Completion: a record is complete when its eachMessage resolved, when
// eachBatch resolved it (resolveOffset, or auto-resolve at the end), or, for
// the iterator, when the loop asks for the next message or leaves — only
// complete records' offsets are ever committed (at-least-once).
// Staleness: a chunk belongs to one version of its partition (Fetcher); once
// the partition is sought, revoked or lost, the rest of the chunk is dropped
// unprocessed. Pausing a partition mid-chunk rewinds its position to the
// first record not handed over, so resume() delivers it again.

import type { RecordHeader } from '../record/record-batch.js';
import type { Chunk } from './consumer-fetcher.js';
import type { ConsumedRecord } from './records.js';

/** A consumed record, as KafkaJS's `message` (offsets and timestamps are numbers here). */
export interface KafkaMessage {
  readonly offset: number;
  /** Milliseconds since the epoch (CreateTime, or LogAppendTime when the topic says so). */
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** In record order (a key may repeat). */
  readonly headers: readonly RecordHeader[];
}

/** What the async iterator yields. */
export interface ConsumerMessage extends KafkaMessage {
  readonly topic: string;
  readonly partition: number;
}

export interface EachMessagePayload {
  readonly topic: string;
  readonly partition: number;
  readonly message: KafkaMessage;
  /** Heartbeats run in the background; kept for KafkaJS compatibility. */
  heartbeat(): Promise<void>;
  /** Pauses this partition (the rest of the chunk comes again after resume); returns a function that resumes it. */
  pause(): () => void;
}

export interface Batch {
  readonly topic: string;
  readonly partition: number;
  readonly highWatermark: number;
  readonly messages: readonly KafkaMessage[];
  isEmpty(): boolean;
  firstOffset(): number | null;
  lastOffset(): number;
  /** Records after this batch below the high watermark. */
  offsetLag(): number;
}

export interface EachBatchPayload {
  readonly batch: Batch;
  /** Marks records up to and including `offset` complete. */
  resolveOffset(offset: number): void;
  heartbeat(): Promise<void>;
  /** Commits completed offsets now if auto-commit is due. */
  commitOffsetsIfNecessary(): Promise<void>;
  isRunning(): boolean;
  /** True once the partition was sought, revoked or lost: stop processing this batch. */
  isStale(): boolean;
  pause(): () => void;
}

export interface RunOptions {
  readonly eachMessage?: (payload: EachMessagePayload) => Promise<void>;
  readonly eachBatch?: (payload: EachBatchPayload) => Promise<void>;
  /** Resolve the whole batch when eachBatch returns. Default true. */
  readonly eachBatchAutoResolve?: boolean;
}

/** What delivery needs from the consumer. */
export interface DeliveryHost {
  isRunning(): boolean;
  /** False once the chunk's partition was sought, revoked or lost. */
  isCurrent(chunk: Chunk): boolean;
  isPaused(chunk: Chunk): boolean;
  /** Records `nextOffset` as the partition's completed position (if the chunk is still current). */
  complete(chunk: Chunk, nextOffset: number): void;
  /** Pauses the chunk's partition; returns its resume function. */
  pausePartition(chunk: Chunk): () => void;
  /** Moves the partition's position back to `offset` (records from there are fetched again). */
  rewind(chunk: Chunk, offset: number): void;
  commitIfDue(): Promise<void>;
}

export function toMessage(r: ConsumedRecord): KafkaMessage {
  return { offset: r.offset, timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headers };
}

const heartbeat = async (): Promise<void> => undefined;

/** Runs eachMessage over a chunk's records, in order, while the chunk stays current. */
export async function deliverEachMessage(host: DeliveryHost, chunk: Chunk, eachMessage: NonNullable<RunOptions['eachMessage']>): Promise<void> {
  for (const r of chunk.records) {
    if (!host.isRunning() || !host.isCurrent(chunk)) return;
    if (host.isPaused(chunk)) {
      host.rewind(chunk, r.offset);
      return;
    }
    await eachMessage({ topic: chunk.topic, partition: chunk.partition, message: toMessage(r), heartbeat, pause: () => host.pausePartition(chunk) });
    host.complete(chunk, r.offset + 1);
  }
}

export async function deliverEachBatch(host: DeliveryHost, chunk: Chunk, opts: RunOptions): Promise<void> {
  const messages = chunk.records.map(toMessage);
  const last = messages[messages.length - 1]!.offset;
  let resolved = messages[0]!.offset;
  const batch: Batch = {
    topic: chunk.topic, partition: chunk.partition, highWatermark: chunk.highWatermark, messages,
    isEmpty: () => messages.length === 0,
    firstOffset: () => messages[0]?.offset ?? null,
    lastOffset: () => last,
    offsetLag: () => Math.max(0, chunk.highWatermark - (last + 1)),
  };
  await opts.eachBatch!({
    batch,
    resolveOffset: (offset) => {
      if (offset + 1 <= resolved || offset > last) return;
      resolved = offset + 1;
      host.complete(chunk, resolved);
    },
    heartbeat,
    commitOffsetsIfNecessary: () => host.commitIfDue(),
    isRunning: () => host.isRunning(),
    isStale: () => !host.isCurrent(chunk),
    pause: () => host.pausePartition(chunk),
  });
  if ((opts.eachBatchAutoResolve ?? true) && host.isRunning() && host.isCurrent(chunk)) {
    resolved = last + 1;
    host.complete(chunk, resolved);
  }
  // Paused with records not resolved: they come again after resume().
  if (host.isCurrent(chunk) && host.isPaused(chunk) && resolved <= last) host.rewind(chunk, resolved);
}

/** The iterator's cursor over chunks: one record at a time, completing the previous one. */
export class MessageCursor {
  private chunk: Chunk | null = null;
  private index = 0;
  private held: { chunk: Chunk; nextOffset: number } | null = null;

  constructor(private readonly host: DeliveryHost) {}

  /** The record handed out last is complete (the loop asked for more, or left). */
  completeHeld(): void {
    if (this.held) this.host.complete(this.held.chunk, this.held.nextOffset);
    this.held = null;
  }

  /** The next record of the current chunk, or null when a new chunk is needed. */
  next(): ConsumerMessage | null {
    const c = this.chunk;
    if (!c || this.index >= c.records.length || !this.host.isCurrent(c)) {
      this.chunk = null;
      return null;
    }
    const r = c.records[this.index]!;
    if (this.host.isPaused(c)) {
      this.host.rewind(c, r.offset);
      this.chunk = null;
      return null;
    }
    this.index++;
    this.held = { chunk: c, nextOffset: r.offset + 1 };
    return { topic: c.topic, partition: c.partition, ...toMessage(r) };
  }

  load(chunk: Chunk): void {
    this.chunk = chunk;
    this.index = 0;
  }
}
