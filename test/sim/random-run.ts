// One randomized simulation run, fully determined by its seed: the seed picks
// a cluster shape (3 or 5 voters, 0–2 observers, a spare node for membership
// changes), core settings, a network fault profile and a mix of faults; then
// a chaos phase runs clients, crashes, partitions, membership changes,
// leadership transfers and reads; then the heal phase requires progress.
//
// Bounds: the chaos phase stops after chaosMs of simulated time or
// chaosEventsMax events, whichever comes first; the heal phase is bounded by
// 20 election timeouts (RaftSim.healAndAwaitProgress).

import type { ConfChange, NodeId, RaftConfig, Ready } from '../../src/raft/types.js';
import { SeededRng, type Rng } from '../../src/util/rng.js';
import { RaftSim, type SimStats } from './cluster.js';
import type { NetworkFaults } from './sim-network.js';
import type { SimNode } from './sim-node.js';

export interface RunProfile {
  readonly voters: number;
  readonly observers: number;
  readonly spares: number;
  readonly raft: Partial<Omit<RaftConfig, 'id'>>;
  readonly network: NetworkFaults;
  readonly networkName: string;
  readonly fsyncMaxMs: number;
  readonly compactEvery: number;
  readonly tornFlushRate: number;
  readonly chaosMs: number;
  readonly crashes: boolean;
  readonly partitions: boolean;
  readonly membership: boolean;
  readonly transfers: boolean;
  readonly reads: boolean;
}

export interface RunReport {
  readonly seed: number;
  readonly profile: RunProfile;
  readonly events: number;
  readonly simMs: number;
  readonly maxCommitted: number;
  readonly leaderTerms: number;
  readonly readsCompleted: number;
  readonly stats: SimStats;
}

export interface RunOptions {
  readonly fullTrace?: boolean;
  readonly chaosEventsMax?: number;
  /** Core settings forced over the seed's own (to explore, or to isolate a known bug). */
  readonly raft?: Partial<Omit<RaftConfig, 'id'>>;
  /** Profile fields forced over the seed's own (e.g. tornFlushRate: 0). */
  readonly profile?: Partial<Omit<RunProfile, 'raft'>>;
  /** Run with a deliberately broken shell (see SimOptions.sendBeforeFsync). */
  readonly sendBeforeFsync?: boolean;
  /** Receives the trace of a run that passed (the full trace with fullTrace). */
  readonly onTrace?: (lines: string[]) => void;
}

const NETWORKS: readonly [string, NetworkFaults][] = [
  ['calm', { dropRate: 0, duplicateRate: 0, delayMinMs: 1, delayMaxMs: 3, tailRate: 0, tailMaxMs: 3 }],
  ['lossy', { dropRate: 0.05, duplicateRate: 0.05, delayMinMs: 1, delayMaxMs: 8, tailRate: 0.02, tailMaxMs: 250 }],
  ['slow', { dropRate: 0.01, duplicateRate: 0.01, delayMinMs: 2, delayMaxMs: 20, tailRate: 0.05, tailMaxMs: 400 }],
  ['nasty', { dropRate: 0.25, duplicateRate: 0.15, delayMinMs: 1, delayMaxMs: 15, tailRate: 0.08, tailMaxMs: 600 }],
];

function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(xs.length)] as T;
}

export function profileFor(seed: number): RunProfile {
  const rng = new SeededRng(seed ^ 0x5eed);
  const [networkName, network] = pick(rng, NETWORKS);
  const membership = rng.chance(0.5);
  const maxInflightAppends = pick(rng, [1, 4, 64]);
  // Fewer than 16 entries per round trip cannot keep up with the clients on a
  // slow disk, and a lagging voter would miss the heal phase's bound (20
  // election timeouts) for want of throughput, not of correctness.
  const maxEntriesPerAppend = Math.max(pick(rng, [1, 4, 16, 1024]), Math.ceil(16 / maxInflightAppends));
  return {
    voters: rng.chance(0.5) ? 3 : 5,
    observers: rng.chance(0.5) ? 0 : rng.range(1, 2),
    spares: membership ? 1 : 0,
    raft: {
      electionTimeoutTicks: pick(rng, [6, 10, 20]),
      heartbeatTicks: rng.range(1, 3),
      maxInflightAppends,
      maxEntriesPerAppend,
      maxBytesPerAppend: pick(rng, [64, 1024, 1 << 20]),
      snapshotChunkBytes: pick(rng, [32, 128, 1024]),
      maxUncommittedEntries: pick(rng, [16, 256]),
      preVote: rng.chance(0.9),
      checkQuorum: rng.chance(0.9),
    },
    network,
    networkName,
    fsyncMaxMs: rng.chance(0.8) ? 4 : 25,
    compactEvery: pick(rng, [0, 8, 32, 100]),
    tornFlushRate: rng.chance(0.5) ? 0.5 : 0,
    chaosMs: rng.range(3000, 12000),
    crashes: rng.chance(0.7),
    partitions: rng.chance(0.7),
    membership,
    transfers: rng.chance(0.5),
    reads: rng.chance(0.7),
  };
}

/** Runs seed `seed` to the end; throws SimFailure on any violation. */
export function runSeed(seed: number, options: RunOptions = {}): RunReport {
  const profile = withOverrides(profileFor(seed), options);
  const sim = new RaftSim({
    seed,
    voters: profile.voters,
    observers: profile.observers,
    spares: profile.spares,
    raft: profile.raft,
    network: profile.network,
    fsyncMaxMs: profile.fsyncMaxMs,
    compactEvery: profile.compactEvery,
    tornFlushRate: profile.tornFlushRate,
    fullTrace: options.fullTrace ?? false,
    sendBeforeFsync: options.sendBeforeFsync ?? false,
    replay: `make sim SEED=${seed} (prints the full trace)`,
  });
  sim.note(`seed ${seed}: ${describeProfile(profile)}`);
  const chaos = new Chaos(sim, profile, new SeededRng(seed ^ 0xc4a05));
  chaos.start();
  const eventsMax = sim.eventsRun + (options.chaosEventsMax ?? 40_000);
  const until = sim.now() + profile.chaosMs;
  for (let t = sim.queue.peekTime(); t !== undefined && t <= until && sim.eventsRun < eventsMax; t = sim.queue.peekTime()) {
    sim.runEvent();
  }
  chaos.stop();
  sim.note('--- heal phase ---');
  sim.healAndAwaitProgress();
  // (A failing run has already printed its full trace, if it kept one: RaftSim.fail.)
  options.onTrace?.(sim.trace.lines());
  return {
    seed,
    profile,
    events: sim.eventsRun,
    simMs: sim.now(),
    maxCommitted: sim.ledger.maxCommitted,
    leaderTerms: sim.electionSafety.terms,
    readsCompleted: sim.reads.completed,
    stats: sim.stats,
  };
}

function withOverrides(p: RunProfile, o: RunOptions): RunProfile {
  return { ...p, ...o.profile, raft: { ...p.raft, ...o.raft } };
}

export function describeProfile(p: RunProfile): string {
  const faults = ['crashes', 'partitions', 'membership', 'transfers', 'reads'].filter((k) => p[k as keyof RunProfile]);
  return `${p.voters} voters + ${p.observers} observers + ${p.spares} spare, net=${p.networkName}, fsyncMax=${p.fsyncMaxMs}ms, ` +
    `compactEvery=${p.compactEvery}, torn=${p.tornFlushRate}, chaos=${p.chaosMs}ms [${faults.join(' ')}], raft=${JSON.stringify(p.raft)}`;
}

/** The client load and the fault injector of the chaos phase. */
class Chaos {
  private running = false;

  constructor(
    private readonly sim: RaftSim,
    private readonly p: RunProfile,
    private readonly rng: Rng,
  ) {}

  start(): void {
    this.running = true;
    if (this.p.crashes) this.sim.onFsyncStarted = (node, delayMs, rd) => this.maybeCrashBeforeFsync(node, delayMs, rd);
    this.every(3, 20, 'client', () => this.client());
    this.every(20, 250, 'chaos', () => this.fault());
  }

  stop(): void {
    this.running = false;
    this.sim.onFsyncStarted = undefined;
  }

  private every(minMs: number, maxMs: number, label: string, act: () => void): void {
    this.sim.queue.schedule(this.rng.range(minMs, maxMs), label, () => {
      if (!this.running) return;
      act();
      this.every(minMs, maxMs, label, act);
    });
  }

  private randomAlive(): NodeId | undefined {
    const up = this.sim.alive();
    return up.length === 0 ? undefined : pick(this.rng, up).id;
  }

  /** Proposals go to the leader mostly, sometimes to anyone (and fail there). */
  private client(): void {
    const l = this.sim.leader();
    const target = l !== undefined && this.rng.chance(0.9) ? l.id : this.randomAlive();
    if (target !== undefined) this.sim.propose(target);
  }

  private fault(): void {
    const acts: [boolean, number, () => void][] = [
      [this.p.crashes, 2, () => this.crash()],
      [this.p.partitions, 3, () => this.partition()],
      [this.p.membership, 2, () => this.membership()],
      [this.p.transfers, 1, () => this.transfer()],
      [this.p.reads, 3, () => this.read()],
    ];
    const live = acts.filter(([on]) => on);
    const total = live.reduce((s, [, w]) => s + w, 0);
    let r = this.rng.next() * total;
    for (const [, w, act] of live) {
      if ((r -= w) < 0) return act();
    }
  }

  /** Random crashes: the leader sometimes, anyone otherwise. */
  private crash(): void {
    const l = this.sim.leader();
    const victim = l !== undefined && this.rng.chance(0.4) ? l.id : this.randomAlive();
    if (victim !== undefined) this.crashAndRestart(victim, 0);
  }

  /**
   * Crash points matter more than crash counts: the window between a Ready's
   * write and its fsync is where a broken shell or core loses a promise (a
   * vote, an acknowledged entry), so some crashes land right there — most
   * often when the Ready carries a new term or vote.
   */
  private maybeCrashBeforeFsync(node: SimNode, delayMs: number, rd: Ready): void {
    const p = rd.hardState !== undefined && rd.hardState.vote !== 0 ? 0.1 : rd.entries.length > 0 ? 0.004 : 0.001;
    if (this.running && this.rng.chance(p)) this.crashAndRestart(node.id, this.rng.int(delayMs));
  }

  private crashAndRestart(victim: NodeId, inMs: number): void {
    const downMs = this.rng.chance(0.7) ? this.rng.range(0, 200) : this.rng.range(200, 1500);
    this.sim.queue.schedule(inMs, `crash ${victim}`, () => {
      if (!this.running) return;
      this.sim.crash(victim);
      this.sim.queue.schedule(downMs, `restart ${victim}`, () => {
        if (this.running) this.sim.restart(victim);
      });
    });
  }

  private partition(): void {
    const ids = this.sim.ids;
    const l = this.sim.leader();
    const kind = this.rng.int(4);
    if (kind === 0 && l !== undefined) this.sim.isolate(l.id);
    else if (kind === 1) this.sim.isolate(pick(this.rng, ids));
    else if (kind === 2) {
      const side = ids.filter(() => this.rng.chance(0.5));
      this.sim.partition(side, ids.filter((id) => !side.includes(id)));
    } else {
      const from = pick(this.rng, ids);
      const to = pick(this.rng, ids);
      this.sim.cut(from, to);
    }
    this.sim.queue.schedule(this.rng.range(50, 1500), 'heal', () => {
      if (this.running) this.sim.heal();
    });
  }

  /** One membership change valid against the leader's current membership. */
  private membership(): void {
    const l = this.sim.leader();
    if (l === undefined) return;
    const st = this.sim.status(l.id);
    const { voters, observers } = st.membership;
    const outside = this.sim.ids.filter((id) => !voters.includes(id) && !observers.includes(id));
    const caughtUp = observers.filter((o) => (st.progress?.get(o)?.match ?? 0) >= st.commit);
    const options: ConfChange[] = [
      ...outside.map((node) => ({ type: 'addObserver', node }) as const),
      ...caughtUp.map((node) => ({ type: 'promoteObserver', node }) as const),
      ...observers.map((node) => ({ type: 'removeObserver', node }) as const),
      ...(voters.length > 3 || (voters.length === 3 && this.rng.chance(0.2))
        ? voters.map((node) => ({ type: 'removeVoter', node }) as const)
        : []),
      ...(voters.length < 5 && this.rng.chance(0.1) ? outside.map((node) => ({ type: 'addVoter', node }) as const) : []),
    ];
    if (options.length > 0) this.sim.proposeConfChange(l.id, pick(this.rng, options));
  }

  private transfer(): void {
    const l = this.sim.leader();
    if (l === undefined) return;
    const others = this.sim.status(l.id).membership.voters.filter((v) => v !== l.id);
    if (others.length > 0) this.sim.transferLeadership(l.id, pick(this.rng, others));
  }

  private read(): void {
    const l = this.sim.leader();
    const target = l !== undefined && this.rng.chance(0.8) ? l.id : this.randomAlive();
    if (target !== undefined) this.sim.readIndex(target);
  }
}
