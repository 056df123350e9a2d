// The consumer protocol: what consumers put in the opaque `metadata` of
// JoinGroup and the `assignment` of SyncGroup (src/protocol/apis/groups.ts).
// The broker looks inside only for OffsetDelete (which topics a group
// consumes); consumers and the group admin (DescribeGroups) read these bytes.
//
// The encoding is Kafka's ConsumerProtocol, byte for byte, so a Sluice
// consumer, a Java or KafkaJS consumer and librdkafka can share one group and
// agree on an assignor by name ('range', 'roundrobin', 'cooperative-sticky'):
// an int16 version, then (big-endian; strings int16-length UTF-8, arrays and
// bytes int32-length, -1 for null)
//
//   subscription v0: topics [string], userData bytes (nullable)
//                v1+: ownedPartitions [topic string, partitions [int32]]
//                v2+: generationId int32 (-1 none)   v3+: rackId string (nullable)
//   assignment   v0+: assignedPartitions [topic string, partitions [int32]], userData bytes (nullable)
//
// A newer version than this code knows is read as the newest it knows (later
// versions only append fields), as Kafka's clients do.
//
// Invariants: encode then decode returns an equal value; decoding never
// throws anything but a SluiceError (INCONSISTENT_GROUP_PROTOCOL: a member
// speaks something else), because the bytes come from other processes.
// Plain DataView code, no Buffer: the browser client uses it too.

import { Errors, SluiceError } from '../util/errors.js';

/** JoinGroup's protocolType for consumers. */
export const CONSUMER_PROTOCOL_TYPE = 'consumer';
/** The newest version of Kafka's ConsumerProtocol this code reads and writes. */
export const CONSUMER_PROTOCOL_VERSION = 3;

export interface TopicPartitions {
  readonly topic: string;
  readonly partitions: readonly number[];
}

export interface Subscription {
  readonly version: number;
  readonly topics: readonly string[];
  /** Partitions the member holds now (cooperative rebalancing keeps them across a rebalance). */
  readonly ownedPartitions: readonly TopicPartitions[];
  /** The generation in which the member was given ownedPartitions; -1 when it has none. */
  readonly generationId: number;
  readonly userData: Uint8Array | null;
  /** The member's rack (v3+, for rack-aware assignors); null when unknown. */
  readonly rackId?: string | null;
}

export interface Assignment {
  readonly version: number;
  readonly partitions: readonly TopicPartitions[];
  readonly userData: Uint8Array | null;
}

/** Bytes of a member's subscription, for JoinGroup (at `version`, default the newest). */
export function encodeSubscription(s: Omit<Subscription, 'version'> & { version?: number }): Uint8Array {
  const version = s.version ?? CONSUMER_PROTOCOL_VERSION;
  const w = new Out();
  w.int16(version);
  w.array(s.topics, (t) => w.string(t));
  w.bytes(s.userData);
  if (version >= 1) w.array(s.ownedPartitions, (tp) => w.topicPartitions(tp));
  if (version >= 2) w.int32(s.generationId);
  if (version >= 3) w.string(s.rackId ?? null);
  return w.done();
}

/** Bytes of one member's assignment, for SyncGroup. */
export function encodeAssignment(a: Omit<Assignment, 'version'> & { version?: number }): Uint8Array {
  const w = new Out();
  w.int16(a.version ?? CONSUMER_PROTOCOL_VERSION);
  w.array(a.partitions, (tp) => w.topicPartitions(tp));
  w.bytes(a.userData);
  return w.done();
}

export function decodeSubscription(bytes: Uint8Array): Subscription {
  const r = new In(bytes, 'subscription');
  const version = r.version();
  const topics = r.array(() => r.string(false)!);
  const userData = r.bytes();
  // KafkaJS labels its v0 layout version 1: fields a version adds but the bytes end before read as absent.
  const more = (since: number): boolean => version >= since && r.left() > 0;
  const ownedPartitions = more(1) ? r.array(() => r.topicPartitions()) : [];
  const generationId = more(2) ? r.int32() : -1;
  const rackId = more(3) ? r.string(true) : null;
  return { version, topics, ownedPartitions, generationId, userData, rackId };
}

/**
 * A member's assignment. Empty bytes are an empty assignment: a coordinator
 * answers a member the leader gave nothing (or that joined late) that way.
 */
export function decodeAssignment(bytes: Uint8Array): Assignment {
  if (bytes.length === 0) return { version: CONSUMER_PROTOCOL_VERSION, partitions: [], userData: null };
  const r = new In(bytes, 'assignment');
  const version = r.version();
  const partitions = r.array(() => r.topicPartitions());
  // KafkaJS and old clients may stop before userData: absent reads as null.
  const userData = r.left() > 0 ? r.bytes() : null;
  return { version, partitions, userData };
}

// ---------------------------------------------------------------- codec

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });
const INT16_MAX = 0x7fff;

class Out {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;

  private fixed(n: number, put: (v: DataView) => void): void {
    const b = new Uint8Array(n);
    put(new DataView(b.buffer));
    this.raw(b);
  }

  private raw(b: Uint8Array): void {
    this.chunks.push(b);
    this.size += b.length;
  }

  int16(v: number): void {
    this.fixed(2, (d) => d.setInt16(0, v));
  }

  int32(v: number): void {
    this.fixed(4, (d) => d.setInt32(0, v));
  }

  string(v: string | null): void {
    if (v === null) return this.int16(-1);
    const b = utf8Encoder.encode(v);
    if (b.length > INT16_MAX) throw new SluiceError(Errors.INVALID_REQUEST, `consumer protocol string of ${b.length} bytes is over ${INT16_MAX}`);
    this.int16(b.length);
    this.raw(b);
  }

  bytes(v: Uint8Array | null): void {
    if (v === null) return this.int32(-1);
    this.int32(v.length);
    this.raw(v);
  }

  array<T>(items: readonly T[], put: (item: T) => void): void {
    this.int32(items.length);
    for (const item of items) put(item);
  }

  topicPartitions(tp: TopicPartitions): void {
    this.string(tp.topic);
    this.array(tp.partitions, (p) => this.int32(p));
  }

  done(): Uint8Array {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

class In {
  private at = 0;
  private readonly view: DataView;

  constructor(private readonly b: Uint8Array, private readonly what: string) {
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }

  private bad(want: string): SluiceError {
    return new SluiceError(Errors.INCONSISTENT_GROUP_PROTOCOL, `malformed consumer protocol ${this.what} at byte ${this.at}: ${want}`);
  }

  left(): number {
    return this.b.length - this.at;
  }

  private need(n: number): void {
    if (n > this.left()) throw this.bad(`${n} bytes needed, ${this.left()} left`);
  }

  version(): number {
    const v = this.int16();
    if (v < 0) throw this.bad(`version ${v}`);
    return v;
  }

  int16(): number {
    this.need(2);
    const v = this.view.getInt16(this.at);
    this.at += 2;
    return v;
  }

  int32(): number {
    this.need(4);
    const v = this.view.getInt32(this.at);
    this.at += 4;
    return v;
  }

  string(nullable: boolean): string | null {
    const n = this.int16();
    if (n < 0) {
      if (!nullable) throw this.bad('a null string');
      return null;
    }
    this.need(n);
    let s: string;
    try {
      s = utf8Decoder.decode(this.b.subarray(this.at, this.at + n));
    } catch {
      throw this.bad('a string that is not UTF-8');
    }
    this.at += n;
    return s;
  }

  bytes(): Uint8Array | null {
    const n = this.int32();
    if (n < 0) return null;
    this.need(n);
    const v = this.b.slice(this.at, this.at + n);
    this.at += n;
    return v;
  }

  array<T>(read: () => T): T[] {
    const n = this.int32();
    // Every element takes at least one byte: a count beyond the bytes left is a lie, refused before allocating.
    if (n < 0 || n > this.left()) throw this.bad(`an array of ${n} elements`);
    const out: T[] = [];
    for (let i = 0; i < n; i++) out.push(read());
    return out;
  }

  topicPartitions(): TopicPartitions {
    const topic = this.string(false)!;
    const partitions = this.array(() => this.int32());
    if (partitions.some((p) => p < 0)) throw this.bad(`a negative partition of ${topic}`);
    return { topic, partitions };
  }
}
