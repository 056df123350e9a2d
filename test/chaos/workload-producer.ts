// The producers of a chaos run: idempotent (acks=all) producers writing
// unique values `p<k>.<instance>-<topic>-<partition>-<seq>` round-robin over
// every workload partition, at a bounded rate with a bounded number of sends
// in flight. Every send is one history entry (SendOp):
//   ok       with the offset the cluster acknowledged (and the broker, when
//            the AckTracer knows it);
//   fail     with the error when the producer reported one (the checker
//            decides which errors are definite);
//   unknown  on a timeout or a lost connection.
// A producer instance lives a while, then is closed (flushed) and replaced by
// a new one with a new producer id: restarted producers are part of the
// workload. Each send is one record, so each send resolves on its own.

import { Errors, isSluiceError, type Producer } from '../../src/index.js';
import type { Rng } from '../../src/util/rng.js';
import type { Outcome, SendOp } from './history.js';
import { AckTracer, TracingClient } from './ack-tracer.js';
import type { TopicPartition, WorkloadDeps } from './workload.js';
import { LoopWorker } from './worker.js';

/** Keys the producers cycle through on the compacted topic (workload.ts), so each is overwritten many times. */
export const COMPACTED_KEYS = 8;

/** Pacing granularity of the send loop. */
const TICK_MS = 50;
/** Errors that leave a send's fate open. */
const INDEFINITE_CODES: ReadonlySet<number> = new Set([Errors.REQUEST_TIMED_OUT.code, Errors.NETWORK_EXCEPTION.code]);

export interface ProducerSettings {
  readonly ratePerSecond: number;
  /** Sends awaiting their outcome, per partition (a partition without a leader stalls only its own). */
  readonly inFlightPerPartitionMax: number;
  readonly lifetimeMsMin: number;
  readonly lifetimeMsMax: number;
  /** Each producer instance draws its delivery timeout from this range: short ones end sends as unknown during faults. */
  readonly deliveryTimeoutMsMin: number;
  readonly deliveryTimeoutMsMax: number;
}

export interface ProducerCounts {
  sends: number;
  ok: number;
  failed: number;
  unknown: number;
}

export function outcomeOf(err: unknown): Outcome {
  if (isSluiceError(err)) {
    return INDEFINITE_CODES.has(err.code) ? { type: 'unknown', error: err.message } : { type: 'fail', error: err.message };
  }
  return { type: 'unknown', error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
}

/** stop() stops sending and waits until every send in flight resolved (bounded by the delivery timeout). */

/**
 * The producers' pacing, shared by the chaos workload and the cluster
 * simulation: each tick adds `perTick` sends to a budget (at most two ticks'
 * worth and one banked), spent round-robin over the partitions. A partition
 * with `inFlightMax` sends pending is skipped, not waited for; a tick ends
 * when the budget is spent or every partition is full. Each partition's
 * sequence numbers count from 0; `done()` gives its slot back.
 */
export class SendPacer<T extends { readonly topic: string; readonly partition: number }> {
  private budget = 0;
  private next = 0;
  private readonly seqs = new Map<string, number>();
  private readonly pending = new Map<string, number>();
  constructor(private readonly inFlightMax: number) {}

  tick(partitions: readonly T[], perTick: number): Array<{ tp: T; seq: number; done: () => void }> {
    const out: Array<{ tp: T; seq: number; done: () => void }> = [];
    this.budget = Math.min(this.budget + perTick, 2 * perTick + 1);
    for (let skipped = 0; this.budget >= 1 && skipped < partitions.length;) {
      const tp = partitions[this.next++ % partitions.length]!;
      const key = `${tp.topic}-${tp.partition}`;
      if ((this.pending.get(key) ?? 0) >= this.inFlightMax) {
        skipped++;
        continue;
      }
      skipped = 0;
      this.budget--;
      const seq = this.seqs.get(key) ?? 0;
      this.seqs.set(key, seq + 1);
      this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
      out.push({ tp, seq, done: () => this.pending.set(key, this.pending.get(key)! - 1) });
    }
    return out;
  }
}

export class ProducerWorker extends LoopWorker {
  readonly counts: ProducerCounts = { sends: 0, ok: 0, failed: 0, unknown: 0 };
  private readonly tracer = new AckTracer();

  constructor(private readonly index: number, private readonly deps: WorkloadDeps, private readonly settings: ProducerSettings, private readonly rng: Rng) {
    super();
  }

  protected async loop(): Promise<void> {
    for (let instance = 1; !this.stopped; instance++) {
      const lifetimeMs = this.rng.range(this.settings.lifetimeMsMin, this.settings.lifetimeMsMax);
      await this.runInstance(`p${this.index}.${instance}`, lifetimeMs);
    }
  }

  private async runInstance(name: string, lifetimeMs: number): Promise<void> {
    const client = new TracingClient({
      bootstrap: this.deps.bootstrap, clientId: name, requestTimeoutMs: 10_000, connectTimeoutMs: 3_000, metadataMaxAgeMs: 5_000,
      retry: { retries: 5, initialRetryTimeMs: 100, maxRetryTimeMs: 1_000 },
    }, this.tracer);
    const producer = client.producer({
      idempotent: true, acks: -1, lingerMs: 5, ackTimeoutMs: 5_000,
      deliveryTimeoutMs: this.rng.range(this.settings.deliveryTimeoutMsMin, this.settings.deliveryTimeoutMsMax),
      maxBlockMs: 10_000, retryBackoffMs: 100, retryBackoffMaxMs: 1_000, rng: this.rng.fork(),
    });
    const pacer = new SendPacer<TopicPartition>(this.settings.inFlightPerPartitionMax);
    const inFlight = new Set<Promise<void>>();
    const endMs = performance.now() + lifetimeMs;
    while (!this.stopped && performance.now() < endMs) {
      const perTick = (this.settings.ratePerSecond * TICK_MS) / 1000;
      for (const { tp, seq, done } of pacer.tick(this.deps.partitions(), perTick)) {
        const p = this.send(producer, name, tp.topic, tp.partition, seq, tp.compacted === true ? `k${seq % COMPACTED_KEYS}` : undefined).finally(() => {
          done();
          inFlight.delete(p);
        });
        inFlight.add(p);
      }
      await this.pause(TICK_MS);
    }
    await Promise.all(inFlight);
    await producer.close().catch(() => undefined);
    client.close();
  }

  /** `key` only for the compacted topic: its check is on the last value of each key. */
  private async send(producer: Producer, name: string, topic: string, partition: number, seq: number, key?: string): Promise<void> {
    const value = `${name}-${topic}-${partition}-${seq}`;
    const keyed = key === undefined ? {} : { key };
    const invokeMs = this.deps.clock();
    this.counts.sends++;
    let op: SendOp;
    try {
      const [meta] = await producer.send({ topic, messages: [{ value, partition, ...keyed }] });
      const offset = meta && meta.offset >= 0 ? meta.offset : undefined;
      const broker = offset === undefined ? undefined : this.tracer.take(topic, partition, offset);
      op = {
        kind: 'send', invokeMs, completeMs: this.deps.clock(), producer: name, topic, partition, seq, value, ...keyed, outcome: { type: 'ok' },
        ...(offset === undefined ? {} : { offset }), ...(broker === undefined ? {} : { broker }),
      };
      this.counts.ok++;
    } catch (err) {
      const outcome = outcomeOf(err);
      if (outcome.type === 'fail') this.counts.failed++;
      else this.counts.unknown++;
      op = { kind: 'send', invokeMs, completeMs: this.deps.clock(), producer: name, topic, partition, seq, value, ...keyed, outcome };
    }
    this.deps.record(op);
  }
}
