// Sending a snapshot to a peer that needs entries the leader compacted away,
// and receiving one (Raft §7, in chunks as in the thesis §5.3 figure).
//
// Protocol: the leader sends chunks of `snapshotChunkBytes` one at a time; the
// peer answers each with the offset it wants next. Exactly one chunk is in
// flight: the leader sends the next chunk only when an answer moves the
// offset, and resends the current one after an election timeout of silence.
// The peer accepts a chunk only at the offset it expects (answering with that
// offset otherwise, so the leader resumes there); a first chunk of a
// different snapshot replaces a half-received one; a later chunk of an
// unknown snapshot gets nextOffset = -1 (restart from 0).
//
// Invariants:
// - A peer in snapshot state gets no appends (progress.ts pauses it).
// - A snapshot at or below the peer's commit index is never installed (it
//   would roll the state machine back); the peer just reports it done.
// - If the peer's log already holds the snapshot's last entry (same index
//   and term), it keeps its log and only advances its commit index (§7).

import { assert } from '../util/assert.js';
import type { FollowerRole, LeaderRole, RaftCore } from './core.js';
import { acceptLeader } from './follower.js';
import type { Progress } from './progress.js';
import { refreshRole } from './transitions.js';
import type { InstallSnapshotRequest, InstallSnapshotResponse, NodeId, Snapshot } from './types.js';

// ---------------------------------------------------------------- leader side

/** Switches `pr` to snapshot state and sends the first chunk (if the snapshot's data is known). */
export function startSnapshot(c: RaftCore, to: NodeId, pr: Progress): void {
  const snap = c.log.snapshot();
  if (!snap) {
    c.logger.debug({ to }, 'raft: peer needs a snapshot whose data is not loaded yet');
    return;
  }
  pr.becomeSnapshot(snap.meta.index);
  sendChunk(c, to, pr, snap);
}

function sendChunk(c: RaftCore, to: NodeId, pr: Progress, snap: Snapshot): void {
  const offset = pr.snapshotOffset;
  const end = Math.min(offset + c.cfg.snapshotChunkBytes, snap.data.byteLength);
  const done = end === snap.data.byteLength;
  c.send({ type: 'installSnapshot', to, meta: snap.meta, offset, chunk: snap.data.subarray(offset, end), done });
  pr.snapshotWaitTicks = 0;
}

export function handleInstallSnapshotResponse(c: RaftCore, ld: LeaderRole, m: InstallSnapshotResponse): void {
  const pr = ld.progress.get(m.from);
  if (!pr) return;
  pr.recentActive = true;
  if (pr.state !== 'snapshot' || m.snapshotIndex !== pr.snapshotIndex) return;
  if (m.done) {
    pr.maybeUpdate(m.snapshotIndex);
    pr.becomeReplicate();
    ld.needsFlush = true;
    return;
  }
  const snap = c.log.snapshot();
  if (!snap || snap.meta.index !== pr.snapshotIndex) {
    // We compacted again meanwhile: start over with the newer snapshot.
    pr.becomeProbe();
    ld.needsFlush = true;
    return;
  }
  // An answer naming the chunk already in flight is an echo of an older one.
  if (m.nextOffset === pr.snapshotOffset) return;
  pr.snapshotOffset = m.nextOffset < 0 || m.nextOffset > snap.data.byteLength ? 0 : m.nextOffset;
  sendChunk(c, m.from, pr, snap);
}

/** Leader tick: resend a chunk that got no answer within an election timeout. */
export function tickSnapshots(c: RaftCore, ld: LeaderRole): void {
  for (const [to, pr] of ld.progress) {
    if (pr.state !== 'snapshot') continue;
    if (++pr.snapshotWaitTicks < c.cfg.electionTimeoutTicks) continue;
    const snap = c.log.snapshot();
    if (snap && snap.meta.index === pr.snapshotIndex) {
      sendChunk(c, to, pr, snap);
    } else {
      pr.becomeProbe();
      ld.needsFlush = true;
    }
  }
}

// ---------------------------------------------------------------- follower side

export function handleInstallSnapshot(c: RaftCore, m: InstallSnapshotRequest): void {
  acceptLeader(c, m.from);
  const r = c.role;
  assert(r.role === 'follower' || r.role === 'observer', 'step.ts makes the receiver a follower first');
  const respond = (nextOffset: number, done: boolean): void =>
    c.send({ type: 'installSnapshotResp', to: m.from, snapshotIndex: m.meta.index, nextOffset, done });
  if (m.meta.index <= c.log.commit) {
    r.incoming = undefined;
    respond(m.offset + m.chunk.byteLength, true);
    return;
  }
  const inc = incomingFor(r, m);
  if (!inc) {
    respond(-1, false);
    return;
  }
  if (m.offset !== inc.received) {
    respond(inc.received, false);
    return;
  }
  inc.chunks.push(m.chunk);
  inc.received += m.chunk.byteLength;
  if (m.done) {
    r.incoming = undefined;
    install(c, { meta: inc.meta, data: concat(inc.chunks, inc.received) });
  }
  respond(inc.received, m.done);
}

/** The in-progress transfer this chunk belongs to, a fresh one for a first chunk, else undefined. */
function incomingFor(r: FollowerRole, m: InstallSnapshotRequest): FollowerRole['incoming'] {
  const inc = r.incoming;
  if (inc && inc.meta.index === m.meta.index && inc.meta.term === m.meta.term) return inc;
  if (m.offset !== 0) return undefined;
  r.incoming = { meta: m.meta, chunks: [], received: 0 };
  return r.incoming;
}

function install(c: RaftCore, snap: Snapshot): void {
  const { index, term } = snap.meta;
  if (c.log.matchTerm(index, term)) {
    c.log.commitTo(index);
    return;
  }
  c.log.restore(snap);
  refreshRole(c);
  c.logger.info({ index, term }, 'raft: installed snapshot from leader');
}

function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const ch of chunks) {
    out.set(ch, at);
    at += ch.byteLength;
  }
  return out;
}
