// Bookkeeping of client operations waiting on the Raft log: proposals waiting
// to be applied, and linearizable reads waiting for leadership confirmation
// and then for the state machine to catch up. Pure data structures (no I/O,
// no timers): the driver feeds them events and the current monotonic time.
//
// Invariants:
//   - a proposal settles exactly once: resolved when the entry at its index
//     is applied with its term; rejected when that index is applied with
//     another term, is truncated away, is swallowed by an installed snapshot
//     (outcome unknown), times out (outcome unknown), or the node stops;
//   - a read resolves only after a ReadState confirmed leadership at index i
//     AND the state machine applied i; it rejects when leadership is lost
//     before confirmation, on timeout, or on stop;
//   - both maps are bounded by the driver (proposalsPendingMax, readsPendingMax);
//     entries are inserted in deadline order, so expiry scans stop early.

import { Errors, SluiceError } from '../util/errors.js';

export interface Proposed {
  readonly index: number;
  readonly term: number;
}

interface Waiter<T> {
  readonly resolve: (value: T) => void;
  readonly reject: (err: Error) => void;
  readonly deadlineMs: number;
}

interface PendingProposal extends Waiter<Proposed> {
  readonly term: number;
}

export class ProposalTracker {
  private readonly pending = new Map<number, PendingProposal>();

  get size(): number {
    return this.pending.size;
  }

  add(index: number, term: number, deadlineMs: number): Promise<Proposed> {
    const stale = this.pending.get(index);
    if (stale) {
      // Only reachable if a truncation went unnoticed; never leave a promise hanging.
      this.pending.delete(index);
      stale.reject(new SluiceError(Errors.NOT_CONTROLLER, `index ${index} was reused by a later term`));
    }
    return new Promise<Proposed>((resolve, reject) => {
      this.pending.set(index, { term, resolve, reject, deadlineMs });
    });
  }

  /** The entry at `index` was applied with `term`. `overwritten` builds the error for a term mismatch. */
  onApplied(index: number, term: number, overwritten: () => SluiceError): void {
    const p = this.pending.get(index);
    if (!p) return;
    this.pending.delete(index);
    if (p.term === term) p.resolve({ index, term });
    else p.reject(overwritten());
  }

  /** The log changed from `fromIndex` on: proposals there whose entry is no longer in the log reject. */
  onTruncation(fromIndex: number, termAt: (index: number) => number | undefined, overwritten: () => SluiceError): void {
    for (const [index, p] of this.pending) {
      if (index >= fromIndex && termAt(index) !== p.term) {
        this.pending.delete(index);
        p.reject(overwritten());
      }
    }
  }

  /** A snapshot up to `index` replaced the state: whether those proposals committed is unknown. */
  onSnapshotInstalled(index: number): void {
    for (const [i, p] of this.pending) {
      if (i > index) continue;
      this.pending.delete(i);
      p.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, `outcome unknown: a snapshot up to ${index} replaced the log`));
    }
  }

  expire(nowMs: number): void {
    for (const [index, p] of this.pending) {
      if (p.deadlineMs > nowMs) break;
      this.pending.delete(index);
      p.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, `proposal at index ${index} not applied in time; outcome unknown`));
    }
  }

  rejectAll(err: SluiceError): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(err);
  }
}

interface ConfirmedRead {
  readonly index: number;
  readonly waiter: Waiter<number>;
}

export class ReadTracker {
  private nextId = 1;
  /** Reads waiting for a ReadState, by request id. */
  private readonly unconfirmed = new Map<number, Waiter<number>>();
  /** Reads confirmed at an index, waiting for apply; ReadStates come in index order. */
  private confirmed: ConfirmedRead[] = [];

  get size(): number {
    return this.unconfirmed.size + this.confirmed.length;
  }

  /** Registers a read; the caller hands `id` to raft.readIndex(). */
  add(deadlineMs: number): { id: number; done: Promise<number> } {
    const id = this.nextId++;
    const done = new Promise<number>((resolve, reject) => {
      this.unconfirmed.set(id, { resolve, reject, deadlineMs });
    });
    return { id, done };
  }

  /** Drops a read the core refused to start. */
  cancel(id: number, err: SluiceError): void {
    const w = this.unconfirmed.get(id);
    this.unconfirmed.delete(id);
    w?.reject(err);
  }

  onReadState(id: number, index: number, applied: number): void {
    const waiter = this.unconfirmed.get(id);
    if (!waiter) return;
    this.unconfirmed.delete(id);
    if (index <= applied) waiter.resolve(index);
    else this.confirmed.push({ index, waiter });
  }

  onApplied(applied: number): void {
    if (this.confirmed.length === 0) return;
    const still: ConfirmedRead[] = [];
    for (const r of this.confirmed) {
      if (r.index <= applied) r.waiter.resolve(r.index);
      else still.push(r);
    }
    this.confirmed = still;
  }

  /** Leadership was lost: unconfirmed reads can no longer be confirmed by this node. */
  onLostLeadership(err: SluiceError): void {
    const all = [...this.unconfirmed.values()];
    this.unconfirmed.clear();
    for (const w of all) w.reject(err);
  }

  expire(nowMs: number): void {
    for (const [id, w] of this.unconfirmed) {
      if (w.deadlineMs > nowMs) break;
      this.unconfirmed.delete(id);
      w.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, 'read not confirmed in time'));
    }
    const late = this.confirmed.filter((r) => r.waiter.deadlineMs <= nowMs);
    if (late.length === 0) return;
    this.confirmed = this.confirmed.filter((r) => r.waiter.deadlineMs > nowMs);
    for (const r of late) r.waiter.reject(new SluiceError(Errors.REQUEST_TIMED_OUT, 'state machine did not catch up in time'));
  }

  rejectAll(err: SluiceError): void {
    this.onLostLeadership(err);
    const all = this.confirmed;
    this.confirmed = [];
    for (const r of all) r.waiter.reject(err);
  }
}
