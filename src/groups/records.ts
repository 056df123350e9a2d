// The records of __consumer_offsets: keyed, so the last value per key in the
// log is the current one and a null value (tombstone) deletes the key.
//
//   offset commit   key [1, groupId, topic, partition]
//                   value { v: 1, offset, leaderEpoch, metadata, commitTimestampMs }
//   group metadata  key [2, groupId]
//                   value { v: 1, protocolType, generationId, protocolName, leader,
//                           members: [{ memberId, groupInstanceId, clientId, clientHost,
//                                       sessionTimeoutMs, rebalanceTimeoutMs,
//                                       protocols: [{ name, metadata: bin }], assignment: bin }] }
//
// msgpack, like every Sluice control message (Kafka's key kinds 1 and 2 are
// the model; its binary schemas are not copied). Decoding checks every field:
// a record it cannot read throws CORRUPT_MESSAGE, and the loader skips it.

import { Packr } from 'msgpackr';
import { Errors, SluiceError } from '../util/errors.js';
import type { GroupSnapshot, MemberSnapshot, Protocol } from './membership/types.js';

const OFFSET_KEY = 1;
const GROUP_KEY = 2;
const VALUE_VERSION = 1;

export type OffsetsTopicKey =
  | { readonly kind: 'offset'; readonly groupId: string; readonly topic: string; readonly partition: number }
  | { readonly kind: 'group'; readonly groupId: string };

export interface CommittedOffset {
  readonly offset: number;
  readonly leaderEpoch: number;
  readonly metadata: string | null;
  readonly commitTimestampMs: number;
}

const packr = new Packr({ useRecords: false, moreTypes: false, variableMapSize: true, encodeUndefinedAsNil: true });

export function offsetKey(groupId: string, topic: string, partition: number): Buffer {
  return packr.pack([OFFSET_KEY, groupId, topic, partition]);
}

export function groupKey(groupId: string): Buffer {
  return packr.pack([GROUP_KEY, groupId]);
}

export function offsetValue(c: CommittedOffset): Buffer {
  return packr.pack({ v: VALUE_VERSION, offset: c.offset, leaderEpoch: c.leaderEpoch, metadata: c.metadata, commitTimestampMs: c.commitTimestampMs });
}

export function groupValue(s: GroupSnapshot): Buffer {
  return packr.pack({
    v: VALUE_VERSION, protocolType: s.protocolType, generationId: s.generationId, protocolName: s.protocolName, leader: s.leader,
    members: s.members.map((m) => ({
      memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
      sessionTimeoutMs: m.sessionTimeoutMs, rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      protocols: m.protocols.map((p) => ({ name: p.name, metadata: p.metadata })), assignment: m.assignment,
    })),
  });
}

// ---- decoding ------------------------------------------------------------------

type Obj = Record<string, unknown>;

function corrupt(what: string): SluiceError {
  return new SluiceError(Errors.CORRUPT_MESSAGE, `__consumer_offsets record: ${what}`);
}

function unpack(bytes: Uint8Array): unknown {
  try {
    return packr.unpack(bytes);
  } catch (err) {
    throw corrupt(`not msgpack (${(err as Error).message})`);
  }
}

function map(v: unknown, what: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof Uint8Array) throw corrupt(`${what} is not a map`);
  return v as Obj;
}

function int(o: Obj, k: string): number {
  if (!Number.isSafeInteger(o[k])) throw corrupt(`${k} is not an integer`);
  return o[k] as number;
}

function str(o: Obj, k: string): string {
  if (typeof o[k] !== 'string') throw corrupt(`${k} is not a string`);
  return o[k] as string;
}

function optStr(o: Obj, k: string): string | null {
  if (o[k] === null || o[k] === undefined) return null;
  return str(o, k);
}

function bin(o: Obj, k: string): Buffer {
  const v = o[k];
  if (!(v instanceof Uint8Array)) throw corrupt(`${k} is not binary`);
  // A copy: the loader keeps it past the lifetime of the bytes it read.
  return Buffer.from(v);
}

function list(o: Obj, k: string): Obj[] {
  const v = o[k];
  if (!Array.isArray(v)) throw corrupt(`${k} is not a list`);
  return v.map((x, i) => map(x, `${k}[${i}]`));
}

/** The key of a record, or null for a key kind this version does not know (skipped, as Kafka skips unknown versions). */
export function decodeKey(bytes: Uint8Array): OffsetsTopicKey | null {
  const v = unpack(bytes);
  if (!Array.isArray(v) || !Number.isSafeInteger(v[0])) throw corrupt('key is not [kind, ...]');
  const [kind, groupId, topic, partition] = v as unknown[];
  if (typeof groupId !== 'string') throw corrupt('key has no group id');
  if (kind === GROUP_KEY) {
    if (v.length !== 2) throw corrupt('group key is not [2, groupId]');
    return { kind: 'group', groupId };
  }
  if (kind === OFFSET_KEY) {
    if (v.length !== 4 || typeof topic !== 'string' || !Number.isSafeInteger(partition)) throw corrupt('offset key is not [1, groupId, topic, partition]');
    return { kind: 'offset', groupId, topic, partition: partition as number };
  }
  return null;
}

export function decodeOffsetValue(bytes: Uint8Array): CommittedOffset {
  const o = map(unpack(bytes), 'offset value');
  if (int(o, 'v') !== VALUE_VERSION) throw corrupt(`offset value version ${String(o.v)}`);
  return { offset: int(o, 'offset'), leaderEpoch: int(o, 'leaderEpoch'), metadata: optStr(o, 'metadata'), commitTimestampMs: int(o, 'commitTimestampMs') };
}

export function decodeGroupValue(bytes: Uint8Array): GroupSnapshot {
  const o = map(unpack(bytes), 'group value');
  if (int(o, 'v') !== VALUE_VERSION) throw corrupt(`group value version ${String(o.v)}`);
  const members = list(o, 'members').map((m): MemberSnapshot => ({
    memberId: str(m, 'memberId'), groupInstanceId: optStr(m, 'groupInstanceId'), clientId: str(m, 'clientId'), clientHost: str(m, 'clientHost'),
    sessionTimeoutMs: int(m, 'sessionTimeoutMs'), rebalanceTimeoutMs: int(m, 'rebalanceTimeoutMs'),
    protocols: list(m, 'protocols').map((p): Protocol => ({ name: str(p, 'name'), metadata: bin(p, 'metadata') })),
    assignment: bin(m, 'assignment'),
  }));
  const s: GroupSnapshot = {
    protocolType: optStr(o, 'protocolType'), generationId: int(o, 'generationId'), protocolName: optStr(o, 'protocolName'),
    leader: optStr(o, 'leader'), members,
  };
  // What Group.restore relies on: a group with members has a protocol type and a protocol every member supports.
  if (members.length > 0 && (s.protocolType === null || s.protocolName === null || !members.every((m) => m.protocols.some((p) => p.name === s.protocolName)))) {
    throw corrupt('a group with members needs a protocol type and a protocol all of them support');
  }
  return s;
}
