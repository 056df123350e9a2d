// Deliberate bugs, for proving that the tests can see them.
// test/sim/mutants.test.ts switches one of these on, runs the cluster
// simulation, and expects an invariant violation within a bounded number of
// seeds (docs/reliability.md records how many each needed). Production code
// asks `mutant(name)` at the one place the bug would live; nothing outside
// the tests ever switches one on, and with none on the check is a single
// comparison.

export const MUTANTS = [
  /** Raft shell: send a vote or append answer before the term/vote/entries it depends on are synced. */
  'raft-answer-before-sync',
  /** Raft core: count replicas to commit an entry of an earlier term (Raft §5.4.2). */
  'raft-commit-earlier-term',
  /** A new partition leader starts its high watermark at its own log end instead of the old HW. */
  'new-leader-hw-at-leo',
  /** The high watermark advances to the leader's log end instead of the ISR minimum. */
  'hw-at-leader-end',
  /** acks=all is answered as soon as the leader appended. */
  'acks-all-on-leader-append',
  /** A new follower skips leader-epoch truncation. */
  'follower-skips-epoch-truncation',
  /** ISR shrink ignores min.insync.replicas. */
  'isr-shrink-ignores-min-isr',
  /** The controller elects a leader outside the ISR with unclean election off. */
  'elect-outside-isr',
  /** AlterPartition accepted with a stale partition epoch. */
  'alter-partition-stale-epoch',
  /** A fenced broker keeps its leaderships. */
  'fenced-broker-keeps-leadership',
  /** An offset commit from a stale group generation is accepted. */
  'stale-generation-commit',
  /** A duplicate idempotent sequence is appended twice. */
  'idempotent-duplicate-append',
  /** A read_committed fetch reads up to the high watermark, past the last stable offset (open transactions' records). */
  'read-committed-past-lso',
  /** The transaction coordinator serves a request at an older producer epoch of the transactional id (no zombie fencing). */
  'txn-coordinator-accepts-stale-epoch',
  /** The chaos checker treats an acknowledged value found at another offset as not lost. */
  'checker-moved-value-not-lost',
] as const;

export type MutantName = (typeof MUTANTS)[number];

let active: MutantName | undefined;

/** True when the test switched this deliberate bug on. */
export function mutant(name: MutantName): boolean {
  return active === name;
}

/** Test-only: switch one deliberate bug on (or all off with undefined). */
export function setMutant(name: MutantName | undefined): void {
  active = name;
}
