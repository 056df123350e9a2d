// Client-side decoding of the transaction APIs' answers
// (src/protocol/apis/transactions.ts), checked field by field like
// group-responses.ts. Whole-request failures were thrown before these run
// (BrokerConnection.call); per-partition and per-id errors stay in the data.

import {
  TRANSACTION_STATE_NAMES,
  type AddPartitionsToTxnResponse, type DescribeTransactionsResponse, type EndTxnResponse, type InitProducerIdTxnResponse,
  type ListTransactionsResponse, type TopicResults, type TransactionStateName,
} from '../protocol/apis/transactions.js';
import { Errors, SluiceError } from '../util/errors.js';
import { ResponseView } from './response-view.js';

const errorOf = (v: ResponseView) => ({ errorCode: v.optInt('errorCode') ?? 0, errorMessage: v.strOrNull('errorMessage') });

function stateName(v: ResponseView, api: string, allowEmpty: boolean): TransactionStateName | '' {
  const s = v.str('transactionState');
  if (allowEmpty && s === '') return '';
  if (!TRANSACTION_STATE_NAMES.includes(s as TransactionStateName)) {
    throw new SluiceError(Errors.UNKNOWN_SERVER_ERROR, `malformed ${api} response: unknown transaction state '${s}'`);
  }
  return s as TransactionStateName;
}

function topicResults(v: ResponseView, key: string): TopicResults[] {
  return v.list(key).map((t) => ({ name: t.str('name'), partitions: t.list('partitions').map((p) => ({ partition: p.int('partition'), ...errorOf(p) })) }));
}

export function parseInitProducerIdTxnResponse(body: unknown): InitProducerIdTxnResponse {
  const v = ResponseView.of('InitProducerId', body);
  return { ...errorOf(v), producerId: v.int('producerId'), producerEpoch: v.int('producerEpoch') };
}

export function parseAddPartitionsToTxnResponse(body: unknown): AddPartitionsToTxnResponse {
  const v = ResponseView.of('AddPartitionsToTxn', body);
  return { ...errorOf(v), results: topicResults(v, 'results') };
}

export function parseEndTxnResponse(body: unknown): EndTxnResponse {
  const v = ResponseView.of('EndTxn', body);
  return { ...errorOf(v), producerId: v.int('producerId'), producerEpoch: v.int('producerEpoch') };
}

export function parseDescribeTransactionsResponse(body: unknown): DescribeTransactionsResponse {
  const v = ResponseView.of('DescribeTransactions', body);
  return {
    transactionStates: v.list('transactionStates').map((t) => ({
      ...errorOf(t),
      transactionalId: t.str('transactionalId'),
      transactionState: stateName(t, 'DescribeTransactions', true),
      transactionTimeoutMs: t.int('transactionTimeoutMs'),
      transactionStartTimeMs: t.int('transactionStartTimeMs'),
      producerId: t.int('producerId'),
      producerEpoch: t.int('producerEpoch'),
      topics: t.list('topics').map((x) => ({ name: x.str('name'), partitions: x.ints('partitions') })),
    })),
  };
}

export function parseListTransactionsResponse(body: unknown): ListTransactionsResponse {
  const v = ResponseView.of('ListTransactions', body);
  const unknown = (body as { unknownStateFilters?: unknown }).unknownStateFilters ?? [];
  if (!Array.isArray(unknown) || !unknown.every((s) => typeof s === 'string')) {
    throw new SluiceError(Errors.UNKNOWN_SERVER_ERROR, 'malformed ListTransactions response: unknownStateFilters must be a list of strings');
  }
  return {
    ...errorOf(v),
    unknownStateFilters: unknown as string[],
    transactionStates: v.list('transactionStates').map((t) => ({
      transactionalId: t.str('transactionalId'), producerId: t.int('producerId'),
      transactionState: stateName(t, 'ListTransactions', false) as TransactionStateName,
    })),
  };
}
