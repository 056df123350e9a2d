// A long-poll fetch (Kafka's DelayedFetch): a fetch whose first read found
// less than minBytes waits, re-reading whenever a partition it watches is
// poked, until `ready(read)` holds; at the deadline, or when its partitions
// change hands, it answers with a read of that moment; once the connection
// or the broker has gone away, with its first read (nobody reads the answer).

import type { FetchResponse } from '../protocol/apis/fetch.js';
import { DelayedOperation } from './delayed.js';

/** One read of a fetch's partitions: the record bytes found, whether any partition erred, and the answer it makes. */
export interface FetchRead {
  readonly bytes: number;
  readonly anyError: boolean;
  /** Builds the answer; call it once, for the answer that goes out (a session read marks what it sent). */
  answer(): FetchResponse;
}

export class DelayedFetch extends DelayedOperation {
  /** The read to answer with, once known. */
  private result: FetchRead | null = null;

  constructor(
    private readonly first: FetchRead,
    private readonly read: () => FetchRead,
    private readonly ready: (r: FetchRead) => boolean,
    /** The connection closed or the broker stopped: nothing more to wait for. */
    private readonly gone: () => boolean,
    private readonly answer: (res: FetchResponse) => void,
  ) {
    super();
  }

  tryComplete(): boolean {
    if (this.gone()) {
      this.result = this.first;
      return this.forceComplete();
    }
    const again = this.read();
    if (!this.ready(again)) return false;
    this.result = again;
    return this.forceComplete();
  }

  protected onComplete(): void {
    this.answer((this.result ?? this.read()).answer());
  }
}
