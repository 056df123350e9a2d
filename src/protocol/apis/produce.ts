// Produce (api key 0): per-partition record batches, raw RecordBatch v2 bytes
// as msgpack `bin` — passed to the log as they arrived, never re-encoded.
//
//   request  { transactionalId?: string|null, acks: -1|0|1, timeoutMs, topics: [{ name, partitions: [{ partition, records: bin }] }] }
//   response { topics: [{ name, partitions: [{ partition, errorCode, errorMessage, baseOffset, logStartOffset }] }] }
// acks=0 gets no response at all (as in Kafka): the client does not wait.
// A transactional producer names its transactionalId; its batches carry the
// transactional flag, and the leader verifies with the transaction
// coordinator that the partition is in the producer's open transaction before
// it appends the first of them (KIP-890 part 1; docs/transactions.md).

import { Errors, SluiceError } from '../../util/errors.js';
import { badRequest, bytes, int, list, optStr, str, type Body } from '../body.js';

export const ACKS_ALL = -1;

export interface ProducePartitionData { readonly partition: number; readonly records: Buffer }
export interface ProduceTopicData { readonly name: string; readonly partitions: readonly ProducePartitionData[] }
export interface ProduceRequest {
  /** The transactional producer's id; null for idempotent and plain producers. */
  readonly transactionalId?: string | null;
  readonly acks: -1 | 0 | 1;
  readonly timeoutMs: number;
  readonly topics: readonly ProduceTopicData[];
}

export interface ProducePartitionResponse {
  partition: number;
  errorCode: number;
  errorMessage: string | null;
  /** Offset of the first record appended; -1 on error. */
  baseOffset: number;
  logStartOffset: number;
}
export interface ProduceResponse { topics: Array<{ name: string; partitions: ProducePartitionResponse[] }> }

export function parseProduceRequest(b: Body): ProduceRequest {
  const acks = int(b, 'acks');
  if (acks !== -1 && acks !== 0 && acks !== 1) throw new SluiceError(Errors.INVALID_REQUIRED_ACKS, `acks must be 0, 1 or -1 (all), got ${acks}`);
  const timeoutMs = int(b, 'timeoutMs');
  if (timeoutMs < 0) throw badRequest('timeoutMs must be >= 0');
  const topics = list(b, 'topics').map((t) => ({
    name: str(t, 'name'),
    partitions: list(t, 'partitions').map((p) => ({ partition: int(p, 'partition'), records: bytes(p, 'records') })),
  }));
  return { transactionalId: optStr(b, 'transactionalId'), acks, timeoutMs, topics };
}
