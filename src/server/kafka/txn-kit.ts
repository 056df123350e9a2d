// What the Kafka listener's transaction handlers share: one validator for
// both protocols (each Kafka request is checked by the WebSocket API's
// parser from src/protocol/apis/transactions.ts, so a bad transactional id or
// producer epoch is INVALID_REQUEST with the field named, whichever protocol
// sends it), and Kafka's rule for error codes an older client version does
// not know: PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below the version that
// added it (KIP-588), TRANSACTION_ABORTABLE is INVALID_TXN_STATE below its
// version (KIP-890) — same handling by the client, codes it understands.

import { Errors } from '../../util/errors.js';

export interface NewCodeVersions {
  /** The first version of the API that knows PRODUCER_FENCED. */
  readonly producerFenced?: number;
  /** The first version that knows TRANSACTION_ABORTABLE. */
  readonly abortable?: number;
}

export function clientCode(code: number, version: number, v: NewCodeVersions): number {
  if (code === Errors.PRODUCER_FENCED.code && v.producerFenced !== undefined && version < v.producerFenced) return Errors.INVALID_PRODUCER_EPOCH.code;
  if (code === Errors.TRANSACTION_ABORTABLE.code && (v.abortable === undefined || version < v.abortable)) return Errors.INVALID_TXN_STATE.code;
  return code;
}
