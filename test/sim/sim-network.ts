// The simulated network between Raft nodes. It decides the fate of every
// message — dropped, delivered once, or duplicated — and how long each copy
// takes; reordering falls out of independent random delays. Partitions are a
// set of cut directed links: a symmetric partition cuts both directions, a
// one-way cut only one. A cut is checked when a message is sent and again when
// it would be delivered, so a partition also loses what was in flight.
//
// Messages cross the network serialized (msgpackr) and are decoded afresh for
// each delivered copy, so nodes never share object references and anything
// that does not survive the wire (a Map, a class instance) shows up in tests.

import { Packr } from 'msgpackr';
import type { Message, NodeId } from '../../src/raft/types.js';
import type { Rng } from '../../src/util/rng.js';

export interface NetworkFaults {
  /** Probability that a message is lost. */
  readonly dropRate: number;
  /** Probability that a delivered message is delivered twice. */
  readonly duplicateRate: number;
  /** Usual one-way delay, uniform in [delayMinMs, delayMaxMs]. */
  readonly delayMinMs: number;
  readonly delayMaxMs: number;
  /** Probability of a long-tail delay, uniform in (delayMaxMs, tailMaxMs]. */
  readonly tailRate: number;
  readonly tailMaxMs: number;
  /**
   * Deliver in send order on each link (as TCP/WebSocket do); otherwise
   * independent delays reorder messages.
   */
  readonly fifo?: boolean;
}

/** A healthy network: no loss, short delays, per-link FIFO (the heal phase runs on it). */
export const CALM_NETWORK: NetworkFaults = {
  dropRate: 0,
  duplicateRate: 0,
  delayMinMs: 1,
  delayMaxMs: 3,
  tailRate: 0,
  tailMaxMs: 3,
  fifo: true,
};

const packr = new Packr({ useRecords: false, moreTypes: false });

export function encodeMessage(m: Message): Uint8Array {
  return packr.pack(m);
}

export function decodeMessage(b: Uint8Array): Message {
  return packr.unpack(b) as Message;
}

export class SimNetwork {
  private faults: NetworkFaults;
  /** Cut directed links, keyed by linkKey(from, to). */
  private readonly cuts = new Set<number>();
  /** FIFO mode: the latest arrival time scheduled on each link. */
  private readonly lastArrivalMs = new Map<number, number>();

  constructor(
    private readonly rng: Rng,
    faults: NetworkFaults = CALM_NETWORK,
  ) {
    this.faults = faults;
  }

  setFaults(faults: NetworkFaults): void {
    this.faults = faults;
  }

  getFaults(): NetworkFaults {
    return this.faults;
  }

  /**
   * The delays (ms, from `nowMs`) of the copies of one message from `from` to
   * `to`: empty if it is lost, two entries if it is duplicated.
   */
  plan(from: NodeId, to: NodeId, nowMs = 0): number[] {
    if (this.isCut(from, to)) return [];
    const f = this.faults;
    if (f.dropRate > 0 && this.rng.chance(f.dropRate)) return [];
    const delays = [this.delay()];
    if (f.duplicateRate > 0 && this.rng.chance(f.duplicateRate)) delays.push(this.delay());
    return f.fifo ? delays.map((d) => this.inOrder(linkKey(from, to), nowMs, d)) : delays;
  }

  /** Delays a message so it arrives no earlier than the previous one on its link. */
  private inOrder(link: number, nowMs: number, delayMs: number): number {
    const at = Math.max(nowMs + delayMs, this.lastArrivalMs.get(link) ?? 0);
    this.lastArrivalMs.set(link, at);
    return at - nowMs;
  }

  private delay(): number {
    const f = this.faults;
    if (f.tailRate > 0 && f.tailMaxMs > f.delayMaxMs && this.rng.chance(f.tailRate)) {
      return this.rng.range(f.delayMaxMs + 1, f.tailMaxMs);
    }
    return this.rng.range(f.delayMinMs, f.delayMaxMs);
  }

  isCut(from: NodeId, to: NodeId): boolean {
    return this.cuts.has(linkKey(from, to));
  }

  /** One-way cut: messages from `from` to `to` are lost; the reverse direction still works. */
  cut(from: NodeId, to: NodeId): void {
    if (from !== to) this.cuts.add(linkKey(from, to));
  }

  cutBoth(a: NodeId, b: NodeId): void {
    this.cut(a, b);
    this.cut(b, a);
  }

  /** Symmetric partition: no message crosses between the two groups. */
  partition(groupA: readonly NodeId[], groupB: readonly NodeId[]): void {
    for (const a of groupA) for (const b of groupB) this.cutBoth(a, b);
  }

  /** Cuts `node` off from every node in `all` (both directions). */
  isolate(node: NodeId, all: readonly NodeId[]): void {
    this.partition([node], all.filter((n) => n !== node));
  }

  heal(): void {
    this.cuts.clear();
  }

  get cutCount(): number {
    return this.cuts.size;
  }

  describeCuts(): string {
    return [...this.cuts].map((k) => `${Math.floor(k / LINK_BASE)}->${k % LINK_BASE}`).join(' ');
  }
}

const LINK_BASE = 1 << 16;

function linkKey(from: NodeId, to: NodeId): number {
  return from * LINK_BASE + to;
}
