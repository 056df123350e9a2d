// Read-only views into a running simulated node's REAL parts, for the
// checkers: its hosted partitions (leadership, epochs, ISR, log end, high
// watermark, the records below a bound) and its Raft log. Nothing here
// changes a node; everything is read through the same objects the node
// serves requests from (src/replication/partition.ts, src/storage/
// partition-log.ts, the Raft core inside src/raft-node/node.ts).
//
// The Raft core is a private field of RaftNode; reading it here is the one
// place the simulation looks behind a shell's public surface, and it only
// reads (firstIndex / lastIndex / termAt / entries).

import { decodeFetchedRecords } from '../../../src/client/records.js';
import { batchSizeAt, lastOffsetOf, leaderEpochOf } from '../../../src/record/batch-header.js';
import type { Server } from '../../../src/server/server.js';
import type { StoredRecord } from '../../chaos/history.js';
import type { LogView } from '../invariants.js';

/** One hosted replica as its node sees it now. */
export interface ReplicaView {
  readonly topic: string;
  readonly partition: number;
  readonly isLeader: boolean;
  readonly leaderId: number;
  readonly leaderEpoch: number;
  readonly isr: readonly number[];
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  readonly highWatermark: number;
  /** Records in [from, to) (whole batches, values as text); stops at the log end. */
  read(from: number, to: number): StoredRecord[];
  /** The log's bytes from `from`: whole batches, as stored (control batches too), at most about `maxBytes`. */
  readBatches?(from: number, maxBytes: number): { readonly records: Uint8Array; readonly nextOffset: number };
}

interface PartitionLike {
  readonly topic: string;
  readonly index: number;
  readonly isLeader: boolean;
  readonly leaderId: number;
  readonly leaderEpoch: number;
  readonly isr: readonly number[];
  readonly highWatermark?: number;
  readonly log: {
    readonly isClosed?: boolean;
    readonly logStartOffset: number;
    readonly logEndOffset: number;
    readonly highWatermark: number;
    read(from: number, maxBytes: number): { records: Uint8Array; nextOffset: number };
  };
}

const READ_BYTES_MAX = 256 * 1024;
const READ_ROUNDS_MAX = 100_000;

/** The node's hosted replicas (none while it is down or has no broker role). */
export function replicasOf(server: Server | undefined): ReplicaView[] {
  const rm = server?.broker?.replicas as unknown as { hostedPartitions?: readonly PartitionLike[] } | undefined;
  const hosted = rm?.hostedPartitions ?? [];
  // A node that is stopping (or crashed) may still list partitions whose logs it closed.
  return hosted.filter((p) => p.log.isClosed !== true).map((p) => replicaView(p));
}

function replicaView(p: PartitionLike): ReplicaView {
  const log = p.log;
  return {
    topic: p.topic, partition: p.index, isLeader: p.isLeader, leaderId: p.leaderId, leaderEpoch: p.leaderEpoch, isr: p.isr,
    logStartOffset: log.logStartOffset, logEndOffset: log.logEndOffset,
    // The partition's own HW when it keeps one (lane repl stores it once); the log's otherwise.
    highWatermark: typeof p.highWatermark === 'number' ? p.highWatermark : log.highWatermark,
    read: (from, to) => readLog(log, from, to),
    readBatches: (from, maxBytes) => log.read(from, maxBytes),
  };
}

function readLog(log: PartitionLike['log'], from: number, to: number): StoredRecord[] {
  const out: StoredRecord[] = [];
  if (log.isClosed === true) return out;
  let offset = Math.max(from, log.logStartOffset);
  const end = Math.min(to, log.logEndOffset);
  for (let round = 0; offset < end && round < READ_ROUNDS_MAX; round++) {
    // No maxOffset: the log returns whole batches below it only, and a batch may straddle `end`.
    const r = log.read(offset, READ_BYTES_MAX);
    if (r.records.length === 0) break;
    const buf = Buffer.from(r.records.buffer, r.records.byteOffset, r.records.byteLength);
    let next = offset;
    for (let pos = 0; pos + 12 <= buf.length;) {
      const size = batchSizeAt(buf, pos);
      if (pos + size > buf.length) break;
      const batch = buf.subarray(pos, pos + size);
      if (lastOffsetOf(batch) >= next) {
        const epoch = leaderEpochOf(batch);
        for (const rec of decodeFetchedRecords(batch, next)) {
          if (rec.offset >= end) break;
          out.push({ offset: rec.offset, value: rec.value?.toString('utf8') ?? '', ...(rec.key === null ? {} : { key: rec.key.toString('utf8') }), leaderEpoch: epoch });
        }
        next = lastOffsetOf(batch) + 1;
      }
      pos += size;
    }
    if (next <= offset) break;
    offset = next;
  }
  return out;
}

// ---- Raft ----

interface RaftCoreLike {
  firstIndex(): number;
  lastIndex(): number;
  termAt(index: number): number | undefined;
  entries(lo: number, hiExclusive: number): ReadonlyArray<{ readonly data: Uint8Array; readonly type: unknown }>;
}

export interface RaftView {
  readonly role: string;
  readonly term: number;
  readonly leader: number;
  readonly commit: number;
  readonly log: LogView | undefined;
}

/** The node's Raft status and (when reachable) a LogView of its core's log. */
export function raftOf(server: Server | undefined): RaftView | undefined {
  if (!server) return undefined;
  const node = server.node;
  if (node.isStopped) return undefined;
  const st = node.status();
  const core = (node as unknown as { raft?: RaftCoreLike }).raft;
  return { role: st.role, term: st.term, leader: st.leader, commit: st.commit, log: core ? coreView(core) : undefined };
}

function coreView(core: RaftCoreLike): LogView {
  return {
    firstIndex: () => core.firstIndex(),
    lastIndex: () => core.lastIndex(),
    termAt: (i) => core.termAt(i),
    digestAt: (i) => {
      const e = core.entries(i, i + 1)[0];
      return e ? `${String(e.type)}:${fnv1a(e.data)}` : 'none';
    },
  };
}

function fnv1a(bytes: Uint8Array): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193) >>> 0;
  return `${bytes.length}.${h.toString(16)}`;
}
