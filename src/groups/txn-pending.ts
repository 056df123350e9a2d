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
// - An append still in flight (written, not yet acknowledged) counts as
//   unstable for OffsetFetch requireStable. A marker that lands while it is
//   in flight is remembered until it is answered, so a record the marker
//   covers (its offset below the marker's) is ended by it, not left pending.
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

/** One TxnOffsetCommit append between its write and its answer. */
export interface InFlightAppend {
  readonly producerId: number;
  readonly keys: readonly TxnOffsetKey[];
}

interface ProducerFlights {
  count: number;
  /** Markers of the producer that landed while it had appends in flight, in log order. */
  readonly markers: Array<{ readonly offset: number; readonly committed: boolean }>;
}

function flightKey(k: TxnOffsetKey): string {
  return JSON.stringify([k.groupId, k.topic, k.partition]);
}

export class PendingTxnOffsets {
  /** producerId → groupId → topic → partition → pending offset. */
  private readonly byProducer = new Map<number, Map<string, GroupOffsets>>();
  private readonly flights = new Map<number, ProducerFlights>();
  /** flightKey → appends in flight that write it. */
  private readonly inFlightKeys = new Map<string, number>();

  /** A transactional offset record of `producerId` at value.logOffset (the loader; the live path after an append). */
  add(producerId: number, key: TxnOffsetKey, value: StoredOffset): void {
    let groups = this.byProducer.get(producerId);
    if (!groups) this.byProducer.set(producerId, (groups = new Map()));
    let topics = groups.get(key.groupId);
    if (!topics) groups.set(key.groupId, (topics = new Map()));
    let partitions = topics.get(key.topic);
    if (!partitions) topics.set(key.topic, (partitions = new Map()));
    const have = partitions.get(key.partition);
    if (!have || have.logOffset < value.logOffset) partitions.set(key.partition, value);
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

  /** Marks `keys` unstable until finish() says how the append went. */
  start(producerId: number, keys: readonly TxnOffsetKey[]): InFlightAppend {
    let flights = this.flights.get(producerId);
    if (!flights) this.flights.set(producerId, (flights = { count: 0, markers: [] }));
    flights.count++;
    for (const k of keys) this.inFlightKeys.set(flightKey(k), (this.inFlightKeys.get(flightKey(k)) ?? 0) + 1);
    return { producerId, keys };
  }

  /**
   * The append's answer: `baseOffset` where its records landed (record i at
   * baseOffset + i, values in the order of its keys), or null when it failed.
   * A marker that landed after the records while the append was in flight
   * ends them now; otherwise they stay pending.
   */
  finish(append: InFlightAppend, landed: { readonly baseOffset: number; readonly values: readonly StoredOffset[] } | null): MarkerOutcome {
    const flights = this.flights.get(append.producerId);
    for (const k of append.keys) {
      const key = flightKey(k);
      const n = (this.inFlightKeys.get(key) ?? 1) - 1;
      if (n === 0) this.inFlightKeys.delete(key);
      else this.inFlightKeys.set(key, n);
    }
    const ended = landed ? flights?.markers.find((m) => m.offset > landed.baseOffset) : undefined;
    if (flights && --flights.count === 0) this.flights.delete(append.producerId);
    const none: MarkerOutcome = { committed: [], groups: new Set() };
    if (!landed) return none;
    const values = append.keys.map((k, i) => ({ ...k, value: landed.values[i]! }));
    if (!ended) {
      for (const v of values) this.add(append.producerId, v, v.value);
      return none;
    }
    return { committed: ended.committed ? values : [], groups: new Set(values.map((v) => v.groupId)) };
  }

  /** Whether a transaction of any producer holds an offset of the partition not yet ended (requireStable). */
  isUnstable(groupId: string, topic: string, partition: number): boolean {
    if (this.inFlightKeys.has(flightKey({ groupId, topic, partition }))) return true;
    for (const groups of this.byProducer.values()) if (groups.get(groupId)?.get(topic)?.has(partition)) return true;
    return false;
  }

  /** Whether the group has offsets in a transaction not yet ended (then it is not forgotten, nor deleted). */
  hasPending(groupId: string): boolean {
    for (const groups of this.byProducer.values()) if (groups.has(groupId)) return true;
    for (const key of this.inFlightKeys.keys()) if ((JSON.parse(key) as [string])[0] === groupId) return true;
    return false;
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
