// The invariant checks of a simulated cluster, wired to its nodes: which
// checker runs on which observation, and when. RaftSim calls in after every
// event that touched a node (its Readies already taken), after each fsync,
// on every (re)start, applied entry, installed snapshot and read state.
//
// Roles, terms and commit indexes only change through events on their own
// node, so checking the touched node after each event checks every node
// after every event. The checks are incremental (a log entry is verified
// again only if its term changed) so they can afford to run that often;
// finalChecks() re-verifies every log from scratch.

import { decodeConfChange } from '../../src/raft/raft.js';
import type { NodeId, RaftStatus, ReadState, Snapshot } from '../../src/raft/types.js';
import {
  CommitLedger,
  ElectionSafety,
  InvariantViolation,
  LogMatching,
  ReadLinearizability,
  StateMachineSafety,
  type LogView,
} from './invariants.js';
import type { SimNode } from './sim-node.js';
import { chainNext, entryDigest, type AppliedRecord, type StateImage } from './sim-state-machine.js';

export class SimChecks {
  readonly electionSafety = new ElectionSafety();
  readonly logMatching = new LogMatching();
  readonly ledger = new CommitLedger();
  readonly machines = new StateMachineSafety(chainNext);
  readonly reads = new ReadLinearizability();
  private readonly views = new Map<NodeId, { core: LogView; disk: LogView }>();

  constructor(private readonly nodes: ReadonlyMap<NodeId, SimNode>) {}

  addNode(n: SimNode): void {
    this.views.set(n.id, { core: coreView(n), disk: diskView(n) });
  }

  coreLog(id: NodeId): LogView {
    return this.view(id).core;
  }

  /** A node (re)started from its disk with this state machine image. */
  started(n: SimNode, img: StateImage): void {
    this.machines.restore(n.id, img.index, img.chain, img.tail);
    this.logMatching.reset(`n${n.id}`);
    this.logMatching.check(`disk${n.id}`, this.view(n.id).disk);
  }

  fsynced(n: SimNode): void {
    this.logMatching.check(`disk${n.id}`, this.view(n.id).disk);
  }

  /** After an event on `n`: election safety, leader completeness, commits, log matching. */
  afterEvent(n: SimNode, st: RaftStatus): void {
    const core = this.view(n.id).core;
    if (st.role === 'leader') {
      const fresh = this.electionSafety.isNew(st.term, n.id);
      this.electionSafety.observe(st.term, n.id);
      if (fresh) this.ledger.checkLeader(n.id, st.term, core);
    }
    this.recordCommits(n, st);
    this.logMatching.check(`n${n.id}`, core);
  }

  // Applied entries and installed snapshots are committed; the ledger learns
  // the term in which they were first known committed from recordCommits, so
  // here they only pin the term (Infinity: no leader-completeness obligation).
  applied(n: SimNode, rec: AppliedRecord): void {
    this.ledger.record(n.id, Infinity, rec.index, rec.term);
    this.machines.apply(n.id, rec.index, rec.term, rec.digest);
  }

  installed(n: SimNode, snap: Snapshot, img: StateImage): void {
    const before = this.machines.appliedIndex(n.id);
    if (snap.meta.index < before) {
      throw new InvariantViolation('state machine safety', `node ${n.id} installs snapshot ${snap.meta.index} after applying ${before}`);
    }
    this.machines.restore(n.id, img.index, img.chain, img.tail);
    this.ledger.record(n.id, Infinity, snap.meta.index, snap.meta.term);
  }

  readState(n: SimNode, rs: ReadState): void {
    this.reads.complete(rs.requestId, n.id, rs.index);
  }

  /** Re-checks every log (core and durable) from scratch. */
  finalChecks(): void {
    this.logMatching.reset();
    for (const n of this.nodes.values()) {
      const views = this.view(n.id);
      this.logMatching.check(`disk${n.id}`, views.disk);
      if (n.alive) this.logMatching.check(`n${n.id}`, views.core);
    }
  }

  private view(id: NodeId): { core: LogView; disk: LogView } {
    const v = this.views.get(id);
    if (v === undefined) throw new Error(`no node ${id}`);
    return v;
  }

  private recordCommits(n: SimNode, st: RaftStatus): void {
    if (st.commit > st.lastIndex) {
      throw new InvariantViolation('log', `node ${n.id}: commit ${st.commit} beyond its last index ${st.lastIndex}`);
    }
    if (st.commit < n.commitSeen) {
      throw new InvariantViolation('committed entry lost', `node ${n.id}: commit went back from ${n.commitSeen} to ${st.commit}`);
    }
    const core = this.view(n.id).core;
    for (let i = Math.max(n.commitSeen + 1, core.firstIndex() - 1); i <= st.commit; i++) {
      const term = core.termAt(i);
      if (term === undefined) throw new InvariantViolation('log', `node ${n.id}: no term at committed index ${i}`);
      this.ledger.record(n.id, st.term, i, term);
      for (const l of this.nodes.values()) {
        if (l.alive && l.role === 'leader' && l !== n) this.ledger.checkLeaderHas(l.id, l.term, this.view(l.id).core, i);
      }
    }
    n.commitSeen = st.commit;
  }
}

/** One line per node (and the leader's view of its peers), for failure reports. */
export function describeCluster(nodes: Iterable<SimNode>): string {
  const lines: string[] = [];
  for (const n of nodes) {
    if (n.raft === undefined) {
      lines.push(`n${n.id} down (durable: hs=${JSON.stringify(n.disk.hardState)} last=${n.disk.lastIndex()})`);
      continue;
    }
    const st = n.raft.status();
    const m = `voters=[${st.membership.voters.join(',')}] observers=[${st.membership.observers.join(',')}]`;
    lines.push(`n${n.id} ${st.role} t${st.term} vote=${st.vote} leader=${st.leader} commit=${st.commit} ` +
      `applied=${st.applied} last=${st.lastIndex} snap=${st.snapshotIndex} ${m}${n.busy ? ' (fsync pending)' : ''}`);
    for (const [peer, p] of st.progress ?? []) {
      lines.push(`    -> n${peer} ${p.state} match=${p.match} next=${p.next}${p.recentActive ? '' : ' inactive'}`);
    }
  }
  return lines.join('\n');
}

function coreView(n: SimNode): LogView {
  const raft = (): NonNullable<SimNode['raft']> => n.raft as NonNullable<SimNode['raft']>;
  return {
    firstIndex: () => raft().firstIndex(),
    lastIndex: () => raft().lastIndex(),
    termAt: (i) => raft().termAt(i),
    digestAt: (i) => {
      const e = raft().entries(i, i + 1)[0];
      if (e === undefined) throw new InvariantViolation('log', `node ${n.id}: no entry at ${i}`);
      return entryDigest(e, decodeConfChange);
    },
  };
}

function diskView(n: SimNode): LogView {
  return {
    firstIndex: () => n.disk.snapshotIndex() + 1,
    lastIndex: () => n.disk.lastIndex(),
    termAt: (i) => n.disk.termAt(i),
    digestAt: (i) => {
      const e = n.disk.entryAt(i);
      if (e === undefined) throw new InvariantViolation('log', `node ${n.id}: no durable entry at ${i}`);
      return entryDigest(e, decodeConfChange);
    },
  };
}
