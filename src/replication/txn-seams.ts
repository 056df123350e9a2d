// Where the replica manager meets the transaction coordinator and the group
// coordinator (docs/transactions.md). The replica manager sits below both: it
// asks a TxnVerifier before the first transactional write of a producer to a
// partition (KIP-890 part 1), and tells listeners of every transaction marker
// it appended, so the group coordinator can make a transaction's offset
// commits visible (or drop them) once the marker lands in __consumer_offsets.

import type { ErrorInfo } from '../util/errors.js';

export interface TxnVerifyRequest {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly topic: string;
  readonly partition: number;
}

/** Why a transactional write was refused: the code and message the producer sees. */
export interface TxnRefusal {
  readonly error: ErrorInfo;
  readonly message: string;
}

/**
 * Asks the transactional id's coordinator (local or remote) whether the
 * partition is part of the producer's open transaction at that epoch.
 * null: it is, append. A refusal: INVALID_TXN_STATE (not added, or no open
 * transaction), INVALID_PRODUCER_EPOCH / PRODUCER_FENCED (an older epoch),
 * or a retriable coordinator error (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE,
 * COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS).
 */
export interface TxnVerifier {
  verify(req: TxnVerifyRequest): Promise<TxnRefusal | null>;
}

/** A COMMIT or ABORT marker this broker appended to a partition it leads or follows. */
export interface TxnMarkerApplied {
  readonly topic: string;
  readonly partition: number;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly committed: boolean;
  readonly coordinatorEpoch: number;
  /** The marker's offset in the log. */
  readonly offset: number;
}
