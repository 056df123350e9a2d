// The consumer protocol: what consumers put in the opaque `metadata` of
// JoinGroup and the `assignment` of SyncGroup (src/protocol/apis/groups.ts).
// The broker never looks inside; only consumers (and the group admin, which
// decodes assignments for DescribeGroups) read these bytes.
//
//   subscription { version, topics: [string], ownedPartitions: [{ topic, partitions: [int] }],
//                  generationId (the generation ownedPartitions come from; -1 none), userData: bin|null }
//   assignment   { version, partitions: [{ topic, partitions: [int] }], userData: bin|null }
//
// Both are msgpack maps (plain maps, no msgpackr records, like the frames),
// so another client can speak the protocol with any msgpack library. Newer
// versions may add fields: decoding ignores fields it does not know.
//
// Invariants: encode then decode returns an equal value; decoding never
// throws anything but a SluiceError (INCONSISTENT_GROUP_PROTOCOL: a member
// speaks something else), because the bytes come from other processes.

import { Packr } from 'msgpackr';
import { Errors, SluiceError } from '../util/errors.js';

/** JoinGroup's protocolType for consumers. */
export const CONSUMER_PROTOCOL_TYPE = 'consumer';
export const CONSUMER_PROTOCOL_VERSION = 0;

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
}

export interface Assignment {
  readonly version: number;
  readonly partitions: readonly TopicPartitions[];
  readonly userData: Uint8Array | null;
}

const packr = new Packr({ useRecords: false, moreTypes: false, variableMapSize: true, encodeUndefinedAsNil: true });

/** Bytes of a member's subscription, for JoinGroup. */
export function encodeSubscription(s: Omit<Subscription, 'version'> & { version?: number }): Buffer {
  return packr.pack({
    version: s.version ?? CONSUMER_PROTOCOL_VERSION,
    topics: [...s.topics],
    ownedPartitions: s.ownedPartitions.map(plainTopicPartitions),
    generationId: s.generationId,
    userData: s.userData,
  });
}

/** Bytes of one member's assignment, for SyncGroup. */
export function encodeAssignment(a: Omit<Assignment, 'version'> & { version?: number }): Buffer {
  return packr.pack({ version: a.version ?? CONSUMER_PROTOCOL_VERSION, partitions: a.partitions.map(plainTopicPartitions), userData: a.userData });
}

export function decodeSubscription(bytes: Uint8Array): Subscription {
  const m = unpackMap(bytes, 'subscription');
  return {
    version: intField(m, 'version', 'subscription'),
    topics: stringList(m.topics, 'subscription.topics'),
    ownedPartitions: topicPartitionsList(m.ownedPartitions ?? [], 'subscription.ownedPartitions'),
    generationId: m.generationId === undefined ? -1 : intField(m, 'generationId', 'subscription'),
    userData: binOrNull(m.userData, 'subscription.userData'),
  };
}

/**
 * A member's assignment. Empty bytes are an empty assignment: a coordinator
 * answers a member the leader gave nothing (or that joined late) that way.
 */
export function decodeAssignment(bytes: Uint8Array): Assignment {
  if (bytes.length === 0) return { version: CONSUMER_PROTOCOL_VERSION, partitions: [], userData: null };
  const m = unpackMap(bytes, 'assignment');
  return {
    version: intField(m, 'version', 'assignment'),
    partitions: topicPartitionsList(m.partitions, 'assignment.partitions'),
    userData: binOrNull(m.userData, 'assignment.userData'),
  };
}

// ---------------------------------------------------------------- checks

type Obj = Record<string, unknown>;

function plainTopicPartitions(tp: TopicPartitions): { topic: string; partitions: number[] } {
  return { topic: tp.topic, partitions: [...tp.partitions] };
}

function bad(what: string, want: string): SluiceError {
  return new SluiceError(Errors.INCONSISTENT_GROUP_PROTOCOL, `malformed consumer protocol ${what}: must be ${want}`);
}

const isMap = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

function unpackMap(bytes: Uint8Array, what: string): Obj {
  let v: unknown;
  try {
    v = packr.unpack(bytes);
  } catch (err) {
    throw new SluiceError(Errors.INCONSISTENT_GROUP_PROTOCOL, `consumer protocol ${what} is not msgpack: ${(err as Error).message}`);
  }
  if (!isMap(v)) throw bad(what, 'a map');
  return v;
}

function intField(m: Obj, k: string, what: string): number {
  const v = m[k];
  if (!Number.isSafeInteger(v)) throw bad(`${what}.${k}`, 'an integer');
  return v as number;
}

function stringList(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw bad(what, 'a list of strings');
  return v as string[];
}

function topicPartitionsList(v: unknown, what: string): TopicPartitions[] {
  if (!Array.isArray(v)) throw bad(what, 'a list');
  return v.map((item, i) => {
    if (!isMap(item) || typeof item.topic !== 'string') throw bad(`${what}[${i}]`, 'a map with a topic');
    const ps = item.partitions;
    if (!Array.isArray(ps) || !ps.every((p) => Number.isSafeInteger(p) && (p as number) >= 0)) throw bad(`${what}[${i}].partitions`, 'a list of partition numbers');
    return { topic: item.topic, partitions: ps as number[] };
  });
}

function binOrNull(v: unknown, what: string): Uint8Array | null {
  if (v === undefined || v === null) return null;
  if (!(v instanceof Uint8Array)) throw bad(what, 'binary or null');
  return v;
}
