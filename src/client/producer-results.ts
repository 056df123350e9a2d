// What one send() call waits for: the outcome of each of its records, in
// input order. One SendResults per call and one small PendingRecord object
// per record (methods on the prototype, no closures): a promise and two
// closures per record were a large share of what a producer allocated at
// 100,000 records/s. A send() of one record on the fast path (producer.ts
// trySendNow) takes a SingleSend instead: the record's slot and the call's
// result in one object, with one promise, the one send() returns.
//
// Invariants: `done` settles once — resolved with every record's metadata
// when the last record succeeds after close(), rejected with the first
// failure; outcomes after that are ignored. Records are numbered by add(),
// so results keep the order in which records were appended.

import type { SluiceError } from '../util/errors.js';
import type { PendingRecord, RecordMetadata } from './producer-batch.js';

export class SendResults {
  private readonly results: RecordMetadata[] = [];
  private outstanding = 0;
  private closed = false;
  private settled = false;
  private resolveDone!: (results: RecordMetadata[]) => void;
  private rejectDone!: (err: SluiceError) => void;
  readonly done: Promise<RecordMetadata[]>;

  constructor() {
    this.done = new Promise((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    // A send() that failed while appending never awaits this; its records still settle it.
    this.done.catch(() => undefined);
  }

  /** A record of this call, in input order. */
  add(): PendingRecord {
    this.outstanding++;
    return new ResultSlot(this, this.results.push(PENDING) - 1);
  }

  /** Every record has been added: `done` resolves once they have all succeeded. */
  close(): void {
    this.closed = true;
    this.maybeResolve();
  }

  succeeded(index: number, meta: RecordMetadata): void {
    this.results[index] = meta;
    this.outstanding--;
    this.maybeResolve();
  }

  failed(err: SluiceError): void {
    this.outstanding--;
    if (this.settled) return;
    this.settled = true;
    this.rejectDone(err);
  }

  private maybeResolve(): void {
    if (this.settled || !this.closed || this.outstanding > 0) return;
    this.settled = true;
    this.resolveDone(this.results);
  }
}

/** Placeholder until a record's outcome is known (never returned: done resolves only once all are set). */
const PENDING: RecordMetadata = Object.freeze({ topic: '', partition: -1, offset: -1 });

class ResultSlot implements PendingRecord {
  constructor(
    private readonly owner: SendResults,
    private readonly index: number,
  ) {}

  resolve(meta: RecordMetadata): void {
    this.owner.succeeded(this.index, meta);
  }

  reject(err: SluiceError): void {
    this.owner.failed(err);
  }
}

/**
 * A one-record send() on the fast path: `done` resolves with that record's
 * metadata (in an array, as every send()) or rejects with its failure; the
 * first outcome wins (a promise settles once). The caller owns `done`, so no
 * handler is attached here: an unobserved failure is the caller's to see.
 */
export class SingleSend implements PendingRecord {
  readonly done: Promise<RecordMetadata[]>;
  private resolveDone!: (results: RecordMetadata[]) => void;
  private rejectDone!: (err: SluiceError) => void;

  constructor() {
    this.done = new Promise((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
  }

  resolve(meta: RecordMetadata): void {
    this.resolveDone([meta]);
  }

  reject(err: SluiceError): void {
    this.rejectDone(err);
  }
}
