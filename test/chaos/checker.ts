// The chaos checker (issue 9): reads a run's history and the settled
// cluster's final state and lists every safety anomaly. It must be able to
// fail, so every invariant is stated exactly here and in docs/reliability.md,
// and checker.test.ts feeds it one history per fault.
//
// Pure and deterministic: no I/O, no clock, no randomness; the same input
// gives the same anomalies in the same order (checks run in a fixed order and
// each walks the history or the final state in its given order).
//
// Invariants checked (names are Anomaly.type):
//   lost-write           an ok send is in the final log at its acked offset with its value (found only
//                        at another offset it is lost all the same: mutant checker-moved-value-not-lost)
//   duplicate            a value is stored at most once over all final partitions
//   unknown-twice        the same, for a send whose outcome was unknown (or an indefinite failure)
//   failed-write-present a definitely failed send's value is not stored
//   reorder              one producer's records in one partition: offsets increase with seq
//   inconsistent-offset  one (topic, partition, offset) never holds two values over all reads and
//                        the final log; a read value is stored at the offset it was read at
//   non-monotonic-read   within one (session, generation, topic, partition) read offsets increase,
//                        except after a seek (then they start at the seek offset)
//   commit-regress       a group's ok commits for one partition never go below an earlier one
//   double-assignment    within one (group, generation) no partition is assigned to two members
//   divergence           every ISR replica's digest equals the leader's (for a compacted partition the
//                        digest is of the replica's last value per key: each replica compacts its own log)
//   compacted-value      compacted partitions: read from the beginning, the final value of every key is
//                        its last acknowledged write (the ok send with the highest offset) or a later
//                        write of that key that did not definitely fail; lost-write is not checked there
//                        (compaction removes superseded values) and a read offset the final log no longer
//                        holds is not an inconsistent-offset
//   split-leadership     no two brokers acked records of one partition stored with one leader epoch
//   split-controller     no two nodes became active controller in one Raft term
//
// What the checker cannot see it counts in `stats` rather than guessing:
// acks below the log start offset, sends to deleted topics, missing digests.

import { assert } from '../../src/util/assert.js';
import { Errors } from '../../src/util/errors.js';
import { mutant } from '../../src/util/mutants.js';
import type {
  Anomaly, AssignOp, CommitOp, FinalPartition, FinalState, HistoryEntry, Outcome, ReadOp, SendOp, StoredRecord,
} from './history.js';

/**
 * Error names after which a send may or may not be in the log, so its
 * failure is read as unknown:
 * - errors raised after the leader appended: NOT_ENOUGH_REPLICAS_AFTER_APPEND,
 *   NOT_LEADER_OR_FOLLOWER (leadership moved while the append waited for
 *   replication), KAFKA_STORAGE_ERROR (a write or fsync failed part way),
 *   UNKNOWN_SERVER_ERROR;
 * - the client's own: REQUEST_TIMED_OUT (delivery timeout), NETWORK_EXCEPTION
 *   (connection lost with the request in flight);
 * - every retriable error: the producer retries those until its delivery
 *   timeout, so the error it finally reports names only the *last* attempt —
 *   an earlier one may have been appended;
 * - the sequence errors the idempotent producer answers by resending or
 *   re-encoding (OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID,
 *   INVALID_PRODUCER_EPOCH): reported only once earlier attempts were made.
 * A name missing from src/util/errors.ts (a raw socket error) is indefinite too.
 */
export const INDEFINITE_ERRORS: readonly string[] = [...new Set([
  Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND.name,
  Errors.NOT_LEADER_OR_FOLLOWER.name,
  Errors.KAFKA_STORAGE_ERROR.name,
  Errors.UNKNOWN_SERVER_ERROR.name,
  Errors.REQUEST_TIMED_OUT.name,
  Errors.NETWORK_EXCEPTION.name,
  Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.name,
  Errors.UNKNOWN_PRODUCER_ID.name,
  Errors.INVALID_PRODUCER_EPOCH.name,
  ...Object.values(Errors).filter((e) => e.retriable).map((e) => e.name),
])];

const KNOWN_ERROR_NAMES: ReadonlySet<string> = new Set(Object.values(Errors).map((e) => e.name));

export interface CheckOptions {
  /** Overrides INDEFINITE_ERRORS (e.g. for a producer that never retries). */
  readonly indefiniteErrors?: readonly string[];
}

export interface CheckStats {
  readonly sendsOk: number;
  /** Definite failures only; indefinite ones count as unknown. */
  readonly sendsFailed: number;
  readonly sendsUnknown: number;
  /** Of sendsUnknown: failed with an indefinite error. */
  readonly sendsFailedIndefinite: number;
  /** Unknown sends whose value is in the final logs. */
  readonly unknownPresent: number;
  /** Ok sends verified at their acked offset. */
  readonly acksChecked: number;
  /** Ok sends acked below their partition's final logStartOffset: not checkable. */
  readonly acksBelowLogStart: number;
  /** Ok sends without an offset (acks for duplicates the broker no longer remembers): checked by value only. */
  readonly acksWithoutOffset: number;
  /** Sends (any outcome) to topics the admin workload deleted: not checked. */
  readonly sendsToDeletedTopics: number;
  readonly reads: number;
  readonly recordsRead: number;
  readonly seeks: number;
  readonly commits: number;
  /** Assignments reported by joins (AssignOp entries). */
  readonly assignments: number;
  readonly partitions: number;
  readonly finalRecords: number;
  /** Final values no send in the history wrote. */
  readonly foreignValues: number;
  /** ISR members with no digest in replicaDigests. */
  readonly digestsMissing: number;
  /** Keys of compacted partitions whose final value was checked against their last acknowledged write. */
  readonly compactedKeysChecked: number;
  /** Ok sends to compacted partitions whose record compaction has removed from the final log. */
  readonly compactedAcksRemoved: number;
}

export interface CheckResult {
  readonly anomalies: Anomaly[];
  readonly stats: CheckStats;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type SendClass = 'ok' | 'failed' | 'unknown';

interface Location {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

interface PartitionIndex {
  readonly fp: FinalPartition;
  readonly byOffset: ReadonlyMap<number, StoredRecord>;
}

/** Everything the checks share, built once. */
interface Ctx {
  readonly history: readonly HistoryEntry[];
  readonly final: FinalState;
  readonly indefinite: ReadonlySet<string>;
  readonly sends: readonly SendOp[];
  readonly sendByValue: ReadonlyMap<string, SendOp>;
  readonly partitions: ReadonlyMap<string, PartitionIndex>;
  /** value → where the final logs store it, in final-state order. */
  readonly locations: ReadonlyMap<string, readonly Location[]>;
  readonly deletedTopics: ReadonlySet<string>;
  readonly stats: Mutable<CheckStats>;
  readonly out: AnomalySink;
}

/** Collects anomalies, one per (type, key), in the order found. */
class AnomalySink {
  readonly list: Anomaly[] = [];
  private readonly seen = new Set<string>();

  add(type: string, key: string, detail: string): void {
    const k = `${type}\u0000${key}`;
    if (this.seen.has(k)) return;
    this.seen.add(k);
    this.list.push({ type, detail });
  }
}

export function check(history: readonly HistoryEntry[], final: FinalState, options: CheckOptions = {}): CheckResult {
  const ctx = buildContext(history, final, options);
  checkAcknowledged(ctx);
  checkCompactedValues(ctx);
  checkStoredOnce(ctx);
  checkFailedAbsent(ctx);
  checkProducerOrder(ctx);
  checkReadOffsets(ctx);
  checkMonotonicReads(ctx);
  checkCommits(ctx);
  checkAssignments(ctx);
  checkReplicas(ctx);
  checkLeadership(ctx);
  checkControllers(ctx);
  return { anomalies: ctx.out.list, stats: { ...ctx.stats } };
}

// ---- outcomes ------------------------------------------------------------------------

/** The error name in an outcome's error text: "NAME" or "NAME: message" (SluiceError.message). */
export function errorName(error: string): string {
  const m = /^\s*([A-Z][A-Z0-9_]*)(?::|\s|$)/.exec(error);
  return m ? m[1]! : error.trim();
}

/** True when the outcome says the operation definitely did not happen. */
export function isDefiniteFailure(outcome: Outcome, indefiniteErrors: readonly string[] = INDEFINITE_ERRORS): boolean {
  if (outcome.type !== 'fail') return false;
  const name = errorName(outcome.error);
  return KNOWN_ERROR_NAMES.has(name) && !indefiniteErrors.includes(name);
}

function classify(ctx: Ctx, op: SendOp): SendClass {
  if (op.outcome.type === 'ok') return 'ok';
  if (op.outcome.type === 'unknown') return 'unknown';
  const name = errorName(op.outcome.error);
  return KNOWN_ERROR_NAMES.has(name) && !ctx.indefinite.has(name) ? 'failed' : 'unknown';
}

// ---- context -------------------------------------------------------------------------

function tpKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function tpName(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

function show(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
}

function where(locs: readonly Location[] | undefined): string {
  if (!locs || locs.length === 0) return 'nowhere in the final logs';
  return `at ${locs.map((l) => `${tpName(l.topic, l.partition)}@${l.offset}`).join(', ')}`;
}

function buildContext(history: readonly HistoryEntry[], final: FinalState, options: CheckOptions): Ctx {
  const sends = history.filter((e): e is SendOp => e.kind === 'send');
  const sendByValue = new Map<string, SendOp>();
  for (const s of sends) {
    assert(!sendByValue.has(s.value), `the history has two sends of value ${show(s.value)}: values must be unique`);
    sendByValue.set(s.value, s);
  }
  const ctx: Ctx = {
    history, final, sends, sendByValue,
    indefinite: new Set(options.indefiniteErrors ?? INDEFINITE_ERRORS),
    partitions: indexPartitions(final),
    locations: indexLocations(final),
    deletedTopics: deletedTopics(history, options),
    stats: emptyStats(),
    out: new AnomalySink(),
  };
  ctx.stats.partitions = final.partitions.length;
  ctx.stats.finalRecords = final.partitions.reduce((n, p) => n + p.records.length, 0);
  for (const v of ctx.locations.keys()) if (!sendByValue.has(v)) ctx.stats.foreignValues++;
  countOperations(ctx);
  return ctx;
}

function emptyStats(): Mutable<CheckStats> {
  return {
    sendsOk: 0, sendsFailed: 0, sendsUnknown: 0, sendsFailedIndefinite: 0, unknownPresent: 0,
    acksChecked: 0, acksBelowLogStart: 0, acksWithoutOffset: 0, sendsToDeletedTopics: 0,
    reads: 0, recordsRead: 0, seeks: 0, commits: 0, assignments: 0, partitions: 0, finalRecords: 0, foreignValues: 0, digestsMissing: 0,
    compactedKeysChecked: 0, compactedAcksRemoved: 0,
  };
}

function countOperations(ctx: Ctx): void {
  const s = ctx.stats;
  for (const e of ctx.history) {
    if (e.kind === 'read') {
      s.reads++;
      s.recordsRead += e.records.length;
    } else if (e.kind === 'seek') s.seeks++;
    else if (e.kind === 'commit') s.commits++;
    else if (e.kind === 'assign') s.assignments++;
  }
  for (const op of ctx.sends) {
    const c = classify(ctx, op);
    if (c === 'ok') s.sendsOk++;
    else if (c === 'failed') s.sendsFailed++;
    else s.sendsUnknown++;
    if (op.outcome.type === 'fail' && c === 'unknown') s.sendsFailedIndefinite++;
    if (c === 'unknown' && ctx.locations.has(op.value)) s.unknownPresent++;
    if (ctx.deletedTopics.has(op.topic)) s.sendsToDeletedTopics++;
  }
}

function indexPartitions(final: FinalState): Map<string, PartitionIndex> {
  const out = new Map<string, PartitionIndex>();
  for (const fp of final.partitions) {
    const key = tpKey(fp.topic, fp.partition);
    assert(!out.has(key), `the final state lists ${tpName(fp.topic, fp.partition)} twice`);
    const byOffset = new Map<number, StoredRecord>();
    let prev = -1;
    for (const r of fp.records) {
      assert(r.offset > prev, `final records of ${tpName(fp.topic, fp.partition)} are not in increasing offset order at ${r.offset}`);
      prev = r.offset;
      byOffset.set(r.offset, r);
    }
    out.set(key, { fp, byOffset });
  }
  return out;
}

function indexLocations(final: FinalState): Map<string, Location[]> {
  const out = new Map<string, Location[]>();
  for (const fp of final.partitions) {
    for (const r of fp.records) {
      const list = out.get(r.value) ?? [];
      list.push({ topic: fp.topic, partition: fp.partition, offset: r.offset });
      out.set(r.value, list);
    }
  }
  return out;
}

/** Topics a delete may have removed: any delete admin op that did not definitely fail. */
function deletedTopics(history: readonly HistoryEntry[], options: CheckOptions): Set<string> {
  const out = new Set<string>();
  for (const e of history) {
    if (e.kind !== 'admin' || !/delete/i.test(e.op)) continue;
    if (!isDefiniteFailure(e.outcome, options.indefiniteErrors ?? INDEFINITE_ERRORS)) out.add(e.topic);
  }
  return out;
}

// ---- writes --------------------------------------------------------------------------

/** lost-write: every ok send is stored at its acked offset with its value. */
function checkAcknowledged(ctx: Ctx): void {
  for (const op of ctx.sends) {
    if (op.outcome.type !== 'ok' || ctx.deletedTopics.has(op.topic)) continue;
    const name = tpName(op.topic, op.partition);
    const p = ctx.partitions.get(tpKey(op.topic, op.partition));
    if (p?.fp.compacted === true) {
      if (op.offset !== undefined && p.byOffset.get(op.offset)?.value !== op.value) ctx.stats.compactedAcksRemoved++;
      continue;
    }
    const who = `value ${show(op.value)} (producer ${op.producer} seq ${op.seq})`;
    if (!p) {
      ctx.out.add('lost-write', op.value, `${name}: ${who} was acknowledged at offset ${op.offset ?? '?'} but the partition is absent from the final state`);
      continue;
    }
    if (op.offset === undefined || op.offset < 0) {
      ctx.stats.acksWithoutOffset++;
      const here = (ctx.locations.get(op.value) ?? []).some((l) => l.topic === op.topic && l.partition === op.partition);
      if (!here) ctx.out.add('lost-write', op.value, `${name}: ${who} was acknowledged (no offset) but is ${where(ctx.locations.get(op.value))}`);
      continue;
    }
    if (op.offset < p.fp.logStartOffset) {
      ctx.stats.acksBelowLogStart++;
      continue;
    }
    const rec = p.byOffset.get(op.offset);
    // The value at its acked offset, nowhere else: found at another offset it
    // was lost there and written again (a truncated suffix re-replicated, a
    // resend appended twice) — what a consumer read at the acked offset is gone.
    const movedCountsAsKept = mutant('checker-moved-value-not-lost') && storedOffset(ctx, op) !== undefined;
    if (rec?.value === op.value || movedCountsAsKept) {
      ctx.stats.acksChecked++;
      continue;
    }
    const found = rec ? `holds ${show(rec.value)} there` : `has no record there (log ${p.fp.logStartOffset}..${p.fp.highWatermark})`;
    ctx.out.add('lost-write', op.value,
      `${name}@${op.offset}: ${who} was acknowledged at offset ${op.offset}; the final log ${found}; the value is ${where(ctx.locations.get(op.value))}`);
  }
}

/**
 * compacted-value: per compacted partition and key, the last record of the key
 * in the final log must be at or after the key's last acknowledged write (the
 * ok send with the highest offset): exactly that write at its offset, or a
 * later write of the same key that did not definitely fail. A key with an ok
 * send must be present (the workload writes no tombstones).
 */
function checkCompactedValues(ctx: Ctx): void {
  const lastAck = new Map<string, SendOp>();
  for (const op of ctx.sends) {
    if (op.key === undefined || op.outcome.type !== 'ok' || op.offset === undefined || ctx.deletedTopics.has(op.topic)) continue;
    if (ctx.partitions.get(tpKey(op.topic, op.partition))?.fp.compacted !== true) continue;
    const k = `${tpKey(op.topic, op.partition)}\u0000${op.key}`;
    const prev = lastAck.get(k);
    if (prev === undefined || prev.offset! < op.offset) lastAck.set(k, op);
  }
  const finalLast = new Map<string, StoredRecord>();
  for (const fp of ctx.final.partitions) {
    if (fp.compacted !== true) continue;
    for (const r of fp.records) if (r.key !== undefined) finalLast.set(`${tpKey(fp.topic, fp.partition)}\u0000${r.key}`, r);
  }
  for (const [k, acked] of lastAck) {
    ctx.stats.compactedKeysChecked++;
    const name = `${tpName(acked.topic, acked.partition)} key ${show(acked.key!)}`;
    const got = finalLast.get(k);
    const wanted = `its last acknowledged write ${show(acked.value)} at offset ${acked.offset}`;
    if (got === undefined) {
      ctx.out.add('compacted-value', k, `${name}: absent from the final log; expected ${wanted}`);
      continue;
    }
    if (got.offset === acked.offset && got.value === acked.value) continue;
    const writer = ctx.sendByValue.get(got.value);
    const laterWrite = writer !== undefined && writer.key === acked.key && writer.topic === acked.topic && writer.partition === acked.partition &&
      got.offset > acked.offset! && classify(ctx, writer) !== 'failed';
    if (!laterWrite) {
      ctx.out.add('compacted-value', k, `${name}: the final value is ${show(got.value)} at offset ${got.offset}; expected ${wanted} or a later write of the key`);
    }
  }
}

/** duplicate / unknown-twice: a value is stored at most once over all partitions. */
function checkStoredOnce(ctx: Ctx): void {
  for (const [value, locs] of ctx.locations) {
    if (locs.length < 2) continue;
    const op = ctx.sendByValue.get(value);
    const cls = op ? classify(ctx, op) : undefined;
    const type = cls === 'unknown' ? 'unknown-twice' : 'duplicate';
    const who = op ? ` (producer ${op.producer} seq ${op.seq}, outcome ${describeOutcome(op.outcome)})` : ' (no send in the history wrote it)';
    ctx.out.add(type, value, `value ${show(value)}${who} is stored ${locs.length} times: ${where(locs)}`);
  }
}

/** failed-write-present: a definite failure did not happen. */
function checkFailedAbsent(ctx: Ctx): void {
  for (const op of ctx.sends) {
    if (classify(ctx, op) !== 'failed' || ctx.deletedTopics.has(op.topic)) continue;
    const locs = ctx.locations.get(op.value);
    if (!locs) continue;
    ctx.out.add('failed-write-present', op.value,
      `${tpName(op.topic, op.partition)}: value ${show(op.value)} (producer ${op.producer} seq ${op.seq}) failed definitely with ${describeOutcome(op.outcome)} yet is stored ${where(locs)}`);
  }
}

function describeOutcome(o: Outcome): string {
  return o.type === 'ok' ? 'ok' : `${o.type} ${o.error}`;
}

/** reorder: per producer and partition, stored offsets increase with seq. */
function checkProducerOrder(ctx: Ctx): void {
  const groups = new Map<string, SendOp[]>();
  for (const op of ctx.sends) {
    if (ctx.deletedTopics.has(op.topic)) continue;
    const key = `${op.producer}\u0000${tpKey(op.topic, op.partition)}`;
    const list = groups.get(key) ?? [];
    list.push(op);
    groups.set(key, list);
  }
  for (const list of groups.values()) {
    const seqs = new Set(list.map((op) => op.seq));
    assert(seqs.size === list.length, `producer ${list[0]!.producer} reuses a seq in ${tpName(list[0]!.topic, list[0]!.partition)}`);
    const placed = list
      .map((op) => ({ op, offset: storedOffset(ctx, op) }))
      .filter((x): x is { op: SendOp; offset: number } => x.offset !== undefined)
      .sort((a, b) => a.op.seq - b.op.seq);
    for (let i = 1; i < placed.length; i++) {
      const a = placed[i - 1]!;
      const b = placed[i]!;
      if (b.offset > a.offset) continue;
      ctx.out.add('reorder', `${b.op.value}`,
        `${tpName(b.op.topic, b.op.partition)}: producer ${b.op.producer} seq ${a.op.seq} ${show(a.op.value)} is at offset ${a.offset} ` +
        `but the later seq ${b.op.seq} ${show(b.op.value)} is at offset ${b.offset}`);
    }
  }
}

/** The first offset at which the send's own partition stores its value. */
function storedOffset(ctx: Ctx, op: SendOp): number | undefined {
  return ctx.locations.get(op.value)?.find((l) => l.topic === op.topic && l.partition === op.partition)?.offset;
}

// ---- reads and commits ---------------------------------------------------------------

/** inconsistent-offset: one value per (topic, partition, offset) over every read and the final log. */
function checkReadOffsets(ctx: Ctx): void {
  const firstRead = new Map<string, { value: string; session: string }>();
  for (const e of ctx.history) {
    if (e.kind !== 'read' || ctx.deletedTopics.has(e.topic)) continue;
    const p = ctx.partitions.get(tpKey(e.topic, e.partition));
    if (!p) {
      ctx.out.add('inconsistent-offset', `absent\u0000${tpKey(e.topic, e.partition)}`,
        `${tpName(e.topic, e.partition)} was read by session ${e.session} but is absent from the final state`);
    }
    for (const r of e.records) {
      const key = `${tpKey(e.topic, e.partition)}\u0000${r.offset}`;
      const at = `${tpName(e.topic, e.partition)}@${r.offset}`;
      const prev = firstRead.get(key);
      if (!prev) firstRead.set(key, { value: r.value, session: e.session });
      else if (prev.value !== r.value) {
        ctx.out.add('inconsistent-offset', `${key}\u0000${prev.value}\u0000${r.value}`,
          `${at} was read as ${show(prev.value)} by session ${prev.session} and as ${show(r.value)} by session ${e.session}`);
      }
      if (p) checkReadAgainstFinal(ctx, e, p, r);
    }
  }
}

function checkReadAgainstFinal(ctx: Ctx, e: ReadOp, p: PartitionIndex, r: { offset: number; value: string }): void {
  const at = `${tpName(e.topic, e.partition)}@${r.offset}`;
  const key = `${tpKey(e.topic, e.partition)}\u0000${r.offset}\u0000${r.value}`;
  const locs = ctx.locations.get(r.value);
  const sameSpot = (l: Location): boolean => l.topic === e.topic && l.partition === e.partition && l.offset === r.offset;
  if (r.offset >= p.fp.logStartOffset) {
    const rec = p.byOffset.get(r.offset);
    if (rec?.value === r.value) return;
    // Compaction removed it; only a different value at the same offset would be inconsistent.
    if (rec === undefined && p.fp.compacted === true) return;
    const now = rec ? `the final log holds ${show(rec.value)} there` : `the final log has no record there (log ${p.fp.logStartOffset}..${p.fp.highWatermark})`;
    ctx.out.add('inconsistent-offset', key, `${at} was read as ${show(r.value)} by session ${e.session}; ${now}; the value is ${where(locs)}`);
  } else if (locs && !locs.some(sameSpot)) {
    ctx.out.add('inconsistent-offset', key, `${at} (below log start ${p.fp.logStartOffset}) was read as ${show(r.value)} by session ${e.session}, but the value is stored ${where(locs)}`);
  }
}

/**
 * non-monotonic-read: per (session, topic, partition) the next offset must be
 * at least `minNext` — one past the last offset read in the same generation,
 * or the offset of a seek since. A new generation (a rebalance) starts afresh.
 */
function checkMonotonicReads(ctx: Ctx): void {
  // generation undefined: set by a seek, applies to whatever generation reads next.
  const expect = new Map<string, { generation: number | undefined; minNext: number; why: string }>();
  for (const e of ctx.history) {
    if (e.kind === 'seek') {
      const key = `${e.session}\u0000${tpKey(e.topic, e.partition)}`;
      expect.set(key, { generation: undefined, minNext: e.offset, why: `below its seek to ${e.offset} (completed at ${e.completeMs} ms)` });
      continue;
    }
    if (e.kind !== 'read') continue;
    const key = `${e.session}\u0000${tpKey(e.topic, e.partition)}`;
    let cur = expect.get(key);
    if (cur && cur.generation !== undefined && cur.generation !== e.generation) cur = undefined;
    for (const r of e.records) {
      if (cur && r.offset < cur.minNext) {
        ctx.out.add('non-monotonic-read', `${key}\u0000${e.generation}\u0000${r.offset}\u0000${cur.minNext}`,
          `${tpName(e.topic, e.partition)}: session ${e.session} generation ${e.generation} read offset ${r.offset} (${show(r.value)}) ${cur.why}`);
      }
      cur = { generation: e.generation, minNext: r.offset + 1, why: `after offset ${r.offset} with no seek between` };
    }
    if (cur) expect.set(key, { ...cur, generation: e.generation });
  }
}

/**
 * commit-regress: per (group, topic, partition), an ok commit B may not go
 * below an ok commit A that precedes it — A completed before B was invoked
 * (completeMs < invokeMs), or, within one session, A was recorded first and
 * completeMs <= invokeMs (the session committed them one after the other).
 * Generations do not matter: a newer one may not go below an older commit.
 */
function checkCommits(ctx: Ctx): void {
  const groups = new Map<string, CommitOp[]>();
  for (const e of ctx.history) {
    if (e.kind !== 'commit' || e.outcome.type !== 'ok') continue;
    const key = `${e.group}\u0000${tpKey(e.topic, e.partition)}`;
    const list = groups.get(key) ?? [];
    list.push(e);
    groups.set(key, list);
  }
  for (const list of groups.values()) {
    checkCommitsRealTime(ctx, list);
    checkCommitsPerSession(ctx, list);
  }
}

function checkCommitsRealTime(ctx: Ctx, commits: readonly CommitOp[]): void {
  const byCompletion = [...commits].sort((a, b) => a.completeMs - b.completeMs);
  const byInvocation = [...commits].sort((a, b) => a.invokeMs - b.invokeMs);
  let done = 0;
  let highest: CommitOp | undefined;
  for (const c of byInvocation) {
    while (done < byCompletion.length && byCompletion[done]!.completeMs < c.invokeMs) {
      const d = byCompletion[done++]!;
      if (!highest || d.offset > highest.offset) highest = d;
    }
    if (highest && c.offset < highest.offset) reportRegress(ctx, highest, c);
  }
}

function checkCommitsPerSession(ctx: Ctx, commits: readonly CommitOp[]): void {
  const highest = new Map<string, CommitOp>();
  for (const c of commits) {
    const h = highest.get(c.session);
    if (h && h.completeMs <= c.invokeMs && c.offset < h.offset) reportRegress(ctx, h, c);
    if (!h || c.offset > h.offset) highest.set(c.session, c);
  }
}

function reportRegress(ctx: Ctx, a: CommitOp, b: CommitOp): void {
  const key = `${b.group}\u0000${tpKey(b.topic, b.partition)}\u0000${b.session}\u0000${b.invokeMs}\u0000${b.offset}`;
  ctx.out.add('commit-regress', key,
    `group ${b.group} ${tpName(b.topic, b.partition)}: commit of ${b.offset} (session ${b.session} gen ${b.generation}, ` +
    `invoked ${b.invokeMs} ms) after commit of ${a.offset} (session ${a.session} gen ${a.generation}, completed ${a.completeMs} ms)`);
}

/** double-assignment: per (group, generation, topic, partition), one member id. */
function checkAssignments(ctx: Ctx): void {
  const owner = new Map<string, AssignOp>();
  for (const e of ctx.history) {
    if (e.kind !== 'assign') continue;
    for (const tp of e.partitions) {
      const key = `${e.group}\u0000${e.generation}\u0000${tpKey(tp.topic, tp.partition)}`;
      const prev = owner.get(key);
      if (prev === undefined) owner.set(key, e);
      else if (prev.member !== e.member) {
        ctx.out.add('double-assignment', key,
          `group ${e.group} generation ${e.generation}: ${tpName(tp.topic, tp.partition)} assigned to member ${prev.member} ` +
          `(session ${prev.session}) and to member ${e.member} (session ${e.session})`);
      }
    }
  }
}

// ---- replicas, leaders, controllers --------------------------------------------------

/** divergence: every ISR member's digest equals the leader's. */
function checkReplicas(ctx: Ctx): void {
  for (const fp of ctx.final.partitions) {
    const digests = new Map(fp.replicaDigests.map((d) => [d.nodeId, d.digest]));
    const missing = fp.isr.filter((n) => !digests.has(n));
    ctx.stats.digestsMissing += missing.length;
    const refNode = digests.has(fp.leader) ? fp.leader : fp.isr.find((n) => digests.has(n));
    if (refNode === undefined) continue;
    const ref = digests.get(refNode)!;
    const differ = fp.isr.filter((n) => digests.has(n) && digests.get(n) !== ref);
    if (differ.length === 0) continue;
    const all = fp.isr.filter((n) => digests.has(n)).map((n) => `${n}=${digests.get(n)}`).join(', ');
    ctx.out.add('divergence', tpKey(fp.topic, fp.partition),
      `${tpName(fp.topic, fp.partition)} (hw ${fp.highWatermark}): ISR replicas ${differ.join(', ')} differ from ` +
      `${refNode === fp.leader ? 'leader' : 'replica'} ${refNode}: ${all}`);
  }
}

/** split-leadership: per partition and stored leader epoch, one acknowledging broker. */
function checkLeadership(ctx: Ctx): void {
  const ackers = new Map<string, { op: SendOp; epoch: number; brokers: Map<number, SendOp> }>();
  for (const op of ctx.sends) {
    if (op.outcome.type !== 'ok' || op.broker === undefined || op.offset === undefined || ctx.deletedTopics.has(op.topic)) continue;
    const rec = ctx.partitions.get(tpKey(op.topic, op.partition))?.byOffset.get(op.offset);
    // Only the record this send wrote tells its epoch; a replaced one is a lost write, reported above.
    if (rec?.value !== op.value) continue;
    const key = `${tpKey(op.topic, op.partition)}\u0000${rec.leaderEpoch}`;
    const entry = ackers.get(key) ?? { op, epoch: rec.leaderEpoch, brokers: new Map<number, SendOp>() };
    if (!entry.brokers.has(op.broker)) entry.brokers.set(op.broker, op);
    ackers.set(key, entry);
  }
  for (const [key, { op, epoch, brokers }] of ackers) {
    if (brokers.size < 2) continue;
    const list = [...brokers.values()].map((s) => `broker ${s.broker} acked ${show(s.value)} at offset ${s.offset}`).join('; ');
    ctx.out.add('split-leadership', key,
      `${tpName(op.topic, op.partition)} leader epoch ${epoch}: ${brokers.size} brokers acknowledged writes: ${list}`);
  }
}

/** split-controller: one active controller per Raft term. */
function checkControllers(ctx: Ctx): void {
  const byTerm = new Map<number, Set<number>>();
  for (const t of ctx.final.controllerTerms) {
    const nodes = byTerm.get(t.term) ?? new Set<number>();
    nodes.add(t.nodeId);
    byTerm.set(t.term, nodes);
  }
  for (const [term, nodes] of byTerm) {
    if (nodes.size < 2) continue;
    ctx.out.add('split-controller', String(term), `Raft term ${term} had ${nodes.size} active controllers: nodes ${[...nodes].join(', ')}`);
  }
}
