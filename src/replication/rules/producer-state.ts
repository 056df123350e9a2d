// Idempotent-producer state of one partition (Kafka's ProducerStateManager,
// KIP-98 idempotence without transactions): for each producer id, its epoch
// and its last BATCHES_KEPT_PER_PRODUCER batches (first/last sequence,
// first/last offset). Pure: the shell (producer-state-store.ts) feeds it the
// header facts of batches and decides what to do with its verdicts.
//
// The leader checks a produce request's batches BEFORE appending them
// (checkAppend), in order, as if the earlier ones had been appended:
//   - producer id -1                  → append (not idempotent);
//   - epoch older than the producer's → INVALID_PRODUCER_EPOCH (fenced);
//   - same epoch, same first and last sequence as a retained batch
//                                     → duplicate: not appended, answered with
//                                       the original offsets;
//   - same epoch, first sequence = last sequence + 1 (wrapping at int32 max
//     to 0)                           → append;
//   - a newer epoch starting at 0     → append (its retained batches reset);
//   - an unknown producer starting at 0 → append;
//   - an unknown producer starting elsewhere → UNKNOWN_PRODUCER_ID (the state
//     is gone: expired, or its batches left the log; the producer must bump
//     its epoch and restart at 0 — we do not guess, unlike Kafka, which
//     accepts such a batch);
//   - anything else                   → OUT_OF_ORDER_SEQUENCE_NUMBER.
// A request mixing duplicates with new batches for one partition is refused
// (DUPLICATE_SEQUENCE_NUMBER): one base offset cannot answer both.
//
// Every appended batch — leader, follower, or read back from the log on load —
// goes through apply(), which never refuses: the log is the truth.
//
// Transactions (KIP-98, KIP-890): each producer's open transaction on this
// partition is the offset of its first transactional batch since its last
// marker (`currentTxnFirstOffset`); a COMMIT or ABORT marker (a control batch,
// record/control-batch.ts) closes it, and apply() returns the completed
// transaction so the shell can index an abort (storage/txn-index.ts) with the
// last stable offset of that moment. A marker at a newer epoch (the
// coordinator's KIP-890 part 2 bump) raises the producer's epoch, so late
// writes of the ended transaction are fenced, and its next batch starts at
// sequence 0. The partition's first unstable offset is the smallest open
// transaction's first offset. The leader's extra checks:
//   - a non-transactional batch from a producer with an open transaction
//                                     → INVALID_TXN_STATE;
//   - a marker at an older epoch       → INVALID_PRODUCER_EPOCH;
//   - a marker of an older coordinator epoch than the producer's last one
//                                     → TRANSACTION_COORDINATOR_FENCED;
//   - 'coordinator' batches (TxnOffsetCommit) carry base sequence -1: only
//     their epoch is checked and they keep no sequence.
//
// Invariants: every entry holds 0..BATCHES_KEPT_PER_PRODUCER batches, all of
// its epoch, in offset order, each below `endOffset` (none only after a
// marker or batches without sequence); `endOffset` is the log end offset this
// state reflects (every batch below it has been applied); `ongoing` maps
// exactly the producers whose currentTxnFirstOffset >= 0 to it.

import { assert } from '../../util/assert.js';
import { Errors, type ErrorInfo } from '../../util/errors.js';

/** Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN: also the producer's max in-flight batches per partition. */
export const BATCHES_KEPT_PER_PRODUCER = 5;
export const SEQUENCE_MAX = 0x7fff_ffff;
export const PRODUCER_EPOCH_MAX = 0x7fff;
export const NO_PRODUCER_ID = -1;

/** What a control batch said (record/control-batch.ts): a transaction marker, or another control record. */
export type ControlFacts =
  | { readonly kind: 'marker'; readonly committed: boolean; readonly coordinatorEpoch: number }
  | { readonly kind: 'other' };

/** The header facts of one batch that producer state looks at. */
export interface ProducerBatch {
  /** -1: not an idempotent batch. */
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  /** Records in the batch minus one (leader batches: validated by the log). */
  readonly lastOffsetDelta: number;
  readonly maxTimestamp: number;
  /** The transactional attribute (default false). */
  readonly isTransactional?: boolean;
  /** Set for a control batch: what it said (absent: a data batch). */
  readonly control?: ControlFacts;
}

/** Who appends: a producer, or a coordinator of this cluster (no sequence checks). */
export type AppendOrigin = 'client' | 'coordinator';

/** A batch as it lies in the log. */
export interface AppendedBatch extends ProducerBatch {
  readonly baseOffset: number;
}

/** One retained batch of a producer. */
export interface BatchRecord {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
}

export interface ProducerEntry {
  readonly producerId: number;
  readonly epoch: number;
  /** Oldest first; 0..BATCHES_KEPT_PER_PRODUCER, all written in `epoch`. */
  readonly batches: readonly BatchRecord[];
  /** Offset of the first batch of its open transaction on this partition; -1: none open. */
  readonly currentTxnFirstOffset: number;
  /** Coordinator epoch of its last marker; -1 before any. */
  readonly coordinatorEpoch: number;
  /** Offset of its last marker; -1 before any (a truncation at or below it needs a rebuild). */
  readonly lastMarkerOffset: number;
  /** Largest max timestamp of its batches: when it was last active (expiry). */
  readonly lastTimestampMs: number;
  /**
   * Offset of the first of its batches this state has seen: a truncation at or
   * below it removes every trace of the producer, one above it leaves older
   * batches in the log that this state no longer retains.
   */
  readonly firstOffset: number;
}

export type Verdict =
  | { readonly kind: 'append' }
  | { readonly kind: 'duplicate'; readonly firstOffset: number; readonly lastOffset: number }
  | { readonly kind: 'reject'; readonly error: ErrorInfo; readonly message: string };

const APPEND: Verdict = { kind: 'append' };

/** A transaction a marker ended: the producer's records in [firstOffset, lastOffset] (the marker's offset). */
export interface CompletedTxn {
  readonly producerId: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly aborted: boolean;
  /** The first unstable offset once it ended: another open transaction's first offset, else lastOffset + 1. */
  readonly lastStableOffset: number;
}

/** Sequence of the last record of a batch: the base plus the delta, wrapping past int32 max to 0. */
export function lastSequenceOf(baseSequence: number, lastOffsetDelta: number): number {
  return baseSequence > SEQUENCE_MAX - lastOffsetDelta ? lastOffsetDelta - (SEQUENCE_MAX - baseSequence) - 1 : baseSequence + lastOffsetDelta;
}

export function nextSequence(sequence: number): number {
  return sequence === SEQUENCE_MAX ? 0 : sequence + 1;
}

function reject(error: ErrorInfo, message: string): Verdict {
  return { kind: 'reject', error, message };
}

/** The verdict on one batch against the producer's entry (undefined: unknown producer). */
export function checkBatch(entry: ProducerEntry | undefined, b: ProducerBatch, origin: AppendOrigin = 'client'): Verdict {
  if (b.producerId < 0) return APPEND;
  const pid = b.producerId;
  if (b.control !== undefined) return checkMarker(entry, b);
  if (entry !== undefined && entry.currentTxnFirstOffset >= 0 && b.isTransactional !== true) {
    return reject(Errors.INVALID_TXN_STATE, `producer ${pid} has a transaction open on this partition since offset ${entry.currentTxnFirstOffset}; a non-transactional batch cannot join it`);
  }
  if (origin === 'coordinator') {
    if (b.producerEpoch < 0) return reject(Errors.INVALID_REQUEST, `batch of producer ${pid} has epoch ${b.producerEpoch}`);
    if (entry !== undefined && b.producerEpoch < entry.epoch) {
      return reject(Errors.INVALID_PRODUCER_EPOCH, `producer ${pid} epoch ${b.producerEpoch} is older than the current ${entry.epoch}`);
    }
    return APPEND;
  }
  if (b.producerEpoch < 0 || b.baseSequence < 0) {
    return reject(Errors.INVALID_REQUEST, `batch of producer ${pid} has epoch ${b.producerEpoch} and base sequence ${b.baseSequence}; both must be >= 0`);
  }
  if (entry === undefined) {
    if (b.baseSequence === 0) return APPEND;
    return reject(Errors.UNKNOWN_PRODUCER_ID, `no state for producer ${pid} (expired or gone from the log); its first batch starts at sequence ${b.baseSequence}, not 0`);
  }
  if (b.producerEpoch < entry.epoch) {
    return reject(Errors.INVALID_PRODUCER_EPOCH, `producer ${pid} epoch ${b.producerEpoch} is older than the current ${entry.epoch}`);
  }
  if (b.producerEpoch > entry.epoch) {
    if (b.baseSequence === 0) return APPEND;
    return reject(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, `producer ${pid} new epoch ${b.producerEpoch} must start at sequence 0, not ${b.baseSequence}`);
  }
  const lastSeq = lastSequenceOf(b.baseSequence, b.lastOffsetDelta);
  const dup = entry.batches.find((r) => r.firstSeq === b.baseSequence && r.lastSeq === lastSeq);
  if (dup) return { kind: 'duplicate', firstOffset: dup.firstOffset, lastOffset: dup.lastOffset };
  // No batch retained in this epoch (a marker bumped it, or only coordinator batches): the producer starts at 0.
  const newest = entry.batches[entry.batches.length - 1];
  const expected = newest === undefined ? 0 : nextSequence(newest.lastSeq);
  if (b.baseSequence === expected) return APPEND;
  return reject(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, `producer ${pid} epoch ${b.producerEpoch}: expected sequence ${expected}, got ${b.baseSequence}`);
}

/** The verdict on a marker (the coordinator's WriteTxnMarkers) against the producer's entry. */
export function checkMarker(entry: ProducerEntry | undefined, b: ProducerBatch): Verdict {
  const pid = b.producerId;
  if (b.producerEpoch < 0) return reject(Errors.INVALID_REQUEST, `marker of producer ${pid} has epoch ${b.producerEpoch}`);
  if (entry === undefined || b.control?.kind !== 'marker') return APPEND;
  if (b.producerEpoch < entry.epoch) {
    return reject(Errors.INVALID_PRODUCER_EPOCH, `marker of producer ${pid} at epoch ${b.producerEpoch}, older than the current ${entry.epoch}`);
  }
  if (b.control.coordinatorEpoch < entry.coordinatorEpoch) {
    return reject(Errors.TRANSACTION_COORDINATOR_FENCED,
      `marker of producer ${pid} from coordinator epoch ${b.control.coordinatorEpoch}, older than the last one's ${entry.coordinatorEpoch}`);
  }
  return APPEND;
}

/**
 * `entry` after appending `b` at `baseOffset` (a new entry for an unknown
 * producer or a new epoch). Every batch the log takes comes through here
 * (twice on a leader: checkAppend's overlay, then apply), so it builds the
 * entry as one object literal with every field: an object spread followed by
 * more fields (`{ ...base, batches }`) took V8's slow clone path, 6 µs a call
 * against 0.16 µs, 3-7 % of a broker's busy time per batch (issue 19).
 */
export function entryAfter(entry: ProducerEntry | undefined, b: ProducerBatch, baseOffset: number): ProducerEntry {
  const lastOffset = baseOffset + b.lastOffsetDelta;
  const newer = entry === undefined || b.producerEpoch > entry.epoch;
  const epoch = newer ? b.producerEpoch : entry.epoch;
  const kept = newer ? [] : entry.batches;
  const lastTimestampMs = Math.max(entry?.lastTimestampMs ?? b.maxTimestamp, b.maxTimestamp);
  const firstOffset = entry?.firstOffset ?? baseOffset;
  const coordinatorEpoch = entry?.coordinatorEpoch ?? -1;
  const lastMarkerOffset = entry?.lastMarkerOffset ?? -1;
  const open = entry?.currentTxnFirstOffset ?? -1;
  if (b.control !== undefined) {
    if (b.control.kind !== 'marker') {
      return { producerId: b.producerId, epoch, lastTimestampMs, firstOffset, batches: kept, currentTxnFirstOffset: open, coordinatorEpoch, lastMarkerOffset };
    }
    // A marker ends the open transaction (if any) and, at a newer epoch, starts the producer over at sequence 0.
    return {
      producerId: b.producerId, epoch, lastTimestampMs, firstOffset, batches: kept,
      currentTxnFirstOffset: -1, coordinatorEpoch: b.control.coordinatorEpoch, lastMarkerOffset: lastOffset,
    };
  }
  const batches = b.baseSequence < 0 ? kept : [...kept, {
    firstSeq: b.baseSequence,
    lastSeq: lastSequenceOf(b.baseSequence, b.lastOffsetDelta),
    firstOffset: baseOffset,
    lastOffset,
  }].slice(-BATCHES_KEPT_PER_PRODUCER);
  // An open transaction stays open across a new epoch: its records stay undecided until a marker.
  return {
    producerId: b.producerId, epoch, lastTimestampMs, firstOffset, batches,
    currentTxnFirstOffset: b.isTransactional === true && open < 0 ? baseOffset : open,
    coordinatorEpoch, lastMarkerOffset,
  };
}

/** A plain copy of the state (what the shell writes to a snapshot file). */
export interface ProducerStateSnapshot {
  readonly endOffset: number;
  readonly entries: readonly ProducerEntry[];
}

export class ProducerStateTable {
  private readonly entries = new Map<number, ProducerEntry>();
  /** Producers with an open transaction → its first offset (see the header's invariants). */
  private readonly ongoing = new Map<number, number>();
  private _endOffset: number;

  constructor(endOffset = 0) {
    assert(Number.isSafeInteger(endOffset) && endOffset >= 0, `bad producer state end offset ${endOffset}`);
    this._endOffset = endOffset;
  }

  /** The log end offset this state reflects. */
  get endOffset(): number {
    return this._endOffset;
  }

  get size(): number {
    return this.entries.size;
  }

  entry(producerId: number): ProducerEntry | undefined {
    return this.entries.get(producerId);
  }

  /** The first offset of the oldest open transaction, or null when none is open (the LSO is min(this, HW)). */
  get firstUnstableOffset(): number | null {
    let min: number | null = null;
    for (const first of this.ongoing.values()) if (min === null || first < min) min = first;
    return min;
  }

  /** Open transactions: producer id → first offset. */
  openTransactions(): ReadonlyMap<number, number> {
    return this.ongoing;
  }

  private setEntry(e: ProducerEntry): void {
    this.entries.set(e.producerId, e);
    if (e.currentTxnFirstOffset >= 0) this.ongoing.set(e.producerId, e.currentTxnFirstOffset);
    else this.ongoing.delete(e.producerId);
  }

  private deleteEntry(producerId: number): void {
    this.entries.delete(producerId);
    this.ongoing.delete(producerId);
  }

  /**
   * The verdict on a produce request's batches for this partition, checked in
   * order as if each earlier one had been appended. A rejection is the first
   * batch's that fails; all duplicates answer the first one's offsets (and
   * the last one's end, for acks=all to wait on).
   */
  checkAppend(batches: readonly ProducerBatch[], origin: AppendOrigin = 'client'): Verdict {
    const overlay = new Map<number, ProducerEntry>();
    let fresh = 0;
    let dupFirst = -1;
    let dupLast = -1;
    for (const b of batches) {
      if (b.producerId < 0) {
        fresh++;
        continue;
      }
      const current = overlay.get(b.producerId) ?? this.entries.get(b.producerId);
      const v = checkBatch(current, b, origin);
      if (v.kind === 'reject') return v;
      if (v.kind === 'duplicate') {
        if (dupFirst < 0) dupFirst = v.firstOffset;
        dupLast = Math.max(dupLast, v.lastOffset);
        continue;
      }
      fresh++;
      // Offsets are not known before the append; only sequences matter to the checks that follow.
      overlay.set(b.producerId, entryAfter(current, b, this._endOffset));
    }
    if (dupFirst < 0) return APPEND;
    if (fresh > 0) {
      return reject(Errors.DUPLICATE_SEQUENCE_NUMBER, 'the request mixes batches already appended with new ones; send the new batches on their own');
    }
    return { kind: 'duplicate', firstOffset: dupFirst, lastOffset: dupLast };
  }

  /**
   * Records a batch appended to the log at `b.baseOffset` (leader, follower
   * or log load): never refuses. Returns the transaction a marker ended, if
   * it ended one.
   */
  apply(b: AppendedBatch): CompletedTxn | null {
    assert(Number.isSafeInteger(b.baseOffset) && b.baseOffset >= this._endOffset,
      `producer state: batch at ${b.baseOffset} applied below the state's end ${this._endOffset}`);
    assert(b.lastOffsetDelta >= 0, `producer state: negative last offset delta ${b.lastOffsetDelta}`);
    this._endOffset = b.baseOffset + b.lastOffsetDelta + 1;
    if (b.producerId < 0 || b.producerEpoch < 0) return null;
    // An idempotent batch needs a sequence; transactional ones of a coordinator and markers have none.
    if (b.baseSequence < 0 && b.isTransactional !== true && b.control === undefined) return null;
    const before = this.entries.get(b.producerId);
    this.setEntry(entryAfter(before, b, b.baseOffset));
    if (b.control?.kind !== 'marker' || before === undefined || before.currentTxnFirstOffset < 0) return null;
    const lastOffset = b.baseOffset + b.lastOffsetDelta;
    const next = this.firstUnstableOffset;
    return {
      producerId: b.producerId,
      firstOffset: before.currentTxnFirstOffset,
      lastOffset,
      aborted: !b.control.committed,
      lastStableOffset: next ?? lastOffset + 1,
    };
  }

  /** The log holds no batch in [endOffset, offset) (it starts, or restarted, past it). */
  skipTo(offset: number): void {
    assert(Number.isSafeInteger(offset) && offset >= this._endOffset, `producer state: skipTo(${offset}) below the end ${this._endOffset}`);
    this._endOffset = offset;
  }

  /**
   * The log was cut to end at `offset` (whole batches only): forgets what lay
   * at or past it. Returns false when that leaves a producer whose older
   * batches are still in the log but no longer retained here, or cuts a
   * marker (the transaction it ended is open again, the epoch it raised
   * falls back) — the caller must then rebuild the state from the log.
   */
  truncateTo(offset: number): boolean {
    assert(Number.isSafeInteger(offset) && offset >= 0, `producer state: truncateTo(${offset})`);
    let exact = true;
    for (const [pid, e] of this.entries) {
      if (e.firstOffset >= offset) {
        this.deleteEntry(pid);
        continue;
      }
      if (e.lastMarkerOffset >= offset) exact = false;
      const kept = e.batches.filter((r) => r.lastOffset < offset);
      const txnCut = e.currentTxnFirstOffset >= offset;
      if (kept.length === e.batches.length && !txnCut) continue;
      if (kept.length === 0 && e.batches.length > 0) {
        exact = false;
        this.deleteEntry(pid);
      } else {
        this.setEntry({ ...e, batches: kept, currentTxnFirstOffset: txnCut ? -1 : e.currentTxnFirstOffset });
      }
    }
    this._endOffset = Math.min(this._endOffset, offset);
    return exact;
  }

  /** Forgets producers inactive since before `nowMs - expirationMs`, except those with an open transaction; returns how many. */
  expire(nowMs: number, expirationMs: number): number {
    let n = 0;
    for (const [pid, e] of this.entries) {
      if (e.lastTimestampMs < nowMs - expirationMs && e.currentTxnFirstOffset < 0) {
        this.deleteEntry(pid);
        n++;
      }
    }
    return n;
  }

  snapshot(): ProducerStateSnapshot {
    return { endOffset: this._endOffset, entries: [...this.entries.values()] };
  }

  /** A table from a snapshot, or null if it is malformed or breaks an invariant. */
  static fromSnapshot(s: unknown): ProducerStateTable | null {
    if (typeof s !== 'object' || s === null) return null;
    const { endOffset, entries } = s as { endOffset?: unknown; entries?: unknown };
    if (!isOffset(endOffset) || !Array.isArray(entries)) return null;
    const table = new ProducerStateTable(endOffset);
    for (const e of entries) {
      const entry = validEntry(e, endOffset);
      if (entry === null || table.entries.has(entry.producerId)) return null;
      table.setEntry(entry);
    }
    return table;
  }
}

function isOffset(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

function isInt(x: unknown, min: number, max: number): x is number {
  return typeof x === 'number' && Number.isInteger(x) && x >= min && x <= max;
}

function validEntry(e: unknown, endOffset: number): ProducerEntry | null {
  if (typeof e !== 'object' || e === null) return null;
  const o = e as Record<string, unknown>;
  if (!isOffset(o.producerId) || !isInt(o.epoch, 0, PRODUCER_EPOCH_MAX) || !isOffset(o.firstOffset)) return null;
  if (typeof o.lastTimestampMs !== 'number' || !Number.isSafeInteger(o.lastTimestampMs)) return null;
  if (!Array.isArray(o.batches) || o.batches.length > BATCHES_KEPT_PER_PRODUCER) return null;
  if (!isInt(o.currentTxnFirstOffset, -1, endOffset - 1) || !isInt(o.coordinatorEpoch, -1, 0x7fff_ffff) || !isInt(o.lastMarkerOffset, -1, endOffset - 1)) return null;
  const batches: BatchRecord[] = [];
  let prevEnd = o.firstOffset - 1;
  for (const r of o.batches as unknown[]) {
    const b = r as Record<string, unknown> | null;
    if (typeof b !== 'object' || b === null) return null;
    if (!isInt(b.firstSeq, 0, SEQUENCE_MAX) || !isInt(b.lastSeq, 0, SEQUENCE_MAX) || !isOffset(b.firstOffset) || !isOffset(b.lastOffset)) return null;
    if (b.firstOffset <= prevEnd || b.lastOffset < b.firstOffset || b.lastOffset >= endOffset) return null;
    if (lastSequenceOf(b.firstSeq, b.lastOffset - b.firstOffset) !== b.lastSeq) return null;
    prevEnd = b.lastOffset;
    batches.push({ firstSeq: b.firstSeq, lastSeq: b.lastSeq, firstOffset: b.firstOffset, lastOffset: b.lastOffset });
  }
  return {
    producerId: o.producerId, epoch: o.epoch, batches, lastTimestampMs: o.lastTimestampMs, firstOffset: o.firstOffset,
    currentTxnFirstOffset: o.currentTxnFirstOffset, coordinatorEpoch: o.coordinatorEpoch, lastMarkerOffset: o.lastMarkerOffset,
  };
}
