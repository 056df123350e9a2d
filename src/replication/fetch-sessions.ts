// The leader's fetch sessions (Kafka's KIP-227 incremental fetch): a
// follower's fetcher asks for every partition it follows on this leader in
// each fetch, and answers are mostly "nothing new" for most of them — with
// the 50 partitions of __consumer_offsets beside one busy topic, a leader
// spent more on idle partitions than on data. A session remembers what the
// follower fetches and what it was last told, so a request lists only the
// partitions whose fetch position changed and an answer only the partitions
// with something to tell (protocol/apis/fetch.ts has the wire rules).
//
// Pure: no I/O, time from the caller. The replica manager reads every
// session partition each round (so the follower's fetch state and the ISR
// rules see it fetch them all) and asks include() which to put in the answer.
//
// Invariants:
// - a session belongs to one replica; a replica has at most one session here
//   (opening a new one drops its old one), and the cache holds at most
//   sessionsMax sessions (the least recently used goes first);
// - a request continues a session only with the session's next epoch, so an
//   answer the follower never saw (a lost connection, a timeout) cannot leave
//   the two sides disagreeing: the follower's next request is a new session;
// - `sent*` is what the follower was last told; a partition is left out of an
//   answer only when it has no records, no error, and the same high watermark
//   and log start offset as sent;
// - sessionsOf(key) lists exactly the sessions holding that partition (the
//   replica manager wakes a session's waiting fetch through it on appends).

import { Errors, type ErrorInfo } from '../util/errors.js';
import { INITIAL_SESSION_EPOCH, nextSessionEpoch, type FetchPartition, type FetchRequest } from '../protocol/apis/fetch.js';
import { partitionKey } from './partition.js';

/** The cache's bound, as Kafka's max.incremental.fetch.session.cache.slots. */
export const FETCH_SESSIONS_MAX = 1000;

export interface SessionPartition {
  readonly topic: string;
  readonly partition: number;
  readonly key: string;
  fetchOffset: number;
  currentLeaderEpoch: number;
  partitionMaxBytes: number;
  /** What the follower was last told; -1 before its first answer (which always includes the partition). */
  sentHighWatermark: number;
  sentLogStartOffset: number;
}

export class FetchSession {
  /** In the order they joined: the answer order, rotated each round so no partition always comes last. */
  readonly partitions = new Map<string, SessionPartition>();
  /** The epoch the next request must carry. */
  nextEpoch = 1;
  private rotation = 0;

  constructor(readonly id: number, readonly replicaId: number, public lastUsedMs: number) {}

  /** Every partition of the session, starting one further each call. */
  ordered(): SessionPartition[] {
    const all = [...this.partitions.values()];
    if (all.length < 2) return all;
    const start = this.rotation++ % all.length;
    return [...all.slice(start), ...all.slice(0, start)];
  }

  /** Updates or adds a partition; returns its key when it is new. */
  upsert(topic: string, fp: FetchPartition): string | null {
    const key = partitionKey(topic, fp.partition);
    const have = this.partitions.get(key);
    if (have) {
      have.fetchOffset = fp.fetchOffset;
      have.currentLeaderEpoch = fp.currentLeaderEpoch;
      have.partitionMaxBytes = fp.partitionMaxBytes;
      return null;
    }
    this.partitions.set(key, {
      topic, partition: fp.partition, key, fetchOffset: fp.fetchOffset, currentLeaderEpoch: fp.currentLeaderEpoch,
      partitionMaxBytes: fp.partitionMaxBytes, sentHighWatermark: -1, sentLogStartOffset: -1,
    });
    return key;
  }
}

/** The purgatory key a session's waiting fetch is watched under (one key, whatever its partitions). */
export function sessionWaitKey(session: FetchSession): string {
  return `\u0000session:${session.id}`;
}

/** What an answer says of one partition, for include(). */
export interface PartitionAnswer {
  readonly errorCode: number;
  readonly highWatermark: number;
  readonly logStartOffset: number;
  readonly recordBytes: number;
}

/** Whether the follower must hear of the partition in this answer. */
export function mustInclude(sp: SessionPartition, a: PartitionAnswer): boolean {
  return a.recordBytes > 0 || a.errorCode !== 0 || a.highWatermark !== sp.sentHighWatermark || a.logStartOffset !== sp.sentLogStartOffset;
}

/** The answer went out with the partition in it: remember what the follower now knows. */
export function markSent(sp: SessionPartition, a: PartitionAnswer): void {
  sp.sentHighWatermark = a.highWatermark;
  sp.sentLogStartOffset = a.logStartOffset;
}

export type SessionResult = { readonly session: FetchSession } | { readonly error: ErrorInfo; readonly message: string };

const NO_SESSIONS: ReadonlySet<FetchSession> = new Set();

export class FetchSessionCache {
  private readonly sessions = new Map<number, FetchSession>();
  private readonly byReplica = new Map<number, number>();
  /** Partition key → the sessions holding it. */
  private readonly byPartition = new Map<string, Set<FetchSession>>();
  private lastId = 0;

  constructor(private readonly sessionsMax = FETCH_SESSIONS_MAX) {}

  get size(): number {
    return this.sessions.size;
  }

  /** The sessions holding partition `key`. */
  sessionsOf(key: string): ReadonlySet<FetchSession> {
    return this.byPartition.get(key) ?? NO_SESSIONS;
  }

  /**
   * Applies a follower's session request (sessionEpoch >= 0): opens a session
   * (epoch 0, replacing the replica's previous one) or continues one — its
   * listed partitions updated or added, the forgotten ones dropped.
   */
  apply(req: FetchRequest, nowMs: number): SessionResult {
    if (req.sessionEpoch === INITIAL_SESSION_EPOCH) return { session: this.open(req, nowMs) };
    const session = this.sessions.get(req.sessionId);
    if (!session || session.replicaId !== req.replicaId) {
      return { error: Errors.FETCH_SESSION_ID_NOT_FOUND, message: `no fetch session ${req.sessionId} for replica ${req.replicaId}` };
    }
    if (req.sessionEpoch !== session.nextEpoch) {
      this.drop(session);
      return { error: Errors.INVALID_FETCH_SESSION_EPOCH, message: `fetch session ${session.id} expects epoch ${session.nextEpoch}, got ${req.sessionEpoch}` };
    }
    for (const t of req.forgotten) {
      for (const index of t.partitions) {
        const key = partitionKey(t.name, index);
        if (session.partitions.delete(key)) this.unindex(key, session);
      }
    }
    this.add(session, req);
    this.advance(session, nowMs);
    return { session };
  }

  /** Drops a session (its replica stopped following here, or its state is no longer trusted). */
  drop(session: FetchSession): void {
    if (this.sessions.get(session.id) !== session) return;
    this.sessions.delete(session.id);
    if (this.byReplica.get(session.replicaId) === session.id) this.byReplica.delete(session.replicaId);
    for (const key of session.partitions.keys()) this.unindex(key, session);
  }

  private add(session: FetchSession, req: FetchRequest): void {
    for (const t of req.topics) {
      for (const fp of t.partitions) {
        const key = session.upsert(t.name, fp);
        if (key === null) continue;
        let set = this.byPartition.get(key);
        if (!set) this.byPartition.set(key, (set = new Set()));
        set.add(session);
      }
    }
  }

  private unindex(key: string, session: FetchSession): void {
    const set = this.byPartition.get(key);
    set?.delete(session);
    if (set?.size === 0) this.byPartition.delete(key);
  }

  private open(req: FetchRequest, nowMs: number): FetchSession {
    const old = this.byReplica.get(req.replicaId);
    if (old !== undefined) this.drop(this.sessions.get(old)!);
    while (this.sessions.size >= this.sessionsMax) this.drop(this.sessions.values().next().value!);
    this.lastId = this.lastId >= 0x7fffffff ? 1 : this.lastId + 1;
    const session = new FetchSession(this.lastId, req.replicaId, nowMs);
    this.add(session, req);
    this.sessions.set(session.id, session);
    this.byReplica.set(req.replicaId, session.id);
    return session;
  }

  private advance(session: FetchSession, nowMs: number): void {
    session.nextEpoch = nextSessionEpoch(session.nextEpoch);
    session.lastUsedMs = nowMs;
    // Least recently used first: a used session moves to the end of the map's order.
    this.sessions.delete(session.id);
    this.sessions.set(session.id, session);
  }
}
