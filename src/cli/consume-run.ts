// The read loop of `sluice consume`: records from the Consumer's async
// iterator until one of the stop conditions — maxMessages printed, no record
// for idleTimeoutMs, or a stop request (Ctrl-C) — then the consumer stops
// (in a group: commits and leaves).
//
// Why the iterator and not run({ eachMessage }): the iterator counts a record
// as processed only when the loop asks for the next one or leaves. So after
// the last printed record the loop leaves, and exactly the printed records are
// committed — no record is committed that was fetched but never printed.
//
// A next() that lost the race against the idle timer or the stop request is
// left pending; stopping the consumer resolves it (done), and its rejection,
// if any, is swallowed: the loop has already left. Such a next() may already
// hold a record it took but we never printed, so on those paths the loop
// leaves through consumer.stop(), not the iterator's return() (which would
// count the held record as processed). Calling next() has already completed
// the record printed before it.

import type { Consumer, ConsumerMessage } from '../client/consumer.js';
import { SystemScheduler, type Scheduler } from '../util/clock.js';

export type StopReason = 'max-messages' | 'idle-timeout' | 'stop-requested' | 'consumer-stopped';

export interface ConsumeRun {
  readonly consumer: Consumer;
  /** Stop after this many records (undefined: no bound). */
  readonly maxMessages?: number | undefined;
  /** Stop when no record arrived for this long (undefined: wait forever). */
  readonly idleTimeoutMs?: number | undefined;
  /** Resolves when the user asks to stop (Ctrl-C). */
  readonly stopRequested: Promise<void>;
  /** Prints a record; awaited before the next one is taken. */
  readonly onMessage: (m: ConsumerMessage) => Promise<void>;
  /** Arms the idle timeout (default: the system's timers; the CLI is a process entry point). */
  readonly scheduler?: Scheduler;
}

type Step = { readonly kind: 'message'; readonly m: ConsumerMessage } | { readonly kind: 'end'; readonly reason: StopReason };

/** Reads until a stop condition; resolves with the number of records handed to onMessage and why it stopped. */
export async function consumeUntilDone(run: ConsumeRun): Promise<{ count: number; reason: StopReason }> {
  const it = run.consumer[Symbol.asyncIterator]();
  const stop: Promise<Step> = run.stopRequested.then(() => ({ kind: 'end', reason: 'stop-requested' }));
  let count = 0;
  let reason: StopReason = 'max-messages';
  let returned = false;
  try {
    while (run.maxMessages === undefined || count < run.maxMessages) {
      const step = await nextStep(it, run.idleTimeoutMs, stop, run.scheduler ?? SystemScheduler);
      if (step.kind === 'end') {
        reason = step.reason;
        break;
      }
      await run.onMessage(step.m);
      count++;
    }
    // Only here — the last record it handed out was printed — does the
    // iterator hold a record that counts as processed: return() completes it.
    if (reason === 'max-messages') {
      returned = true;
      await it.return?.();
    }
  } finally {
    if (!returned) await run.consumer.stop();
  }
  return { count, reason };
}

async function nextStep(it: AsyncIterator<ConsumerMessage>, idleTimeoutMs: number | undefined, stop: Promise<Step>, scheduler: Scheduler): Promise<Step> {
  const next = it.next().then((r): Step => (r.done ? { kind: 'end', reason: 'consumer-stopped' } : { kind: 'message', m: r.value }));
  next.catch(() => undefined);
  let cancelIdle = (): void => undefined;
  const racers: Array<Promise<Step>> = [next, stop];
  if (idleTimeoutMs !== undefined) {
    racers.push(new Promise<Step>((resolve) => {
      cancelIdle = scheduler.schedule(idleTimeoutMs, () => resolve({ kind: 'end', reason: 'idle-timeout' }));
    }));
  }
  try {
    return await Promise.race(racers);
  } finally {
    cancelIdle();
  }
}
