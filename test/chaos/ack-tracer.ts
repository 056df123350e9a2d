// Which broker acknowledged a record, for the checker's single-leadership
// invariant ("no two brokers acknowledged a write for the same partition in
// the same leader epoch"). The public Producer resolves a send with its
// offset only; this client subclass watches the produce requests and
// responses of its connections to learn the broker too.
//
// Soundness: a broker is attributed only to records of a batch that was sent
// exactly once. A retried batch may be answered as a duplicate by a later
// leader (which then did not append it, in the stored record's epoch), so
// naming that broker would report a split brain that never happened. A batch
// is identified by (topic, partition, producer id, producer epoch, base
// sequence): the idempotent producer resends a batch as the same bytes.
//
// Invariant: an entry is kept only until the send asks for it (take()), and
// the tables are bounded (oldest entries dropped past ENTRIES_MAX).

import { Client, type ClientOptions } from '../../src/index.js';
import type { BrokerConnection } from '../../src/client/broker-connection.js';
import { readBatchHeader } from '../../src/record/batch-header.js';

const ENTRIES_MAX = 200_000;

export class AckTracer {
  /** Batch identity → times sent. */
  private readonly attempts = new Map<string, number>();
  /** `topic/partition/offset` → the broker that appended it (single-attempt batches only). */
  private readonly ackers = new Map<string, number>();
  private readonly wrapped = new WeakSet<BrokerConnection>();

  /** Patches `conn` (once) so its produce answers are observed. */
  wrap(conn: BrokerConnection, brokerId: number): BrokerConnection {
    if (this.wrapped.has(conn)) return conn;
    this.wrapped.add(conn);
    const original = conn.produce.bind(conn) as (req: Parameters<BrokerConnection['produce']>[0]) => ReturnType<BrokerConnection['produce']>;
    const patched = async (req: Parameters<BrokerConnection['produce']>[0]) => {
      const keys = this.noteRequest(req);
      const res = await original(req);
      if (res) this.noteResponse(brokerId, res, keys);
      return res;
    };
    (conn as unknown as { produce: typeof patched }).produce = patched;
    return conn;
  }

  /** The broker that acknowledged the record at `offset`, if known; forgets it. */
  take(topic: string, partition: number, offset: number): number | undefined {
    const key = `${topic}/${partition}/${offset}`;
    const broker = this.ackers.get(key);
    this.ackers.delete(key);
    return broker;
  }

  /** Per partition of the request: its batch's identity, or null when the request holds several batches of it. */
  private noteRequest(req: Parameters<BrokerConnection['produce']>[0]): Map<string, { key: string; count: number } | null> {
    const keys = new Map<string, { key: string; count: number } | null>();
    for (const t of req.topics) {
      for (const p of t.partitions) {
        const h = readBatchHeader(Buffer.from(p.records.buffer, p.records.byteOffset, p.records.byteLength));
        const key = `${t.name}/${p.partition}/${h.producerId}/${h.producerEpoch}/${h.baseSequence}`;
        this.attempts.set(key, (this.attempts.get(key) ?? 0) + 1);
        const tp = `${t.name}/${p.partition}`;
        keys.set(tp, keys.has(tp) ? null : { key, count: h.recordCount });
      }
    }
    trim(this.attempts);
    return keys;
  }

  private noteResponse(brokerId: number, res: NonNullable<Awaited<ReturnType<BrokerConnection['produce']>>>, keys: Map<string, { key: string; count: number } | null>): void {
    for (const t of res.topics) {
      for (const p of t.partitions) {
        const sent = keys.get(`${t.name}/${p.partition}`);
        if (!sent || p.errorCode !== 0 || p.baseOffset < 0) continue;
        if (this.attempts.get(sent.key) !== 1) continue;
        for (let i = 0; i < sent.count; i++) this.ackers.set(`${t.name}/${p.partition}/${p.baseOffset + i}`, brokerId);
      }
    }
    trim(this.ackers);
  }
}

function trim<K, V>(m: Map<K, V>): void {
  if (m.size <= ENTRIES_MAX) return;
  for (const k of m.keys()) {
    m.delete(k);
    if (m.size <= ENTRIES_MAX * 0.9) return;
  }
}

/** A Client whose broker connections report produce answers to `tracer`. */
export class TracingClient extends Client {
  constructor(opts: ClientOptions, private readonly tracer: AckTracer) {
    super(opts);
  }

  override async connection(brokerId: number): Promise<BrokerConnection> {
    return this.tracer.wrap(await super.connection(brokerId), brokerId);
  }
}
