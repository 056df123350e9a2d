// One simulated node: the REAL composition (src/server/server.ts startServer)
// on the simulated world — this host's clock and scheduler from the kernel,
// its transport on the in-memory network, its own simulated disk — and the
// node-level faults: crash (the disk keeps what was synced), restart from
// that disk, pause, controlled shutdown.
//
// A crash is immediate and total for the incarnation: its timers die with it
// in the kernel, its connections break on the network, its unsynced writes
// are lost on the disk. Promise chains of the dead incarnation that are still
// waiting on something never resume (their timers and sockets are gone); the
// node's next start is a new incarnation with new objects from the same disk.

import type { Logger } from '../../../src/util/logger.js';
import type { Rng } from '../../../src/util/rng.js';
import type { Transport } from '../../../src/net/transport.js';
import type { FileSystem } from '../../../src/util/file-system.js';
import { serverConfigFromFlags, type ServerFlags } from '../../../src/server/config.js';
import { startServer, type NodeEnvironmentInput, type Server } from '../../../src/server/server.js';
import type { HostId, SimKernel } from './kernel.js';
import type { NodeHandle, NodeRole, NodeSpec, NodeState, SimBrokerConfig } from './api.js';

/** The part of the in-memory network (lane transport's sim-network.ts) a node host uses. */
export interface HostNetwork {
  transport(host: HostId): Transport;
  /** The host's process died: listeners gone, connections reset. */
  crash(host: HostId): void;
  /** The host receives nothing until release (a paused process). */
  hold(host: HostId): void;
  release(host: HostId): void;
}

/** The part of a node's simulated disk (lane fs's sim-fs.ts) a node host uses. */
export interface HostDisk {
  /** The FileSystem the node's storage and Raft disk use. */
  readonly fs: FileSystem;
  /** The node's data dir on this disk. */
  readonly dataDir: string;
  /** Drops everything not synced (optionally tearing each file's last unsynced write). */
  crash(opts?: { tornTail?: boolean }): void;
}

export const BROKER_PORT = 9092;
export const CONTROLLER_PORT = 9093;

export function hostOf(id: number): HostId {
  return `n${id}`;
}

export function brokerUrlOf(id: number): string {
  return `ws://${hostOf(id)}:${BROKER_PORT}`;
}

export function controllerUrlOf(id: number): string {
  return `ws://${hostOf(id)}:${CONTROLLER_PORT}`;
}

export interface NodeHostOptions {
  readonly spec: NodeSpec;
  readonly kernel: SimKernel;
  readonly network: HostNetwork;
  readonly disk: HostDisk;
  /** The voters (controller nodes), for --controller-quorum. */
  readonly voters: readonly number[];
  readonly broker: SimBrokerConfig;
  /** This node's own generator: each incarnation takes a fork. */
  readonly rng: Rng;
  readonly logger: Logger;
  /** Data-dir locks of the simulated process table (a crashed node's lock dies with it). */
  readonly locks: Set<string>;
}

export class SimNodeHost implements NodeHandle {
  readonly id: number;
  readonly host: HostId;
  readonly roles: readonly NodeRole[];
  private current: Server | undefined;
  private stateNow: NodeState = 'stopped';
  private starting: Promise<void> | undefined;
  private incarnation = 0;

  constructor(private readonly opts: NodeHostOptions) {
    this.id = opts.spec.id;
    this.host = hostOf(this.id);
    this.roles = opts.spec.roles;
  }

  get state(): NodeState {
    return this.stateNow;
  }

  get server(): Server | undefined {
    return this.stateNow === 'up' || this.stateNow === 'paused' ? this.current : undefined;
  }

  get brokerUrl(): string | undefined {
    return this.roles.includes('broker') ? brokerUrlOf(this.id) : undefined;
  }

  get controllerUrl(): string | undefined {
    return this.roles.includes('controller') ? controllerUrlOf(this.id) : undefined;
  }

  get dataDir(): string {
    return this.opts.disk.dataDir;
  }

  /** Starts a new incarnation from the disk; resolves once the node's startServer resolved. */
  start(): Promise<void> {
    if (this.stateNow === 'up' || this.stateNow === 'paused') return Promise.resolve();
    this.starting ??= this.startIncarnation().finally(() => { this.starting = undefined; });
    return this.starting;
  }

  private async startIncarnation(): Promise<void> {
    const k = this.opts.kernel;
    const time = k.incarnate(this.host);
    const n = ++this.incarnation;
    k.trace(`${this.host} start #${n}`);
    const cfg = serverConfigFromFlags(this.flags());
    const env: NodeEnvironmentInput & Record<string, unknown> = {
      clock: time.clock, scheduler: time.scheduler, rng: this.opts.rng.fork(), transport: this.opts.network.transport(this.host),
      logger: this.opts.logger, fs: this.opts.disk.fs, lockDataDir: (dir: string) => this.lock(dir),
    };
    const server = await startServer(cfg, this.opts.logger, env);
    if (!time.alive) {
      // Crashed while starting: what it opened is already gone with the incarnation.
      return;
    }
    this.current = server;
    this.stateNow = 'up';
    k.trace(`${this.host} up #${n}`);
  }

  /** Process death: timers, connections and unsynced writes are gone at this instant. */
  crash(opts: { tornTail?: boolean } = {}): void {
    if (this.stateNow === 'down') return;
    const k = this.opts.kernel;
    k.kill(this.host);
    this.opts.network.crash(this.host);
    this.opts.disk.crash(opts);
    this.opts.locks.delete(this.dataDir);
    this.current = undefined;
    this.stateNow = 'down';
  }

  pause(): void {
    if (this.stateNow !== 'up') return;
    this.opts.kernel.pause(this.host);
    this.opts.network.hold(this.host);
    this.stateNow = 'paused';
  }

  resume(): void {
    if (this.stateNow !== 'paused') return;
    this.opts.kernel.resume(this.host);
    this.opts.network.release(this.host);
    this.stateNow = 'up';
  }

  /** Controlled shutdown through the real stop path (leaderships moved away first). */
  async shutdown(): Promise<void> {
    const s = this.current;
    if (!s || this.stateNow !== 'up') return;
    await s.stop({ transferLeadership: true });
    this.current = undefined;
    this.stateNow = 'stopped';
    this.opts.kernel.trace(`${this.host} stopped`);
  }

  private lock(dir: string): () => void {
    if (this.opts.locks.has(dir)) throw new Error(`data dir ${dir} is in use`);
    this.opts.locks.add(dir);
    return () => { this.opts.locks.delete(dir); };
  }

  private flags(): ServerFlags {
    const b = this.opts.broker;
    const isBroker = this.roles.includes('broker');
    const quorum = this.opts.voters.map((v) => `${v}@${hostOf(v)}:${CONTROLLER_PORT}`).join(',');
    const clusterDefaults = {
      'min.insync.replicas': String(b.minInsyncReplicas),
      'default.replication.factor': String(b.defaultReplicationFactor),
      'broker.session.timeout.ms': String(b.brokerSessionTimeoutMs),
      'unclean.leader.election.enable': String(b.uncleanLeaderElection),
      ...b.extraClusterConfigs,
    };
    return {
      nodeId: this.id,
      roles: this.roles.join(','),
      controllerListen: controllerUrlOf(this.id),
      controllerQuorum: quorum,
      dataDir: this.dataDir,
      clusterId: 'sim-cluster',
      logLevel: 'silent',
      ...(isBroker ? { listen: brokerUrlOf(this.id), replicaLagTimeMaxMs: b.replicaLagTimeMaxMs } : {}),
      ...(this.opts.spec.spare ? { joinQuorum: true } : {}),
      clusterDefaults: JSON.stringify(clusterDefaults),
    } as ServerFlags;
  }
}
