// The newest bytes of every log's active segment, kept in memory as the very
// buffers they were appended from (Kafka leans on the OS page cache here; we
// have to do the rest ourselves). A fetch near the log end — every follower
// fetch, every caught-up consumer — is then served without read(2), and when
// it falls within one append, without allocating: the answer is a view of the
// produce request's own bytes, which the fetch frame passes through uncopied
// (protocol/chunked-msgpack.ts). At 100,000 records/s a leader's segment
// reads had allocated ~30 MB/s of buffers, and V8 counts such external
// memory toward its old-generation limit: full collections every ~120 ms.
//
// One TailCache per broker bounds the bytes held by all logs together
// (tailCacheBytesMax); the oldest appends are dropped first, whichever log
// they belong to, so idle logs give up their tails to busy ones. Each log's
// LogTail covers a contiguous range that ends at its active segment's end,
// and is emptied whenever that range could stop being the file's bytes
// (truncation, roll, close).
//
// Ownership: appended bytes must not change afterwards (the log's writers —
// the produce path and the replica fetcher — hand over fresh request and
// response buffers). A view much smaller than the buffer under it (one
// message of a larger socket read) is copied, so what is held stays within
// about twice what is counted. A chunk that leaves its log (evicted or
// cleared) lets go of its bytes at once: its FIFO slot, which stays until
// the slots are compacted, keeps only the small record. (It used to keep the
// bytes: with 1 MB produce batches the up to ~1,000 evicted slots awaiting
// compaction held a gigabyte, and a log cleared on every append — gaps,
// rolls — filled the FIFO with released chunks no eviction ever reached.)

import { AssertionError } from '../util/assert.js';

interface TailChunk {
  readonly owner: LogTail;
  /** Position of the chunk's first byte in the active segment. */
  readonly position: number;
  /** Empty once dropped. */
  bytes: Buffer;
  /** Dropped from its log (cleared or evicted): no longer counted, its bytes let go. */
  dropped: boolean;
}

const NO_BYTES = Buffer.alloc(0);

export class TailCache {
  private usedBytes = 0;
  /** Chunks not dropped. */
  private live = 0;
  /** Every chunk held, oldest first (from `head` on; dropped ones are skipped and compacted away). */
  private fifo: TailChunk[] = [];
  private head = 0;

  constructor(readonly bytesMax: number) {
    if (!(Number.isSafeInteger(bytesMax) && bytesMax >= 0)) throw new AssertionError(`bad tail cache size ${bytesMax}`);
  }

  /** Bytes held now, over all logs. */
  get bytes(): number {
    return this.usedBytes;
  }

  /** A new log's tail, held within this cache's budget. */
  tail(): LogTail {
    return new LogTail(this);
  }

  add(chunk: TailChunk): void {
    this.fifo.push(chunk);
    this.live++;
    this.usedBytes += chunk.bytes.length;
    while (this.usedBytes > this.bytesMax && this.head < this.fifo.length) {
      const oldest = this.fifo[this.head++]!;
      if (!oldest.dropped) oldest.owner.evict(oldest);
    }
    // Slots passed or dropped outnumber the live ones: keep the live ones only (amortised O(1) per add).
    if (this.fifo.length > 1024 && this.fifo.length > 2 * this.live) {
      this.fifo = this.fifo.slice(this.head).filter((c) => !c.dropped);
      this.head = 0;
    }
  }

  /** A chunk left its log: it stops counting and lets go of its bytes (its FIFO slot is skipped later). */
  release(chunk: TailChunk): void {
    chunk.dropped = true;
    this.live--;
    this.usedBytes -= chunk.bytes.length;
    chunk.bytes = NO_BYTES;
  }

  /** Bytes the FIFO's slots still reference, dropped ones included (tests: stays within what is counted). */
  get referencedBytes(): number {
    let n = 0;
    for (const c of this.fifo) n += c.bytes.length;
    return n;
  }

  /** FIFO slots, passed and dropped ones included (tests: bounded by the live chunks). */
  get slots(): number {
    return this.fifo.length;
  }
}

export class LogTail {
  /** Contiguous chunks, oldest first, the last one ending at the active segment's end. */
  private chunks: TailChunk[] = [];

  constructor(private readonly cache: TailCache) {}

  /** Bytes `bytes` were appended at `position` of the active segment (which now ends after them). */
  appended(position: number, bytes: Buffer): void {
    const last = this.chunks.at(-1);
    if (last !== undefined && last.position + last.bytes.length !== position) this.clear();
    if (bytes.length === 0) return;
    if (bytes.length > this.cache.bytesMax) return this.clear(); // the tail must end where the segment does
    const held = bytes.length * 2 < bytes.buffer.byteLength ? Buffer.from(bytes) : bytes;
    const chunk: TailChunk = { owner: this, position, bytes: held, dropped: false };
    this.chunks.push(chunk);
    this.cache.add(chunk);
  }

  /**
   * The segment's bytes [position, position + length), if the tail holds all
   * of them: a view when one append holds them, else one copy. Null otherwise.
   */
  read(position: number, length: number): Buffer | null {
    const chunks = this.chunks;
    if (chunks.length === 0 || position < chunks[0]!.position) return null;
    const last = chunks[chunks.length - 1]!;
    if (position + length > last.position + last.bytes.length) return null;
    let i = chunks.length - 1;
    while (chunks[i]!.position > position) i--;
    const first = chunks[i]!;
    const from = position - first.position;
    if (from + length <= first.bytes.length) return first.bytes.subarray(from, from + length);
    const out = Buffer.allocUnsafe(length);
    let copied = first.bytes.copy(out, 0, from);
    for (let j = i + 1; copied < length; j++) copied += chunks[j]!.bytes.copy(out, copied, 0, length - copied);
    return out;
  }

  /** Forgets every chunk (the bytes may no longer be the file's, or there is a new active segment). */
  clear(): void {
    for (const c of this.chunks) this.cache.release(c);
    this.chunks = [];
  }

  /** The cache drops this log's oldest chunk (always the first: chunks enter the cache in append order). */
  evict(chunk: TailChunk): void {
    if (this.chunks[0] !== chunk) throw new AssertionError('tail cache evicted a chunk out of order');
    this.chunks.shift();
    this.cache.release(chunk);
  }

  /** Bytes held for this log (tests). */
  get bytes(): number {
    let n = 0;
    for (const c of this.chunks) n += c.bytes.length;
    return n;
  }
}
