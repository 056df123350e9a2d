// Keeps the idempotent-producer state (rules/producer-state.ts) of the
// partitions this broker hosts in step with their logs: the leader checks
// produce requests against it before appending, and every append — leader's
// or follower's — updates it, so a follower that becomes leader already knows
// every producer's last batches.
//
// A partition's table is built lazily, the first time a batch with a producer
// id comes by (or from a snapshot, below): partitions without idempotent
// producers never pay for it. Building means scanning the batch headers of
// the whole log (producer-state-scan.ts).
//
// Truncation: a table records the log end offset it reflects. Whenever the
// log's end and the table's disagree (a follower cut a divergent tail, or
// restarted its log at the leader's start) the table follows: it drops what
// lay past the cut, exactly, unless that leaves a producer whose older
// batches are still in the log but no longer retained — then, and when the
// log moved forward without us, the table is rebuilt from the log.
//
// Snapshots: on clean shutdown (ReplicaManager.stop) each table whose end is
// the log's end is written to `producer-state.snapshot` in the log directory,
// with the log end offset and the leader-epoch entries. On start it is loaded
// only if the log still ends there with the same epochs — by the leader-epoch
// property, a log with the same (epoch, start offset) entries and end holds the
// same batches — and only if the log itself was shut down cleanly (its
// aborted-transaction indexes are then on disk), and is then deleted, so a
// later crash rebuilds by scanning.
//
// Transactions: the tables also hold each producer's open transaction, so
// the store answers the partition's last stable offset (LSO = min(first
// unstable offset, HW), never below the log start) and whether a
// transactional write needs KIP-890 verification. Every ABORT marker applied
// is indexed in the log (storage/txn-index.ts) with the LSO of that moment;
// a rebuild from the log resets every segment's index to the aborts it read,
// which is what repairs the indexes after a crash (no snapshot then, so the
// first use of the table rebuilds it) or a malformed .txnindex (the snapshot
// is then ignored). The LSO of a read_committed read always comes from a
// table in step with the log (built if needed); a read_uncommitted fetch
// reports it only from a table already built (else the HW), so plain
// consumers never pay for a scan.
//
// Expiry (Kafka's producer.id.expiration.ms): producers whose last batch's
// timestamp is older than `expirationMs` are forgotten, checked every
// PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS; a later batch of theirs that does
// not start at sequence 0 gets UNKNOWN_PRODUCER_ID.

import * as path from 'node:path';
import type { Clock } from '../util/clock.js';
import { Errors, SluiceError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { writeFileAtomic } from '../util/fs-util.js';
import { batchProblem, batchSizeAt } from '../record/batch-header.js';
import type { PartitionLog } from '../storage/partition-log.js';
import type { Partition } from './partition.js';
import { ProducerStateTable, type AppendOrigin, type AppendedBatch, type ControlFacts, type Verdict } from './rules/producer-state.js';
import type { AbortedTxn } from '../storage/txn-index.js';
import { UNSAFE_PRODUCER_ID, producerFactsIn, scanLogProducerFacts } from './producer-state-scan.js';

export const PRODUCER_STATE_SNAPSHOT_FILE = 'producer-state.snapshot';
/** 2: entries carry their open transaction, coordinator epoch and last marker (version 1 snapshots are ignored: the log is scanned). */
const SNAPSHOT_VERSION = 2;
/** Kafka's producer.id.expiration.ms default: one day. */
export const PRODUCER_ID_EXPIRATION_MS_DEFAULT = 24 * 60 * 60 * 1000;
/** Kafka's producer.id.expiration.check.interval.ms default. */
export const PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS = 10 * 60 * 1000;

export type ProduceCheck =
  | { readonly kind: 'append' }
  | { readonly kind: 'duplicate'; readonly firstOffset: number; readonly lastOffset: number };

export interface ProducerStateStoreOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly expirationMs: number;
}

export class ProducerStateStore {
  private readonly tables = new Map<Partition, ProducerStateTable>();
  private lastExpiryMs: number;

  constructor(private readonly opts: ProducerStateStoreOptions) {
    this.lastExpiryMs = opts.clock.nowMs();
  }

  /** The partition's table, if built (tests, describe). */
  table(p: Partition): ProducerStateTable | undefined {
    return this.tables.get(p);
  }

  /** A new replica: takes its snapshot from a clean shutdown, if it still matches the log (and its aborted-transaction indexes are whole). */
  open(p: Partition): void {
    const file = path.join(p.log.dir, PRODUCER_STATE_SNAPSHOT_FILE);
    let text: string;
    try {
      text = p.log.fs.readFileSync(file).toString('utf8');
    } catch {
      return; // none (the usual case), or unreadable: the table is built from the log when needed
    }
    // Only after a clean shutdown: the aborted-transaction indexes the table relies on are then on disk (PartitionLog.close).
    const table = p.log.txnIndexDamaged || !p.log.openedAfterCleanShutdown ? null : snapshotTable(text, p.log);
    if (table) this.tables.set(p, table);
    else this.opts.logger.info({ topic: p.topic, partition: p.index }, 'producer state snapshot does not match the log; ignoring it');
    try {
      p.log.fs.unlinkSync(file);
    } catch (err) {
      this.opts.logger.warn({ topic: p.topic, partition: p.index, err: (err as Error).message }, 'could not delete the producer state snapshot');
    }
  }

  forget(p: Partition): void {
    this.tables.delete(p);
  }

  /**
   * The leader's check of a produce request's batches for `p`, before the
   * append. Throws the SluiceError to answer (OUT_OF_ORDER_SEQUENCE_NUMBER,
   * INVALID_PRODUCER_EPOCH, UNKNOWN_PRODUCER_ID, ...; CORRUPT_MESSAGE when a
   * refused or duplicate batch fails its CRC). Malformed bytes pass as
   * 'append': the log's validation refuses them.
   */
  checkProduce(p: Partition, buf: Buffer, origin: AppendOrigin = 'client'): ProduceCheck {
    const facts = producerFactsIn(buf);
    if (facts === null) return { kind: 'append' };
    if (facts.some((b) => b.producerId === UNSAFE_PRODUCER_ID)) {
      throw new SluiceError(Errors.INVALID_REQUEST, 'producer id beyond 2^53: this cluster never issues one');
    }
    if (!this.tables.has(p) && facts.every((b) => b.producerId < 0)) return { kind: 'append' };
    const verdict = this.current(p).checkAppend(facts, origin);
    if (verdict.kind === 'append') return verdict;
    // Answering without appending skips the log's CRC check: do it here, so a corrupted retry is never taken for a duplicate.
    for (let pos = 0; pos < buf.length; pos += batchSizeAt(buf, pos)) {
      const problem = batchProblem(buf, pos);
      if (problem !== null) throw new SluiceError(Errors.CORRUPT_MESSAGE, problem, { position: pos });
    }
    if (verdict.kind === 'reject') throw new SluiceError(verdict.error, verdict.message);
    return verdict;
  }

  /**
   * Whether a transactional batch of (`producerId`, `producerEpoch`) needs
   * the coordinator's word before it is appended to `p` (KIP-890 part 1):
   * the producer has no transaction open here, or opens one at a newer epoch.
   */
  needsVerification(p: Partition, producerId: number, producerEpoch: number): boolean {
    const e = this.current(p).entry(producerId);
    return e === undefined || e.currentTxnFirstOffset < 0 || producerEpoch > e.epoch;
  }

  /**
   * What must not change between asking the coordinator and appending: the
   * producer's last marker here. A marker landing meanwhile ended the
   * transaction the coordinator vouched for.
   */
  txnGuard(p: Partition, producerId: number): number {
    return this.current(p).entry(producerId)?.lastMarkerOffset ?? -1;
  }

  /** The verdict on a marker for `p` before the leader appends it (epoch and coordinator epoch fencing). */
  checkMarker(p: Partition, producerId: number, producerEpoch: number, committed: boolean, coordinatorEpoch: number): Verdict {
    const control: ControlFacts = { kind: 'marker', committed, coordinatorEpoch };
    return this.current(p).checkAppend([{ producerId, producerEpoch, baseSequence: -1, lastOffsetDelta: 0, maxTimestamp: -1, isTransactional: true, control }]);
  }

  /** The first offset of the oldest open transaction of `p` (the table built if needed), or null. */
  firstUnstableOffset(p: Partition): number | null {
    return this.current(p).firstUnstableOffset;
  }

  /** `p`'s last stable offset: min(first unstable offset, HW), at least the log start (the table built if needed). */
  lastStableOffset(p: Partition): number {
    return lsoOf(p, this.current(p).firstUnstableOffset);
  }

  /** The LSO from a table already in step with the log, else the HW (a read_uncommitted fetch never builds one). */
  lastStableOffsetIfKnown(p: Partition): number {
    const table = this.tables.get(p);
    if (!table || table.endOffset !== p.log.logEndOffset) return p.log.highWatermark;
    return lsoOf(p, table.firstUnstableOffset);
  }

  /** After `buf` (stamped batches) was appended to `p`'s log, as leader or follower. */
  afterAppend(p: Partition, buf: Buffer): void {
    const facts = producerFactsIn(buf);
    if (facts === null || facts.length === 0) return;
    const table = this.tables.get(p);
    if (!table) {
      if (facts.some((b) => b.producerId >= 0)) this.rebuild(p); // the scan takes in these batches too
      return;
    }
    const base = facts[0]!.baseOffset;
    if (table.endOffset > base && !table.truncateTo(base)) return void this.rebuild(p);
    if (table.endOffset < base) return void this.rebuild(p);
    for (const b of facts) {
      const done = table.apply(b);
      if (done?.aborted) p.log.addAbortedTxn(abortedEntry(done));
    }
  }

  /** Forgets producers idle longer than the expiration, at most once per check interval. */
  maybeExpire(): void {
    const now = this.opts.clock.nowMs();
    if (now - this.lastExpiryMs < PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS) return;
    this.lastExpiryMs = now;
    for (const [p, table] of this.tables) {
      const n = table.expire(now, this.opts.expirationMs);
      if (n > 0) this.opts.logger.info({ topic: p.topic, partition: p.index, expired: n }, 'expired idle producer ids');
    }
  }

  /** Clean shutdown: a snapshot per table that reflects its whole log. Failures are logged: the next start scans. */
  writeSnapshots(): void {
    for (const [p, table] of this.tables) {
      const log = p.log;
      if (log.isClosed || table.endOffset !== log.logEndOffset) continue;
      const body = { version: SNAPSHOT_VERSION, logEndOffset: log.logEndOffset, epochs: log.epochEntries(), state: table.snapshot() };
      try {
        writeFileAtomic(log.fs, path.join(log.dir, PRODUCER_STATE_SNAPSHOT_FILE), JSON.stringify(body));
      } catch (err) {
        this.opts.logger.warn({ topic: p.topic, partition: p.index, err: (err as Error).message }, 'could not write the producer state snapshot');
      }
    }
    this.tables.clear();
  }

  /** The table of `p`, built or brought in line with its log's end. */
  private current(p: Partition): ProducerStateTable {
    const table = this.tables.get(p);
    const end = p.log.logEndOffset;
    if (!table || table.endOffset < end) return this.rebuild(p);
    if (table.endOffset > end && !table.truncateTo(end)) return this.rebuild(p);
    return table;
  }

  private rebuild(p: Partition): ProducerStateTable {
    this.tables.delete(p);
    const startedMs = this.opts.clock.monotonicMs();
    const table = new ProducerStateTable(0);
    let batches = 0;
    const aborts: AbortedTxn[] = [];
    scanLogProducerFacts(p.log, (b: AppendedBatch) => {
      const done = table.apply(b);
      if (done?.aborted) aborts.push(abortedEntry(done));
      batches++;
    });
    table.skipTo(p.log.logEndOffset);
    p.log.resetAbortedTxns(aborts);
    table.expire(this.opts.clock.nowMs(), this.opts.expirationMs);
    this.tables.set(p, table);
    const facts = { topic: p.topic, partition: p.index, batches, producers: table.size, ms: Math.round(this.opts.clock.monotonicMs() - startedMs) };
    if (batches > 0) this.opts.logger.info(facts, 'rebuilt producer state from the log');
    else this.opts.logger.debug(facts, 'rebuilt producer state from the log');
    return table;
  }
}

function lsoOf(p: Partition, firstUnstable: number | null): number {
  const hw = p.log.highWatermark;
  return firstUnstable === null ? hw : Math.min(hw, Math.max(firstUnstable, p.log.logStartOffset));
}

function abortedEntry(t: { producerId: number; firstOffset: number; lastOffset: number; lastStableOffset: number }): AbortedTxn {
  return { producerId: t.producerId, firstOffset: t.firstOffset, lastOffset: t.lastOffset, lastStableOffset: t.lastStableOffset };
}

/** The table in a snapshot file's text, if it is well formed and matches `log`; else null. */
function snapshotTable(text: string, log: PartitionLog): ProducerStateTable | null {
  let body: { version?: unknown; logEndOffset?: unknown; epochs?: unknown; state?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null || body.version !== SNAPSHOT_VERSION) return null;
  if (body.logEndOffset !== log.logEndOffset || JSON.stringify(body.epochs) !== JSON.stringify(log.epochEntries())) return null;
  const table = ProducerStateTable.fromSnapshot(body.state);
  return table && table.endOffset === log.logEndOffset ? table : null;
}
