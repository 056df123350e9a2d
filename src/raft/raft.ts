// The public face of the pure Raft core: the fixed API the shell
// (src/raft-node) and the simulation (test/sim) drive. It owns the
// Ready/advance bookkeeping; the algorithm lives in the modules it delegates
// to (step.ts, election.ts, follower.ts, replication.ts, leader.ts,
// snapshot-transfer.ts; every role change in transitions.ts).
//
// Ready/advance (see the contract in types.ts): ready() hands out, each
// exactly once, the entries to persist, a received snapshot, the hard state
// if it changed, the committed entries to apply, the messages to send, the
// confirmed reads and the soft state if it changed; advance(rd) records that
// the shell did all of that. Several ready() calls may precede their
// advance() calls as long as they are advanced in order.
//
// Invariants: no I/O, no clocks, no global randomness (lint-enforced); time
// is tick(), randomness the injected Rng. step() never throws on bad input.

import { assert } from '../util/assert.js';
import { silentLogger, type Logger } from '../util/logger.js';
import type { Rng } from '../util/rng.js';
import { fullConfig, RaftCore, type FullRaftConfig } from './core.js';
import { startElection, tickElection } from './election.js';
import * as leader from './leader.js';
import { isNodeId, sameMembership } from './membership.js';
import { RaftLog } from './raft-log.js';
import { maybeCommit } from './replication.js';
import { step } from './step.js';
import { becomeFollower } from './transitions.js';
import {
  NO_NODE,
  type ConfChange, type Entry, type HardState, type Membership, type Message, type NodeId, type ProgressStatus,
  type ProposeResult, type RaftConfig, type RaftInitialState, type RaftStatus, type Ready, type Snapshot, type SoftState,
} from './types.js';

export { decodeConfChange, encodeConfChange } from './membership.js';
export type { RaftStatus, ProgressStatus } from './types.js';

function checkConfig(cfg: FullRaftConfig): void {
  const positive = (n: number): boolean => Number.isSafeInteger(n) && n > 0;
  assert(isNodeId(cfg.id), `raft: bad node id ${cfg.id}`);
  for (const key of ['electionTimeoutTicks', 'heartbeatTicks', 'maxInflightAppends', 'maxEntriesPerAppend',
    'maxBytesPerAppend', 'snapshotChunkBytes', 'maxUncommittedEntries', 'maxPendingReads', 'maxPendingMessages'] as const) {
    assert(positive(cfg[key]), `raft: config ${key} must be a positive integer, got ${cfg[key]}`);
  }
  assert(cfg.heartbeatTicks < cfg.electionTimeoutTicks, 'raft: heartbeatTicks must be below electionTimeoutTicks');
}

export class Raft {
  private readonly c: RaftCore;
  private prevHard: HardState;
  private prevSoft: SoftState;

  constructor(config: RaftConfig, initial: RaftInitialState, rng: Rng, logger: Logger = silentLogger) {
    const cfg = fullConfig(config);
    checkConfig(cfg);
    const log = new RaftLog({
      snapshotMeta: initial.snapshotMeta,
      snapshotData: initial.snapshotData,
      entries: initial.entries,
      bootstrapMembership: initial.bootstrapMembership,
      commit: initial.hardState.commit,
      applied: initial.applied,
    });
    this.c = new RaftCore(cfg.id, cfg, log, rng, logger.child({ component: 'raft', nodeId: cfg.id }));
    // The contract persists entries before the hard state, so a crash between
    // the two leaves entries of a newer term beside an older hard state.
    // Nothing that depended on the newer term left the node (messages wait
    // for the fsync), so adopting the log's term, with no vote, is safe.
    const hs = initial.hardState;
    this.c.term = Math.max(hs.term, log.lastTerm());
    this.c.vote = this.c.term === hs.term ? hs.vote : NO_NODE;
    becomeFollower(this.c, this.c.term, NO_NODE);
    this.prevHard = initial.hardState;
    this.prevSoft = this.softState();
  }

  // ---------------------------------------------------------------- driving

  tick(): void {
    const ld = this.c.leaderRole();
    if (ld) leader.tickLeader(this.c, ld);
    else tickElection(this.c);
  }

  step(msg: Message): void {
    step(this.c, msg);
  }

  propose(data: Uint8Array): ProposeResult {
    assert(data instanceof Uint8Array, 'propose(data): data must be a Uint8Array');
    return leader.propose(this.c, data);
  }

  proposeConfChange(change: ConfChange): ProposeResult {
    return leader.proposeConfChange(this.c, change);
  }

  transferLeadership(target: NodeId): boolean {
    return leader.transferLeadership(this.c, target);
  }

  readIndex(requestId: number): boolean {
    return leader.readIndex(this.c, requestId);
  }

  /** Starts an election now (a pre-vote first when enabled); a no-op on leaders and non-voters. */
  campaign(): void {
    startElection(this.c, false);
  }

  compact(snapshot: Snapshot): void {
    const log = this.c.log;
    const { index } = snapshot.meta;
    if (index < log.snapshotMeta().index) return; // a newer snapshot arrived from the leader meanwhile
    assert(index <= log.applied, `compact(${index}) beyond applied ${log.applied}`);
    assert(sameMembership(snapshot.meta.membership, log.membershipAt(index)),
      `compact(${index}): snapshot membership differs from the log's; use membershipAt(index)`);
    log.compact(snapshot);
  }

  // ---------------------------------------------------------------- ready / advance

  hasReady(): boolean {
    const c = this.c;
    const ld = c.leaderRole();
    return c.outbox.length > 0 || c.readStates.length > 0 || c.log.hasUnhanded() || c.log.hasToApply()
      || (ld !== undefined && leader.leaderHasWork(ld))
      || !sameHard(this.prevHard, this.hardState()) || !sameSoft(this.prevSoft, this.softState());
  }

  ready(): Ready {
    const c = this.c;
    const ld = c.leaderRole();
    if (ld) leader.flushLeader(c, ld);
    const entries = c.log.takeUnhandedEntries();
    const snapshot = c.log.takeUnstableSnapshot();
    const committedEntries = c.log.takeToApply();
    const hard = this.hardState();
    const soft = this.softState();
    const rd: Ready = {
      entries,
      committedEntries,
      messages: c.outbox.splice(0),
      readStates: c.readStates.splice(0),
      ...(snapshot ? { snapshot } : {}),
      ...(sameHard(this.prevHard, hard) ? {} : { hardState: hard }),
      ...(sameSoft(this.prevSoft, soft) ? {} : { softState: soft }),
    };
    this.prevHard = hard;
    this.prevSoft = soft;
    return rd;
  }

  advance(rd: Ready): void {
    const log = this.c.log;
    if (rd.snapshot) log.stableSnapshotTo(rd.snapshot.meta);
    log.stableTo(rd.entries);
    const applied = rd.committedEntries.at(-1);
    if (applied) log.appliedTo(applied.index);
    const ld = this.c.leaderRole();
    if (ld) maybeCommit(this.c, ld); // our own durable index may complete a quorum
  }

  // ---------------------------------------------------------------- reading

  status(): RaftStatus {
    const c = this.c;
    const ld = c.leaderRole();
    let progress: Map<NodeId, ProgressStatus> | undefined;
    if (ld) progress = new Map([...ld.progress].map(([id, pr]) => [id, pr.status()]));
    return {
      id: c.id,
      term: c.term,
      vote: c.vote,
      role: c.role.role,
      leader: c.leader(),
      commit: c.log.commit,
      applied: c.log.applied,
      lastIndex: c.log.lastIndex(),
      snapshotIndex: c.log.snapshotMeta().index,
      membership: c.membership(),
      ...(progress ? { progress } : {}),
      ...(ld?.transfer ? { transferTarget: ld.transfer.target } : {}),
    };
  }

  firstIndex(): number {
    return this.c.log.firstIndex();
  }

  lastIndex(): number {
    return this.c.log.lastIndex();
  }

  termAt(index: number): number | undefined {
    return this.c.log.termAt(index);
  }

  /** Entries in [lo, hiExclusive); both bounds must lie within [firstIndex(), lastIndex() + 1]. */
  entries(lo: number, hiExclusive: number): Entry[] {
    return this.c.log.slice(lo, hiExclusive);
  }

  /** Membership in effect after the entry at `index` (for the meta of a snapshot taken there). */
  membershipAt(index: number): Membership {
    return this.c.log.membershipAt(index);
  }

  private hardState(): HardState {
    return { term: this.c.term, vote: this.c.vote, commit: this.c.log.commit };
  }

  private softState(): SoftState {
    return { role: this.c.role.role, leader: this.c.leader(), term: this.c.term };
  }
}

function sameHard(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}

function sameSoft(a: SoftState, b: SoftState): boolean {
  return a.role === b.role && a.leader === b.leader && a.term === b.term;
}
