// The replicated state machine as the Raft driver sees it. The driver calls
// `apply` for every committed entry (Normal, NoOp and Config alike, so
// `appliedIndex` follows the log exactly) in index order, each exactly once
// per lifetime after `restore`; entries of other types than Normal carry no
// application data and a state machine normally just records their index.
//
// Invariants the driver relies on:
//   - apply(e) is only called with e.index === appliedIndex + 1;
//   - snapshot() captures the state at appliedIndex, and restore(s) of that
//     image yields appliedIndex === s.meta.index and the same state;
//   - apply and snapshot are synchronous and deterministic: every replica that
//     applies the same sequence ends in the same state.

import type { Entry, Snapshot } from '../raft/types.js';

export interface StateMachine {
  /** Index of the last applied entry (0 before any). */
  readonly appliedIndex: number;
  apply(entry: Entry): void;
  /** An image of the state at appliedIndex (opaque to the driver). */
  snapshot(): Uint8Array;
  /** Replaces the whole state with a snapshot's image. */
  restore(snapshot: Snapshot): void;
  /** A small, JSON-safe summary for status and read requests. */
  describe(): Record<string, unknown>;
}
