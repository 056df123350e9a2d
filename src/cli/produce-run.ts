// The I/O loop of `sluice produce`: stdin chunks → send() calls, with memory
// bounded end to end.
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
import type { Producer, RecordMetadata } from '../client/producer.js';
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
  const send = async (lines: string[]): Promise<void> => {
    if (lines.length === 0) return;
    const p = run.producer.send({ topic: run.topic, messages: lines.map((l) => lineToMessage(l, run.shape)) });
    p.catch(() => undefined);
    window.push(p);
    if (window.length >= SEND_WINDOW_MAX) await drainOne();
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
    await run.producer.close();
  } finally {
    cancelProgress();
  }
  return tally;
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
