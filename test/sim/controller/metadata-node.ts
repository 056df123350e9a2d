// Runs the real MetadataStateMachine on a simulated Raft node, next to the
// node's SimStateMachine (the hash chain the Raft checkers use), without
// touching sim-node.ts: the node's SimStateMachine instance gets its apply,
// snapshot and restore wrapped, so every committed entry SimNode applies also
// goes to the metadata state machine, every local snapshot carries both
// images, and every restore (restart from disk, InstallSnapshot) restores
// both. The snapshot data becomes a container { sim, md } that only these
// wrappers read; to the Raft core and the disk it stays opaque bytes.
//
// The SimStateMachine sees each Normal entry retagged with METADATA_ENTRY_TYPE,
// so its digest is `type<N>:<hex of the data>`: exact bytes (not a lossy UTF-8
// reading), and outside StateMachineSafety's "each command is applied at one
// index" rule, which holds for the Raft simulation's unique test commands but
// not for metadata: two entries may legitimately carry identical records
// (the same fencing twice, say). Every other check on applied entries stays.
//
// Invariants: the metadata state machine has applied exactly what the
// SimStateMachine has (same index, asserted at every snapshot); a MetadataDelta
// assertion during replay is reported as the invariant 'metadata replay'.

import { Packr } from 'msgpackr';
import type { MetadataChanges } from '../../../src/metadata/delta.js';
import { MetadataStateMachine } from '../../../src/metadata/state-machine.js';
import { EntryType, type Entry, type Snapshot } from '../../../src/raft/types.js';
import { InvariantViolation } from '../invariants.js';
import type { SimNode } from '../sim-node.js';

export interface MetadataObserver {
  /** `node` applied committed `entry`; `changes` is set when its image changed. */
  applied(node: SimNode, entry: Entry, md: MetadataStateMachine, changes: MetadataChanges | undefined): void;
  /** `node` replaced its state: from its disk on (re)start, or from a leader's snapshot. */
  restored(node: SimNode, md: MetadataStateMachine, how: 'start' | 'snapshot'): void;
}

interface SnapshotContainer {
  readonly sim: Uint8Array;
  readonly md: Uint8Array | null;
}

const packr = new Packr({ useRecords: false, moreTypes: false });

/** Entry type the SimStateMachine is shown for metadata entries (see the header). */
export const METADATA_ENTRY_TYPE = 100 as EntryType;

export class MetadataAttachment {
  private current = new MetadataStateMachine();
  private lastChanges: MetadataChanges | undefined;
  /** Snapshots this node restored its metadata from (restart or InstallSnapshot). */
  snapshotRestores = 0;

  constructor(
    readonly node: SimNode,
    private readonly observer: MetadataObserver,
  ) {
    this.subscribe();
    this.wrap();
  }

  get md(): MetadataStateMachine {
    return this.current;
  }

  private subscribe(): void {
    this.current.subscribe((_image, changes) => {
      this.lastChanges = changes ?? undefined;
    });
  }

  private fresh(): void {
    this.current = new MetadataStateMachine();
    this.subscribe();
  }

  private wrap(): void {
    const sm = this.node.sm;
    const apply = sm.apply.bind(sm);
    const snapshot = sm.snapshot.bind(sm);
    const restore = sm.restore.bind(sm);
    sm.apply = (e) => {
      const rec = apply(e.type === EntryType.Normal ? { ...e, type: METADATA_ENTRY_TYPE } : e);
      this.applyMetadata(e);
      return rec;
    };
    sm.snapshot = () => {
      const snap = snapshot();
      if (this.current.appliedIndex !== snap.meta.index) {
        throw new InvariantViolation('metadata snapshot', `n${this.node.id}: metadata applied ${this.current.appliedIndex}, snapshot at ${snap.meta.index}`);
      }
      const container: SnapshotContainer = { sim: snap.data, md: this.current.snapshot() };
      return { meta: snap.meta, data: packr.pack(container) };
    };
    sm.restore = (snap) => {
      const how = this.node.raft === undefined ? 'start' : 'snapshot';
      const container = snap === undefined ? undefined : (packr.unpack(snap.data) as SnapshotContainer);
      const img = restore(snap === undefined || container === undefined ? undefined : { meta: snap.meta, data: container.sim });
      this.fresh();
      if (snap !== undefined && container?.md != null) this.restoreMetadata(snap, container.md);
      this.observer.restored(this.node, this.current, how);
      return img;
    };
  }

  private applyMetadata(e: Entry): void {
    this.lastChanges = undefined;
    try {
      this.current.apply(e);
    } catch (err) {
      throw new InvariantViolation('metadata replay', `n${this.node.id} applying entry ${e.index}/t${e.term}: ${(err as Error).stack ?? String(err)}`);
    }
    this.observer.applied(this.node, e, this.current, this.lastChanges);
  }

  private restoreMetadata(snap: Snapshot, data: Uint8Array): void {
    this.snapshotRestores++;
    try {
      this.current.restore({ meta: snap.meta, data });
    } catch (err) {
      throw new InvariantViolation('metadata replay', `n${this.node.id} restoring snapshot ${snap.meta.index}: ${(err as Error).stack ?? String(err)}`);
    }
  }
}
