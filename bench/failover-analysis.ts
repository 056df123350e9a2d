// The pure part of the failover benchmark (bench/failover.bench.ts, issue 19):
// percentiles, the Kafka failover driver's output lines, which acknowledgement
// was the new leader's first, and which acknowledged writes are missing from
// the log read back. No I/O, no clock: the bench's shell feeds it what it saw.
//
// "The new leader's first acknowledgement" on Kafka: the driver's callback
// does not say which broker answered, but every record read back carries the
// leader epoch it was appended in. The pre-kill epoch is that of the highest
// offset acknowledged by the time of the kill; the first acknowledgement
// after the kill whose offset lies in a later epoch was given by the new
// leader. (An acknowledgement the old leader sent just before it died may
// reach the client just after the kill; its offset is in the old epoch, so it
// does not count.)

/** The q-quantile of `samples` (nearest rank, rounded to the ms); 0 for none. */
export function quantile(samples: readonly number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0);
}

/** One acknowledged record, on the driver's wall clock (ms since the epoch). */
export interface KafkaAck {
  readonly atMs: number;
  readonly seq: number;
  readonly offset: number;
}

/** The failover driver's result: the read-back of the partition after the producer flushed. */
export interface KafkaFailoverResult {
  readonly sent: number;
  readonly acked: number;
  readonly failed: number;
  readonly records: number;
  /** Acknowledged sequence numbers absent from the log. */
  readonly lost: number;
  readonly lostSample: readonly number[];
  /** Sequence numbers in the log more than once. */
  readonly duplicates: number;
  /** [first offset, leader epoch] at each change of epoch, in offset order. */
  readonly epochs: ReadonlyArray<readonly [number, number]>;
}

export type FailoverLine =
  | { readonly event: 'started'; readonly atMs: number }
  | ({ readonly event: 'ack' } & KafkaAck)
  | { readonly event: 'send-error'; readonly atMs: number; readonly seq: number; readonly message: string }
  | ({ readonly event: 'result' } & KafkaFailoverResult)
  | { readonly event: 'error'; readonly message: string };

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The failover driver's event on `line`, or null for any other output or a malformed event. */
export function parseFailoverLine(line: string): FailoverLine | null {
  const t = line.trim();
  if (!t.startsWith('{"event":')) return null;
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(t) as Record<string, unknown>;
  } catch {
    return null;
  }
  switch (v.event) {
    case 'started':
      return finite(v.atMs) ? { event: 'started', atMs: v.atMs } : null;
    case 'ack':
      return finite(v.atMs) && finite(v.seq) && finite(v.offset) ? { event: 'ack', atMs: v.atMs, seq: v.seq, offset: v.offset } : null;
    case 'send-error':
      return finite(v.atMs) && finite(v.seq) ? { event: 'send-error', atMs: v.atMs, seq: v.seq, message: String(v.message) } : null;
    case 'error':
      return { event: 'error', message: String(v.message) };
    case 'result': {
      const epochs = v.epochs;
      const counts = [v.sent, v.acked, v.failed, v.records, v.lost, v.duplicates];
      if (!counts.every(finite) || !Array.isArray(epochs) || !Array.isArray(v.lostSample)) return null;
      if (!epochs.every((e) => Array.isArray(e) && e.length === 2 && finite(e[0]) && finite(e[1]))) return null;
      return {
        event: 'result', sent: v.sent as number, acked: v.acked as number, failed: v.failed as number, records: v.records as number,
        lost: v.lost as number, lostSample: (v.lostSample as unknown[]).map(Number), duplicates: v.duplicates as number,
        epochs: epochs as Array<[number, number]>,
      };
    }
    default:
      return null;
  }
}

/** The leader epoch `offset` was appended in, from the read-back's epoch changes; -1 below the first. */
export function epochAt(epochs: ReadonlyArray<readonly [number, number]>, offset: number): number {
  let epoch = -1;
  for (const [first, e] of epochs) {
    if (first > offset) break;
    epoch = e;
  }
  return epoch;
}

export interface NewLeaderAck {
  readonly ack: KafkaAck;
  readonly epoch: number;
  readonly preKillEpoch: number;
}

/**
 * The first acknowledgement after `killedAtMs` of a record appended in a later leader epoch
 * than the highest offset acknowledged by then (see the header); undefined when there is none
 * (or no acknowledgement came before the kill).
 */
export function firstAckByNewLeader(acks: readonly KafkaAck[], killedAtMs: number, epochs: ReadonlyArray<readonly [number, number]>): NewLeaderAck | undefined {
  let maxBefore = -1;
  for (const a of acks) if (a.atMs <= killedAtMs && a.offset > maxBefore) maxBefore = a.offset;
  if (maxBefore < 0) return undefined;
  const preKillEpoch = epochAt(epochs, maxBefore);
  let first: NewLeaderAck | undefined;
  for (const a of acks) {
    if (a.atMs <= killedAtMs || (first !== undefined && a.atMs >= first.ack.atMs)) continue;
    const epoch = epochAt(epochs, a.offset);
    if (epoch > preKillEpoch) first = { ack: a, epoch, preKillEpoch };
  }
  return first;
}

/** A run of acknowledged sequence numbers [from, from + count) (one Sluice produce batch). */
export interface SeqRange {
  readonly from: number;
  readonly count: number;
}

export interface Loss {
  readonly acked: number;
  readonly lost: number;
  /** The first few lost sequence numbers. */
  readonly sample: readonly number[];
}

/** The acknowledged sequence numbers that `found` (the log read back) lacks. */
export function lostWrites(acked: readonly SeqRange[], found: ReadonlySet<number>, sampleMax = 10): Loss {
  let n = 0;
  let lost = 0;
  const sample: number[] = [];
  for (const r of acked) {
    for (let s = r.from; s < r.from + r.count; s++) {
      n++;
      if (found.has(s)) continue;
      lost++;
      if (sample.length < sampleMax) sample.push(s);
    }
  }
  return { acked: n, lost, sample };
}
