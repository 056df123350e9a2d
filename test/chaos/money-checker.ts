// The tx_money checker (issue 18): reads a tx_money run's history
// (money-history.ts) and the settled cluster's final state and lists every
// transactional safety anomaly. Pure and deterministic like the chaos checker
// (checker.ts): no I/O, no clock; checks run in a fixed order and walk their
// inputs in order, so the same input gives the same anomalies.
//
// Ground truth is the raw log, replayed here without the broker's help: per
// partition, in offset order, a transactional data record of producer P is
// open until P's next control marker, which commits (COMMIT) or drops
// (ABORT) everything P had open. What that replay calls committed is what a
// read_committed reader may see; nothing else.
//
// Invariants (Anomaly.type):
//   hanging-transaction  after settling no transaction is open (a coordinator
//                        that lost a Prepare* or a marker never written leaves one)
//   lso-past-open        the partition's last stable offset is not past the first
//                        record of a transaction still open
//   aborted-read         neither the final read_committed Consumer nor a live
//                        read_committed reader delivers a record of an aborted
//                        transaction
//   phantom-read         the final read_committed Consumer delivers only records the
//                        log holds as committed at that offset
//   uncommitted-read     a live reader's record is in the final log, committed, at
//                        the offset it was read at
//   committed-skipped    the final read_committed Consumer delivers every committed
//                        record below the LSO
//   non-monotonic-read   one reader session's offsets in one partition increase
//   torn-transaction     a transfer is visible whole (every leg) or not at all
//   duplicate            a leg is committed once (two copies of one leg: a retried
//                        or re-committed batch)
//   lost-commit          every record of a transaction whose commit() resolved is
//                        committed in the final log
//   aborted-visible      no record of a transaction aborted on purpose (intent
//                        'abort', whatever its outcome) or whose abort() resolved
//                        is committed
//   zombie-commit        a commit() called after a newer instance of the same
//                        transactional id finished its init does not resolve
//   zombie-write         ... and none of that transaction's records is committed (nor
//                        of one that began after it: a late write is refused)
//   uncommitted-visible  no record of a transaction whose commit() was never called
//                        is committed (a zombie's late records swept up by the next
//                        instance's COMMIT marker: what KIP-890 verification stops)
//   foreign-transaction  every committed leg belongs to a transaction the history
//                        records (the workload records every transaction it starts)
//   balance-sum          the balances a read_committed reader builds sum to the
//                        initial total at every transaction boundary: after every
//                        poll of a live reader session that leaves no transaction
//                        half read, and over the whole final log
//   eos-duplicate        read-process-write: each input offset is copied once in the
//                        committed audit output
//   eos-lost             each committed input below the audit group's committed offset
//                        is copied (offsets and output commit together)
//   eos-ahead            no committed copy of an input at or past the committed offset
//   eos-phantom          a copy names a committed input at its offset, with its value
//   divergence           every replica's digest below the HW equals the others'
//   foreign-value        every committed value of the money and audit topics parses

import type {
  MoneyEntry, MoneyFinalPartition, MoneyFinalState, MoneyReadOp, MoneySetupOp, RawMarker, RawRecord, TxnInitOp, TxnOp,
} from './money-history.js';
import { decodeAudit, decodeLeg } from './money-history.js';
import type { Anomaly } from './history.js';

export interface MoneyCheckStats {
  readonly transfers: number;
  readonly committed: number;
  readonly aborted: number;
  readonly unknown: number;
  /** Transfers meant to abort. */
  readonly intentAborts: number;
  /** Transactions whose end came after a newer instance's init: each had to be refused. */
  readonly zombieTxns: number;
  /** Of those: not committed and not visible. */
  readonly zombieRefused: number;
  readonly processTxns: number;
  readonly processCommitted: number;
  /** Transactions with commit() resolved whose every record was found committed. */
  readonly commitsVerified: number;
  readonly liveReads: number;
  readonly liveRecords: number;
  /** Live reader polls after which no transaction was half read: balances summed there. */
  readonly liveBoundaries: number;
  readonly partitions: number;
  readonly rawRecords: number;
  readonly committedRecords: number;
  readonly abortedRecords: number;
  readonly markers: number;
  /** Whole committed transfers in the final log. */
  readonly wholeTransfers: number;
  /** Inputs below the audit group's committed offsets found copied exactly once. */
  readonly eosInputsChecked: number;
}

export interface MoneyCheckResult {
  readonly anomalies: Anomaly[];
  readonly stats: MoneyCheckStats;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A partition replayed from its raw log. */
interface Replayed {
  readonly fp: MoneyFinalPartition;
  /** offset → value, committed (or non-transactional) data records. */
  readonly committed: Map<number, string>;
  readonly aborted: Map<number, string>;
  /** value → offsets, committed. */
  readonly committedByValue: Map<string, number[]>;
}

const key = (topic: string, partition: number): string => `${topic}-${partition}`;

export function checkMoney(history: readonly MoneyEntry[], final: MoneyFinalState): MoneyCheckResult {
  const anomalies: Anomaly[] = [];
  const add = (type: string, detail: string): void => {
    anomalies.push({ type, detail });
  };
  const stats: Mutable<MoneyCheckStats> = {
    transfers: 0, committed: 0, aborted: 0, unknown: 0, intentAborts: 0, zombieTxns: 0, zombieRefused: 0, processTxns: 0,
    processCommitted: 0, commitsVerified: 0, liveReads: 0, liveRecords: 0, liveBoundaries: 0, partitions: 0, rawRecords: 0,
    committedRecords: 0, abortedRecords: 0, markers: 0, wholeTransfers: 0, eosInputsChecked: 0,
  };
  const setups = history.filter((e): e is MoneySetupOp => e.kind === 'money-setup');
  if (setups.length !== 1) {
    add('no-setup', `the history has ${setups.length} money-setup entries (one expected)`);
    return { anomalies, stats };
  }
  const setup = setups[0]!;
  const parts = new Map<string, Replayed>();
  for (const fp of final.partitions) {
    parts.set(key(fp.topic, fp.partition), replay(fp, add, stats));
    stats.partitions++;
  }
  for (const r of parts.values()) checkCommittedRead(r, add);
  checkDivergence(final.partitions, add);
  const txns = history.filter((e): e is TxnOp => e.kind === 'txn');
  const txnIds = new Set(txns.map((t) => t.txn));
  checkLegs(setup, parts, txnIds, add, stats);
  checkTransactions(txns, history.filter((e): e is TxnInitOp => e.kind === 'txn-init'), parts, add, stats);
  checkLiveReads(setup, history.filter((e): e is MoneyReadOp => e.kind === 'money-read'), parts, add, stats);
  checkExactlyOnce(setup, final, parts, add, stats);
  return { anomalies, stats };
}

/** The raw log replayed with its markers (see the header), with the hanging/LSO checks. */
function replay(fp: MoneyFinalPartition, add: (t: string, d: string) => void, stats: Mutable<MoneyCheckStats>): Replayed {
  const name = key(fp.topic, fp.partition);
  type Item = { readonly offset: number; readonly rec?: RawRecord; readonly marker?: RawMarker };
  const items: Item[] = [...fp.raw.map((rec) => ({ offset: rec.offset, rec })), ...fp.markers.map((marker) => ({ offset: marker.offset, marker }))]
    .sort((a, b) => a.offset - b.offset);
  const committed = new Map<number, string>();
  const aborted = new Map<number, string>();
  const open = new Map<string, RawRecord[]>();
  for (const it of items) {
    if (it.rec) {
      stats.rawRecords++;
      if (!it.rec.transactional) committed.set(it.rec.offset, it.rec.value);
      else open.set(it.rec.producerId, [...(open.get(it.rec.producerId) ?? []), it.rec]);
      continue;
    }
    const m = it.marker!;
    stats.markers++;
    const target = m.type === 'commit' ? committed : aborted;
    for (const r of open.get(m.producerId) ?? []) target.set(r.offset, r.value);
    open.delete(m.producerId);
  }
  for (const [pid, recs] of open) {
    const first = recs[0]!.offset;
    add('hanging-transaction', `${name}: producer ${pid} has ${recs.length} record(s) from offset ${first} with no marker below HW ${fp.highWatermark}`);
    if (fp.lastStableOffset > first) add('lso-past-open', `${name}: LSO ${fp.lastStableOffset} is past offset ${first}, the first record of producer ${pid}'s open transaction`);
  }
  stats.committedRecords += committed.size;
  stats.abortedRecords += aborted.size;
  const committedByValue = new Map<string, number[]>();
  for (const [offset, value] of committed) committedByValue.set(value, [...(committedByValue.get(value) ?? []), offset]);
  return { fp, committed, aborted, committedByValue };
}

/** The final read_committed Consumer against the replay. */
function checkCommittedRead(r: Replayed, add: (t: string, d: string) => void): void {
  const name = key(r.fp.topic, r.fp.partition);
  const delivered = new Set<number>();
  let last = -1;
  for (const rec of r.fp.committedRead) {
    if (rec.offset <= last) add('non-monotonic-read', `${name}: the final read_committed read delivered offset ${rec.offset} after ${last}`);
    last = Math.max(last, rec.offset);
    if (r.committed.get(rec.offset) === rec.value) {
      delivered.add(rec.offset);
      continue;
    }
    if (r.aborted.get(rec.offset) === rec.value) add('aborted-read', `${name}@${rec.offset}: the final read_committed read delivered aborted ${rec.value}`);
    else add('phantom-read', `${name}@${rec.offset}: the final read_committed read delivered ${rec.value}, not committed there in the log`);
  }
  for (const [offset, value] of r.committed) {
    if (offset < r.fp.lastStableOffset && !delivered.has(offset)) add('committed-skipped', `${name}@${offset}: committed ${value} below LSO ${r.fp.lastStableOffset} not delivered read_committed`);
  }
}

function checkDivergence(partitions: readonly MoneyFinalPartition[], add: (t: string, d: string) => void): void {
  for (const fp of partitions) {
    const first = fp.replicaDigests[0];
    for (const d of fp.replicaDigests.slice(1)) {
      if (d.digest !== first!.digest) add('divergence', `${key(fp.topic, fp.partition)}: replica ${d.nodeId} digest ${d.digest} != replica ${first!.nodeId} ${first!.digest}`);
    }
  }
}

/** Torn, duplicate and foreign legs; the final balance sum. */
function checkLegs(
  setup: MoneySetupOp, parts: ReadonlyMap<string, Replayed>, txnIds: ReadonlySet<string>,
  add: (t: string, d: string) => void, stats: Mutable<MoneyCheckStats>,
): void {
  const legs = new Map<string, { legs: number; seen: Map<number, string[]> }>();
  let sum = 0;
  for (let p = 0; p < setup.partitions; p++) {
    const r = parts.get(key(setup.topic, p));
    if (!r) continue;
    for (const [offset, value] of r.committed) {
      const leg = decodeLeg(value);
      const where = `${key(setup.topic, p)}@${offset}`;
      if (!leg) {
        add('foreign-value', `${where}: committed value ${value} is not a transfer leg`);
        continue;
      }
      sum += leg.amount;
      const t = legs.get(leg.txn) ?? { legs: leg.legs, seen: new Map<number, string[]>() };
      legs.set(leg.txn, t);
      t.seen.set(leg.index, [...(t.seen.get(leg.index) ?? []), where]);
    }
  }
  for (const [txn, t] of legs) {
    if (!txnIds.has(txn)) add('foreign-transaction', `transaction ${txn} is committed in the log but not in the history`);
    for (const [index, at] of t.seen) if (at.length > 1) add('duplicate', `transaction ${txn} leg ${index} committed ${at.length} times: ${at.join(', ')}`);
    if (t.seen.size !== t.legs) {
      const missing = Array.from({ length: t.legs }, (_, i) => i).filter((i) => !t.seen.has(i));
      add('torn-transaction', `transaction ${txn}: legs ${[...t.seen.keys()].join(',')} committed (${[...t.seen.values()].flat().join(', ')}), legs ${missing.join(',')} not`);
    } else {
      stats.wholeTransfers++;
    }
  }
  if (sum !== 0) add('balance-sum', `the final log's committed balances sum to ${setup.accounts * setup.initialBalance + sum}, not ${setup.accounts * setup.initialBalance}`);
}

/** Every transaction's outcome against the final log, and the zombie rules. */
function checkTransactions(
  txns: readonly TxnOp[], inits: readonly TxnInitOp[], parts: ReadonlyMap<string, Replayed>,
  add: (t: string, d: string) => void, stats: Mutable<MoneyCheckStats>,
): void {
  const initsById = new Map<string, TxnInitOp[]>();
  for (const i of inits) if (i.outcome === 'ok') initsById.set(i.transactionalId, [...(initsById.get(i.transactionalId) ?? []), i]);
  for (const t of txns) {
    if (t.stage === 'transfer') {
      stats.transfers++;
      if (t.intent === 'abort') stats.intentAborts++;
    } else {
      stats.processTxns++;
      if (t.outcome === 'committed') stats.processCommitted++;
    }
    if (t.outcome === 'committed') stats.committed++;
    else if (t.outcome === 'aborted') stats.aborted++;
    else stats.unknown++;
    const visible: string[] = [];
    const missing: string[] = [];
    for (const rec of t.records) {
      const r = parts.get(key(rec.topic, rec.partition));
      if (!r) continue;
      const at = r.committedByValue.get(rec.value);
      if (at) visible.push(`${key(rec.topic, rec.partition)}@${at.join('/')}`);
      else missing.push(key(rec.topic, rec.partition));
    }
    const what = `${t.stage} ${t.txn} (${t.producer}, intent ${t.intent}, outcome ${t.outcome})`;
    if (t.outcome === 'committed') {
      if (missing.length > 0) add('lost-commit', `${what}: commit resolved but records in ${missing.join(', ')} are not committed`);
      else stats.commitsVerified++;
    }
    if ((t.intent === 'abort' || t.outcome === 'aborted') && visible.length > 0) add('aborted-visible', `${what}: records committed at ${visible.join(', ')}`);
    if (t.endInvokeMs === undefined && visible.length > 0) add('uncommitted-visible', `${what}: commit() was never called, yet records are committed at ${visible.join(', ')}`);
    // A zombie: its commit (or, when it never got that far, its first send) came after a newer instance's init
    // (at the same instant too: the simulation's clock is in whole ms, and the workload starts a zombie's end after the init returned).
    const ref = t.endInvokeMs ?? t.invokeMs;
    const fencedBy = (initsById.get(t.transactionalId) ?? []).find((i) => i.instance > t.instance && i.completeMs <= ref);
    if (fencedBy) {
      stats.zombieTxns++;
      const why = `${what}: ${t.endInvokeMs === undefined ? 'began' : 'ended'} at ${ref} ms after instance ${fencedBy.instance} (${fencedBy.producer}) finished its init at ${fencedBy.completeMs} ms`;
      if (t.outcome === 'committed') add('zombie-commit', why);
      if (visible.length > 0) add('zombie-write', `${why}; records committed at ${visible.join(', ')}`);
      if (t.outcome !== 'committed' && visible.length === 0) stats.zombieRefused++;
    }
  }
}

/** Live read_committed readers: committed records only, in order, balances whole at every boundary. */
function checkLiveReads(
  setup: MoneySetupOp, reads: readonly MoneyReadOp[], parts: ReadonlyMap<string, Replayed>,
  add: (t: string, d: string) => void, stats: Mutable<MoneyCheckStats>,
): void {
  interface Session { readonly last: Map<string, number>; sum: number; readonly pending: Map<string, Set<number>>; bad: boolean }
  const sessions = new Map<string, Session>();
  for (const op of reads) {
    stats.liveReads++;
    const name = key(op.topic, op.partition);
    const s = sessions.get(op.session) ?? { last: new Map<string, number>(), sum: 0, pending: new Map<string, Set<number>>(), bad: false };
    sessions.set(op.session, s);
    const r = parts.get(name);
    for (const rec of op.records) {
      stats.liveRecords++;
      const last = s.last.get(name) ?? -1;
      if (rec.offset <= last) add('non-monotonic-read', `session ${op.session} ${name}: offset ${rec.offset} after ${last}`);
      s.last.set(name, Math.max(last, rec.offset));
      if (r) {
        if (r.aborted.get(rec.offset) === rec.value) add('aborted-read', `session ${op.session} ${name}@${rec.offset}: read aborted ${rec.value}`);
        else if (r.committed.get(rec.offset) !== rec.value) add('uncommitted-read', `session ${op.session} ${name}@${rec.offset}: read ${rec.value}, the final log holds ${r.committed.get(rec.offset) ?? 'no committed record'} there`);
      }
      if (op.topic !== setup.topic) continue;
      const leg = decodeLeg(rec.value);
      if (!leg) continue;
      s.sum += leg.amount;
      const seen = s.pending.get(leg.txn) ?? new Set<number>();
      if (seen.has(leg.index)) {
        add('duplicate', `session ${op.session}: read leg ${leg.index} of ${leg.txn} twice (${name}@${rec.offset})`);
        s.bad = true;
      }
      seen.add(leg.index);
      if (seen.size >= leg.legs) s.pending.delete(leg.txn);
      else s.pending.set(leg.txn, seen);
    }
    if (s.pending.size === 0 && !s.bad) {
      stats.liveBoundaries++;
      if (s.sum !== 0) {
        add('balance-sum', `session ${op.session}: balances sum to ${setup.accounts * setup.initialBalance + s.sum} (not ${setup.accounts * setup.initialBalance}) after reading ${name} up to ${op.records[op.records.length - 1]?.offset ?? '-'}`);
        s.bad = true; // one report per session: every later boundary carries the same error
      }
    }
  }
}

/** Read-process-write: the committed audit output against the committed input and the group's offsets. */
function checkExactlyOnce(
  setup: MoneySetupOp, final: MoneyFinalState, parts: ReadonlyMap<string, Replayed>,
  add: (t: string, d: string) => void, stats: Mutable<MoneyCheckStats>,
): void {
  const offsets = new Map(final.auditOffsets.map((o) => [key(o.topic, o.partition), o.offset]));
  const copies = new Map<string, string[]>();
  for (const r of parts.values()) {
    if (r.fp.topic !== setup.auditTopic) continue;
    for (const [offset, value] of r.committed) {
      const where = `${key(r.fp.topic, r.fp.partition)}@${offset}`;
      const c = decodeAudit(value);
      if (!c) {
        add('foreign-value', `${where}: committed value ${value} is not an audit copy`);
        continue;
      }
      const src = `${key(c.topic, c.partition)}@${c.offset}`;
      copies.set(src, [...(copies.get(src) ?? []), where]);
      const input = parts.get(key(c.topic, c.partition));
      const committedAt = offsets.get(key(c.topic, c.partition)) ?? 0;
      if (c.offset >= committedAt) add('eos-ahead', `${where}: copy of ${src} (by ${c.txn}) but the group's committed offset is ${committedAt}`);
      if (!input || input.committed.get(c.offset) !== c.value) {
        const was = input?.aborted.get(c.offset) === c.value ? 'an aborted input' : `not the committed input there (${input?.committed.get(c.offset) ?? 'none'})`;
        add('eos-phantom', `${where}: copy of ${src} (by ${c.txn}) carries ${c.value}: ${was}`);
      }
    }
  }
  for (const [src, at] of copies) if (at.length > 1) add('eos-duplicate', `${src} copied ${at.length} times: ${at.join(', ')}`);
  for (let p = 0; p < setup.partitions; p++) {
    const input = parts.get(key(setup.topic, p));
    if (!input) continue;
    const committedAt = offsets.get(key(setup.topic, p)) ?? 0;
    for (const offset of input.committed.keys()) {
      if (offset >= committedAt) continue;
      const src = `${key(setup.topic, p)}@${offset}`;
      if (!copies.has(src)) add('eos-lost', `${src}: below the group's committed offset ${committedAt} but never copied`);
      else stats.eosInputsChecked++;
    }
  }
}

/** A few lines for a human. */
export function summarizeMoney(r: MoneyCheckResult): string[] {
  const s = r.stats;
  const lines = [
    `transfers: ${s.transfers} (${s.intentAborts} meant to abort), ${s.processTxns} read-process-write; all transactions: ${s.committed} committed (${s.commitsVerified} verified), ${s.aborted} aborted, ${s.unknown} unknown`,
    `zombies: ${s.zombieTxns} transactions ended after a newer instance's init, ${s.zombieRefused} refused`,
    `read-process-write: ${s.processTxns} transactions, ${s.processCommitted} committed, ${s.eosInputsChecked} inputs copied exactly once`,
    `live reads: ${s.liveReads} polls, ${s.liveRecords} records, ${s.liveBoundaries} transaction boundaries checked`,
    `final: ${s.partitions} partitions, ${s.rawRecords} records (${s.committedRecords} committed, ${s.abortedRecords} aborted), ${s.markers} markers, ${s.wholeTransfers} whole transfers`,
  ];
  if (r.anomalies.length === 0) return [...lines, 'anomalies: none'];
  const byType = new Map<string, string[]>();
  for (const a of r.anomalies) byType.set(a.type, [...(byType.get(a.type) ?? []), a.detail]);
  lines.push(`anomalies: ${r.anomalies.length} (${[...byType].map(([t, l]) => `${t} ${l.length}`).join(', ')})`);
  for (const [type, details] of byType) {
    lines.push(`  ${type} (${details.length}):`);
    for (const d of details.slice(0, 5)) lines.push(`    ${d}`);
    if (details.length > 5) lines.push(`    ... and ${details.length - 5} more`);
  }
  return lines;
}
