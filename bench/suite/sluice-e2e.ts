// Sluice's end-to-end latency workload: the real batching Producer sends at a
// fixed offered rate, each value starting with its send time (float64 ms,
// nowMs()); a consumer long-polls Fetch on the partition's leader and records,
// for every record, arrival time minus send time in an HdrHistogram. A record
// arrives only once the high watermark passes it, so with acks=all the
// latency includes replication.
//
// The producer runs with lingerMs 0, Kafka's classic default and the setting
// for low latency: a batch goes out as soon as a request slot is free, and
// while every slot is busy the open batch keeps filling (producer-accumulator.ts),
// so under load batches still grow. The peers have no linger either.
//
// With `consumer: 'group'` (the real-client rows, issue 19) the reader is a
// Consumer.run() member of a fresh group instead of the raw Fetch loop, and
// the Producer takes the deployment's options with lingerMs 0.
//
// Sending is paced (measure.ts Pacer): every tick sends what is due so far in
// one send() call. The first spec.warmupSeconds are sent but not measured
// (LatencyRecorder). After that the producer is flushed and the consumer runs
// until it has every record sent (bounded by DRAIN_MS_MAX).
import { Client } from '../../src/index.js';
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import { decodeFetchedRecords } from '../../src/client/records.js';
import { LatencyRecorder, Pacer, nowMs, randomValues } from './measure.js';
import type { E2eSpec, LatencyResult, Progress } from './types.js';

const LINGER_MS = 0;
const TICK_MS = 1;
const FETCH_WAIT_MS = 100;
const DRAIN_MS_MAX = 30_000;
const TIMESTAMP_BYTES = 8;
const VALUE_POOL_SIZE = 256;

export interface E2eInput {
  readonly bootstrap: readonly string[];
  readonly topic: string;
  /** A connection to the leader of partition 0, for the consumer. */
  readonly leader: BrokerConnection;
  readonly acks: -1 | 1;
  /** 'fetch' (default): long-polled Fetch on `leader`; 'group': Consumer.run() in a one-member group. */
  readonly consumer?: 'fetch' | 'group';
  /** Producer options beyond acks (lingerMs is 0 whatever is given). */
  readonly producerOptions?: { readonly batchBytes?: number };
}

const GROUP_SESSION_TIMEOUT_MS = 10_000;

export async function e2eLatency(input: E2eInput, spec: E2eSpec, progress: Progress): Promise<LatencyResult> {
  const latencies = new LatencyRecorder();
  const client = new Client({ bootstrap: [...input.bootstrap], clientId: 'bench-e2e' });
  const producer = client.producer({ acks: input.acks, idempotent: input.acks === -1, ...input.producerOptions, lingerMs: LINGER_MS });
  /** Set once sending ended: the consumer stops when it has this many records (or the drain time is up). */
  let target: number | null = null;
  let drainDeadlineMs = Infinity;
  let abandoned = false;
  let consumer: Promise<void> = Promise.resolve();
  try {
    // Warm-up, not measured: the first send waits for metadata and (idempotent) a producer id,
    // which took ~400 ms and was the whole p99 of a 5-second run. The topic is fresh: it lands at offset 0.
    const [warm] = await producer.send({ topic: input.topic, messages: [{ value: Buffer.alloc(Math.max(TIMESTAMP_BYTES, spec.valueBytes)) }] });
    const firstOffset = (warm?.offset ?? 0) + 1;
    const done = (): boolean => abandoned || (target !== null && (latencies.received >= target || performance.now() >= drainDeadlineMs));
    consumer = input.consumer === 'group' ? readWithGroup(client, input.topic, firstOffset, latencies, progress, done) : (async () => {
      let offset = firstOffset;
      while (!done()) {
        const res = await input.leader.fetch({ maxWaitMs: FETCH_WAIT_MS, topics: [{ name: input.topic, partitions: [{ partition: 0, fetchOffset: offset }] }] });
        const arrivedMs = nowMs();
        const p = res.topics[0]?.partitions[0];
        if (!p || p.errorCode !== 0) throw new Error(`fetch ${input.topic}-0@${offset}: ${p?.errorMessage ?? `error ${p?.errorCode}`}`);
        for (const r of decodeFetchedRecords(p.records, offset)) {
          latencies.record(r.value!.readDoubleLE(0), arrivedMs);
          offset = r.offset + 1;
        }
        progress(latencies.received);
      }
    })();
    // A failed consumer is reported when awaited below; until then it must not count as unhandled.
    consumer.catch(() => undefined);
    latencies.start(spec.warmupSeconds);
    const { sent, seconds } = await sendPaced(producer, input.topic, spec);
    drainDeadlineMs = performance.now() + DRAIN_MS_MAX;
    target = sent;
    await consumer;
    if (latencies.received < sent) throw new Error(`the consumer received ${latencies.received} of ${sent} records within ${DRAIN_MS_MAX} ms of the last send`);
    return latencies.result(spec, seconds);
  } finally {
    abandoned = true;
    await consumer.catch(() => undefined);
    await producer.close().catch(() => undefined);
    client.close();
  }
}

/** A Consumer.run() member of a fresh group times every record from `firstOffset` on; resolves once `done()`. */
async function readWithGroup(
  client: Client, topic: string, firstOffset: number, latencies: LatencyRecorder, progress: Progress, done: () => boolean,
): Promise<void> {
  const consumer = client.consumer({ groupId: `bench-e2e-${topic}`, autoOffsetReset: 'earliest', sessionTimeoutMs: GROUP_SESSION_TIMEOUT_MS, maxWaitMs: FETCH_WAIT_MS });
  let failure: Error | null = null;
  consumer.on('crash', (e) => { failure = e.error; });
  try {
    await consumer.subscribe({ topics: topic, fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        const arrivedMs = nowMs();
        for (const m of batch.messages) if (Number(m.offset) >= firstOffset) latencies.record(m.value!.readDoubleLE(0), arrivedMs);
        progress(latencies.received);
      },
    });
    while (!done() && failure === null) await new Promise((resolve) => setTimeout(resolve, FETCH_WAIT_MS));
    if (failure !== null) throw failure;
  } finally {
    await consumer.close().catch(() => undefined);
  }
}

type Sender = ReturnType<Client['producer']>;

/** Sends at spec.ratePerS for the warm-up and spec.seconds; resolves once every record is acknowledged. */
async function sendPaced(producer: Sender, topic: string, spec: E2eSpec): Promise<{ sent: number; seconds: number }> {
  const pool = randomValues(VALUE_POOL_SIZE, Math.max(TIMESTAMP_BYTES, spec.valueBytes));
  const pacer = new Pacer(spec.ratePerS);
  // Outstanding send() calls are counted, not kept: holding every answered
  // send's results until the end made the process promote ~100,000 objects
  // a second at 100,000 rec/s, and its garbage collections then showed up
  // as latency (scavenges of 3-5 ms every 50 ms, then long old-generation ones).
  let outstanding = 0;
  let allAnswered: (() => void) | null = null;
  let failure: unknown = null;
  let sent = 0;
  const start = performance.now();
  const endMs = start + (spec.warmupSeconds + spec.seconds) * 1000;
  while (performance.now() < endMs && failure === null) {
    const due = pacer.due();
    if (due > 0) {
      const sendMs = nowMs();
      const messages = new Array<{ value: Buffer }>(due);
      for (let i = 0; i < due; i++) {
        // Each record needs its own buffer: the Producer holds values as views until their batch is encoded.
        const value = Buffer.from(pool[(sent + i) % VALUE_POOL_SIZE]!);
        value.writeDoubleLE(sendMs, 0);
        messages[i] = { value };
      }
      outstanding++;
      producer.send({ topic, messages }).then(() => undefined, (err: unknown) => {
        failure ??= err;
      }).finally(() => {
        if (--outstanding === 0) allAnswered?.();
      });
      pacer.markSent(due);
      sent += due;
    }
    await new Promise((resolve) => setTimeout(resolve, TICK_MS));
  }
  const seconds = (performance.now() - start) / 1000;
  if (outstanding > 0) await new Promise<void>((resolve) => { allAnswered = resolve; });
  if (failure !== null) throw failure instanceof Error ? failure : new Error(String(failure));
  return { sent, seconds };
}
