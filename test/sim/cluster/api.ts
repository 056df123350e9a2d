// The cluster simulation's public surface: what workloads, fault mixes and
// checkers (lane simwork) code against. One SimCluster is one seeded world —
// 3–5 nodes of the REAL src/ code (controller quorum plus brokers, some
// broker-only) in one process, on one simulated clock (per-node offsets), an
// in-memory network and a simulated disk per node. Everything random comes
// from the seed; the same seed and the same calls replay the same history
// (same trace digest).
//
// Time only moves inside runFor / runUntil / await: a control (crash,
// partition, ...) takes effect at the current simulated instant, and async
// controls (restart, reassign, ...) progress only while someone runs the
// loop — await them through `cluster.await`, or start them in the background
// and keep calling runFor. The loop is not re-entrant: code running inside
// the world (an event, a background operation) must never call runFor,
// runUntil or await itself; the controls here never do.

import type { Clock, Scheduler } from '../../../src/util/clock.js';
import type { Logger } from '../../../src/util/logger.js';
import type { Rng } from '../../../src/util/rng.js';
import type { WebSocketFactory } from '../../../src/net/client-link.js';
import type { Server } from '../../../src/server/server.js';
import type { PartitionRegistration } from '../../../src/metadata/image.js';
import type { HostId, KernelStats } from './kernel.js';

export type NodeRole = 'broker' | 'controller';

export interface NodeSpec {
  readonly id: number;
  readonly roles: readonly NodeRole[];
  /**
   * A spare controller (roles ['controller']): not in the initial quorum and
   * not started at boot; addController(id) starts it with --join-quorum and
   * has the active controller add it (KIP-853).
   */
  readonly spare?: boolean;
}

export interface ClusterOptions {
  readonly seed: number;
  /** The nodes (default: three combined broker+controller nodes and one broker-only node, ids 1–4). */
  readonly nodes?: readonly NodeSpec[];
  /** Broker settings every node gets (defaults: min.insync.replicas 2, replication factor 3, short timeouts). */
  readonly brokerConfig?: Partial<SimBrokerConfig>;
  /** Trace lines kept for a failure report (default 400); `fullTrace` keeps all (single-seed replays). */
  readonly traceLines?: number;
  readonly fullTrace?: boolean;
  /** Node logs to stderr at this level (default: silent). */
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
}

/** The timing-relevant broker settings of the simulated cluster (Kafka names, units last). */
export interface SimBrokerConfig {
  readonly minInsyncReplicas: number;
  readonly defaultReplicationFactor: number;
  readonly replicaLagTimeMaxMs: number;
  readonly brokerSessionTimeoutMs: number;
  readonly brokerHeartbeatIntervalMs: number;
  readonly uncleanLeaderElection: boolean;
  /** More cluster-wide keys for every node (e.g. the tx_money profile's transaction.state.log.*). */
  readonly extraClusterConfigs?: Readonly<Record<string, string>>;
}

export type NodeState = 'up' | 'paused' | 'down' | 'stopped';

export interface NodeHandle {
  readonly id: number;
  readonly host: HostId;
  readonly roles: readonly NodeRole[];
  readonly state: NodeState;
  /** The running node's real parts (absent while down). Read-only use, for checkers. */
  readonly server: Server | undefined;
  /** Its broker listener URL (on the in-memory network). */
  readonly brokerUrl: string | undefined;
  /** Its controller listener URL (controller nodes). */
  readonly controllerUrl: string | undefined;
}

/** What a client (the real Producer / Consumer / Admin) needs to live in the simulated world. */
export interface ClientEnv {
  readonly host: HostId;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly rng: Rng;
  readonly logger: Logger;
  /** Dials over the in-memory network from this client's host. */
  readonly webSocketFactory: WebSocketFactory;
  /** Broker listener URLs of every broker node. */
  readonly bootstrap: readonly string[];
}

/** A network partition: hosts in different groups cannot reach each other (hosts in no group reach everyone). */
export type PartitionSpec =
  | { readonly kind: 'full'; readonly groups: readonly (readonly HostId[])[] }
  /** `from` can no longer send to `to` (the other direction still works). */
  | { readonly kind: 'one-way'; readonly from: HostId; readonly to: HostId }
  /** `hosts` are cut off from every other host. */
  | { readonly kind: 'isolate'; readonly hosts: readonly HostId[] }
  /** Two sides that cannot reach each other, and one bridge host that reaches both. */
  | { readonly kind: 'bridge'; readonly left: readonly HostId[]; readonly right: readonly HostId[]; readonly bridge: HostId };

export interface CrashOptions {
  /** Tear the last unsynced write of each file (a random prefix survives) instead of dropping it whole. */
  readonly tornTail?: boolean;
}

export interface SimCluster {
  readonly seed: number;
  /** A generator for the workload and the fault mix (forked from the seed after the cluster's own forks). */
  readonly rng: Rng;
  readonly nodeIds: readonly number[];
  node(id: number): NodeHandle;
  nodes(): readonly NodeHandle[];
  /** The node that currently leads the metadata quorum (the active controller), if one does and is up. */
  controllerLeader(): number | undefined;

  // ---- time ----
  /** True simulated time, ms since the run began. */
  now(): number;
  runFor(ms: number): Promise<void>;
  /** Runs until `pred` holds (checked after each event) or `timeoutMs` passed; returns whether it held. */
  runUntil(pred: () => boolean, timeoutMs: number): Promise<boolean>;
  /** Runs the world until `p` settles; rejects when it has not after `timeoutMs` of simulated time. */
  await<T>(p: Promise<T>, timeoutMs?: number): Promise<T>;
  /** Runs `fn` after every event (on-the-fly invariant checks). */
  onEvent(fn: () => void): () => void;
  /** Schedules `fn` at now + delayMs on the cluster's own time line (never paused). */
  schedule(delayMs: number, label: string, fn: () => void): () => void;

  // ---- clients ----
  /** A client host on the network (created on first use); partitions can name it. */
  client(name: string): ClientEnv;
  /** A client host stops, as in a long GC pause: none of its timers or deliveries run until resumeClient (its connections stay up). */
  pauseClient(name: string): void;
  resumeClient(name: string): void;

  // ---- node faults ----
  /** Crash: the process dies now; the disk keeps only what was synced (torn tails optional). */
  crash(id: number, opts?: CrashOptions): void;
  /** Starts a crashed or stopped node again from its disk. */
  restart(id: number): Promise<void>;
  /** No event (timer, delivery) reaches the node until resume: longer than session and lag timeouts if you like. */
  pause(id: number): void;
  resume(id: number): void;
  /** Controlled shutdown (leaderships moved first, then a clean stop); restart() brings it back. */
  shutdown(id: number): Promise<void>;
  /** Moves one node's wall clock by wallMs (either way) and its monotonic clock forward by monoMs. */
  clockJump(id: number, wallMs: number, monoMs?: number): void;
  /** Every fsync on the node completes `delayMs` later (null: normal again). */
  slowDisk(id: number, delayMs: number | null): void;

  // ---- network faults ----
  partition(spec: PartitionSpec): void;
  /** Removes every partition. */
  heal(): void;
  /** Breaks every open connection touching `host` (all connections when absent): the only way messages are lost. */
  breakConnections(host?: HostId): void;
  /** Extra delay per message on links touching `host` (null: back to the calm default). */
  delay(host: HostId, extraMs: { min: number; max: number } | null): void;
  /** The host name of node `id` on the network. */
  hostOf(id: number): HostId;

  // ---- operations through the real admin path ----
  createTopic(name: string, partitions: number, replicationFactor?: number, configs?: Record<string, string>): Promise<void>;
  createPartitions(topic: string, totalCount: number): Promise<void>;
  reassign(topic: string, partition: number, replicas: readonly number[]): Promise<void>;
  /** Moves a partition's leadership to `to` (preferred-leader election after a reorder), or away from the current leader. */
  transferLeadership(topic: string, partition: number, to?: number): Promise<void>;
  /** Hands the metadata quorum's leadership to another voter. */
  transferControllerLeadership(to?: number): Promise<void>;
  /** KIP-853 through the real path: starts spare controller `id` (--join-quorum); it joins as an observer and is promoted to voter. */
  addController(id: number): Promise<void>;
  /** KIP-853: voter `id` stops being a voter (it keeps running; shutdown() it afterwards if you like). */
  removeController(id: number): Promise<void>;
  /** The metadata quorum's voters as the active controller's Raft state says. */
  voters(): readonly number[];

  // ---- observation ----
  /** Leader, epochs and ISR of a partition in the active controller's image (undefined when unknown). */
  partitionState(topic: string, partition: number): PartitionRegistration | undefined;
  /** Trace digest so far (same seed and calls ⇒ same digest). */
  digest(): string;
  /** The last `n` trace lines, for a failure report. */
  trace(n?: number): string[];
  /** Adds a line to the trace (workload and fault events, so replays show them). */
  note(line: string): void;
  stats(): KernelStats;
  /** Stops every node and client; the world is unusable afterwards. */
  stop(): Promise<void>;
}
