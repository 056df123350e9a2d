// Sluice measured through the client an application calls (issue 19), beside
// the raw-connection workloads of sluice-produce.ts / sluice-consume.ts
// (which stay as the protocol's ceiling):
//
// - produce: `spec.producers` Producers (each its own Client), producer i
//   sending to partition i in a loop of single-record `producer.send()`
//   calls — the call an application makes per record — with the options of
//   the deployment (defaults, or the tuned linger/batch). The loop is not
//   awaited per record: up to SEND_WINDOW_BYTES (1 MiB) of record values are
//   outstanding, and a record
//   counts once its send() promise resolves (acknowledged per `acks`).
// - consume: Consumer.run() in a group (consumeGroup, sluice-consume.ts),
//   one member or several, from the beginning to the acknowledged ends.
// - e2e: see sluice-e2e.ts (the Producer sends; with `consumer: 'group'` a
//   Consumer.run() member times each arrival).
import { Client } from '../../src/index.js';
import type { ProducerOptions } from '../../src/client/producer-options.js';
import { ThroughputMeter, randomValues } from './measure.js';
import type { Progress, ProduceSpec, ThroughputResult } from './types.js';

/**
 * Record bytes outstanding per producer (sent, not yet acknowledged). Chosen
 * by a sweep (RF=3 acks=all, 200,000 × 100 B, one producer, loaded machine):
 * client CPU per record 9.4 µs at 256 KiB, 12 µs at 1 MiB, 13-14 µs at 2-4 MiB,
 * 17-20 µs at 16 MiB, and the rate best at 1 MiB. Since issue 19's changes the
 * queue no longer costs per send (bench/send-loop.bench.ts: 1.9 µs at 256 KiB,
 * 2.8 at 1 MiB, 3.1 at 16 MiB, the growth being the garbage collection of the
 * promises alive); kept at 1 MiB so the suite's rows stay comparable.
 */
export const SEND_WINDOW_BYTES = 1024 * 1024;
const VALUE_POOL_SIZE = 1024;
const SEND_WAIT_MS = 60_000;

/** The Producer options of the deployments: defaults (nothing set) and the tuned variant. */
export type ClientProducerOptions = Pick<ProducerOptions, 'lingerMs' | 'batchBytes'>;
/** Same as Kafka's tuned producer (bench/peers/kafka.ts TUNED_PRODUCER): linger.ms=10, batch.size=262144. */
export const TUNED_CLIENT: ClientProducerOptions = { lingerMs: 10, batchBytes: 262_144 };
/**
 * Kafka's Java producer defaults (bench/peers/kafka.ts DEFAULT_PRODUCER: linger.ms=5, batch.size=16384), which
 * were the Producer's until its default batchBytes became 1,000,000: the like-for-like row beside Kafka's defaults.
 */
export const KAFKA_DEFAULTS_CLIENT: ClientProducerOptions = { lingerMs: 5, batchBytes: 16_384 };

/** Records per producer that may be outstanding for values of `valueBytes`. */
export function sendWindowRecords(valueBytes: number): number {
  return Math.max(1_000, Math.floor(SEND_WINDOW_BYTES / Math.max(1, valueBytes)));
}

/** Runs the producers; the result and the records acknowledged per partition. */
export async function produceWithClient(
  bootstrap: readonly string[], topic: string, warmupTopic: string, acks: -1 | 1, options: ClientProducerOptions, spec: ProduceSpec, progress: Progress,
): Promise<{ result: ThroughputResult; acked: number[] }> {
  const clients = Array.from({ length: spec.producers }, (_, i) => new Client({ bootstrap: [...bootstrap], clientId: `bench-producer-${i}` }));
  const producers = clients.map((c) => c.producer({ acks, idempotent: acks === -1, ...options }));
  const acked = producers.map(() => 0);
  const window = sendWindowRecords(spec.valueBytes);
  let claimed = 0;
  let failure: unknown = null;
  try {
    // Connections and (idempotent) producer ids before the clock: one record each to `warmupTopic` (a topic of
    // its own with at least spec.producers partitions, so the measured topic holds exactly what is counted).
    await Promise.all(producers.map((p, i) => p.send({ topic: warmupTopic, messages: [{ value: Buffer.alloc(spec.valueBytes), partition: i }] })));
    const m = new ThroughputMeter();
    const deadline = performance.now() + spec.seconds * 1000;
    await Promise.all(producers.map(async (p, i) => {
      const values = randomValues(VALUE_POOL_SIZE, spec.valueBytes);
      let outstanding = 0;
      /** A waiting loop: woken once outstanding falls to `atMost`. */
      let waiter: { readonly atMost: number; readonly wake: () => void } | null = null;
      const answered = (): void => {
        outstanding--;
        if (waiter !== null && outstanding <= waiter.atMost) {
          const w = waiter;
          waiter = null;
          w.wake();
        }
      };
      const settle = async (atMost: number, what: string): Promise<void> => {
        if (outstanding <= atMost) return;
        await waitBounded((wake) => { waiter = { atMost, wake }; }, `${outstanding} sends to ${topic}-${i} ${what}`);
      };
      let cursor = 0;
      while (failure === null && claimed < spec.records && performance.now() < deadline) {
        if (outstanding >= window) {
          await settle(Math.floor(window / 2), 'unanswered');
          continue;
        }
        claimed++;
        outstanding++;
        p.send({ topic, messages: [{ value: values[cursor++ % VALUE_POOL_SIZE]!, partition: i }] }).then(() => {
          acked[i]!++;
          m.add(1, spec.valueBytes);
          if ((m.done & 1023) === 0) progress(m.done);
          answered();
        }, (err: unknown) => {
          failure ??= err;
          answered();
        });
      }
      await settle(0, 'unanswered at the end');
    }));
    if (failure !== null) throw failure instanceof Error ? failure : new Error(String(failure));
    progress(m.done);
    return { result: m.result(), acked };
  } finally {
    await Promise.all(producers.map((p) => p.close().catch(() => undefined)));
    for (const c of clients) c.close();
  }
}

/** Waits for `arm`'s resolve, bounded by SEND_WAIT_MS. */
async function waitBounded(arm: (resolve: () => void) => void, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      new Promise<void>((resolve) => arm(resolve)),
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} within ${SEND_WAIT_MS} ms`)), SEND_WAIT_MS); }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
