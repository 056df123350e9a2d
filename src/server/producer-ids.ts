// Producer ids for InitProducerId (api 22), KIP-98 idempotence without
// transactions: any broker answers, handing out ids from a block it gets from
// the active controller (`allocateProducerIds` {brokerId, brokerEpoch} →
// {firstProducerId, size}; the block is committed to the metadata log before
// it is answered, so no two brokers ever get the same ids — KIP-730).
//
// A request naming an existing producer id and epoch bumps the epoch (a simple
// form of KIP-360): the answer is the same id at epoch + 1, or a fresh id at
// epoch 0 once the epoch would pass int16 max. The broker keeps no registry of
// idempotent producers, so the bump is not checked against a current epoch:
// what fences an older epoch is the partition leaders' producer state
// (INVALID_PRODUCER_EPOCH), as for Kafka's idempotent producer, which bumps
// its epoch on its own. InitProducerId with a transactional id goes to the
// transaction coordinator instead (src/transactions/), which takes its fresh
// ids from this manager and does keep each id's epoch.
//
// Invariants: ids are handed out once each, in increasing order within a
// block; at most one block request is in flight (concurrent callers wait on it).

import { Errors, SluiceError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { InitProducerIdRequest } from '../protocol/apis/groups.js';
import { PRODUCER_EPOCH_MAX } from '../replication/rules/producer-state.js';
import type { ControllerCall } from './broker-api.js';

export interface InitProducerIdResponse {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly producerId: number;
  readonly producerEpoch: number;
}

/** Where InitProducerId gets fresh ids. */
export interface ProducerIdSource {
  nextProducerId(): Promise<number>;
}

interface BlockAnswer {
  readonly errorCode: number;
  readonly errorMessage?: string | null;
  readonly firstProducerId?: number;
  readonly size?: number;
}

export interface ProducerIdManagerOptions {
  readonly brokerId: number;
  /** -1 until the broker is registered (the controller then refuses: STALE_BROKER_EPOCH). */
  readonly brokerEpoch: () => number;
  readonly control: ControllerCall;
  readonly logger: Logger;
}

export class ProducerIdManager implements ProducerIdSource {
  /** Next id to hand out, and the end (exclusive) of the current block. */
  private next = 0;
  private end = 0;
  private fetching: Promise<void> | null = null;

  constructor(private readonly opts: ProducerIdManagerOptions) {}

  /** A producer id no broker has handed out; COORDINATOR_NOT_AVAILABLE (retriable) if no block can be had now. */
  async nextProducerId(): Promise<number> {
    // Each round either takes an id or waits for one block request; a failed request throws, so this ends.
    for (;;) {
      if (this.next < this.end) return this.next++;
      this.fetching ??= this.fetchBlock().finally(() => {
        this.fetching = null;
      });
      await this.fetching;
    }
  }

  private async fetchBlock(): Promise<void> {
    let answer: BlockAnswer;
    try {
      answer = await this.opts.control<BlockAnswer>('allocateProducerIds', { brokerId: this.opts.brokerId, brokerEpoch: this.opts.brokerEpoch() });
    } catch (err) {
      throw new SluiceError(Errors.COORDINATOR_NOT_AVAILABLE, `no producer id block from the controller: ${(err as Error).message}`);
    }
    const { errorCode, firstProducerId: first, size } = answer;
    if (errorCode !== 0 || !Number.isSafeInteger(first) || !Number.isSafeInteger(size) || first! < 0 || size! <= 0) {
      throw new SluiceError(Errors.COORDINATOR_NOT_AVAILABLE, `the controller refused a producer id block: ${answer.errorMessage ?? `error ${errorCode}`}`);
    }
    if (first! < this.end) throw new SluiceError(Errors.UNKNOWN_SERVER_ERROR, `producer id block ${first} starts below the previous one's end ${this.end}`);
    this.next = first!;
    this.end = first! + size!;
    this.opts.logger.info({ firstProducerId: first, size }, 'got a producer id block');
  }
}

/** The answer to InitProducerId: a fresh id at epoch 0, or the named id at its next epoch. */
export async function initProducerId(req: InitProducerIdRequest, ids: ProducerIdSource): Promise<InitProducerIdResponse> {
  const { producerId, producerEpoch } = req;
  if ((producerId < 0) !== (producerEpoch < 0)) {
    throw new SluiceError(Errors.INVALID_REQUEST, `producerId ${producerId} and producerEpoch ${producerEpoch}: give both (to bump the epoch) or neither`);
  }
  if (producerEpoch > PRODUCER_EPOCH_MAX) throw new SluiceError(Errors.INVALID_REQUEST, `producerEpoch ${producerEpoch} is beyond int16`);
  if (producerId >= 0 && producerEpoch < PRODUCER_EPOCH_MAX) {
    return { errorCode: 0, errorMessage: null, producerId, producerEpoch: producerEpoch + 1 };
  }
  return { errorCode: 0, errorMessage: null, producerId: await ids.nextProducerId(), producerEpoch: 0 };
}
