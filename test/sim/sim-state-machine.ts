// The per-node state machine of the simulation: what was applied, in order,
// as (index, term, digest of the entry), folded into a hash chain, plus the
// membership as of the last applied index (needed for the snapshot metadata,
// because a config change takes effect in the core when appended, which may be
// ahead of what is applied).
//
// The state is the chain: chain(i) = H(chain(i−1), term(i), digest(i)), so two
// nodes with the same chain at index i applied the same sequence up to i. A
// snapshot image holds the chain, the last few records and the membership — a
// bounded image however long the run, still split into several chunks by the
// simulation's small snapshotChunkBytes. The node also remembers the records it
// applied itself (for scripts and the heal phase), but never relies on them.
//
// Invariants: entries are applied contiguously, each exactly once (apply()
// asserts the next index); a restored image ends at its snapshot's index.

import { Packr } from 'msgpackr';
import { assert } from '../../src/util/assert.js';
import { EntryType, type ConfChange, type Entry, type Membership, type Snapshot } from '../../src/raft/types.js';

export interface AppliedRecord {
  readonly index: number;
  readonly term: number;
  /** What the entry was: `cmd:<text>`, `noop`, or `cfg:<type>:<node>`. */
  readonly digest: string;
}

/** Records carried in a snapshot image besides the chain. */
export const IMAGE_TAIL_RECORDS = 8;

const packr = new Packr({ useRecords: false, moreTypes: false });
const utf8 = new TextDecoder();

export type ConfChangeDecoder = (data: Uint8Array) => ConfChange;

export function entryDigest(e: Entry, decode: ConfChangeDecoder): string {
  switch (e.type) {
    case EntryType.Normal:
      return `cmd:${utf8.decode(e.data)}`;
    case EntryType.NoOp:
      return 'noop';
    case EntryType.Config: {
      const c = decode(e.data);
      return `cfg:${c.type}:${c.node}`;
    }
    default:
      return `type${String(e.type)}:${Buffer.from(e.data).toString('hex')}`;
  }
}

/** One link of the hash chain (53-bit, cyrb53-style mixing of two 32-bit lanes). */
export function chainNext(chain: number, term: number, digest: string): number {
  const text = `${chain}|${term}|${digest}`;
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

export function applyConfChange(m: Membership, c: ConfChange): Membership {
  const voters = new Set(m.voters);
  const observers = new Set(m.observers);
  switch (c.type) {
    case 'addVoter':
    case 'promoteObserver':
      observers.delete(c.node);
      voters.add(c.node);
      break;
    case 'removeVoter':
      voters.delete(c.node);
      break;
    case 'addObserver':
      // Adding a voter as an observer changes nothing (as in the core).
      if (!voters.has(c.node)) observers.add(c.node);
      break;
    case 'removeObserver':
      observers.delete(c.node);
      break;
  }
  const sorted = (s: Set<number>): number[] => [...s].sort((a, b) => a - b);
  return { voters: sorted(voters), observers: sorted(observers) };
}

/** The decoded snapshot image. */
export interface StateImage {
  readonly index: number;
  readonly term: number;
  readonly chain: number;
  readonly tail: readonly AppliedRecord[];
  readonly membership: Membership;
}

export class SimStateMachine {
  private applied = 0;
  private appliedTerm = 0;
  chain = 0;
  membership: Membership;
  /** Records known to this incarnation: applied by it, or in its restored image's tail (sparse, by index). */
  private readonly known: AppliedRecord[] = [];

  constructor(
    private readonly bootstrap: Membership,
    private readonly decode: ConfChangeDecoder,
  ) {
    this.membership = bootstrap;
  }

  lastIndex(): number {
    return this.applied;
  }

  lastTerm(): number {
    return this.appliedTerm;
  }

  /** The record at `index`, if this incarnation knows it. */
  recordAt(index: number): AppliedRecord | undefined {
    return this.known[index];
  }

  apply(e: Entry): AppliedRecord {
    assert(e.index === this.applied + 1, `applied ${e.index} after ${this.applied}`);
    const rec: AppliedRecord = { index: e.index, term: e.term, digest: entryDigest(e, this.decode) };
    this.applied = e.index;
    this.appliedTerm = e.term;
    this.chain = chainNext(this.chain, rec.term, rec.digest);
    this.known[e.index] = rec;
    if (e.type === EntryType.Config) this.membership = applyConfChange(this.membership, this.decode(e.data));
    return rec;
  }

  /** The state machine as a snapshot at the last applied index. */
  snapshot(): Snapshot {
    const index = this.applied;
    const tail: [number, number, string][] = [];
    for (let i = Math.max(1, index - IMAGE_TAIL_RECORDS + 1); i <= index; i++) {
      const r = this.known[i];
      if (r !== undefined) tail.push([r.index, r.term, r.digest]);
    }
    const data = packr.pack({ index, term: this.appliedTerm, chain: this.chain, tail, membership: this.membership });
    return { meta: { index, term: this.appliedTerm, membership: this.membership }, data };
  }

  /** Replaces the state with a snapshot's image (after restart or InstallSnapshot); returns the image. */
  restore(snap: Snapshot | undefined): StateImage {
    this.known.length = 0;
    const img = snap === undefined ? emptyImage(this.bootstrap) : decodeImage(snap.data);
    assert(snap === undefined || img.index === snap.meta.index, `snapshot image ends at ${img.index}, meta says ${snap?.meta.index}`);
    this.applied = img.index;
    this.appliedTerm = img.term;
    this.chain = img.chain;
    this.membership = img.membership;
    for (const r of img.tail) this.known[r.index] = r;
    return img;
  }
}

function emptyImage(membership: Membership): StateImage {
  return { index: 0, term: 0, chain: 0, tail: [], membership };
}

function decodeImage(data: Uint8Array): StateImage {
  const raw = packr.unpack(data) as Omit<StateImage, 'tail'> & { tail: [number, number, string][] };
  return { ...raw, tail: raw.tail.map(([index, term, digest]) => ({ index, term, digest })) };
}
