// A tiny synchronous harness for Raft unit tests: N Raft instances, an
// in-memory "disk" per node that follows the Ready contract, a toy state
// machine (the list of applied entries), and a network that delivers
// messages synchronously in FIFO order unless a filter drops them. No
// timers: time moves only when a test ticks; randomness is a SeededRng.
//
// After every settle() it checks two safety invariants: at most one leader
// per term (election safety) and that all state machines applied the same
// entries at the same indexes (state machine safety).

import { expect } from 'chai';
import { Raft } from '../../src/raft/raft.js';
import {
  DEFAULT_RAFT_CONFIG, EntryType,
  type Entry, type HardState, type Membership, type Message, type NodeId, type RaftConfig,
  type ReadState, type Ready, type Snapshot,
} from '../../src/raft/types.js';
import { SeededRng, type Rng } from '../../src/util/rng.js';

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
export const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

export interface Applied {
  readonly index: number;
  readonly term: number;
  readonly type: EntryType;
  readonly data: string;
}

/** What a node's "disk" holds: exactly what the Ready contract says to persist. */
export class Disk {
  hardState: HardState = { term: 0, vote: 0, commit: 0 };
  entries: Entry[] = [];
  snapshot: Snapshot | undefined;

  persist(rd: Ready): void {
    if (rd.snapshot) {
      this.snapshot = rd.snapshot;
      this.entries = [];
    }
    for (const e of rd.entries) {
      const at = this.entries.findIndex((x) => x.index >= e.index);
      if (at >= 0) this.entries.length = at;
      const last = this.entries.at(-1)?.index ?? this.snapshot?.meta.index ?? 0;
      expect(e.index, 'persisted entries must be contiguous').to.equal(last + 1);
      this.entries.push(e);
    }
    if (rd.hardState) this.hardState = rd.hardState;
  }
}

export class TestNode {
  raft!: Raft;
  readonly disk = new Disk();
  applied: Applied[] = [];
  readStates: ReadState[] = [];
  snapshotsInstalled = 0;
  down = false;

  constructor(
    readonly id: NodeId,
    readonly config: RaftConfig,
    readonly bootstrap: Membership,
    private readonly seed: number,
  ) {
    this.boot();
  }

  /** (Re)creates the Raft instance from the disk, as a restarted process would. */
  boot(): void {
    const snap = this.disk.snapshot;
    this.applied = snap ? (JSON.parse(dec(snap.data)) as Applied[]) : [];
    this.raft = new Raft(this.config, {
      hardState: this.disk.hardState,
      ...(snap ? { snapshotMeta: snap.meta, snapshotData: snap.data } : {}),
      entries: [...this.disk.entries],
      bootstrapMembership: this.bootstrap,
      applied: snap?.meta.index ?? 0,
    }, new SeededRng(this.seed));
  }

  appliedIndex(): number {
    return this.applied.at(-1)?.index ?? this.disk.snapshot?.meta.index ?? 0;
  }

  /** Normal entries' payloads, in apply order. */
  values(): string[] {
    return this.applied.filter((a) => a.type === EntryType.Normal).map((a) => a.data);
  }

  /** Handles one Ready following the contract; returns its messages. */
  handleReady(): { rd: Ready; messages: readonly Message[] } {
    const rd = this.raft.ready();
    this.disk.persist(rd);
    if (rd.snapshot) {
      this.applied = JSON.parse(dec(rd.snapshot.data)) as Applied[];
      this.snapshotsInstalled++;
    }
    for (const e of rd.committedEntries) {
      expect(e.index, `node ${this.id} applies in order, exactly once`).to.equal(this.appliedIndex() + 1);
      this.applied.push({ index: e.index, term: e.term, type: e.type, data: dec(e.data) });
    }
    this.readStates.push(...rd.readStates);
    this.raft.advance(rd);
    return { rd, messages: rd.messages };
  }

  /** Snapshots the state machine at its applied index and compacts the log. */
  compact(): Snapshot {
    const index = this.appliedIndex();
    const snap: Snapshot = {
      meta: { index, term: this.raft.termAt(index)!, membership: this.raft.membershipAt(index) },
      data: enc(JSON.stringify(this.applied)),
    };
    this.raft.compact(snap);
    this.disk.snapshot = snap;
    this.disk.entries = this.disk.entries.filter((e) => e.index > index);
    return snap;
  }
}

export interface ClusterOptions {
  readonly voters: readonly NodeId[];
  readonly observers?: readonly NodeId[];
  /** Nodes that exist but are not in the initial membership (to be added later). */
  readonly spares?: readonly NodeId[];
  readonly config?: Partial<Omit<RaftConfig, 'id'>>;
  readonly seed?: number;
}

export type Filter = (m: Message) => boolean;
/** Rewrites a message in flight (a test's scalpel: e.g. strip some entries from an append). */
export type Rewrite = (m: Message) => Message;

/** A lossy, reordering, duplicating network (seeded). */
export interface Chaos {
  readonly rng: Rng;
  readonly dropRate: number;
  readonly dupRate: number;
  readonly reorder: boolean;
}

export class Cluster {
  readonly nodes = new Map<NodeId, TestNode>();
  chaos: Chaos | undefined;
  /** Every message delivered, in order (tests count them). */
  readonly delivered: Message[] = [];
  private filters: Filter[] = [];
  private rewrites: Rewrite[] = [];
  private queue: Message[] = [];
  private readonly leaders = new Map<number, NodeId>();

  constructor(opts: ClusterOptions) {
    const membership: Membership = { voters: [...opts.voters], observers: [...(opts.observers ?? [])] };
    const ids = [...opts.voters, ...(opts.observers ?? []), ...(opts.spares ?? [])];
    for (const id of ids) {
      const config: RaftConfig = { ...DEFAULT_RAFT_CONFIG, ...opts.config, id };
      this.nodes.set(id, new TestNode(id, config, membership, (opts.seed ?? 1) * 1000 + id));
    }
  }

  node(id: NodeId): TestNode {
    const n = this.nodes.get(id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  raft(id: NodeId): Raft {
    return this.node(id).raft;
  }

  /** Drop every message for which `f` returns true (until heal()). */
  addFilter(f: Filter): void {
    this.filters.push(f);
  }

  addRewrite(f: Rewrite): void {
    this.rewrites.push(f);
  }

  isolate(id: NodeId): void {
    this.addFilter((m) => m.from === id || m.to === id);
  }

  /** Only messages within one group get through. */
  partition(...groups: NodeId[][]): void {
    const groupOf = (id: NodeId): number => groups.findIndex((g) => g.includes(id));
    this.addFilter((m) => groupOf(m.from) !== groupOf(m.to));
  }

  heal(): void {
    this.filters = [];
    this.rewrites = [];
  }

  /** Replaces node `id`'s disk with a log and term, and restarts it (divergent-log scenarios). */
  load(id: NodeId, entries: Entry[], term: number, commit = 0): void {
    const n = this.node(id);
    n.disk.entries = entries;
    n.disk.hardState = { term, vote: 0, commit };
    n.boot();
  }

  crash(id: NodeId): void {
    this.node(id).down = true;
  }

  restart(id: NodeId): void {
    const n = this.node(id);
    n.down = false;
    n.boot();
  }

  /** Runs Ready cycles and delivers messages until nothing moves. */
  settle(maxRounds = 10_000): void {
    for (let round = 0; round < maxRounds; round++) {
      let moved = false;
      for (const n of this.nodes.values()) {
        if (n.down || !n.raft.hasReady()) continue;
        moved = true;
        this.queue.push(...n.handleReady().messages);
      }
      const batch = this.queue.splice(0);
      if (this.chaos?.reorder) shuffle(batch, this.chaos.rng);
      for (const m of batch) {
        moved = true;
        if (this.chaos?.rng.chance(this.chaos.dropRate)) continue;
        if (this.chaos?.rng.chance(this.chaos.dupRate)) this.queue.push(m);
        this.deliver(m);
      }
      if (!moved) {
        this.checkInvariants();
        return;
      }
    }
    throw new Error('cluster did not settle');
  }

  private deliver(sent: Message): void {
    const to = this.nodes.get(sent.to);
    if (!to || to.down || this.nodes.get(sent.from)?.down) return;
    if (this.filters.some((f) => f(sent))) return;
    const m = this.rewrites.reduce((x, f) => f(x), sent);
    this.delivered.push(m);
    to.raft.step(m);
  }

  /** Ticks every live node (or those given) `n` times, settling after each tick. */
  tick(n = 1, ids?: readonly NodeId[]): void {
    for (let i = 0; i < n; i++) {
      for (const node of this.nodes.values()) {
        if (!node.down && (!ids || ids.includes(node.id))) node.raft.tick();
      }
      this.settle();
    }
  }

  /** Ticks until `cond` holds; fails the test after `maxTicks`. */
  tickUntil(cond: () => boolean, maxTicks = 500, what = 'condition'): void {
    for (let i = 0; i < maxTicks; i++) {
      if (cond()) return;
      this.tick();
    }
    if (!cond()) throw new Error(`timed out waiting for ${what}`);
  }

  /** The unique live leader with the highest term, if any. */
  leader(): NodeId | undefined {
    let best: { id: NodeId; term: number } | undefined;
    for (const n of this.nodes.values()) {
      if (n.down) continue;
      const s = n.raft.status();
      if (s.role === 'leader' && (!best || s.term > best.term)) best = { id: n.id, term: s.term };
    }
    return best?.id;
  }

  /** Campaigns `id` and settles; asserts it became leader. */
  elect(id: NodeId): void {
    this.raft(id).campaign();
    this.settle();
    expect(this.raft(id).status().role, `node ${id} should lead`).to.equal('leader');
  }

  propose(id: NodeId, value: string): number {
    const r = this.raft(id).propose(enc(value));
    if (!r.ok) throw new Error(`proposal refused: ${r.reason}`);
    return r.index;
  }

  checkInvariants(): void {
    for (const n of this.nodes.values()) {
      const s = n.raft.status();
      if (s.role !== 'leader') continue;
      const prev = this.leaders.get(s.term);
      expect(prev === undefined || prev === n.id, `two leaders in term ${s.term}: ${prev} and ${n.id}`).to.equal(true);
      this.leaders.set(s.term, n.id);
    }
    const byIndex = new Map<number, Applied>();
    for (const n of this.nodes.values()) {
      for (const a of n.applied) {
        const other = byIndex.get(a.index);
        if (other) expect(a, `state machines disagree at index ${a.index} (node ${n.id})`).to.deep.equal(other);
        else byIndex.set(a.index, a);
      }
    }
  }
}

/** A Raft instance driven by hand: feed it messages, read what it sends. */
export function soloRaft(id: NodeId, membership: Membership, opts: {
  config?: Partial<Omit<RaftConfig, 'id'>>;
  entries?: Entry[];
  term?: number;
  commit?: number;
} = {}): Raft {
  return new Raft({ ...DEFAULT_RAFT_CONFIG, ...opts.config, id }, {
    hardState: { term: opts.term ?? 0, vote: 0, commit: opts.commit ?? 0 },
    entries: opts.entries ?? [],
    bootstrapMembership: membership,
    applied: 0,
  }, new SeededRng(id));
}

/** Drains a hand-driven instance: returns its messages (and advances). */
export function drain(raft: Raft): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < 100 && raft.hasReady(); i++) {
    const rd = raft.ready();
    out.push(...rd.messages);
    raft.advance(rd);
  }
  return out;
}

export function entry(index: number, term: number, type = EntryType.Normal, data = enc(`e${index}t${term}`)): Entry {
  return { index, term, type, data };
}

/** A log with the given terms at indexes 1, 2, ... */
export function logWithTerms(terms: readonly number[]): Entry[] {
  return terms.map((t, i) => entry(i + 1, t));
}

function shuffle<T>(xs: T[], rng: Rng): void {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
}
