// The fault injector of a controller simulation run's chaos phase. Faults on
// the controller quorum come from the Raft simulation's controls (crashes —
// the active controller's often, some between a write and its fsync —,
// partitions, one-way cuts, leadership transfers); faults on the brokers are
// crashes (a restart is a new incarnation), controlled shutdowns, and cuts
// between brokers and controllers on the request network. Every fault heals
// by itself after a while, and stop() freezes the schedule for the heal phase.

import type { NodeId, Ready } from '../../../src/raft/types.js';
import type { Rng } from '../../../src/util/rng.js';
import type { RaftSim } from '../cluster.js';
import type { SimNode } from '../sim-node.js';
import { pick, type ControllerStats } from './actor-env.js';
import type { SimBroker } from './broker-actor.js';
import { ADMIN_ENDPOINT, BROKER_ENDPOINT_BASE, type RpcNetwork } from './rpc.js';
import type { SimController } from './sim-controller.js';

export interface ChaosFaults {
  readonly controllerCrashes: boolean;
  readonly partitions: boolean;
  readonly transfers: boolean;
  readonly brokerCrashes: boolean;
  readonly shutdowns: boolean;
  readonly brokerCuts: boolean;
}

export interface ChaosTargets {
  readonly sim: RaftSim;
  readonly rpc: RpcNetwork;
  readonly controllers: ReadonlyMap<NodeId, SimController>;
  readonly brokers: readonly SimBroker[];
  readonly stats: ControllerStats;
}

export class ControllerChaos {
  private running = false;

  constructor(
    private readonly t: ChaosTargets,
    private readonly faults: ChaosFaults,
    private readonly rng: Rng,
  ) {}

  start(): void {
    this.running = true;
    if (this.faults.controllerCrashes) this.t.sim.onFsyncStarted = (node, delayMs, rd) => this.maybeCrashBeforeFsync(node, delayMs, rd);
    this.every(50, 500, 'chaos', () => this.fault());
  }

  stop(): void {
    this.running = false;
    this.t.sim.onFsyncStarted = undefined;
  }

  private every(minMs: number, maxMs: number, label: string, act: () => void): void {
    this.t.sim.queue.schedule(this.rng.range(minMs, maxMs), label, () => {
      if (!this.running) return;
      act();
      this.every(minMs, maxMs, label, act);
    });
  }

  private later(minMs: number, maxMs: number, label: string, act: () => void): void {
    this.t.sim.queue.schedule(this.rng.range(minMs, maxMs), label, () => {
      if (this.running) act();
    });
  }

  private fault(): void {
    const f = this.faults;
    const acts: [boolean, number, () => void][] = [
      [f.controllerCrashes, 1.5, () => this.crashController()],
      [f.partitions, 3, () => this.partition()],
      [f.transfers, 1, () => this.transfer()],
      [f.brokerCrashes, 1.5, () => this.crashBroker()],
      [f.shutdowns, 1, () => this.shutdownBroker()],
      [f.brokerCuts, 1, () => this.cutBrokers()],
    ];
    const live = acts.filter(([on]) => on);
    let r = this.rng.next() * live.reduce((s, [, w]) => s + w, 0);
    for (const [, w, act] of live) {
      if ((r -= w) < 0) return act();
    }
  }

  // ------------------------------------------------------------ the controller quorum

  private activeController(): NodeId | undefined {
    for (const c of this.t.controllers.values()) if (c.isActive) return c.id;
    return undefined;
  }

  private crashController(): void {
    const active = this.activeController();
    const up = this.t.sim.alive();
    const victim = active !== undefined && this.rng.chance(0.5) ? active : up.length > 0 ? pick(this.rng, up).id : undefined;
    if (victim !== undefined) this.crashAndRestart(victim, 0);
  }

  /** Crashes land most often where a lost promise would hurt: a Ready carrying a vote or entries. */
  private maybeCrashBeforeFsync(node: SimNode, delayMs: number, rd: Ready): void {
    const p = rd.hardState !== undefined && rd.hardState.vote !== 0 ? 0.05 : rd.entries.length > 0 ? 0.003 : 0.001;
    if (this.running && this.rng.chance(p)) this.crashAndRestart(node.id, this.rng.int(delayMs));
  }

  private crashAndRestart(victim: NodeId, inMs: number): void {
    const downMs = this.rng.chance(0.7) ? this.rng.range(0, 200) : this.rng.range(200, 1500);
    this.t.sim.queue.schedule(inMs, `crash ${victim}`, () => {
      if (!this.running) return;
      this.t.sim.crash(victim);
      this.t.sim.queue.schedule(downMs, `restart ${victim}`, () => {
        if (this.running) this.t.sim.restart(victim);
      });
    });
  }

  private partition(): void {
    const sim = this.t.sim;
    const ids = sim.ids;
    const kind = this.rng.int(4);
    const active = this.activeController();
    if (kind === 0 && active !== undefined) sim.isolate(active);
    else if (kind <= 1) sim.isolate(pick(this.rng, ids));
    else if (kind === 2) {
      const side = ids.filter(() => this.rng.chance(0.5));
      sim.partition(side, ids.filter((id) => !side.includes(id)));
    } else {
      sim.cut(pick(this.rng, ids), pick(this.rng, ids));
    }
    this.later(50, 1500, 'heal', () => sim.heal());
  }

  private transfer(): void {
    const l = this.t.sim.leader();
    if (l === undefined) return;
    const others = this.t.sim.ids.filter((v) => v !== l.id);
    this.t.sim.transferLeadership(l.id, pick(this.rng, others));
  }

  // ------------------------------------------------------------ brokers

  private crashBroker(): void {
    const up = this.t.brokers.filter((b) => b.up);
    if (up.length === 0) return;
    const b = pick(this.rng, up);
    b.crash();
    this.t.stats.brokerCrashes++;
    this.later(50, 2500, `b${b.brokerId} restart`, () => b.start());
  }

  private shutdownBroker(): void {
    const up = this.t.brokers.filter((b) => b.up);
    if (up.length > 0) pick(this.rng, up).requestShutdown();
  }

  /** Cuts one broker (or the admin) off from every controller, or one controller off from every client. */
  private cutBrokers(): void {
    const net = this.t.rpc.net;
    const clients = [...this.t.brokers.map((b) => BROKER_ENDPOINT_BASE + b.brokerId), ADMIN_ENDPOINT];
    const ids = this.t.sim.ids;
    if (this.rng.chance(0.5)) {
      const client = pick(this.rng, clients);
      this.t.sim.note(`RPC PARTITION client ${client} | controllers`);
      net.partition([client], ids);
    } else {
      const controller = pick(this.rng, ids);
      this.t.sim.note(`RPC PARTITION n${controller} | clients`);
      net.partition([controller], clients);
    }
    this.later(100, 2500, 'rpc heal', () => {
      this.t.sim.note('RPC HEAL');
      net.heal();
    });
  }
}
