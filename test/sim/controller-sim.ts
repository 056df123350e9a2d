// ControllerSim: the deterministic simulation of the controller layer on top
// of the Raft simulation. One RaftSim runs 3 or 5 controller voters; each
// node also runs the real MetadataStateMachine (controller/metadata-node.ts)
// and the real controller driver (src/controller/controller-driver.ts, the
// state machine quorum-controller.ts binds in production) on simulated time,
// bound to the simulated node by controller/sim-controller.ts. Simulated brokers and an
// admin client (controller/broker-actor.ts, admin-actor.ts) talk to the
// controllers over a request network of their own (controller/rpc.ts).
//
// Checks: the Raft invariants of RaftSim after every event, as always; the
// controller invariants (controller/checks.ts) whenever they can change —
// image invariants each time a node's image changes (an applied entry or a
// restored snapshot: the only events that change one), active-controller
// safety each time a node becomes active, the AlterPartition audit on every
// accepted response. Every controller re-reads its node's Raft role after
// every event. The first violation stops the run with a SimFailure naming
// the seed, the invariant and the tail of the trace.
//
// runControllerSeed(seed): a seed picks a profile (Raft settings and faults
// from random-run.ts's profileFor, plus broker count, session timeout,
// request network faults, broker faults), runs a chaos phase, then a heal
// phase that must produce an active controller and a fresh topic visible on
// every controller node within a bounded simulated time.

import type { MetadataImage } from '../../src/metadata/image.js';
import type { NodeId } from '../../src/raft/types.js';
import { SeededRng, type Rng } from '../../src/util/rng.js';
import { RaftSim, SimFailure, type SimStats } from './cluster.js';
import { InvariantViolation } from './invariants.js';
import { describeProfile, profileFor, type RunProfile } from './random-run.js';
import { CALM_NETWORK, type NetworkFaults } from './sim-network.js';
import { newStats, pick, type ActorEnv, type ControllerStats } from './controller/actor-env.js';
import { SimAdmin } from './controller/admin-actor.js';
import { SimBroker } from './controller/broker-actor.js';
import { ControllerChaos } from './controller/chaos.js';
import { ActiveControllerSafety, ImageAgreement, PartitionHistory, ProducerIdBlocks } from './controller/checks.js';
import { MetadataAttachment, type MetadataObserver } from './controller/metadata-node.js';
import { ADMIN_ENDPOINT, BROKER_ENDPOINT_BASE, RpcClient, RpcNetwork, commandFor, type RequestEnvelope } from './controller/rpc.js';
import { SimController, type ControllerHost } from './controller/sim-controller.js';

export const CLUSTER_ID = 'sim-cluster';

/** The cluster a controller simulation runs: shared by explicit options and seeded profiles. */
export interface ControllerClusterSettings {
  /** Raft side: voters, core settings, network, disk, compaction (observers/spares/membership unused). */
  readonly raft: RunProfile;
  readonly brokers: number;
  readonly rpcNetwork: NetworkFaults;
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly requestTimeoutMs: number;
  readonly fenceCheckIntervalMs: number;
  readonly batchCommandsMax: number;
  /** RaftNode's limits the real shell depends on (readTimeoutMs, proposalTimeoutMs). */
  readonly readTimeoutMs: number;
  readonly proposalTimeoutMs: number;
  readonly staleAlterRate: number;
}

export interface ControllerSimOptions extends ControllerClusterSettings {
  readonly seed: number;
  readonly fullTrace?: boolean;
  readonly replay?: string;
  /** Run a deliberately broken controller shell (see ControllerSettings.unsafeEarlyActivation). */
  readonly unsafeEarlyActivation?: boolean;
  /** Partition leaders send AlterPartition requests on their own (default true; scripts turn it off). */
  readonly brokerAlters?: boolean;
}

export interface ControllerSimStats {
  readonly activations: number;
  readonly termsWithActive: number;
  readonly imageOffsets: number;
  readonly leaderChanges: number;
  readonly uncleanElections: number;
  readonly snapshotRestores: number;
  readonly batches: number;
  readonly barriers: number;
  readonly termsGivenUp: number;
  readonly actors: ControllerStats;
}

export class ControllerSim {
  readonly sim: RaftSim;
  readonly rpc: RpcNetwork;
  readonly controllers = new Map<NodeId, SimController>();
  readonly attachments = new Map<NodeId, MetadataAttachment>();
  readonly brokers: SimBroker[] = [];
  readonly admin: SimAdmin;
  readonly active = new ActiveControllerSafety();
  readonly images = new ImageAgreement();
  readonly history = new PartitionHistory();
  readonly producerIds = new ProducerIdBlocks();
  readonly actorStats = newStats();
  private readonly rng: Rng;
  private readonly host: ControllerHost;

  constructor(readonly opts: ControllerSimOptions) {
    const p = opts.raft;
    this.sim = new RaftSim({
      seed: opts.seed, voters: p.voters, raft: p.raft, network: p.network, fsyncMaxMs: p.fsyncMaxMs,
      compactEvery: p.compactEvery, tornFlushRate: p.tornFlushRate, fullTrace: opts.fullTrace ?? false, replay: opts.replay,
    });
    // An independent stream: the Raft simulation's own draws stay as in a plain RaftSim.
    this.rng = new SeededRng(opts.seed ^ 0xc0471201);
    this.rpc = new RpcNetwork(this.sim.queue, this.rng.fork(), opts.rpcNetwork, (t) => this.sim.note(t));
    this.host = this.controllerHost();
    for (const id of this.sim.ids) this.addController(id);
    this.routeReadStates();
    const env = this.actorEnv();
    for (let b = 1; b <= opts.brokers; b++) {
      const client = new RpcClient(BROKER_ENDPOINT_BASE + b, this.rpc, this.sim.queue, opts.requestTimeoutMs);
      this.brokers.push(new SimBroker(b, env, client, this.rng.fork(), {
        heartbeatIntervalMs: opts.heartbeatIntervalMs, fetchIntervalMaxMs: 60, alterIntervalMaxMs: 300, staleAlterRate: opts.staleAlterRate,
        alters: opts.brokerAlters ?? true,
      }));
    }
    const adminClient = new RpcClient(ADMIN_ENDPOINT, this.rpc, this.sim.queue, opts.requestTimeoutMs);
    this.admin = new SimAdmin(env, adminClient, this.rng.fork(), { actIntervalMaxMs: 200, topicNames: 8, partitionsMax: 8 });
  }

  get seed(): number {
    return this.opts.seed;
  }

  /** Starts the brokers (staggered a little) and the admin. */
  start(): void {
    this.startBrokers();
    this.admin.start();
  }

  startBrokers(): void {
    for (const b of this.brokers) this.sim.queue.schedule(this.rng.int(50), `b${b.brokerId} boot`, () => b.start());
  }

  imageOf(id: NodeId): MetadataImage | undefined {
    return this.sim.node(id).alive ? this.metadataOf(id).md.image : undefined;
  }

  /** A live node's controller that is active (a crashed one drops out only at the next step). */
  activeController(): SimController | undefined {
    for (const c of this.controllers.values()) if (c.isActive && this.sim.node(c.id).alive) return c;
    return undefined;
  }

  // ------------------------------------------------------------ wiring

  private metadataOf(id: NodeId): MetadataAttachment {
    const a = this.attachments.get(id);
    if (a === undefined) throw new Error(`no controller ${id}`);
    return a;
  }

  private addController(id: NodeId): void {
    this.attachments.set(id, new MetadataAttachment(this.sim.node(id), this.observer));
    const settings = {
      clusterId: CLUSTER_ID, bootstrapConfigs: { 'broker.session.timeout.ms': String(this.opts.sessionTimeoutMs) },
      fenceCheckIntervalMs: this.opts.fenceCheckIntervalMs, batchCommandsMax: this.opts.batchCommandsMax,
      queuedCommandsMax: 64, readTimeoutMs: this.opts.readTimeoutMs, proposalTimeoutMs: this.opts.proposalTimeoutMs,
      unsafeEarlyActivation: this.opts.unsafeEarlyActivation ?? false, reactivateDelayMs: 100,
    };
    this.controllers.set(id, new SimController(id, this.host, settings, this.rng.fork()));
    this.rpc.listen(id, (from, payload) => this.deliverRequest(id, from, payload as RequestEnvelope));
  }

  /** ReadIndex answers reach RaftSim's checker first, then the node's controller. */
  private routeReadStates(): void {
    const checks = this.sim.checks;
    const readState = checks.readState.bind(checks);
    checks.readState = (node, rs) => {
      readState(node, rs);
      this.controllers.get(node.id)?.onReadState(rs.requestId, rs.index);
    };
  }

  private deliverRequest(id: NodeId, from: number, envelope: RequestEnvelope): void {
    if (!this.sim.node(id).alive) return this.sim.note('  (lost: controller down)');
    this.controllers.get(id)?.receive(from, envelope.id, commandFor(envelope.request), envelope.request.kind);
  }

  private readonly observer: MetadataObserver = {
    applied: (node, entry, md, changes) => {
      this.active.applied(entry.index, entry.term);
      if (changes !== undefined) {
        this.images.observe(node.id, md.image);
        this.history.observe(node.id, md.image, changes.topics);
      }
      this.controllers.get(node.id)?.onApplied(entry);
    },
    restored: (node, md, how) => {
      if (how === 'start') this.history.resetNode(node.id);
      this.images.observe(node.id, md.image);
      this.history.observe(node.id, md.image, null);
    },
  };

  private controllerHost(): ControllerHost {
    return {
      sim: this.sim,
      metadata: (id) => this.metadataOf(id).md,
      reply: (from, to, requestId, reply) => this.rpc.send(from, to, `reply#${requestId}${reply.ok ? '' : ` ${reply.error}`}`, { id: requestId, reply }),
      activated: (id, term) => this.active.activated(term, id, this.metadataOf(id).md.appliedIndex),
      internalDone: (id, label, response) => {
        if (label !== 'fenceExpiredBrokers') return;
        const fenced = response as number[];
        this.actorStats.fencedBySession += fenced.length;
        this.sim.note(`n${id} controller fenced brokers [${fenced.join(',')}] (session expired)`);
      },
    };
  }

  private actorEnv(): ActorEnv {
    return {
      queue: this.sim.queue, clusterId: CLUSTER_ID, controllers: this.sim.ids,
      imageOf: (id) => this.imageOf(id), note: (t) => this.sim.note(t), stats: this.actorStats, history: this.history,
      producerIds: this.producerIds,
    };
  }

  // ------------------------------------------------------------ running

  /** Runs the next event, then lets every controller follow its node's role; false when nothing is left. */
  step(): boolean {
    const more = this.sim.runEvent();
    this.guard(() => {
      for (const c of this.controllers.values()) c.sync();
    });
    return more;
  }

  runFor(ms: number): void {
    const until = this.sim.now() + ms;
    for (let t = this.sim.queue.peekTime(); t !== undefined && t <= until; t = this.sim.queue.peekTime()) this.step();
  }

  runUntil(done: () => boolean, timeoutMs: number, what: string): void {
    const deadline = this.sim.now() + timeoutMs;
    while (!done()) {
      const next = this.sim.queue.peekTime();
      if (next === undefined || next > deadline) this.sim.fail('liveness', `${what}: not within ${timeoutMs} ms\n${this.describe()}`);
      this.step();
    }
  }

  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      if (err instanceof SimFailure) throw err;
      if (err instanceof InvariantViolation) this.sim.fail(err.invariant, err.detail);
      this.sim.fail('exception', err instanceof Error ? (err.stack ?? err.message) : String(err));
    }
  }

  /** Heals every fault and requires an active controller and a fresh topic on every controller node. */
  healAndAwaitProgress(timeoutMs = 20 * this.sim.electionTimeoutMs() + 3000): { topicId: string | null } {
    this.sim.heal();
    this.sim.net.setFaults(CALM_NETWORK);
    this.rpc.net.heal();
    this.rpc.net.setFaults(CALM_NETWORK);
    for (const id of this.sim.ids) this.sim.restart(id);
    for (const b of this.brokers) b.start();
    this.admin.stop();
    const name = `heal-${this.seed}`;
    let created: { topicId: string | null } | undefined;
    this.admin.createUntilDone(name, (topicId) => {
      created = { topicId };
    });
    const visible = (id: NodeId): boolean => {
      const t = this.imageOf(id)?.topic(name);
      return t !== undefined && (created?.topicId == null || t.topicId === created.topicId);
    };
    this.runUntil(() => created !== undefined && this.activeController() !== undefined && this.sim.ids.every(visible), timeoutMs,
      `heal phase: an active controller and topic ${name} on every controller node`);
    this.sim.finalChecks();
    return created as { topicId: string | null };
  }

  stats(): ControllerSimStats {
    const sum = (f: (c: SimController) => number): number => [...this.controllers.values()].reduce((s, c) => s + f(c), 0);
    return {
      activations: sum((c) => c.activations),
      termsWithActive: this.active.terms,
      imageOffsets: this.images.offsets,
      leaderChanges: this.history.leaderChanges,
      uncleanElections: this.history.uncleanElections,
      snapshotRestores: [...this.attachments.values()].reduce((s, a) => s + a.snapshotRestores, 0),
      batches: sum((c) => c.batches),
      barriers: sum((c) => c.barriers),
      termsGivenUp: sum((c) => c.termsGivenUp),
      actors: { ...this.actorStats },
    };
  }

  describe(): string {
    const lines: string[] = [];
    for (const [id, c] of this.controllers) {
      const n = this.sim.node(id);
      const img = this.imageOf(id);
      lines.push(`n${id} ${n.alive ? `${n.role} t${n.term}` : 'down'}${c.isActive ? ` ACTIVE t${c.activeTerm}` : ''} ` +
        `applied=${n.alive ? this.metadataOf(id).md.appliedIndex : '-'} image=${img?.offset ?? '-'} topics=${img?.topicsByName.size ?? '-'}`);
    }
    for (const b of this.brokers) lines.push(`broker ${b.brokerId} ${b.up ? 'up' : 'down'} epoch=${b.brokerEpoch} image=${b.image.offset}`);
    return lines.join('\n');
  }
}

// ------------------------------------------------------------ random runs

export interface ControllerProfile extends ControllerClusterSettings {
  readonly rpcNetworkName: string;
  readonly chaosMs: number;
  readonly brokerCrashes: boolean;
  readonly shutdowns: boolean;
  readonly brokerCuts: boolean;
}

const RPC_NETWORKS: readonly [string, NetworkFaults][] = [
  ['calm', { ...CALM_NETWORK }],
  ['lossy', { dropRate: 0.05, duplicateRate: 0.05, delayMinMs: 1, delayMaxMs: 8, tailRate: 0.02, tailMaxMs: 250 }],
  ['slow', { dropRate: 0.01, duplicateRate: 0.02, delayMinMs: 2, delayMaxMs: 20, tailRate: 0.05, tailMaxMs: 400 }],
];

export function controllerProfileFor(seed: number): ControllerProfile {
  const rng = new SeededRng(seed ^ 0xc7a1);
  const raft = profileFor(seed);
  const [rpcNetworkName, rpcNetwork] = pick(rng, RPC_NETWORKS);
  const sessionTimeoutMs = pick(rng, [600, 1000, 2000]);
  return {
    // Controllers are a fixed set of voters here; membership changes are RaftSim's own business.
    // A metadata snapshot is kilobytes (the Raft simulation's chain image is a few hundred
    // bytes): chunks below 256 bytes would make catching up a matter of throughput, not safety.
    raft: {
      ...raft, observers: 0, spares: 0, membership: false, reads: false,
      raft: { ...raft.raft, snapshotChunkBytes: Math.max(raft.raft.snapshotChunkBytes ?? 256, 256) },
    },
    brokers: rng.range(3, 5),
    rpcNetworkName,
    rpcNetwork,
    sessionTimeoutMs,
    heartbeatIntervalMs: Math.round(sessionTimeoutMs / rng.range(4, 8)),
    requestTimeoutMs: pick(rng, [200, 400, 800]),
    fenceCheckIntervalMs: pick(rng, [50, 100, 200]),
    batchCommandsMax: pick(rng, [1, 4, 256]),
    // RaftNode's defaults (10 s, 30 s), or short enough for a fault to outlast them.
    readTimeoutMs: pick(rng, [1000, 10_000]),
    proposalTimeoutMs: pick(rng, [400, 1500, 30_000]),
    staleAlterRate: pick(rng, [0, 0.1, 0.3]),
    chaosMs: rng.range(2000, 8000),
    brokerCrashes: rng.chance(0.7),
    shutdowns: rng.chance(0.6),
    brokerCuts: rng.chance(0.5),
  };
}

export function describeControllerProfile(p: ControllerProfile): string {
  const faults = (['brokerCrashes', 'shutdowns', 'brokerCuts'] as const).filter((k) => p[k]);
  return `${p.brokers} brokers, rpc=${p.rpcNetworkName}, session=${p.sessionTimeoutMs}ms hb=${p.heartbeatIntervalMs}ms ` +
    `timeout=${p.requestTimeoutMs}ms fenceCheck=${p.fenceCheckIntervalMs}ms batch=${p.batchCommandsMax} stale=${p.staleAlterRate} ` +
    `readTimeout=${p.readTimeoutMs}ms proposalTimeout=${p.proposalTimeoutMs}ms ` +
    `chaos=${p.chaosMs}ms [${faults.join(' ')}]; raft: ${describeProfile(p.raft)}`;
}

/** A quiet cluster for scripted scenarios: calm networks, no compaction, no torn writes. */
export function calmControllerOptions(seed: number, over: Partial<ControllerSimOptions> = {}): ControllerSimOptions {
  const raft = controllerProfileFor(seed).raft;
  return {
    seed,
    raft: {
      ...raft, voters: 3, network: CALM_NETWORK, networkName: 'calm', fsyncMaxMs: 4, compactEvery: 0, tornFlushRate: 0,
      raft: { ...raft.raft, electionTimeoutTicks: 10, heartbeatTicks: 2, preVote: true, checkQuorum: true },
    },
    brokers: 3, rpcNetwork: CALM_NETWORK, sessionTimeoutMs: 1000, heartbeatIntervalMs: 150, requestTimeoutMs: 400,
    fenceCheckIntervalMs: 100, batchCommandsMax: 256, staleAlterRate: 0, readTimeoutMs: 10_000, proposalTimeoutMs: 30_000,
    ...over,
  };
}

export interface ControllerRunReport {
  readonly seed: number;
  readonly profile: ControllerProfile;
  readonly events: number;
  readonly simMs: number;
  readonly stats: ControllerSimStats;
  readonly raftStats: SimStats;
}

export interface ControllerRunOptions {
  readonly fullTrace?: boolean;
  readonly chaosEventsMax?: number;
  readonly profile?: Partial<ControllerProfile>;
  /** Run a deliberately broken controller shell: the checkers must notice. */
  readonly unsafeEarlyActivation?: boolean;
  /** Receives the trace of a run that passed (the full trace with fullTrace). */
  readonly onTrace?: (lines: string[]) => void;
  /** Receives the simulation before it starts (to inspect it after a failure). */
  readonly onSim?: (cs: ControllerSim) => void;
}

/** Runs seed `seed` to the end; throws SimFailure on any violation. */
export function runControllerSeed(seed: number, options: ControllerRunOptions = {}): ControllerRunReport {
  const profile = { ...controllerProfileFor(seed), ...options.profile };
  const cs = new ControllerSim({
    ...profile, seed,
    fullTrace: options.fullTrace ?? false, replay: `make sim SEED=${seed} (controller.sim.js prints the full trace)`,
    unsafeEarlyActivation: options.unsafeEarlyActivation ?? false,
  });
  cs.sim.note(`controller seed ${seed}: ${describeControllerProfile(profile)}`);
  options.onSim?.(cs);
  const r = profile.raft;
  const chaos = new ControllerChaos({ sim: cs.sim, rpc: cs.rpc, controllers: cs.controllers, brokers: cs.brokers, stats: cs.actorStats }, {
    controllerCrashes: r.crashes, partitions: r.partitions, transfers: r.transfers,
    brokerCrashes: profile.brokerCrashes, shutdowns: profile.shutdowns, brokerCuts: profile.brokerCuts,
  }, new SeededRng(seed ^ 0xc4a05c));
  cs.start();
  chaos.start();
  const eventsMax = cs.sim.eventsRun + (options.chaosEventsMax ?? 200_000);
  const until = cs.sim.now() + profile.chaosMs;
  for (let t = cs.sim.queue.peekTime(); t !== undefined && t <= until && cs.sim.eventsRun < eventsMax; t = cs.sim.queue.peekTime()) cs.step();
  chaos.stop();
  cs.sim.note('--- heal phase ---');
  cs.healAndAwaitProgress();
  options.onTrace?.(cs.sim.trace.lines());
  return { seed, profile, events: cs.sim.eventsRun, simMs: cs.sim.now(), stats: cs.stats(), raftStats: { ...cs.sim.stats } };
}
