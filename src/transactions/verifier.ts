// KIP-890 part 1: before a producer's first transactional batch on a
// partition, the partition's leader asks the transaction's coordinator
// whether the partition is in the producer's open transaction at that epoch
// (AddPartitionsToTxn with verifyOnly: nothing is added). The coordinator is
// this broker (asked in-process) or another one (asked over an inter-broker
// link, broker-links.ts). Whatever goes wrong on the way is a retriable
// refusal — the batch is not written and the producer retries — never a yes.

import { ApiKey } from '../protocol/api-keys.js';
import type { AddPartitionsToTxnRequest, AddPartitionsToTxnResponse } from '../protocol/apis/transactions.js';
import type { TxnRefusal, TxnVerifier, TxnVerifyRequest } from '../replication/txn-seams.js';
import { Errors, errorForCode, type ErrorInfo } from '../util/errors.js';
import type { InterBrokerCalls } from './broker-links.js';

/** What the verifier needs of the local coordinator. */
export interface VerifyingCoordinator {
  /** The broker leading the id's __transaction_state partition, -1 when none. */
  coordinatorOf(transactionalId: string): number;
  addPartitionsToTxn(req: AddPartitionsToTxnRequest): Promise<AddPartitionsToTxnResponse>;
}

export class TransactionVerifier implements TxnVerifier {
  constructor(private readonly brokerId: number, private readonly coordinator: VerifyingCoordinator, private readonly links: InterBrokerCalls) {}

  async verify(req: TxnVerifyRequest): Promise<TxnRefusal | null> {
    const ask: AddPartitionsToTxnRequest = {
      transactionalId: req.transactionalId, producerId: req.producerId, producerEpoch: req.producerEpoch,
      topics: [{ name: req.topic, partitions: [req.partition] }], verifyOnly: true,
    };
    const coordinator = this.coordinator.coordinatorOf(req.transactionalId);
    let res: AddPartitionsToTxnResponse;
    try {
      if (coordinator < 0) return refusal(Errors.COORDINATOR_NOT_AVAILABLE, `the coordinator of ${req.transactionalId} is not known`);
      res = coordinator === this.brokerId
        ? await this.coordinator.addPartitionsToTxn(ask)
        : await this.links.request<AddPartitionsToTxnResponse>(coordinator, ApiKey.AddPartitionsToTxn, ask);
    } catch (err) {
      return refusal(Errors.COORDINATOR_NOT_AVAILABLE, `could not ask the coordinator of ${req.transactionalId} (broker ${coordinator}): ${(err as Error).message}`);
    }
    const answer = res.results.find((t) => t.name === req.topic)?.partitions.find((p) => p.partition === req.partition);
    const code = res.errorCode !== 0 ? res.errorCode : answer?.errorCode;
    const message = (res.errorCode !== 0 ? res.errorMessage : answer?.errorMessage) ?? null;
    if (code === 0) return null;
    if (code === undefined) return refusal(Errors.COORDINATOR_NOT_AVAILABLE, `the coordinator of ${req.transactionalId} did not answer for ${req.topic}-${req.partition}`);
    return refusal(errorForCode(code), message ?? `refused by the coordinator (${code})`);
  }
}

function refusal(error: ErrorInfo, message: string): TxnRefusal {
  return { error, message };
}
