// The transaction coordinator's decisions (Kafka's TransactionMetadata and
// the request half of TransactionCoordinator), pure: each function takes a
// transactional id's durable state, a request and the time, and returns what
// to do — answer at once, or persist a new state to __transaction_state and
// answer once it is replicated — and changes nothing. The shell
// (coordinator.ts) does the writes, the markers and the timers.
//
// States and transitions (trigger → next; every transition is persisted):
//   (none)            InitProducerId                         → Empty at epoch 0 (a fresh producer id)
//   Empty|Complete*   InitProducerId                         → Empty at epoch + 1 (fences older instances)
//   Ongoing           InitProducerId                         → PrepareAbort at epoch + 1, answer CONCURRENT_TRANSACTIONS
//                                                              (Kafka's PrepareEpochFence: the open transaction is aborted
//                                                              with markers at the new epoch, which fence the old producer)
//   Empty|Ongoing|Complete*  AddPartitionsToTxn/AddOffsetsToTxn → Ongoing with the partitions added
//   Ongoing           EndTxn                                 → PrepareCommit|PrepareAbort (at epoch + 1 with bumpEpoch)
//   Empty|Complete*   EndTxn with bumpEpoch (nothing sent)   → CompleteCommit|CompleteAbort at epoch + 1, no markers
//   Prepare*          markers written (shell: complete())    → CompleteCommit|CompleteAbort, partitions cleared
//   Ongoing           transaction.timeout.ms passed (expire) → PrepareAbort at epoch + 1 (the producer is fenced)
//   Empty|Complete*   transactional.id.expiration.ms idle    → Dead (a tombstone: the id is forgotten)
// While a transition's write is in flight (the shell tracks it) or markers
// are being written (Prepare*), requests answer CONCURRENT_TRANSACTIONS.
//
// Epochs: the producer's epoch never goes down. A bump that hands the epoch to
// the producer (InitProducerId, EndTxn bumpEpoch) rotates to a fresh producer
// id at epoch 0 instead of reaching PRODUCER_EPOCH_MAX; a fence (timeout,
// InitProducerId over an open transaction) may take the epoch to the max,
// since the next InitProducerId rotates. `lastProducer` is the producer id and
// epoch before the last bump: an EndTxn retried at it is recognised and
// answered with the epoch it ended at, and InitProducerId (KIP-360) accepts it.
//
// Invariants: `partitions` is sorted and has no duplicates; it is empty unless
// the state is Ongoing or Prepare*; `markers` is set exactly in Prepare* and
// Complete* (who the markers are for); startTimeMs is -1 unless a transaction
// is open (Ongoing, Prepare*).

import { Errors, type ErrorInfo } from '../util/errors.js';
import { mutant } from '../util/mutants.js';
import { PRODUCER_EPOCH_MAX } from '../replication/rules/producer-state.js';
import type { TransactionStateName } from '../protocol/apis/transactions.js';

export type TxnState = Exclude<TransactionStateName, 'PrepareEpochFence'>;

export interface TxnPartition { readonly topic: string; readonly partition: number }

export interface ProducerIdAndEpoch { readonly producerId: number; readonly producerEpoch: number }

export interface TxnMetadata {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  /** The producer id and epoch before the last bump; null when there was none. */
  readonly lastProducer: ProducerIdAndEpoch | null;
  readonly timeoutMs: number;
  readonly state: TxnState;
  /** The transaction's partitions (Ongoing, Prepare*), sorted by topic then partition, no duplicates. */
  readonly partitions: readonly TxnPartition[];
  /** Prepare*, Complete*: the producer id and epoch the markers carry (the epoch the transaction ended at). */
  readonly markers: ProducerIdAndEpoch | null;
  /** Wall-clock ms the open transaction began (its first partition); -1 when none is open. */
  readonly startTimeMs: number;
  /** Wall-clock ms of the last transition (DescribeTransactions, id expiration). */
  readonly updateTimeMs: number;
  /** The last transaction was aborted by the coordinator (timeout, a new instance), not ended by its producer. */
  readonly coordinatorAborted: boolean;
}

export interface Refusal { readonly error: ErrorInfo; readonly message: string }

/** What the shell does with a request. */
export type Decision<R> =
  | { readonly kind: 'answer'; readonly response: R }
  | { readonly kind: 'refuse'; readonly refusal: Refusal }
  /** Write `next`; once replicated, answer `response` (or `refusal`, when the transition itself is the answer's reason). */
  | { readonly kind: 'persist'; readonly next: TxnMetadata; readonly response: R | Refusal }
  /** The transition rotates the producer id: call again with a fresh one. */
  | { readonly kind: 'needProducerId' };

export interface Limits {
  /** transaction.max.timeout.ms */
  readonly maxTimeoutMs: number;
}

const refuse = (error: ErrorInfo, message: string): { kind: 'refuse'; refusal: Refusal } => ({ kind: 'refuse', refusal: { error, message } });
export const isRefusal = (r: unknown): r is Refusal => typeof r === 'object' && r !== null && 'error' in r && 'message' in r;

/** Same producer id and epoch. */
const same = (a: ProducerIdAndEpoch | null, producerId: number, producerEpoch: number): boolean =>
  a !== null && a.producerId === producerId && a.producerEpoch === producerEpoch;

export function isOpen(state: TxnState): boolean {
  return state === 'Ongoing' || state === 'PrepareCommit' || state === 'PrepareAbort';
}

function isSettled(state: TxnState): boolean {
  return state === 'Empty' || state === 'CompleteCommit' || state === 'CompleteAbort';
}

/** The epoch a producer is handed next, or null: rotate to a fresh producer id (epoch 0). */
function handedBump(epoch: number): number | null {
  return epoch + 1 < PRODUCER_EPOCH_MAX ? epoch + 1 : null;
}

// ---- InitProducerId ----------------------------------------------------------------

export interface InitRequest {
  readonly transactionalId: string;
  readonly timeoutMs: number;
  /** KIP-360: the producer's current id and epoch, -1/-1 for a new producer. */
  readonly producerId: number;
  readonly producerEpoch: number;
}

/**
 * InitProducerId for a transactional id whose state is `meta` (undefined:
 * unknown). `freshProducerId` is given once a previous call said needProducerId.
 */
export function decideInit(meta: TxnMetadata | undefined, req: InitRequest, nowMs: number, limits: Limits, freshProducerId?: number): Decision<ProducerIdAndEpoch> {
  if (!Number.isSafeInteger(req.timeoutMs) || req.timeoutMs <= 0 || req.timeoutMs > limits.maxTimeoutMs) {
    return refuse(Errors.INVALID_TRANSACTION_TIMEOUT, `transaction timeout ${req.timeoutMs} ms is not within [1, transaction.max.timeout.ms = ${limits.maxTimeoutMs}]`);
  }
  if ((req.producerId < 0) !== (req.producerEpoch < 0)) {
    return refuse(Errors.INVALID_REQUEST, `producerId ${req.producerId} and producerEpoch ${req.producerEpoch}: give both or neither`);
  }
  if (meta === undefined || meta.state === 'Dead') {
    if (freshProducerId === undefined) return { kind: 'needProducerId' };
    const next: TxnMetadata = {
      transactionalId: req.transactionalId, producerId: freshProducerId, producerEpoch: 0, lastProducer: null, timeoutMs: req.timeoutMs,
      state: 'Empty', partitions: [], markers: null, startTimeMs: -1, updateTimeMs: nowMs, coordinatorAborted: false,
    };
    return { kind: 'persist', next, response: { producerId: freshProducerId, producerEpoch: 0 } };
  }
  if (req.producerId >= 0 && !same({ producerId: meta.producerId, producerEpoch: meta.producerEpoch }, req.producerId, req.producerEpoch)
    && !same(meta.lastProducer, req.producerId, req.producerEpoch)) {
    return refuse(Errors.PRODUCER_FENCED, `producer ${req.producerId} epoch ${req.producerEpoch} is not the current one of ${meta.transactionalId} (${meta.producerId} epoch ${meta.producerEpoch})`);
  }
  if (meta.state === 'PrepareCommit' || meta.state === 'PrepareAbort') {
    return refuse(Errors.CONCURRENT_TRANSACTIONS, `the last transaction of ${meta.transactionalId} is still being completed (${meta.state})`);
  }
  if (meta.state === 'Ongoing') {
    return { kind: 'persist', next: fenceAndAbort(meta, nowMs), response: { error: Errors.CONCURRENT_TRANSACTIONS, message: `aborting the open transaction of ${meta.transactionalId} first` } };
  }
  const epoch = handedBump(meta.producerEpoch);
  let producer: ProducerIdAndEpoch;
  if (epoch !== null) producer = { producerId: meta.producerId, producerEpoch: epoch };
  else if (freshProducerId === undefined) return { kind: 'needProducerId' };
  else producer = { producerId: freshProducerId, producerEpoch: 0 };
  const next: TxnMetadata = {
    ...meta, ...producer, lastProducer: { producerId: meta.producerId, producerEpoch: meta.producerEpoch }, timeoutMs: req.timeoutMs,
    state: 'Empty', partitions: [], markers: null, startTimeMs: -1, updateTimeMs: nowMs, coordinatorAborted: false,
  };
  return { kind: 'persist', next, response: producer };
}

/** The coordinator's abort of an open transaction: PrepareAbort at epoch + 1, so its markers fence the producer. */
function fenceAndAbort(meta: TxnMetadata, nowMs: number): TxnMetadata {
  // Handed epochs stay below the max (handedBump), so a fence always has room.
  const epoch = Math.min(meta.producerEpoch + 1, PRODUCER_EPOCH_MAX);
  return {
    ...meta, producerEpoch: epoch, lastProducer: { producerId: meta.producerId, producerEpoch: meta.producerEpoch },
    state: 'PrepareAbort', markers: { producerId: meta.producerId, producerEpoch: epoch }, updateTimeMs: nowMs, coordinatorAborted: true,
  };
}

// ---- checks shared by the per-transaction requests ---------------------------------------

/** Whether a request at (producerId, producerEpoch) speaks for the id's current producer. */
function producerProblem(meta: TxnMetadata | undefined, transactionalId: string, producerId: number, producerEpoch: number): Refusal | null {
  if (meta === undefined || meta.state === 'Dead') {
    return { error: Errors.INVALID_PRODUCER_ID_MAPPING, message: `no producer is registered for transactional id ${transactionalId} (InitProducerId first)` };
  }
  if (producerId !== meta.producerId) {
    return { error: Errors.INVALID_PRODUCER_ID_MAPPING, message: `transactional id ${transactionalId} belongs to producer ${meta.producerId}, not ${producerId}` };
  }
  if (producerEpoch !== meta.producerEpoch && !mutant('txn-coordinator-accepts-stale-epoch')) {
    return { error: Errors.PRODUCER_FENCED, message: `producer ${producerId} epoch ${producerEpoch} is fenced: ${transactionalId} is at epoch ${meta.producerEpoch}` };
  }
  return null;
}

// ---- AddPartitionsToTxn / AddOffsetsToTxn ---------------------------------------------

export interface AddRequest {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly partitions: readonly TxnPartition[];
}

function comparePartitions(a: TxnPartition, b: TxnPartition): number {
  return a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition;
}

/** Sorted, without duplicates. */
export function normalizePartitions(ps: readonly TxnPartition[]): TxnPartition[] {
  const sorted = [...ps].sort(comparePartitions);
  return sorted.filter((p, i) => i === 0 || comparePartitions(sorted[i - 1]!, p) !== 0);
}

export function containsPartition(meta: TxnMetadata, p: TxnPartition): boolean {
  return meta.partitions.some((q) => q.topic === p.topic && q.partition === p.partition);
}

/** Adds partitions to the producer's transaction (opening it). The answer is per request: all added or none. */
export function decideAddPartitions(meta: TxnMetadata | undefined, req: AddRequest, nowMs: number): Decision<null> {
  const problem = producerProblem(meta, req.transactionalId, req.producerId, req.producerEpoch);
  if (problem) return { kind: 'refuse', refusal: problem };
  const m = meta!;
  if (m.state === 'PrepareCommit' || m.state === 'PrepareAbort') {
    return refuse(Errors.CONCURRENT_TRANSACTIONS, `the last transaction of ${m.transactionalId} is still being completed (${m.state})`);
  }
  const added = normalizePartitions([...m.partitions, ...req.partitions]);
  if (m.state === 'Ongoing' && added.length === m.partitions.length) return { kind: 'answer', response: null };
  if (req.partitions.length === 0) return { kind: 'answer', response: null };
  const next: TxnMetadata = {
    ...m, state: 'Ongoing', partitions: added, markers: null, startTimeMs: m.state === 'Ongoing' ? m.startTimeMs : nowMs, updateTimeMs: nowMs,
    coordinatorAborted: false,
  };
  return { kind: 'persist', next, response: null };
}

/**
 * KIP-890 part 1, a partition leader's question: is `p` in the producer's
 * open transaction at that epoch? null: yes. Changes nothing.
 */
export function verifyPartition(meta: TxnMetadata | undefined, req: Omit<AddRequest, 'partitions'>, p: TxnPartition): Refusal | null {
  const problem = producerProblem(meta, req.transactionalId, req.producerId, req.producerEpoch);
  if (problem) return problem;
  const m = meta!;
  if (m.state !== 'Ongoing' || !containsPartition(m, p)) {
    return { error: Errors.INVALID_TXN_STATE, message: `${p.topic}-${p.partition} is not in an open transaction of ${m.transactionalId} (state ${m.state}): AddPartitionsToTxn first` };
  }
  return null;
}

// ---- EndTxn ------------------------------------------------------------------------

export interface EndRequest {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly committed: boolean;
  readonly bumpEpoch: boolean;
}

const completeState = (committed: boolean): TxnState => (committed ? 'CompleteCommit' : 'CompleteAbort');
const prepareState = (committed: boolean): TxnState => (committed ? 'PrepareCommit' : 'PrepareAbort');

/** Commits or aborts the producer's transaction. The answer is the producer id and epoch its next transaction uses. */
export function decideEnd(meta: TxnMetadata | undefined, req: EndRequest, nowMs: number, freshProducerId?: number): Decision<ProducerIdAndEpoch> {
  const what = req.committed ? 'commit' : 'abort';
  if (meta !== undefined && meta.state !== 'Dead' && req.bumpEpoch && meta.markers !== null && same(meta.lastProducer, req.producerId, req.producerEpoch)) {
    return endRetry(meta, req);
  }
  const problem = producerProblem(meta, req.transactionalId, req.producerId, req.producerEpoch);
  if (problem) return { kind: 'refuse', refusal: problem };
  const m = meta!;
  const current = { producerId: m.producerId, producerEpoch: m.producerEpoch };
  switch (m.state) {
    case 'Ongoing': {
      if (!req.bumpEpoch) {
        const next: TxnMetadata = { ...m, state: prepareState(req.committed), markers: current, updateTimeMs: nowMs, coordinatorAborted: false };
        return { kind: 'persist', next, response: current };
      }
      const handed = bumped(m, freshProducerId);
      if (handed === null) return { kind: 'needProducerId' };
      const next: TxnMetadata = {
        ...m, ...handed, lastProducer: current, state: prepareState(req.committed),
        markers: { producerId: m.producerId, producerEpoch: m.producerEpoch + 1 }, updateTimeMs: nowMs, coordinatorAborted: false,
      };
      return { kind: 'persist', next, response: handed };
    }
    case 'PrepareCommit':
    case 'PrepareAbort':
      // Transaction version 1: a retry of the EndTxn that prepared this (same epoch).
      if (m.state === prepareState(req.committed)) return refuse(Errors.CONCURRENT_TRANSACTIONS, `the ${what} of ${m.transactionalId} is being completed`);
      return refuse(Errors.INVALID_TXN_STATE, `cannot ${what}: the transaction of ${m.transactionalId} is in ${m.state}`);
    case 'CompleteCommit':
    case 'CompleteAbort':
    case 'Empty': {
      if (!req.bumpEpoch) {
        // Transaction version 1: a retried EndTxn of a completed transaction is answered again.
        if (m.state === completeState(req.committed) && !m.coordinatorAborted) return { kind: 'answer', response: current };
        return refuse(Errors.INVALID_TXN_STATE, `cannot ${what}: ${m.transactionalId} has no open transaction (${m.state})`);
      }
      // Nothing was added since the last transaction: end an empty one, bumping the epoch as any other end does.
      const handed = bumped(m, freshProducerId);
      if (handed === null) return { kind: 'needProducerId' };
      const next: TxnMetadata = {
        ...m, ...handed, lastProducer: current, state: completeState(req.committed), partitions: [],
        markers: { producerId: m.producerId, producerEpoch: m.producerEpoch + 1 }, startTimeMs: -1, updateTimeMs: nowMs, coordinatorAborted: false,
      };
      return { kind: 'persist', next, response: handed };
    }
    case 'Dead':
      return refuse(Errors.INVALID_PRODUCER_ID_MAPPING, `transactional id ${m.transactionalId} has expired`);
  }
}

/** The producer id and epoch handed on after an end with bumpEpoch, or null when a fresh id is needed and not given. */
function bumped(m: TxnMetadata, freshProducerId: number | undefined): ProducerIdAndEpoch | null {
  const epoch = handedBump(m.producerEpoch);
  if (epoch !== null) return { producerId: m.producerId, producerEpoch: epoch };
  return freshProducerId === undefined ? null : { producerId: freshProducerId, producerEpoch: 0 };
}

/** An EndTxn with bumpEpoch at the epoch before the last bump: the same end again, or one the coordinator overruled. */
function endRetry(m: TxnMetadata, req: EndRequest): Decision<ProducerIdAndEpoch> {
  const current = { producerId: m.producerId, producerEpoch: m.producerEpoch };
  const ended = m.state === 'PrepareCommit' || m.state === 'CompleteCommit' ? true : m.state === 'PrepareAbort' || m.state === 'CompleteAbort' ? false : null;
  if (ended === req.committed && !m.coordinatorAborted) {
    // The answer was lost: answer again. Prepare* is answered too: EndTxn answers once Prepare* is durable.
    return { kind: 'answer', response: current };
  }
  // The coordinator aborted it (timeout, a new instance's InitProducerId) — or the producer moved on since.
  return refuse(Errors.PRODUCER_FENCED, `producer ${req.producerId} epoch ${req.producerEpoch} of ${m.transactionalId} was fenced (the transaction is ${m.state})`);
}

// ---- completion and timeouts ---------------------------------------------------------

/** Prepare* once every marker is written: Complete*, the partitions cleared. */
export function completeTransition(meta: TxnMetadata, nowMs: number): TxnMetadata {
  if (meta.state !== 'PrepareCommit' && meta.state !== 'PrepareAbort') throw new Error(`${meta.transactionalId}: cannot complete from ${meta.state}`);
  return { ...meta, state: meta.state === 'PrepareCommit' ? 'CompleteCommit' : 'CompleteAbort', partitions: [], startTimeMs: -1, updateTimeMs: nowMs };
}

/** An Ongoing transaction past its timeout: the coordinator's abort (PrepareAbort at epoch + 1); null when not due. */
export function expireTransition(meta: TxnMetadata, nowMs: number): TxnMetadata | null {
  if (meta.state !== 'Ongoing' || meta.startTimeMs < 0 || nowMs < meta.startTimeMs + meta.timeoutMs) return null;
  return fenceAndAbort(meta, nowMs);
}

/** transactional.id.expiration.ms: a settled id idle this long is forgotten (a tombstone is written). */
export function isIdExpired(meta: TxnMetadata, nowMs: number, expirationMs: number): boolean {
  return isSettled(meta.state) && nowMs >= meta.updateTimeMs + expirationMs;
}

export { PRODUCER_EPOCH_MAX };
