// The producer's per-partition state and the rules that keep an idempotent
// producer's retries from duplicating or reordering records. Pure: no
// timers, sockets or clocks (times are passed in), so the rules are tested
// without a broker.
//
// A partition has a queue of batches not yet acknowledged and not in flight
// (the last one may still be open for appends, until it is sent) and a list
// of batches in flight. Every batch gets an *ordinal* when it is created; both lists stay in
// ordinal order, and a batch that comes back for a retry is put back in its
// ordinal place. Batches are only ever sent from the head of the queue, so
// the batches ever sent are a prefix of the ordinals.
//
// Idempotence (KIP-98, without transactions). The producer has an identity
// (producer id, epoch). A batch gets its first sequence the first time it is
// sent (the partition's next sequence; it then advances by the batch's record
// count, wrapping at 2^31 - 1 to 0), and from then on the batch is always
// resent as the *same bytes*: the leader appends a sequence only right after
// the last one it appended, answers a repeat of one of its last 5 batches
// with the original offset (a duplicate, not appended again) and refuses a
// gap with OUT_OF_ORDER_SEQUENCE_NUMBER. So the broker enforces order; the
// producer's part is:
//   1. never give a batch that may have been appended a new sequence;
//   2. resend in sequence order: a batch coming back for a retry is resent
//      only when nothing of its partition is in flight, one at a time, and
//      later batches wait behind it; new batches go out only when no retry is
//      waiting, and never 5 or more batches past the oldest unresolved one —
//      the broker recognises a duplicate only among its last 5 batches, so a
//      batch whose answer was lost must stay among them until it is resent;
//   3. read OUT_OF_ORDER_SEQUENCE_NUMBER right: if an earlier batch was still
//      unresolved when this one was sent (or is now), the refusal is the
//      broker waiting for that one — retry in order, same sequence. If not,
//      the broker has no state continuing ours (its state was lost, or an
//      earlier batch failed for good and left a hole): the batch was not
//      appended and can never be under this identity, so it is *re-encoded*
//      under a new identity (sequence 0 again) — safe because it is known not
//      to be in the log — and so is every later batch of that identity in the
//      partition, whose sequences follow one that will never be appended.
//      Re-encoding writes a new batch header over the same record bodies
//      (src/record/batch-builder.ts: a record's offset and timestamp deltas do
//      not depend on the identity).
//      UNKNOWN_PRODUCER_ID is read the same way (the
//      leader has no state for us: not yet, or no longer), and so is
//      INVALID_PRODUCER_EPOCH (our epoch was fenced: nothing of it appends).
//   4. A batch that fails for good (a non-retriable error, or its delivery
//      timeout passed) leaves a hole in the sequence: the producer then takes
//      a new identity, but only once no batch of the old identity is in flight
//      or waiting to be resent (those are resolved under the old identity
//      first, since they may be in the log). Until then no new batch is sent.
//   5. A batch of several records refused MESSAGE_TOO_LARGE (the topic's
//      max.message.bytes is below it), none of whose earlier sends may have
//      been appended (mayBeInLog: every earlier answer was a refusal the
//      leader gives before appending), is known not in the log: it is split
//      into pieces of at most half its bytes that carry its sequences in
//      order under its identity, so nothing after it changes sequence, and
//      the pieces are resent as retries (splitBatch). Kafka's producer splits
//      such a batch too. Their ordinals share the batch's whole one.
//
// Invariants: in the queue, batches with a sequence come before batches
// without one; every batch holding a sequence carries the producer's current
// identity; batches sent but unresolved span fewer than
// IDEMPOTENT_IN_FLIGHT_MAX ordinals; a retry is sent only when nothing of its
// partition is in flight.

import { Errors, type SluiceError } from '../util/errors.js';
import { assert } from '../util/assert.js';
import { RecordBatchBuilder } from '../record/batch-builder.js';
import { decodeRecordBatch } from '../record/record-batch.js';

/** Sequences are int32 and wrap from 2^31 - 1 to 0. */
export const SEQUENCE_MAX = 0x7fffffff;
export const NO_SEQUENCE = -1;
/** The broker remembers the last 5 batches per producer, so at most 5 may be unresolved per partition. */
export const IDEMPOTENT_IN_FLIGHT_MAX = 5;

export function incrementSequence(sequence: number, by: number): number {
  assert(sequence >= 0 && sequence <= SEQUENCE_MAX && by >= 0, `bad sequence step ${sequence} + ${by}`);
  return (sequence + by) % (SEQUENCE_MAX + 1);
}

export interface ProducerIdentity {
  readonly producerId: bigint;
  readonly producerEpoch: number;
}

/** What a sent record resolves with. offset is -1 when unknown (acks=0, or a duplicate older than the broker remembers). */
export interface RecordMetadata {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

/** A record's outcome handlers; its bytes are already in its batch's `body`. */
export interface PendingRecord {
  readonly resolve: (meta: RecordMetadata) => void;
  readonly reject: (err: SluiceError) => void;
}

export type Acks = -1 | 0 | 1;

export class ProducerBatch {
  /** One per record appended to `body`, in the same order. */
  readonly records: PendingRecord[] = [];
  /** The records' bodies, encoded at append; the header is written when the batch is sent (encoded). */
  readonly body: RecordBatchBuilder;
  /** The producer memory the records reserved (their size estimates): given back once when the batch is done. */
  reservedBytes = 0;
  /** No more appends: the batch is full or sent, or a flush asked for it. */
  sealed = false;
  /** The identity and first sequence the bytes carry once the batch was first sent (idempotent producers). */
  identity: ProducerIdentity | null = null;
  baseSequence = NO_SEQUENCE;
  /** The batch's bytes as first sent; retries resend exactly these. */
  encoded: Uint8Array | null = null;
  attempts = 0;
  /** Monotonic ms before which a retry is not sent (backoff). */
  retryAtMs = 0;
  /** At its last send an earlier batch of the partition was unresolved (so OUT_OF_ORDER may just mean "wait for it"). */
  sentBehind = false;
  /** Known not appended, and unappendable under its identity: resend under a new identity. */
  reencode = false;
  lastError: SluiceError | null = null;
  done = false;
  /** The ordinals [ordinal, ordinal + ordinalSpan) are this batch's: 1, or a share of it for a piece of a split batch. */
  ordinalSpan = 1;
  /** An answered send's error (or none at all) left open whether the leader appended it (settle). */
  mayBeInLog = false;

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly acks: Acks,
    readonly ordinal: number,
    /** Monotonic ms from which the batch may be sent even if not full (it takes appends until it is). */
    readonly lingerDeadlineMs: number,
    /** Monotonic ms after which the batch fails rather than being (re)sent. */
    readonly deliveryDeadlineMs: number,
    /** What the bodies are expected to reach (batchBytes): sizes the body buffer. */
    bodyBytesHint = 16384,
    /** Bodies already encoded (a piece of a split batch); default a new, empty builder. */
    body?: RecordBatchBuilder,
  ) {
    this.body = body ?? new RecordBatchBuilder(bodyBytesHint);
  }

  /** The records' encoded bytes (uncompressed), what batchBytes is compared with. */
  get recordBytes(): number {
    return this.body.recordsBytes;
  }

  get recordCount(): number {
    return this.records.length;
  }

  get hasSequence(): boolean {
    return this.baseSequence !== NO_SEQUENCE;
  }

  /** Whether the batch may go in a request now: sealed, or open with its linger passed. */
  isReady(nowMs: number): boolean {
    return this.sealed || this.lingerDeadlineMs <= nowMs;
  }

  /** Forgets the identity and sequence (the batch is known not appended): it is sent again as a new batch. */
  clearSequence(): void {
    this.identity = null;
    this.baseSequence = NO_SEQUENCE;
    this.encoded = null;
    this.reencode = false;
    this.sentBehind = false;
  }
}

/** What to do with a batch after its partition's answer (or a failed request). */
export type Outcome =
  | { readonly kind: 'done'; readonly baseOffset: number }
  | { readonly kind: 'retry'; readonly error: SluiceError }
  | { readonly kind: 'reencode'; readonly error: SluiceError }
  | { readonly kind: 'split'; readonly error: SluiceError }
  | { readonly kind: 'fail'; readonly error: SluiceError; readonly hole: boolean };

export interface OutcomeContext {
  readonly idempotent: boolean;
  /** An earlier batch of the partition is in flight or waiting to be resent. */
  readonly earlierUnresolved: boolean;
  /** The batch's delivery deadline has passed. */
  readonly expired: boolean;
}

/**
 * The rule table. `error` is null for success; `baseOffset` is the
 * partition's answer. `hole` on a failure says the batch may have taken a
 * sequence the broker will never see, so the identity must be renewed.
 */
export function outcomeOf(batch: ProducerBatch, error: SluiceError | null, baseOffset: number, ctx: OutcomeContext): Outcome {
  if (error === null) return { kind: 'done', baseOffset };
  if (error.is(Errors.DUPLICATE_SEQUENCE_NUMBER)) return { kind: 'done', baseOffset: -1 };
  // Refused for its size (the topic's max.message.bytes is below the batch): smaller batches may pass, as in
  // Kafka's producer. Not when an earlier send may be in the log (its answer lost, the limit lowered since):
  // pieces with other sequence ranges would not be recognised as its duplicate.
  if (error.is(Errors.MESSAGE_TOO_LARGE) && batch.recordCount > 1 && !batch.mayBeInLog && !ctx.expired) return { kind: 'split', error };
  const sequenced = ctx.idempotent && batch.hasSequence;
  // Both mean "not appended, the leader cannot continue from here" (UNKNOWN_PRODUCER_ID: it has no
  // state for us yet, as when our first batch has not reached it). Waiting for an earlier batch cures that.
  const refusedSequence = error.is(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER) || error.is(Errors.UNKNOWN_PRODUCER_ID);
  if (sequenced && refusedSequence && (ctx.earlierUnresolved || batch.sentBehind)) {
    return ctx.expired ? { kind: 'fail', error, hole: true } : { kind: 'retry', error };
  }
  if (sequenced && (refusedSequence || error.is(Errors.INVALID_PRODUCER_EPOCH))) {
    return ctx.expired ? { kind: 'fail', error, hole: true } : { kind: 'reencode', error };
  }
  if (error.retriable && !ctx.expired) return { kind: 'retry', error };
  return { kind: 'fail', error, hole: sequenced };
}

/**
 * Answers a leader gives a batch only without appending it (checks that come
 * before the append). Any other error — a timeout, a lost connection,
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND — may follow an append.
 */
const REFUSED_BEFORE_APPEND = [
  Errors.NOT_LEADER_OR_FOLLOWER, Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.LEADER_NOT_AVAILABLE, Errors.NOT_ENOUGH_REPLICAS,
  Errors.FENCED_LEADER_EPOCH, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, Errors.UNKNOWN_PRODUCER_ID, Errors.INVALID_PRODUCER_EPOCH,
  Errors.CORRUPT_MESSAGE, Errors.MESSAGE_TOO_LARGE,
];

/** One partition's batches. */
export class PartitionQueue {
  /** Batches waiting to be sent or resent, in ordinal order; only the last may be open. */
  readonly queue: ProducerBatch[] = [];
  /** Batches sent and not yet answered, in ordinal order. */
  readonly inFlight: ProducerBatch[] = [];
  /** The sequence the next new batch gets (idempotent producers). */
  nextSequence = 0;
  private nextOrdinal = 0;
  /** The delivery deadline of the newest batch: deadlines never decrease with ordinals (takeExpired relies on it). */
  private lastDeliveryDeadlineMs = -Infinity;

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly idempotent: boolean,
    /**
     * Records' bytes at which a batch is full: the producer's batchBytes, or
     * less once the topic refused a batch as too large (splitBatch).
     */
    public batchBytes = 16384,
  ) {}

  /** The batch still taking appends, if any. */
  openBatch(): ProducerBatch | undefined {
    const last = this.queue.at(-1);
    return last && !last.sealed ? last : undefined;
  }

  newBatch(acks: Acks, lingerDeadlineMs: number, deliveryDeadlineMs: number): ProducerBatch {
    assert(this.openBatch() === undefined, 'a partition has at most one open batch');
    assert(deliveryDeadlineMs >= this.lastDeliveryDeadlineMs, 'delivery deadlines follow ordinals');
    this.lastDeliveryDeadlineMs = deliveryDeadlineMs;
    const batch = new ProducerBatch(this.topic, this.partition, acks, this.nextOrdinal++, lingerDeadlineMs, deliveryDeadlineMs, this.batchBytes);
    this.queue.push(batch);
    return batch;
  }

  /**
   * Moves the queued batches whose delivery deadline has passed into
   * `expired` (taken out of the queue, in order); returns the earliest
   * deadline still to come of a ready queued batch (Infinity if none). An
   * open batch counts from its linger on: until then it is still filling, and
   * after that only waiting for a request slot.
   *
   * O(expired + 1), not O(queue): deadlines never decrease with ordinals
   * (asserted in newBatch: every batch gets now + the same delivery timeout
   * from a monotonic clock) and the queue is in ordinal order, so the batches
   * due are a prefix of it and the first one not due ends the scan. Only the
   * last batch can be open, so a due batch that is not ready ends it too.
   */
  takeExpired(nowMs: number, expired: ProducerBatch[]): number {
    let n = 0;
    for (; n < this.queue.length; n++) {
      const batch = this.queue[n]!;
      if (batch.deliveryDeadlineMs > nowMs) break;
      if (!batch.isReady(nowMs)) {
        assert(n === this.queue.length - 1, 'only the last queued batch is open');
        break;
      }
    }
    if (n > 0) for (const b of this.queue.splice(0, n)) expired.push(b);
    const first = this.queue[0];
    return first !== undefined && first.deliveryDeadlineMs > nowMs && first.isReady(nowMs) ? first.deliveryDeadlineMs : Infinity;
  }

  get isIdle(): boolean {
    return this.queue.length === 0 && this.inFlight.length === 0;
  }

  /**
   * The head batch if it may be sent now. `identityReady`: the producer has
   * an identity and is not waiting to renew it.
   */
  sendable(nowMs: number, identity: { readonly ready: boolean; readonly renewing: boolean }): ProducerBatch | null {
    const head = this.queue[0];
    if (!head || !head.isReady(nowMs) || head.retryAtMs > nowMs) return null;
    if (!this.idempotent) return head;
    if (head.reencode) return null; // waits for the new identity
    if (head.hasSequence) return this.inFlight.length === 0 ? head : null; // a retry goes alone, in order
    if (!identity.ready || identity.renewing) return null;
    // The window: a batch whose fate is unknown stays recognisable as a duplicate only while fewer
    // than 5 later batches are appended after it, so nothing goes 5 or more past the oldest unresolved.
    return head.ordinal - this.oldestUnresolvedOrdinal() < IDEMPOTENT_IN_FLIGHT_MAX ? head : null;
  }

  /**
   * Ordinal of the earliest batch sent but not yet acknowledged or failed
   * (Infinity if none), rounded down: the pieces of a split batch share its
   * whole ordinal, so the window counts them as the one batch they were.
   * (They are resent one at a time before any later batch, so at most one of
   * them is unresolved when a new batch may go.)
   */
  private oldestUnresolvedOrdinal(): number {
    const queued = this.queue[0]?.hasSequence ? this.queue[0].ordinal : Infinity;
    return Math.floor(Math.min(this.inFlight[0]?.ordinal ?? Infinity, queued));
  }

  /** Moves the head batch (sealed for the send by the caller) in flight; a new batch of an idempotent producer takes the next sequence. */
  markSent(batch: ProducerBatch, identity: ProducerIdentity | null): void {
    assert(this.queue[0] === batch && batch.sealed, 'only the sealed head batch is sent');
    this.queue.shift();
    if (this.idempotent) {
      assert(identity !== null, 'an idempotent producer sends with an identity');
      if (!batch.hasSequence) {
        batch.identity = identity;
        batch.baseSequence = this.nextSequence;
        this.nextSequence = incrementSequence(this.nextSequence, batch.recordCount);
      }
      assert(batch.identity === identity, 'a sequenced batch carries the current identity');
    }
    batch.sentBehind = this.inFlight.length > 0;
    batch.attempts++;
    this.inFlight.push(batch);
  }

  /**
   * Takes an answered batch out of flight. `error` is the answer's (null:
   * appended); unless it is one the leader gives only before appending, the
   * batch may be in the log from now on.
   */
  settle(batch: ProducerBatch, error: SluiceError | null = null): void {
    const i = this.inFlight.indexOf(batch);
    assert(i >= 0, 'settled batch was in flight');
    this.inFlight.splice(i, 1);
    if (error !== null && !REFUSED_BEFORE_APPEND.some((e) => error.is(e))) batch.mayBeInLog = true;
  }

  /** Whether a batch earlier than `batch` is in flight or waiting to be resent. */
  hasEarlierUnresolved(batch: ProducerBatch): boolean {
    // Both lists are in ordinal order: their heads are their earliest.
    return (this.inFlight[0]?.ordinal ?? Infinity) < batch.ordinal || (this.queue[0]?.ordinal ?? Infinity) < batch.ordinal;
  }

  /**
   * Puts a settled batch back in the queue, in its ordinal place. Behind a
   * batch that must be re-encoded it must be re-encoded too: its sequence
   * follows one the broker will never append, so it cannot be appended either.
   */
  requeue(batch: ProducerBatch): void {
    assert(!this.inFlight.includes(batch) && !this.queue.includes(batch), 'requeued batch is settled');
    const at = this.queue.findIndex((b) => b.ordinal > batch.ordinal);
    this.queue.splice(at < 0 ? this.queue.length : at, 0, batch);
    if (batch.hasSequence && this.queue.some((b) => b.ordinal < batch.ordinal && b.reencode)) batch.reencode = true;
  }

  /**
   * Splits a settled batch the leader refused as MESSAGE_TOO_LARGE into
   * pieces whose records' bytes stay within `recordsBytesMax` (at least one
   * record each), in the batch's place in the queue, and returns them. The
   * pieces are sealed, ready at once and keep the batch's delivery deadline.
   * A sequenced batch's pieces keep its identity and carry its sequences in
   * order (piece i starts where piece i - 1 ended), so every later batch of
   * the partition keeps its sequence: the leader refused the batch, so it
   * expects exactly the batch's first sequence next, and the pieces are
   * resent as retries (one at a time, in order). Their ordinals lie between
   * the batch's and the next one's. The caller makes sure no earlier attempt
   * of the batch can be in the log (outcomeOf: !mayBeInLog).
   */
  splitBatch(batch: ProducerBatch, recordsBytesMax: number): ProducerBatch[] {
    assert(!this.inFlight.includes(batch) && !this.queue.includes(batch), 'a split batch is settled');
    assert(batch.recordCount > 1, 'a batch of one record cannot be split');
    const records = decodeRecordBatch(batch.body.build()).records;
    assert(records.length === batch.recordCount, 'every record of a batch is in its body');
    const groups: Array<{ body: RecordBatchBuilder; from: number; to: number }> = [];
    let current: { body: RecordBatchBuilder; from: number; to: number } | null = null;
    records.forEach((r, i) => {
      const headers = r.headers.length === 0 ? undefined : r.headers;
      if (current === null || current.body.tryAppend(r.key, r.value, headers, r.timestamp, recordsBytesMax) < 0) {
        current = { body: new RecordBatchBuilder(recordsBytesMax), from: i, to: i };
        current.body.append(r.key, r.value, headers, r.timestamp);
        groups.push(current);
      }
      current.to = i + 1;
    });
    let reservedLeft = batch.reservedBytes;
    let sequence = batch.baseSequence;
    const span = batch.ordinalSpan / groups.length;
    const pieces = groups.map((g, i) => {
      const piece = new ProducerBatch(this.topic, this.partition, batch.acks, batch.ordinal + i * span,
        0, batch.deliveryDeadlineMs, recordsBytesMax, g.body);
      piece.ordinalSpan = span;
      piece.records.push(...batch.records.slice(g.from, g.to));
      const reserved = i === groups.length - 1 ? reservedLeft : Math.floor(batch.reservedBytes * (g.to - g.from) / batch.recordCount);
      piece.reservedBytes = reserved;
      reservedLeft -= reserved;
      piece.sealed = true;
      piece.lastError = batch.lastError;
      if (batch.hasSequence) {
        piece.identity = batch.identity;
        piece.baseSequence = sequence;
        sequence = incrementSequence(sequence, g.to - g.from);
      }
      return piece;
    });
    for (const piece of pieces) this.requeue(piece);
    return pieces;
  }

  /** Requeues a batch known unappendable under its identity, and with it every later batch of that identity. */
  requeueForReencode(batch: ProducerBatch): void {
    this.requeue(batch);
    for (const b of this.queue) if (b.ordinal >= batch.ordinal && b.hasSequence) b.reencode = true;
  }

  /** Batches of the current identity that may be in the log but are not acknowledged: they block an identity renewal. */
  get holdsUnresolvedSequences(): boolean {
    return this.inFlight.length > 0 || this.queue.some((b) => b.hasSequence && !b.reencode);
  }

  /** After a new identity: sequences restart at 0, and batches known not appended are sent as new ones. */
  resetSequences(): void {
    assert(!this.holdsUnresolvedSequences, 'identity renewed while batches of the old one are unresolved');
    this.nextSequence = 0;
    for (const b of this.queue) if (b.hasSequence || b.reencode) b.clearSequence();
  }
}
