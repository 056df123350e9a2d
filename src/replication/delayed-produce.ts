// An acks=all produce waiting for replication (Kafka's DelayedProduce): one
// per request, over the partitions whose batch was appended (or found
// already appended, for an idempotent retry). Each partition's status starts
// at REQUEST_TIMED_OUT and is settled by tryComplete once its leader's high
// watermark passes the batch (ok), the ISR shrank below min.insync.replicas
// meanwhile (NOT_ENOUGH_REPLICAS_AFTER_APPEND), or leadership moved
// (NOT_LEADER_OR_FOLLOWER: the batch may be truncated by the new leader).
// onComplete answers with the statuses as they stand: at the deadline the
// unsettled ones keep REQUEST_TIMED_OUT.

import { Errors } from '../util/errors.js';
import type { ProducePartitionResponse, ProduceResponse } from '../protocol/apis/produce.js';
import { DelayedOperation } from './delayed.js';
import type { Partition } from './partition.js';
import type { LeaderState } from './rules/leader-state.js';
import { failure } from './partition-errors.js';

/** One partition of the request that waits for replication. */
export interface ProduceWait {
  readonly p: Partition;
  /** The LeaderState the batch was appended under: a new one (even of this broker) means leadership moved. */
  readonly leader: LeaderState;
  readonly lastOffset: number;
  readonly minIsr: number;
  /** This partition's part of the response; its error is filled in here. */
  readonly out: ProducePartitionResponse;
}

/** `T`: the answer the statuses are part of (a produce's, or the coordinator's WriteTxnMarkers). */
export class DelayedProduce<T = ProduceResponse> extends DelayedOperation {
  private readonly pending: Set<ProduceWait>;

  constructor(
    waits: readonly ProduceWait[],
    timeoutMs: number,
    private readonly response: T,
    private readonly answer: (res: T) => void,
  ) {
    super();
    this.pending = new Set(waits);
    for (const w of waits) Object.assign(w.out, failure(Errors.REQUEST_TIMED_OUT, `${w.p.key}: not replicated to the ISR within ${timeoutMs} ms`));
  }

  /** The partition keys to watch. */
  get keys(): string[] {
    return [...this.pending].map((w) => w.p.key);
  }

  tryComplete(): boolean {
    this.settle();
    return this.pending.size === 0 && this.forceComplete();
  }

  protected onComplete(): void {
    this.settle();
    this.answer(this.response);
  }

  /** Settles every partition whose outcome is known now. */
  private settle(): void {
    for (const w of this.pending) {
      const state = w.p.ackState(w.leader, w.lastOffset, w.minIsr);
      if (state === 'wait') continue;
      this.pending.delete(w);
      if (state === 'ok') Object.assign(w.out, { errorCode: 0, errorMessage: null });
      else if (state === 'leaderChanged') Object.assign(w.out, failure(Errors.NOT_LEADER_OR_FOLLOWER, `leadership of ${w.p.key} moved while waiting for replication`));
      else Object.assign(w.out, failure(Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, `${w.p.key}: the ISR shrank below min.insync.replicas=${w.minIsr}`));
    }
  }
}
