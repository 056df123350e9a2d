// One simulated controller node's process: the REAL controller driver
// (src/controller/controller-driver.ts — the same state machine
// service/quorum-controller.ts binds in production) bound to a simulated Raft
// node instead of a RaftNode. This file decides nothing about controller
// roles, batches or barriers; it only carries out the driver's effects the way
// RaftNode would, on simulated time:
//
//   readIndex  → RaftSim.readIndex; done once the ReadState arrived AND the
//                node's metadata applied its index; failed when refused, when
//                leadership is lost before that, or after readTimeoutMs
//                (RaftNode's ReadTracker)
//   propose    → the node's Raft core; refused at once as notLeader/transferring
//                (NOT_CONTROLLER) or otherwise (outcome unknown); accepted →
//                done when the entry at its index is applied: with its term ok,
//                with another NOT_CONTROLLER; skipped by a snapshot or not
//                applied within proposalTimeoutMs → outcome unknown
//                (RaftNode's ProposalTracker)
//   reply      → the request network (NOT_CONTROLLER carries the leader hint)
//   timers     → one event on the simulation's queue at the driver's nextWakeMs
//
// Each node's clock starts elsewhere (nothing may compare clocks across nodes)
// and follows simulated time; it is advanced before every driver call. A crash
// ends the process: the driver is dropped with everything it held (a dead
// process answers nothing; callers time out) and a fresh one starts with the
// next incarnation.
//
// unsafeEarlyActivation models a broken RaftNode.readIndex that answers before
// the image holds the read index: the checkers must catch the early activation.

import { ControllerDriver, type CommandOutcome, type ControllerEffect, type ProposalResult } from '../../../src/controller/controller-driver.js';
import type { MetadataRecord } from '../../../src/metadata/records.js';
import type { MetadataStateMachine } from '../../../src/metadata/state-machine.js';
import type { Entry, NodeId } from '../../../src/raft/types.js';
import { ManualClock } from '../../../src/util/clock.js';
import { silentLogger } from '../../../src/util/logger.js';
import type { Rng } from '../../../src/util/rng.js';
import type { RaftSim } from '../cluster.js';
import { InvariantViolation } from '../invariants.js';
import type { AnyCommand, ControllerReply, Endpoint } from './rpc.js';

export interface ControllerSettings {
  readonly clusterId: string;
  /** Cluster configs written with the cluster record by the first controller (KRaft's bootstrap records). */
  readonly bootstrapConfigs: Readonly<Record<string, string>>;
  readonly fenceCheckIntervalMs: number;
  readonly batchCommandsMax: number;
  readonly queuedCommandsMax: number;
  /** The shell's pause before activating again after a failed activation or barrier. */
  readonly reactivateDelayMs: number;
  /** RaftNode gives up on a ReadIndex (confirmed and applied) after this long. */
  readonly readTimeoutMs: number;
  /** RaftNode gives up on a proposal not applied after this long: its outcome is unknown. */
  readonly proposalTimeoutMs: number;
  /** A deliberately broken read path (see the header). */
  readonly unsafeEarlyActivation?: boolean;
}

/** What a controller needs from the simulation around it. */
export interface ControllerHost {
  readonly sim: RaftSim;
  metadata(id: NodeId): MetadataStateMachine;
  reply(from: NodeId, to: Endpoint, requestId: number, reply: ControllerReply): void;
  /** The node became the active controller (the checker records term → node). */
  activated(id: NodeId, term: number): void;
  /** An internal command (bootstrap, fencing) was answered. */
  internalDone(id: NodeId, label: string, response: unknown): void;
}

interface PendingRead {
  readonly id: number;
  readonly term: number;
  readonly raftRequestId: number;
  index: number | undefined;
  readonly deadlineMs: number;
}

interface PendingProposal {
  readonly id: number;
  readonly index: number;
  readonly term: number;
  readonly deadlineMs: number;
  /** Set once applied (or overwritten, or skipped); the driver is told in sync(). */
  result: ProposalResult | undefined;
}

/** One controller process: a driver, the node it runs on, and what it waits for. */
interface Process {
  readonly driver: ControllerDriver;
  readonly clock: ManualClock;
  clockAtMs: number;
  readonly callers: Map<number, { readonly to: Endpoint; readonly requestId: number }>;
  read: PendingRead | undefined;
  proposal: PendingProposal | undefined;
  /** The simulated time of the armed wake event, or undefined. */
  wakeAtMs: number | undefined;
}

export class SimController {
  private process: Process | undefined;
  private crashEpoch: number;
  private draining = false;
  /** Counters summed over every process this node ran. */
  private readonly past = { activations: 0, batches: 0, barriers: 0, termsGivenUp: 0 };

  constructor(
    readonly id: NodeId,
    private readonly host: ControllerHost,
    private readonly settings: ControllerSettings,
    private readonly rng: Rng,
  ) {
    this.crashEpoch = host.sim.node(id).epoch;
  }

  get isActive(): boolean {
    return this.process?.driver.isActive ?? false;
  }

  get activeTerm(): number | undefined {
    return this.process?.driver.activeTerm;
  }

  get activations(): number {
    return this.past.activations + (this.process?.driver.counters.activations ?? 0);
  }

  get batches(): number {
    return this.past.batches + (this.process?.driver.counters.batches ?? 0);
  }

  get barriers(): number {
    return this.past.barriers + (this.process?.driver.counters.barriers ?? 0);
  }

  get termsGivenUp(): number {
    return this.past.termsGivenUp + (this.process?.driver.counters.termsGivenUp ?? 0);
  }

  // ------------------------------------------------------------ events from the simulation

  /** Follows the node's Raft role (and its reads and timeouts); called after every simulation event. */
  sync(): void {
    const n = this.host.sim.node(this.id);
    if (!n.alive || n.epoch !== this.crashEpoch) {
      this.crashEpoch = n.epoch;
      this.endProcess();
      if (!n.alive) return;
    }
    const p = this.process ?? this.startProcess();
    this.step(p, () => {
      this.settleProposal(p);
      p.driver.roleChanged(n.role, n.term);
      this.settleRead(p);
    });
  }

  /** A ReadIndex answer for this node. */
  onReadState(requestId: number, index: number): void {
    const p = this.process;
    if (p?.read !== undefined && p.read.raftRequestId === requestId) p.read.index = index;
  }

  /** A request from an endpoint. */
  receive(from: Endpoint, requestId: number, command: AnyCommand, _label: string): void {
    const p = this.process ?? this.startProcess();
    this.step(p, () => {
      p.callers.set(p.driver.submit(command), { to: from, requestId });
    });
  }

  /**
   * This node applied `entry`: settles the proposal waiting on its index
   * (RaftNode's ProposalTracker). The driver hears of it in sync(), after the
   * event: RaftNode resolves a promise, so its callers never run inside the
   * Raft node's own apply loop.
   */
  onApplied(entry: Entry): void {
    const f = this.process?.proposal;
    if (f === undefined || f.result !== undefined || entry.index < f.index) return;
    f.result = entry.index > f.index
      ? { ok: false, notController: false, cause: new Error(`index ${f.index} was covered by a snapshot`) }
      : entry.term === f.term ? { ok: true, index: f.index, term: f.term }
        : { ok: false, notController: true, cause: new Error('the entry was overwritten by a new leader') };
  }

  // ------------------------------------------------------------ the process

  private startProcess(): Process {
    // Each node's clocks start elsewhere: nothing may compare them across nodes.
    const clock = new ManualClock(1_700_000_000_000 + this.rng.int(100_000), this.rng.int(1_000_000));
    const s = this.settings;
    const bootstrapRecords = Object.entries(s.bootstrapConfigs).map(([name, value]): MetadataRecord => (
      { type: 'config', v: 1, resourceType: 'cluster', resourceName: '', name, value }));
    const driver = new ControllerDriver({
      clusterId: s.clusterId, clock, rng: this.rng.fork(), logger: silentLogger, bootstrapRecords,
      view: { image: () => this.host.metadata(this.id).image, lastIndex: () => this.raft().lastIndex() },
      fenceCheckIntervalMs: s.fenceCheckIntervalMs, batchCommandsMax: s.batchCommandsMax, queuedCommandsMax: s.queuedCommandsMax,
      reactivateDelayMs: s.reactivateDelayMs,
      // The simulation never turns auto.leader.rebalance.enable on: rebalances come from the admin's elections.
      leaderRebalanceIntervalMs: 30_000,
    });
    const p: Process = { driver, clock, clockAtMs: this.host.sim.now(), callers: new Map(), read: undefined, proposal: undefined, wakeAtMs: undefined };
    this.process = p;
    return p;
  }

  /** The process died with its node: nothing it held is answered. */
  private endProcess(): void {
    const p = this.process;
    if (p === undefined) return;
    const c = p.driver.counters;
    this.past.activations += c.activations;
    this.past.batches += c.batches;
    this.past.barriers += c.barriers;
    this.past.termsGivenUp += c.termsGivenUp;
    this.process = undefined;
  }

  private raft() {
    const raft = this.host.sim.node(this.id).raft;
    if (raft === undefined) throw new Error(`n${this.id} is down`);
    return raft;
  }

  /** Feeds one event to the driver (on the node's clock), then carries out every effect. */
  private step(p: Process, event: () => void): void {
    this.advanceClock(p);
    event();
    if (this.draining) return;
    this.draining = true;
    try {
      for (let effects = p.driver.takeEffects(); effects.length > 0; effects = p.driver.takeEffects()) {
        for (const e of effects) this.carryOut(p, e);
      }
    } finally {
      this.draining = false;
    }
    if (this.process === p) this.armWake(p);
  }

  private carryOut(p: Process, e: ControllerEffect): void {
    const sim = this.host.sim;
    switch (e.kind) {
      case 'readIndex': {
        sim.note(`n${this.id} controller: Raft leader in t${sim.node(this.id).term}, activating`);
        if (this.settings.unsafeEarlyActivation === true) return p.driver.readDone(e.id, true);
        const raftRequestId = sim.readIndex(this.id);
        if (raftRequestId === undefined) return p.driver.readDone(e.id, false, new Error('ReadIndex refused'));
        p.read = { id: e.id, term: sim.node(this.id).term, raftRequestId, index: undefined, deadlineMs: sim.now() + this.settings.readTimeoutMs };
        return;
      }
      case 'propose':
        return this.propose(p, e);
      case 'reply': {
        const caller = p.callers.get(e.id);
        p.callers.delete(e.id);
        if (caller !== undefined) this.host.reply(this.id, caller.to, caller.requestId, this.toReply(e.outcome));
        return;
      }
      case 'internalDone':
        if (!e.outcome.ok && e.outcome.refusal.kind === 'commandFailed') this.commandFailed(e.label, e.outcome.refusal);
        if (e.outcome.ok) this.host.internalDone(this.id, e.label, e.outcome.response);
        return;
      case 'activated':
        sim.note(`n${this.id} controller: ACTIVE in t${e.term} at metadata offset ${e.metadataOffset}`);
        this.host.activated(this.id, e.term);
        return;
      case 'deactivated':
        sim.note(`n${this.id} controller: no longer active (t${e.term})`);
        return;
      default: {
        const never: never = e;
        throw new Error(`unknown effect ${JSON.stringify(never)}`);
      }
    }
  }

  private toReply(outcome: CommandOutcome): ControllerReply {
    if (outcome.ok) return { ok: true, response: outcome.response };
    const r = outcome.refusal;
    switch (r.kind) {
      case 'notController': {
        const leader = this.host.sim.node(this.id).leader;
        return { ok: false, error: 'NOT_CONTROLLER', controllerId: leader > 0 ? leader : -1 };
      }
      case 'queueFull':
      case 'outcomeUnknown':
        return { ok: false, error: 'REQUEST_TIMED_OUT', controllerId: this.id };
      case 'commandFailed':
        return this.commandFailed('request', r);
    }
  }

  /** Pure commands must neither throw nor emit records that do not replay: in the simulation either is a violation. */
  private commandFailed(label: string, r: { readonly stage: 'command' | 'replay'; readonly cause: unknown }): never {
    const cause = r.cause instanceof Error ? (r.cause.stack ?? r.cause.message) : String(r.cause);
    if (r.stage === 'command') throw new InvariantViolation('controller command threw', `n${this.id} ${label}: ${cause}`);
    throw new InvariantViolation('metadata replay', `n${this.id}: records of ${label} do not replay on the working image: ${cause}`);
  }

  private propose(p: Process, e: Extract<ControllerEffect, { kind: 'propose' }>): void {
    const sim = this.host.sim;
    const n = sim.node(this.id);
    const raft = this.raft();
    const result = raft.propose(e.data);
    if (result.ok) sim.stats.proposalsOk++;
    else sim.stats.proposalsRefused++;
    sim.note(`n${this.id} controller: propose ${e.barrier ? 'barrier' : `batch (${e.data.length} bytes)`}: ${result.ok ? `${result.index}/t${result.term}` : result.reason}`);
    if (!result.ok) {
      // RaftNode: notLeader/transferring are NOT_CONTROLLER; anything else may still commit.
      const notController = result.reason === 'notLeader' || result.reason === 'transferring';
      return p.driver.proposalDone(e.id, { ok: false, notController, cause: new Error(`proposal refused: ${result.reason}`) });
    }
    if (!e.barrier && result.index !== e.expectedIndex) {
      throw new InvariantViolation('controller offsets', `n${this.id}: batch proposed at ${result.index}, commands were told ${e.expectedIndex}`);
    }
    p.proposal = { id: e.id, index: result.index, term: result.term, deadlineMs: sim.now() + this.settings.proposalTimeoutMs, result: undefined };
    sim.queue.schedule(this.settings.proposalTimeoutMs, `n${this.id} proposal ${result.index} timeout`, () => {
      if (this.process === p && p.proposal?.id === e.id) this.sync();
    });
    n.pump();
    sim.checks.afterEvent(n, raft.status());
  }

  /** RaftNode's ReadTracker: done once confirmed and applied; failed on a lost lead or a timeout. */
  private settleRead(p: Process): void {
    const r = p.read;
    if (r === undefined) return;
    const n = this.host.sim.node(this.id);
    const md = this.host.metadata(this.id);
    if (r.index !== undefined && md.appliedIndex >= r.index) {
      p.read = undefined;
      return p.driver.readDone(r.id, true);
    }
    const lost = n.role !== 'leader' || n.term !== r.term;
    if ((lost && r.index === undefined) || this.host.sim.now() >= r.deadlineMs) {
      p.read = undefined;
      p.driver.readDone(r.id, false, new Error(lost ? 'leadership lost before the read was confirmed' : 'ReadIndex timed out'));
    }
  }

  /** RaftNode's ProposalTracker: settled when applied; a proposal not applied within proposalTimeoutMs has an unknown outcome. */
  private settleProposal(p: Process): void {
    const f = p.proposal;
    if (f === undefined) return;
    if (f.result !== undefined) {
      p.proposal = undefined;
      return p.driver.proposalDone(f.id, f.result);
    }
    const sim = this.host.sim;
    if (sim.now() < f.deadlineMs) return;
    p.proposal = undefined;
    sim.note(`n${this.id} controller: proposal ${f.index} timed out, outcome unknown`);
    p.driver.proposalDone(f.id, { ok: false, notController: false, cause: new Error('proposal not applied in time; outcome unknown') });
  }

  /** One event on the simulation's queue for the driver's next deadline. */
  private armWake(p: Process): void {
    const wakeMono = p.driver.nextWakeMs();
    if (wakeMono === undefined) return;
    const at = this.host.sim.now() + Math.max(0, wakeMono - p.clock.monotonicMs());
    if (p.wakeAtMs !== undefined && p.wakeAtMs <= at && p.wakeAtMs >= this.host.sim.now()) return;
    p.wakeAtMs = at;
    this.host.sim.queue.schedule(at - this.host.sim.now(), `n${this.id} controller tick`, () => {
      if (this.process !== p || p.wakeAtMs !== at) return;
      p.wakeAtMs = undefined;
      if (!this.host.sim.node(this.id).alive) return;
      this.step(p, () => p.driver.tick());
    });
  }

  private advanceClock(p: Process): void {
    const now = this.host.sim.now();
    p.clock.advance(now - p.clockAtMs);
    p.clockAtMs = now;
  }
}
