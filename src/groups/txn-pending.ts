// Transactional offset commits of one __consumer_offsets partition that are
// not yet ended (Kafka's pendingTransactionalOffsetCommits): a producer's
// TxnOffsetCommit records are in the log, but only its COMMIT marker makes
// them committed offsets; an ABORT marker drops them. Pure: the coordinator
// feeds it what the log says (live appends and markers) and the loader feeds
// it the same things read back from the log, so a reload and the live path
// reach the same state by the same code.
//
// Invariants:
// - A pending offset is a record already in the log (its logOffset), of a
//   producer whose marker this partition has not seen after that record.
//   One per (producer, group, topic, partition): a later record of the same
//   transaction replaces an earlier one.
// - A marker of producer P at offset M ends every pending offset of P
//   written before M. A record of P written after M belongs to P's next
//   transaction and stays pending.
// - A TxnOffsetCommit in flight (being verified, written, not yet
//   acknowledged) counts as unstable for OffsetFetch requireStable. A marker
//   that lands meanwhile is remembered until it is answered: one that lands
//   during the verification makes the commit retry (the transaction that was
//   confirmed may be the one the marker ended); a record the marker covers
//   (its offset below the marker's) is ended by it, not left pending.
// Bounded: pending offsets are one per key per producer; the remembered
// markers only while that producer has an append in flight.

import type { GroupOffsets, StoredOffset } from './loader.js';

export interface TxnOffsetKey {
  readonly groupId: string;
  readonly topic: string;
  readonly partition: number;
}

/** A transactional offset a COMMIT marker made committed. */
export interface EndedTxnOffset extends TxnOffsetKey {
  readonly value: StoredOffset;
}

export interface MarkerOutcome {
  /** Offsets to store as committed (in their log order; a committed offset later in the log still wins). */
  readonly committed: EndedTxnOffset[];
  /** Groups whose pending offsets changed (committed or dropped). */
  readonly groups: ReadonlySet<string>;
}

/** One TxnOffsetCommit from its verification to the answer of its append. */
export interface InFlightAppend {
  readonly producerId: number;
  readonly keys: readonly TxnOffsetKey[];
  /** How many of the producer's markers were remembered when it started. */
  readonly markersAtStart: number;
}

interface ProducerFlights {
  count: number;
  /** Markers of the producer that landed while it had appends in flight, in log order. */
  readonly markers: Array<{ readonly offset: number; readonly committed: boolean }>;
}

function partitionKey(k: TxnOffsetKey): string {
  return JSON.stringify([k.groupId, k.topic, k.partition]);
}

/** How many times each name is held: what requireStable and group deletion ask, answered without walking every producer. */
class Counts {
  private readonly n = new Map<string, number>();

  up(name: string): void {
    this.n.set(name, (this.n.get(name) ?? 0) + 1);
  }

  down(name: string): void {
    const left = (this.n.get(name) ?? 0) - 1;
    if (left > 0) this.n.set(name, left);
    else this.n.delete(name);
  }

  has(name: string): boolean {
    return this.n.has(name);
  }
}

export class PendingTxnOffsets {
  /** producerId → groupId → topic → partition → pending offset. */
  private readonly byProducer = new Map<number, Map<string, GroupOffsets>>();
  private readonly flights = new Map<number, ProducerFlights>();
  /** partitionKey → pending offsets (one per producer) plus commits in flight that write it. */
  private readonly unstable = new Counts();
  /** groupId → pending offsets plus partitions of commits in flight. */
  private readonly groupsHeld = new Counts();

  /** A transactional offset record of `producerId` at value.logOffset (the loader; the live path after an append). */
  add(producerId: number, key: TxnOffsetKey, value: StoredOffset): void {
    let groups = this.byProducer.get(producerId);
    if (!groups) this.byProducer.set(producerId, (groups = new Map()));
    let topics = groups.get(key.groupId);
    if (!topics) groups.set(key.groupId, (topics = new Map()));
    let partitions = topics.get(key.topic);
    if (!partitions) topics.set(key.topic, (partitions = new Map()));
    const have = partitions.get(key.partition);
    if (!have) this.hold(key);
    if (!have || have.logOffset < value.logOffset) partitions.set(key.partition, value);
  }

  private hold(key: TxnOffsetKey): void {
    this.unstable.up(partitionKey(key));
    this.groupsHeld.up(key.groupId);
  }

  private release(key: TxnOffsetKey): void {
    this.unstable.down(partitionKey(key));
    this.groupsHeld.down(key.groupId);
  }

  /** A COMMIT (committed) or ABORT marker of `producerId` at `offset`. */
  marker(producerId: number, offset: number, committed: boolean): MarkerOutcome {
    const flights = this.flights.get(producerId);
    if (flights) flights.markers.push({ offset, committed });
    const out: EndedTxnOffset[] = [];
    const groups = new Set<string>();
    const pending = this.byProducer.get(producerId);
    if (!pending) return { committed: out, groups };
    for (const [groupId, topics] of pending) {
      for (const [topic, partitions] of topics) {
        for (const [partition, value] of partitions) {
          if (value.logOffset >= offset) continue;
          partitions.delete(partition);
          this.release({ groupId, topic, partition });
          groups.add(groupId);
          if (committed) out.push({ groupId, topic, partition, value });
        }
        if (partitions.size === 0) topics.delete(topic);
      }
      if (topics.size === 0) pending.delete(groupId);
    }
    if (pending.size === 0) this.byProducer.delete(producerId);
    out.sort((a, b) => a.value.logOffset - b.value.logOffset);
    return { committed: out, groups };
  }

  /** Marks `keys` unstable until finish() says how the commit went. */
  start(producerId: number, keys: readonly TxnOffsetKey[]): InFlightAppend {
    let flights = this.flights.get(producerId);
    if (!flights) this.flights.set(producerId, (flights = { count: 0, markers: [] }));
    flights.count++;
    for (const k of keys) this.hold(k);
    return { producerId, keys, markersAtStart: flights.markers.length };
  }

  /** Whether a marker of the producer landed since `append` started. */
  markerSinceStart(append: InFlightAppend): boolean {
    return (this.flights.get(append.producerId)?.markers.length ?? 0) > append.markersAtStart;
  }

  /**
   * The append's answer: `baseOffset` where its records landed and what they
   * hold (each value's logOffset its record's), or null when nothing was
   * appended or the append failed. A marker that landed after the records
   * while the append was in flight ends them now; otherwise they stay pending.
   */
  finish(append: InFlightAppend, landed: { readonly baseOffset: number; readonly values: readonly EndedTxnOffset[] } | null): MarkerOutcome {
    const flights = this.flights.get(append.producerId);
    for (const k of append.keys) this.release(k);
    const ended = landed ? flights?.markers.find((m) => m.offset > landed.baseOffset) : undefined;
    if (flights && --flights.count === 0) this.flights.delete(append.producerId);
    const none: MarkerOutcome = { committed: [], groups: new Set() };
    if (!landed) return none;
    const values = landed.values;
    if (!ended) {
      for (const v of values) this.add(append.producerId, v, v.value);
      return none;
    }
    return { committed: ended.committed ? [...values] : [], groups: new Set(values.map((v) => v.groupId)) };
  }

  /** Whether a transaction of any producer holds an offset of the partition not yet ended (requireStable). */
  isUnstable(groupId: string, topic: string, partition: number): boolean {
    return this.unstable.has(partitionKey({ groupId, topic, partition }));
  }

  /** Whether the group has offsets in a transaction not yet ended (then it is not forgotten, nor deleted). */
  hasPending(groupId: string): boolean {
    return this.groupsHeld.has(groupId);
  }

  /** Groups with pending offsets (a loaded shard keeps an entry for each, as the live path made one). */
  groupIds(): Set<string> {
    const out = new Set<string>();
    for (const groups of this.byProducer.values()) for (const groupId of groups.keys()) out.add(groupId);
    return out;
  }

  /** Producers with pending offsets (tests, logs). */
  get openProducers(): number[] {
    return [...this.byProducer.keys()].sort((a, b) => a - b);
  }

  /** The pending offsets of one producer (tests, describe). */
  pendingOf(producerId: number): ReadonlyMap<string, GroupOffsets> {
    return this.byProducer.get(producerId) ?? new Map();
  }
}
