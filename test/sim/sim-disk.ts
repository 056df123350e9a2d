// The simulated disk of one node: what survives a crash. Writes of a Ready go
// to a write buffer and become durable only when fsync() runs (the shell
// schedules it after a simulated latency). crash() loses the buffer — or, for
// a torn flush, makes a random prefix of it durable, as an operating system
// may write some dirty pages before a crash. A torn flush is a legal state for
// a correct Raft: nothing that depends on the unflushed part was sent.
//
// Layout mirrors the real shell: a snapshot (the state machine image and its
// metadata), the log entries after it (contiguous), and the hard state.
//
// Invariants:
// - durable entries are contiguous and start right after the snapshot index;
// - an entries write starting at index i replaces i and everything after it,
//   and never leaves a gap (i ≤ last durable index + 1);
// - persisting a received snapshot replaces the whole log (the core's log
//   starts after it); a local compaction keeps the entries after its index.

import { assert } from '../../src/util/assert.js';
import type { Entry, HardState, Snapshot } from '../../src/raft/types.js';
import type { Rng } from '../../src/util/rng.js';

export type DiskWrite =
  | { readonly kind: 'snapshot'; readonly snapshot: Snapshot }
  | { readonly kind: 'entries'; readonly entries: readonly Entry[] }
  | { readonly kind: 'hardState'; readonly hardState: HardState };

export const EMPTY_HARD_STATE: HardState = { term: 0, vote: 0, commit: 0 };

export class SimDisk {
  hardState: HardState = EMPTY_HARD_STATE;
  snapshot: Snapshot | undefined;
  /** Durable entries after the snapshot; entries[k].index === snapshotIndex() + 1 + k. */
  entries: Entry[] = [];
  private buffer: DiskWrite[] = [];
  /** Number of fsyncs that made something durable (for tests and stats). */
  fsyncs = 0;

  snapshotIndex(): number {
    return this.snapshot?.meta.index ?? 0;
  }

  lastIndex(): number {
    return this.snapshotIndex() + this.entries.length;
  }

  /** Term of a durable entry (or of the snapshot's last entry); undefined if not held. */
  termAt(index: number): number | undefined {
    const snap = this.snapshotIndex();
    if (index === snap) return this.snapshot?.meta.term ?? 0;
    return this.entries[index - snap - 1]?.term;
  }

  entryAt(index: number): Entry | undefined {
    return this.entries[index - this.snapshotIndex() - 1];
  }

  get pendingWrites(): number {
    return this.buffer.length;
  }

  write(w: DiskWrite): void {
    this.buffer.push(w);
  }

  fsync(): void {
    if (this.buffer.length > 0) this.fsyncs++;
    for (const w of this.buffer) this.applyWrite(w);
    this.buffer = [];
  }

  /**
   * Loses the write buffer. With `torn`, a random prefix of it survives first
   * (possibly ending inside an entries write); with `keepWrites`, exactly that
   * many whole writes survive (for scripts). Returns how many writes (whole or
   * partial) became durable.
   */
  crash(torn?: Rng | { readonly keepWrites: number }): number {
    if (torn !== undefined && 'keepWrites' in torn) {
      const kept = Math.min(torn.keepWrites, this.buffer.length);
      for (let k = 0; k < kept; k++) this.applyWrite(this.buffer[k] as DiskWrite);
      this.buffer = [];
      return kept;
    }
    let kept = 0;
    if (torn !== undefined && this.buffer.length > 0) {
      const whole = torn.int(this.buffer.length + 1);
      for (let k = 0; k < whole; k++) this.applyWrite(this.buffer[k] as DiskWrite);
      kept = whole;
      const next = this.buffer[whole];
      if (next?.kind === 'entries' && next.entries.length > 1) {
        const n = torn.int(next.entries.length);
        if (n > 0) {
          this.applyWrite({ kind: 'entries', entries: next.entries.slice(0, n) });
          kept++;
        }
      }
    }
    this.buffer = [];
    return kept;
  }

  /** Local compaction: the state machine snapshot at an applied (hence durable) index. Atomic. */
  compact(snapshot: Snapshot): void {
    assert(this.buffer.length === 0, 'compaction with unflushed writes');
    const idx = snapshot.meta.index;
    const snap = this.snapshotIndex();
    if (idx <= snap) return;
    assert(idx <= this.lastIndex(), `compaction at ${idx} beyond the durable log (${this.lastIndex()})`);
    assert(this.termAt(idx) === snapshot.meta.term, `compaction at ${idx}: term ${snapshot.meta.term} != durable ${this.termAt(idx)}`);
    this.entries = this.entries.slice(idx - snap);
    this.snapshot = snapshot;
  }

  private applyWrite(w: DiskWrite): void {
    switch (w.kind) {
      case 'snapshot':
        this.snapshot = w.snapshot;
        this.entries = [];
        return;
      case 'hardState':
        this.hardState = w.hardState;
        return;
      case 'entries':
        this.appendEntries(w.entries);
        return;
    }
  }

  private appendEntries(entries: readonly Entry[]): void {
    const first = entries[0];
    if (first === undefined) return;
    const snap = this.snapshotIndex();
    assert(first.index > snap, `persisting entry ${first.index} at or below the snapshot (${snap})`);
    assert(first.index <= this.lastIndex() + 1, `gap: persisting entry ${first.index} after durable ${this.lastIndex()}`);
    this.entries.length = first.index - snap - 1;
    for (let k = 0; k < entries.length; k++) {
      const e = entries[k] as Entry;
      assert(e.index === first.index + k, `entries not contiguous at ${e.index}`);
      this.entries.push(e);
    }
  }
}
