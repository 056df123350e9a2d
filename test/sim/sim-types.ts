// Options, defaults, statistics and the failure type of the Raft simulation
// (kept apart from RaftSim so the harness file stays about the harness).

import { DEFAULT_RAFT_CONFIG, type RaftConfig } from '../../src/raft/types.js';
import type { NetworkFaults } from './sim-network.js';

export interface SimOptions {
  readonly seed: number;
  readonly voters: number;
  /** Initial observers (ids after the voters). */
  readonly observers?: number;
  /** Nodes outside the initial membership, for membership changes (ids after the observers). */
  readonly spares?: number;
  readonly raft?: Partial<Omit<RaftConfig, 'id'>>;
  readonly tickMs?: number;
  /** Nodes tick on their own every tickMs (false: only tick() in a script moves their clocks). */
  readonly autoTick?: boolean;
  readonly fsyncMinMs?: number;
  readonly fsyncMaxMs?: number;
  readonly network?: NetworkFaults;
  /** Probability that a crash keeps a random prefix of the unflushed writes. */
  readonly tornFlushRate?: number;
  /** Applied entries between two local snapshots (0 = never). */
  readonly compactEvery?: number;
  readonly traceCapacity?: number;
  /** Keep the whole trace (else a ring buffer); also on with SLUICE_SIM_TRACE=1. */
  readonly fullTrace?: boolean;
  /** Hard bound on the events of one run. */
  readonly eventsMax?: number;
  /** How to replay a failure, for the failure message (a scripted scenario: run it again). */
  readonly replay?: string;
  /** Break the shell on purpose (messages leave before fsync): the checkers must notice. */
  readonly sendBeforeFsync?: boolean;
}

/** The core's settings in the simulation: small batches and chunks to exercise their paths. */
export const SIM_RAFT_CONFIG: Omit<RaftConfig, 'id'> = {
  ...DEFAULT_RAFT_CONFIG,
  electionTimeoutTicks: 10,
  heartbeatTicks: 2,
  maxInflightAppends: 8,
  maxEntriesPerAppend: 8,
  maxBytesPerAppend: 4096,
  snapshotChunkBytes: 256,
  maxUncommittedEntries: 256,
};

export class SimFailure extends Error {
  override name = 'SimFailure';
  constructor(
    readonly seed: number,
    readonly invariant: string,
    readonly detail: string,
    readonly traceTail: readonly string[],
    replay = 'run the test again with SLUICE_SIM_TRACE=1 for the full trace',
  ) {
    super(`seed ${seed}: ${invariant}: ${detail}\n` +
      `replay: ${replay}\n` +
      `last ${traceTail.length} events:\n  ${traceTail.join('\n  ')}`);
  }
}

export interface SimStats {
  proposalsOk: number;
  proposalsRefused: number;
  messagesSent: number;
  messagesDropped: number;
  snapshotChunks: number;
  snapshotsInstalled: number;
  compactions: number;
  crashes: number;
  tornFlushes: number;
  restarts: number;
  readsIssued: number;
  confChanges: number;
  transfers: number;
}
