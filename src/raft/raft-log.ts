// The in-memory Raft log of one node: a snapshot boundary followed by every
// entry after it, plus the bookkeeping that drives Ready/advance.
//
//   snapshot.index  <  stable  ≤  handedOut  ≤  lastIndex        (persistence)
//   snapshot.index  ≤  applied ≤  applying   ≤  commit ≤ lastIndex  (application)
//
// - `ents[i].index === snap.index + 1 + i`: the log is contiguous after the
//   snapshot, and termAt(snap.index) is the snapshot's term.
// - Entries in (stable, lastIndex] are unstable (not known durable); those in
//   (handedOut, lastIndex] have not yet been given to the shell in a Ready.
//   Truncation pulls both marks back, so a replaced entry is handed out again.
// - Entries in (applying, commit] are due for application; applying only
//   grows, so each committed entry is handed out for application once.
// - Committed entries are never truncated (asserted): that is what makes them
//   committed.
// - Membership is the effect of the latest Config entry in the log (thesis
//   §4.1: a configuration takes effect when appended, committed or not).
//   `configs` keeps the membership after each Config entry above the
//   snapshot, so truncating one away reverts to the previous membership.

import { assert } from '../util/assert.js';
import { applyConfChange, decodeConfChange, makeMembership } from './membership.js';
import { EntryType, type Entry, type Membership, type Snapshot, type SnapshotMeta } from './types.js';

interface ConfigPoint {
  readonly index: number;
  readonly membership: Membership;
}

export interface LogInit {
  readonly snapshotMeta?: SnapshotMeta;
  readonly snapshotData?: Uint8Array;
  readonly entries: readonly Entry[];
  readonly bootstrapMembership: Membership;
  readonly commit: number;
  readonly applied: number;
}

export class RaftLog {
  private snap: SnapshotMeta;
  /** Data of the latest snapshot, kept to send to lagging followers (undefined until known). */
  private snapData: Uint8Array | undefined;
  private ents: Entry[] = [];
  private baseMembership: Membership;
  private configs: ConfigPoint[] = [];
  /** A snapshot received from the leader that the shell has not yet persisted. */
  private unstableSnap: Snapshot | undefined;
  private snapHandedOut = false;

  stable: number;
  handedOut: number;
  commit: number;
  applied: number;
  applying: number;

  constructor(init: LogInit) {
    this.snap = init.snapshotMeta ?? { index: 0, term: 0, membership: init.bootstrapMembership };
    this.snapData = init.snapshotMeta ? init.snapshotData : new Uint8Array(0);
    const m = this.snap.membership;
    this.baseMembership = makeMembership(m.voters, m.observers);
    for (const e of init.entries) this.push(e);
    this.stable = this.lastIndex();
    this.handedOut = this.stable;
    this.applied = Math.max(init.applied, this.snap.index);
    this.commit = Math.max(init.commit, this.applied);
    this.applying = this.applied;
    assert(this.commit <= this.lastIndex(), `commit ${this.commit} beyond last index ${this.lastIndex()}`);
  }

  // ------------------------------------------------------------ reading

  firstIndex(): number {
    return this.snap.index + 1;
  }

  lastIndex(): number {
    return this.snap.index + this.ents.length;
  }

  lastTerm(): number {
    return this.ents.at(-1)?.term ?? this.snap.term;
  }

  snapshotMeta(): SnapshotMeta {
    return this.snap;
  }

  /** The latest snapshot if its data is known (for sending to followers). */
  snapshot(): Snapshot | undefined {
    return this.snapData === undefined ? undefined : { meta: this.snap, data: this.snapData };
  }

  /** Term of the entry at `index`; the snapshot's term at its index; undefined outside the log. */
  termAt(index: number): number | undefined {
    if (index === this.snap.index) return this.snap.term;
    return this.entryAt(index)?.term;
  }

  matchTerm(index: number, term: number): boolean {
    return this.termAt(index) === term;
  }

  entryAt(index: number): Entry | undefined {
    if (index <= this.snap.index) return undefined;
    return this.ents[index - this.snap.index - 1];
  }

  /** Entries in [lo, hi), at most `maxEntries` and about `maxBytes` of data (always at least one if any). */
  slice(lo: number, hi: number, maxEntries = Infinity, maxBytes = Infinity): Entry[] {
    assert(lo >= this.firstIndex() && hi <= this.lastIndex() + 1 && lo <= hi, `slice [${lo}, ${hi}) outside the log`);
    const out: Entry[] = [];
    let bytes = 0;
    for (let i = lo; i < hi && out.length < maxEntries; i++) {
      const e = this.ents[i - this.snap.index - 1]!;
      bytes += e.data.byteLength;
      if (out.length > 0 && bytes > maxBytes) break;
      out.push(e);
    }
    return out;
  }

  /** Up-to-date check of §5.4.1: is a log ending at (index, term) at least as up to date as ours? */
  isUpToDate(lastIndex: number, lastTerm: number): boolean {
    const myTerm = this.lastTerm();
    return lastTerm > myTerm || (lastTerm === myTerm && lastIndex >= this.lastIndex());
  }

  /** Largest index ≤ `index` whose term is ≤ `term` (leader side of fast backtracking). */
  lastIndexWithTermAtMost(index: number, term: number): number {
    let i = Math.min(index, this.lastIndex());
    while (i > this.snap.index && this.termAt(i)! > term) i--;
    return i;
  }

  /** First index of the run of entries sharing the term of `index` (follower side of the hint). */
  firstIndexOfTermRun(index: number): number {
    const term = this.termAt(index);
    assert(term !== undefined, `no entry at ${index}`);
    let i = index;
    while (i - 1 > this.snap.index && this.termAt(i - 1) === term) i--;
    return i;
  }

  // ------------------------------------------------------------ membership

  membership(): Membership {
    return this.configs.at(-1)?.membership ?? this.baseMembership;
  }

  /** Membership in effect after the entry at `index` (snapshot index ≤ index ≤ last index). */
  membershipAt(index: number): Membership {
    assert(index >= this.snap.index && index <= this.lastIndex(), `membershipAt(${index}) outside the log`);
    let m = this.baseMembership;
    for (const c of this.configs) {
      if (c.index > index) break;
      m = c.membership;
    }
    return m;
  }

  /** Index of the latest Config entry above the snapshot (0 when there is none). */
  lastConfigIndex(): number {
    return this.configs.at(-1)?.index ?? 0;
  }

  // ------------------------------------------------------------ writing

  /** Appends entries that continue the log exactly (a leader's own entries). */
  append(entries: readonly Entry[]): void {
    for (const e of entries) {
      assert(e.index === this.lastIndex() + 1, `append at ${e.index}, last index ${this.lastIndex()}`);
      this.push(e);
    }
  }

  /** Replaces everything from `entries[0].index` on (a follower matching its leader). */
  truncateAndAppend(entries: readonly Entry[]): void {
    const first = entries[0];
    if (!first) return;
    assert(first.index > this.commit, `truncating committed entry ${first.index} (commit ${this.commit})`);
    assert(first.index > this.snap.index && first.index <= this.lastIndex() + 1, `append at ${first.index} leaves a gap`);
    this.truncateFrom(first.index);
    this.append(entries);
  }

  commitTo(index: number): boolean {
    if (index <= this.commit) return false;
    assert(index <= this.lastIndex(), `commit ${index} beyond last index ${this.lastIndex()}`);
    this.commit = index;
    return true;
  }

  /** Replaces the whole log with a snapshot received from the leader. */
  restore(snapshot: Snapshot): void {
    const meta = snapshot.meta;
    assert(meta.index > this.commit, `restoring snapshot ${meta.index} at or below commit ${this.commit}`);
    this.snap = meta;
    this.snapData = snapshot.data;
    this.ents = [];
    this.baseMembership = makeMembership(meta.membership.voters, meta.membership.observers);
    this.configs = [];
    this.unstableSnap = snapshot;
    this.snapHandedOut = false;
    this.stable = this.handedOut = meta.index;
    this.commit = this.applying = meta.index;
  }

  /** Drops entries ≤ snapshot index; the state machine has applied them and saved `snapshot`. */
  compact(snapshot: Snapshot): void {
    const { index, term } = snapshot.meta;
    assert(index >= this.snap.index && index <= this.applied, `compact(${index}) outside [${this.snap.index}, applied ${this.applied}]`);
    assert(this.termAt(index) === term, `compact(${index}): term ${term} does not match the log (${this.termAt(index)})`);
    const membership = this.membershipAt(index);
    this.ents = this.ents.slice(index - this.snap.index);
    this.configs = this.configs.filter((c) => c.index > index);
    this.baseMembership = membership;
    this.snap = { index, term, membership };
    this.snapData = snapshot.data;
  }

  // ------------------------------------------------------------ ready / advance

  hasUnhanded(): boolean {
    return this.handedOut < this.lastIndex() || (this.unstableSnap !== undefined && !this.snapHandedOut);
  }

  takeUnhandedEntries(): Entry[] {
    const out = this.handedOut < this.lastIndex() ? this.slice(this.handedOut + 1, this.lastIndex() + 1) : [];
    this.handedOut = this.lastIndex();
    return out;
  }

  takeUnstableSnapshot(): Snapshot | undefined {
    if (!this.unstableSnap || this.snapHandedOut) return undefined;
    this.snapHandedOut = true;
    return this.unstableSnap;
  }

  hasToApply(): boolean {
    return this.applying < this.commit;
  }

  takeToApply(): Entry[] {
    if (this.applying >= this.commit) return [];
    const out = this.slice(this.applying + 1, this.commit + 1);
    this.applying = this.commit;
    return out;
  }

  /** The shell persisted `entries` (a Ready's worth): mark the prefix that is still ours stable. */
  stableTo(entries: readonly Entry[]): void {
    // Scan from the end: the last entry still present with the same term
    // proves (Log Matching) that everything before it is ours as well.
    for (let i = entries.length - 1; i >= 0; i--) {
      const e = entries[i]!;
      if (e.index <= this.stable) return;
      if (this.matchTerm(e.index, e.term)) {
        this.stable = e.index;
        return;
      }
    }
  }

  stableSnapshotTo(meta: SnapshotMeta): void {
    if (this.unstableSnap && this.unstableSnap.meta.index === meta.index) this.unstableSnap = undefined;
    if (meta.index >= this.snap.index) this.applied = Math.max(this.applied, meta.index);
  }

  appliedTo(index: number): void {
    assert(index <= this.commit, `applied ${index} beyond commit ${this.commit}`);
    if (index > this.applied) this.applied = index;
  }

  // ------------------------------------------------------------ internals

  private push(e: Entry): void {
    assert(e.index === this.lastIndex() + 1, `entry ${e.index} does not continue the log at ${this.lastIndex()}`);
    assert(e.term >= this.lastTerm(), `entry term ${e.term} below last term ${this.lastTerm()}`);
    this.ents.push(e);
    if (e.type === EntryType.Config) {
      this.configs.push({ index: e.index, membership: applyConfChange(this.membership(), decodeConfChange(e.data)) });
    }
  }

  private truncateFrom(index: number): void {
    if (index > this.lastIndex()) return;
    this.ents.length = index - this.snap.index - 1;
    while ((this.configs.at(-1)?.index ?? 0) >= index) this.configs.pop();
    this.stable = Math.min(this.stable, index - 1);
    this.handedOut = Math.min(this.handedOut, index - 1);
  }
}
