// Cheap structural checks on incoming messages, so step() can drop garbage
// instead of throwing or, worse, corrupting state. The shell's codec checks
// shapes too; the core does not rely on it (the simulation calls step()
// directly, and a bug upstream must not become a safety bug here).
//
// Checked: every field the core reads has the right type and range (ids are
// positive integers, terms/indexes non-negative safe integers, bytes are
// Uint8Array); an append's entries continue prevLogIndex contiguously with
// non-decreasing terms between prevLogTerm and the message term; config
// entries decode; a snapshot's membership is well formed with a voter.
// Not checked: anything needing state (that is step.ts's business).

import { isNodeId, isWellFormedMembership, tryDecodeConfChange } from './membership.js';
import { EntryType, type Message } from './types.js';

type Obj = Record<string, unknown>;

function isNat(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

function isBool(x: unknown): x is boolean {
  return typeof x === 'boolean';
}

function nats(o: Obj, names: readonly string[]): boolean {
  for (const n of names) if (!isNat(o[n])) return false;
  return true;
}

function entriesOk(o: Obj): boolean {
  const entries = o.entries;
  if (!Array.isArray(entries)) return false;
  let index = o.prevLogIndex as number;
  let term = o.prevLogTerm as number;
  for (const e of entries as unknown[]) {
    if (typeof e !== 'object' || e === null) return false;
    const x = e as Obj;
    if (x.index !== index + 1 || !isNat(x.term) || x.term < term || x.term > (o.term as number)) return false;
    if (!(x.data instanceof Uint8Array)) return false;
    if (x.type !== EntryType.Normal && x.type !== EntryType.NoOp && x.type !== EntryType.Config) return false;
    if (x.type === EntryType.Config && !tryDecodeConfChange(x.data)) return false;
    index = x.index as number;
    term = x.term;
  }
  return true;
}

function snapshotMetaOk(x: unknown): boolean {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as Obj;
  const membership = m.membership;
  return nats(m, ['index', 'term']) && isWellFormedMembership(membership) && membership.voters.length > 0;
}

const bodyOk: Record<Message['type'], (o: Obj) => boolean> = {
  vote: (o) => nats(o, ['lastLogIndex', 'lastLogTerm']) && isBool(o.transfer),
  preVote: (o) => nats(o, ['lastLogIndex', 'lastLogTerm']) && isBool(o.transfer),
  voteResp: (o) => isBool(o.granted),
  preVoteResp: (o) => isBool(o.granted),
  append: (o) => nats(o, ['prevLogIndex', 'prevLogTerm', 'commit']) && (o.prevLogTerm as number) <= (o.term as number)
    && entriesOk(o),
  appendResp: (o) => isBool(o.success) && nats(o, ['matchIndex', 'conflictTerm', 'conflictIndex']),
  heartbeat: (o) => nats(o, ['commit', 'readRound']),
  heartbeatResp: (o) => nats(o, ['readRound', 'lastIndex']),
  installSnapshot: (o) => snapshotMetaOk(o.meta) && isNat(o.offset) && o.chunk instanceof Uint8Array && isBool(o.done),
  installSnapshotResp: (o) => isNat(o.snapshotIndex) && Number.isSafeInteger(o.nextOffset)
    && (o.nextOffset as number) >= -1 && isBool(o.done),
  timeoutNow: () => true,
};

/** Whether `m` is a structurally valid Message (never throws). */
export function isWellFormed(m: unknown): m is Message {
  try {
    if (typeof m !== 'object' || m === null) return false;
    const o = m as Obj;
    if (typeof o.type !== 'string' || !Object.prototype.hasOwnProperty.call(bodyOk, o.type)) return false;
    if (!isNodeId(o.from) || !isNodeId(o.to) || !isNat(o.term)) return false;
    return bodyOk[o.type as Message['type']](o);
  } catch {
    return false; // a getter that throws, a proxy: garbage either way
  }
}
