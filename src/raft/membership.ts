// Membership: who votes, who only follows, and how one-server-at-a-time
// changes (Raft thesis §4.1) transform it.
//
// Invariants:
// - A Membership's voter and observer lists are disjoint, sorted ascending
//   and hold positive integer ids; every function here returns that form.
// - applyConfChange is total (it never throws): the log replays whatever
//   config entries it holds, so it must accept any sequence. Whether a change
//   is *allowed* is a separate question (checkConfChange), asked by the leader
//   before it proposes one.
// - The wire form of a ConfChange is 5 bytes: a tag byte and the node id as a
//   big-endian u32. Decoding rejects anything else.

import { Errors, SluiceError } from '../util/errors.js';
import type { ConfChange, Membership, NodeId } from './types.js';

export const NODE_ID_MAX = 0xffff_ffff;

const CONF_CHANGE_BYTES = 5;
const TAGS = ['addVoter', 'removeVoter', 'addObserver', 'removeObserver', 'promoteObserver'] as const;

export function isNodeId(x: unknown): x is NodeId {
  return typeof x === 'number' && Number.isInteger(x) && x > 0 && x <= NODE_ID_MAX;
}

export function encodeConfChange(c: ConfChange): Uint8Array {
  if (!isNodeId(c.node)) throw new SluiceError(Errors.INVALID_REQUEST, `bad node id in conf change: ${String(c.node)}`);
  const tag = TAGS.indexOf(c.type);
  if (tag < 0) throw new SluiceError(Errors.INVALID_REQUEST, `unknown conf change type ${String(c.type)}`);
  const out = new Uint8Array(CONF_CHANGE_BYTES);
  out[0] = tag;
  new DataView(out.buffer).setUint32(1, c.node, false);
  return out;
}

/** The change encoded in `b`, or undefined when the bytes are not a valid encoding. */
export function tryDecodeConfChange(b: Uint8Array): ConfChange | undefined {
  if (!(b instanceof Uint8Array) || b.byteLength !== CONF_CHANGE_BYTES) return undefined;
  const type = TAGS[b[0] ?? TAGS.length];
  const node = new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(1, false);
  if (type === undefined || !isNodeId(node)) return undefined;
  return { type, node };
}

export function decodeConfChange(b: Uint8Array): ConfChange {
  const c = tryDecodeConfChange(b);
  if (!c) throw new SluiceError(Errors.CORRUPT_MESSAGE, 'malformed conf change entry');
  return c;
}

export function isVoter(m: Membership, id: NodeId): boolean {
  return m.voters.includes(id);
}

export function isObserver(m: Membership, id: NodeId): boolean {
  return m.observers.includes(id);
}

export function isMember(m: Membership, id: NodeId): boolean {
  return isVoter(m, id) || isObserver(m, id);
}

/** Voters and observers, voters first. */
export function members(m: Membership): NodeId[] {
  return [...m.voters, ...m.observers];
}

/** Votes (or acknowledgements) needed out of `voters`: a strict majority. */
export function quorumSize(voters: number): number {
  return Math.floor(voters / 2) + 1;
}

function sorted(ids: Iterable<NodeId>): NodeId[] {
  return [...new Set(ids)].sort((a, b) => a - b);
}

/** Builds a normalized membership (sorted, deduplicated; a voter is never also an observer). */
export function makeMembership(voters: Iterable<NodeId>, observers: Iterable<NodeId> = []): Membership {
  const v = sorted(voters);
  return { voters: v, observers: sorted([...observers].filter((id) => !v.includes(id))) };
}

export function sameMembership(a: Membership, b: Membership): boolean {
  const x = makeMembership(a.voters, a.observers);
  const y = makeMembership(b.voters, b.observers);
  return x.voters.join(',') === y.voters.join(',') && x.observers.join(',') === y.observers.join(',');
}

/** The membership after `c`; total, so replaying any log is possible. */
export function applyConfChange(m: Membership, c: ConfChange): Membership {
  const voters = m.voters.filter((id) => id !== c.node);
  const observers = m.observers.filter((id) => id !== c.node);
  switch (c.type) {
    case 'addVoter':
    case 'promoteObserver':
      return makeMembership([...voters, c.node], observers);
    case 'addObserver':
      return isVoter(m, c.node) ? makeMembership(m.voters, m.observers) : makeMembership(voters, [...observers, c.node]);
    case 'removeVoter':
      return isVoter(m, c.node) ? makeMembership(voters, observers) : makeMembership(m.voters, m.observers);
    case 'removeObserver':
      return isObserver(m, c.node) ? makeMembership(voters, observers) : makeMembership(m.voters, m.observers);
  }
}

/** Whether a leader may propose `c` against membership `m` (a real, one-server change that leaves a voter). */
export function checkConfChange(m: Membership, c: ConfChange): boolean {
  if (typeof c !== 'object' || c === null || !isNodeId(c.node)) return false;
  switch (c.type) {
    case 'addVoter':
    case 'addObserver':
      return !isMember(m, c.node);
    case 'removeVoter':
      return isVoter(m, c.node) && m.voters.length > 1;
    case 'removeObserver':
    case 'promoteObserver':
      return isObserver(m, c.node);
    default:
      return false;
  }
}

export function isWellFormedMembership(x: unknown): x is Membership {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as { voters?: unknown; observers?: unknown };
  return Array.isArray(m.voters) && m.voters.every(isNodeId) && Array.isArray(m.observers) && m.observers.every(isNodeId);
}
