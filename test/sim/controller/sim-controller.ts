// The controller shell of one simulated controller node: the protocol of
// src/controller/service/quorum-controller.ts re-implemented on simulated
// time, so a run is a pure function of its seed (no promises, no timers; the
// node's ManualClock follows simulated time; randomness is a forked Rng).
// Where the real shell's behaviour depends on RaftNode (read and proposal
// timeouts, refusals), this one does what the real one does, including
// giving up a term.
//
// Roles (one owner of every transition: sync(), called after every event):
//   standby ──(Raft leader in term T, T not given up)──▶ activating(T):
//       issues a ReadIndex
//   activating(T) ──(read index confirmed and applied)──▶ active(T)
//   activating/active ──(not leader, or another term)──▶ standby: everything
//       queued or in flight is answered NOT_CONTROLLER
//   activating/active ──(ReadIndex refused or timed out; barrier refused or
//       timed out)──▶ standby, then activating(T) again while still the Raft
//       leader, as the real shell does (giveUpTermForGood = true models the
//       old bug: wait for a Raft role change that never comes)
//   any ──(node crashed)──▶ standby: everything is dropped (a dead process
//       answers nothing; the callers time out)
//
// While active, commands run serially in batches against the committed image
// (each sees the image left by the previous one of its batch), all their
// records go into ONE Raft entry, and the responses go out only once that
// entry is applied on this node. One batch is in flight at a time, so the
// working image is always "committed image + this batch". A batch without
// records is answered at once (as the real shell does). A proposal not
// applied within proposalTimeoutMs, or refused as "too many uncommitted", has
// an unknown outcome: its callers get REQUEST_TIMED_OUT and the next batch
// first waits for an empty barrier entry to be applied (entries apply in
// order, so the image then holds whatever became of it). A fencing check runs
// every fenceCheckIntervalMs unless a batch is in flight, with the session
// timeout the image configures. On activation every registered broker gets a
// full session (BrokerHeartbeats.resetAll).
//
// One deliberate addition: the first controller of a cluster writes the
// cluster record together with the bootstrap configs (the simulation's
// broker.session.timeout.ms), as KRaft's bootstrap records do.

import { fenceExpiredBrokers, sessionTimeoutMs } from '../../../src/controller/cluster-control.js';
import type { CommandContext } from '../../../src/controller/context.js';
import { BrokerHeartbeats } from '../../../src/controller/decisions/broker-heartbeats.js';
import { METADATA_VERSION } from '../../../src/controller/service/quorum-controller.js';
import { encodeMetadataRecords } from '../../../src/metadata/codec.js';
import { MetadataDelta } from '../../../src/metadata/delta.js';
import type { MetadataImage } from '../../../src/metadata/image.js';
import type { MetadataRecord } from '../../../src/metadata/records.js';
import type { MetadataStateMachine } from '../../../src/metadata/state-machine.js';
import type { Entry, NodeId, ProposeResult } from '../../../src/raft/types.js';
import { ManualClock } from '../../../src/util/clock.js';
import { silentLogger } from '../../../src/util/logger.js';
import type { Rng } from '../../../src/util/rng.js';
import type { RaftSim } from '../cluster.js';
import { InvariantViolation } from '../invariants.js';
import type { AnyCommand, ControllerReply, Endpoint } from './rpc.js';

export interface ControllerSettings {
  readonly clusterId: string;
  /** Cluster configs written with the cluster record by the first controller. */
  readonly bootstrapConfigs: Readonly<Record<string, string>>;
  readonly fenceCheckIntervalMs: number;
  readonly batchCommandsMax: number;
  readonly queuedCommandsMax: number;
  /** RaftNode gives up on a ReadIndex (confirmed and applied) after this long. */
  readonly readTimeoutMs: number;
  /** RaftNode gives up on a proposal not applied after this long: its outcome is unknown. */
  readonly proposalTimeoutMs: number;
  /**
   * After a failed activation or barrier, stay inactive until the Raft role
   * changes (true: what quorum-controller.ts does today) or activate again
   * at once (false: the fix this simulation suggests).
   */
  readonly giveUpTermForGood: boolean;
  /**
   * A deliberately broken shell, to prove the checkers catch one: activate as
   * soon as the node leads, before its image holds everything committed.
   */
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

type Phase =
  | { readonly kind: 'standby' }
  | { readonly kind: 'activating'; readonly term: number; readonly readId: number; readIndex: number | undefined; readonly readAtMs: number }
  | { readonly kind: 'active'; readonly term: number; readonly heartbeats: BrokerHeartbeats };

interface Queued {
  readonly command: AnyCommand;
  readonly label: string;
  /** Where the response goes; undefined for internal commands. */
  readonly caller: { readonly to: Endpoint; readonly requestId: number } | undefined;
}

interface Outcome {
  readonly q: Queued;
  readonly response: unknown;
}

interface Inflight {
  readonly index: number;
  readonly term: number;
  readonly outcomes: Outcome[];
  readonly barrier: boolean;
}

export class SimController {
  private phase: Phase = { kind: 'standby' };
  private queue: Queued[] = [];
  private inflight: Inflight | undefined;
  /** A proposal's outcome is unknown: a barrier entry must be applied before the next batch. */
  private needsBarrier = false;
  /** The term this node gave up being the controller in (it waits for a role change). */
  private abandonedTerm = -1;
  private batchScheduled = false;
  /** Bumped on every role change: timers and batch events of an older role are ignored. */
  private generation = 0;
  private crashEpoch: number;
  private readonly clock: ManualClock;
  private clockAtMs: number;
  activations = 0;
  batches = 0;
  barriers = 0;
  termsGivenUp = 0;

  constructor(
    readonly id: NodeId,
    private readonly host: ControllerHost,
    private readonly settings: ControllerSettings,
    private readonly rng: Rng,
  ) {
    this.crashEpoch = host.sim.node(id).epoch;
    // Each node's clocks start elsewhere: nothing may compare them across nodes.
    this.clock = new ManualClock(1_700_000_000_000 + rng.int(100_000), rng.int(1_000_000));
    this.clockAtMs = host.sim.now();
  }

  get isActive(): boolean {
    return this.phase.kind === 'active';
  }

  get activeTerm(): number | undefined {
    return this.phase.kind === 'active' ? this.phase.term : undefined;
  }

  // ------------------------------------------------------------ role transitions

  /** Follows the node's Raft role; called after every simulation event. */
  sync(): void {
    const n = this.host.sim.node(this.id);
    if (!n.alive || n.epoch !== this.crashEpoch) {
      this.crashEpoch = n.epoch;
      this.abandonedTerm = -1;
      if (this.phase.kind !== 'standby' || this.queue.length > 0 || this.inflight) this.standby(false);
      if (!n.alive) return;
    }
    if (n.role !== 'leader') {
      this.abandonedTerm = -1;
      if (this.phase.kind !== 'standby') this.standby(true);
      return;
    }
    if (this.phase.kind !== 'standby' && this.phase.term !== n.term) this.standby(true);
    if (this.phase.kind === 'standby' && n.term !== this.abandonedTerm) this.beginActivation(n.term);
    if (this.phase.kind === 'activating') this.continueActivation(this.phase);
  }

  /** A ReadIndex answer for this node. */
  onReadState(requestId: number, index: number): void {
    if (this.phase.kind === 'activating' && this.phase.readId === requestId) this.phase.readIndex = index;
  }

  private beginActivation(term: number): void {
    this.host.sim.note(`n${this.id} controller: Raft leader in t${term}, activating`);
    const readId = this.host.sim.readIndex(this.id);
    if (readId === undefined) return this.giveUp(term, 'ReadIndex refused');
    this.phase = { kind: 'activating', term, readId, readIndex: undefined, readAtMs: this.host.sim.now() };
  }

  private continueActivation(p: Extract<Phase, { kind: 'activating' }>): void {
    if (this.settings.unsafeEarlyActivation === true) return this.activate(p.term);
    if (p.readIndex !== undefined && this.host.metadata(this.id).appliedIndex >= p.readIndex) return this.activate(p.term);
    if (this.host.sim.now() - p.readAtMs >= this.settings.readTimeoutMs) this.giveUp(p.term, 'ReadIndex timed out');
  }

  private activate(term: number): void {
    const image = this.host.metadata(this.id).image;
    this.advanceClock();
    const heartbeats = new BrokerHeartbeats(this.clock, sessionTimeoutMs(image));
    heartbeats.resetAll(image.brokers.keys());
    this.generation++;
    this.phase = { kind: 'active', term, heartbeats };
    this.activations++;
    this.host.sim.note(`n${this.id} controller: ACTIVE in t${term} at metadata offset ${image.offset}`);
    this.host.activated(this.id, term);
    this.scheduleFenceCheck(this.generation);
    if (!image.cluster) {
      const bootstrap = this.bootstrapRecords();
      this.submit({ command: () => ({ records: bootstrap, response: null }), label: 'bootstrap', caller: undefined });
    }
  }

  private bootstrapRecords(): MetadataRecord[] {
    const configs = Object.entries(this.settings.bootstrapConfigs).map(([name, value]): MetadataRecord => (
      { type: 'config', v: 1, resourceType: 'cluster', resourceName: '', name, value }));
    return [{ type: 'cluster', v: 1, clusterId: this.settings.clusterId, metadataVersion: METADATA_VERSION }, ...configs];
  }

  /** Leaves the active role; `answer`: tell the callers NOT_CONTROLLER (false: the process died). */
  private standby(answer: boolean): void {
    if (this.phase.kind === 'active') this.host.sim.note(`n${this.id} controller: no longer active (t${this.phase.term})`);
    this.phase = { kind: 'standby' };
    this.generation++;
    const pending = [...(this.inflight?.outcomes.map((o) => o.q) ?? []), ...this.queue];
    this.inflight = undefined;
    this.needsBarrier = false;
    this.queue = [];
    this.batchScheduled = false;
    if (answer) for (const q of pending) this.answer(q, this.notController());
  }

  /** What the real shell does when activation or a barrier fails: stop being the controller (for this term). */
  private giveUp(term: number, why: string): void {
    this.host.sim.note(`n${this.id} controller: gives up term ${term} (${why}) while still Raft leader`);
    this.standby(true);
    if (this.settings.giveUpTermForGood) this.abandonedTerm = term;
    this.termsGivenUp++;
  }

  // ------------------------------------------------------------ requests

  /** A request from an endpoint. */
  receive(from: Endpoint, requestId: number, command: AnyCommand, label: string): void {
    const caller = { to: from, requestId };
    if (this.phase.kind !== 'active') return this.answer({ command, label, caller }, this.notController());
    this.submit({ command, label, caller });
  }

  private notController(): ControllerReply {
    const leader = this.host.sim.node(this.id).leader;
    return { ok: false, error: 'NOT_CONTROLLER', controllerId: leader > 0 ? leader : -1 };
  }

  private submit(q: Queued): void {
    if (this.queue.length >= this.settings.queuedCommandsMax) {
      return this.answer(q, { ok: false, error: 'REQUEST_TIMED_OUT', controllerId: this.id });
    }
    this.queue.push(q);
    this.scheduleBatch();
  }

  private answer(q: Queued, reply: ControllerReply): void {
    if (q.caller !== undefined) this.host.reply(this.id, q.caller.to, q.caller.requestId, reply);
    else if (reply.ok) this.host.internalDone(this.id, q.label, reply.response);
  }

  // ------------------------------------------------------------ batches

  private scheduleBatch(): void {
    if (this.batchScheduled || this.inflight !== undefined || this.queue.length === 0) return;
    this.batchScheduled = true;
    const generation = this.generation;
    this.host.sim.queue.schedule(0, `n${this.id} controller batch`, () => {
      if (generation !== this.generation) return;
      this.batchScheduled = false;
      this.runBatch();
    });
  }

  private runBatch(): void {
    const raft = this.host.sim.node(this.id).raft;
    if (this.phase.kind !== 'active' || this.inflight !== undefined || raft === undefined) return;
    if (this.needsBarrier) return this.proposeBarrier(this.phase.term);
    this.advanceClock();
    const batch = this.queue.splice(0, this.settings.batchCommandsMax);
    const nextOffset = raft.lastIndex() + 1;
    const { records, outcomes } = this.runCommands(batch, nextOffset, this.phase.heartbeats);
    this.batches++;
    if (records.length === 0) {
      for (const o of outcomes) this.answer(o.q, { ok: true, response: o.response });
      return this.scheduleBatch();
    }
    const result = this.propose(encodeMetadataRecords(records));
    if (!result.ok) {
      // RaftNode: notLeader/transferring are NOT_CONTROLLER; anything else may still commit (the real shell says so too).
      const notController = result.reason === 'notLeader' || result.reason === 'transferring';
      if (!notController) this.needsBarrier = true;
      const reply: ControllerReply = notController ? this.notController() : { ok: false, error: 'REQUEST_TIMED_OUT', controllerId: this.id };
      for (const o of outcomes) this.answer(o.q, reply);
      return this.scheduleBatch();
    }
    if (result.index !== nextOffset) {
      throw new InvariantViolation('controller offsets', `n${this.id}: batch proposed at ${result.index}, commands were told ${nextOffset}`);
    }
    this.track({ index: result.index, term: result.term, outcomes, barrier: false });
  }

  /** An empty entry: once applied, so is every earlier entry whose outcome was unknown. */
  private proposeBarrier(term: number): void {
    const result = this.propose(new Uint8Array(0));
    if (!result.ok) return this.giveUp(term, `barrier refused: ${result.reason}`);
    this.barriers++;
    this.track({ index: result.index, term: result.term, outcomes: [], barrier: true });
  }

  /** Waits for `f`'s entry to be applied, or for proposalTimeoutMs (outcome unknown). */
  private track(f: Inflight): void {
    this.inflight = f;
    const generation = this.generation;
    this.host.sim.queue.schedule(this.settings.proposalTimeoutMs, `n${this.id} proposal ${f.index} timeout`, () => {
      if (generation !== this.generation || this.inflight !== f || this.phase.kind !== 'active') return;
      this.inflight = undefined;
      if (f.barrier) return this.giveUp(this.phase.term, 'barrier timed out');
      this.host.sim.note(`n${this.id} controller: proposal ${f.index} timed out, outcome unknown`);
      for (const o of f.outcomes) this.answer(o.q, { ok: false, error: 'REQUEST_TIMED_OUT', controllerId: this.id });
      this.needsBarrier = true;
      this.scheduleBatch();
    });
  }

  /** Runs each command on the image the previous ones left; pure commands must neither throw nor emit unreplayable records. */
  private runCommands(batch: Queued[], nextOffset: number, heartbeats: BrokerHeartbeats): { records: MetadataRecord[]; outcomes: Outcome[] } {
    let image = this.host.metadata(this.id).image;
    const records: MetadataRecord[] = [];
    const outcomes: Outcome[] = [];
    for (const q of batch) {
      const ctx: CommandContext = { image, nextOffset, clock: this.clock, rng: this.rng, heartbeats, logger: silentLogger };
      let result;
      try {
        result = q.command(ctx);
      } catch (err) {
        throw new InvariantViolation('controller command threw', `n${this.id} ${q.label}: ${(err as Error).stack ?? String(err)}`);
      }
      if (result.records.length > 0) {
        try {
          image = imageAfter(image, result.records);
        } catch (err) {
          throw new InvariantViolation('metadata replay', `n${this.id}: records of ${q.label} do not replay on the working image: ${(err as Error).message}\n` +
            `  records: ${JSON.stringify(result.records)}`);
        }
        records.push(...result.records);
      }
      outcomes.push({ q, response: result.response });
    }
    return { records, outcomes };
  }

  private propose(data: Uint8Array): ProposeResult {
    const sim = this.host.sim;
    const n = sim.node(this.id);
    const raft = n.raft;
    if (raft === undefined) throw new Error(`n${this.id} is down`);
    const result = raft.propose(data);
    if (result.ok) sim.stats.proposalsOk++;
    else sim.stats.proposalsRefused++;
    sim.note(`n${this.id} controller: propose batch (${data.length} bytes): ${result.ok ? `${result.index}/t${result.term}` : result.reason}`);
    n.pump();
    sim.checks.afterEvent(n, raft.status());
    return result;
  }

  /** This node applied `entry`: the batch in flight is answered once its own entry is applied. */
  onApplied(entry: Entry): void {
    const f = this.inflight;
    if (f === undefined || entry.index < f.index) return;
    this.inflight = undefined;
    const ours = entry.index === f.index && entry.term === f.term;
    if (f.barrier && ours) this.needsBarrier = false;
    for (const o of f.outcomes) this.answer(o.q, ours ? { ok: true, response: o.response } : this.notController());
    this.scheduleBatch();
  }

  // ------------------------------------------------------------ sessions

  private scheduleFenceCheck(generation: number): void {
    this.host.sim.queue.schedule(this.settings.fenceCheckIntervalMs, `n${this.id} fence check`, () => {
      if (generation !== this.generation || this.phase.kind !== 'active') return;
      this.checkSessions(this.phase.heartbeats);
      this.scheduleFenceCheck(generation);
    });
  }

  private checkSessions(heartbeats: BrokerHeartbeats): void {
    if (this.inflight !== undefined) return;
    this.advanceClock();
    const image = this.host.metadata(this.id).image;
    heartbeats.setSessionTimeoutMs(sessionTimeoutMs(image));
    const live = [...image.brokers.values()].filter((b) => !b.fenced).map((b) => b.brokerId);
    if (heartbeats.expired(live).length === 0) return;
    this.submit({ command: fenceExpired, label: 'fenceExpiredBrokers', caller: undefined });
  }

  private advanceClock(): void {
    const now = this.host.sim.now();
    this.clock.advance(now - this.clockAtMs);
    this.clockAtMs = now;
  }
}

const fenceExpired: AnyCommand = (ctx) => fenceExpiredBrokers(ctx);

/** The image after replaying `records` as one more entry (the working image of a batch). */
function imageAfter(image: MetadataImage, records: readonly MetadataRecord[]): MetadataImage {
  if (records.length === 0) return image;
  const delta = new MetadataDelta(image);
  delta.replayBatch(records, image.offset + 1);
  return delta.apply();
}
