// The whole-cluster simulation's entry point: `startCluster({ seed })` makes
// one seeded world of real nodes (kernel.ts: time and events; node-host.ts:
// one node's real composition on the simulated environment; the in-memory
// network and the simulated disks of lanes transport and fs) and hands back
// the SimCluster controls (api.ts) that workloads and fault mixes use.
//
// Randomness is forked from the seed in a fixed order — network, then each
// node's disk and node generator in id order, then the workload's — so adding
// a workload draw never changes what the cluster itself does.

export * from './api.js';
export { SimKernel, type HostId, type HostTime, type KernelStats } from './kernel.js';
import { silentLogger, type Logger } from '../../../src/util/logger.js';
import type { Rng } from '../../../src/util/rng.js';
import type { Clock, Scheduler } from '../../../src/util/clock.js';
import type { WebSocketFactory } from '../../../src/net/client-link.js';
import type { PartitionRegistration } from '../../../src/metadata/image.js';
import { Client } from '../../../src/client/index.js';
import type { Admin } from '../../../src/client/admin.js';
import type {
  ClientEnv, ClusterOptions, CrashOptions, NodeHandle, NodeSpec, PartitionSpec, SimBrokerConfig, SimCluster,
} from './api.js';
import { SimKernel, type HostId, type KernelStats } from './kernel.js';
import { SimNodeHost, brokerUrlOf, controllerUrlOf, hostOf, type HostDisk, type HostNetwork } from './node-host.js';
import { QuorumClient } from '../../../src/raft-node/quorum-client.js';

/** Three combined nodes (the controller quorum) and one broker-only node. */
export const DEFAULT_NODES: readonly NodeSpec[] = [
  { id: 1, roles: ['broker', 'controller'] },
  { id: 2, roles: ['broker', 'controller'] },
  { id: 3, roles: ['broker', 'controller'] },
  { id: 4, roles: ['broker'] },
];

/** Short timeouts, so a fault plays out in a few simulated seconds. */
export const DEFAULT_BROKER_CONFIG: SimBrokerConfig = {
  minInsyncReplicas: 2,
  defaultReplicationFactor: 3,
  replicaLagTimeMaxMs: 3_000,
  brokerSessionTimeoutMs: 3_000,
  brokerHeartbeatIntervalMs: 500,
  uncleanLeaderElection: false,
};

/** How long startCluster waits for a leader and every broker unfenced. */
const STARTUP_TIMEOUT_MS = 60_000;
const OPERATION_TIMEOUT_MS = 60_000;

/** The network a cluster drives (lane transport's SimNetwork has this shape). */
export interface ClusterNetwork extends HostNetwork {
  webSocketFactory(host: HostId, opts?: { frameBytesMax?: number; connectTimeoutMs?: number }): WebSocketFactory;
  partition(groups: readonly (readonly string[])[]): void;
  blockOneWay(from: string, to: string): void;
  isolate(host: string): void;
  bridge(left: readonly string[], right: readonly string[], bridge: string): void;
  heal(): void;
  breakConnections(a: string, b?: string): number;
  setDelay(from: string, to: string, delay: { minMs: number; maxMs: number }, symmetric?: boolean): void;
  clearDelays(): void;
}

/** A node's disk as the cluster drives it (lane fs's sim-fs). */
export interface ClusterDisk extends HostDisk {
  /** fsyncs complete `delayMs` later on the disk's scheduler (null: at once). */
  setSlow(delayMs: number | null): void;
  /** Frees what the disk holds once the cluster is done (a temp dir). */
  dispose?(): void;
}

/** What makes the simulated world's network and disks (sim-world.ts wires lanes transport and fs). */
export interface WorldFactory {
  network(opts: { clock: Clock; scheduler: Scheduler; rng: Rng; trace: (line: string) => void }): ClusterNetwork;
  disk(opts: { host: HostId; clock: Clock; scheduler: Scheduler; rng: Rng }): ClusterDisk;
}

let defaultWorld: WorldFactory | undefined;

/** Sets the world startCluster uses when the options name none (sim-world.ts calls it). */
export function setDefaultWorld(world: WorldFactory): void {
  defaultWorld = world;
}

/** Starts a simulated cluster and runs it until a controller leads and every broker is registered and unfenced. */
export async function startCluster(opts: ClusterOptions & { world?: WorldFactory }): Promise<SimCluster> {
  const world = opts.world ?? defaultWorld;
  if (!world) throw new Error('startCluster: no simulated world (import test/sim/cluster/sim-world.js)');
  const c = new Cluster(opts, world);
  await c.boot();
  return c;
}

class Cluster implements SimCluster {
  readonly seed: number;
  readonly rng: Rng;
  readonly nodeIds: readonly number[];
  private readonly kernel: SimKernel;
  private readonly network: ClusterNetwork;
  private readonly disks = new Map<number, ClusterDisk>();
  private readonly hosts = new Map<number, SimNodeHost>();
  private readonly clients = new Map<string, ClientEnv>();
  private readonly logger: Logger;
  private adminClient: { client: Client; admin: Admin } | undefined;
  private readonly kernelTime: { clock: Clock; scheduler: Scheduler };
  /** Spare controllers: started by addController only. */
  private readonly spares = new Set<number>();
  private quorumCalls: QuorumClient | undefined;

  constructor(opts: ClusterOptions, world: WorldFactory) {
    this.seed = opts.seed;
    this.kernel = new SimKernel({ seed: opts.seed, ...(opts.traceLines ? { traceLines: opts.traceLines } : {}), ...(opts.fullTrace ? { fullTrace: true } : {}) });
    const k = this.kernel;
    this.logger = silentLogger;
    this.kernelTime = {
      clock: { nowMs: () => k.now(), monotonicMs: () => k.now() },
      scheduler: { schedule: (delayMs, fn) => k.schedule(delayMs, 'net', fn) },
    };
    this.network = world.network({ ...this.kernelTime, rng: k.rng.fork(), trace: (line) => k.trace(line) });
    const specs = [...(opts.nodes ?? DEFAULT_NODES)].sort((a, b) => a.id - b.id);
    const voters = specs.filter((s) => s.roles.includes('controller') && s.spare !== true).map((s) => s.id);
    const broker = { ...DEFAULT_BROKER_CONFIG, ...opts.brokerConfig };
    const locks = new Set<string>();
    for (const spec of specs) {
      const host = hostOf(spec.id);
      k.addHost(host);
      // The disk's timers (slow fsync) run on the node's current incarnation: a paused node's disk waits with
      // it, and a crashed one's fsyncs in flight never complete.
      const t = k.time(host);
      const hostScheduler: Scheduler = { schedule: (delayMs, fn) => k.time(host).scheduler.schedule(delayMs, fn) };
      const disk = world.disk({ host, clock: t.clock, scheduler: hostScheduler, rng: k.rng.fork() });
      this.disks.set(spec.id, disk);
      this.hosts.set(spec.id, new SimNodeHost({
        spec, kernel: k, network: this.network, disk, voters, broker, rng: k.rng.fork(), logger: this.logger, locks,
      }));
    }
    this.nodeIds = specs.map((s) => s.id);
    for (const s of specs) if (s.spare === true) this.spares.add(s.id);
    this.rng = k.rng.fork();
  }

  async boot(): Promise<void> {
    const initial = [...this.hosts.values()].filter((h) => !this.spares.has(h.id));
    await this.await(Promise.all(initial.map((h) => h.start())), STARTUP_TIMEOUT_MS);
    const brokers = initial.filter((h) => h.roles.includes('broker')).map((h) => h.id);
    const ready = await this.runUntil(() => {
      const leader = this.controllerLeader();
      if (leader === undefined) return false;
      const image = this.hosts.get(leader)?.server?.metadata?.image;
      return image !== undefined && brokers.every((b) => image.brokers.get(b)?.fenced === false);
    }, STARTUP_TIMEOUT_MS);
    if (!ready) throw new Error(`seed ${this.seed}: the cluster did not come up within ${STARTUP_TIMEOUT_MS} ms\n${this.trace(40).join('\n')}`);
    this.note('cluster up');
  }

  node(id: number): NodeHandle {
    const h = this.hosts.get(id);
    if (!h) throw new Error(`no node ${id}`);
    return h;
  }

  nodes(): readonly NodeHandle[] {
    return [...this.hosts.values()];
  }

  controllerLeader(): number | undefined {
    for (const h of this.hosts.values()) {
      const s = h.state === 'up' ? h.server?.node.status() : undefined;
      if (s?.role === 'leader') return h.id;
    }
    return undefined;
  }

  // ---- time ----
  now(): number { return this.kernel.now(); }
  runFor(ms: number): Promise<void> { return this.kernel.runFor(ms); }
  runUntil(pred: () => boolean, timeoutMs: number): Promise<boolean> { return this.kernel.runUntil(pred, timeoutMs); }
  await<T>(p: Promise<T>, timeoutMs = OPERATION_TIMEOUT_MS): Promise<T> { return this.kernel.await(p, timeoutMs); }
  onEvent(fn: () => void): () => void { return this.kernel.onEvent(fn); }
  schedule(delayMs: number, label: string, fn: () => void): () => void { return this.kernel.schedule(delayMs, label, fn); }

  // ---- clients ----
  client(name: string): ClientEnv {
    let env = this.clients.get(name);
    if (!env) {
      const host = name;
      const t = this.kernel.time(host);
      env = {
        host, clock: t.clock, scheduler: t.scheduler, rng: this.kernel.rng.fork(), logger: this.logger,
        webSocketFactory: this.network.webSocketFactory(host),
        bootstrap: [...this.hosts.values()].filter((h) => h.roles.includes('broker')).map((h) => brokerUrlOf(h.id)),
      };
      this.clients.set(name, env);
    }
    return env;
  }

  pauseClient(name: string): void {
    this.note(`fault pause client ${name}`);
    this.kernel.pause(this.client(name).host);
  }

  resumeClient(name: string): void {
    this.note(`fault resume client ${name}`);
    this.kernel.resume(this.client(name).host);
  }

  // ---- node faults ----
  crash(id: number, opts: CrashOptions = {}): void {
    this.note(`fault crash n${id}${opts.tornTail ? ' torn' : ''}`);
    this.host(id).crash(opts);
  }

  restart(id: number): Promise<void> {
    this.note(`fault restart n${id}`);
    return this.host(id).start();
  }

  pause(id: number): void {
    this.note(`fault pause n${id}`);
    this.host(id).pause();
  }

  resume(id: number): void {
    this.note(`fault resume n${id}`);
    this.host(id).resume();
  }

  shutdown(id: number): Promise<void> {
    this.note(`fault shutdown n${id}`);
    return this.host(id).shutdown();
  }

  clockJump(id: number, wallMs: number, monoMs = 0): void {
    this.kernel.jumpClock(hostOf(id), wallMs, monoMs);
  }

  slowDisk(id: number, delayMs: number | null): void {
    this.note(`fault slow-disk n${id} ${delayMs ?? 'off'}`);
    this.disks.get(id)?.setSlow(delayMs);
  }

  // ---- network faults ----
  partition(spec: PartitionSpec): void {
    const n = this.network;
    switch (spec.kind) {
      case 'full': this.note(`fault partition ${spec.groups.map((g) => g.join(',')).join(' | ')}`); n.partition(spec.groups); return;
      case 'one-way': this.note(`fault one-way ${spec.from}->${spec.to}`); n.blockOneWay(spec.from, spec.to); return;
      case 'isolate': this.note(`fault isolate ${spec.hosts.join(',')}`); for (const h of spec.hosts) n.isolate(h); return;
      case 'bridge': this.note(`fault bridge ${spec.left.join(',')} | ${spec.bridge} | ${spec.right.join(',')}`); n.bridge(spec.left, spec.right, spec.bridge); return;
      default: { const never: never = spec; throw new Error(`unknown partition ${String(never)}`); }
    }
  }

  heal(): void {
    this.note('fault heal');
    this.network.heal();
  }

  breakConnections(host?: HostId): void {
    this.note(`fault break ${host ?? 'all'}`);
    const hosts = host !== undefined ? [host] : [...[...this.hosts.values()].map((h) => h.host), ...this.clients.keys()];
    for (const h of hosts) this.network.breakConnections(h);
  }

  delay(host: HostId, extraMs: { min: number; max: number } | null): void {
    this.note(`fault delay ${host} ${extraMs ? `${extraMs.min}-${extraMs.max}` : 'off'}`);
    const others = [...[...this.hosts.values()].map((h) => h.host), ...this.clients.keys()].filter((h) => h !== host);
    if (extraMs === null) {
      // The network keeps no per-host record, so clearing one host's delays clears all (the fault mix sets one at a time).
      this.network.clearDelays();
      return;
    }
    for (const o of others) this.network.setDelay(host, o, { minMs: extraMs.min, maxMs: extraMs.max }, true);
  }

  hostOf(id: number): HostId {
    return hostOf(id);
  }

  // ---- operations through the real admin path ----
  private admin(): Admin {
    if (!this.adminClient) {
      const env = this.client('admin');
      const client = new Client({
        bootstrap: env.bootstrap, clientId: 'sim-admin', webSocketFactory: env.webSocketFactory, clock: env.clock, scheduler: env.scheduler, rng: env.rng,
        requestTimeoutMs: 10_000,
      });
      this.adminClient = { client, admin: client.admin({ leaderWaitTimeoutMs: 20_000 }) };
    }
    return this.adminClient.admin;
  }

  async createTopic(name: string, partitions: number, replicationFactor?: number, configs?: Record<string, string>): Promise<void> {
    this.note(`op create-topic ${name} p=${partitions} rf=${replicationFactor ?? 'default'}`);
    await this.admin().createTopics({
      topics: [{ topic: name, numPartitions: partitions, ...(replicationFactor !== undefined ? { replicationFactor } : {}), ...(configs ? { configs } : {}) }],
    });
  }

  async createPartitions(topic: string, totalCount: number): Promise<void> {
    this.note(`op create-partitions ${topic} ${totalCount}`);
    await this.admin().createPartitions({ topicPartitions: [{ topic, count: totalCount }] });
  }

  async reassign(topic: string, partition: number, replicas: readonly number[]): Promise<void> {
    this.note(`op reassign ${topic}-${partition} [${replicas.join(',')}]`);
    await this.admin().alterPartitionReassignments({ partitions: [{ topic, partition, replicas }] });
  }

  async transferLeadership(topic: string, partition: number, to?: number): Promise<void> {
    const reg = this.partitionState(topic, partition);
    if (!reg) throw new Error(`no partition ${topic}-${partition}`);
    const target = to ?? reg.isr.find((b) => b !== reg.leader);
    this.note(`op transfer-leadership ${topic}-${partition} -> ${target ?? 'none'}`);
    if (target === undefined || target === reg.leader) return;
    // Kafka's way: put the target first in the assignment (a reassignment with the same set), then a preferred election.
    const order = [target, ...reg.replicas.filter((r) => r !== target)];
    if (!reg.replicas.includes(target)) throw new Error(`node ${target} holds no replica of ${topic}-${partition}`);
    await this.admin().alterPartitionReassignments({ partitions: [{ topic, partition, replicas: order }] });
    await this.admin().electLeaders({ partitions: [{ topic, partition }], electionType: 'preferred' });
  }

  async transferControllerLeadership(to?: number): Promise<void> {
    const leader = this.controllerLeader();
    if (leader === undefined) return;
    const voters = this.host(leader).server?.node.status().voters ?? [];
    const target = to ?? voters.find((v) => v !== leader && this.hosts.get(v)?.state === 'up');
    this.note(`op transfer-controller n${leader} -> ${target ?? 'none'}`);
    if (target === undefined) return;
    this.host(leader).server?.node.transferLeadership(target);
    await this.waitFor(() => this.controllerLeader() === target, 5_000);
  }

  /**
   * Resolves once `pred` holds after some event (false after `timeoutMs`).
   * Unlike runUntil it does not drive the loop, so an operation can wait
   * while the caller's own runFor runs the world (the loop is not re-entrant).
   */
  private waitFor(pred: () => boolean, timeoutMs: number): Promise<boolean> {
    if (pred()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean): void => { off(); cancel(); resolve(ok); };
      const off = this.kernel.onEvent(() => { if (pred()) done(true); });
      const cancel = this.kernel.schedule(timeoutMs, 'wait timeout', () => done(pred()));
    });
  }

  /** A quorum client on the admin host, over every controller listener (it follows NOT_CONTROLLER hints). */
  private quorum(): QuorumClient {
    if (!this.quorumCalls) {
      const env = this.client('admin');
      const endpoints = [...this.hosts.values()].filter((h) => h.roles.includes('controller')).map((h) => controllerUrlOf(h.id));
      this.quorumCalls = new QuorumClient({
        endpoints, clusterId: 'sim-cluster', rng: env.rng.fork(), logger: this.logger,
        transport: this.network.transport(env.host), clock: env.clock, scheduler: env.scheduler,
        limits: { requestTimeoutMs: 60_000 },
      });
    }
    return this.quorumCalls;
  }

  async addController(id: number): Promise<void> {
    const h = this.host(id);
    if (!h.roles.includes('controller')) throw new Error(`node ${id} has no controller role`);
    this.note(`op add-controller n${id}`);
    await h.start();
    await this.quorum().controller('addController', { nodeId: id, url: controllerUrlOf(id) });
  }

  async removeController(id: number): Promise<void> {
    this.note(`op remove-controller n${id}`);
    await this.quorum().controller('removeController', { nodeId: id });
  }

  voters(): readonly number[] {
    const leader = this.controllerLeader();
    return leader === undefined ? [] : this.host(leader).server?.node.status().voters ?? [];
  }

  // ---- observation ----
  partitionState(topic: string, partition: number): PartitionRegistration | undefined {
    const leader = this.controllerLeader();
    const image = leader !== undefined ? this.hosts.get(leader)?.server?.metadata?.image : undefined;
    return image?.partition(topic, partition);
  }

  digest(): string { return this.kernel.digest(); }
  trace(n?: number): string[] { return this.kernel.tail(n); }
  note(line: string): void { this.kernel.trace(line); }
  stats(): KernelStats { return this.kernel.stats(); }

  async stop(): Promise<void> {
    this.adminClient?.client.close?.();
    this.quorumCalls?.close();
    for (const h of this.hosts.values()) h.crash();
    // Whatever the dead incarnations still had queued is dropped; leave the loop quiet.
    await this.kernel.runFor(0);
    for (const d of this.disks.values()) d.dispose?.();
  }

  private host(id: number): SimNodeHost {
    const h = this.hosts.get(id);
    if (!h) throw new Error(`no node ${id}`);
    return h;
  }
}
