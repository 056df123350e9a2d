// The I/O loop of `sluice produce`: stdin chunks → send() calls, with memory
// bounded end to end; with --transactional-id, inside transactions (one per
// run, or one per --transaction-records records).
//
// Invariants:
// - At most sendWindowMax send() calls (one per stdin chunk) are unresolved;
//   reading stdin stops until the oldest resolves, and the producer itself
//   blocks a send() while bufferBytesMax is full. So memory is about
//   sendWindowMax stdin chunks plus the producer's buffer, whatever the size
//   of the input.
// - Sends resolve in call order (we await the oldest first), so the tally and
//   the --json lines follow the input order.
// - Every send() promise has a rejection handler from the moment it exists:
//   a failure waiting in the window is not an unhandled rejection; it is
//   thrown when its turn comes.

import type { Readable, Writable } from 'node:stream';
import type { Producer, ProducerMessage, RecordMetadata, Transaction } from '../client/producer.js';
import { LineSplitter, lineToMessage, ProduceTally, type RecordShape } from './produce-input.js';
import { SystemScheduler, type Scheduler } from '../util/clock.js';

/** send() calls (one per stdin chunk) awaiting their acknowledgement. */
export const SEND_WINDOW_MAX = 8;
/** How often a long run prints how far it got. */
export const PROGRESS_INTERVAL_MS = 5_000;

export interface ProduceRun {
  readonly producer: Producer;
  readonly topic: string;
  readonly shape: RecordShape;
  readonly input: Readable;
  /** Where --json lines go (null: not wanted). */
  readonly jsonOut: Writable | null;
  readonly progress: (line: string) => void;
  readonly progressIntervalMs?: number;
  /** Arms the progress lines (default: the system's timers; the CLI is a process entry point). */
  readonly scheduler?: Scheduler;
  /**
   * The producer is transactional: send every record inside a transaction,
   * committing every `recordsMax` records (null: one transaction for the
   * whole input, committed at its end). A failure aborts the open
   * transaction, so none of its records is ever visible to read_committed
   * readers; transactions committed before it stay.
   */
  readonly transactions?: { readonly recordsMax: number | null };
}

/** Sends every line of `input`; resolves with the tally once all are acknowledged and the producer is closed. */
export async function produceLines(run: ProduceRun): Promise<ProduceTally> {
  const tally = new ProduceTally();
  const window: Array<Promise<RecordMetadata[]>> = [];
  const drainOne = async (): Promise<void> => {
    const sent = await window.shift()!;
    for (const meta of sent) {
      tally.add(meta.partition);
      if (run.jsonOut) await writeLine(run.jsonOut, JSON.stringify({ topic: meta.topic, partition: meta.partition, offset: meta.offset }));
    }
  };
  const txns = run.transactions ? new TransactionCycle(run.producer, run.transactions.recordsMax, async () => {
    while (window.length > 0) await drainOne();
  }) : null;
  if (txns) tally.transactions = 0;
  const sendSlice = async (lines: string[]): Promise<void> => {
    const messages = lines.map((l) => lineToMessage(l, run.shape));
    const p = txns ? txns.send(run.topic, messages) : run.producer.send({ topic: run.topic, messages });
    p.catch(() => undefined);
    window.push(p);
    if (window.length >= SEND_WINDOW_MAX) await drainOne();
  };
  const send = async (lines: string[]): Promise<void> => {
    if (lines.length === 0) return;
    if (!txns) return sendSlice(lines);
    for (let i = 0; i < lines.length;) {
      await txns.open();
      const n = Math.min(lines.length - i, txns.room);
      await sendSlice(lines.slice(i, i + n));
      i += n;
      txns.sent(n);
      if (txns.room === 0) tally.transactions = await txns.commit();
    }
  };
  const scheduler = run.scheduler ?? SystemScheduler;
  const intervalMs = run.progressIntervalMs ?? PROGRESS_INTERVAL_MS;
  // One progress line per interval, re-armed after each; the system's timers
  // are unref'd, so a pending line never keeps the process alive.
  let cancelProgress = (): void => undefined;
  const armProgress = (): void => {
    cancelProgress = scheduler.schedule(intervalMs, () => {
      run.progress(`${tally.total} record(s) acknowledged so far`);
      armProgress();
    });
  };
  armProgress();
  try {
    const splitter = new LineSplitter();
    for await (const chunk of run.input) await send(splitter.push(chunk as Buffer | string));
    await send(splitter.end());
    while (window.length > 0) await drainOne();
    if (txns) tally.transactions = await txns.commit();
    await run.producer.close();
  } catch (err) {
    await txns?.abandon();
    throw err;
  } finally {
    cancelProgress();
  }
  return tally;
}

/** One transaction open at a time, committed every recordsMax records. */
class TransactionCycle {
  private tx: Transaction | null = null;
  private inTx = 0;
  private committed = 0;

  constructor(private readonly producer: Producer, private readonly recordsMax: number | null, private readonly drain: () => Promise<void>) {}

  /** Records the open transaction may still take. */
  get room(): number {
    return this.recordsMax === null ? Number.MAX_SAFE_INTEGER : this.recordsMax - this.inTx;
  }

  async open(): Promise<void> {
    if (this.tx === null) {
      this.tx = await this.producer.transaction();
      this.inTx = 0;
    }
  }

  send(topic: string, messages: ProducerMessage[]): Promise<RecordMetadata[]> {
    return this.tx!.send({ topic, messages });
  }

  sent(n: number): void {
    this.inTx += n;
  }

  /** Waits for every send, commits; returns how many transactions were committed so far. */
  async commit(): Promise<number> {
    await this.drain();
    if (this.tx !== null) {
      await this.tx.commit();
      this.tx = null;
      this.committed++;
    }
    return this.committed;
  }

  /** After a failure: aborts the open transaction if the producer still can (its error is what the caller reports). */
  async abandon(): Promise<void> {
    const tx = this.tx;
    this.tx = null;
    if (tx?.isActive()) await tx.abort().catch(() => undefined);
  }
}

/** Writes one line, waiting for 'drain' when the reader is slower than we are. */
export async function writeLine(out: Writable, line: string): Promise<void> {
  if (out.write(`${line}\n`)) return;
  await new Promise<void>((resolve, reject) => {
    const done = (err?: Error) => {
      out.off('drain', done);
      out.off('error', done);
      if (err) reject(err);
      else resolve();
    };
    out.once('drain', done);
    out.once('error', done);
  });
}
