// Transaction APIs (Kafka's KIP-98 shapes, msgpack bodies). A transactional
// producer's coordinator is the broker leading partition
// abs(hash(transactionalId)) mod N of the internal topic __transaction_state
// (FindCoordinator with keyType 1 says which); docs/transactions.md has the
// protocol.
//
// InitProducerId (22)        { transactionalId, transactionTimeoutMs, producerId?, producerEpoch? }
//                            → { errorCode, errorMessage, producerId, producerEpoch }   (groups.ts parses it)
// AddPartitionsToTxn (24)    { transactionalId, producerId, producerEpoch, topics: [{ name, partitions: [int] }],
//                              verifyOnly?: bool (broker to coordinator, KIP-890: is each partition in the open transaction?) }
//                            → { errorCode, errorMessage, results: [{ name, partitions: [{ partition, errorCode, errorMessage }] }] }
// AddOffsetsToTxn (25)       { transactionalId, producerId, producerEpoch, groupId }
//                            → { errorCode, errorMessage }
// EndTxn (26)                { transactionalId, producerId, producerEpoch, committed: bool, bumpEpoch?: bool }
//                            → { errorCode, errorMessage, producerId, producerEpoch }
//                            bumpEpoch (KIP-890 part 2, the Sluice client always sets it): the coordinator ends the
//                            transaction at epoch + 1 and answers it; the producer's next transaction uses it, so a
//                            late write of the ended transaction is fenced by its old epoch.
// WriteTxnMarkers (27)       coordinator → partition leader (ClusterAction):
//                            { markers: [{ producerId, producerEpoch, transactionResult: bool (true commit), coordinatorEpoch,
//                              topics: [{ name, partitions: [int] }] }] }
//                            → { markers: [{ producerId, topics: [{ name, partitions: [{ partition, errorCode, errorMessage }] }] }] }
// TxnOffsetCommit (28)       { transactionalId, groupId, producerId, producerEpoch, generationId, memberId, groupInstanceId,
//                              topics: [{ name, partitions: [{ partition, committedOffset, committedLeaderEpoch, metadata }] }] }
//                            → { topics: [{ name, partitions: [{ partition, errorCode, errorMessage }] }] }
// DescribeTransactions (65)  { transactionalIds: [string] }
//                            → { transactionStates: [{ errorCode, errorMessage, transactionalId, transactionState,
//                              transactionTimeoutMs, transactionStartTimeMs, producerId, producerEpoch,
//                              topics: [{ name, partitions: [int] }] }] }
// ListTransactions (66)      { stateFilters?: [string], producerIdFilters?: [int], durationFilterMs?: int (-1: any) }
//                            → { errorCode, errorMessage, unknownStateFilters: [string],
//                              transactionStates: [{ transactionalId, producerId, transactionState }] }

import { badRequest, bool, int, ints, list, optStr, str, strs, type Body } from '../body.js';
import type { FindCoordinatorRequest, FindCoordinatorResponse, InitProducerIdRequest, OffsetCommitResponse } from './groups.js';

export const TRANSACTION_STATE_TOPIC = '__transaction_state';
/** A transactional id is 1-249 characters, as a group id. */
export const TRANSACTIONAL_ID_LENGTH_MAX = 249;
/** Kafka's transaction.max.timeout.ms default: a producer may not ask for a longer transaction timeout. */
export const TRANSACTION_MAX_TIMEOUT_MS_DEFAULT = 15 * 60 * 1000;
/** Kafka's producer default transaction.timeout.ms. */
export const TRANSACTION_TIMEOUT_MS_DEFAULT = 60_000;

/** FindCoordinator key types. */
export const COORDINATOR_KEY_GROUP = 0;
export const COORDINATOR_KEY_TRANSACTION = 1;

/** Kafka's TransactionState names (DescribeTransactions, ListTransactions, kafka-transactions.sh). */
export type TransactionStateName =
  | 'Empty' | 'Ongoing' | 'PrepareCommit' | 'PrepareAbort' | 'CompleteCommit' | 'CompleteAbort' | 'Dead' | 'PrepareEpochFence';
export const TRANSACTION_STATE_NAMES: readonly TransactionStateName[] = [
  'Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence',
];

export interface TopicPartitions { readonly name: string; readonly partitions: readonly number[] }

export interface AddPartitionsToTxnRequest {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly topics: readonly TopicPartitions[];
  /** A partition leader's check (KIP-890): answer whether each partition is in the open transaction, add nothing. */
  readonly verifyOnly: boolean;
}
export interface PartitionResult { partition: number; errorCode: number; errorMessage: string | null }
export interface TopicResults { name: string; partitions: PartitionResult[] }
export interface AddPartitionsToTxnResponse { errorCode: number; errorMessage: string | null; results: TopicResults[] }

export interface AddOffsetsToTxnRequest { readonly transactionalId: string; readonly producerId: number; readonly producerEpoch: number; readonly groupId: string }
export interface AddOffsetsToTxnResponse { errorCode: number; errorMessage: string | null }

export interface EndTxnRequest {
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  /** true: commit; false: abort. */
  readonly committed: boolean;
  /** KIP-890 part 2: end the transaction at epoch + 1 and answer it. */
  readonly bumpEpoch: boolean;
}
export interface EndTxnResponse { errorCode: number; errorMessage: string | null; producerId: number; producerEpoch: number }

export interface TxnMarker {
  readonly producerId: number;
  readonly producerEpoch: number;
  /** true: a COMMIT marker; false: ABORT. */
  readonly transactionResult: boolean;
  readonly coordinatorEpoch: number;
  readonly topics: readonly TopicPartitions[];
}
export interface WriteTxnMarkersRequest { readonly markers: readonly TxnMarker[] }
export interface WriteTxnMarkersResponse { markers: Array<{ producerId: number; topics: TopicResults[] }> }

export interface TxnOffsetCommitPartition {
  readonly partition: number;
  readonly committedOffset: number;
  readonly committedLeaderEpoch: number;
  readonly metadata: string | null;
}
export interface TxnOffsetCommitRequest {
  readonly transactionalId: string;
  readonly groupId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  /** -1 with memberId '': a producer that does not check the group's generation (Kafka's pre-KIP-447 form). */
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly TxnOffsetCommitPartition[] }>;
}
export type TxnOffsetCommitResponse = OffsetCommitResponse;

export interface DescribeTransactionsRequest { readonly transactionalIds: readonly string[] }
export interface DescribedTransaction {
  errorCode: number;
  errorMessage: string | null;
  transactionalId: string;
  transactionState: TransactionStateName | '';
  transactionTimeoutMs: number;
  /** -1 when no transaction is open. */
  transactionStartTimeMs: number;
  producerId: number;
  producerEpoch: number;
  topics: Array<{ name: string; partitions: number[] }>;
}
export interface DescribeTransactionsResponse { transactionStates: DescribedTransaction[] }

export interface ListTransactionsRequest {
  readonly stateFilters: readonly string[];
  readonly producerIdFilters: readonly number[];
  /** Only transactions open longer than this; -1: any. */
  readonly durationFilterMs: number;
}
export interface ListedTransaction { transactionalId: string; producerId: number; transactionState: TransactionStateName }
export interface ListTransactionsResponse { errorCode: number; errorMessage: string | null; unknownStateFilters: string[]; transactionStates: ListedTransaction[] }

/**
 * What a transaction coordinator serves to both protocols' request layers
 * (src/transactions/ implements it; access-control.ts guards it).
 */
export interface TransactionOps {
  /** keyType COORDINATOR_KEY_TRANSACTION: the broker leading the id's __transaction_state partition (creating the topic on first use). */
  findCoordinator(req: FindCoordinatorRequest): FindCoordinatorResponse;
  initProducerId(req: InitProducerIdRequest & { readonly transactionalId: string }): Promise<InitProducerIdTxnResponse>;
  addPartitionsToTxn(req: AddPartitionsToTxnRequest): Promise<AddPartitionsToTxnResponse>;
  addOffsetsToTxn(req: AddOffsetsToTxnRequest): Promise<AddOffsetsToTxnResponse>;
  endTxn(req: EndTxnRequest): Promise<EndTxnResponse>;
  describeTransactions(req: DescribeTransactionsRequest): DescribeTransactionsResponse;
  listTransactions(req: ListTransactionsRequest): ListTransactionsResponse;
}
export interface InitProducerIdTxnResponse { errorCode: number; errorMessage: string | null; producerId: number; producerEpoch: number }

function transactionalId(b: Body): string {
  const id = str(b, 'transactionalId');
  if (id.length === 0 || id.length > TRANSACTIONAL_ID_LENGTH_MAX) throw badRequest(`transactionalId must have 1-${TRANSACTIONAL_ID_LENGTH_MAX} characters`);
  return id;
}

function producer(b: Body): { producerId: number; producerEpoch: number } {
  const producerId = int(b, 'producerId');
  const producerEpoch = int(b, 'producerEpoch');
  if (producerId < 0 || producerEpoch < 0 || producerEpoch > 0x7fff) throw badRequest('producerId must be >= 0 and producerEpoch within [0, 32767]');
  return { producerId, producerEpoch };
}

function topicPartitions(b: Body): TopicPartitions[] {
  return list(b, 'topics').map((t) => ({ name: str(t, 'name'), partitions: ints(t.partitions, 'partitions') }));
}

export function parseAddPartitionsToTxnRequest(b: Body): AddPartitionsToTxnRequest {
  return { transactionalId: transactionalId(b), ...producer(b), topics: topicPartitions(b), verifyOnly: bool(b, 'verifyOnly', false) };
}

export function parseAddOffsetsToTxnRequest(b: Body): AddOffsetsToTxnRequest {
  return { transactionalId: transactionalId(b), ...producer(b), groupId: str(b, 'groupId') };
}

export function parseEndTxnRequest(b: Body): EndTxnRequest {
  if (typeof b.committed !== 'boolean') throw badRequest('committed must be a boolean');
  return { transactionalId: transactionalId(b), ...producer(b), committed: b.committed, bumpEpoch: bool(b, 'bumpEpoch', false) };
}

export function parseWriteTxnMarkersRequest(b: Body): WriteTxnMarkersRequest {
  return {
    markers: list(b, 'markers').map((m) => {
      if (typeof m.transactionResult !== 'boolean') throw badRequest('transactionResult must be a boolean');
      return { ...producer(m), transactionResult: m.transactionResult, coordinatorEpoch: int(m, 'coordinatorEpoch'), topics: topicPartitions(m) };
    }),
  };
}

export function parseTxnOffsetCommitRequest(b: Body): TxnOffsetCommitRequest {
  return {
    transactionalId: transactionalId(b),
    groupId: str(b, 'groupId'),
    ...producer(b),
    generationId: int(b, 'generationId', -1),
    memberId: typeof b.memberId === 'string' ? b.memberId : '',
    groupInstanceId: optStr(b, 'groupInstanceId'),
    topics: list(b, 'topics').map((t) => ({
      name: str(t, 'name'),
      partitions: list(t, 'partitions').map((p) => ({
        partition: int(p, 'partition'), committedOffset: int(p, 'committedOffset'),
        committedLeaderEpoch: int(p, 'committedLeaderEpoch', -1), metadata: optStr(p, 'metadata'),
      })),
    })),
  };
}

export function parseDescribeTransactionsRequest(b: Body): DescribeTransactionsRequest {
  return { transactionalIds: strs(b.transactionalIds, 'transactionalIds') };
}

export function parseListTransactionsRequest(b: Body): ListTransactionsRequest {
  return {
    stateFilters: b.stateFilters === undefined ? [] : strs(b.stateFilters, 'stateFilters'),
    producerIdFilters: b.producerIdFilters === undefined ? [] : ints(b.producerIdFilters, 'producerIdFilters'),
    durationFilterMs: int(b, 'durationFilterMs', -1),
  };
}
