// Safety invariants of Raft, checked by the simulation after every event.
// Each checker takes plain observations (terms, indexes, digests, log views),
// not Raft instances, so a test can feed it a hand-made bad history and see
// it throw — a checker that cannot fail proves nothing.
//
// - ElectionSafety: at most one leader per term, ever.
// - LogMatching: an (index, term) pair names one entry for all time and all
//   nodes (same content, same previous term) — which, by induction, is the
//   Log Matching property: logs that agree at (i, t) agree on everything ≤ i.
// - CommitLedger (leader completeness + committed never lost): every index
//   any node ever considered committed is fixed to one term; any node that
//   later commits that index must hold the same term there, and every leader
//   of a later term must hold it in its log.
// - StateMachineSafety: every node applies index i with the same entry, each
//   index exactly once and in order (across restarts: a restart resumes from
//   the restored snapshot, whose image — a hash chain of everything applied
//   up to it — must agree too), and a command is applied at no more than one
//   index.
// - ReadLinearizability: a ReadIndex result is ≥ every index known committed
//   when the read was issued.

import type { NodeId } from '../../src/raft/types.js';

export class InvariantViolation extends Error {
  override name = 'InvariantViolation';
  constructor(
    readonly invariant: string,
    readonly detail: string,
  ) {
    super(`${invariant}: ${detail}`);
  }
}

function violated(invariant: string, detail: string): never {
  throw new InvariantViolation(invariant, detail);
}

export class ElectionSafety {
  private readonly leaderOfTerm = new Map<number, NodeId>();

  observe(term: number, leader: NodeId): void {
    const seen = this.leaderOfTerm.get(term);
    if (seen === undefined) this.leaderOfTerm.set(term, leader);
    else if (seen !== leader) violated('election safety', `two leaders in term ${term}: ${seen} and ${leader}`);
  }

  /** True the first time (term, leader) is observed. */
  isNew(term: number, leader: NodeId): boolean {
    return this.leaderOfTerm.get(term) !== leader;
  }

  get terms(): number {
    return this.leaderOfTerm.size;
  }
}

/** Read access to one log (a core's in-memory log or a durable disk). */
export interface LogView {
  /** First index held as an entry (snapshot index + 1). */
  firstIndex(): number;
  lastIndex(): number;
  /** Term at `index`; the snapshot's term at firstIndex() − 1; undefined below. */
  termAt(index: number): number | undefined;
  /** Digest of the entry at `index` (firstIndex() ≤ index ≤ lastIndex()). */
  digestAt(index: number): string;
}

interface EntryFact {
  readonly digest: string;
  readonly prevTerm: number | undefined;
  readonly where: string;
}

/** Terms stay far below this; it packs (index, term) into one number key. */
const TERM_RANGE = 1 << 20;

export class LogMatching {
  private readonly facts = new Map<number, EntryFact>();
  /** Per view: the term at each index already verified (skip re-checking unchanged entries). */
  private readonly verified = new Map<string, number[]>();

  /** Checks every entry of `view` not verified before; `where` names the log in errors. */
  check(where: string, view: LogView): void {
    let seen = this.verified.get(where);
    if (seen === undefined) this.verified.set(where, (seen = []));
    const first = view.firstIndex();
    const last = view.lastIndex();
    if (seen.length > last + 1) seen.length = last + 1;
    for (let i = first; i <= last; i++) {
      const term = view.termAt(i);
      if (term === undefined) violated('log matching', `${where}: no term at ${i} within [${first}, ${last}]`);
      if (seen[i] === term) continue;
      this.checkEntry(where, view, i, term);
      seen[i] = term;
    }
  }

  /** Forgets what was verified for `where` (after a restart, or for a periodic full re-check). */
  reset(where?: string): void {
    if (where === undefined) this.verified.clear();
    else this.verified.delete(where);
  }

  private checkEntry(where: string, view: LogView, i: number, term: number): void {
    if (term >= TERM_RANGE) violated('log matching', `term ${term} out of the checker's range`);
    const prev = view.termAt(i - 1);
    if (prev !== undefined && prev > term) {
      violated('log matching', `${where}: term goes down at ${i} (${prev} then ${term})`);
    }
    const fact: EntryFact = { digest: view.digestAt(i), prevTerm: prev, where };
    const key = i * TERM_RANGE + term;
    const known = this.facts.get(key);
    if (known === undefined) {
      this.facts.set(key, fact);
      return;
    }
    if (known.digest !== fact.digest) {
      violated('log matching', `entry ${i}/t${term}: ${known.where} has ${known.digest}, ${where} has ${fact.digest}`);
    }
    if (known.prevTerm !== undefined && prev !== undefined && known.prevTerm !== prev) {
      violated('log matching', `entry ${i}/t${term}: term at ${i - 1} is ${known.prevTerm} on ${known.where} but ${prev} on ${where}`);
    }
  }
}

interface CommitFact {
  readonly term: number;
  /** Lowest term of a node that reported it committed: leaders of higher terms must hold it. */
  readonly knownInTerm: number;
  readonly by: NodeId;
}

export class CommitLedger {
  private readonly committed = new Map<number, CommitFact>();
  private maxIndex = 0;

  /** Highest index any node has ever considered committed. */
  get maxCommitted(): number {
    return this.maxIndex;
  }

  get size(): number {
    return this.committed.size;
  }

  termOf(index: number): number | undefined {
    return this.committed.get(index)?.term;
  }

  /** Node `by`, in term `nodeTerm`, considers `index` (with `term`) committed. */
  record(by: NodeId, nodeTerm: number, index: number, term: number): void {
    const known = this.committed.get(index);
    if (known === undefined) {
      this.committed.set(index, { term, knownInTerm: nodeTerm, by });
      if (index > this.maxIndex) this.maxIndex = index;
      return;
    }
    if (known.term !== term) {
      violated('committed entry lost', `index ${index} committed with term ${known.term} (node ${known.by}) but node ${by} commits term ${term}`);
    }
    if (nodeTerm < known.knownInTerm) this.committed.set(index, { term, knownInTerm: nodeTerm, by });
  }

  /** Leader completeness: a leader of `term` holds every entry committed in an earlier term. */
  checkLeader(leader: NodeId, term: number, log: LogView): void {
    const first = log.firstIndex();
    const last = log.lastIndex();
    for (const [index, fact] of this.committed) {
      if (fact.knownInTerm >= term || index < first - 1) continue;
      this.checkHeld(leader, term, log, index, fact, last);
    }
  }

  /** Leader completeness for one newly committed index against a current leader. */
  checkLeaderHas(leader: NodeId, term: number, log: LogView, index: number): void {
    const fact = this.committed.get(index);
    if (fact === undefined || fact.knownInTerm >= term || index < log.firstIndex() - 1) return;
    this.checkHeld(leader, term, log, index, fact, log.lastIndex());
  }

  private checkHeld(leader: NodeId, term: number, log: LogView, index: number, fact: CommitFact, last: number): void {
    if (index > last) {
      violated('leader completeness', `leader ${leader} of term ${term} lacks committed entry ${index}/t${fact.term} (its log ends at ${last})`);
    }
    const held = log.termAt(index);
    if (held !== fact.term) {
      violated('leader completeness', `leader ${leader} of term ${term} has ${index}/t${held}, committed was ${index}/t${fact.term}`);
    }
  }
}

export class StateMachineSafety {
  private readonly byIndex: string[] = [];
  private readonly termByIndex: number[] = [];
  /** chainAt[i]: the hash chain of the applied sequence up to i (see sim-state-machine.ts). */
  private readonly chainAt: number[] = [0];
  private readonly indexOfCommand = new Map<string, number>();
  private readonly lastApplied = new Map<NodeId, number>();

  constructor(private readonly chainNext: (chain: number, term: number, digest: string) => number) {}

  /**
   * Node `node` (re)starts with its state machine restored to an image at
   * `index` with hash chain `chain` and its last few records `tail`: the image
   * must agree with what was applied.
   */
  restore(node: NodeId, index: number, chain: number, tail: readonly { index: number; term: number; digest: string }[]): void {
    const known = this.chainAt[index];
    if (known === undefined) violated('state machine safety', `node ${node} restores an image at ${index}, which no node applied`);
    if (known !== chain) violated('state machine safety', `node ${node} restores an image at ${index} whose history differs from what was applied`);
    for (const r of tail) this.check(node, r.index, r.term, r.digest, 'restored');
    this.lastApplied.set(node, index);
  }

  /** Node `node` applies entry `index`. */
  apply(node: NodeId, index: number, term: number, digest: string): void {
    const last = this.lastApplied.get(node) ?? 0;
    if (index !== last + 1) violated('state machine safety', `node ${node} applies ${index} after ${last} (each index exactly once, in order)`);
    this.check(node, index, term, digest, 'applied');
    this.lastApplied.set(node, index);
  }

  appliedIndex(node: NodeId): number {
    return this.lastApplied.get(node) ?? 0;
  }

  /** The digest applied at `index` by whichever node applied it first. */
  digestAt(index: number): string | undefined {
    return this.byIndex[index];
  }

  /** The index at which a command was applied, if any node applied it. */
  indexOf(digest: string): number | undefined {
    return this.indexOfCommand.get(digest);
  }

  private check(node: NodeId, index: number, term: number, digest: string, how: string): void {
    const known = this.byIndex[index];
    if (known === undefined) {
      const prev = this.chainAt[index - 1];
      if (prev === undefined) violated('state machine safety', `node ${node} ${how} ${index}, but no node applied ${index - 1}`);
      if (digest.startsWith('cmd:')) this.checkUniqueCommand(node, index, digest);
      this.byIndex[index] = digest;
      this.termByIndex[index] = term;
      this.chainAt[index] = this.chainNext(prev, term, digest);
      return;
    }
    if (known !== digest || this.termByIndex[index] !== term) {
      violated('state machine safety', `node ${node} ${how} ${index}/t${term} ${digest}, another node applied ${index}/t${this.termByIndex[index]} ${known}`);
    }
  }

  private checkUniqueCommand(node: NodeId, index: number, digest: string): void {
    const at = this.indexOfCommand.get(digest);
    if (at !== undefined && at !== index) violated('state machine safety', `node ${node}: command ${digest} applied at ${index} and at ${at}`);
    this.indexOfCommand.set(digest, index);
  }
}

interface PendingRead {
  readonly node: NodeId;
  readonly minIndex: number;
}

export class ReadLinearizability {
  private readonly pending = new Map<number, PendingRead>();
  completed = 0;

  /** A read was issued on `node` while `maxCommitted` was the highest index known committed anywhere. */
  issue(requestId: number, node: NodeId, maxCommitted: number): void {
    this.pending.set(requestId, { node, minIndex: maxCommitted });
  }

  complete(requestId: number, node: NodeId, index: number): void {
    const read = this.pending.get(requestId);
    if (read === undefined) violated('read linearizability', `node ${node}: read state for unknown (or already served) request ${requestId}`);
    if (read.node !== node) violated('read linearizability', `request ${requestId} issued on ${read.node} answered by ${node}`);
    if (index < read.minIndex) {
      violated('read linearizability', `read ${requestId} on node ${node} got index ${index}, but ${read.minIndex} was committed when it was issued`);
    }
    this.pending.delete(requestId);
    this.completed++;
  }

  /** A read the core refused: no answer will come. */
  forget(requestId: number): void {
    this.pending.delete(requestId);
  }

  /** Reads on a node that crashed will never be answered. */
  forgetNode(node: NodeId): void {
    for (const [id, r] of this.pending) if (r.node === node) this.pending.delete(id);
  }
}

/** Runs `fn` and returns the InvariantViolation it throws (for tests proving a checker can fail). */
export function expectViolation(fn: () => void): InvariantViolation {
  try {
    fn();
  } catch (err) {
    if (err instanceof InvariantViolation) return err;
    throw err;
  }
  throw new Error('expected an invariant violation');
}
