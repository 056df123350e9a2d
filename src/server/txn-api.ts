// The transaction APIs of the broker listener (WebSocket protocol): each body
// parsed by its validator (src/protocol/apis/transactions.ts) and handed to
// the part that serves it — the transaction coordinator (AddPartitionsToTxn,
// AddOffsetsToTxn, EndTxn, Describe/ListTransactions, and InitProducerId /
// FindCoordinator with a transactional id, which broker-api.ts and
// group-api.ts route here), the group coordinator (TxnOffsetCommit), the
// replica manager (WriteTxnMarkers, from a coordinator to a partition
// leader). Who may call them is the access rules' business, checked before
// (the deps are the guarded ones). A broker built without one of those parts
// answers COORDINATOR_NOT_AVAILABLE (retriable: the part may come up), or
// UNKNOWN_SERVER_ERROR for markers, which only a misbuilt broker lacks.

import { Errors, SluiceError } from '../util/errors.js';
import { ApiKey } from '../protocol/api-keys.js';
import type { Body } from '../protocol/body.js';
import type { InitProducerIdRequest } from '../protocol/apis/groups.js';
import {
  parseAddOffsetsToTxnRequest, parseAddPartitionsToTxnRequest, parseDescribeTransactionsRequest, parseEndTxnRequest,
  parseListTransactionsRequest, parseTxnOffsetCommitRequest, parseWriteTxnMarkersRequest,
  type InitProducerIdTxnResponse, type TransactionOps,
} from '../protocol/apis/transactions.js';
import type { BrokerApiDeps } from './broker-api.js';

export const TXN_APIS: ReadonlySet<number> = new Set([
  ApiKey.AddPartitionsToTxn, ApiKey.AddOffsetsToTxn, ApiKey.EndTxn, ApiKey.WriteTxnMarkers, ApiKey.TxnOffsetCommit,
  ApiKey.DescribeTransactions, ApiKey.ListTransactions,
]);

/** The transaction coordinator, or COORDINATOR_NOT_AVAILABLE. */
export function transactionsOf(deps: Pick<BrokerApiDeps, 'transactions'>): TransactionOps {
  if (!deps.transactions) throw new SluiceError(Errors.COORDINATOR_NOT_AVAILABLE, 'this broker runs no transaction coordinator');
  return deps.transactions;
}

/** InitProducerId naming a transactional id: its coordinator fences the older producer and answers the id and epoch. */
export function initTransactionalProducer(deps: Pick<BrokerApiDeps, 'transactions'>, req: InitProducerIdRequest & { readonly transactionalId: string }): Promise<InitProducerIdTxnResponse> {
  return transactionsOf(deps).initProducerId(req);
}

export function serveTxnApi(deps: BrokerApiDeps, apiKey: number, body: Body): unknown {
  switch (apiKey) {
    case ApiKey.AddPartitionsToTxn:
      return transactionsOf(deps).addPartitionsToTxn(parseAddPartitionsToTxnRequest(body));
    case ApiKey.AddOffsetsToTxn:
      return transactionsOf(deps).addOffsetsToTxn(parseAddOffsetsToTxnRequest(body));
    case ApiKey.EndTxn:
      return transactionsOf(deps).endTxn(parseEndTxnRequest(body));
    case ApiKey.DescribeTransactions:
      return transactionsOf(deps).describeTransactions(parseDescribeTransactionsRequest(body));
    case ApiKey.ListTransactions:
      return transactionsOf(deps).listTransactions(parseListTransactionsRequest(body));
    case ApiKey.TxnOffsetCommit: {
      const req = parseTxnOffsetCommitRequest(body);
      if (!deps.txnOffsets) throw new SluiceError(Errors.COORDINATOR_NOT_AVAILABLE, 'this broker runs no group coordinator');
      return deps.txnOffsets.txnOffsetCommit(req);
    }
    case ApiKey.WriteTxnMarkers: {
      const req = parseWriteTxnMarkersRequest(body);
      if (!deps.txnMarkers) throw new SluiceError(Errors.UNKNOWN_SERVER_ERROR, 'this broker writes no transaction markers');
      return deps.txnMarkers.writeTxnMarkers(req);
    }
    default:
      throw new SluiceError(Errors.UNSUPPORTED_VERSION, `${apiKey} is not a transaction API`);
  }
}
