// Shape checks for Raft messages decoded off the wire. The pure core drops
// semantic nonsense (stale terms, unknown nodes) itself, but it assumes it is
// handed a well-typed Message; this module makes sure a peer's bytes become
// either exactly that or `undefined` — never a half-typed object and never an
// exception. Checks are cheap (type tags and numeric ranges), not semantic.

import type {
  Entry, Membership, Message, MessageType, SnapshotMeta,
} from '../raft/types.js';

type Obj = Record<string, unknown>;

function isObj(x: unknown): x is Obj {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** A non-negative safe integer (terms, indexes, node ids, offsets). */
function isNat(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

function isBool(x: unknown): x is boolean {
  return typeof x === 'boolean';
}

function isBytes(x: unknown): x is Uint8Array {
  return x instanceof Uint8Array;
}

function natFields(o: Obj, names: readonly string[]): boolean {
  return names.every((n) => isNat(o[n]));
}

function isNodeList(x: unknown): x is number[] {
  return Array.isArray(x) && x.every((id) => isNat(id) && id > 0);
}

export function isMembership(x: unknown): x is Membership {
  return isObj(x) && isNodeList(x.voters) && isNodeList(x.observers);
}

export function isSnapshotMeta(x: unknown): x is SnapshotMeta {
  return isObj(x) && isNat(x.index) && isNat(x.term) && isMembership(x.membership);
}

const ENTRY_TYPES_MAX = 2;

export function isEntry(x: unknown): x is Entry {
  return isObj(x) && isNat(x.term) && isNat(x.index) && x.index > 0
    && isNat(x.type) && x.type <= ENTRY_TYPES_MAX && isBytes(x.data);
}

function entriesOk(x: unknown): boolean {
  if (!Array.isArray(x)) return false;
  for (let i = 0; i < x.length; i++) if (!isEntry(x[i])) return false;
  return true;
}

/** Per message type: does the rest of the object (beyond from/to/term) have the right shape? */
const bodyChecks: Record<MessageType, (o: Obj) => boolean> = {
  vote: (o) => natFields(o, ['lastLogIndex', 'lastLogTerm']) && isBool(o.transfer),
  preVote: (o) => natFields(o, ['lastLogIndex', 'lastLogTerm']) && isBool(o.transfer),
  voteResp: (o) => isBool(o.granted),
  preVoteResp: (o) => isBool(o.granted),
  append: (o) => natFields(o, ['prevLogIndex', 'prevLogTerm', 'commit']) && entriesOk(o.entries),
  appendResp: (o) => isBool(o.success) && natFields(o, ['matchIndex', 'conflictTerm', 'conflictIndex']),
  heartbeat: (o) => natFields(o, ['commit', 'readRound']),
  heartbeatResp: (o) => natFields(o, ['readRound', 'lastIndex']),
  installSnapshot: (o) => isSnapshotMeta(o.meta) && isNat(o.offset) && isBytes(o.chunk) && isBool(o.done),
  installSnapshotResp: (o) => isNat(o.snapshotIndex) && typeof o.nextOffset === 'number'
    && Number.isSafeInteger(o.nextOffset) && o.nextOffset >= -1 && isBool(o.done),
  timeoutNow: () => true,
};

/** The decoded value as a Message if its shape is right, else undefined. */
export function checkMessage(x: unknown): Message | undefined {
  if (!isObj(x) || typeof x.type !== 'string') return undefined;
  if (!Object.prototype.hasOwnProperty.call(bodyChecks, x.type)) return undefined;
  if (!(isNat(x.from) && x.from > 0 && isNat(x.to) && x.to > 0 && isNat(x.term))) return undefined;
  const body = bodyChecks[x.type as MessageType];
  return body(x) ? (x as unknown as Message) : undefined;
}
