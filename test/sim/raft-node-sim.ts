// The Raft simulation of the REAL shell: every node is a real
// src/raft-node/node.ts RaftNode (ready loop, group commit, the early-send
// rule, snapshots and compaction, proposal tracking) on a real RaftTransport
// (hello, batching, peer links with keepalive and reconnect backoff), over the
// in-memory network (test/sim/cluster/sim-network.ts), with a real RaftDisk.
// Time is one discrete-event queue: every node's Clock and Scheduler read
// and feed it, and the loop runs ONE event, then lets every promise
// continuation it caused run (a setImmediate drains them; nothing does real
// I/O that could land in between except the synchronous disk calls), before
// the next. Every random choice comes from one SeededRng(seed).
//
// Every third seed adds a broker-only node that the leader adds as a Raft
// observer (addObserver); it then replicates and applies like a voter. The
// workload: proposals on a leader and through a QuorumClient on its own
// host, linearizable reads, leadership transfers.
//
// Faults drawn from the seed: crashes (the node's events die with it, its
// connections break, it restarts from its disk later), full partitions,
// isolation, one-way blocks, connection breaks, heals. Invariants checked
// after every event:
//   - election safety: at most one leader per term;
//   - one vote per term: no node grants its vote in a term to two candidates,
//     across crashes (what a shell that answers before syncing breaks);
//   - state machine safety and log matching: every node that applies index i
//     reaches the same state digest there (a rolling hash of the applied
//     prefix, so one divergent entry anywhere shows up);
//   - linearizable reads: a ReadIndex answer is at least the index of every
//     proposal acknowledged before the read was issued;
//   - a node never fails (RaftNode 'fatal': a broken invariant or disk error).
// At the end the network heals, every node restarts, and a fresh proposal
// must be applied on every voter (liveness).
//
// The disk: each node has its own simulated disk (test/sim/cluster/sim-fs.ts)
// under a real RaftDisk; a crash drops what was not fsynced (and, when the
// seed says so, keeps a torn prefix of it), which is what turns a shell that
// answers before it syncs into a double vote. `realDisk` runs the nodes on
// tmp directories instead (a process crash there keeps everything written).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { RaftNode, type MessageSender } from '../../src/raft-node/node.js';
import { RaftTransport } from '../../src/raft-node/transport.js';
import { createClientService } from '../../src/raft-node/client-service.js';
import { QuorumClient } from '../../src/raft-node/quorum-client.js';
import { DEFAULT_TRANSPORT_LIMITS, nodeLimits, type RaftNodeLimits, type TransportLimits } from '../../src/raft-node/quorum-config.js';
import type { StateMachine } from '../../src/raft-node/state-machine.js';
import type { Entry, Message, NodeId, RaftConfig, Snapshot } from '../../src/raft/types.js';
import type { Clock, Scheduler } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { SeededRng, type Rng } from '../../src/util/rng.js';
import { EventQueue } from './event-queue.js';
import { SimNetwork } from './cluster/sim-network.js';
import { SimFileSystem } from './cluster/sim-fs.js';
import { fsyncDir } from '../../src/util/fs-util.js';

const WALL_EPOCH_MS = 1_767_225_600_000;
const CLUSTER_ID = 'sim-raft';

export class RaftNodeSimFailure extends Error {
  override name = 'RaftNodeSimFailure';
  constructor(readonly seed: number, readonly invariant: string, readonly detail: string, readonly traceTail: readonly string[]) {
    super(`seed ${seed}: ${invariant}: ${detail}\nreplay: SLUICE_SIM_SEED=${seed} (test/sim/raft-node-sim.test.ts)\nlast ${traceTail.length} events:\n  ${traceTail.join('\n  ')}`);
  }
}

export interface RaftNodeSimOptions {
  readonly seed: number;
  readonly voters: number;
  /** Broker-only nodes that follow the log as Raft observers once the leader adds them (ids after the voters). */
  readonly observers?: number;
  /** Simulated time of the fault phase. */
  readonly faultMs?: number;
  /** Mean time between two faults. */
  readonly faultEveryMs?: number;
  /** Mean time between two proposals. */
  readonly proposeEveryMs?: number;
  /** Real files in a tmp directory instead of the simulated disk. */
  readonly realDisk?: boolean;
  /** Keep every trace line (a replay prints them); else the last 200. */
  readonly fullTrace?: boolean;
  /** One-way network delay (default 1–5 ms). */
  readonly delay?: { readonly minMs: number; readonly maxMs: number };
  /** Share of crashes that keep a torn prefix of the unsynced writes (default 0.5). */
  readonly tornRate?: number;
  readonly limits?: Partial<RaftNodeLimits>;
  /** Core settings (e.g. maxEntriesPerAppend 1: appends one entry at a time, which widens Figure 8's window). */
  readonly raft?: Partial<Omit<RaftConfig, 'id'>>;
}

export interface RaftNodeSimReport {
  readonly seed: number;
  readonly events: number;
  readonly proposalsAcked: number;
  /** Of which through the quorum client. */
  readonly clientAcks: number;
  readonly readsOk: number;
  readonly transfers: number;
  /** Highest index an observer applied (0: none ran). */
  readonly observerApplied: number;
  readonly crashes: number;
  readonly faults: number;
  readonly maxTerm: number;
  readonly appliedMax: number;
  /** sha256 of the trace: same seed, same digest. */
  readonly digest: string;
}

/** The state machine: a rolling digest of the applied prefix, reported to the checker on every apply. */
class DigestMachine implements StateMachine {
  appliedIndex = 0;
  state = 'genesis';
  constructor(private readonly onApply: (index: number, state: string) => void) {}

  apply(entry: Entry): void {
    this.appliedIndex = entry.index;
    this.state = createHash('sha1').update(this.state).update(`${entry.index}/${entry.term}/${entry.type}/`).update(entry.data).digest('hex').slice(0, 16);
    this.onApply(entry.index, this.state);
  }

  snapshot(): Uint8Array {
    return new TextEncoder().encode(JSON.stringify({ index: this.appliedIndex, state: this.state }));
  }

  restore(snapshot: Snapshot): void {
    if (snapshot.data.length === 0) {
      this.appliedIndex = snapshot.meta.index;
      this.state = 'genesis';
      return;
    }
    const img = JSON.parse(new TextDecoder().decode(snapshot.data)) as { index: number; state: string };
    this.appliedIndex = snapshot.meta.index;
    this.state = img.state;
    this.onApply(snapshot.meta.index, this.state);
  }

  describe(): Record<string, unknown> {
    return { appliedIndex: this.appliedIndex, state: this.state };
  }
}

interface Host {
  readonly id: NodeId;
  readonly dir: string;
  incarnation: number;
  node: RaftNode | undefined;
  transport: RaftTransport | undefined;
  sm: DigestMachine | undefined;
  /** Its disk (undefined with realDisk). */
  readonly disk: SimFileSystem | undefined;
  /** Whether a restart is already scheduled. */
  restarting: boolean;
}

export class RaftNodeSim {
  readonly queue = new EventQueue();
  readonly clock: Clock = { nowMs: () => WALL_EPOCH_MS + this.queue.now(), monotonicMs: () => this.queue.now() };
  /** Events of no node (the network's deliveries, the workload, faults). */
  readonly scheduler: Scheduler = this.schedulerFor(undefined);
  readonly net: SimNetwork;
  /** Every node: the voters, then the observers. */
  readonly ids: readonly NodeId[];
  readonly voterIds: readonly NodeId[];
  private readonly hosts = new Map<NodeId, Host>();
  private readonly rng: Rng;
  private readonly faultRng: Rng;
  private readonly workRng: Rng;
  private readonly diskRng: Rng;
  private readonly trace: string[] = [];
  private readonly hash = createHash('sha256');
  private readonly tmpRoot: string;
  private readonly limits: RaftNodeLimits;
  private readonly transportLimits: TransportLimits;
  // Checker state.
  private readonly leaders = new Map<number, NodeId>();
  private readonly votes = new Map<string, NodeId>();
  private readonly stateAt = new Map<number, string>();
  private failure: RaftNodeSimFailure | undefined;
  private events = 0;
  private proposalsAcked = 0;
  private clientAcks = 0;
  /** Highest index of an acknowledged proposal so far (what a read issued now must see). */
  private ackedMax = 0;
  private readsOk = 0;
  private transfers = 0;
  private crashes = 0;
  private faults = 0;
  private commandSeq = 0;
  /** A client of the quorum on its own host: half the workload's proposals travel the wire through it. */
  private client: QuorumClient | undefined;

  constructor(private readonly opts: RaftNodeSimOptions) {
    this.rng = new SeededRng(opts.seed);
    this.net = new SimNetwork({ clock: this.clock, scheduler: this.scheduler, rng: this.rng.fork(), delay: opts.delay ?? { minMs: 1, maxMs: 5 }, trace: (l) => this.note(l) });
    this.faultRng = this.rng.fork();
    this.workRng = this.rng.fork();
    this.ids = Array.from({ length: opts.voters + (opts.observers ?? 0) }, (_, k) => k + 1);
    this.voterIds = this.ids.slice(0, opts.voters);
    // tmpfs where there is one: fsync there costs nothing (the real disk's model is the page cache anyway).
    this.tmpRoot = opts.realDisk ? fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'sluice-raft-node-sim-')) : '/sim';
    this.limits = nodeLimits({ tickMs: 10, electionTimeoutTicks: 15, heartbeatTicks: 3, segmentBytesMax: 256 * 1024, snapshotIntervalEntries: 64, commitPersistIntervalMs: 200, ...opts.limits });
    this.transportLimits = { ...DEFAULT_TRANSPORT_LIMITS, keepaliveIntervalMs: 200, keepaliveTimeoutMs: 600, reconnectBackoffBaseMs: 10, reconnectBackoffMaxMs: 100, connectTimeoutMs: 300 };
    this.diskRng = this.rng.fork();
    for (const id of this.ids) {
      const disk = opts.realDisk ? undefined : new SimFileSystem({ clock: this.clock, scheduler: this.scheduler, rng: this.diskRng.fork() });
      if (disk) makeDataDir(disk, `/sim/n${id}`);
      this.hosts.set(id, { id, dir: path.join(this.tmpRoot, `n${id}`, '__cluster_metadata-0'), incarnation: 0, node: undefined, transport: undefined, sm: undefined, disk, restarting: false });
    }
  }

  /** A Scheduler on the event queue; with a host, its events die with the host's current incarnation. */
  private schedulerFor(host: Host | undefined): Scheduler {
    const incarnation = host?.incarnation ?? 0;
    return {
      schedule: (delayMs, fn) => {
        let cancelled = false;
        this.queue.schedule(Math.max(0, delayMs), '', () => {
          if (cancelled || (host !== undefined && host.incarnation !== incarnation)) return;
          fn();
        });
        return () => { cancelled = true; };
      },
    };
  }

  private note(line: string): void {
    const text = `${this.queue.now()} ${line}`;
    this.hash.update(text).update('\n');
    this.trace.push(text);
    if (!this.opts.fullTrace && this.trace.length > 400) this.trace.splice(0, this.trace.length - 200);
  }

  private fail(invariant: string, detail: string): void {
    this.failure ??= new RaftNodeSimFailure(this.opts.seed, invariant, detail, this.opts.fullTrace ? [...this.trace] : this.trace.slice(-200));
  }

  private url(id: NodeId): string {
    return `ws://n${id}:9093`;
  }

  // ------------------------------------------------------------ nodes

  private async startNode(id: NodeId): Promise<void> {
    const h = this.hosts.get(id)!;
    h.incarnation++;
    h.restarting = false;
    const scheduler = this.schedulerFor(h);
    const rng = this.rng.fork();
    const transport = new RaftTransport({
      nodeId: id, clusterId: CLUSTER_ID, listen: { host: `n${id}`, port: 9093, url: this.url(id) },
      peers: new Map(this.ids.filter((p) => p !== id).map((p) => [p, this.url(p)] as const)),
      limits: this.transportLimits, rng: rng.fork(), logger: silentLogger,
      transport: this.net.transport(`n${id}`), clock: this.clock, scheduler,
    });
    const sm = new DigestMachine((index, state) => this.applied(id, index, state));
    const sender: MessageSender = {
      send: (msgs) => {
        for (const m of msgs) this.sent(m);
        transport.send(msgs);
      },
      close: () => transport.close(),
    };
    const node = RaftNode.start({
      id, voters: this.voterIds, raftDir: h.dir, stateMachine: sm, transport: sender, limits: this.limits,
      rng: rng.fork(), logger: silentLogger, clock: this.clock, scheduler,
      ...(h.disk ? { fs: h.disk } : {}),
      ...(this.opts.raft ? { raftConfig: this.opts.raft } : {}),
    });
    node.on('fatal', (err) => this.fail('node failed', `n${id}: ${err.message}`));
    node.on('roleChange', (c) => this.note(`n${id} ${c.role} t${c.term} leader=${c.leader}`));
    h.node = node;
    h.transport = transport;
    h.sm = sm;
    await transport.listen();
    transport.start({ onRaftMessage: (m) => node.receive(m), onClientRequest: createClientService(node, sm) });
  }

  /** The node's process dies: its events, connections and listener go; its disk stays (minus what the disk model drops). */
  crash(id: NodeId): void {
    const h = this.hosts.get(id)!;
    if (!h.node) return;
    this.note(`CRASH n${id}`);
    this.crashes++;
    h.incarnation++;
    h.node = undefined;
    h.transport = undefined;
    h.sm = undefined;
    this.net.crash(`n${id}`);
    const torn = this.diskRng.chance(this.opts.tornRate ?? 0.5);
    h.disk?.crash({ tornTail: torn });
  }

  async restart(id: NodeId): Promise<void> {
    const h = this.hosts.get(id)!;
    if (h.node) return;
    this.note(`RESTART n${id}`);
    await this.startNode(id);
  }

  // ------------------------------------------------------------ checks

  private sent(m: Message): void {
    if (m.type !== 'voteResp' || !m.granted) return;
    const key = `${m.from}@${m.term}`;
    const prior = this.votes.get(key);
    if (prior !== undefined && prior !== m.to) this.fail('one vote per term', `n${m.from} voted for n${prior} and for n${m.to} in term ${m.term}`);
    this.votes.set(key, m.to);
  }

  private applied(id: NodeId, index: number, state: string): void {
    const known = this.stateAt.get(index);
    if (known === undefined) this.stateAt.set(index, state);
    else if (known !== state) this.fail('state machine safety', `n${id} reached state ${state} at index ${index}, another node ${known}`);
  }

  private checkLeaders(): void {
    for (const h of this.hosts.values()) {
      const s = h.node?.status();
      if (!s || s.role !== 'leader') continue;
      const other = this.leaders.get(s.term);
      if (other === undefined) this.leaders.set(s.term, h.id);
      else if (other !== h.id) this.fail('election safety', `n${other} and n${h.id} both lead term ${s.term}`);
    }
  }

  // ------------------------------------------------------------ the loop

  private async runOne(): Promise<boolean> {
    const ev = this.queue.pop();
    if (!ev) return false;
    this.events++;
    try {
      ev.run();
    } catch (err) {
      this.fail('exception', err instanceof Error ? (err.stack ?? err.message) : String(err));
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.checkLeaders();
    if (this.failure) throw this.failure;
    return true;
  }

  async runFor(ms: number): Promise<void> {
    const until = this.queue.now() + ms;
    for (let t = this.queue.peekTime(); t !== undefined && t <= until; t = this.queue.peekTime()) await this.runOne();
    if (this.queue.now() < until) this.queue.scheduleAt(until, '', () => undefined);
    await this.runOne();
  }

  /** Runs events until `done()` holds; fails the run (liveness) after `timeoutMs` of simulated time. */
  async runUntil(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = this.queue.now() + timeoutMs;
    while (!done()) {
      if (this.queue.now() > deadline || this.queue.peekTime() === undefined) {
        this.fail('liveness', `${what}: not within ${timeoutMs} ms: ${this.describe()}`);
        throw this.failure;
      }
      await this.runOne();
    }
  }

  /** One line per node: role, term, commit, applied, last index (or down). */
  describe(): string {
    return [...this.hosts.values()].map((h) => {
      const s = h.node?.status();
      return s ? `n${h.id} ${s.role} t${s.term} leader=${s.leader} commit=${s.commit} applied=${s.applied} last=${s.lastIndex}` : `n${h.id} down`;
    }).join('; ');
  }

  /** The real node of `id` while it is up. */
  nodeOf(id: NodeId): RaftNode | undefined {
    return this.hosts.get(id)?.node;
  }

  async startAll(): Promise<void> {
    for (const id of this.ids) await this.startNode(id);
  }

  leader(): Host | undefined {
    let best: Host | undefined;
    let term = -1;
    for (const h of this.hosts.values()) {
      const s = h.node?.status();
      if (s?.role === 'leader' && s.term > term) {
        best = h;
        term = s.term;
      }
    }
    return best;
  }

  /** The leader adds an observer its membership lacks (one change at a time; refusals are retried on the next step). */
  private addObservers(): void {
    const l = this.leader();
    if (!l?.node) return;
    const m = l.node.membership();
    const missing = this.ids.find((id) => !m.voters.includes(id) && !m.observers.includes(id));
    if (missing === undefined) return;
    l.node.proposeConfChange({ type: 'addObserver', node: missing }).then(() => this.note(`observer n${missing} added`), () => undefined);
  }

  /** A ReadIndex on a node that believes it leads; its answer must cover every proposal acknowledged before. */
  private read(): void {
    const l = this.leader();
    if (!l?.node) return;
    const mustSee = this.ackedMax;
    const id = l.id;
    l.node.readIndex().then((index) => {
      this.readsOk++;
      if (index < mustSee) this.fail('linearizable read', `n${id} answered a read at ${index}, below ${mustSee} acknowledged before it was issued`);
    }, () => undefined);
  }

  /** The leader hands leadership to a random other voter. */
  private transfer(): void {
    const l = this.leader();
    if (!l?.node) return;
    const others = this.voterIds.filter((id) => id !== l.id);
    const to = others[this.workRng.int(others.length)]!;
    if (l.node.transferLeadership(to)) {
      this.transfers++;
      this.note(`transfer n${l.id} -> n${to}`);
    }
  }

  /** Proposes through the quorum client (leader following, retries, timeouts on the simulated network). */
  private proposeByClient(): Promise<{ index: number } | undefined> {
    this.client ??= new QuorumClient({
      endpoints: this.voterIds.map((id) => this.url(id)), clusterId: CLUSTER_ID, rng: this.workRng.fork(), logger: silentLogger,
      transport: this.net.transport('client'), clock: this.clock, scheduler: this.scheduler,
      limits: { requestTimeoutMs: 1_000, leaderSearchTimeoutMs: 2_000, connectTimeoutMs: 300 },
    });
    const cmd = `q${++this.commandSeq}`;
    return this.client.propose(new TextEncoder().encode(cmd)).then((p) => {
      this.proposalsAcked++;
      this.clientAcks++;
      this.ackedMax = Math.max(this.ackedMax, p.index);
      return { index: p.index };
    }, () => undefined);
  }

  /** Proposes a fresh command on a node that believes it leads (any of them: a stale leader's entries are how logs diverge). */
  private propose(): Promise<{ index: number } | undefined> {
    const leaders = [...this.hosts.values()].filter((h) => h.node?.status().role === 'leader');
    const l = leaders.length > 1 ? leaders[this.workRng.int(leaders.length)] : leaders[0];
    if (!l?.node) return Promise.resolve(undefined);
    const cmd = `c${++this.commandSeq}`;
    return l.node.propose(new TextEncoder().encode(cmd)).then((p) => {
      this.proposalsAcked++;
      this.ackedMax = Math.max(this.ackedMax, p.index);
      return { index: p.index };
    }, () => undefined);
  }

  private scheduleWork(untilMs: number): void {
    const every = this.opts.proposeEveryMs ?? 20;
    const step = (): void => {
      if (this.queue.now() >= untilMs) return;
      this.addObservers();
      const roll = this.workRng.int(100);
      if (roll < 45) void this.proposeByClient();
      else if (roll < 90) void this.propose();
      else if (roll < 98) this.read();
      else this.transfer();
      this.scheduler.schedule(this.workRng.range(1, 2 * every), step);
    };
    this.scheduler.schedule(this.workRng.range(1, every), step);
  }

  private scheduleFaults(untilMs: number): void {
    const every = this.opts.faultEveryMs ?? 300;
    const step = (): void => {
      if (this.queue.now() >= untilMs) return;
      this.injectFault();
      this.scheduler.schedule(this.faultRng.range(every / 2, every * 3 / 2), step);
    };
    this.scheduler.schedule(this.faultRng.range(every / 2, every), step);
  }

  /** One fault, drawn from the seed; the leader is a favourite target (leader churn is where Raft bugs live). */
  private injectFault(): void {
    this.faults++;
    const r = this.faultRng;
    const hostName = (id: NodeId): string => `n${id}`;
    const pick = (): NodeId => this.ids[r.int(this.ids.length)]!;
    const leaderOrAny = (): NodeId => this.leader()?.id ?? pick();
    const roll = r.int(100);
    if (roll < 40) {
      const id = roll < 25 ? leaderOrAny() : pick();
      const h = this.hosts.get(id)!;
      if (!h.node || h.restarting) return;
      this.crash(id);
      h.restarting = true;
      this.scheduler.schedule(r.range(20, 400), () => void this.restart(id));
    } else if (roll < 55) {
      const shuffled = [...this.ids].sort(() => r.next() - 0.5);
      const cut = 1 + r.int(this.ids.length - 1);
      this.net.partition([shuffled.slice(0, cut).map(hostName), shuffled.slice(cut).map(hostName)]);
    } else if (roll < 65) {
      this.net.isolate(hostName(leaderOrAny()));
    } else if (roll < 75) {
      const a = pick();
      const b = pick();
      if (a !== b) this.net.blockOneWay(hostName(a), hostName(b));
    } else if (roll < 85) {
      this.net.breakConnections(hostName(pick()));
    } else {
      this.net.heal();
    }
  }

  /** Runs the seed: start, the fault phase with a workload, then heal and require progress. */
  async run(): Promise<RaftNodeSimReport> {
    try {
      await this.startAll();
      const faultMs = this.opts.faultMs ?? 4_000;
      this.scheduleWork(faultMs);
      this.scheduleFaults(faultMs);
      await this.runFor(faultMs);
      this.note('HEAL: network, every node up');
      this.net.heal();
      for (const id of this.ids) await this.restart(id);
      await this.awaitProgress(60 * this.limits.tickMs * this.limits.electionTimeoutTicks);
      let observerApplied = 0;
      for (const id of this.ids.slice(this.voterIds.length)) observerApplied = Math.max(observerApplied, this.hosts.get(id)?.sm?.appliedIndex ?? 0);
      let appliedMax = 0;
      for (const h of this.hosts.values()) appliedMax = Math.max(appliedMax, h.sm?.appliedIndex ?? 0);
      return {
        seed: this.opts.seed, events: this.events, proposalsAcked: this.proposalsAcked, clientAcks: this.clientAcks, readsOk: this.readsOk, transfers: this.transfers, observerApplied, crashes: this.crashes, faults: this.faults,
        maxTerm: Math.max(0, ...this.leaders.keys()), appliedMax, digest: this.hash.copy().digest('hex'),
      };
    } finally {
      this.client?.close();
      for (const h of this.hosts.values()) h.incarnation++;
      if (this.opts.realDisk) fs.rmSync(this.tmpRoot, { recursive: true, force: true });
    }
  }

  /** A fresh proposal, applied on every voter, within `timeoutMs`. */
  private async awaitProgress(timeoutMs: number): Promise<void> {
    const deadline = this.queue.now() + timeoutMs;
    while (this.queue.now() < deadline) {
      const p = await this.proposeAndWait(deadline);
      if (p !== undefined) {
        const idx = p.index;
        while (this.queue.now() < deadline) {
          const members = this.leader()?.node?.membership();
          const followers = members ? [...members.voters, ...members.observers] : this.voterIds;
          if (followers.every((id) => (this.hosts.get(id)?.sm?.appliedIndex ?? 0) >= idx)) return;
          await this.runFor(10);
        }
      }
      await this.runFor(50);
    }
    this.fail('liveness', `no fresh proposal applied on every voter within ${timeoutMs} ms after healing: ${this.describe()}`);
    throw this.failure;
  }

  private async proposeAndWait(deadline: number): Promise<{ index: number } | undefined> {
    let result: { index: number } | undefined | null = null;
    void this.propose().then((r) => { result = r; });
    while (result === null && this.queue.now() < deadline) {
      await this.runFor(10);
      if (result === null && !this.leader()) return undefined;
    }
    return result ?? undefined;
  }
}

/**
 * Figure 8 of the Raft paper, scripted on three real nodes: a leader A
 * writes X (its term) and crashes before anyone has it; B or C (L) wins the
 * next term, writes its own entry at X's index and crashes before sending
 * it; A comes back, wins a later term and copies X to the last node F — X is
 * now on a majority, but of an earlier term, so A must not commit it (§5.4.2)
 * — and A crashes; L comes back and, its last term being higher than F's,
 * wins and overwrites X. Correct Raft never applied X anywhere, so nothing
 * diverges; a leader that counts replicas for an earlier term's entry
 * (mutant raft-commit-earlier-term) applied X on A, and F then applies L's
 * entry at that index: state machine safety fails.
 */
export async function figure8(seed: number): Promise<void> {
  const sim = new RaftNodeSim({ seed, voters: 3, raft: { maxEntriesPerAppend: 1, maxInflightAppends: 1 } });
  const et = 40 * 15 * 10;
  await sim.startAll();
  await sim.runUntil(() => sim.leader() !== undefined, et, 'a first leader');
  const a = sim.leader()!.id;
  const [b, c] = sim.ids.filter((id) => id !== a) as [NodeId, NodeId];
  const applied = (id: NodeId): number => sim.nodeOf(id)?.status().applied ?? -1;
  const lastIndex = (id: NodeId): number => sim.nodeOf(id)?.status().lastIndex ?? -1;
  // Every log equal and applied: the divergence starts at index k.
  await sim.runUntil(() => sim.ids.every((id) => applied(id) === lastIndex(a)), et, 'logs settle');
  const k = lastIndex(a) + 1;
  const host = (id: NodeId): string => `n${id}`;
  // 1. A writes X that nobody else receives, then crashes.
  sim.net.blockOneWay(host(a), host(b));
  sim.net.blockOneWay(host(a), host(c));
  void sim.nodeOf(a)!.propose(new TextEncoder().encode('X')).catch(() => undefined);
  await sim.runUntil(() => lastIndex(a) >= k, et, 'A appends X');
  await sim.runFor(5); // its ready loop makes X durable
  sim.crash(a);
  sim.net.heal();
  // 2. B or C (L) wins; its entry at k never leaves it; it crashes.
  const leads = (id: NodeId): boolean => sim.nodeOf(id)?.status().role === 'leader';
  await sim.runUntil(() => leads(b) || leads(c), et, 'B or C leads');
  const l = leads(b) ? b : c;
  const f = l === b ? c : b;
  sim.net.blockOneWay(host(l), host(f));
  await sim.runUntil(() => lastIndex(l) >= k, et, 'L appends its own entry');
  await sim.runFor(5);
  sim.crash(l);
  sim.net.heal();
  // 3. A returns, leads, copies X to F; then A is cut off from F and crashes.
  await sim.restart(a);
  const matchOfF = (): number => sim.nodeOf(a)?.raftStatus().progress?.get(f)?.match ?? -1;
  await sim.runUntil(() => leads(a) && matchOfF() >= k, et, 'A leads again and F holds X');
  sim.net.blockOneWay(host(a), host(f));
  await sim.runFor(100);
  sim.crash(a);
  sim.net.heal();
  // 4. L returns and wins over F: X is overwritten. Then everyone settles.
  await sim.restart(l);
  await sim.runUntil(() => applied(f) >= k && applied(l) >= k, et, 'L leads and F applies index k');
  await sim.restart(a);
  await sim.runUntil(() => sim.ids.every((id) => applied(id) >= k), et, 'every node applies index k');
}

/** The node's data directory, created durably (what src/server/data-dir.ts does before the Raft disk opens). */
function makeDataDir(disk: SimFileSystem, dir: string): void {
  disk.mkdirSync(dir, { recursive: true });
  for (let d = dir; ; d = path.dirname(d)) {
    fsyncDir(disk, d);
    if (d === path.dirname(d)) break;
  }
}

/** Runs one seed of the real-shell Raft simulation. */
export function runRaftNodeSeed(seed: number, opts: Partial<RaftNodeSimOptions> = {}): Promise<RaftNodeSimReport> {
  return new RaftNodeSim({ seed, voters: seed % 2 === 0 ? 3 : 5, observers: seed % 3 === 0 ? 1 : 0, ...opts }).run();
}
