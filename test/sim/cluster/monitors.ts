// Invariants the cluster simulation checks on the fly, while the faults run
// (the chaos checker, test/chaos/checker.ts, checks the history and the
// final state at the end; these see what only a running world shows):
//
//   hw-regress          a leader's high watermark never goes back within one
//                       leadership (node incarnation, partition, leader epoch)
//   hw-above-isr        a leader's high watermark never passes the log end of
//                       an ISR member (the HW is the offset below which every
//                       ISR member has the record), unless that member crashed
//                       during this leadership (its unsynced tail is gone and
//                       the leader does not know yet)
//   two-leaders-epoch   at most one node leads a partition in one leader epoch
//   offset-rewritten    one value per offset across every replica, ever: a
//                       record any replica held below its high watermark stays
//                       the record at that offset on every replica that later
//                       holds that offset below its high watermark
//   ack-under-replicated an acks=all write acknowledged at offset o is, when the
//                       client hears the answer, held at o by at least
//                       min.insync.replicas replicas (replicas only gain
//                       records between the answer and its delivery, except by
//                       a crash — and the fault runner crashes a node only
//                       while every ISR is full: faults.ts, the ISR limit)
//   raft-*              Raft's own: one leader per term (election safety), log
//                       matching, and committed entries kept by every later
//                       leader (leader completeness) — test/sim/invariants.ts,
//                       the checkers the Raft simulation uses, fed the REAL
//                       nodes' Raft cores
//
// Cheap checks (leadership, HW) run after an event at most every
// LEADER_CHECK_MS, acks as they arrive; log scans run at most
// once per SCAN_INTERVAL_MS of simulated time and only read what is new
// (per-replica cursors), so a seed's cost stays linear in what it wrote.
// A violation is recorded once (the first), with the time it was seen; the
// runner fails the seed and prints the trace around it.

import type { Anomaly, SendOp } from '../../chaos/history.js';
import { CommitLedger, ElectionSafety, InvariantViolation, LogMatching } from '../invariants.js';
import type { NodeHandle, SimCluster } from './api.js';
import { raftOf, replicasOf, type RaftView, type ReplicaView } from './probe.js';

/** Leadership and high-watermark checks at most this often (simulated ms). */
const LEADER_CHECK_MS = 5;
/** Log scans (offset ledger, Raft logs) at most this often. */
const SCAN_INTERVAL_MS = 50;
/** Anomalies kept per type (the first few tell the story). */
const PER_TYPE_MAX = 5;

export interface MonitorStats {
  checks: number;
  scans: number;
  leaderships: number;
  offsetsLedgered: number;
  raftTerms: number;
  acksSeen: number;
}

export interface MonitorOptions {
  /** Check Raft's invariants (default true). */
  readonly raft?: boolean;
  readonly minInsyncReplicas?: number;
  /** How to see a node's replicas and Raft state (default: probe.ts on its real parts; tests pass fakes). */
  readonly replicasOf?: (n: NodeHandle) => readonly ReplicaView[];
  readonly raftOf?: (n: NodeHandle) => RaftView | undefined;
}

export class Monitors {
  readonly anomalies: Anomaly[] = [];
  /** Every (term, node) seen leading the metadata quorum, in the order seen (the checker's split-controller input). */
  readonly controllerTerms: Array<{ nodeId: number; term: number }> = [];
  readonly stats: MonitorStats = { checks: 0, scans: 0, leaderships: 0, offsetsLedgered: 0, raftTerms: 0, acksSeen: 0 };
  private readonly perType = new Map<string, number>();
  /** (node, incarnation-ish, tp, epoch) → last HW seen while leading. */
  private readonly leaderHw = new Map<string, number>();
  /** Per leadership (as leaderHw): every node's life when it was first seen. */
  private readonly leadershipLives = new Map<string, ReadonlyMap<number, number>>();
  /** (tp, epoch) → leader node. */
  private readonly epochLeader = new Map<string, number>();
  /** tp → offset → value, for every offset some replica held below its HW. */
  private readonly ledger = new Map<string, Map<number, { value: string; node: number; atMs: number }>>();
  /** (node, tp) → next offset to ledger on that replica. */
  private readonly cursors = new Map<string, number>();
  private readonly election = new ElectionSafety();
  private readonly logMatching = new LogMatching();
  private readonly commits = new CommitLedger();
  private readonly commitSeen = new Map<number, number>();
  /** Per node: a count of restarts seen (a restarted node's leadership is a new one). */
  private readonly lives = new Map<number, { state: string; life: number }>();
  private lastScanMs = -Infinity;
  private lastLeaderCheckMs = -Infinity;
  private detach: (() => void) | undefined;

  private readonly replicas: (n: NodeHandle) => readonly ReplicaView[];
  private readonly raftView: (n: NodeHandle) => RaftView | undefined;

  constructor(private readonly cluster: Pick<SimCluster, 'nodes' | 'now' | 'note' | 'onEvent'>, private readonly opts: MonitorOptions = {}) {
    this.replicas = opts.replicasOf ?? ((n) => replicasOf(n.server));
    this.raftView = opts.raftOf ?? ((n) => raftOf(n.server));
  }

  /** A send completed: an ok one must already be held by min.insync.replicas replicas at its offset. */
  onSend(op: SendOp): void {
    if (op.outcome.type !== 'ok' || op.offset === undefined || op.offset < 0) return;
    const need = this.opts.minInsyncReplicas ?? 2;
    const holders: number[] = [];
    for (const n of this.cluster.nodes()) {
      if (n.state !== 'up' && n.state !== 'paused') continue;
      const r = this.replicas(n).find((x) => x.topic === op.topic && x.partition === op.partition);
      if (!r || r.logEndOffset <= op.offset || r.logStartOffset > op.offset) continue;
      if (r.read(op.offset, op.offset + 1)[0]?.value === op.value) holders.push(n.id);
    }
    this.stats.acksSeen++;
    if (holders.length < need) {
      this.add('ack-under-replicated', `${op.topic}-${op.partition}@${op.offset}: ${JSON.stringify(op.value)} acknowledged (acks=all) ` +
        `while held by ${holders.length === 0 ? 'no replica' : `only node(s) ${holders.join(',')}`}; min.insync.replicas is ${need}`);
    }
  }

  start(): void {
    this.detach = this.cluster.onEvent(() => this.afterEvent());
  }

  stop(): void {
    this.detach?.();
    this.detach = undefined;
  }

  get failed(): boolean {
    return this.anomalies.length > 0;
  }

  /** A full pass now (used at the end, after settling). */
  finalPass(): void {
    this.checkLeaders();
    this.scan(true);
  }

  private afterEvent(): void {
    const now = this.cluster.now();
    // Leadership and HW at most once per LEADER_CHECK_MS: a regression persists (nothing moves a HW back again).
    if (now - this.lastLeaderCheckMs >= LEADER_CHECK_MS) {
      this.lastLeaderCheckMs = now;
      this.stats.checks++;
      this.checkLeaders();
    }
    if (now - this.lastScanMs >= SCAN_INTERVAL_MS) {
      this.lastScanMs = now;
      this.scan(false);
    }
  }

  private add(type: string, detail: string): void {
    const n = this.perType.get(type) ?? 0;
    this.perType.set(type, n + 1);
    if (n >= PER_TYPE_MAX) return;
    const at = this.cluster.now();
    this.anomalies.push({ type, detail: `at ${at} ms: ${detail}` });
    this.cluster.note(`VIOLATION ${type}: ${detail}`);
  }

  private life(id: number, state: string): number {
    const l = this.lives.get(id) ?? { state, life: 0 };
    const gone = (x: string): boolean => x === 'down' || x === 'stopped';
    if (gone(l.state) && !gone(state)) l.life++;
    l.state = state;
    this.lives.set(id, l);
    return l.life;
  }

  private checkLeaders(): void {
    const nodes = this.cluster.nodes();
    const views = new Map<number, readonly ReplicaView[]>();
    const lives = new Map<number, number>();
    for (const n of nodes) {
      lives.set(n.id, this.life(n.id, n.state));
      if (n.state === 'up' || n.state === 'paused') views.set(n.id, this.replicas(n));
    }
    for (const [id, rs] of views) {
      for (const r of rs) if (r.isLeader) this.checkLeader(id, lives.get(id)!, r, views, lives);
    }
  }

  private checkLeader(id: number, life: number, r: ReplicaView, views: ReadonlyMap<number, readonly ReplicaView[]>, lives: ReadonlyMap<number, number>): void {
    const tp = `${r.topic}-${r.partition}`;
    const epochKey = `${tp}\u0000${r.leaderEpoch}`;
    const other = this.epochLeader.get(epochKey);
    if (other === undefined) {
      this.epochLeader.set(epochKey, id);
      this.stats.leaderships++;
    } else if (other !== id) {
      this.add('two-leaders-epoch', `${tp} leader epoch ${r.leaderEpoch}: led by node ${other} and by node ${id}`);
    }
    const hwKey = `${id}.${life}\u0000${epochKey}`;
    const prev = this.leaderHw.get(hwKey);
    if (prev !== undefined && r.highWatermark < prev) {
      this.add('hw-regress', `${tp} leader ${id} epoch ${r.leaderEpoch}: high watermark went from ${prev} back to ${r.highWatermark}`);
    }
    if (prev === undefined || r.highWatermark > prev) this.leaderHw.set(hwKey, r.highWatermark);
    // The followers' lives when this leadership was first seen: one that crashed since may have lost its unsynced tail.
    let followerLives = this.leadershipLives.get(hwKey);
    if (followerLives === undefined) this.leadershipLives.set(hwKey, (followerLives = new Map(lives)));
    for (const f of r.isr) {
      if (f === id || lives.get(f) !== followerLives.get(f)) continue;
      const fr = views.get(f)?.find((x) => x.topic === r.topic && x.partition === r.partition);
      if (fr === undefined || fr.logEndOffset >= r.highWatermark) continue;
      this.add('hw-above-isr', `${tp} leader ${id} epoch ${r.leaderEpoch}: high watermark ${r.highWatermark} but ISR member ${f} ends at ${fr.logEndOffset}`);
    }
  }


  private scan(full: boolean): void {
    this.stats.scans++;
    for (const n of this.cluster.nodes()) {
      if (n.state !== 'up' && n.state !== 'paused') continue;
      for (const r of this.replicas(n)) this.ledgerReplica(n.id, r, full);
    }
    if (this.opts.raft !== false) this.scanRaft();
  }

  private ledgerReplica(node: number, r: ReplicaView, full: boolean): void {
    const tp = `${r.topic}-${r.partition}`;
    const ck = `${node}\u0000${tp}`;
    // A replica that truncated (or restarted shorter) is re-read from where its log now ends or its HW is.
    let from = full ? r.logStartOffset : (this.cursors.get(ck) ?? r.logStartOffset);
    from = Math.max(r.logStartOffset, Math.min(from, r.highWatermark, r.logEndOffset));
    const to = Math.min(r.highWatermark, r.logEndOffset);
    if (from >= to) {
      this.cursors.set(ck, from);
      return;
    }
    let book = this.ledger.get(tp);
    if (!book) this.ledger.set(tp, (book = new Map()));
    for (const rec of r.read(from, to)) {
      const known = book.get(rec.offset);
      if (known === undefined) {
        book.set(rec.offset, { value: rec.value, node, atMs: this.cluster.now() });
        this.stats.offsetsLedgered++;
      } else if (known.value !== rec.value) {
        this.add('offset-rewritten', `${tp}@${rec.offset}: node ${known.node} held ${JSON.stringify(known.value)} below its HW (at ${known.atMs} ms), ` +
          `node ${node} now holds ${JSON.stringify(rec.value)} below its HW ${r.highWatermark}`);
      }
    }
    this.cursors.set(ck, to);
  }

  private scanRaft(): void {
    for (const n of this.cluster.nodes()) {
      if (!n.roles.includes('controller') || (n.state !== 'up' && n.state !== 'paused')) continue;
      const raft = this.raftView(n);
      if (!raft) continue;
      const where = `n${n.id}`;
      try {
        if (raft.role === 'leader') {
          if (this.election.isNew(raft.term, n.id)) {
            this.stats.raftTerms++;
            this.controllerTerms.push({ nodeId: n.id, term: raft.term });
          }
          this.election.observe(raft.term, n.id);
        }
        if (!raft.log) continue;
        this.logMatching.check(where, raft.log);
        const seen = Math.max(this.commitSeen.get(n.id) ?? 0, raft.log.firstIndex() - 1);
        for (let i = seen + 1; i <= raft.commit; i++) {
          const term = raft.log.termAt(i);
          if (term !== undefined) this.commits.record(n.id, raft.term, i, term);
        }
        this.commitSeen.set(n.id, raft.commit);
        if (raft.role === 'leader') this.commits.checkLeader(n.id, raft.term, raft.log);
      } catch (err) {
        if (!(err instanceof InvariantViolation)) throw err;
        this.add(`raft-${err.invariant.replace(/\s+/g, '-')}`, `node ${n.id}: ${err.detail}`);
      }
    }
  }

  /** A restarted node's Raft log is checked afresh (its core was rebuilt from disk). */
  nodeRestarted(id: number): void {
    this.logMatching.reset(`n${id}`);
    this.commitSeen.delete(id);
  }
}
