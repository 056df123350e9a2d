// One simulated node: a Raft core plus the shell around it, following the
// Ready contract of src/raft/types.ts in its simple, strictly ordered form:
//   1. write the Ready's snapshot, entries and hard state to the disk's
//      write buffer and start an fsync (it completes after a simulated
//      latency, as a separate event);
//   2. when the fsync completes: send the messages, restore the state machine
//      from the snapshot, apply the committed entries, hand over read states,
//      call advance(); then take the next Ready.
// Only one Ready is in flight at a time, but the node keeps ticking and
// stepping messages while it waits for the fsync (as etcd's node loop does).
//
// A crash drops the core, the write buffer (or keeps a torn prefix) and the
// in-flight Ready; the epoch counter makes every event scheduled for the old
// incarnation a no-op. A restart rebuilds RaftInitialState from the durable
// disk only, and the state machine from the durable snapshot.

import { Raft } from '../../src/raft/raft.js';
import type { Entry, Membership, RaftConfig, RaftInitialState, ReadState, Ready, Snapshot } from '../../src/raft/types.js';
import type { Logger } from '../../src/util/logger.js';
import type { Rng } from '../../src/util/rng.js';
import { SimDisk } from './sim-disk.js';
import { SimStateMachine, type AppliedRecord, type ConfChangeDecoder, type StateImage } from './sim-state-machine.js';

/** What the node shell needs from the simulation around it. */
export interface NodeHost {
  /** Schedules `run` for this node's current incarnation after `delayMs`. */
  scheduleFsync(node: SimNode, delayMs: number, rd: Ready, run: () => void): void;
  fsyncDelayMs(): number;
  send(node: SimNode, rd: Ready): void;
  applied(node: SimNode, rec: AppliedRecord): void;
  restoredSnapshot(node: SimNode, snap: Snapshot, img: StateImage): void;
  readState(node: SimNode, rs: ReadState): void;
  compacted(node: SimNode, snap: Snapshot): void;
}

export interface NodeSettings {
  readonly config: RaftConfig;
  readonly bootstrap: Membership;
  /** Applied entries between two local snapshots (0 = never compact). */
  readonly compactEvery: number;
  readonly decode: ConfChangeDecoder;
  /**
   * A deliberately broken shell, to prove the simulation catches one: send a
   * Ready's messages before its writes are durable (a vote or an ack can then
   * outlive a crash that forgets it).
   */
  readonly sendBeforeFsync?: boolean;
}

export class SimNode {
  readonly disk = new SimDisk();
  readonly sm: SimStateMachine;
  raft: Raft | undefined;
  /** Incremented by every crash: events of an older incarnation are ignored. */
  epoch = 0;
  /** A Ready is persisted-but-not-yet-fsynced. */
  busy = false;
  restarts = 0;
  /** Highest commit index already recorded in the commit ledger (this incarnation). */
  commitSeen = 0;
  /** Role and term as of the last invariant check (for the trace and leader lookups). */
  role = 'down';
  term = 0;
  leader = 0;

  constructor(
    readonly id: number,
    private readonly settings: NodeSettings,
    private readonly host: NodeHost,
  ) {
    this.sm = new SimStateMachine(settings.bootstrap, settings.decode);
  }

  get alive(): boolean {
    return this.raft !== undefined;
  }

  get config(): RaftConfig {
    return this.settings.config;
  }

  /** (Re)starts the node from its durable disk; returns the state machine image it restored. */
  start(rng: Rng, logger: Logger): StateImage {
    const snap = this.disk.snapshot;
    const img = this.sm.restore(snap);
    const initial: RaftInitialState = {
      hardState: this.disk.hardState,
      snapshotMeta: snap?.meta,
      snapshotData: snap?.data,
      entries: [...this.disk.entries],
      bootstrapMembership: this.settings.bootstrap,
      applied: snap?.meta.index ?? 0,
    };
    this.raft = new Raft(this.settings.config, initial, rng, logger);
    this.busy = false;
    this.commitSeen = snap?.meta.index ?? 0;
    this.role = 'follower';
    return img;
  }

  /** Loses the core and everything not fsynced; returns how many buffered writes survived (torn flush). */
  crash(torn: Rng | { readonly keepWrites: number } | undefined): number {
    const kept = this.disk.crash(torn);
    this.raft = undefined;
    this.busy = false;
    this.epoch++;
    this.role = 'down';
    this.leader = 0;
    return kept;
  }

  /** Takes Readies while there are some and none is waiting for its fsync. */
  pump(): void {
    while (this.raft !== undefined && !this.busy && this.raft.hasReady()) {
      const rd = this.raft.ready();
      if (this.settings.sendBeforeFsync === true) this.host.send(this, rd);
      if (!this.persist(rd)) {
        this.complete(rd);
        continue;
      }
      this.busy = true;
      const epoch = this.epoch;
      this.host.scheduleFsync(this, this.host.fsyncDelayMs(), rd, () => {
        if (this.epoch !== epoch) return;
        this.complete(rd);
        this.pump();
      });
    }
  }

  /** Writes the Ready's state to the disk buffer; false when there is nothing to persist. */
  private persist(rd: Ready): boolean {
    if (rd.snapshot !== undefined) this.disk.write({ kind: 'snapshot', snapshot: rd.snapshot });
    if (rd.entries.length > 0) this.disk.write({ kind: 'entries', entries: rd.entries });
    if (rd.hardState !== undefined) this.disk.write({ kind: 'hardState', hardState: rd.hardState });
    return this.disk.pendingWrites > 0;
  }

  /** Steps 2–4 of the Ready contract, once the Ready's writes are durable. */
  private complete(rd: Ready): void {
    const raft = this.raft;
    if (raft === undefined) return;
    this.disk.fsync();
    this.busy = false;
    if (this.settings.sendBeforeFsync !== true) this.host.send(this, rd);
    if (rd.snapshot !== undefined) {
      this.host.restoredSnapshot(this, rd.snapshot, this.sm.restore(rd.snapshot));
    }
    for (const e of rd.committedEntries) this.applyEntry(e);
    for (const rs of rd.readStates) this.host.readState(this, rs);
    raft.advance(rd);
    this.maybeCompact(raft);
  }

  private applyEntry(e: Entry): void {
    this.host.applied(this, this.sm.apply(e));
  }

  private maybeCompact(raft: Raft): void {
    const every = this.settings.compactEvery;
    if (every <= 0 || this.sm.lastIndex() - this.disk.snapshotIndex() < every) return;
    const snap = this.sm.snapshot();
    raft.compact(snap);
    this.disk.compact(snap);
    this.host.compacted(this, snap);
  }
}
