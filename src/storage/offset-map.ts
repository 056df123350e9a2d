// The log cleaner's offset map: key hash -> offset of the key's last record in
// the dirty part of a log (Kafka's SkimpyOffsetMap). Memory is fixed up front:
// one Buffer of `bytes`, cut into 24-byte slots (a 16-byte MD5 of the key and
// the offset as a float64 — exact below 2^53, which every offset is). Open
// addressing with linear probing; the map counts as full at `loadFactor` of its
// slots so probes stay short, and the cleaner then stops adding segments
// (log-cleaner.ts) rather than evicting anything.
//
// Two keys with the same MD5 would share an entry and the older key's last
// record could be removed; with 128-bit hashes that is as unlikely as Kafka
// assumes it to be (Kafka uses the same hash).
//
// Invariant: an offset stored for a hash only grows (put keeps the larger),
// because the cleaner feeds records in offset order and a key's newest record
// is the one that must survive.

import { createHash } from 'node:crypto';
import { assert } from '../util/assert.js';

export const OFFSET_MAP_HASH_BYTES = 16;
export const OFFSET_MAP_SLOT_BYTES = OFFSET_MAP_HASH_BYTES + 8;
const DEFAULT_LOAD_FACTOR = 0.9;

export function hashKey(key: Uint8Array): Buffer {
  return createHash('md5').update(key).digest();
}

export class OffsetMap {
  private readonly slots: Buffer;
  readonly slotCount: number;
  /** put() refuses a new key once this many are stored. */
  readonly capacity: number;
  private _size = 0;
  private _latestOffset = -1;

  constructor(bytes: number, loadFactor = DEFAULT_LOAD_FACTOR) {
    this.slotCount = Math.floor(bytes / OFFSET_MAP_SLOT_BYTES);
    assert(this.slotCount >= 2 && loadFactor > 0 && loadFactor <= 1, `offset map of ${bytes} bytes needs two slots`);
    // One slot always stays empty, so a probe for an absent key ends.
    this.capacity = Math.max(1, Math.min(this.slotCount - 1, Math.floor(this.slotCount * loadFactor)));
    this.slots = Buffer.alloc(this.slotCount * OFFSET_MAP_SLOT_BYTES);
  }

  get size(): number {
    return this._size;
  }
  get isFull(): boolean {
    return this._size >= this.capacity;
  }
  /** The largest offset put so far, -1 when empty. */
  get latestOffset(): number {
    return this._latestOffset;
  }

  /** Records `offset` for `hash`; false (and nothing stored) if the key is new and the map is full. */
  put(hash: Buffer, offset: number): boolean {
    assert(hash.length === OFFSET_MAP_HASH_BYTES && Number.isSafeInteger(offset) && offset >= 0, 'offset map: bad put');
    const slot = this.find(hash);
    const at = slot * OFFSET_MAP_SLOT_BYTES;
    const stored = this.slots.readDoubleBE(at + OFFSET_MAP_HASH_BYTES);
    if (stored === 0) {
      if (this.isFull) return false;
      hash.copy(this.slots, at);
      this._size++;
    }
    // Offsets are stored plus one, so an all-zero slot means empty.
    if (offset + 1 > stored) this.slots.writeDoubleBE(offset + 1, at + OFFSET_MAP_HASH_BYTES);
    if (offset > this._latestOffset) this._latestOffset = offset;
    return true;
  }

  /** The last offset recorded for `hash`, or -1. */
  get(hash: Buffer): number {
    const at = this.find(hash) * OFFSET_MAP_SLOT_BYTES;
    return this.slots.readDoubleBE(at + OFFSET_MAP_HASH_BYTES) - 1;
  }

  clear(): void {
    this.slots.fill(0);
    this._size = 0;
    this._latestOffset = -1;
  }

  /** The slot holding `hash`, or the empty slot where it would go. Terminates: one slot is always empty. */
  private find(hash: Buffer): number {
    let slot = hash.readUInt32BE(0) % this.slotCount;
    for (;;) {
      const at = slot * OFFSET_MAP_SLOT_BYTES;
      if (this.slots.readDoubleBE(at + OFFSET_MAP_HASH_BYTES) === 0 || this.slots.compare(hash, 0, OFFSET_MAP_HASH_BYTES, at, at + OFFSET_MAP_HASH_BYTES) === 0) {
        return slot;
      }
      slot = slot + 1 === this.slotCount ? 0 : slot + 1;
    }
  }
}
