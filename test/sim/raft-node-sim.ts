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
//   - a node never fails (RaftNode 'fatal': a broken invariant or disk error).
// At the end the network heals, every node restarts, and a fresh proposal
// must be applied on every voter (liveness).
//
// The disk: `fsFor(id)` gives each node its FileSystem. With the real one
// (tmp directories) a crash keeps everything written, as a process crash
// does; with the simulated disk (test/sim/cluster/sim-fs.ts) a crash drops
// what was not fsynced, which is what turns a shell that answers before it
// syncs into a double vote.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { RaftNode, type MessageSender } from '../../src/raft-node/node.js';
import { RaftTransport } from '../../src/raft-node/transport.js';
import { DEFAULT_TRANSPORT_LIMITS, nodeLimits, type RaftNodeLimits, type TransportLimits } from '../../src/raft-node/quorum-config.js';
import type { StateMachine } from '../../src/raft-node/state-machine.js';
import type { Entry, Message, NodeId, Snapshot } from '../../src/raft/types.js';
import type { Clock, Scheduler } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { SeededRng, type Rng } from '../../src/util/rng.js';
import { EventQueue } from './event-queue.js';
import { SimNetwork } from './cluster/sim-network.js';

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
  /** Simulated time of the fault phase. */
  readonly faultMs?: number;
  /** Mean time between two faults. */
  readonly faultEveryMs?: number;
  /** Mean time between two proposals. */
  readonly proposeEveryMs?: number;
  /** Per node: its disk (default the real one under a fresh tmp directory). */
  readonly fsFor?: (id: NodeId) => unknown;
  /** Called when a node crashes (a simulated disk drops its unsynced writes here). */
  readonly onCrash?: (id: NodeId) => void;
  readonly limits?: Partial<RaftNodeLimits>;
}

export interface RaftNodeSimReport {
  readonly seed: number;
  readonly events: number;
  readonly proposalsAcked: number;
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
  /** Whether a restart is already scheduled. */
  restarting: boolean;
}

export class RaftNodeSim {
  readonly queue = new EventQueue();
  readonly clock: Clock = { nowMs: () => WALL_EPOCH_MS + this.queue.now(), monotonicMs: () => this.queue.now() };
  /** Events of no node (the network's deliveries, the workload, faults). */
  readonly scheduler: Scheduler = this.schedulerFor(undefined);
  readonly net: SimNetwork;
  readonly ids: readonly NodeId[];
  private readonly hosts = new Map<NodeId, Host>();
  private readonly rng: Rng;
  private readonly faultRng: Rng;
  private readonly workRng: Rng;
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
  private crashes = 0;
  private faults = 0;
  private commandSeq = 0;

  constructor(private readonly opts: RaftNodeSimOptions) {
    this.rng = new SeededRng(opts.seed);
    this.net = new SimNetwork({ clock: this.clock, scheduler: this.scheduler, rng: this.rng.fork(), delay: { minMs: 1, maxMs: 5 }, trace: (l) => this.note(l) });
    this.faultRng = this.rng.fork();
    this.workRng = this.rng.fork();
    this.ids = Array.from({ length: opts.voters }, (_, k) => k + 1);
    // tmpfs where there is one: fsync there costs nothing (the real disk's model is the page cache anyway).
    this.tmpRoot = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'sluice-raft-node-sim-'));
    this.limits = nodeLimits({ tickMs: 10, electionTimeoutTicks: 15, heartbeatTicks: 3, segmentBytesMax: 256 * 1024, snapshotIntervalEntries: 64, commitPersistIntervalMs: 200, ...opts.limits });
    this.transportLimits = { ...DEFAULT_TRANSPORT_LIMITS, keepaliveIntervalMs: 200, keepaliveTimeoutMs: 600, reconnectBackoffBaseMs: 10, reconnectBackoffMaxMs: 100, connectTimeoutMs: 300 };
    for (const id of this.ids) this.hosts.set(id, { id, dir: path.join(this.tmpRoot, `n${id}`, '__cluster_metadata-0'), incarnation: 0, node: undefined, transport: undefined, sm: undefined, restarting: false });
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
    if (this.trace.length > 200) this.trace.splice(0, this.trace.length - 200);
  }

  private fail(invariant: string, detail: string): void {
    this.failure ??= new RaftNodeSimFailure(this.opts.seed, invariant, detail, [...this.trace]);
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
    const fsOpt = this.opts.fsFor ? { fs: this.opts.fsFor(id) } : {};
    const node = RaftNode.start({
      id, voters: this.ids, raftDir: h.dir, stateMachine: sm, transport: sender, limits: this.limits,
      rng: rng.fork(), logger: silentLogger, clock: this.clock, scheduler, ...fsOpt,
    } as Parameters<typeof RaftNode.start>[0]);
    node.on('fatal', (err) => this.fail('node failed', `n${id}: ${err.message}`));
    node.on('roleChange', (c) => this.note(`n${id} ${c.role} t${c.term} leader=${c.leader}`));
    h.node = node;
    h.transport = transport;
    h.sm = sm;
    await transport.listen();
    transport.start({ onRaftMessage: (m) => node.receive(m), onClientRequest: () => Promise.reject(new Error('no clients in this simulation')) });
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
    this.opts.onCrash?.(id);
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

  private propose(): Promise<{ index: number } | undefined> {
    const l = this.leader();
    if (!l?.node) return Promise.resolve(undefined);
    const cmd = `c${++this.commandSeq}`;
    return l.node.propose(new TextEncoder().encode(cmd)).then((p) => {
      this.proposalsAcked++;
      return { index: p.index };
    }, () => undefined);
  }

  private scheduleWork(untilMs: number): void {
    const every = this.opts.proposeEveryMs ?? 20;
    const step = (): void => {
      if (this.queue.now() >= untilMs) return;
      void this.propose();
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

  private injectFault(): void {
    this.faults++;
    const r = this.faultRng;
    const hostName = (id: NodeId): string => `n${id}`;
    const pick = (): NodeId => this.ids[r.int(this.ids.length)]!;
    switch (r.int(6)) {
      case 0: {
        const id = pick();
        const h = this.hosts.get(id)!;
        if (!h.node || h.restarting) return;
        this.crash(id);
        h.restarting = true;
        this.scheduler.schedule(r.range(20, 600), () => void this.restart(id));
        return;
      }
      case 1: {
        const shuffled = [...this.ids].sort(() => r.next() - 0.5);
        const cut = 1 + r.int(this.ids.length - 1);
        this.net.partition([shuffled.slice(0, cut).map(hostName), shuffled.slice(cut).map(hostName)]);
        return;
      }
      case 2: this.net.isolate(hostName(pick())); return;
      case 3: {
        const a = pick();
        const b = pick();
        if (a !== b) this.net.blockOneWay(hostName(a), hostName(b));
        return;
      }
      case 4: this.net.breakConnections(hostName(pick())); return;
      default: this.net.heal(); return;
    }
  }

  /** Runs the seed: start, the fault phase with a workload, then heal and require progress. */
  async run(): Promise<RaftNodeSimReport> {
    try {
      for (const id of this.ids) await this.startNode(id);
      const faultMs = this.opts.faultMs ?? 4_000;
      this.scheduleWork(faultMs);
      this.scheduleFaults(faultMs);
      await this.runFor(faultMs);
      this.note('HEAL: network, every node up');
      this.net.heal();
      for (const id of this.ids) await this.restart(id);
      await this.awaitProgress(60 * this.limits.tickMs * this.limits.electionTimeoutTicks);
      let appliedMax = 0;
      for (const h of this.hosts.values()) appliedMax = Math.max(appliedMax, h.sm?.appliedIndex ?? 0);
      return {
        seed: this.opts.seed, events: this.events, proposalsAcked: this.proposalsAcked, crashes: this.crashes, faults: this.faults,
        maxTerm: Math.max(0, ...this.leaders.keys()), appliedMax, digest: this.hash.copy().digest('hex'),
      };
    } finally {
      for (const h of this.hosts.values()) h.incarnation++;
      fs.rmSync(this.tmpRoot, { recursive: true, force: true });
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
          if ([...this.hosts.values()].every((h) => (h.sm?.appliedIndex ?? 0) >= idx)) return;
          await this.runFor(10);
        }
      }
      await this.runFor(50);
    }
    const status = [...this.hosts.values()].map((h) => {
      const s = h.node?.status();
      return s ? `n${h.id} ${s.role} t${s.term} commit=${s.commit} applied=${s.applied} last=${s.lastIndex}` : `n${h.id} down`;
    }).join('; ');
    this.fail('liveness', `no fresh proposal applied on every voter within ${timeoutMs} ms after healing: ${status}`);
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

/** Runs one seed of the real-shell Raft simulation. */
export function runRaftNodeSeed(seed: number, opts: Partial<RaftNodeSimOptions> = {}): Promise<RaftNodeSimReport> {
  return new RaftNodeSim({ seed, voters: seed % 2 === 0 ? 3 : 5, ...opts }).run();
}
