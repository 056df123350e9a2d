// Sluice's produce workload: the fastest honest way to write with our own
// client code. Each producer owns one partition and one BrokerConnection to
// its leader; it encodes RecordBatch v2 batches as it sends them (the client's
// real encode cost, CRC included) and keeps `IN_FLIGHT` produce requests
// pipelined on its connection, as bench/produce.bench.ts does. A record counts
// once its batch is acknowledged (acks=1: by the leader; acks=all: by the
// ISR); any error fails the workload. The record budget is shared by the
// producers, claimed a batch at a time; the time cap stops new batches.
//
// Afterwards every partition's high watermark must reach the records
// acknowledged for it — what the consume workload then reads.
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import { encodeMessages } from '../../src/client/records.js';
import { latestOffset } from '../../test/integration/broker-kit.js';
import { waitFor } from '../../test/integration/harness.js';
import { ThroughputMeter, randomValues } from './measure.js';
import type { Progress, ProduceSpec, ThroughputResult } from './types.js';

/** A batch holds about this many value bytes (500 records of 100 B, 48 of 1 KiB). */
export const BATCH_VALUE_BYTES_TARGET = 50_000;
/** Produce requests pipelined per producer connection. */
export const IN_FLIGHT = 8;
/** Distinct random values each producer cycles through. */
const VALUE_POOL_SIZE = 1024;
const PRODUCE_TIMEOUT_MS = 30_000;
const HW_WAIT_MS = 30_000;

export function batchRecordsFor(valueBytes: number): number {
  return Math.max(1, Math.floor(BATCH_VALUE_BYTES_TARGET / Math.max(1, valueBytes)));
}

export interface PartitionTarget {
  readonly partition: number;
  /** A connection of this producer's own to the partition's leader. */
  readonly conn: BrokerConnection;
}

export interface ProduceOutcome {
  readonly result: ThroughputResult;
  /** Records acknowledged per partition (index = position in `targets`). */
  readonly acked: readonly number[];
}

/** Runs `targets.length` producers in parallel, one per partition, until the records or the seconds run out. */
export async function producePipelined(
  topic: string, targets: readonly PartitionTarget[], acks: -1 | 1, spec: ProduceSpec, progress: Progress,
): Promise<ProduceOutcome> {
  const batchRecords = batchRecordsFor(spec.valueBytes);
  const meter = new ThroughputMeter();
  const deadline = performance.now() + spec.seconds * 1000;
  let claimed = 0;
  let failed = false;
  const claim = (): number => {
    const n = Math.min(batchRecords, spec.records - claimed);
    if (n <= 0 || failed || performance.now() >= deadline) return 0;
    claimed += n;
    return n;
  };
  const acked = targets.map(() => 0);
  await Promise.all(targets.map(async (t, i) => {
    const values = randomValues(VALUE_POOL_SIZE, spec.valueBytes);
    let cursor = 0;
    const lane = async (): Promise<void> => {
      for (let n = claim(); n > 0; n = claim()) {
        const messages = new Array<{ value: Buffer }>(n);
        for (let k = 0; k < n; k++) messages[k] = { value: values[cursor++ % VALUE_POOL_SIZE]! };
        const records = encodeMessages(messages, { timestampMs: Date.now() });
        const res = await t.conn.produce({ acks, timeoutMs: PRODUCE_TIMEOUT_MS, topics: [{ name: topic, partitions: [{ partition: t.partition, records }] }] });
        const p = res.topics[0]?.partitions[0];
        if (!p || p.errorCode !== 0) throw new Error(`produce to ${topic}-${t.partition} failed: ${p?.errorMessage ?? `error ${p?.errorCode}`}`);
        acked[i]! += n;
        meter.add(n, n * spec.valueBytes);
        progress(meter.done);
      }
    };
    // One failed request stops every lane (no new batches), then fails the workload.
    await Promise.all(Array.from({ length: IN_FLIGHT }, () => lane().catch((err: unknown) => {
      failed = true;
      throw err;
    })));
  }));
  const result = meter.result();
  await Promise.all(targets.map((t, i) => waitFor(`${topic}-${t.partition}'s high watermark to reach ${acked[i]} acknowledged records`,
    async () => (await latestOffset(t.conn, topic, t.partition)) >= acked[i]!, { timeoutMs: HW_WAIT_MS, intervalMs: 20 })));
  return { result, acked };
}
